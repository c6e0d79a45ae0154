"""One child process for the checks that need TensorFlow's CPU split in two (a split happens once per process)."""

from __future__ import annotations

import pytest

from ..conftest import isolated


@pytest.fixture(scope="session")
def split_cpu_child(tmp_path_factory) -> dict[str, dict]:
    """The parts of test_distribute.py, run in order in one fresh Python: what each returned.

    The first part splits the CPU before the runtime starts; the later one splits it again (harmless) for its
    two devices. One TensorFlow import (3-4 CPU seconds) instead of two.
    """
    from .test_distribute import SAME_STEP_AS_ONE, SPLIT_CPU, run_parts

    with isolated(tmp_path_factory.mktemp("split-cpu")):
        return run_parts({
            "split_cpu": SPLIT_CPU, "same_step_as_one": SAME_STEP_AS_ONE,
        })
