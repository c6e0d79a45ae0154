"""Sharded batch runs: one plan split over several machines (``course run --shard I/N`` or ``--shard auto``), then
merged into one report (``course run --merge OUT``); docs/class.md, "Batch runs on a cluster", says how the runs are
split, what a shard's record holds and what the merge checks. Problems are an ``InputError`` naming each file."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from course_tools import _, host_name
from course_tools.batch.grid import Plan
from course_tools.batch.report import say_written, write_report
from course_utils.core import variables
from course_utils.core.errors import FolderInUseError, InputError
from course_utils.core.files import FolderLock, write_json_atomic

KIND = "course-run-shard"
VERSION = 1
SHARDS_DIR = "shards"  # in OUT: one record per shard
LOCK_NAME = ".course-run.lock"  # in OUT: held by the one `course run` that writes there (a shard: lock_name)


def out_in_use(busy: FolderInUseError, out: Path) -> InputError:
    """What ``course run`` (and ``--merge``) says when another one holds ``--out``."""
    return InputError(
        _("`--out {out}` is in use by another `course run` (pid {pid}).").format(out=out, pid=busy.pid or _("unknown")),
        _("wait for it or choose another --out (two runners in one folder would overwrite each other's "
          "records and reports)."),
    )


def _how() -> str:
    """How to write ``--shard`` (the fix of a bad value)."""
    return _("Write --shard I/N, for example --shard 2/4 for the second of four shards (shards are numbered from 1), "
             "or --shard auto in a Slurm array job or a Kubernetes Indexed Job.")


@dataclasses.dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    @property
    def name(self) -> str:
        """``2-of-4``: the shard in file names."""
        return f"{self.index}-of-{self.count}"

    @property
    def lock_name(self) -> str:
        """The shard's own lock file in OUT: shards of one plan do not block each other."""
        return f".course-run.shard-{self.name}.lock"

    def takes(self, position: int) -> bool:
        """Whether the run at ``position`` (0-based, plan order) is this shard's."""
        return position % self.count == self.index - 1


def parse_shard(text: str, env: Mapping[str, str]) -> Shard:
    """``--shard``'s value - ``I/N`` or ``auto`` (read from ``env``) - as a Shard; InputError when it is not one."""
    if text.strip().lower() == "auto":
        return from_environment(env)
    found = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not found:
        raise InputError(_("--shard {value!r} is not I/N or auto").format(value=text), _how())
    return _checked(int(found[1]), int(found[2]), f"--shard {text}")


def _checked(index: int, count: int, where: str) -> Shard:
    if count < 1:
        raise InputError(_("{where}: the number of shards must be at least 1, not {count}").format(
            where=where, count=count), _how())
    if not 1 <= index <= count:
        raise InputError(
            _("{where}: shard {index} does not exist; with {count} shard(s) they are numbered 1 to {count}").format(
                where=where, index=index, count=count),
            _("Use --shard 1/{count} to --shard {count}/{count} (Kubernetes' JOB_COMPLETION_INDEX starts at 0: "
              "--shard auto adds 1 to it).").format(count=count),
        )
    return Shard(index, count)


def _number(env: Mapping[str, str], name: str, fix: str) -> int:
    """The whole number ``>= 0`` in the environment variable ``name``; InputError when it is missing or not one."""
    text = env.get(name)
    if text is None or not text.strip().isdigit():
        what = (_("--shard auto: {name} is not set") if text is None
                else _("--shard auto: {name} is {value!r}, not a whole number"))
        raise InputError(what.format(name=name, value=text), fix)
    return int(text)


def from_environment(env: Mapping[str, str]) -> Shard:
    """The shard a Kubernetes Indexed Job's pod (``JOB_COMPLETION_INDEX`` 0 is shard 1) or a Slurm array task is (the
    lowest index is shard 1; an array with gaps is refused)."""
    if "JOB_COMPLETION_INDEX" in env:
        fix = _("In the Job's manifest set the environment variable {variable} to the same number as "
                ".spec.completions (cluster/k8s/course-indexed-job.yaml does), and keep completionMode: "
                "Indexed.").format(variable=variables.SHARDS)
        index = _number(env, "JOB_COMPLETION_INDEX", fix)
        count = _number(env, variables.SHARDS, fix)
        where = f"--shard auto (JOB_COMPLETION_INDEX={index}, {variables.SHARDS}={count})"
        return _checked(index + 1, count, where)
    if "SLURM_ARRAY_TASK_ID" in env:
        fix = _("Submit the script as a Slurm array job with one range of indices, for example "
                "sbatch --array=1-4 cluster/slurm/course-array.sbatch for four shards.")
        task = _number(env, "SLURM_ARRAY_TASK_ID", fix)
        low = _number(env, "SLURM_ARRAY_TASK_MIN", fix)
        count = _number(env, "SLURM_ARRAY_TASK_COUNT", fix)
        step = _number(env, "SLURM_ARRAY_TASK_STEP", fix) if "SLURM_ARRAY_TASK_STEP" in env else 1
        high = _number(env, "SLURM_ARRAY_TASK_MAX", fix) if "SLURM_ARRAY_TASK_MAX" in env else None
        where = _("--shard auto (Slurm array task {task}: indices {low} to {high}, step {step}, {count} "
                  "task(s))").format(task=task, low=low, high=high if high is not None else "?", step=step, count=count)
        if step < 1 or task < low or (task - low) % step or (high is not None and (high - low) // step + 1 != count):
            raise InputError(_("{where}: the array's indices are not one evenly spaced range, so they cannot be "
                               "numbered as shards").format(where=where), fix)
        return _checked((task - low) // step + 1, count, where)
    raise InputError(
        _("--shard auto: neither a Kubernetes Indexed Job (JOB_COMPLETION_INDEX) nor a Slurm array job "
          "(SLURM_ARRAY_TASK_ID) is in the environment"),
        _("Use --shard auto only inside such a job (cluster/slurm/course-array.sbatch, "
          "cluster/k8s/course-indexed-job.yaml), or give the shard yourself: --shard I/N."),
    )


def select(plan: Plan, shard: Shard) -> Plan:
    """The part of ``plan`` that ``shard`` runs: the same settings, every N-th run."""
    return dataclasses.replace(plan, runs=[r for k, r in enumerate(plan.runs) if shard.takes(k)])


def fingerprint(plan: Plan, count: int) -> str:
    """A digest of everything that makes the plan's runs and report: shards of one plan agree on it.

    Notebooks count by name and content, not by path, so machines that see the course at different
    paths (a pod's image, a login node) agree; a notebook edited between two shards does not.
    """
    digests: dict[Path, str] = {}
    runs = [{"name": r.name, "notebook": r.notebook.stem, "parameters": r.parameters, "point": [r.point, r.points],
             "content": digests.setdefault(r.notebook, hashlib.sha256(r.notebook.read_bytes()).hexdigest())}
            for r in plan.runs]
    whole = {"runs": runs, "smoke": plan.smoke, "timeout": plan.timeout, "title": plan.title,
             "results": plan.results, "shards": count}
    text = json.dumps(whole, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclasses.dataclass
class ShardRun:
    """What ``course run --shard`` needs: the shard, its part of the plan, and what its record says of the whole."""

    shard: Shard
    plan: Plan  # this shard's runs only
    names: list[str]  # every run of the whole plan, in plan order
    fingerprint: str
    argv: list[str]

    @classmethod
    def of(cls, plan: Plan, shard: Shard, argv: Sequence[str]) -> ShardRun:
        return cls(shard, select(plan, shard), [r.name for r in plan.runs], fingerprint(plan, shard.count), list(argv))

    def describe(self) -> str:
        """The line a shard prints before it starts: which of the plan's runs it takes."""
        total, shard = len(self.names), self.shard
        if not self.plan.runs:
            return _("shard {index} of {count} has no runs: the plan has only {total} run(s); "
                     "it writes its (empty) record so that the merge finds every shard").format(
                index=shard.index, count=shard.count, total=total)
        numbers = [k + 1 for k in range(total) if shard.takes(k)]
        shown = ", ".join(map(str, numbers[:12])) + (", ..." if len(numbers) > 12 else "")
        return _("shard {index} of {count}: {runs} of the plan's {total} runs (runs {numbers})").format(
            index=shard.index, count=shard.count, runs=len(numbers), total=total, numbers=shown)

    def save(self, runs: Sequence[Mapping[str, Any]], out: Path, meta: Mapping[str, Any]) -> dict[str, Path]:
        """Write the shard's record (atomically: the merge never reads half a file); ``{"shard": path}``."""
        record = {"kind": KIND, "version": VERSION, "shard": self.shard.index, "shards": self.shard.count,
                  "fingerprint": self.fingerprint, "plan": self.names, "argv": self.argv, "host": host_name(),
                  "meta": dict(meta), "runs": list(runs)}
        return {"shard": write_json_atomic(Path(out) / SHARDS_DIR / f"{self.shard.name}.json", record)}

    def next_step(self, out: Path) -> str:
        return _("Shard {index} of {count} is done. When all {count} are done, write the report: "
                 "course run --merge {out}").format(index=self.shard.index, count=self.shard.count, out=out)


def without_shard(argv: Sequence[str]) -> list[str]:
    """``argv`` less its ``--shard`` option (also ``--shard=V`` and argparse's abbreviations such as ``--sha``)."""
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        option = arg.split("=", 1)[0]
        if len(option) > 3 and "--shard".startswith(option):
            skip = "=" not in arg
            continue
        kept.append(arg)
    return kept


def _problem(path: Path, record: Any) -> str | None:
    """What is wrong with a shard record's shape, or None."""
    if not isinstance(record, dict) or record.get("kind") != KIND:
        return _("it is not a shard record of `course run`")
    if record.get("version") != VERSION:
        return _("it is a version {version!r} record; this course reads version {ours}").format(
            version=record.get("version"), ours=VERSION)
    shard, count = record.get("shard"), record.get("shards")
    if not (isinstance(shard, int) and isinstance(count, int) and 1 <= shard <= count):
        return _("its shard number {shard!r} of {count!r} is not one").format(shard=shard, count=count)
    if path.name != f"{shard}-of-{count}.json":
        return _("it says it is shard {shard} of {count}, which is not what its name says").format(
            shard=shard, count=count)
    names, runs = record.get("plan"), record.get("runs")
    if not (isinstance(names, list) and isinstance(runs, list) and isinstance(record.get("meta"), dict)
            and isinstance(record.get("fingerprint"), str)):
        return _("its plan, runs, settings or fingerprint are missing")
    mine = {n for k, n in enumerate(names) if k % count == shard - 1}
    got = [r.get("name") if isinstance(r, dict) else None for r in runs]
    if len(set(got)) != len(got) or not set(got) <= mine:
        return _("its runs are not the ones its shard number stands for")
    return None


def read_records(out: Path) -> list[dict[str, Any]]:
    """Every shard record in ``out/shards``; InputError naming each one that cannot be read."""
    folder = Path(out) / SHARDS_DIR
    files = sorted(folder.glob("*.json"))
    if not files:
        raise InputError(
            _("no shard records in {folder}").format(folder=folder),
            _("Run the shards first (course run ... --shard I/N --out OUT, or --shard auto in a cluster job) "
              "and merge the same OUT folder they wrote to."),
        )
    records, bad = [], []
    for path in files:
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            bad.append(_("{file}: cannot be read ({reason})").format(
                file=path.name, reason=getattr(exc, "strerror", None) or exc))
            continue
        problem = _problem(path, record)
        if problem:
            bad.append(f"{path.name}: {problem}")
            continue
        record["path"] = path
        records.append(record)
    if bad:
        raise InputError(
            _("{count} shard record(s) in {folder} cannot be used: {problems}").format(
                count=len(bad), folder=folder, problems="; ".join(bad)),
            _("Run those shards again (the same course run command with the same --shard), or delete the files "
              "that are not shard records of this plan."),
        )
    return records


def check_complete(records: Sequence[dict[str, Any]], folder: Path) -> list[dict[str, Any]]:
    """The records of one plan, one per shard, by shard number; InputError for other plans or missing shards."""
    plans: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        plans.setdefault(record["fingerprint"], []).append(record)
    if len(plans) > 1:
        groups = [
            ", ".join(_("{file} (ended {finished})").format(file=r["path"].name,
                                                              finished=r["meta"].get("finished") or "unknown")
                      for r in group)
            + " " + _("[plan {fingerprint}]").format(fingerprint=fp[:12])
            for fp, group in plans.items()
        ]
        raise InputError(
            _("the shard records in {folder} belong to {count} different plans (other notebooks, parameters, "
              "settings or number of shards): {groups}").format(folder=folder, count=len(plans),
                                                                groups=" | ".join(groups)),
            _("Delete the records of the plan you do not want, or run each plan with its own --out, then merge "
              "again."),
        )
    (group,) = plans.values()
    count = group[0]["shards"]
    present = {r["shard"]: r for r in group}
    missing = [i for i in range(1, count + 1) if i not in present]
    if missing:
        names = ", ".join(f"{i}-of-{count}.json" for i in missing)
        raise InputError(
            _("{missing} of {count} shard record(s) missing in {folder}: {names}").format(
                missing=len(missing), count=count, folder=folder, names=names),
            _("Wait until every shard has finished, or run the missing ones again with --shard {shards}. A shard "
              "writes its record when it ends; one killed outright (a time limit's SIGKILL) writes none.").format(
                shards=", ".join(f"{i}/{count}" for i in missing)),
        )
    return [present[i] for i in range(1, count + 1)]


def check_idle(out: Path, count: int) -> None:
    """InputError when a shard still holds its lock in ``out`` (it is still running)."""
    busy = []
    for index in range(1, count + 1):
        lock = FolderLock(out, name=Shard(index, count).lock_name)
        try:
            lock.acquire()
        except FolderInUseError as exc:
            busy.append(_("{index}/{count} (pid {pid}, on this or another machine)").format(
                index=index, count=count, pid=exc.pid or _("unknown")))
        else:
            lock.release()
    if busy:
        raise InputError(_("shard(s) {shards} still running in {out}").format(shards=", ".join(busy), out=out),
                         _("Wait for them to finish, then merge again."))


def _time(text: Any) -> _dt.datetime | None:
    try:
        return _dt.datetime.fromisoformat(str(text))
    except ValueError:
        return None


def _rebased(path: Any, old: str, new: Path) -> Any:
    """A run's file path under the shard's OUT, moved under the merge's OUT (one folder, mounted elsewhere)."""
    if isinstance(path, str) and old and path.startswith(old.rstrip("/") + "/"):
        return str(new / path[len(old.rstrip("/")) + 1:])
    return path


def merged(records: Sequence[Mapping[str, Any]], out: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The runs of every shard in plan order, and the batch settings as an unsharded run records them."""
    names = records[0]["plan"]
    runs = []
    for record in records:
        for run in record["runs"]:
            run = dict(run)
            for key in ("executed", "log"):
                run[key] = _rebased(run.get(key), str(record["meta"].get("out", "")), out)
            runs.append(run)
    position = {name: k for k, name in enumerate(names)}
    runs.sort(key=lambda r: position[r["name"]])
    meta = dict(records[0]["meta"])
    starts = [t for t in (_time(r["meta"].get("started")) for r in records) if t]
    ends = [t for t in (_time(r["meta"].get("finished")) for r in records) if t]
    meta.update(command="course run " + " ".join(without_shard(records[0]["argv"])), out=str(out),
                planned_runs=len(names), interrupted=any(r["meta"].get("interrupted") for r in records))
    if starts:
        meta["started"] = min(starts).isoformat(timespec="seconds")
    if starts and ends:
        meta["finished"] = max(ends).isoformat(timespec="seconds")
        meta["duration_s"] = round((max(ends) - min(starts)).total_seconds(), 1)
    return runs, meta


def _differences(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Settings the shards' machines did not share (versions, platform): said, not refused."""
    said = []
    for key in ("versions", "platform", "jobs"):
        values = {json.dumps(r["meta"].get(key), sort_keys=True) for r in records}
        if len(values) > 1:
            shown = "; ".join(_("shard {shard}: {value}").format(shard=r["shard"], value=r["meta"].get(key))
                              for r in records)
            said.append(_("note: the shards differ in {key} - {values} (the report shows shard 1's)").format(
                key=key, values=shown))
    return said


def merge(out: Path) -> int:
    """``course run --merge OUT``: write the report of every shard's runs; the exit status (2: bad input)."""
    out = Path(out).resolve()
    try:
        if not out.is_dir():
            raise InputError(_("--merge {out}: no such folder").format(out=out),
                             _("Give the --out folder that the shards wrote to (it holds shards/)."))
        with FolderLock(out, name=LOCK_NAME):
            records = check_complete(read_records(out), out / SHARDS_DIR)
            check_idle(out, records[0]["shards"])
            for line in _differences(records):
                print(line, file=sys.stderr)
            runs, meta = merged(records, out)
            paths = write_report(runs, out, meta)
    except FolderInUseError as busy:
        print(_("error: {error}").format(error=out_in_use(busy, out)), file=sys.stderr)
        return 2
    except InputError as exc:
        print(_("error: {error}").format(error=exc), file=sys.stderr)
        return 2
    print(_("Merged {shards} shard(s): {runs} of {planned} run(s), into {out}").format(
        shards=len(records), runs=len(runs), planned=meta["planned_runs"], out=out))
    failed = say_written(paths, runs)
    return 1 if failed or len(runs) < meta["planned_runs"] else 0


def merge_command(args: Any, defaults: Mapping[str, Any]) -> int:
    """``--merge`` on the command line: alone (the records hold the plan), else bad input."""
    given = sorted(f"--{dest.replace('_', '-')}" if dest != "notebooks" else "NOTEBOOK"
                   for dest, value in vars(args).items() if dest != "merge" and value != defaults.get(dest))
    if given:
        print(_("error: --merge takes no other options ({options} given): the shard records hold the plan\n"
                "What to do: run `course run --merge {out}` alone.").format(options=", ".join(given), out=args.merge),
              file=sys.stderr)
        return 2
    return merge(args.merge)
