"""Sharded runs: the split, the scheduler's environment, the shard records, the merge and the cluster files.

The 4-run fixture grid (tests/fixtures/shard_grid.yaml: two notebooks without TensorFlow, two runs that fail on
purpose) runs once unsharded through ``course run``'s ``main`` (module fixture ``real``), 4 kernels, two at a time:
a grid's runs, each in a kernel of its own. Shards and merges here run stand-ins; `make slurm` runs the same grid
as a real Slurm array job and compares its merged report with an unsharded run (tests/tools/batch/report_diff.py).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

import course_tools.batch.runner as runner
import course_tools.batch.shard as shard_module
from course_tools.batch.grid import Plan, RunSpec, make_plan
from course_tools.batch.notebook_run import RunRecord
from course_tools.batch.runner import _parser, main
from course_tools.batch.shard import (
    Shard,
    fingerprint,
    from_environment,
    parse_shard,
    select,
    without_shard,
)
from course_utils.core.errors import InputError
from course_utils.core.files import FolderLock
from course_utils.results import record_in

from ...conftest import ROOT, isolated
from .report_diff import differences

FIXTURES = ROOT / "tests" / "fixtures"
GRID = FIXTURES / "shard_grid.yaml"
PLAN_NAMES = ["curve__N-1", "curve__N-2", "fails__N-1", "fails__N-2"]
SBATCH = ROOT / "cluster" / "slurm" / "course-array.sbatch"
INDEXED_JOB = ROOT / "cluster" / "k8s" / "course-indexed-job.yaml"
MERGE_JOB = ROOT / "cluster" / "k8s" / "course-merge-job.yaml"
SCHEDULER_VARIABLES = ("JOB_COMPLETION_INDEX", "COURSE_SHARDS", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN",
                       "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP", "SLURM_ARRAY_TASK_COUNT")


@pytest.fixture(autouse=True)
def _no_scheduler(monkeypatch):
    for name in SCHEDULER_VARIABLES:  # the tests may themselves run inside a Slurm job
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("runs", [0, 7])
def test_every_run_goes_to_exactly_one_shard_in_plan_order_and_shard_sizes_differ_by_at_most_one(runs):
    plan = Plan(runs=[RunSpec(Path(f"nb{k}.ipynb"), {"K": k}, f"run{k}") for k in range(runs)])
    for count in range(1, runs + 3):
        parts = [[r.name for r in select(plan, Shard(i, count)).runs] for i in range(1, count + 1)]
        assert sorted(n for part in parts for n in part) == sorted(r.name for r in plan.runs), "each run once"
        assert max(map(len, parts)) - min(map(len, parts)) <= 1, (count, parts)
        for i, part in enumerate(parts, start=1):
            assert part == [f"run{k}" for k in range(i - 1, runs, count)], "run k (0-based) goes to shard k mod N + 1"


def test_the_plan_fingerprint_depends_on_the_plan_not_on_where_the_course_lies(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for name in ("shard_grid.yaml", "curve.ipynb", "fails.ipynb"):
        shutil.copy(FIXTURES / name, elsewhere / name)
    here, there = make_plan([], grid_file=GRID), make_plan([], grid_file=elsewhere / "shard_grid.yaml")
    assert [r.name for r in here.runs] == PLAN_NAMES
    assert fingerprint(here, 2) == fingerprint(there, 2), "another machine, another path: the same plan"
    assert [r.name for r in select(there, Shard(2, 2)).runs] == ["curve__N-2", "fails__N-2"]
    assert fingerprint(here, 2) != fingerprint(here, 3), "the number of shards is part of the plan"
    assert fingerprint(here, 2) != fingerprint(make_plan([], grid_file=GRID, smoke=True), 2)
    assert fingerprint(here, 2) != fingerprint(make_plan([], grid_file=GRID, parameters={"N": 1}), 2)
    notebook = json.loads((elsewhere / "fails.ipynb").read_text())
    notebook["cells"].append({"cell_type": "markdown", "id": "edited", "metadata": {}, "source": ["edited"]})
    (elsewhere / "fails.ipynb").write_text(json.dumps(notebook))
    edited = make_plan([], grid_file=elsewhere / "shard_grid.yaml")
    assert fingerprint(edited, 2) != fingerprint(here, 2), "a notebook edited between two shards is noticed"


@pytest.mark.parametrize("text, shard", [("1/4", (1, 4)), (" 2 / 4 ", (2, 4)), ("4/4", (4, 4)), ("1/1", (1, 1))])
def test_a_shard_is_written_i_of_n_counted_from_one(text, shard):
    assert parse_shard(text, {}) == Shard(*shard)


@pytest.mark.parametrize(
    "text, message",
    [
        ("0/0", "the number of shards must be at least 1, not 0"),
        ("3/2", "shard 3 does not exist; with 2 shard(s) they are numbered 1 to 2"),
        ("0/2", "shard 0 does not exist"),
        ("x", "--shard 'x' is not I/N or auto"),
        ("auto", "neither a Kubernetes Indexed Job (JOB_COMPLETION_INDEX) nor a Slurm array job"),
    ],
)
def test_a_bad_shard_is_refused_with_what_to_write(text, message):
    with pytest.raises(InputError) as info:
        parse_shard(text, {})
    assert message in info.value.what and info.value.fix


def slurm(task_id, low, high=None, step=None, count=None):
    """The SLURM_ARRAY_TASK_* variables of one array task (None: not set)."""
    values = {"ID": task_id, "MIN": low, "MAX": high, "STEP": step, "COUNT": count}
    return {f"SLURM_ARRAY_TASK_{k}": v for k, v in values.items() if v is not None}


# A scheduler's environment -> the shard, or what the refusal says. Slurm: what 22.05.8 set in each array task
# (`make slurm`'s one-node cluster; sbatch --array=SPEC), numbered from its lowest index; Kubernetes: a 0-based
# index, and the count from the manifest.
SCHEDULERS = {
    "0-3, task 3": (slurm("3", "0", "3", "1", "4"), Shard(4, 4)),
    "1-7:2, task 5": (slurm("5", "1", "7", "2", "4"), Shard(3, 4)),
    "1-2, task 2, no MAX or STEP": (slurm("2", "1", count="2"), Shard(2, 2)),
    "1,3,9": (slurm("9", "1", "9", "1", "3"), "not one evenly spaced range"),
    "no COUNT": (slurm("1", "1", "4"), "SLURM_ARRAY_TASK_COUNT is not set"),
    "ID x": (slurm("x", "1", count="2"), "SLURM_ARRAY_TASK_ID is 'x', not a whole number"),
    "k8s index 2": ({"JOB_COMPLETION_INDEX": "2", "COURSE_SHARDS": "3"}, Shard(3, 3)),
    "k8s no count": ({"JOB_COMPLETION_INDEX": "0"}, "COURSE_SHARDS is not set"),
    "k8s index 3 of 3": ({"JOB_COMPLETION_INDEX": "3", "COURSE_SHARDS": "3"}, "shard 4 does not exist"),
}


@pytest.mark.parametrize("case", list(SCHEDULERS))
def test_shard_auto_numbers_a_slurm_array_or_a_kubernetes_indexed_job(case):
    env, expected = SCHEDULERS[case]
    if isinstance(expected, Shard):
        assert from_environment(env) == expected
        return
    with pytest.raises(InputError) as info:
        from_environment(env)
    assert expected in info.value.what and info.value.fix
    assert "SLURM_ARRAY_TASK_ID" not in env or "--array=1-4" in info.value.fix


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--shard", "3/2"], "shard 3 does not exist"),
        (["--merge", "OUT", str(FIXTURES / "ok.ipynb"), "--jobs", "2"], "(--jobs, NOTEBOOK given)"),
        (["--merge", "nowhere"], "no such folder"),
        (["--merge", "OUT"], "no shard records in"),
    ],
)
def test_bad_shard_or_merge_input_exits_2_before_anything_runs(argv, message, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(runner, "run_batch", lambda *a, **kw: pytest.fail("a run started although the input was bad"))
    (tmp_path / "OUT").mkdir()
    argv = [str(tmp_path / a) if a in ("OUT", "nowhere") else a for a in argv]
    out = tmp_path / "out"
    assert main(["--grid", str(GRID), "--out", str(out), *argv] if "--merge" not in argv else argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "What to do: " in err, err
    assert not out.exists() and not (tmp_path / "OUT" / "report.md").exists()


def test_the_shard_option_is_taken_out_of_the_command_the_report_shows():
    for argv in (["--grid", "g", "--shard", "1/2", "--out", "o"], ["--grid", "g", "--shard=auto", "--out", "o"],
                 ["--grid", "g", "--sha", "2/2", "--out", "o"]):
        assert without_shard(argv) == ["--grid", "g", "--out", "o"], argv


def stand_in_runs(plan, out, **kw):
    """``run_batch`` without kernels: every run ok, recording its N."""
    return [
        RunRecord(notebook=s.notebook.stem, status="ok", duration_s=0.1,
                  executed=str(out / "executed" / f"{s.name}.ipynb"),
                  parameters=s.parameters, smoke=plan.smoke, results={"n": s.parameters["N"]}, name=s.name,
                  point=s.point, points=s.points, log=str(out / "logs" / f"{s.name}.log"))
        for s in plan.runs
    ]


def test_shards_of_four_runs_in_any_order_merge_in_plan_order_and_an_empty_shard_is_fine(tmp_path, capsys,
                                                                                          monkeypatch):
    monkeypatch.setattr(runner, "run_batch", stand_in_runs)
    out, count = tmp_path / "out", 5
    for i in sorted(range(1, count + 1), key=lambda i: (i * 7) % count):  # any order
        assert main(["--grid", str(GRID), "--shard", f"{i}/{count}", "--out", str(out)]) == 0
        shown = capsys.readouterr().out
        assert f"Shard record:       {out / 'shards' / f'{i}-of-{count}.json'}" in shown
        assert not (out / "report.md").exists() and not (out / "results.json").exists(), "a shard writes no report"
        if i == 5:
            assert "shard 5 of 5 has no runs: the plan has only 4 run(s)" in shown
            assert json.loads((out / "shards" / "5-of-5.json").read_text())["runs"] == []
    first = out / "shards" / f"1-of-{count}.json"  # shard 1 ran on a node with another TensorFlow: said, not refused
    record = json.loads(first.read_text())
    record["meta"]["versions"] = {**record["meta"]["versions"], "tensorflow": "0.0-other"}
    first.write_text(json.dumps(record))
    assert main(["--merge", str(out)]) == 0
    shown = capsys.readouterr()
    assert f"Merged {count} shard(s): 4 of 4 run(s)" in shown.out
    (note,) = [line for line in shown.err.splitlines() if "the shards differ in" in line]
    assert note.startswith("note: the shards differ in versions - shard 1: ") and "0.0-other" in note
    assert all(f"shard {i}: " in note for i in range(1, count + 1))
    data = json.loads((out / "results.json").read_text())
    assert [r["name"] for r in data["runs"]] == PLAN_NAMES and [r["results"]["n"] for r in data["runs"]] == [1, 2, 1, 2]


@pytest.fixture
def shards(tmp_path, capsys, monkeypatch):
    """OUT with the records of shards 1/2 and 2/2 of the fixture grid, their runs stand-ins."""
    monkeypatch.setattr(runner, "run_batch", stand_in_runs)
    out = tmp_path / "out"
    for i in (1, 2):
        assert main(["--grid", str(GRID), "--out", str(out), "--shard", f"{i}/2"]) == 0
    capsys.readouterr()
    return out


def test_shards_lock_only_themselves_and_the_merge_waits_for_a_shard_still_running(shards, capsys):
    shard = ["--grid", str(GRID), "--out", str(shards), "--shard"]
    with FolderLock(shards, name=Shard(1, 2).lock_name).acquire():  # shard 1 runs (again) somewhere
        assert main([*shard, "1/2"]) == 2, "one shard, one runner"
        assert f"`--out {shards}` is in use by another `course run` (pid {os.getpid()})" in capsys.readouterr().err
        assert main([*shard, "2/2"]) == 0, "another shard is not blocked"
        assert main(["--merge", str(shards)]) == 2
        assert f"shard(s) 1/2 (pid {os.getpid()}, on this or another machine) still running" in capsys.readouterr().err
        assert not (shards / "report.md").exists()
    with FolderLock(shards, name=shard_module.LOCK_NAME).acquire():  # an unsharded course run writes into OUT
        assert main(["--merge", str(shards)]) == 2
    assert main(["--merge", str(shards)]) == 0 and (shards / "report.md").is_file()


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    folder = tmp_path_factory.mktemp("grid")
    whole = folder / "whole"
    with isolated(folder):
        status = main(["--grid", str(GRID), "--out", str(whole), "--jobs", "2"])
    return SimpleNamespace(whole=whole, status=status)


def test_a_grid_runs_every_point_in_a_fresh_kernel_of_its_own_and_reports_it(real):
    assert real.status == 1, "two runs fail on purpose"
    data = json.loads((real.whole / "results.json").read_text())
    runs = {r["name"]: r for r in data["runs"]}
    assert list(runs) == PLAN_NAMES and [r["status"] for r in runs.values()] == ["ok", "ok", "failed", "failed"]
    assert data["meta"]["jobs"] == 2 and data["meta"]["title"] == "Sharded fixture grid"
    for n in (1, 2):
        curve = runs[f"curve__N-{n}"]
        assert curve["parameters"] == {"N": n} and curve["results"]["scaled"] == 1.5 * n and curve["error"] is None
        assert (curve["point"], curve["points"], curve["status"], curve["device"]) == (n, 2, "ok", "/CPU:0")
        assert curve["peak_rss_mib"] > 10  # the kernel's memory, watched by its runner process
        assert curve["executed"] == str(real.whole / "executed" / f"curve__N-{n}.ipynb")
        executed = json.loads(Path(curve["executed"]).read_text())
        assert record_in(executed)["results"] == curve["results"], "the record came from the executed notebook"
        assert json.loads((real.whole / "results" / f"curve__N-{n}.json").read_text())["results"] == curve["results"]
    assert runs["curve__N-1"]["environment"]["pid"] != runs["curve__N-2"]["environment"]["pid"], "a fresh kernel each"
    assert os.environ.get("COURSE_HOME") != str(real.whole / "work" / "curve__N-1"), "a run's settings stay its own"
    failed = runs["fails__N-2"]  # the record names the failing cell; what the report makes of it: test_report.py
    assert (failed["failed_cell"]["execution_count"], failed["failed_cell"]["error"]) == (
        3, "ValueError: deliberate failure with N=2")
    (comparison,) = [t for t in data["comparisons"] if t["notebook"] == "curve"]
    assert [(row["N"], row["score"]) for row in comparison["rows"]] == [(n, runs[f"curve__N-{n}"]["results"]["score"])
                                                                       for n in (1, 2)]


def test_the_report_comparison_of_make_slurm_sees_a_changed_result(real, tmp_path):
    """report_diff, which `make slurm` uses to compare the merged shards with an unsharded run."""
    changed = tmp_path / "changed"
    shutil.copytree(real.whole, changed)
    edited = json.loads((changed / "results.json").read_text())
    edited["runs"][0]["results"]["score"] = 0.25
    (changed / "results.json").write_text(json.dumps(edited))
    assert any('"score": 0.25' in line for line in differences(real.whole, changed))


def other_plan(out):
    """Shard 2's record as a leftover of another plan (which plans differ: test_the_plan_fingerprint_...)."""
    path = out / "shards" / "2-of-2.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "fingerprint": "another plan"}))


def moved_run(out):
    """A run of shard 2 copied into shard 1's record: not what shard 1 stands for."""
    first, second = (out / "shards" / f"{i}-of-2.json" for i in (1, 2))
    record = json.loads(first.read_text())
    record["runs"].append(json.loads(second.read_text())["runs"][0])
    first.write_text(json.dumps(record))


PLANTED = {
    "missing shard": (lambda out: (out / "shards" / "2-of-2.json").unlink(),
                      ["1 of 2 shard record(s) missing", "2-of-2.json", "--shard 2/2"]),
    "shard of another plan": (other_plan, ["belong to 2 different plans", "1-of-2.json", "2-of-2.json"]),
    "record under another name": (
        lambda out: shutil.copy(out / "shards" / "1-of-2.json", out / "shards" / "1-of-3.json"),
        ["1-of-3.json: it says it is shard 1 of 2, which is not what its name says"]),
    "truncated record": (lambda out: (out / "shards" / "2-of-2.json").write_text('{"shard": 2, "sha'),
                         ["2-of-2.json: cannot be read"]),
    "run in the wrong record": (moved_run, ["1-of-2.json: its runs are not the ones its shard number stands for"]),
}


@pytest.mark.parametrize("case", list(PLANTED))
def test_a_merge_with_a_missing_foreign_or_broken_shard_is_refused_and_names_it(case, shards, capsys):
    plant, messages = PLANTED[case]
    out = shards
    plant(out)
    before = sorted((p.name, p.read_bytes()) for p in (out / "shards").iterdir())
    assert main(["--merge", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "What to do: " in err
    for message in messages:
        assert message in err, err
    assert not (out / "report.md").exists() and not (out / "results.json").exists()
    assert sorted((p.name, p.read_bytes()) for p in (out / "shards").iterdir()) == before, "nothing lost or changed"


# sbatch's options the script uses (https://slurm.schedmd.com/sbatch.html)
SBATCH_OPTIONS = {"job-name", "array", "output", "time", "cpus-per-task", "mem", "gres"}


def test_the_sbatch_script_is_valid_bash_with_well_formed_directives_before_any_command():
    lines = SBATCH.read_text().splitlines()  # bash runs it: test_the_sbatch_script_runs_its_shard... and make slurm
    first_command = next(i for i, line in enumerate(lines) if line.strip() and not line.startswith("#"))
    directives = [line for line in lines if line.startswith(("#SBATCH", "##SBATCH"))]
    assert all(lines.index(d) < first_command for d in directives), "sbatch reads #SBATCH only before the first command"
    options = {}
    for line in directives:
        found = re.fullmatch(r"#{1,2}SBATCH --([a-z-]+)=(\S+)", line)
        assert found and found[1] in SBATCH_OPTIONS, line
        options[found[1]] = (found[2], line.startswith("##"))
    assert options["gres"] == ("gpu:1", True), "the GPU is asked for by removing one '#'"
    assert options["array"] == ("1-5", False)
    assert len(make_plan([], grid_file=ROOT / "grids" / "batch_size.yaml").runs) == 5, "one shard per run of the grid"


def stand_ins(folder: Path) -> Path:
    """A stand-in environment: bin/activate puts stand-ins for course and sbatch first on PATH; both log their
    arguments to folder/calls.log, one call a line, quoted as bash quotes them, and exit with 1 (course: a run failed;
    sbatch: the submission was refused)."""
    bin_dir = folder / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "activate").write_text(f'PATH="{bin_dir}:$PATH"\nexport PATH\n')
    for tool in ("course", "sbatch"):
        path = bin_dir / tool
        path.write_text(f"#!/bin/bash\n{{ printf {tool}; printf ' %q' \"$@\"; echo; }} >> '{folder / 'calls.log'}'\n"
                        "exit 1\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return folder / "venv"


def test_the_sbatch_script_runs_its_shard_and_its_first_task_submits_the_merge(tmp_path):
    """A refused submission is said with the command to run; a merge submitted and run: the slurm tier."""
    venv = stand_ins(tmp_path)
    env = {"PATH": os.environ["PATH"], "SLURM_SUBMIT_DIR": str(tmp_path), "COURSE_VENV": str(venv),
           "COURSE_OUT": "out dir", "SLURM_ARRAY_JOB_ID": "77", "SLURM_ARRAY_TASK_MIN": "1"}
    for task in ("1", "2"):
        done = subprocess.run(["bash", str(SBATCH), "--smoke"], env={**env, "SLURM_ARRAY_TASK_ID": task}, cwd=ROOT,
                              capture_output=True, text=True)
        assert done.returncode == 1, done.stderr  # course's exit status (1: a run failed) is the task's
        refused = "warning: the merge job was not submitted; when every task has ended, run: course run --merge"
        assert (refused in done.stderr) == (task == "1"), done.stderr
    calls = (tmp_path / "calls.log").read_text().splitlines()
    shard = "course run --grid grids/batch_size.yaml --shard auto --out out\\ dir --smoke"
    assert calls[1:] == [shard, shard], "each task runs its shard; only the first submits the merge"
    args = _parser().parse_args(shlex.split(shard)[2:])  # a command course run accepts
    assert (args.shard, args.grid, args.smoke) == ("auto", Path("grids/batch_size.yaml"), True)
    submitted = shlex.split(calls[0])
    assert submitted[:4] == ["sbatch", "--dependency=afterany:77", "--job-name=course-merge", "--time=00:30:00"]
    assert submitted[4] == "--output=out dir/course-merge-%j.out" and (tmp_path / "out dir").is_dir()
    wrap = submitted[5].removeprefix("--wrap=")
    (tmp_path / "calls.log").unlink()
    subprocess.run(["sh", "-c", wrap], env={"PATH": os.environ["PATH"]}, cwd="/", check=False)
    assert (tmp_path / "calls.log").read_text() == "course run --merge out\\ dir\n", "in the course folder"


def container(job):
    [found] = job["spec"]["template"]["spec"]["containers"]
    return found


def test_the_kubernetes_job_is_indexed_and_each_index_is_one_shard():
    [job] = yaml.safe_load_all(INDEXED_JOB.read_text())
    spec = job["spec"]
    assert (job["apiVersion"], job["kind"], spec["completionMode"]) == ("batch/v1", "Job", "Indexed")
    assert 1 <= spec["parallelism"] <= spec["completions"]
    assert spec["template"]["spec"]["restartPolicy"] == "Never", "required by backoffLimitPerIndex"
    env = {e["name"]: e["value"] for e in container(job)["env"]}
    assert env["COURSE_SHARDS"] == str(spec["completions"]), "N must be the Job's completions"
    shards = [from_environment({"JOB_COMPLETION_INDEX": str(i), **env}) for i in range(spec["completions"])]
    assert shards == [Shard(i, spec["completions"]) for i in range(1, spec["completions"] + 1)]
    [rule] = spec["podFailurePolicy"]["rules"]
    assert rule["action"] == "FailJob" and rule["onExitCodes"] == {"containerName": "course", "operator": "In",
                                                                   "values": [2]}
    [script] = container(job)["args"]
    words = shlex.split(script.splitlines()[0].replace('"$COURSE_GRID"', env["COURSE_GRID"]))
    args = _parser().parse_args(words[2:])
    assert words[:2] == ["course", "run"] and args.shard == "auto" and args.grid == Path(env["COURSE_GRID"])
    [mount] = container(job)["volumeMounts"]
    [volume] = spec["template"]["spec"]["volumes"]
    assert args.out == Path(mount["mountPath"]) and mount["name"] == volume["name"]
    assert "CHANGE-ME" in volume["persistentVolumeClaim"]["claimName"] and "CHANGE-ME" in container(job)["image"]


def test_the_kubernetes_gpu_is_one_uncommented_line_away():
    text = INDEXED_JOB.read_text()
    assert "nvidia.com/gpu" not in container(yaml.safe_load(text))["resources"]["limits"]
    with_gpu = yaml.safe_load(text.replace("# nvidia.com/gpu: 1", "nvidia.com/gpu: 1"))
    assert container(with_gpu)["resources"]["limits"]["nvidia.com/gpu"] == 1


@pytest.mark.parametrize("status, pod", [(0, 0), (1, 0), (2, 2)])
def test_the_kubernetes_pod_succeeds_when_its_record_is_written_and_fails_otherwise(status, pod, tmp_path):
    """Exit status 1 (a run failed, the record holds it) is success for the pod; 2 (bad input) fails the Job."""
    (tmp_path / "course").write_text(f"#!/bin/sh\nexit {status}\n")
    (tmp_path / "course").chmod(0o755)
    [script] = container(yaml.safe_load(INDEXED_JOB.read_text()))["args"]
    done = subprocess.run(["bash", "-c", script], env={"PATH": f"{tmp_path}:{os.environ['PATH']}", "COURSE_GRID": "g"})
    assert done.returncode == pod


def test_the_kubernetes_merge_job_reads_the_same_volume():
    [job] = yaml.safe_load_all(INDEXED_JOB.read_text())
    [merge] = yaml.safe_load_all(MERGE_JOB.read_text())
    command = container(merge)["command"]
    assert command[:2] == ["course", "run"] and _parser().parse_args(command[2:]).merge == Path("/out")
    assert container(merge)["volumeMounts"][0]["mountPath"] == container(job)["volumeMounts"][0]["mountPath"]
    claims = [j["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] for j in (job, merge)]
    assert claims[0] == claims[1] and container(merge)["image"] == container(job)["image"]
