"""One child process for the checks that need TensorFlow's CPU split in two (a split happens once per process)."""

from __future__ import annotations

import pytest

from ..conftest import isolated


@pytest.fixture(scope="session")
def split_cpu_child(tmp_path_factory) -> dict[str, dict]:
    """The parts of test_distribute.py that need the CPU split in two, run in one fresh Python: what each returned."""
    from .test_distribute import SAME_STEP_AS_ONE, run_parts

    with isolated(tmp_path_factory.mktemp("split-cpu")):
        return run_parts({"same_step_as_one": SAME_STEP_AS_ONE})
