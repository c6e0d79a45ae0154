"""The GPU memory policy (``COURSE_GPU_MEMORY``): read, applied to every GPU before the runtime starts, refused after.

TensorFlow's initialisation is global to a process, so each scenario that applies a policy runs in a child
process, which prints one JSON line of what it saw. There is no GPU here: stand-in GPUs are added to TensorFlow's
device list (``FAKE_GPUS``), so its real Python-side checks of ``set_memory_growth`` and
``set_logical_device_configuration`` run. No child starts a runtime with a stand-in in it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from course_utils.core import gpu_config, variables
from course_utils.core.errors import ConfigurationTooLateError, CourseError, ParameterError

from .conftest import isolated

PRELUDE = """
import json
from course_utils.core import gpu_config
from course_utils.core.errors import CourseError
from course_utils.core.tf_setup import quiet_tensorflow

tf = quiet_tensorflow()
out = {}

def attempt(label, policy):
    try:
        out[label] = {"ok": True, "said": gpu_config.apply_memory_policy(policy)}
    except CourseError as err:
        out[label] = {"ok": False, "type": type(err).__name__, "what": err.what, "fix": err.fix,
                      "tf_message": getattr(err, "tf_message", None)}
"""

FAKE_GPUS = """
from tensorflow.python.eager import context
ctx = context.context()
ctx._initialize_physical_devices()
fakes = [tf.config.PhysicalDevice(name=f"/physical_device:GPU:{i}", device_type="GPU") for i in range(2)]
ctx._physical_devices += fakes
ctx._physical_device_to_index = {p: i for i, p in enumerate(ctx._physical_devices)}
ctx._visible_device_list += fakes
for fake in fakes:
    ctx._memory_growth_map[fake] = None
"""

BEFORE_START = FAKE_GPUS + """
attempt("growth", "growth")
out["growth_set"] = [tf.config.experimental.get_memory_growth(g) for g in fakes]
attempt("growth_again", "growth")
for fake in fakes:  # not configured, as in a fresh kernel
    ctx._memory_growth_map[fake] = None
attempt("limit", 1536)
out["limits"] = [[c.memory_limit for c in tf.config.get_logical_device_configuration(g)] for g in fakes]
attempt("limit_again", 1536)
attempt("all", "all")
out["started"] = gpu_config.runtime_initialized()
"""

# Without a GPU first (the runtime stays down), then the runtime started and the stand-ins added after it.
NO_GPU_THEN_AFTER_START = """
out["has_gpu"] = bool(tf.config.list_physical_devices("GPU"))
attempt("no_gpu", "growth")
out["started_before"] = gpu_config.runtime_initialized()
tf.constant(1.0)  # the runtime starts here
out["started_after"] = gpu_config.runtime_initialized()
""" + FAKE_GPUS + """
attempt("growth_late", "growth")
attempt("limit_late", 2048)
out["growth_unchanged"] = [bool(tf.config.experimental.get_memory_growth(g)) for g in fakes]
"""


def run_child(body: str) -> dict:
    """Run ``body`` after PRELUDE in a fresh Python; return its ``out`` dict."""
    code = PRELUDE + body + "\nprint('RESULT ' + json.dumps(out))\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ.copy())
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


@pytest.mark.parametrize(
    ("value", "policy"), [(None, "growth"), ("", "growth"), (" Growth ", "growth"), ("all", "all"), ("2048", 2048)]
)
def test_memory_policy_reads_the_switch(monkeypatch, value, policy):
    monkeypatch.delenv(variables.GPU_MEMORY, raising=False)
    if value is not None:
        monkeypatch.setenv(variables.GPU_MEMORY, value)
    assert gpu_config.memory_policy() == policy


@pytest.mark.parametrize("value", ["0", "-512", "1.5", "lots", "２０４８", "growth,all"])
def test_a_bad_memory_policy_names_the_switch_and_the_choices(value):
    with pytest.raises(ParameterError) as error:
        gpu_config.memory_policy(value)
    assert f"COURSE_GPU_MEMORY={value!r}" in error.value.what and '"growth"' in error.value.fix


def test_too_late_error_says_what_and_what_to_do():
    tf_message = "Physical devices cannot be modified after being initialized"
    err = ConfigurationTooLateError(["memory growth on GPU:0: off -> on"], gpu_config.restart_fix(),
                                    tf_message=tf_message)
    assert isinstance(err, CourseError)
    assert "already initialised" in err.what and "memory growth on GPU:0: off -> on" in err.what
    assert tf_message in err.what
    assert "Restart the kernel" in err.fix and "TF_FORCE_GPU_ALLOW_GROWTH=true" in err.fix
    assert str(err) == f"{err.what}\nWhat to do: {err.fix}"


def test_each_policy_configures_every_gpu_before_the_start_and_once_only(tmp_path):
    with isolated(tmp_path):
        out = run_child(BEFORE_START)
    assert out["growth"] == {"ok": True, "said": "GPU memory: grows as needed on 2 GPU(s) "
                                                 "(COURSE_GPU_MEMORY=growth, the default)"}
    assert out["growth_set"] == [True, True] and out["growth_again"]["ok"], "the same policy again is a no-op"
    assert out["limit"]["said"] == "GPU memory: at most 1536 MiB on each of 2 GPU(s) (COURSE_GPU_MEMORY=1536)"
    assert out["limits"] == [[1536], [1536]] and out["limit_again"]["ok"]
    assert "TensorFlow's default" in out["all"]["said"]
    assert out["started"] is False, "applying a policy must not start the runtime"


def test_without_a_gpu_nothing_is_set_and_after_the_start_a_change_is_refused(tmp_path):
    with isolated(tmp_path):
        out = run_child(NO_GPU_THEN_AFTER_START)
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
        assert change in late["what"] and "Restart the kernel" in late["fix"]
    assert out["growth_unchanged"] == [False, False], "a refused policy changes nothing"
