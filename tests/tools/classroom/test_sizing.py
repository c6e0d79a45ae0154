"""Sizing a class (``course preflight --students N``): the arithmetic at its edges, the problems it gives, the
command's output for 30 students on one 80 GB GPU and on two 24 GB GPUs."""

from __future__ import annotations

import copy
import json
import re

import pytest

from course_tools.classroom import preflight
from course_tools.classroom.preflight_problems import find_problems
from course_tools.classroom.sizing import CONTEXT_MIB, plan

from ...conftest import ROOT

H100 = 81559  # MiB: what nvidia-smi reports for an "NVIDIA H100 80GB HBM3" (tests/fixtures/nvidia, 8x H100)
A10 = 24564  # MiB: what nvidia-smi reports for a 24 GB card (NVIDIA A10, RTX A5000, GeForce RTX 4090)


def gpus(*memory):
    return [{"index": i, "name": f"GPU{i}", "memory_mib": m} for i, m in enumerate(memory)]


# students, COURSE_GPU_MEMORY, GPUs (MiB), COURSE_HUB_GPUS -> fits, students that fit, each GPU's (fit, students),
# the recommended limit. A notebook takes limit + 512 MiB; 10 x 2560 = 25600.
PLANS = [
    ("exact fit", 10, 2048, gpus(25600), [], True, 10, [(10, 10)], 2048),
    ("one student over", 11, 2048, gpus(25600), [], False, 10, [(10, 11)], 1792),
    ("one MiB short", 10, 2048, gpus(25599), [], False, 9, [(9, 10)], 1792),
    ("a limit larger than the GPU", 1, 16384, gpus(8192), [], False, 0, [(0, 1)], 7680),
    ("one GPU each, odd class: 16 on one", 31, 2048, gpus(40960, 40960), ["0", "1"], True, 32, [(16, 16)] * 2, 2048),
    ("one GPU each, one over", 33, 2048, gpus(40960, 40960), ["0", "1"], False, 32, [(16, 17)] * 2, 1792),
    ("a device listed twice gets twice the share", 30, 2048, gpus(A10, A10), ["0", "0", "1"], False, 13,
     [(9, 20), (9, 10)], 512),
    ("the hub's GPUs only", 10, 2048, gpus(A10, 25600, A10), ["1"], True, 10, [(10, 10)], 2048),
    ("every GPU: each holds the class", 30, 2048, gpus(A10, A10), [], False, 9, [(9, 30), (9, 30)], 256),
    ("all: one notebook per GPU", 2, "all", gpus(A10, A10), ["0", "1"], True, 2, [(1, 1), (1, 1)], 23808),
    ("all: one more than GPUs", 3, "all", gpus(A10, A10), ["0", "1"], False, 2, [(1, 2), (1, 2)], 11520),
    ("growth: not sized", 30, "growth", gpus(H100), [], None, None, [(None, 30)], 2048),
    ("no limit fits", 200, "growth", gpus(A10), [], None, None, [(None, 200)], None),
]


@pytest.mark.parametrize("students, policy, memory, hub_gpus, fits, fit, rows, limit", [p[1:] for p in PLANS],
                         ids=[p[0] for p in PLANS])
def test_the_arithmetic(students, policy, memory, hub_gpus, fits, fit, rows, limit):
    sized = plan(students, policy, memory, hub_gpus)
    assert (sized["fits"], sized["fit"]) == (fits, fit)
    assert [(row["fit"], row["students"]) for row in sized["gpus"]] == rows
    assert sized["recommended_gpu_memory"] == limit
    if limit is not None:  # the recommendation fits, and 256 MiB more would not
        assert plan(students, limit, memory, hub_gpus)["fits"] is True
        assert plan(students, limit + 256, memory, hub_gpus)["fits"] is False


def test_a_measured_context_replaces_the_docs_number():
    assert plan(30, 2048, gpus(H100), context_mib=0)["fit"] == H100 // 2048
    assert plan(30, 2048, gpus(H100), context_mib=800)["gpus"][0]["fit"] == H100 // 2848


@pytest.mark.parametrize("memory, hub_gpus, why", [
    ([{"index": 0, "name": "GPU0", "memory_mib": None}], [], "no GPU"),
    (gpus(A10, A10), ["MIG-4f1c", "1"], "names MIG-4f1c, which is not a GPU number that nvidia-smi lists here (0, 1)"),
    (gpus(A10, A10), ["2"], "names 2, which is not a GPU number"),
])
def test_what_cannot_be_sized_says_why(memory, hub_gpus, why):
    sized = plan(30, 2048, memory, hub_gpus)
    assert sized["fits"] is None and sized["gpus"] == [] and why in sized["not_sized"]


@pytest.mark.parametrize(("option", "text"), [("--students", "0"), ("--students", "x"), ("--students", "١٢"),
                                             ("--context-mib", "half")])
def test_a_bad_number_of_students_or_context_is_refused(option, text, capsys):
    with pytest.raises(SystemExit) as stopped:
        preflight.main(["--students", "30", f"{option}={text}"])  # the last --students given counts
    assert stopped.value.code == 2
    said = "is not a number of students" if option == "--students" else "is not an amount of memory in MiB"
    assert f"argument {option}: {text!r} {said}" in capsys.readouterr().err


def test_sizing_options_need_students_and_a_good_limit(capsys, tmp_path):
    assert preflight.main(["--gpu-memory", "2048", "--out", str(tmp_path / "r.json")]) == 2
    assert "need --students" in capsys.readouterr().err
    assert preflight.main(["--students", "3", "--gpu-memory", "half", "--out", str(tmp_path / "r.json")]) == 2
    assert "COURSE_GPU_MEMORY='half' is not a GPU memory policy" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


# a plan -> the problem's code, its severity, fragments of its message and of its fix
PROBLEMS = [
    (plan(30, 2048, gpus(H100)), []),
    (plan(30, 4096, gpus(H100)), [("class-does-not-fit", "error", "hold 17 with COURSE_GPU_MEMORY=4096",
                                   ["Set COURSE_GPU_MEMORY=2048", "at most 17 students", "use 2 GPUs"])]),
    (plan(30, 2048, gpus(A10, A10)), [("class-does-not-fit", "error", "hold 9",
                                       ["Set COURSE_HUB_GPUS=0,1: each student then gets one GPU, and 18 students fit",
                                        "COURSE_GPU_MEMORY=256"])]),
    (plan(1, 16384, gpus(8192)), [("class-does-not-fit", "error", "hold 0", ["Set COURSE_GPU_MEMORY=7680"])]),
    (plan(3, "all", gpus(A10, A10), ["0", "1"]), [("class-does-not-fit", "error", "nearly a whole GPU per notebook",
                                                   ["COURSE_GPU_MEMORY=11520", "use 3 GPUs"])]),
    (plan(30, "growth", gpus(H100)), [("class-not-sized", "warning", "COURSE_GPU_MEMORY=growth sets no limit",
                                       ["Set COURSE_GPU_MEMORY=2048"])]),
    (plan(200, "growth", gpus(A10)), [("class-not-sized", "warning", "no limit",
                                       ["No limit of 256 MiB or more fits 200 students"])]),
    (plan(30, 2048, []), [("class-not-sized", "warning", "no GPU", ["on the class's GPU server"])]),
    (plan(30, 2048, gpus(A10), ["MIG-4f1c"]), [("class-not-sized", "warning", "MIG-4f1c", ["--hub-gpus"])]),
]


@pytest.mark.parametrize("sized, expected", PROBLEMS)
def test_each_sizing_gives_its_problem(real_run, sized, expected):
    record = copy.deepcopy(real_run.record)
    record["sizing"] = sized
    found = [p for p in find_problems(record) if p["code"].startswith("class-")]
    assert [(p["code"], p["severity"]) for p in found] == [e[:2] for e in expected]
    for problem, (_code, _severity, message, fixes) in zip(found, expected, strict=True):
        assert message in problem["message"]
        assert all(fix in problem["fix"] for fix in fixes), problem["fix"]


def sizing_part(out: str) -> str:
    """The summary's sizing lines and its class-* problems, as printed."""
    lines = out.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("Class sizing:")))
    part = lines[start:lines.index("", start)]
    for number, line in enumerate(lines):
        if line.startswith("  [") and "] class-" in line:
            part += ["", "Problems:", line, lines[number + 1]]
    return "\n".join(part)


def run(tmp_path, capsys, csv_rows, *options):
    """``course preflight`` on the GPUs of ``csv_rows`` (nvidia-smi's CSV): its status, sizing lines and record."""
    smi = tmp_path / "smi.csv"
    smi.write_text("index, name, memory.total [MiB]\n" + "".join(f"{row}\n" for row in csv_rows), encoding="utf-8")
    code = preflight.main(["--no-compute", "--out", str(tmp_path / "r.json"), "--nvidia-smi", str(smi), *options])
    return code, sizing_part(capsys.readouterr().out), json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))


ONE_H100, TWO_A10 = [f"0, NVIDIA H100 80GB HBM3, {H100} MiB"], [f"{i}, NVIDIA A10, {A10} MiB" for i in (0, 1)]


def test_the_command_sizes_the_class_with_the_hubs_settings(tmp_path, capsys, monkeypatch):
    """COURSE_GPU_MEMORY as the hub sets it and --hub-gpus, on the two 24 GB GPUs nvidia-smi lists (the arithmetic:
    PLANS; --gpu-memory and the printed lines: test_the_docs_show_the_commands_real_output)."""
    monkeypatch.delenv("COURSE_HUB_GPUS", raising=False)
    monkeypatch.setenv("COURSE_GPU_MEMORY", "2048")
    code, _out, record = run(tmp_path, capsys, TWO_A10, "--students", "30", "--hub-gpus", "0,1")
    sized = record["sizing"]
    assert (sized["gpu_memory"], sized["hub_gpus"], sized["fit"], sized["recommended_gpu_memory"]) == (
        2048, ["0", "1"], 18, 1024)
    assert [(row["fit"], row["students"]) for row in sized["gpus"]] == [(9, 15), (9, 15)]
    assert [p["code"] for p in record["problems"] if p["code"].startswith("class-")] == ["class-does-not-fit"]
    assert code == 1


def test_the_docs_show_the_commands_real_output(tmp_path, capsys, monkeypatch):
    """docs/class.md, "Sizing the limit": the context it states, the command and one H100 as nvidia-smi reports it,
    then the command's output, and the sentence on ``--gpu-memory 2048``."""
    docs = (ROOT / "docs" / "class.md").read_text(encoding="utf-8")
    assert f"The course takes {CONTEXT_MIB} MiB ({CONTEXT_MIB / 1024} GiB) per context" in docs
    command = "course preflight --students 30 --gpu-memory 4096"
    assert f"```bash\n{command}\n```" in docs
    assert f"one H100 with 80 GiB (`nvidia-smi` reports {H100} MiB)" in docs
    monkeypatch.delenv("COURSE_HUB_GPUS", raising=False)
    code, out, _record = run(tmp_path, capsys, ONE_H100, *command.split()[2:])
    assert code == 1 and f"```text\n{out}\n```" in docs
    _code, fitting, _record = run(tmp_path, capsys, ONE_H100, "--students", "30", "--gpu-memory", "2048")
    said = re.search(r"With `--gpu-memory 2048`, each notebook takes (\d+) MiB, and the summary says\n`(.*?)`", docs)
    assert said and f"= {said[1]} MiB." in fitting and fitting.endswith("\n  " + said[2])
