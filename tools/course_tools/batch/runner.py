"""``course run``: the course's notebooks headless with papermill, the whole course or a grid of parameters
(docs/instructors.md, "Batch runs"); ``--shard`` and ``--merge``: course_tools.batch.shard.

Every run executes in a fresh kernel (TensorFlow keeps device memory until its process ends), in a runner process of
its own with its own environment and course home, so up to ``--jobs`` runs go at once without sharing settings or
files. One ``course run`` at a time uses an ``OUT`` folder (``core.files.FolderLock``): two would overwrite each
other's records and reports.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict
from pathlib import Path
from typing import Any

from course_tools import _, installed
from course_tools.batch import shard as shard_module
from course_tools.batch.grid import InputError, Plan, make_plan, parse_value
from course_tools.batch.notebook_run import RunRecord, run_notebook
from course_tools.batch.progress import Progress
from course_tools.batch.report import say_written, write_report
from course_utils.core.errors import FolderInUseError, ParameterError, PlaceError
from course_utils.core.files import FolderLock
from course_utils.core.places import course_home
from course_utils.core.processes import StopSignals
from course_utils.params import smoke_enabled


def default_out() -> Path:
    """``--out``'s default: ``course/`` in the course home (``build/course`` in the student's own checkout)."""
    return course_home() / "course"


class BatchInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) during a batch; ``records`` holds the runs that finished, and the stopped ones."""

    def __init__(self, records: list[RunRecord]) -> None:
        super().__init__()
        self.records = records


class _Stop(threading.Event):
    """The batch's request to stop every run still going, and why (``reason``: "Ctrl-C", "SIGTERM", ...)."""

    def __init__(self) -> None:
        super().__init__()
        self.reason = "Ctrl-C"


def run_batch(
    plan: Plan, out: Path, *, jobs: int = 1, signals: StopSignals | None = None
) -> list[RunRecord]:
    """Run every run of ``plan``, up to ``jobs`` at once, with a progress display; records in plan order.

    On Ctrl-C (a ``KeyboardInterrupt``; ``signals`` says which stop signal raised it) every run still
    going is stopped, and ``BatchInterrupted`` carries the records of those that finished or were stopped.
    """
    records: list[RunRecord | None] = [None] * len(plan.runs)
    stop = _Stop()

    def one(i: int) -> RunRecord | None:
        if stop.is_set():
            return None
        spec = plan.runs[i]
        progress.start(i + 1, spec.label)
        try:
            record = run_notebook(spec.notebook, out, parameters=spec.parameters, smoke=plan.smoke,
                                  timeout=plan.timeout, name=spec.name, point=(spec.point, spec.points), stop=stop)
        except Exception as exc:  # the runner itself failed (a full disk): this run fails, the batch goes on
            executed = str(Path(out).resolve() / "executed" / f"{spec.name}.ipynb")
            record = RunRecord(spec.notebook.stem, "failed", 0.0, executed, dict(spec.parameters), plan.smoke,
                               error=f"runner error: {type(exc).__name__}: {exc}", name=spec.name, point=spec.point,
                               points=spec.points)
        progress.finish(i + 1, record.status, record.duration_s, record.error or "")
        return record

    with Progress(len(plan.runs)) as progress:
        pool = ThreadPoolExecutor(max_workers=jobs)
        futures: dict[Any, int] = {}
        try:
            for i in range(len(plan.runs)):
                futures[pool.submit(one, i)] = i
            for future in as_completed(futures):
                records[futures[future]] = future.result()
        except KeyboardInterrupt:
            stop.reason = (signals.first if signals is not None else None) or "Ctrl-C"
            stop.set()
            pool.shutdown(wait=True, cancel_futures=True)
            done = [f.result() for f in futures if f.done() and not f.cancelled() and f.exception() is None]
            raise BatchInterrupted([r for r in done if r is not None]) from None
        pool.shutdown()
    return [r for r in records if r is not None]


def available_cores() -> int:
    """CPU cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="course run", description="Run course notebooks headless with papermill, "
                                     "over a grid of parameters, and write a report.")
    parser.add_argument("notebooks", nargs="*", help="notebooks: names, numbers (02) or paths (default: all)")
    parser.add_argument("--smoke", action=argparse.BooleanOptionalAction, default=None,
                        help="the short run; --no-smoke the full one (default: as COURSE_SMOKE says, else full)")
    parser.add_argument("-p", "--parameter", nargs=2, action="append", metavar=("NAME", "VALUE"), default=[],
                        help="set a parameter for every run (read like papermill's -p; repeatable)")
    parser.add_argument("--grid", type=Path, help="a YAML grid file: notebooks and parameter values to combine")
    parser.add_argument(
        "--out", type=Path, default=None,
        help="output folder (default: course/ in the course home - build/course in your own copy of the course; "
        "COURSE_HOME moves it)",
    )
    parser.add_argument("--timeout", type=float, default=None, help="whole seconds per cell (default: no limit)")
    parser.add_argument("--jobs", type=int, default=1, help="runs at once, each in its own kernel (default 1)")
    parser.add_argument(
        "--if-declared", action="store_true",
        help="give each notebook only the parameters it declares (e.g. -p DEVICE gpu over every notebook)",
    )
    parser.add_argument(
        "--shard", metavar="I/N|auto",
        help="run only shard I of N (1 to N; run k of the plan goes to shard k mod N) and write OUT/shards/I-of-N.json "
        "instead of the report; auto: I and N from a Slurm array job or a Kubernetes Indexed Job "
        "(course_tools.batch.shard)",
    )
    parser.add_argument(
        "--merge", type=Path, metavar="OUT",
        help="write the report of every shard's runs in OUT (give it alone); exit 2 if a shard is missing",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    if args.merge is not None:  # the shards' records hold the plan (course_tools.batch.shard)
        return shard_module.merge_command(args, vars(_parser().parse_args([])))
    try:
        if args.jobs < 1:
            raise InputError(_("--jobs must be at least 1, not {jobs}").format(jobs=args.jobs))
        shard = shard_module.parse_shard(args.shard, os.environ) if args.shard is not None else None
        plan = make_plan(args.notebooks, parameters={name: parse_value(value) for name, value in args.parameter},
                         grid_file=args.grid, smoke=args.smoke if args.smoke is not None else smoke_enabled(),
                         timeout=args.timeout, if_declared=args.if_declared)
        out = (args.out if args.out is not None else default_out()).resolve()
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(_("cannot create the output folder {out}: {reason}").format(
                out=out, reason=exc.strerror)) from None
        sharded = shard_module.ShardRun.of(plan, shard, argv) if shard else None
        lock = FolderLock(out, name=sharded.shard.lock_name if sharded else shard_module.LOCK_NAME).acquire()
    except FolderInUseError as busy:
        print(_("error: {error}").format(error=shard_module.out_in_use(busy, out)), file=sys.stderr)
        return 2
    except (InputError, ParameterError, PlaceError) as exc:  # ParameterError: COURSE_SMOKE
        print(_("error: {error}").format(error=exc), file=sys.stderr)
        return 2
    try:
        return _run_and_report(sharded.plan if sharded else plan, out, argv, args.jobs, shard=sharded)
    finally:
        lock.release()


def _still_stopping(name: str) -> None:
    """Said when a stop signal comes while the runs are being stopped and the report written."""
    print("\n" + _("{signal} again: still stopping - the runs are being stopped and the report written, a moment "
                   "please").format(signal=name), file=sys.stderr, flush=True)


def _run_and_report(
    plan: Plan, out: Path, argv: list[str], jobs: int, shard: shard_module.ShardRun | None = None
) -> int:
    """Run the batch into ``out`` (already locked) and write its report, even when stopped; the exit status."""
    cores = available_cores()
    if jobs > cores:
        print(_("warning: --jobs {jobs} is more than the {cores} CPU core(s) here; runs will slow each other").format(
            jobs=jobs, cores=cores))
    if jobs > 1:
        print(_("note: runs at the same time share cores, memory and any GPU - use --jobs 1 for timings you compare"))
    if shard is not None:
        print(shard.describe())
    for notebook, names in plan.skipped.items():
        print(_("note: {notebook} does not declare {names}: it runs without (--if-declared)").format(
            notebook=notebook, names=", ".join(names)))
    notebooks = {spec.notebook for spec in plan.runs}
    starting = (_("{runs} run(s) of {notebooks} notebook(s) in smoke mode, {jobs} at a time, into {out}") if plan.smoke
                else _("{runs} run(s) of {notebooks} notebook(s), {jobs} at a time, into {out}"))
    print(starting.format(runs=len(plan.runs), notebooks=len(notebooks), jobs=jobs, out=out), flush=True)
    meta: dict[str, Any] = {
        "title": plan.title, "command": "course run " + " ".join(argv),
        "started": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"), "out": str(out), "jobs": jobs,
        "smoke": plan.smoke, "timeout_s": plan.timeout, "grid_file": plan.grid_file, "grid": plan.grid,
        "key_results": plan.results, "cores": cores, "platform": platform.platform(terse=True),
        "planned_runs": len(plan.runs), "skipped_parameters": plan.skipped,
        "versions": {"python": platform.python_version(),
                     **{p: installed(p) for p in ("tensorflow", "keras", "papermill", "course-utils")}},
    }
    begin = time.perf_counter()
    interrupted = False
    # Ctrl-C, SIGTERM and SIGHUP all stop the batch the same way, once: the report is written in any case.
    with StopSignals(on_repeat=_still_stopping) as signals:
        try:
            records = run_batch(plan, out, jobs=jobs, signals=signals)
        except BatchInterrupted as exc:
            records, interrupted = exc.records, True
        except KeyboardInterrupt:  # before the batch had started anything
            records, interrupted = [], True
        signals.disarm()
        if interrupted:
            print("\n" + _("interrupted ({signal}): writing the report of {count} run(s), finished or stopped").format(
                signal=signals.first or "Ctrl-C", count=len(records)), file=sys.stderr, flush=True)
        meta.update(
            finished=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            duration_s=round(time.perf_counter() - begin, 1),
            interrupted=interrupted,
        )

        runs = [asdict(r) for r in records]
        paths = write_report(runs, out, meta) if shard is None else shard.save(runs, out, meta)  # a shard: its record
    print("\n" + _("Executed notebooks: {folder}").format(folder=out / "executed"))
    failed = say_written(paths, runs)
    if shard is not None:
        print(shard.next_step(out))
    if interrupted:
        first = signals.first
        return 128 + int(getattr(signal, first)) if first and first.startswith("SIG") else 130  # as a shell reports it
    return 1 if failed else 0
