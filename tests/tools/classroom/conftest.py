"""One real ``course preflight`` run on this machine, shared by the tests of this folder (TensorFlow's import
alone costs seconds of CPU)."""

from __future__ import annotations

import contextlib
import io
import json
from types import SimpleNamespace

import pytest

from course_tools.classroom import preflight

from ...conftest import isolated


@pytest.fixture(scope="session")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """``course preflight --out FILE`` on this machine (CPU only), TensorFlow imported in this process: its exit
    status (code), what it printed (out), the record's file (path) and the record."""
    folder = tmp_path_factory.mktemp("preflight")
    path = folder / "record.json"
    with isolated(folder):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            code = preflight.main(["--out", str(path)])
    return SimpleNamespace(code=code, out=printed.getvalue(), path=path,
                           record=json.loads(path.read_text(encoding="utf-8")))
