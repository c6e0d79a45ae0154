"""Run the course's notebooks headless with papermill and summarise what they recorded.

``python -m course_utils run [NOTEBOOK ...] [--smoke] [--out DIR] [--timeout S]``

Each notebook runs in a fresh kernel (TensorFlow keeps device memory until its process
ends) with ``COURSE_RESULTS_FILE`` pointing at its own record. The executed notebooks go
to ``OUT/executed/``, the records to ``OUT/results/``, and a summary of every run to
``OUT/results.json`` and ``OUT/summary.md``. A failing notebook keeps its executed copy,
its row names the failing cell and error, and the others still run; the exit status is
1 if anything failed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from course_utils.results import PROJECT_ROOT, read_results

NOTEBOOKS_DIR = PROJECT_ROOT / "notebooks"
DEFAULT_OUT = PROJECT_ROOT / "build" / "course"


@dataclass
class RunRecord:
    notebook: str
    status: str  # "ok" or "failed"
    duration_s: float
    executed: str
    parameters: dict[str, Any]
    smoke: bool
    device: str | None = None
    tensorflow: str | None = None
    peak_rss_mib: float | None = None
    results: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


def discover(folder: Path = NOTEBOOKS_DIR) -> list[Path]:
    """The course notebooks in order: ``NN_name.ipynb``."""
    return sorted(p for p in folder.glob("[0-9][0-9]_*.ipynb"))


@contextmanager
def _environ(values: Mapping[str, str]):
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_notebook(
    notebook: Path,
    out: Path,
    *,
    parameters: Mapping[str, Any] | None = None,
    smoke: bool = False,
    timeout: float | None = None,
    name: str | None = None,
) -> RunRecord:
    """Execute one notebook with papermill into ``out``; never raises for a failing notebook."""
    import papermill as pm

    name = name or notebook.stem
    executed = out / "executed" / f"{name}.ipynb"
    record_file = out / "results" / f"{name}.json"
    executed.parent.mkdir(parents=True, exist_ok=True)
    record_file.unlink(missing_ok=True)
    env = {"COURSE_SMOKE": "1" if smoke else "0", "COURSE_RESULTS_FILE": str(record_file)}
    start = time.perf_counter()
    error = None
    with _environ(env):
        try:
            pm.execute_notebook(
                str(notebook),
                str(executed),
                parameters=dict(parameters or {}),
                cwd=str(notebook.parent),
                progress_bar=False,
                execution_timeout=timeout,
            )
        except pm.PapermillExecutionError as exc:
            error = f"cell {exc.exec_count or exc.cell_index}: {exc.ename}: {exc.evalue}"
        except Exception as exc:  # kernel died, timeout, bad notebook: the batch goes on
            error = f"{type(exc).__name__}: {exc}"
    duration = time.perf_counter() - start
    record = read_results(record_file) if record_file.is_file() else {}
    env_info = record.get("environment", {})
    return RunRecord(
        notebook=notebook.stem,
        status="failed" if error else "ok",
        duration_s=round(duration, 1),
        executed=str(executed),
        parameters=dict(parameters or {}),
        smoke=smoke,
        device=env_info.get("device"),
        tensorflow=env_info.get("tensorflow"),
        peak_rss_mib=record.get("peak_rss_mib"),
        results=record.get("results", {}),
        error=error,
    )


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "" if value is None else str(value)


def write_summary(records: list[RunRecord], out: Path) -> tuple[Path, Path]:
    """Write ``results.json`` (everything) and ``summary.md`` (a table) into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    json_path = out / "results.json"
    json_path.write_text(json.dumps([asdict(r) for r in records], indent=2) + "\n")
    lines = [
        "| notebook | status | time (s) | device | peak memory (MiB) | key results |",
        "|---|---|---|---|---|---|",
    ]
    for r in records:
        scalars = {k: v for k, v in r.results.items() if not isinstance(v, (list, dict)) and k != "checkpoint_passed"}
        keys = ", ".join(f"{k}={_cell(v)}" for k, v in scalars.items())
        status = r.status if not r.error else f"failed: {r.error}"
        lines.append(
            f"| {r.notebook} | {status} | {r.duration_s} | {_cell(r.device)} | {_cell(r.peak_rss_mib)} | {keys} |"
        )
    md_path = out / "summary.md"
    md_path.write_text("\n".join(lines) + "\n")
    return json_path, md_path


def resolve(names: list[str]) -> list[Path]:
    """Notebook arguments as paths: a path, or a name/number matched in ``notebooks/``."""
    if not names:
        return discover()
    found = []
    for name in names:
        path = Path(name)
        if path.is_file():
            found.append(path)
            continue
        matches = [p for p in discover() if p.stem == name or p.name == name or p.stem.split("_")[0] == name]
        if len(matches) != 1:
            raise SystemExit(f"error: no notebook {name!r} (choose from: {', '.join(p.stem for p in discover())})")
        found.append(matches[0])
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_utils run", description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", help="notebooks to run (default: all in notebooks/)")
    parser.add_argument("--smoke", action="store_true", help="the short run (COURSE_SMOKE=1)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})")
    parser.add_argument("--timeout", type=float, default=None, help="seconds allowed per cell")
    args = parser.parse_args(argv)
    notebooks = resolve(args.notebooks)
    records = []
    for nb in notebooks:
        print(f"running {nb.name}{' (smoke)' if args.smoke else ''} ...", flush=True)
        record = run_notebook(nb, args.out, smoke=args.smoke, timeout=args.timeout)
        detail = f" - {record.error}" if record.error else ""
        print(f"  {record.status} in {record.duration_s} s{detail}", flush=True)
        records.append(record)
    json_path, md_path = write_summary(records, args.out)
    print(f"\nExecuted notebooks: {args.out / 'executed'}")
    print(f"Results summary:    {md_path}")
    print(f"All records:        {json_path}")
    failed = [r.notebook for r in records if r.status != "ok"]
    if failed:
        print(f"{len(failed)} notebook(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0
