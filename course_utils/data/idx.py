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

from course_utils.core.errors import DataError
from course_utils.core.i18n import translator

UBYTE = 0x08
BLOCK = 1 << 20  # bytes un-gzipped at a time
_ = translator("course")


def unreadable(path: Path, exc: OSError, fetch_hint: str) -> DataError:
    """The error for a dataset file the course may not read (no permission, or a folder): name it and the fix."""
    return DataError(
        _("{path} cannot be read: {reason}. It was not used.").format(path=path, reason=exc.strerror),
        _("Make it readable (e.g. `chmod u+r {path}`), or delete it and {fetch_hint}.").format(
            path=path, fetch_hint=fetch_hint),
        path=path, problem=f"unreadable: {exc.strerror}",
    )


def _fix_for(path: Path) -> str:
    return _(
        "Delete or replace {path}: restore it from its source (for Debian's copy: "
        "`sudo apt-get install --reinstall dataset-fashion-mnist`), or run "
        "`course data fetch` to download verified copies."
    ).format(path=path)


def read_bytes(path: str | os.PathLike[str], *, limit: int) -> bytes:
    """The file's payload, un-gzipped when its name ends in .gz; at most ``limit`` bytes of it, so a .gz that
    inflates past its known size (a "gzip bomb") stops after ``limit + 1`` bytes. Unopenable: a ``DataError``.
    """
    path = Path(path)
    try:
        if path.suffix == ".gz":
            # in blocks: read(limit + 1) would set aside limit + 1 bytes at once, however small the file
            blocks: list[bytes] = []
            got = 0
            with gzip.open(path, "rb") as fh:
                while got <= limit and (block := fh.read(min(BLOCK, limit + 1 - got))):
                    blocks.append(block)
                    got += len(block)
            payload, size = b"".join(blocks), got
        else:
            size = path.stat().st_size
            payload = path.read_bytes() if size <= limit else b""  # too big: not read at all
    except FileNotFoundError:
        raise
    except (PermissionError, IsADirectoryError) as exc:
        raise unreadable(path, exc, _("run `course data fetch`")) from exc
    except (OSError, EOFError, zlib.error) as exc:
        raise DataError(_("{path} is not a readable (gzip) file: {error}").format(path=path, error=exc),
                        _fix_for(path), path=path, problem="corrupt: not a readable gzip file") from exc
    if size > limit:
        what = (_("{path} holds more than the {limit:,} bytes its dataset file has once un-gzipped (it was not read "
                  "further): it is not that file, or it is corrupt. It was not used.") if path.suffix == ".gz"
                else _("{path} holds more than the {limit:,} bytes its dataset file has: it is not that file, or it "
                       "is corrupt. It was not used."))
        raise DataError(what.format(path=path, limit=limit), _fix_for(path), path=path,
                        problem=f"corrupt: larger than {limit:,} bytes")
    return payload


def parse_idx(payload: bytes, *, source: str | os.PathLike[str] = "<bytes>", ndim: int | None = None) -> np.ndarray:
    """IDX bytes as a uint8 array of ``ndim`` dimensions (1 for labels, 3 for images), every header field checked."""
    path = Path(source)
    if len(payload) < 4:
        raise DataError(_("{path} is too short to be an IDX file ({size} bytes).").format(path=path, size=len(payload)),
                        _fix_for(path))
    zero1, zero2, dtype, dims = payload[:4]
    if zero1 or zero2 or dtype != UBYTE or dims == 0:
        raise DataError(
            _("{path} does not start with an IDX magic number for unsigned bytes (got 0x{magic}).").format(
                path=path, magic=payload[:4].hex()),
            _fix_for(path),
        )
    if ndim is not None and dims != ndim:
        raise DataError(_("{path} has {dims} dimensions, expected {ndim}.").format(path=path, dims=dims, ndim=ndim),
                        _fix_for(path))
    header = 4 + 4 * dims
    if len(payload) < header:
        raise DataError(_("{path} is truncated inside its header.").format(path=path), _fix_for(path))
    shape = tuple(int(d) for d in np.frombuffer(payload, dtype=">u4", count=dims, offset=4))
    expected = header + int(np.prod(shape, dtype=np.int64))
    if len(payload) != expected:
        what = (_("{path} is truncated: header says shape {shape} ({expected} bytes), file has {size} bytes.")
                if len(payload) < expected else
                _("{path} is longer than its header says: header says shape {shape} ({expected} bytes), file has "
                  "{size} bytes."))
        raise DataError(what.format(path=path, shape=shape, expected=expected, size=len(payload)), _fix_for(path))
    return np.frombuffer(payload, dtype=np.uint8, offset=header).reshape(shape).copy()
