"""Read IDX files (the MNIST / Fashion-MNIST format) with NumPy, checking every header field.

Format (yann.lecun.com/exdb/mnist): a big-endian magic number whose third byte is the
element type (0x08 = unsigned byte) and fourth the number of dimensions, then one
big-endian uint32 per dimension, then the data. Files may be gzip-compressed.
"""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

import numpy as np

from course_utils.errors import DataError

UBYTE = 0x08


def _fix_for(path: Path) -> str:
    return (
        f"Delete or replace {path}: restore it from its source (for Debian's copy: "
        "`sudo apt-get install --reinstall dataset-fashion-mnist`), or run "
        "`course data fetch` to download verified copies."
    )


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The file's payload, un-gzipped when its name ends in .gz."""
    path = Path(path)
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as fh:
                return fh.read()
        return path.read_bytes()
    except FileNotFoundError:
        raise
    except (OSError, EOFError, zlib.error) as exc:
        raise DataError(f"{path} is not a readable (gzip) file: {exc}", _fix_for(path)) from exc


def parse_idx(payload: bytes, *, source: str | os.PathLike[str] = "<bytes>", ndim: int | None = None) -> np.ndarray:
    """Parse IDX bytes into a uint8 array, checking magic number and size.

    ``ndim`` is the number of dimensions the caller expects (1 for labels, 3 for images).
    """
    path = Path(source)
    if len(payload) < 4:
        raise DataError(f"{path} is too short to be an IDX file ({len(payload)} bytes).", _fix_for(path))
    zero1, zero2, dtype, dims = payload[:4]
    if zero1 or zero2 or dtype != UBYTE or dims == 0:
        raise DataError(
            f"{path} does not start with an IDX magic number for unsigned bytes "
            f"(got 0x{payload[:4].hex()}).",
            _fix_for(path),
        )
    if ndim is not None and dims != ndim:
        raise DataError(f"{path} has {dims} dimensions, expected {ndim}.", _fix_for(path))
    header = 4 + 4 * dims
    if len(payload) < header:
        raise DataError(f"{path} is truncated inside its header.", _fix_for(path))
    shape = tuple(int(d) for d in np.frombuffer(payload, dtype=">u4", count=dims, offset=4))
    expected = header + int(np.prod(shape, dtype=np.int64))
    if len(payload) != expected:
        kind = "truncated" if len(payload) < expected else "longer than its header says"
        raise DataError(
            f"{path} is {kind}: header says shape {shape} ({expected} bytes), file has {len(payload)} bytes.",
            _fix_for(path),
        )
    return np.frombuffer(payload, dtype=np.uint8, offset=header).reshape(shape).copy()


def read_idx(path: str | os.PathLike[str], *, ndim: int | None = None) -> np.ndarray:
    """Read and check one IDX file (optionally .gz)."""
    return parse_idx(read_bytes(path), source=path, ndim=ndim)
