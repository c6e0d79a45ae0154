"""The setup cell and the checkpoint cell of every notebook, implemented once: CONTRIBUTING, "A notebook", says
what ``setup`` does and what it leaves to the notebook."""

from __future__ import annotations

import importlib
import os
import platform
import re
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from course_utils.core.errors import CheckpointError, ParameterError
from course_utils.core.gpu_config import apply_memory_policy, memory_policy, runtime_initialized
from course_utils.core.i18n import CHINESE, listed, set_language, translator
from course_utils.core.i18n import language as current_language
from course_utils.core.places import work_dir
from course_utils.core.plot_fonts import use_chinese_font
from course_utils.core.tf_setup import onednn_on, quiet_tensorflow
from course_utils.device import DeviceChoice, choose_device, gpu_facts
from course_utils.params import Needs, apply_smoke, check_language, settle_smoke, smoke_enabled
from course_utils.results import Recorder

if TYPE_CHECKING:  # `import course_utils` loads no lesson module: a check loads its own
    from course_utils.lessons import Feedback

_ = translator("course")
PARAMETER_TYPES = (bool, int, float, str, type(None), list, tuple, dict)
_NUMBER = re.compile(r"(\d\d)_")  # a course notebook's name starts with its number: 05_cnn_cpu_vs_gpu
MIB = 2**20


def notebook_parameters(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """The notebook's parameters: its UPPER_CASE names bound to plain values."""
    return {
        k: v
        for k, v in namespace.items()
        if k.isupper() and not k.startswith("_") and isinstance(v, PARAMETER_TYPES)
    }


@dataclass
class Course:
    """What ``setup`` hands the notebook: the device and the record (the notebook imports TensorFlow itself)."""

    notebook: str
    device: DeviceChoice
    recorder: Recorder

    def record(self, **results: Any) -> None:
        """Record key results for the report and the tests; prints what was recorded."""
        self.recorder.record(**results)
        shown = ", ".join(f"{k}={_short(v)}" for k, v in results.items())
        print(_("Recorded: {results}").format(results=shown))

    def load(self, dataset: str, *, images: int | None = None) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
        """``data.load(dataset, images=images)``, its source and the images kept written into the record."""
        from course_utils import data  # lazy: it imports numpy; `import course_utils` stays light

        (train, test), info = data.load(dataset, images=images, with_info=True)
        self.recorder.note_data(info, train_images_used=len(train[0]))
        return train, test

    def check(self, exercise: str, *answers: Any) -> Feedback:
        """Check an answer to exercise ``exercise`` (``"3.1"``) with the notebook's own check (its lesson file's
        ``CHECKS``), print the feedback, and record the outcome and the attempt in the student's record."""
        lesson = lesson_file(self.notebook)
        checks = getattr(lesson, "CHECKS", {})
        if exercise not in checks:
            known = ", ".join(checks) or _("none")
            raise ParameterError(
                _("{notebook} has no exercise {exercise!r}.").format(notebook=self.notebook, exercise=exercise),
                _("Give the number of one of its exercises: {known}.").format(known=known))
        from course_utils.lessons import EMPTY  # lazy: `import course_utils` loads no lesson module

        result = checks[exercise](*answers)
        self.recorder.exercise(exercise, result.status, answered=result.status != EMPTY, right=result.ok)
        return result

    def checkpoint(self, checks: Mapping[str, bool]) -> None:
        """State and check what the student should have seen; raise if anything failed."""
        checkpoint(checks, recorder=self.recorder)

    def work_dir(self, name: str | None = None) -> Path:
        """A fresh, empty folder for this run's own files (programs, backups, checkpoints, worker logs), or its
        subfolder ``name``: ``places.work_dir``."""
        return work_dir(self.recorder.path, name)


def peak_gpu_mib() -> float | None:
    """The first GPU's peak in MiB, which a record keeps: the bytes TensorFlow's allocator held
    (``get_memory_info("GPU:0")["peak"]``), not what it reserved on the card (``nvidia-smi``). None without a GPU, or
    before TensorFlow's runtime has started: asking would start it and fix the device configuration a notebook may
    still be about to make (03 and 07 make theirs after setup)."""
    if not runtime_initialized():
        return None
    tf = quiet_tensorflow()
    if not tf.config.get_visible_devices("GPU"):
        return None
    try:
        return round(tf.config.experimental.get_memory_info("GPU:0")["peak"] / MIB, 1)
    except (ValueError, RuntimeError):  # no such logical GPU
        return None


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def checkpoint(checks: Mapping[str, bool], *, recorder: Recorder | None = None) -> None:
    """Print each check as passed or failed; raise CheckpointError naming the failures."""
    if not checks:
        raise ValueError("a checkpoint needs at least one check")
    failed = [label for label, ok in checks.items() if not ok]
    for label, ok in checks.items():
        print(f"  [{'ok' if ok else 'FAILED'}] {label}")
    if recorder is not None:
        recorder.record(checkpoint_passed=not failed, checkpoint_failed=failed)
    if failed:
        raise CheckpointError(
            _("Checkpoint failed: {failed}.").format(failed="; ".join(failed)),
            _("Re-run the notebook from the top (Kernel > Restart and Run All); if it still fails, "
              "the numbers above show where it went wrong."),
        )
    print(_("Checkpoint passed: {passed} of {total} checks.").format(passed=len(checks), total=len(checks)))


def setup_calls(policy: str | int | None, gpus: int, seed: int | None) -> list[str]:
    """What ``setup`` did, written as the TensorFlow and Keras calls it made, so nothing is configured out of sight."""
    level = os.environ.get("TF_CPP_MIN_LOG_LEVEL")
    calls = [f'os.environ["TF_CPP_MIN_LOG_LEVEL"] = "{level}"  # ' + _("before the import: fewer C++ start-up lines")
             if level else "", "import tensorflow as tf", "import keras"]
    if seed is not None:
        calls.append(f"keras.utils.set_random_seed({seed})  # " + _("Python, NumPy and TensorFlow"))
    if gpus and policy == "growth":
        calls.append('for gpu in tf.config.list_physical_devices("GPU"): '
                     "tf.config.experimental.set_memory_growth(gpu, True)")
    elif gpus and isinstance(policy, int):
        calls.append('for gpu in tf.config.list_physical_devices("GPU"): tf.config.set_logical_device_configuration('
                     f"gpu, [tf.config.LogicalDeviceConfiguration(memory_limit={policy})])")
    return [call for call in calls if call]


def lesson_file(notebook: str) -> ModuleType | None:
    """The lesson file of a course notebook (``05_...``: ``course_utils.lessons.nb05``), or None for a notebook of
    one's own. A lesson's number with another name is an error: it would run without the lesson's caps.
    """
    number = _NUMBER.match(notebook)
    if number is None:
        return None
    name = f"course_utils.lessons.nb{number.group(1)}"
    try:
        lesson = importlib.import_module(name)  # lazy: lessons load their helpers; `import course_utils` stays light
    except ModuleNotFoundError as error:
        if error.name != name:
            raise
        return None
    if lesson.NOTEBOOK != notebook:
        raise ParameterError(
            _("Notebook {notebook!r} has the number of the course's notebook {lesson!r}, but not its name.").format(
                notebook=notebook, lesson=lesson.NOTEBOOK),
            _("Give setup the name {lesson!r}; a notebook of your own takes a number no notebook of the course has "
              "(course_utils/lessons/).").format(lesson=lesson.NOTEBOOK))
    return lesson


def _run_settings(notebook: str, smoke: Mapping[str, Any] | None, key_results: Sequence[str] | None,
                  ) -> tuple[Mapping[str, Any], Sequence[str] | Mapping[str, str], Needs | None]:
    """The smoke caps, key results and ``needs`` a notebook runs with: its lesson file's, else the setup call's."""
    lesson = lesson_file(notebook)
    if lesson is None:
        return smoke or {}, key_results or (), None
    if smoke is not None or key_results is not None:
        raise ParameterError(
            _("The smoke caps and key results of {notebook} live in its lesson file, not in the setup call.").format(
                notebook=notebook),
            _("Remove smoke= and key_results= from the setup call; change SMOKE and KEY_RESULTS in {path}.").format(
                path=f"course_utils/lessons/{lesson.__name__.rpartition('.')[2]}.py"))
    return lesson.SMOKE, lesson.KEY_RESULTS, getattr(lesson, "needs", None)


def setup(
    namespace: MutableMapping[str, Any],
    notebook: str,
    *,
    smoke: Mapping[str, Any] | None = None,
    gpu_memory: str | None = "course",
    key_results: Sequence[str] | None = None,
    language: str | None = None,
) -> Course:
    """Prepare a notebook (``namespace``: its ``globals()``): smoke caps, quiet TensorFlow, seeds, device, record.

    ``gpu_memory``: "course" applies ``COURSE_GPU_MEMORY``; None leaves the GPUs alone (notebook 03 configures them).
    ``language`` ("en" or "zh-CN"): the messages' language from here on (``COURSE_LANG``, inherited by child
    processes); in Chinese, plots also get a Chinese font.
    """
    if language is not None:
        set_language(check_language(language))
    caps, key_results, needs = _run_settings(notebook, smoke, key_results)
    is_smoke = smoke_enabled()
    changes = apply_smoke(namespace, caps, smoke=is_smoke)
    # before TensorFlow: a bad value fails here, at once; a smoke cap gives way to what the notebook needs
    settle_smoke(lambda: notebook_parameters(namespace), namespace, changes, needs)
    if current_language() == CHINESE:
        use_chinese_font()  # Chinese plot titles and labels; without a Chinese font, one warning says what to do
    policy = None if gpu_memory is None else memory_policy()
    tf = quiet_tensorflow()
    import keras

    seed = namespace.get("SEED")
    if seed is not None:
        keras.utils.set_random_seed(seed)  # Python, NumPy and TensorFlow
    memory_line = apply_memory_policy(policy) if policy is not None else None  # before the runtime starts
    device = choose_device(namespace.get("DEVICE", "auto"))
    recorder = Recorder(notebook, parameters=notebook_parameters(namespace), smoke=is_smoke, key_results=key_results,
                        smoke_changes=changes)
    recorder.environment(
        tensorflow=tf.__version__,
        keras=keras.__version__,
        python=platform.python_version(),
        platform=platform.platform(terse=True),
        device=device.name,
        device_kind=device.kind,
        device_description=device.description,
        onednn=onednn_on(),
        gpu_memory=memory_line,
    )
    if device.kind == "GPU":  # which GPU, driver and memory; and the most of it this run's TensorFlow held
        recorder.environment(gpu=gpu_facts(tf))
        recorder.measures["peak_gpu_mib"] = peak_gpu_mib
    calls = setup_calls(policy, len(tf.config.get_visible_devices("GPU")), seed)
    lines = [
        f"TensorFlow {tf.__version__} (Keras {keras.__version__}), Python {platform.python_version()}",
        _("setup() made these calls:"),
        *(f"    {call}" for call in calls),
        _("Device: {device}").format(device=device),
    ]
    if memory_line:
        lines.append(memory_line)
    if is_smoke:
        shown = listed(f"{k} {old!r} -> {new!r}" for k, (old, new) in changes.items()) or _("nothing to shorten")
        lines.append(_("Smoke mode (COURSE_SMOKE=1): {changes}").format(changes=shown))
    lines.append(_("Results are recorded in {path}").format(path=recorder.path))
    print("\n".join(lines))
    return Course(notebook, device, recorder)
