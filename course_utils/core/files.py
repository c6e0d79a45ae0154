"""Files that several processes share: a JSON file written atomically, and a folder locked by one process.

``write_json_atomic``: a reader never sees half a file, and the file gets the permissions of any file the user
writes, not a temporary file's ``0o600``. ``FolderLock``: one process at a time works in a folder (``course run
--out``); the lock of a process that died does not block, as the operating system releases it with the process.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from pathlib import Path
from typing import Any

from course_utils.core.errors import FolderInUseError
from course_utils.core.i18n import translator

_ = translator("course")

try:
    import fcntl  # POSIX
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]
try:
    import msvcrt  # Windows
except ImportError:  # POSIX
    msvcrt = None  # type: ignore[assignment]

_BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation below the text layer


def create_exclusive(folder: Path, stem: str, suffix: str = ".tmp") -> tuple[int, Path]:
    """A new hidden file ``.STEM.RANDOM SUFFIX`` in ``folder`` that no one else has, opened for writing, with mode
    ``0o666`` less the umask, as any file the user writes (``tempfile.mkstemp`` would make it ``0o600``).
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY
    while True:
        path = folder / f".{stem}.{uuid.uuid4().hex[:12]}{suffix}"
        try:
            return os.open(path, flags, 0o666), path
        except FileExistsError:  # another writer drew the same name: draw again
            continue


def write_json_atomic(
    path: str | os.PathLike[str], data: Any, *, sort_keys: bool = False, mode: int | None = None
) -> Path:
    """Write ``data`` as JSON to ``path`` atomically; return the path.

    The text goes to a temporary file in the same folder, which then replaces ``path`` (``os.replace``, atomic on
    one file system): a reader sees the old file or the new one, never a part; on any failure ``path`` is left as it
    was. The parent folder is created if needed. Permissions: ``0o666`` less the umask, or ``mode`` (POSIX).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = create_exclusive(path.parent, path.name)
    try:
        if mode is not None and hasattr(os, "fchmod"):
            os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, sort_keys=sort_keys)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


class FolderLock:
    """An exclusive lock on ``folder``, held by one process at a time: ``with FolderLock(out): ...``.

    The lock is the file ``folder/name``, naming the holder's pid; another holder gets ``FolderInUseError`` with
    that pid. The file stays after release: removing it could let two processes lock two files of the same name.
    """

    # Windows locks a byte range and keeps others from reading it: lock a byte past the pid text.
    _WINDOWS_LOCKED_BYTE = 4096

    def __init__(self, folder: str | os.PathLike[str], *, name: str = ".lock") -> None:
        self.folder = Path(folder)
        self.path = self.folder / name
        self._fd: int | None = None

    def acquire(self) -> FolderLock:
        """Take the lock (never waits); ``FolderInUseError`` naming the holder if another has it."""
        if self._fd is not None:
            return self
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | _BINARY, 0o666)  # FileNotFoundError: no folder
        try:
            _lock(fd, self._WINDOWS_LOCKED_BYTE)
        except OSError:
            os.close(fd)
            pid = self.holder()
            raise FolderInUseError(
                _("{folder} is in use by another process (pid {pid}).").format(
                    folder=self.folder, pid=pid or _("unknown")),
                _("Wait for it to finish, or use another folder."),
                pid=pid,
            ) from None
        os.lseek(fd, 0, os.SEEK_SET)
        text = f"{os.getpid()}\n".encode("ascii")
        os.write(fd, text)
        with contextlib.suppress(OSError):  # if it fails, the first line still names this process
            os.ftruncate(fd, len(text))  # an older holder's longer pid must not show through
        self._fd = fd
        return self

    def holder(self) -> int | None:
        """The pid the lock file names: the holder while it is held, the last holder after (None if unreadable)."""
        try:
            return int(self.path.read_text(encoding="ascii", errors="replace").split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def release(self) -> None:
        """Let go of the lock (closing the file releases it); harmless when not held."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                _unlock(fd, self._WINDOWS_LOCKED_BYTE)
            finally:
                os.close(fd)

    def __enter__(self) -> FolderLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _lock(fd: int, windows_byte: int) -> None:
    """Lock ``fd`` without waiting; ``OSError`` when another holds it."""
    if fcntl is not None:
        # flock: one lock per open file, released when every copy of it is closed or its process ends
        # (https://man7.org/linux/man-pages/man2/flock.2.html); the course's children never inherit it
        # (Python's descriptors are not inheritable, PEP 446).
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    elif msvcrt is not None:
        # locking: a byte range from the current position, LK_NBLCK fails at once if locked
        # (https://docs.python.org/3/library/msvcrt.html#msvcrt.locking); Windows unlocks it when the
        # process ends (https://learn.microsoft.com/windows/win32/api/fileapi/nf-fileapi-lockfile).
        os.lseek(fd, windows_byte, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    else:  # pragma: no cover - a platform with neither
        raise OSError("no file locking on this platform")


def _unlock(fd: int, windows_byte: int) -> None:
    """Undo ``_lock`` (Windows wants its locks removed before the file is closed; POSIX would not mind)."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_UN)
    elif msvcrt is not None:
        os.lseek(fd, windows_byte, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
