"""Verified, atomic downloads: a file is moved into place only once its SHA-256 holds.

A failed or interrupted download never replaces (or half-writes) a good file: bytes go
to a temporary file in the destination folder, are hashed while they arrive, and only
``os.replace`` - atomic on one file system - puts them under the final name.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import tempfile
import urllib.request
from collections.abc import Callable
from pathlib import Path

from course_utils.errors import DataError

CHUNK = 1 << 20


def sha256_of(path: str | os.PathLike[str]) -> str:
    """The hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_verified(
    url: str,
    dest: str | os.PathLike[str],
    sha256: str,
    *,
    digest_of: Callable[[Path], str] = sha256_of,
    timeout: float = 60.0,
) -> Path:
    """Download ``url`` to ``dest`` if its digest equals ``sha256``; return ``dest``.

    ``digest_of`` computes the digest of the downloaded temporary file (default: the
    file's own SHA-256; pass another to check, say, the un-gzipped content). Raises
    DataError, leaving ``dest`` untouched, when the transfer fails, is shorter than the
    server announced, or the digest does not match.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    # Keep the real suffix last (".gz") so digest_of can read the file by its type.
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=f".part{dest.suffix}", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        received = 0
        with os.fdopen(fd, "wb") as out:
            try:
                with urllib.request.urlopen(url, timeout=timeout) as response:
                    expected = response.headers.get("Content-Length")
                    for block in iter(lambda: response.read(CHUNK), b""):
                        out.write(block)
                        received += len(block)
            except (OSError, http.client.HTTPException) as exc:  # URLError, HTTPError, timeouts, IncompleteRead
                raise DataError(
                    f"Downloading {url} failed after {received} bytes: {exc}",
                    "Check the network (or set COURSE_OFFLINE=1 to work offline) and try again; "
                    f"{dest} was not changed.",
                ) from exc
        if expected is not None and received != int(expected):
            raise DataError(
                f"Downloading {url} stopped early: {received} of {expected} bytes arrived.",
                f"Try again; {dest} was not changed.",
            )
        actual = digest_of(tmp)
        if actual != sha256:
            raise DataError(
                f"The file downloaded from {url} has SHA-256 {actual}, expected {sha256}.",
                f"The server sent something else; {dest} was not changed. Try again later "
                "or copy a verified file there by hand.",
            )
        os.replace(tmp, dest)
        return dest
    finally:
        tmp.unlink(missing_ok=True)
