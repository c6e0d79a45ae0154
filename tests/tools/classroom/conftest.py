"""One real ``course preflight`` run on this machine, shared by the tests of this folder (TensorFlow's import
alone costs seconds of CPU)."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from course_tools.classroom import preflight

from ...conftest import isolated


@dataclass(frozen=True)
class Run:
    code: int
    out: str  # what the command printed
    path: Path  # the record's file
    record: dict[str, Any]


@pytest.fixture(scope="session")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    """``course preflight --out FILE`` on this machine (CPU only), TensorFlow imported in this process."""
    folder = tmp_path_factory.mktemp("preflight")
    path = folder / "record.json"
    with isolated(folder):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            code = preflight.main(["--out", str(path)])
    yield Run(code, printed.getvalue(), path, json.loads(path.read_text(encoding="utf-8")))
