"""Verified, atomic downloads: a file is moved into place only once its SHA-256 holds.

Bytes go to a temporary file in the destination folder, hashed as they arrive, and only ``os.replace`` (atomic
on one file system) gives them the final name, so a failed download never replaces or half-writes a good file.
What a killed download leaves is removed by the next download of that file (``remove_stale_parts``).

An unreachable host costs seconds, a slow link still works. ``urlopen(url, timeout=T)`` bounds each socket
operation, not their sum nor the name lookup: black-holed addresses cost ``T`` each, a server that never answers
``T`` (60 s before a fallback, measured). So two limits: ``ANSWER_DEADLINE_S`` for everything before the first byte
(lookup, connections, headers) together, and ``READ_TIMEOUT_S`` for each wait after it, so a slow download that
keeps moving is never cut off. No retry: the caller falls back or says so.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import os
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from course_utils.core.errors import DataError
from course_utils.core.files import create_exclusive
from course_utils.core.i18n import translator

_ = translator("course")

CHUNK = 1 << 20
# A temporary file nobody has written to for an hour is left by a killed download: a running one writes a
# chunk (1 MiB) at least that often on any link the course can use, or gives up on its read timeout first.
STALE_PART_S = 3600
ANSWER_DEADLINE_S = 10.0
READ_TIMEOUT_S = 30.0


def open_url(url: str) -> http.client.HTTPResponse:
    """``urlopen(url)`` once the headers have arrived, opened in a daemon thread waited for at most
    ``ANSWER_DEADLINE_S`` (then ``TimeoutError``; a late answer is closed there); each later read waits at most
    ``READ_TIMEOUT_S``. ``urlopen``'s own errors are raised as they are.
    """
    deadline, read_timeout = ANSWER_DEADLINE_S, READ_TIMEOUT_S
    lock = threading.Lock()
    outcome: dict[str, object] = {}

    def attempt() -> None:
        try:
            response = urllib.request.urlopen(url, timeout=read_timeout)
        except BaseException as exc:  # handed to the caller below
            with lock:
                outcome["error"] = exc
            return
        with lock:
            late = outcome.get("abandoned", False)
            if not late:
                outcome["response"] = response
        if late:  # the caller has given up: nobody else will close it
            response.close()

    thread = threading.Thread(target=attempt, name="course-download-open", daemon=True)
    thread.start()
    thread.join(deadline)
    with lock:
        if "response" in outcome:
            return outcome["response"]  # type: ignore[return-value]
        if "error" in outcome:
            raise outcome["error"]  # type: ignore[misc]
        outcome["abandoned"] = True
    raise TimeoutError(f"no answer within {deadline:g} s (name lookup, connection and reply headers together)")


def sha256_of(path: str | os.PathLike[str]) -> str:
    """The hex SHA-256 of a file, read in chunks."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def fetch_verified(
    url: str,
    dest: str | os.PathLike[str],
    sha256: str,
    *,
    digest_of: Callable[[Path], str] = sha256_of,
) -> Path:
    """Download ``url`` to ``dest`` if its ``digest_of`` (default: its SHA-256) equals ``sha256``; return ``dest``.
    A failed transfer, one shorter than announced or a wrong digest is a DataError, ``dest`` untouched.
    """
    dest = Path(dest)
    _make_folder(dest.parent)
    remove_stale_parts(dest)
    # Keep the real suffix last (".gz") so digest_of can read the file by its type.
    fd, tmp = create_exclusive(dest.parent, dest.name, suffix=f".part{dest.suffix}")
    try:
        received = 0
        with os.fdopen(fd, "wb") as out:
            try:
                with open_url(url) as response:
                    expected = response.headers.get("Content-Length")
                    for block in iter(lambda: response.read(CHUNK), b""):
                        out.write(block)
                        received += len(block)
            except (OSError, http.client.HTTPException) as exc:  # URLError, HTTPError, timeouts, IncompleteRead
                raise DataError(
                    _("Downloading {url} failed after {received} bytes: {error}").format(
                        url=url, received=received, error=exc),
                    _("Check the network (or set COURSE_OFFLINE=1 to work offline) and try again; "
                      "{path} was not changed.").format(path=dest),
                ) from exc
        if expected is not None and received != int(expected):
            raise DataError(
                _("Downloading {url} stopped early: {received} of {expected} bytes arrived.").format(
                    url=url, received=received, expected=expected),
                _("Try again; {path} was not changed.").format(path=dest),
            )
        actual = digest_of(tmp)
        if actual != sha256:
            raise DataError(
                _("The file downloaded from {url} has SHA-256 {actual}, expected {expected}.").format(
                    url=url, actual=actual, expected=sha256),
                _("The server sent something else; {path} was not changed. Try again later "
                  "or copy a verified file there by hand.").format(path=dest),
            )
        os.replace(tmp, dest)
        return dest
    finally:
        tmp.unlink(missing_ok=True)


def remove_stale_parts(dest: str | os.PathLike[str]) -> None:
    """Remove the temporary files (``.NAME.*.part*``) that killed downloads of ``dest`` left beside it, those
    untouched for ``STALE_PART_S``: a download of the same file in another process may still be writing."""
    dest, now = Path(dest), time.time()
    for part in dest.parent.glob(f".{dest.name}.*.part*"):
        with contextlib.suppress(OSError):  # gone already, or not ours to remove: the download goes on
            if part.is_file() and now - part.stat().st_mtime > STALE_PART_S:
                part.unlink()


def _make_folder(folder: Path) -> None:
    """Create ``folder`` (and its parents); a DataError naming the file in the way, or the reason."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocker = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), None)
        why = f"{blocker} is a file, not a folder" if blocker else exc.strerror
        shown = _("{path} is a file, not a folder").format(path=blocker) if blocker else exc.strerror
        raise DataError(
            _("Cannot create the folder {folder} for the download: {why}.").format(folder=folder, why=shown),
            _("Choose a folder that can be created there (move that file away), or leave --cache-dir out."),
            path=blocker or folder, problem=f"unusable folder: {why}",
        ) from None
