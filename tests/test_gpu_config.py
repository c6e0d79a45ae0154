"""The GPU memory policy (``COURSE_GPU_MEMORY``): read, applied to every GPU before the runtime starts, refused after.

TensorFlow's initialisation is global to a process, so what applies a policy runs in one child process
(``SCENARIO``, shared with tests/test_setup_gpu_policy.py), which prints one JSON line of what it saw. There is no
GPU here: stand-in GPUs are added to TensorFlow's device list (``stand_in_code``, tests/test_gpu_emulation.py's too),
so its real Python-side checks of ``set_memory_growth`` and ``set_logical_device_configuration`` run. No child starts
a runtime with a stand-in in it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from course_utils.core import gpu_config, variables
from course_utils.core.errors import ParameterError

PRELUDE = """
import json, os, sys
from course_utils.core import gpu_config
from course_utils.core.errors import CourseError
from course_utils.core.tf_setup import quiet_tensorflow
from course_utils.results import read_results

tf = quiet_tensorflow()
out = {}

def attempt(label, policy):
    try:
        out[label] = {"ok": True, "said": gpu_config.apply_memory_policy(policy)}
    except CourseError as err:
        out[label] = {"ok": False, "type": type(err).__name__, "what": err.what, "fix": err.fix,
                      "tf_message": getattr(err, "tf_message", None)}
"""

STAND_INS = """
from tensorflow.python.eager import context
ctx = context.context()
ctx._initialize_physical_devices()
fakes = [tf.config.PhysicalDevice(name=f"/physical_device:GPU:{i}", device_type="GPU") for i in range(COUNT)]
real_details = tf.config.experimental.get_device_details
tf.config.experimental.get_device_details = lambda device: (
    {"device_name": "Stand-in GPU", "compute_capability": (8, 6)} if device in fakes else real_details(device))

def unconfigured():  # the stand-ins as a fresh kernel has them
    for fake in fakes:
        ctx._memory_growth_map[fake] = None
        ctx._virtual_device_map.pop(fake, None)

def put_back():  # the stand-ins in TensorFlow's device list, unconfigured
    ctx._physical_devices += fakes
    ctx._physical_device_to_index = {p: i for i, p in enumerate(ctx._physical_devices)}
    ctx._visible_device_list += fakes
    unconfigured()

def take_out():  # before the runtime starts: it never starts with a stand-in in it
    unconfigured()
    for fake in fakes:
        ctx._physical_devices.remove(fake)
        ctx._visible_device_list.remove(fake)
        ctx._memory_growth_map.pop(fake)
    ctx._physical_device_to_index = {p: i for i, p in enumerate(ctx._physical_devices)}

put_back()
"""


def stand_in_code(count: int) -> str:
    """Code that adds ``count`` stand-in GPUs (``fakes``) to TensorFlow's device list, where ``tf`` is imported."""
    return STAND_INS.replace("COUNT", str(count))


# Every notebook's parameters and setup cells in turn (tests/test_setup_gpu_policy.py), for each policy it asks for.
SETUPS = """
setups = {}
request = json.loads(sys.stdin.read())
for policy in request["policies"]:
    os.environ["COURSE_GPU_MEMORY"] = policy
    os.environ["COURSE_RESULTS_DIR"] = os.path.join(request["results"], policy)
    for name, cells in request["notebooks"].items():
        unconfigured()
        namespace = {}
        for cell in cells:
            exec(cell, namespace)
        course = namespace["course"]
        record = read_results(course.recorder.path)
        setups.setdefault(policy, {})[name] = {
            "growth": [tf.config.experimental.get_memory_growth(f) for f in fakes],
            "limits": [[c.memory_limit for c in tf.config.get_logical_device_configuration(f) or []] for f in fakes],
            "recorded": record["environment"].get("gpu_memory"),
            "gpu": record["environment"].get("gpu"),
            "device": course.device.name,
            "started": gpu_config.runtime_initialized(),
        }
unconfigured()
"""

# One child for this file's tests and tests/test_setup_gpu_policy.py's: without a GPU (the runtime stays down); two
# stand-ins added, each notebook's setup and each policy applied before the start; then the stand-ins taken out, the
# runtime started (never with a stand-in in it), and the stand-ins put back unconfigured.
SCENARIO = PRELUDE + """
out["has_gpu"] = bool(tf.config.list_physical_devices("GPU"))
attempt("no_gpu", "growth")
out["started_before"] = gpu_config.runtime_initialized()
""" + stand_in_code(2) + SETUPS + """
attempt("growth", "growth")
out["growth_set"] = [tf.config.experimental.get_memory_growth(g) for g in fakes]
attempt("growth_again", "growth")
unconfigured()
attempt("limit", 1536)
out["limits"] = [[c.memory_limit for c in tf.config.get_logical_device_configuration(g)] for g in fakes]
attempt("limit_again", 1536)
attempt("all", "all")
out["started"] = gpu_config.runtime_initialized()

take_out()
tf.constant(1.0)  # the runtime starts here
out["started_after"] = gpu_config.runtime_initialized()
put_back()
attempt("growth_late", "growth")
attempt("limit_late", 2048)
out["growth_unchanged"] = [bool(tf.config.experimental.get_memory_growth(g)) for g in fakes]
print("RESULT " + json.dumps({"policies": out, "setups": setups}))
"""


def run_stand_in_child(request: dict, cwd: Path) -> dict:
    """SCENARIO in a fresh Python, ``request`` (the policies and notebooks SETUPS runs) on its stdin: what it saw."""
    done = subprocess.run([sys.executable, "-c", SCENARIO], input=json.dumps(request), capture_output=True,
                          text=True, env={**os.environ, "COURSE_SMOKE": "1"}, cwd=cwd, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))[len("RESULT "):])


@pytest.mark.parametrize(
    ("value", "policy"), [(None, "growth"), (" Growth ", "growth"), ("all", "all"), ("1", 1)]
)
def test_memory_policy_reads_the_switch(monkeypatch, value, policy):
    monkeypatch.delenv(variables.GPU_MEMORY, raising=False)
    if value is not None:
        monkeypatch.setenv(variables.GPU_MEMORY, value)
    assert gpu_config.memory_policy() == policy


@pytest.mark.parametrize("value", ["0", "lots", "２０４８"])  # the least MiB is 1; digits, but not ASCII
def test_a_bad_memory_policy_names_the_switch_and_the_choices(value):
    with pytest.raises(ParameterError) as error:
        gpu_config.memory_policy(value)
    assert f"COURSE_GPU_MEMORY={value!r}" in error.value.what and '"growth"' in error.value.fix


def test_each_policy_configures_every_gpu_before_the_start_and_once_only(stand_in_gpus):
    out = stand_in_gpus["policies"]
    assert out["growth_set"] == [True, True] and out["growth_again"]["ok"], "the same policy again is a no-op"
    assert out["limits"] == [[1536], [1536]] and out["limit_again"]["ok"]
    said = {"growth": ["2 GPU(s)", "COURSE_GPU_MEMORY=growth"], "all": ["COURSE_GPU_MEMORY=all"],
            "limit": ["1536 MiB", "2 GPU(s)", "COURSE_GPU_MEMORY=1536"]}
    assert all(out[label]["ok"] and all(f in out[label]["said"] for f in facts) for label, facts in said.items()), out
    assert out["started"] is False, "applying a policy must not start the runtime"


def test_without_a_gpu_nothing_is_set_and_after_the_start_a_change_is_refused(stand_in_gpus):
    out = stand_in_gpus["policies"]
    if out["has_gpu"]:
        pytest.skip("this machine has a GPU")
    assert out["no_gpu"] == {"ok": True, "said": "GPU memory: no GPU here, nothing to set"}
    assert out["started_before"] is False and out["started_after"] is True
    for label, tf_message, change in (
            ("growth_late", "Physical devices cannot be modified after being initialized",
             "memory growth on GPU:0: off -> on"),
            ("limit_late", "Virtual devices cannot be modified after being initialized",
             "logical GPUs on GPU:0 (MB): not set -> [2048]")):
        late = out[label]
        assert late["type"] == "ConfigurationTooLateError" and late["tf_message"] == tf_message, late
        assert change in late["what"] and "TF_FORCE_GPU_ALLOW_GROWTH=true" in late["fix"]
    assert out["growth_unchanged"] == [False, False], "a refused policy changes nothing"
