"""system.files: a JSON file is replaced whole or not at all, and no temporary file stays behind."""

from __future__ import annotations

import json
import threading

import pytest

from course_utils.system.files import write_json_atomic


def test_writes_json_and_creates_the_folder(tmp_path):
    path = tmp_path / "a" / "b" / "r.json"
    assert write_json_atomic(path, {"b": 1, "a": [1, 2]}, sort_keys=True) == path
    assert json.loads(path.read_text()) == {"a": [1, 2], "b": 1}
    assert path.read_text().startswith('{\n  "a"') and path.read_text().endswith("}\n")
    write_json_atomic(path, [1], indent=None)
    assert path.read_text() == "[1]\n"
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
    stop = threading.Event()
    seen, errors = [], []

    def read():
        while not stop.is_set():
            try:
                seen.append(json.loads(path.read_text())["i"])
            except ValueError as err:  # a torn file would not parse
                errors.append(err)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(200):
            write_json_atomic(path, {"i": i, "pad": "x" * (50_000 + 997 * (i % 7))})
    finally:
        stop.set()
        reader.join()
    assert errors == [] and seen and max(seen) <= 199
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]
