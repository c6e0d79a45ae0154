"""The course-wide GPU memory switch, as each notebook's own setup cell applies it, in a fresh process.

There is no GPU here, so two stand-in GPUs are added to TensorFlow's device list before the setup
runs (as in tests/test_gpu_config.py). TensorFlow then really records the configuration setup makes -
memory growth, or a logical device with a memory limit - without starting its runtime. One process
runs the parameters and setup cells of every notebook in turn, once for each value of
``COURSE_GPU_MEMORY``; the stand-ins are reset to "not configured" before each notebook, as a fresh
kernel would have them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from .conftest import NOTEBOOKS
from .test_gpu_config import FAKE_GPUS
from .test_notebooks import code_cells, load, source

CHILD = """
import json, os, sys
from course_utils.core.tf_setup import quiet_tensorflow
from course_utils.core import gpu_config
from course_utils.results import read_results

tf = quiet_tensorflow()
{fake_gpus}
real_details = tf.config.experimental.get_device_details
tf.config.experimental.get_device_details = lambda device: (
    {{"device_name": "Stand-in GPU", "compute_capability": (8, 6)}} if device in fakes else real_details(device))

out = {{}}
request = json.loads(sys.stdin.read())
for policy in request["policies"]:
    os.environ["COURSE_GPU_MEMORY"] = policy
    os.environ["COURSE_RESULTS_DIR"] = os.path.join(request["results"], policy)
    for name, cells in request["notebooks"].items():
        for fake in fakes:  # not configured, as in a fresh kernel
            ctx._memory_growth_map[fake] = None
            ctx._virtual_device_map.pop(fake, None)
        namespace = {{}}
        for cell in cells:
            exec(cell, namespace)
        course = namespace["course"]
        record = read_results(course.recorder.path)
        out.setdefault(policy, {{}})[name] = {{
            "growth": [tf.config.experimental.get_memory_growth(f) for f in fakes],
            "limits": [[c.memory_limit for c in tf.config.get_logical_device_configuration(f) or []] for f in fakes],
            "recorded": record["environment"].get("gpu_memory"),
            "gpu": record["environment"].get("gpu"),
            "device": course.device.name,
            "started": gpu_config.runtime_initialized(),
        }}
print("RESULT " + json.dumps(out))
"""


def setup_cells() -> dict[str, list[str]]:
    """Each notebook's parameters cell and setup cell, as code."""
    found = {}
    for path in NOTEBOOKS:
        cells = code_cells(load(path))
        found[path.stem] = [source(cells[1]), source(cells[2])]  # after the hosted-setup cell (test_notebooks)
    return found


CASES = [  # COURSE_GPU_MEMORY, growth on each stand-in, its limits, what setup says
    ("growth", [True, True], [[], []], "grows as needed on 2 GPU(s)"),
    ("1536", [None, None], [[1536], [1536]], "at most 1536 MiB on each of 2 GPU(s)"),  # None: growth never set
]


@pytest.fixture(scope="module")
def setups(tmp_path_factory) -> dict[str, dict[str, dict]]:
    """Every notebook's setup under each policy of CASES, in one fresh process (TensorFlow loads once)."""
    request = {"policies": [case[0] for case in CASES], "notebooks": setup_cells(),
               "results": str(tmp_path_factory.mktemp("records"))}
    code = CHILD.format(fake_gpus=FAKE_GPUS)
    done = subprocess.run([sys.executable, "-c", code], input=json.dumps(request), capture_output=True,
                          text=True, env={**os.environ, "COURSE_SMOKE": "1"}, cwd=NOTEBOOKS[0].parent, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))[len("RESULT "):])


@pytest.mark.parametrize(("policy", "growth", "limits", "said"), CASES)
def test_every_setup_applies_the_switch_before_the_runtime_starts(setups, policy, growth, limits, said):
    found = setups[policy]
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
