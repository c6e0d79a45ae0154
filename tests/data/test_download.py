"""Verified atomic downloads: a bad or broken transfer never replaces a good file."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from course_utils.core.errors import DataError
from course_utils.data import download
from course_utils.data.download import fetch_verified, sha256_of

GOOD = b"the real file " * 1000
GOOD_SHA = hashlib.sha256(GOOD).hexdigest()


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_good_download_lands_verified(http_server, tmp_path):
    http_server.routes["/f.bin"] = (GOOD, None)
    dest = tmp_path / "cache" / "f.bin"
    assert fetch_verified(http_server.url + "/f.bin", dest, GOOD_SHA) == dest
    assert dest.read_bytes() == GOOD
    assert sha256_of(dest) == GOOD_SHA
    assert leftovers(dest.parent) == []
    plain = tmp_path / "plain"
    plain.write_bytes(b"")
    assert dest.stat().st_mode == plain.stat().st_mode, "a shared data folder's files are readable as any file is"


def test_wrong_checksum_keeps_the_good_file(http_server, tmp_path):
    dest = tmp_path / "f.bin"
    dest.write_bytes(b"previous good copy")
    http_server.routes["/f.bin"] = (b"something else entirely", None)
    with pytest.raises(DataError) as info:
        fetch_verified(http_server.url + "/f.bin", dest, GOOD_SHA)
    assert "expected " + GOOD_SHA in str(info.value)
    assert "was not changed" in info.value.fix
    assert dest.read_bytes() == b"previous good copy"
    assert leftovers(tmp_path) == []


def test_truncated_transfer_is_rejected(http_server, tmp_path, monkeypatch):
    dest = tmp_path / "f.bin"
    dest.write_bytes(b"previous good copy")
    http_server.routes["/f.bin"] = (GOOD[:100], len(GOOD))  # server promises more than it sends
    monkeypatch.setattr(download, "READ_TIMEOUT_S", 5)
    with pytest.raises(DataError):
        fetch_verified(http_server.url + "/f.bin", dest, GOOD_SHA)
    assert dest.read_bytes() == b"previous good copy"
    assert leftovers(tmp_path) == []


def test_custom_digest_checks_content(http_server, tmp_path):
    import gzip

    payload = b"idx payload"
    http_server.routes["/x.gz"] = (gzip.compress(payload), None)
    content_sha = hashlib.sha256(payload).hexdigest()

    def digest(path: Path) -> str:
        assert path.name.endswith(".gz"), "the temporary file keeps the .gz suffix"
        return hashlib.sha256(gzip.decompress(path.read_bytes())).hexdigest()

    dest = fetch_verified(http_server.url + "/x.gz", tmp_path / "x.gz", content_sha, digest_of=digest)
    assert gzip.decompress(dest.read_bytes()) == payload


def test_a_part_file_left_by_a_killed_download_is_removed_by_the_next_one(http_server, tmp_path):
    import os
    import time

    stale = tmp_path / ".f.bin.k1ll3d.part.bin"  # what the temporary file of a SIGKILLed download leaves
    stale.write_bytes(b"half a download")
    hour_ago = time.time() - 3600
    os.utime(stale, (hour_ago, hour_ago))
    running = tmp_path / ".f.bin.st1llw.part.bin"  # another download, still writing
    running.write_bytes(b"in progress")
    other = tmp_path / ".g.bin.x.part.bin"  # another file's: not ours to judge
    other.write_bytes(b"g")
    os.utime(other, (hour_ago, hour_ago))
    http_server.routes["/f.bin"] = (GOOD, None)
    fetch_verified(http_server.url + "/f.bin", tmp_path / "f.bin", GOOD_SHA)
    assert not stale.exists() and running.exists() and other.exists()
    assert (tmp_path / "f.bin").read_bytes() == GOOD


def test_a_folder_that_cannot_be_made_is_a_data_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(DataError) as info:
        fetch_verified("http://127.0.0.1:9/f.bin", blocker / "f.bin", GOOD_SHA)
    assert str(blocker) in info.value.what and "not a folder" in info.value.what


def test_fetch_clears_stale_parts_even_when_its_file_is_already_verified(monkeypatch, tmp_path):
    import os
    import time

    from course_utils import data

    from .test_loaders import fake_mnist_npz

    monkeypatch.setattr(data, "MNIST_SHA256", fake_mnist_npz(tmp_path / "mnist.npz"))
    stale = tmp_path / ".mnist.npz.abcd.part.npz"
    stale.write_bytes(b"half")
    os.utime(stale, (time.time() - 7200, time.time() - 7200))
    assert data.fetch_mnist(tmp_path) == tmp_path / "mnist.npz"  # verified: nothing to download
    assert not stale.exists()
