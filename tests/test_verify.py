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


# (GPUs listed, where each product ran, TensorFlow's reason, the doctor's findings) -> usable, what the reason
# names, the troubleshooting entry and the finding it explains
ANSWERS = [
    (["NVIDIA H100 80GB HBM3"], ON_GPU, "unused", [], True, ["1 GPU", "NVIDIA H100 80GB HBM3", "GPU:0"], INDEX, None),
    (["GPU"], [("/device:GPU:0", ON_GPU[0][1])], "unused", [NO_GPU_SEEN],  # listed, but the product ran on the CPU
     False, ["1 GPU(s)"], "cannot-dlopen", "tensorflow-sees-no-gpu"),
    ([], ON_GPU[:1], "no CUDA support", [NO_GPU_SEEN, NO_DRIVER],  # the worst finding's entry
     False, ["no CUDA support"], "nvidia-smi-not-found", "no-nvidia-driver"),
    ([], [], "x", [NO_DRIVER, DLOPEN], False, ["x"], "cannot-dlopen", "gpu-libraries-not-loaded"),  # error first
    ([], [], "no GPU", [Finding("nvcc-not-used", "info", "m", "f")], False, ["no GPU"], INDEX, None),  # no entry
]


@pytest.mark.parametrize(("gpus", "placed", "why_not", "findings", "usable", "named", "anchor", "finding"), ANSWERS,
                         ids=["yes", "not-run-there", "no-gpu", "error-first", "index"])
def test_yes_needs_a_gpu_listed_and_a_product_that_ran_there_and_no_names_an_entry(
        gpus, placed, why_not, findings, usable, named, anchor, finding):
    answer = gpu_answer(gpus, placed, why_not, findings)
    assert (answer.usable, answer.see, answer.finding) == (usable, f"docs/troubleshooting.md#{anchor}", finding)
    assert all(name in answer.because for name in named) and answer.because in str(answer)
    assert (answer.as_asked("gpu"), answer.as_asked("GPU"), answer.as_asked("auto")) == (usable, usable, True)
    assert str(answer) in answer.label("gpu") and "DEVICE='gpu'" in answer.label("gpu")
    assert usable or (answer.see in answer.advice() and (finding or "") in answer.advice())


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
