"""Notebook 02's lesson: what setup reads, and the exercises, each checked by reasoning, not by a table lookup:
2.1 ``check_gpu_code`` (which code of the wheel five GPUs run, by ``doctor.gpus.covered_by_build``), 2.2
``check_timing`` (the fastest of three plans, from a timing table), 2.3 ``check_tf32_gpus`` (where TF32 makes a
float32 product fail ``np.allclose``: compute capability 8.0 and newer).
"""

from __future__ import annotations

from course_utils.core.i18n import translator
from course_utils.doctor.gpus import build_targets, covered_by_build
from course_utils.doctor.gpus import compute_capability as parse_cc
from course_utils.lessons import Feedback, dict_answer, is_empty, multiple_choice

_ = translator("lessons")


NOTEBOOK = "02_verify_gpu"  # the name the notebook gives setup
SMOKE = {"MATMUL_SIZE": 256, "REPEATS": 3}
KEY_RESULTS = {  # name: what it means, as the run report explains it
    "gpus_visible": "GPUs that TensorFlow lists (0 on a machine without a usable GPU)",
    "gpu_usable": "whether an operation really ran on a GPU",
    "matmul_ms": "one matrix product on each device, median milliseconds",
    "copy_ms": "copying the product from each device to main memory, median milliseconds",
}


# Exercise 2.1: the GPUs of the task, with their compute capability.
GPUS = {"GeForce GTX 980": "5.2", "GeForce GTX 1080": "6.1", "Tesla T4": "7.5", "GeForce RTX 3060": "8.6",
        "H100": "9.0"}
KINDS = ("cubin", "ptx", "none")


def code_kind(compute_capability: str, tensorflow: str = "2.21") -> str:
    """Which code of ``tensorflow``'s CUDA wheel a GPU runs: "cubin", "ptx" or "none" (NVIDIA's rules)."""

    coverage = covered_by_build(compute_capability, build_targets(tensorflow), tensorflow)
    if not coverage.covered:
        return "none"
    return "ptx" if coverage.jit else "cubin"


def _gpu_code_problem(gpu: str, value: object) -> str | None:
    cc = GPUS[gpu]
    given = "" if is_empty(value) else str(value).strip().lower()  # None is the placeholder, not "none"
    if not given:
        return _("{gpu} ({cc}) has no answer yet: replace its None with \"cubin\", \"ptx\" or \"none\", in "
                 "quotes.").format(gpu=gpu, cc=cc)
    if given not in KINDS:
        return _("{gpu}: {given!r} is not one of \"cubin\", \"ptx\", \"none\".").format(gpu=gpu, given=given)
    want = code_kind(cc)
    return None if given == want else {
        "cubin": _("{gpu} ({cc}): look for an sm_ entry of the same major version and an equal or lower minor "
                   "version."),
        "ptx": _("{gpu} ({cc}): no sm_ entry has its major version, but compute_90 PTX runs on 9.0 and every newer "
                 "GPU."),
        "none": _("{gpu} ({cc}): no sm_ entry has its major version, and the PTX is for 9.0 and newer. TF 2.17 "
                  "dropped 5.x."),
    }[want].format(gpu=gpu, cc=cc)


def check_gpu_code(answer: object) -> Feedback:
    """Exercise 2.1: a dict {GPU name: "cubin" | "ptx" | "none"} for the five GPUs of ``GPUS``."""
    return dict_answer(
        "Exercise 2.1", answer, lambda given: (_gpu_code_problem(gpu, given.get(gpu)) for gpu in GPUS),
        example='{"Tesla T4": "cubin", ...}',
        hint=_("Replace each None in the dict with \"cubin\", \"ptx\" or \"none\". Then run the cell."),
        right=_("Right. The T4 (7.5) runs sm_70 code: a cubin serves every later minor version of its major "
                "version. The H100 needs the driver to compile the PTX, so its driver must know CUDA 12.5."))


# Exercise 2.2: a classmate's table from the timing cell on a GPU, 4096 x 4096 float32 (ms per product).
TIMING = {"cpu_ms": 820.0, "gpu_ms": 9.8, "copy_ms": 12.0, "products": 100}
TIMING_CHOICES = ("a", "b", "c")


def timing_seconds() -> dict[str, float]:
    """Exercise 2.2's three plans, in seconds, from its table: (a) the GPU with a copy after each product, (b) the GPU
    with one copy of the sum at the end, (c) the CPU (its copy costs almost nothing)."""
    n, t = TIMING["products"], TIMING
    return {"a": n * (t["gpu_ms"] + t["copy_ms"]) / 1e3, "b": (n * t["gpu_ms"] + t["copy_ms"]) / 1e3,
            "c": n * t["cpu_ms"] / 1e3}


def check_timing(answer: object) -> Feedback:
    """Exercise 2.2: the fastest plan for 100 products whose sum is needed in NumPy: the GPU, copying once ("b")."""
    seconds = timing_seconds()
    said = {
        "a": _("A copy after each product costs {copy:g} ms a hundred times: about {a:.1f} s. The sum can stay on "
               "the GPU, and one copy at the end costs {copy:g} ms once: about {b:.1f} s.").format(
                   copy=TIMING["copy_ms"], a=seconds["a"], b=seconds["b"]),
        "c": _("The CPU needs {cpu:g} ms for each product: about {c:.0f} s for a hundred, against about {b:.1f} s on "
               "the GPU.").format(cpu=TIMING["cpu_ms"], c=seconds["c"], b=seconds["b"]),
    }
    right = _("Right: about {b:.1f} s. A copy to main memory costs more than a product here, so copy only what you "
              "need, once.").format(b=seconds["b"])
    return multiple_choice("Exercise 2.2", answer, TIMING_CHOICES, said, right=right)


# Exercise 2.3: GPUs and their compute capability; TF32 runs by default from 8.0.
TF32_GPUS = {"GeForce GTX 1080": "6.1", "Tesla T4": "7.5", "A100": "8.0", "GeForce RTX 4090": "8.9", "H100": "9.0"}
TF32_FROM = (8, 0)


def uses_tf32(compute_capability: str) -> bool:
    """Whether TensorFlow multiplies float32 matrices in TF32 by default on a GPU of this compute capability."""
    return parse_cc(compute_capability) >= TF32_FROM


def _tf32_problem(gpu: str, value: object) -> str | None:
    cc = TF32_GPUS[gpu]
    if is_empty(value):
        return _("{gpu} ({cc}) has no answer yet: replace its None with True or False.").format(gpu=gpu, cc=cc)
    if not isinstance(value, bool):
        return _("{gpu}: {value!r} is not True or False (without quotes).").format(gpu=gpu, value=value)
    if value == uses_tf32(cc):
        return None
    return (_("{gpu} ({cc}): from compute capability 8.0, TensorFlow multiplies float32 matrices in TF32 by default, "
              "so the product fails np.allclose.") if uses_tf32(cc) else
            _("{gpu} ({cc}): TF32 came with compute capability 8.0. Before it, float32 products agree with the CPU's "
              "to float32 rounding, Tensor Cores or not.")).format(gpu=gpu, cc=cc)


def check_tf32_gpus(answer: object) -> Feedback:
    """Exercise 2.3: a dict {GPU name: True | False}, True where a float32 product fails np.allclose with TensorFlow's
    defaults, as the emulated TF32 product did: the GPUs of compute capability 8.0 and newer."""
    return dict_answer(
        "Exercise 2.3", answer, lambda given: (_tf32_problem(gpu, given.get(gpu)) for gpu in TF32_GPUS),
        example='{"Tesla T4": False, ...}',
        hint=_("Replace each None in the dict with True or False. Then run the cell."),
        right=_("Right. On the A100, the RTX 4090 and the H100, a test that needs full float32 runs "
                "tf.config.experimental.enable_tensor_float_32_execution(False) first; their products then run "
                "slower."))


# The notebook's exercises, by number: its task cells call ``course.check("2.1", answer)``.
CHECKS = {
    "2.1": check_gpu_code,
    "2.2": check_timing,
    "2.3": check_tf32_gpus,
}
