"""gpu_config.configure: before and after TensorFlow's runtime starts, idempotence, the errors it raises.

TensorFlow's initialisation is global to a process, so everything that configures or starts
the runtime runs in a child process (``run_child``), which prints one JSON line of what it saw.
The GPU paths run against TensorFlow's real Python-side checks with fake GPUs added to its
device list (``FAKE_GPUS``): nothing here has a GPU, and nothing in these children starts a
runtime with a fake GPU in it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from course_utils.core import gpu_config, variables
from course_utils.core.errors import CourseError, DeviceError, ParameterError
from course_utils.core.gpu_config import Change, ConfigurationTooLateError, check_request

from .conftest import isolated

PRELUDE = """
import json, os
from course_utils.core import gpu_config
from course_utils.core.errors import CourseError
from course_utils.core.tf_setup import quiet_tensorflow
from course_utils.core import variables

tf = quiet_tensorflow()
out = {}

def attempt(label, **settings):
    try:
        report = gpu_config.configure(quiet=True, **settings)
        out[label] = {"ok": True, "changes": [str(c) for c in report.changes], "notes": report.notes}
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


def run_child(body: str, *, start_first: bool = False, fake_gpus: bool = False) -> dict:
    """Run ``body`` after PRELUDE in a fresh Python; return its ``out`` dict."""
    return run_parts(("out", part(body, start_first=start_first, fake_gpus=fake_gpus)))["out"]


def part(body: str, *, start_first: bool = False, fake_gpus: bool = False) -> str:
    """``body`` as code, after starting the runtime and/or adding the fake GPUs."""
    code = ""
    if start_first:
        code += "tf.constant(1.0)  # the runtime starts here (if an earlier part has not started it)\n"
    if fake_gpus:
        code += FAKE_GPUS
    return code + textwrap.dedent(body)


def run_parts(*parts: tuple[str, str]) -> dict[str, dict]:
    """Run the (name, code) parts in order after PRELUDE in ONE fresh Python; return each part's ``out`` by name.

    One process for several tests where what each checks allows the state the earlier parts leave behind.
    """
    code = PRELUDE + "results = {}\n"
    for name, body in parts:
        code += f"out = results[{name!r}] = {{}}\n" + body + "\n"
    code += "print('RESULT ' + json.dumps(results))\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ.copy())
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


# --- values rejected before TensorFlow sees them --------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "names"),
    [
        ({"memory_limit_mb": -1}, "memory_limit_mb=-1"),
        ({"memory_limit_mb": 0}, "memory_limit_mb=0"),
        ({"memory_limit_mb": 1.5}, "memory_limit_mb=1.5"),
        ({"memory_limit_mb": True}, "memory_limit_mb=True"),
        ({"virtual_gpus_mb": []}, "virtual_gpus_mb=[]"),
        ({"virtual_gpus_mb": "1024"}, "virtual_gpus_mb='1024'"),
        ({"virtual_gpus_mb": [1024, -5]}, "virtual_gpus_mb[1]=-5"),
        ({"memory_limit_mb": 512, "virtual_gpus_mb": [256]}, "memory_limit_mb and virtual_gpus_mb"),
        ({"memory_growth": True, "memory_limit_mb": 512}, "Memory growth cannot be combined"),
        ({"memory_growth": True, "virtual_gpus_mb": [256, 256]}, "Memory growth cannot be combined"),
        ({"memory_growth": "yes"}, "memory_growth='yes'"),
        ({"visible_gpus": "0"}, "visible_gpus='0'"),
        ({"visible_gpus": [-1]}, "GPU numbers start at 0"),
        ({"visible_gpus": [True]}, "visible_gpus contains True"),
        ({"cpu_devices": 0}, "cpu_devices=0"),
        ({"cpu_devices": -2}, "cpu_devices=-2"),
        ({"cpu_devices": 2.0}, "cpu_devices=2.0"),
    ],
)
def test_invalid_values_are_rejected_with_a_clear_message(settings, names):
    with pytest.raises(ParameterError) as info:
        check_request(**settings)
    assert names in info.value.what
    assert info.value.fix  # always says what to do
    with pytest.raises(ParameterError):
        gpu_config.configure(**settings)  # configure checks first too (no TensorFlow call happens)


def test_valid_values_pass_the_check():
    check_request(memory_growth=True, visible_gpus=[0, "GPU:1"], cpu_devices=2)
    check_request(memory_limit_mb=1024)
    check_request(virtual_gpus_mb=[512, 512], memory_growth=False)
    check_request(visible_gpus=[])


def test_growth_contradicting_the_environment_variable_is_rejected(monkeypatch):
    monkeypatch.setenv("TF_FORCE_GPU_ALLOW_GROWTH", "true")
    with pytest.raises(ParameterError, match="TF_FORCE_GPU_ALLOW_GROWTH=true"):
        check_request(memory_growth=False)
    check_request(memory_growth=True)  # agrees: fine


def test_unparseable_environment_variable_is_reported(monkeypatch, capsys):
    monkeypatch.setenv("TF_FORCE_GPU_ALLOW_GROWTH", "1")
    report = gpu_config.configure(cpu_devices=None)  # changes nothing, so safe in this process
    assert not report.changes
    assert any("neither 'true' nor 'false'" in note for note in report.notes)
    assert "TensorFlow ignores it" in capsys.readouterr().out


def test_unknown_gpu_is_a_device_error_naming_what_exists():
    import tensorflow as tf

    count = len(tf.config.list_physical_devices("GPU"))
    with pytest.raises(DeviceError) as info:
        gpu_config.configure(visible_gpus=[count])  # one past the last GPU
    assert f"asks for {count}" in info.value.what and "TensorFlow sees" in info.value.what


def test_too_late_error_says_what_and_what_to_do():
    tf_message = "Virtual devices cannot be modified after being initialized"
    err = ConfigurationTooLateError(
        [Change("cpu", "logical CPU devices", 2, 3)], gpu_config.restart_fix(), tf_message=tf_message
    )
    assert isinstance(err, CourseError)
    assert "already initialised" in err.what
    assert "logical CPU devices: 2 -> 3" in err.what
    assert "Virtual devices cannot be modified after being initialized" in err.what
    assert "Restart the kernel" in err.fix and "TF_FORCE_GPU_ALLOW_GROWTH=true" in err.fix
    assert str(err) == f"{err.what}\nWhat to do: {err.fix}"


# --- real TensorFlow, in child processes ---------------------------------------------------------


# Three tests share one child (one TensorFlow import, not three), in this order: GPU settings without a GPU
# (nothing changes, the runtime stays down), the CPU split before and after the runtime starts, and then - the
# runtime up, the fake GPUs added after everything the other two read - GPU settings refused as too late.
NO_GPU = """
if tf.config.list_physical_devices("GPU"):
    out["has_gpu"] = True
else:
    attempt("growth", memory_growth=True)
    attempt("limit", memory_limit_mb=512)
    attempt("hide_none", visible_gpus=[])
    out["started"] = gpu_config.runtime_initialized()
"""

CPU_SPLIT = """
out["started_at_first"] = gpu_config.runtime_initialized()
attempt("split", cpu_devices=2)
attempt("same_again_before_start", cpu_devices=2)
out["started_after_configure"] = gpu_config.runtime_initialized()
out["logical"] = [d.name for d in tf.config.list_logical_devices("CPU")]
placed = {}
for name in out["logical"]:
    with tf.device(name):
        placed[name] = tf.reduce_sum(tf.ones((64, 64))).device
out["placed"] = placed
out["started_after_ops"] = gpu_config.runtime_initialized()
attempt("same_after_start", cpu_devices=2)
attempt("different_after_start", cpu_devices=3)
attempt("nothing_asked", )
out["logical_after"] = len(tf.config.list_logical_devices("CPU"))
out["settings"] = str(gpu_config.current())
"""

AFTER_START = """
attempt("growth", memory_growth=True)
attempt("limit", memory_limit_mb=256)
attempt("visible", visible_gpus=[0])
attempt("growth_off_already", memory_growth=False)
attempt("all_visible_already", visible_gpus=[0, 1])
out["growth_unchanged"] = [bool(tf.config.experimental.get_memory_growth(g)) for g in fakes]
"""


@pytest.fixture(scope="module")
def real_devices(tmp_path_factory) -> dict[str, dict]:
    """The three parts' ``out`` dicts, by name."""
    with isolated(tmp_path_factory.mktemp("gpu-config")):
        return run_parts(
            ("no_gpu", part(NO_GPU)),
            ("cpu_split", part(CPU_SPLIT)),
            ("after_start", part(AFTER_START, start_first=True, fake_gpus=True)),
        )


def test_cpu_split_before_and_after_initialisation(real_devices):
    out = real_devices["cpu_split"]
    assert out["started_at_first"] is False
    assert out["split"] == {"ok": True, "changes": ["logical CPU devices: 1 -> 2"], "notes": []}
    assert out["same_again_before_start"]["ok"] and out["same_again_before_start"]["changes"] == []
    assert out["started_after_configure"] is False, "configure must not start the runtime"
    assert out["logical"] == ["/device:CPU:0", "/device:CPU:1"]
    for name, ran_on in out["placed"].items():
        assert ran_on.endswith(name.split("device:")[-1]), (name, ran_on)
    assert out["started_after_ops"] is True
    assert out["same_after_start"]["ok"] and out["same_after_start"]["changes"] == []  # idempotent
    late = out["different_after_start"]
    assert late["ok"] is False and late["type"] == "ConfigurationTooLateError"
    assert late["tf_message"] == "Virtual devices cannot be modified after being initialized"
    assert "logical CPU devices: 2 -> 3" in late["what"] and "Restart the kernel" in late["fix"]
    assert out["nothing_asked"]["ok"] and out["nothing_asked"]["changes"] == []
    assert out["logical_after"] == 2, "a refused configuration changes nothing"
    assert "runtime initialised       yes" in out["settings"]


def test_gpu_settings_before_initialisation_with_fake_gpus():
    out = run_child(
        """
        attempt("growth", memory_growth=True)
        out["growth_set"] = [tf.config.experimental.get_memory_growth(g) for g in fakes]
        attempt("growth_again", memory_growth=True)
        attempt("limit_on_top_of_growth", memory_limit_mb=512)
        attempt("visible", visible_gpus=[1])
        out["visible_now"] = [d.name for d in tf.config.get_visible_devices("GPU")]
        attempt("unknown_gpu", visible_gpus=[2])
        attempt("by_name", visible_gpus=["GPU:1"])
        out["started"] = gpu_config.runtime_initialized()
        out["settings"] = str(gpu_config.current())
        """,
        fake_gpus=True,
    )
    assert out["growth"]["changes"] == ["memory growth on GPU:0: off -> on", "memory growth on GPU:1: off -> on"]
    assert out["growth_set"] == [True, True]
    assert out["growth_again"]["ok"] and out["growth_again"]["changes"] == []
    combo = out["limit_on_top_of_growth"]
    assert combo["type"] == "ParameterError" and "memory growth and a memory limit" in combo["what"]
    assert out["visible"]["changes"] == ["visible GPUs: [GPU:0, GPU:1] -> [GPU:1]"]
    assert out["visible_now"] == ["/physical_device:GPU:1"]
    assert out["unknown_gpu"]["type"] == "DeviceError" and "GPU:0, GPU:1" in out["unknown_gpu"]["what"]
    assert out["by_name"]["ok"] and out["by_name"]["changes"] == []
    assert out["started"] is False
    assert "GPU:1" in out["settings"] and "memory growth on" in out["settings"]


def test_memory_limit_and_virtual_gpus_with_fake_gpus():
    out = run_child(
        """
        attempt("limit", memory_limit_mb=1024, visible_gpus=[0])
        out["limit_config"] = [c.memory_limit for c in tf.config.get_logical_device_configuration(fakes[0])]
        attempt("limit_again", memory_limit_mb=1024)
        attempt("growth_on_top", memory_growth=True)
        attempt("growth_off_is_compatible", memory_growth=False)
        attempt("virtual", virtual_gpus_mb=[256, 256])
        out["virtual_config"] = [c.memory_limit for c in tf.config.get_logical_device_configuration(fakes[0])]
        out["settings"] = str(gpu_config.current())
        """,
        fake_gpus=True,
    )
    assert out["limit"]["changes"] == [
        "visible GPUs: [GPU:0, GPU:1] -> [GPU:0]",
        "logical GPUs on GPU:0 (MB): not set -> [1024]",
    ]
    assert out["limit_config"] == [1024]
    assert out["limit_again"]["changes"] == []
    assert out["growth_on_top"]["type"] == "ParameterError"
    assert "Cannot set memory growth on device when virtual devices configured" in out["growth_on_top"]["what"]
    assert out["growth_off_is_compatible"]["ok"] and out["growth_off_is_compatible"]["changes"] == []
    assert out["virtual"]["changes"] == ["logical GPUs on GPU:0 (MB): [1024] -> [256, 256]"]
    assert out["virtual_config"] == [256, 256]
    assert "logical GPUs: 256 MB + 256 MB" in out["settings"]


def test_gpu_settings_after_initialisation_with_fake_gpus(real_devices):
    out = real_devices["after_start"]
    messages = {
        "growth": "Physical devices cannot be modified after being initialized",
        "limit": "Virtual devices cannot be modified after being initialized",
        "visible": "Visible devices cannot be modified after being initialized",
    }
    for label, tf_message in messages.items():
        assert out[label]["type"] == "ConfigurationTooLateError", out[label]
        assert out[label]["tf_message"] == tf_message
        assert "already initialised" in out[label]["what"] and "Restart the kernel" in out[label]["fix"]
    assert "memory growth on GPU:0: off -> on" in out["growth"]["what"]
    assert out["growth_off_already"]["ok"] and out["growth_off_already"]["changes"] == []
    assert out["all_visible_already"]["ok"] and out["all_visible_already"]["changes"] == []
    assert out["growth_unchanged"] == [False, False]


def test_gpu_settings_without_a_gpu_are_skipped_with_a_note(real_devices):
    out = real_devices["no_gpu"]
    if out.get("has_gpu"):
        pytest.skip("this machine has a GPU")
    assert out["growth"]["ok"] and out["growth"]["changes"] == []
    assert "memory growth: skipped - TensorFlow sees no GPU" in out["growth"]["notes"][0]
    assert "a memory limit: skipped" in out["limit"]["notes"][0]
    assert out["hide_none"]["ok"] and out["hide_none"]["changes"] == []
    assert out["started"] is False


# --- the course-wide GPU memory policy (COURSE_GPU_MEMORY), applied by every notebook's setup ----


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


class FakeConfig:
    def __init__(self, gpus):
        self.gpus = gpus

    def get_visible_devices(self, kind):
        return list(self.gpus) if kind == "GPU" else []


@pytest.mark.parametrize(
    ("policy", "call", "said"),
    [
        ("growth", {"memory_growth": True, "quiet": True}, "grows as needed on 2 GPU(s)"),
        (3000, {"memory_limit_mb": 3000, "quiet": True}, "at most 3000 MiB on each of 2 GPU(s)"),
        ("all", None, "TensorFlow's default"),
    ],
)
def test_the_policy_configures_every_visible_gpu(monkeypatch, policy, call, said):
    calls = []
    fake_tf = type("TF", (), {"config": FakeConfig(["GPU:0", "GPU:1"])})
    monkeypatch.setattr(gpu_config, "quiet_tensorflow", lambda: fake_tf)
    monkeypatch.setattr(gpu_config, "configure", lambda **kw: calls.append(kw))
    assert said in gpu_config.apply_memory_policy(policy)
    assert calls == ([call] if call else [])


def test_without_a_gpu_the_policy_sets_nothing(monkeypatch):
    calls = []
    monkeypatch.setattr(gpu_config, "quiet_tensorflow", lambda: type("TF", (), {"config": FakeConfig([])}))
    monkeypatch.setattr(gpu_config, "configure", lambda **kw: calls.append(kw))
    assert gpu_config.apply_memory_policy("growth") == "GPU memory: no GPU here, nothing to set" and calls == []
