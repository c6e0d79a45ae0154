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
BLOCK = 1 << 20  # bytes un-gzipped at a time



def unreadable(path: Path, exc: OSError, fetch_hint: str) -> DataError:
    """The error for a dataset file the course may not read (no permission, or a folder): name it and the fix."""
    return DataError(
        f"{path} cannot be read: {exc.strerror}. It was not used.",
        f"Make it readable (e.g. `chmod u+r {path}`), or delete it and {fetch_hint}.",
        path=path, problem=f"unreadable: {exc.strerror}",
    )

def _fix_for(path: Path) -> str:
    return (
        f"Delete or replace {path}: restore it from its source (for Debian's copy: "
        "`sudo apt-get install --reinstall dataset-fashion-mnist`), or run "
        "`course data fetch` to download verified copies."
    )


def read_bytes(path: str | os.PathLike[str], *, limit: int | None = None) -> bytes:
    """The file's payload, un-gzipped when its name ends in .gz; at most ``limit`` bytes of it.

    The course knows how big each of its files is, so ``limit`` stops a file that inflates past
    that (a corrupt or hostile .gz - a "gzip bomb") after reading ``limit + 1`` bytes, instead of
    filling the memory first. A file that cannot be opened is a ``DataError`` saying why.
    """
    path = Path(path)
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as fh:
                if limit is None:
                    payload = fh.read()
                else:  # in blocks: read(limit + 1) would set aside limit + 1 bytes at once, however small the file
                    blocks: list[bytes] = []
                    got = 0
                    while got <= limit and (block := fh.read(min(BLOCK, limit + 1 - got))):
                        blocks.append(block)
                        got += len(block)
                    payload = b"".join(blocks)
            size = len(payload)
        else:
            size = path.stat().st_size
            payload = path.read_bytes() if limit is None or size <= limit else b""  # too big: not read at all
    except FileNotFoundError:
        raise
    except (PermissionError, IsADirectoryError) as exc:
        raise unreadable(path, exc, "run `course data fetch`") from exc
    except (OSError, EOFError, zlib.error) as exc:
        raise DataError(f"{path} is not a readable (gzip) file: {exc}", _fix_for(path), path=path,
                        problem="corrupt: not a readable gzip file") from exc
    if limit is not None and size > limit:
        raise DataError(
            f"{path} holds more than the {limit:,} bytes its dataset file has"
            + (" once un-gzipped (it was not read further)" if path.suffix == ".gz" else "")
            + ": it is not that file, or it is corrupt. It was not used.",
            _fix_for(path), path=path, problem=f"corrupt: larger than {limit:,} bytes",
        )
    return payload


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
