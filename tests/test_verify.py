"""Notebook 02's answer: yes only with a GPU listed and a product that ran there; the entry to read when no."""

from __future__ import annotations

from pathlib import Path

import pytest

from course_utils.core.errors import ParameterError
from course_utils.doctor import Finding
from course_utils.lessons.nb02.verify import INDEX, gpu_answer, short_device


def test_short_device_keeps_the_device_part():
    assert short_device("/job:localhost/replica:0/task:0/device:GPU:1") == "GPU:1"
    assert short_device("/device:CPU:0") == "CPU:0" and short_device("CPU:0") == "CPU:0"


# ----------------------------------------------------------------------------- the answer

NO_DRIVER = Finding("no-nvidia-driver", "warning", "No NVIDIA driver was found.", "Install it.")
NO_GPU_SEEN = Finding("tensorflow-sees-no-gpu", "info", "TensorFlow sees no GPU.", "Nothing to do.")
DLOPEN = Finding("gpu-libraries-not-loaded", "error", "Cannot dlopen some GPU libraries.", "Install the wheels.")
ON_GPU = [("/device:CPU:0", "/job:localhost/replica:0/task:0/device:CPU:0"),
          ("/device:GPU:0", "/job:localhost/replica:0/task:0/device:GPU:0")]


def test_yes_needs_a_gpu_listed_and_a_product_that_ran_there():
    answer = gpu_answer(["NVIDIA H100 80GB HBM3"], ON_GPU, "unused")
    assert answer.usable and str(answer) == (
        "TensorFlow can use a GPU here: yes, because TensorFlow lists 1 GPU (NVIDIA H100 80GB HBM3), "
        "and a matrix product placed on GPU:0 ran there")
    assert answer.as_asked("gpu") and answer.as_asked("auto")
    assert answer.label("gpu").endswith("; DEVICE='gpu' requires a GPU")
    assert answer.advice().startswith("The GPU works")


def test_a_listed_gpu_that_did_not_run_the_product_is_a_no():
    moved = [("/device:GPU:0", "/job:localhost/replica:0/task:0/device:CPU:0")]
    answer = gpu_answer(["GPU"], moved, "unused", [NO_GPU_SEEN])
    assert not answer.usable and "lists 1 GPU(s), but no matrix product placed on a GPU ran there" in str(answer)
    assert not answer.as_asked("gpu") and answer.as_asked("auto") and answer.as_asked("cpu")


def test_no_gpu_gives_tensorflow_s_reason_and_the_worst_finding_s_entry():
    answer = gpu_answer([], ON_GPU[:1], "this TensorFlow build has no CUDA support", [NO_GPU_SEEN, NO_DRIVER])
    assert str(answer) == "TensorFlow can use a GPU here: no, because this TensorFlow build has no CUDA support"
    assert (answer.see, answer.finding) == ("docs/troubleshooting.md#nvidia-smi-not-found", "no-nvidia-driver")
    assert answer.advice() == (
        "No GPU: TensorFlow runs on the CPU here. The doctor's main finding is no-nvidia-driver. "
        "See docs/troubleshooting.md#nvidia-smi-not-found, or run `course doctor` in a terminal.")
    assert gpu_answer([], [], "x", [NO_DRIVER, DLOPEN]).see == "docs/troubleshooting.md#cannot-dlopen"  # error first
    assert not answer.as_asked("GPU") and answer.label("auto").endswith("; DEVICE='auto' accepts the CPU")


def test_without_a_finding_that_has_an_entry_the_index_is_named():
    answer = gpu_answer([], [], "no GPU", [Finding("nvcc-not-used", "info", "m", "f")])
    assert (answer.see, answer.finding) == ("docs/troubleshooting.md#index", None)
    assert "See docs/troubleshooting.md#index" in answer.advice()


ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("findings", "anchor"), [([], INDEX), ([NO_DRIVER], "nvidia-smi-not-found"),
                                                  ([NO_DRIVER, DLOPEN], "cannot-dlopen")])
def test_a_chinese_notebook_links_the_chinese_page_at_an_anchor_it_has(monkeypatch, findings, anchor):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")  # what setup(..., language="zh-CN") sets
    answers = [gpu_answer([], [], "no GPU", findings), gpu_answer(["GPU"], ON_GPU, "unused", findings)]
    page = (ROOT / "docs" / "zh" / "troubleshooting.md").read_text(encoding="utf-8")
    for answer in answers:
        assert answer.see == f"docs/zh/troubleshooting.md#{answer.see.split('#')[1]}"
        assert f'<a id="{answer.see.split("#")[1]}"></a>' in page, answer.see
    assert answers[0].see == f"docs/zh/troubleshooting.md#{anchor}"
    assert f"docs/zh/troubleshooting.md#{anchor}" in answers[0].advice()


def test_a_device_choice_that_is_not_one_is_refused():
    with pytest.raises(ParameterError):
        gpu_answer([], [], "no GPU").as_asked("tpu")
