"""One notebook run in a fresh kernel: papermill in a runner process of its own (``core.child``), its record, its
memory. ``run_notebook`` returns a ``RunRecord``: what the notebook recorded (read from the executed notebook's
outputs), how long it took, and for a failed run the failing cell, line and error; the kernel's traceback reaches only
the executed notebook, so it is written into the run's log too."""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import re
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from course_tools import _
from course_tools.batch.report import cell_place
from course_utils.core import variables
from course_utils.core.child import start_python
from course_utils.core.errors import ChildError
from course_utils.core.files import write_json_atomic
from course_utils.core.processes import stop_group
from course_utils.core.rss import peak_rss_mib
from course_utils.results import record_in


@dataclass
class RunRecord:
    """Everything known about one run; ``results.json`` holds one of these per run."""

    notebook: str
    status: str  # "ok" or "failed"
    duration_s: float
    executed: str
    parameters: dict[str, Any]
    smoke: bool
    device: str | None = None
    tensorflow: str | None = None
    peak_rss_mib: float | None = None  # the kernel process's peak resident memory
    results: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    name: str = ""
    point: int = 1
    points: int = 1
    failed_cell: dict[str, Any] | None = None
    environment: dict[str, Any] = field(default_factory=dict)
    started: str = ""
    log: str = ""
    recorded_parameters: dict[str, Any] = field(default_factory=dict)  # as the notebook ran them (smoke caps applied)
    key_results: list[str] = field(default_factory=list)  # the results the notebook declares; the report shows those
    key_meanings: dict[str, str] = field(default_factory=dict)  # what each of them means
    smoke_changes: dict[str, list[Any]] = field(default_factory=dict)  # smoke mode: parameter -> [its value, cap]
    peak_gpu_mib: float | None = None  # the most GPU memory TensorFlow held in the kernel (runs on a GPU)


def run_notebook(notebook: Path, out: Path, *, parameters: dict[str, Any] | None = None, smoke: bool = False,
                 timeout: float | None = None, name: str | None = None, point: tuple[int, int] = (1, 1),
                 stop: threading.Event | None = None) -> RunRecord:
    """Execute one notebook into ``out`` in a runner process and kernel of its own; never raises for a failing run.

    When ``stop`` is set (Ctrl-C or SIGTERM in ``run_batch``; its ``reason`` names which), the runner
    process and its kernel are stopped and the run fails as interrupted. A ``KeyboardInterrupt`` here
    stops them too, and is raised again.
    """
    notebook, out = Path(notebook).resolve(), Path(out).resolve()
    name = name or notebook.stem
    executed = out / "executed" / f"{name}.ipynb"
    record_file = out / "results" / f"{name}.json"
    log = out / "logs" / f"{name}.log"
    for folder in (executed.parent, record_file.parent, log.parent):
        folder.mkdir(parents=True, exist_ok=True)
    record_file.unlink(missing_ok=True)
    # A course home of the run's own (its record file, its scratch: work/NAME/), and a folder of its own where a
    # relative LOG_DIR starts; no COURSE_RESULTS_DIR of the runner's, which would give every run one record file.
    env = {variables.SMOKE: "1" if smoke else "0", variables.HOME: str(out / "work" / name),
           variables.RESULTS_DIR: None, variables.LOG_DIR: str(out / "tensorboard" / name)}
    spec = {"notebook": str(notebook), "executed": str(executed), "parameters": dict(parameters or {}),
            "cwd": str(notebook.parent), "timeout": timeout}
    started = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    begin = time.perf_counter()
    interrupted = False
    with start_python(
        "course_tools.batch.notebook_run:_execute", spec, env=env, log=log, name=f"run-{name}",
        what=_("The runner process of {name}").format(name=name),
    ) as child:  # leaving the block stops the runner process and its kernel, whatever happened
        while child.wait(None if stop is None else 0.2) is None:
            if stop is not None and stop.is_set():
                stop_group(child.process)
                interrupted = True
        try:
            outcome = child.result()
        except ChildError as err:  # the runner process itself failed or died (interrupted, killed, out of memory)
            why = getattr(stop, "reason", "Ctrl-C")
            outcome = {"error": f"interrupted ({why}): the run was stopped" if interrupted else _died(err, log)}
    duration = time.perf_counter() - begin
    record = _recorded(executed, record_file)
    env_info = record.get("environment", {})
    peaks = [p for p in (record.get("peak_rss_mib"), outcome.get("kernel_peak_rss_mib")) if p is not None]
    return RunRecord(
        notebook=notebook.stem, status="failed" if outcome.get("error") else "ok", duration_s=round(duration, 1),
        executed=str(executed), parameters=dict(parameters or {}), smoke=smoke, device=env_info.get("device"),
        tensorflow=env_info.get("tensorflow"), peak_rss_mib=round(max(peaks), 1) if peaks else None,
        results=record.get("results", {}), error=outcome.get("error"), name=name, point=point[0], points=point[1],
        failed_cell=outcome.get("failed_cell"), environment=env_info, started=started, log=str(log),
        recorded_parameters=record.get("parameters", {}), key_results=record.get("key_results", []),
        key_meanings=record.get("key_meanings") or {}, smoke_changes=record.get("smoke_changes") or {},
        peak_gpu_mib=record.get("peak_gpu_mib"))


def _recorded(executed: Path, record_file: Path) -> dict[str, Any]:
    """What the notebook recorded, from the executed notebook's outputs, kept in ``record_file`` for the report's
    readers; {} when it recorded nothing (a run that stopped before ``setup``, or whose notebook was never written)."""
    try:
        record = record_in(json.loads(executed.read_text(encoding="utf-8"))) or {}
    except (OSError, ValueError):
        return {}
    if record:
        write_json_atomic(record_file, record, sort_keys=True)
    return record


def _died(err: ChildError, log: Path) -> str:
    """A run's error when its runner process failed: how it ended and its last line."""
    if err.error:
        message = (err.error.get("message") or "").strip().splitlines()
        return f"runner process failed: {err.error.get('type')}: {message[0] if message else ''} (log: {log})"
    last = err.tail.splitlines()[-1:]
    return f"runner process ended by {err.ended}" + (f": {last[0].strip()}" if last else "") + f" (log: {log})"


def _failed_cell(executed: str) -> dict[str, Any] | None:
    """The cell a run stopped in, read from its executed notebook (for errors papermill does not locate).

    Papermill marks a cell "failed" when it raised; after a timeout or a dead kernel it is
    the last code cell that started (cells run in order).
    """
    try:
        cells = json.loads(Path(executed).read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError):
        return None
    code = [(i, c) for i, c in enumerate(cells) if c.get("cell_type") == "code"]
    meta = [(i, c, c.get("metadata", {}).get("papermill", {})) for i, c in code]
    found = next(((i, c) for i, c, m in meta if m.get("status") in ("failed", "running")), None)
    found = found or next(((i, c) for i, c, m in reversed(meta) if m.get("start_time")), None)
    if found is None:
        return None
    index, cell = found
    return {"index": index, "execution_count": cell.get("execution_count"), "source": "".join(cell["source"])[:500]}


_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")  # colour codes: IPython colours its tracebacks
_FRAME = re.compile(r"^\s*Cell In\s*\[(\d+)\], line (\d+)", re.MULTILINE)  # IPython 8+: "Cell In[3], line 2"
_ARROW = re.compile(r"^-*>\s*(\d+)(?: (.*))?$", re.MULTILINE)  # the line a frame was at: "----> 2 raise ..."


def plain(text: str) -> str:
    """``text`` without its ANSI colour codes."""
    return _ANSI.sub("", text)


def failing_line(said: str, source: str, execution_count: int | None) -> tuple[int, str] | None:
    """The line of the cell that failed, as (its number from 1, its text), read from the kernel's traceback
    (``said``, plain text); None when the traceback names none (``sys.exit``, a kernel that died).

    IPython heads each frame of a cell "Cell In[K], line L" (a SyntaxError's too): the first frame of this cell
    (K is its execution count) is the line the cell itself was running. Without such frames (older IPython), the
    first "---->" arrow gives the line.
    """
    lines = source.splitlines()
    frames = list(_FRAME.finditer(said))
    for frame in frames:
        if execution_count is not None and int(frame[1]) == execution_count:
            number = int(frame[2])
            if 1 <= number <= len(lines):
                return number, lines[number - 1]
            arrow = _ARROW.search(said, frame.end())
            return (number, arrow[2] or "") if arrow and int(arrow[1]) == number else None
    if frames:  # frames of other cells only: their line numbers are not this cell's
        return None
    arrow = _ARROW.search(said)
    return (int(arrow[1]), arrow[2] or "") if arrow else None


def excerpt(source: str, line: tuple[int, str] | None, before: int = 2, after: int = 1) -> dict[str, Any]:
    """The record's ``line`` (its number, None when not known) and ``excerpt``: the failing line marked "---->"
    as IPython marks it, with the lines around it; when the line is not known, the cell's first lines."""
    lines = source.splitlines()
    if line is None:
        return {"line": None, "excerpt": lines[:8] + (["..."] if len(lines) > 8 else [])}
    number, text = line
    if not 1 <= number <= len(lines):
        return {"line": number, "excerpt": [f"----> {number} {text}"]}
    shown = range(max(1, number - before), min(len(lines), number + after) + 1)
    width = len(str(shown[-1]))
    marked = [f"{'---->' if n == number else '     '} {n:>{width}} {lines[n - 1]}".rstrip() for n in shown]
    return {"line": number, "excerpt": marked}


# Jupyter picks a kernel's ports, frees them and hands them to the kernel: another process can take one in between,
# and the kernel dies before it answers ("Address already in use"; jupyter/jupyter_client#154, nteract/papermill#511).
# No cell has run then, so a batch on a busy machine starts that kernel once more instead of failing the run.
KERNEL_DIED = "Kernel died before replying to kernel_info"
KERNEL_STARTS = 2


def execute_notebook(pm: Any, spec: dict[str, Any]) -> None:
    """``pm.execute_notebook`` for a run's spec, started again once if its kernel died before running a cell."""
    for start in range(1, KERNEL_STARTS + 1):
        try:
            pm.execute_notebook(spec["notebook"], spec["executed"], parameters=spec["parameters"], cwd=spec["cwd"],
                                progress_bar=False, execution_timeout=spec["timeout"])
            return
        except RuntimeError as exc:
            if KERNEL_DIED not in str(exc) or start == KERNEL_STARTS:
                raise
            print(_("{error}: starting the kernel again (another process may have taken one of its ports).").format(
                error=exc), file=sys.stderr, flush=True)


def _execute(spec: dict[str, Any]) -> dict[str, Any]:
    """Body of a run's runner process (``core.child``): execute the notebook, watch the kernel's memory,
    and return what happened - ``error`` and ``failed_cell`` when the run failed, ``kernel_peak_rss_mib``."""
    import papermill as pm

    outcome: dict[str, Any] = {}
    peaks: dict[int, float] = {}  # the kernel's (this process's children's) peak resident memory: core.rss, VmHWM
    halt = threading.Event()

    def sample() -> None:
        for child in psutil.Process().children():
            with contextlib.suppress(OSError, psutil.Error):
                peaks[child.pid] = max(peak_rss_mib(child.pid), peaks.get(child.pid, 0.0))

    def watch() -> None:
        while not halt.wait(0.25):
            sample()

    threading.Thread(target=watch, daemon=True).start()
    try:
        execute_notebook(pm, spec)
    except pm.PapermillExecutionError as exc:
        said = plain("\n".join(exc.traceback or []))
        cell = {"index": exc.cell_index, "execution_count": exc.exec_count, "source": exc.source[:500],
                "error": f"{exc.ename}: {exc.evalue}"}
        cell.update(excerpt(exc.source, failing_line(said, exc.source, exc.exec_count)))
        outcome.update(error=f"{cell_place(cell)}: {cell['error']}", failed_cell=cell)
        # The kernel's traceback reaches the executed notebook only: the log gets it too, with the failing cell.
        print(f"\nThe run failed in {cell_place(cell)}. The kernel's traceback:\n{said.rstrip()}",
              file=sys.stderr, flush=True)
    except Exception as exc:  # a timeout, a dead kernel, an unreadable notebook: the batch goes on
        traceback.print_exc()
        cell = _failed_cell(spec["executed"])
        error = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc) else ''}"
        outcome["error"] = f"{cell_place(cell)}: {error}" if cell else error
        if cell:
            cell.update(error=error, **excerpt(cell["source"], None))
            print(f"\nThe run stopped in {cell_place(cell)}: {error}", file=sys.stderr, flush=True)
        outcome["failed_cell"] = cell
    finally:
        sample()
        halt.set()
    outcome["kernel_peak_rss_mib"] = round(max(peaks.values()), 1) if peaks else None
    return outcome
