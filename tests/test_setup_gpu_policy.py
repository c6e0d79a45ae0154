"""The course-wide GPU memory switch, as each notebook's own setup cell applies it, in a fresh process.

There is no GPU here, so two stand-in GPUs are added to TensorFlow's device list before the setup
runs (as in tests/test_gpu_config.py). TensorFlow then really records the configuration setup makes -
memory growth, or a logical device with a memory limit - without starting its runtime. One process
(tests/test_gpu_config.py's, the ``stand_in_gpus`` fixture) runs the parameters and setup cells of every notebook in
turn, once for each value of ``COURSE_GPU_MEMORY``; the stand-ins are reset to "not configured" before each notebook,
as a fresh kernel would have them.
"""

from __future__ import annotations

import pytest

from .conftest import NOTEBOOKS
from .test_notebooks import code_cells, load, source


def setup_cells() -> dict[str, list[str]]:
    found = {}
    for path in NOTEBOOKS:
        cells = code_cells(load(path))
        found[path.stem] = [source(cells[1]), source(cells[2])]  # after the hosted-setup cell (test_notebooks)
    return found


CASES = [  # COURSE_GPU_MEMORY, growth on each stand-in, its limits, what setup says
    ("growth", [True, True], [[], []], "grows as needed on 2 GPU(s)"),
    ("1536", [None, None], [[1536], [1536]], "at most 1536 MiB on each of 2 GPU(s)"),  # None: growth never set
]


@pytest.mark.parametrize(("policy", "growth", "limits", "said"), CASES)
def test_every_setup_applies_the_switch_before_the_runtime_starts(stand_in_gpus, policy, growth, limits, said):
    found = stand_in_gpus["setups"][policy]  # every notebook's setup under each policy of CASES (SETUPS)
    assert sorted(found) == [p.stem for p in NOTEBOOKS]
    for name, seen in found.items():
        assert seen["started"] is False, f"{name}: setup must leave the runtime unstarted"
        assert seen["device"] == "/GPU:0", name
        assert seen["gpu"]["name"] == "Stand-in GPU" and seen["gpu"]["compute_capability"] == "8.6", name
        if name == "03_memory":  # it teaches the choices, so it opts out and configures the GPU itself
            assert (seen["growth"], seen["limits"], seen["recorded"]) == ([None, None], [[], []], None), name
            continue
        assert seen["growth"] == growth and seen["limits"] == limits, name
        assert said in seen["recorded"], name
