"""core.files: a JSON file is replaced whole or not at all, no temporary file stays behind, and it is readable
as any file the user writes; a folder lock keeps a second tool out of a folder in use, but not a dead one's lock."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading

import pytest

from course_utils.core.errors import CourseError, FolderInUseError
from course_utils.core.files import FolderLock, write_json_atomic


def test_writes_json_and_creates_the_folder(tmp_path):
    path = tmp_path / "a" / "b" / "r.json"
    assert write_json_atomic(path, {"b": 1, "a": [1, 2]}, sort_keys=True) == path
    assert json.loads(path.read_text()) == {"a": [1, 2], "b": 1}
    assert path.read_text().startswith('{\n  "a"') and path.read_text().endswith("}\n")
    write_json_atomic(path, [1])
    assert path.read_text() == "[\n  1\n]\n"
    assert [p.name for p in path.parent.iterdir()] == ["r.json"], "no temporary file left"


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path):
    path = tmp_path / "r.json"
    write_json_atomic(path, {"kept": True})
    with pytest.raises(TypeError):
        write_json_atomic(path, {"first": "fine", "then": object()})  # fails half way through
    assert json.loads(path.read_text()) == {"kept": True}
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_a_reader_never_sees_a_half_written_file(tmp_path):
    path = tmp_path / "r.json"
    write_json_atomic(path, {"i": -1, "pad": ""})
    stop, reading = threading.Event(), threading.Event()
    seen, errors = [], []

    def read():
        while not stop.is_set():
            try:
                seen.append(json.loads(path.read_text())["i"])
            except ValueError as err:  # a torn file would not parse
                errors.append(err)
            reading.set()

    reader = threading.Thread(target=read)
    reader.start()
    try:
        assert reading.wait(120), "the reader never read"  # the writes start once it reads, however late it starts
        for i in range(200):
            write_json_atomic(path, {"i": i, "pad": "x" * (50_000 + 997 * (i % 7))})
    finally:
        stop.set()
        reader.join()
    assert errors == [] and seen and max(seen) <= 199
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


# --- the mode of a written file ----------------------------------------------------------------------------


@pytest.mark.skipif(os.name == "nt", reason="POSIX permission bits")
def test_a_written_file_gets_the_mode_a_plain_open_gives(tmp_path):
    """A results file others may read (a course run shared by an instructor) must not be private (0600)."""
    umask = 0o002  # group-writable: a fixed 0o644 would not match
    old = os.umask(umask)
    try:
        written = write_json_atomic(tmp_path / "r.json", {"a": 1})
        plain = tmp_path / "plain.txt"
        plain.write_text("x", encoding="utf-8")
    finally:
        os.umask(old)
    assert stat.S_IMODE(written.stat().st_mode) == 0o666 & ~umask == stat.S_IMODE(plain.stat().st_mode)


# --- a folder lock --------------------------------------------------------------------------------------------

HOLDER = (
    "import sys, time\n"
    "from course_utils.core.files import FolderLock\n"
    "lock = FolderLock(sys.argv[1], name='.tool.lock').acquire()\n"
    "print('held', flush=True)\n"
    "time.sleep(120)\n"
)


def hold(folder):
    """A process that holds the lock of ``folder`` (started and holding when this returns)."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_a_folder_lock_refuses_a_second_holder_and_names_the_first(tmp_path):
    holder = hold(tmp_path)
    try:
        with pytest.raises(FolderInUseError) as info:
            FolderLock(tmp_path, name=".tool.lock").acquire()
        err = info.value
        assert err.pid == holder.pid and str(tmp_path) in err.what
        assert f"{tmp_path} is in use by another process (pid {holder.pid})" in err.what and err.fix
        assert isinstance(err, CourseError)
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()


def test_the_lock_of_a_killed_holder_does_not_block(tmp_path):
    holder = hold(tmp_path)
    holder.kill()  # no chance to clean up: its lock file stays, naming it
    holder.wait()
    holder.stdout.close()
    assert (tmp_path / ".tool.lock").read_text(encoding="utf-8").split()[0] == str(holder.pid)
    with FolderLock(tmp_path, name=".tool.lock") as lock:
        assert lock.holder() == os.getpid()
        with pytest.raises(FolderInUseError):  # held: a second lock, even in this process, is refused
            FolderLock(tmp_path, name=".tool.lock").acquire()
    with FolderLock(tmp_path, name=".tool.lock"):  # released on leaving the block
        pass


def test_a_folder_lock_needs_a_folder(tmp_path):
    with pytest.raises(FileNotFoundError):
        FolderLock(tmp_path / "missing").acquire()
