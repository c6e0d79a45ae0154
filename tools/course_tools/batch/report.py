"""The report of a batch run: ``report.md``, a self-contained ``report.html`` (its charts inside; the Markdown links
the same PNGs in ``charts/``) and ``results.json`` (docs/instructors.md, "The report", says what each part holds)."""

from __future__ import annotations

import html
import io
import json
import statistics
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from course_tools import _
from course_tools.batch.grid import slug
from course_tools.report_page import ReportPage
from course_utils.core.files import write_json_atomic
from course_utils.core.i18n import padded
from course_utils.results import data_summary

HIDDEN_RESULTS = {"checkpoint_passed", "checkpoint_failed"}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def flat_results(results: Mapping[str, Any], names: Sequence[str] | None = None) -> dict[str, Any]:
    """Results as label -> value, one value per column (``epoch_s (median)``, ``matmul_ms[/CPU:0]``)."""
    flat: dict[str, Any] = {}
    for name in names if names is not None else [n for n in results if n not in HIDDEN_RESULTS]:
        flat.update(_flatten(name, results.get(name)))
    return flat


def _flatten(label: str, value: Any) -> dict[str, Any]:
    if isinstance(value, list) and value and all(_is_number(v) for v in value):
        return {f"{label} (median)": statistics.median(value)}
    if isinstance(value, dict) and value:
        flat: dict[str, Any] = {}
        for key, item in value.items():
            flat.update(_flatten(f"{label}[{key}]", item))
        return flat
    return {label: value}


def key_results(runs: Sequence[Mapping[str, Any]], wanted: Sequence[str] | None = None) -> list[str]:
    """Column labels of the results to compare: of ``wanted``, else of every result that is a number in some run."""
    labels: dict[str, None] = {}
    for run in runs:
        for label, value in flat_results(run.get("results", {}), wanted).items():
            if wanted or _is_number(value):
                labels[label] = None
    return list(labels)


def comparisons(runs: Sequence[Mapping[str, Any]], wanted: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Per notebook run at two or more grid points: the varying parameters against the key results."""
    found = []
    for notebook in dict.fromkeys(r["notebook"] for r in runs):
        group = [r for r in runs if r["notebook"] == notebook]
        chosen = wanted or next((list(r["key_results"]) for r in group if r.get("key_results")), None)  # else: all
        names = list(dict.fromkeys(k for r in group for k in r["parameters"]))
        varying = [n for n in names if len({json.dumps(r["parameters"].get(n)) for r in group}) > 1]
        if len(group) < 2 or not varying:
            continue
        results = key_results(group, chosen)
        on_gpu = any(r.get("peak_gpu_mib") is not None for r in group)
        rows = []
        for r in group:
            row: dict[str, Any] = {n: r["parameters"].get(n) for n in varying}
            row["status"] = r["status"]
            flat = flat_results(r.get("results", {}), chosen)
            for label in results:
                row[label] = flat.get(label) if _is_number(flat.get(label)) else None
            if on_gpu:
                row["peak GPU memory (MiB)"] = r.get("peak_gpu_mib")
            row["peak host memory (MiB)"] = r.get("peak_rss_mib")
            row["time (s)"] = r["duration_s"]
            rows.append(row)
        labels = [c for c in dict.fromkeys(k for row in rows for k in row) if c not in varying and c != "status"]
        found.append({"notebook": notebook, "varying": varying, "columns": labels, "rows": rows})
    return found


def charts(comparison: Mapping[str, Any]) -> list[tuple[str, bytes]]:
    """One PNG per key result and peak memory: against the first varying numeric parameter, a line per other
    combination of the varying parameters (ok runs only)."""
    from matplotlib.figure import Figure

    rows = [r for r in comparison["rows"] if r["status"] == "ok"]
    varying = comparison["varying"]
    numeric = [n for n in varying if all(_is_number(r[n]) for r in rows)]
    x_name = (numeric or varying)[0]
    others = [n for n in varying if n != x_name]
    made = []
    for column in comparison["columns"]:
        points = [r for r in rows if _is_number(r.get(column))]
        if column == "time (s)" or not points:  # a run's wall time includes starting its kernel: epoch times say more
            continue
        fig = Figure(figsize=(5.0, 3.2), dpi=100, layout="constrained")
        ax = fig.add_subplot()
        series = dict.fromkeys(tuple(json.dumps(r[n]) for n in others) for r in points)
        for key in series:
            line = [r for r in points if tuple(json.dumps(r[n]) for n in others) == key]
            xs = [r[x_name] if x_name in numeric else str(r[x_name]) for r in line]
            label = ", ".join(f"{n}={r}" for n, r in zip(others, map(json.loads, key), strict=True)) or None
            ax.plot(xs, [r[column] for r in line], "o-", label=label)
        xs_all = [r[x_name] for r in points]
        if x_name in numeric and min(xs_all) > 0 and max(xs_all) / min(xs_all) >= 8:
            ax.set_xscale("log", base=2)
            ax.set_xticks(sorted(set(xs_all)), [f"{v:g}" for v in sorted(set(xs_all))])
        ax.set_xlabel(x_name)
        ax.set_ylabel(column)
        ax.set_title(f"{comparison['notebook']}: {column}", fontsize=10)
        ax.grid(alpha=0.3)
        if others:
            ax.legend(fontsize=8)
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png")
        made.append((column, buffer.getvalue()))
    return made


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return str(value)


def _scalars(results: Mapping[str, Any], names: Sequence[str] | None = None) -> str:
    shown = flat_results(results, names or None)
    return ", ".join(f"{k}={_text(v)}" for k, v in shown.items() if isinstance(v, (int, float, str, bool)))


def _parameters(run: Mapping[str, Any]) -> str:
    """The runs table's *parameters* (docs/instructors.md, "The report")."""
    parts = [", ".join(f"{k}={_text(v)}" for k, v in run["parameters"].items())] if run["parameters"] else []
    capped = {k: v for k, v in (run.get("smoke_changes") or {}).items() if k not in run["parameters"]}
    if capped:
        shown = (f"{k} {'None' if old is None else _text(old)} -> {_text(new)}" for k, (old, new) in capped.items())
        parts.append("smoke: " + ", ".join(shown))
    return "; ".join(parts) or "as in the notebook"


def cell_place(cell: Mapping[str, Any]) -> str:
    """Where a run failed, as ``cell 4 of the executed notebook (execution count [3]), line 2``: the cell's position
    counts every cell from 1 (markdown too); the execution count is the [3] JupyterLab shows left of the cell."""
    place = f"cell {cell['index'] + 1} of the executed notebook" if cell.get("index") is not None else "a cell"
    count = cell.get("execution_count")
    place += f" (execution count [{count}])" if count else " (no execution count)"
    return place + (f", line {cell['line']}" if cell.get("line") else "")


CELL_NUMBERS = ("Cell numbers count every cell of the executed notebook from 1, markdown cells and the parameters "
                "cell that papermill adds too. The execution count [K] is the number JupyterLab shows left of a cell.")


def failure_excerpt(run: Mapping[str, Any]) -> tuple[str, list[str]]:
    """A failed run's failing cell and the lines to show: the failing line marked "---->" with the lines around it,
    then the error; when the line is not known (a dead kernel, a timeout), the cell's first lines."""
    cell = run.get("failed_cell") or {}
    if not cell:
        return "", []
    lines = list(cell["excerpt"])
    error = str(cell.get("error") or "")
    first = error.strip().splitlines()[:1]
    if first:
        lines += ["", first[0][:300] + (" ..." if len(first[0]) > 300 or "\n" in error.strip() else "")]
    known = ":" if cell.get("line") else ". The failing line is not known; the cell begins:"
    return f"In {cell_place(cell)}{known}", lines


def _checkpoint(run: Mapping[str, Any]) -> str:
    """The runs table's *checkpoint* (docs/instructors.md, "The report")."""
    results = run.get("results") or {}
    if "checkpoint_passed" not in results:
        return "not reached" if run["status"] != "ok" else "none"
    if results["checkpoint_passed"]:
        return "passed"
    return "failed: " + "; ".join(str(c) for c in results.get("checkpoint_failed") or [])


def _rel(path: str, out: Path) -> str:
    try:
        return Path(path).relative_to(out).as_posix()
    except ValueError:
        return path


_ONEDNN = {True: "oneDNN on", False: "oneDNN off"}  # which CPU kernels ran (core.tf_setup.onednn_on)


def _device(run: Mapping[str, Any]) -> str:
    """Where the run computed: ``GPU: NVIDIA A100 (driver 550.54), peak 1,536 MiB`` or ``CPU (AMD EPYC, oneDNN on)``."""
    environment = run.get("environment") or {}
    gpu = environment.get("gpu") or {}
    if gpu or run.get("peak_gpu_mib") is not None or environment.get("device_kind") == "GPU":
        text = "GPU: " + str(gpu.get("name") or run.get("device") or "a GPU")
        if gpu.get("driver"):
            text += f" (driver {gpu['driver']})"
        if run.get("peak_gpu_mib") is not None:
            text += f", peak {run['peak_gpu_mib']:,.0f} MiB"
        return text
    if environment.get("device_kind") == "CPU" or str(run.get("device") or "").upper().endswith("CPU:0"):
        about = [environment.get("device_description"), _ONEDNN.get(environment.get("onednn"))]
        about = [a for a in about if a]
        return f"CPU ({', '.join(about)})" if about else "CPU"
    return _text(run.get("device"))


RUN_CELLS: dict[str, Callable[[Mapping[str, Any]], str]] = {  # the runs table (after "#"): a column, its cell
    "notebook": lambda r: r["notebook"],
    "mode": lambda r: "smoke" if r.get("smoke") else "full",
    "parameters": _parameters,
    "status": lambda r: f"failed: {r['error']}" if r["status"] != "ok" else "ok",
    "checkpoint": _checkpoint,
    "time (s)": lambda r: _text(r["duration_s"]),
    "device": _device,
    "peak host memory (MiB)": lambda r: _text(r["peak_rss_mib"]),
    "TensorFlow": lambda r: _text(r["tensorflow"]),
    "data": lambda r: data_summary(r.get("environment") or {}),
    "key results": lambda r: _scalars(r["results"], r.get("key_results")),
}


def meanings(runs: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, str]]:
    """Per notebook, the key results it declares with what each means (those it says nothing about left out)."""
    found: dict[str, dict[str, str]] = {}
    for run in runs:
        said = run.get("key_meanings") or {}
        described = {name: said[name] for name in run.get("key_results") or [] if said.get(name)}
        if described:
            found.setdefault(run["notebook"], described)
    return found


def _summary(runs: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]) -> str:
    failed = sum(r["status"] != "ok" for r in runs)
    planned = meta.get("planned_runs", len(runs))
    parts = [f"{len(runs)} of {planned} run(s), {len(runs) - failed} ok, {failed} failed"]
    if meta.get("interrupted"):
        parts.append("interrupted")
    parts.append("smoke mode (short runs)" if meta.get("smoke") else "full runs")
    if meta.get("duration_s") is not None:
        parts.append(f"{meta['duration_s']} s in all, {meta.get('jobs', 1)} at a time")
    return "; ".join(parts) + "."


def _environment(meta: Mapping[str, Any]) -> str:
    versions = ", ".join(f"{k} {v}" for k, v in meta.get("versions", {}).items() if v)
    cores = f"{meta['cores']} CPU core(s)" if meta.get("cores") else ""
    return "; ".join(p for p in (meta.get("platform"), cores, versions) if p) or "not recorded"


def render(runs, meta, tables, charts_of: Mapping[str, list[tuple[str, str, bytes]]], out: Path) -> ReportPage:
    """The report: the summary, the runs, the failures, the comparisons with their charts (column, file, PNG)."""
    page = ReportPage(meta.get("title") or "Course run report")
    page.text(_summary(runs, meta))
    started = (f"Started {meta['started']}, output" if meta.get("started") else "Output") + f" in `{out}`."
    page.text(f"Command: `{meta.get('command', '')}`  \n{started}", meta=True)
    page.heading("Runs")
    page.table(["#", *RUN_CELLS], [[str(i), *(cell(r) for cell in RUN_CELLS.values())] for i, r in enumerate(runs, 1)],
               ["failed" if r["status"] != "ok" else "" for r in runs])
    for notebook, described in meanings(runs).items():
        page.items(f"Key results of {notebook}:", described)
    failed = [r for r in runs if r["status"] != "ok"]
    if failed:
        page.heading("Failures")
        for r in failed:
            error, executed, log = " ".join(str(r["error"]).split()), _rel(r["executed"], out), _rel(r["log"], out)
            page.raw([f"- **{r['name']}**: {error}; executed notebook [{executed}]({executed}), log `{log}`"],
                     f"<p><b>{html.escape(r['name'])}</b>: {html.escape(r['error'])}<br>executed notebook "
                     f"<a href='{html.escape(executed)}'>{html.escape(executed)}</a>, log <code>"
                     f"{html.escape(log)}</code></p>")  # the Markdown's error on one line: it is a list item
            heading, shown = failure_excerpt(r)
            if heading:
                page.code(heading, shown)
        page.md.append("")
        page.text(CELL_NUMBERS, meta=True)
    for table in tables:
        page.heading(f"Comparison: {table['notebook']}")
        header = table["varying"] + ["status"] + table["columns"]
        page.table(header, [[_text(row.get(c)) for c in header] for row in table["rows"]],
                   ["failed" if row["status"] != "ok" else "" for row in table["rows"]])
        for column, path, png in charts_of.get(table["notebook"], []):
            page.chart(f"{table['notebook']}: {column}", path, png)
        page.md.append("")
    page.heading("Environment")
    page.text(_environment(meta))
    return page


def write_report(runs: Sequence[Mapping[str, Any]], out: Path, meta: Mapping[str, Any]) -> dict[str, Path]:
    """Write results.json, report.md (+ charts/*.png) and report.html into ``out``; return their paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tables = comparisons(runs, meta.get("key_results"))
    charts_of: dict[str, list[tuple[str, str, bytes]]] = {}
    for table in tables:
        for column, png in charts(table):
            path = out / "charts" / f"{slug(table['notebook'])}__{slug(column)}.png"
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(png)
            charts_of.setdefault(table["notebook"], []).append((column, path.relative_to(out).as_posix(), png))
    paths = {"json": out / "results.json", "md": out / "report.md", "html": out / "report.html"}
    write_json_atomic(paths["json"], {"meta": dict(meta), "runs": list(runs), "comparisons": tables})
    render(runs, meta, tables, charts_of, out).write(paths["md"], paths["html"])
    return paths


def say_written(paths: Mapping[str, Path], runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """Print where the report (or a shard's record) is, and the failed runs (on standard error); their names."""
    labels = {"md": _("Report:"), "html": _("Report (HTML):"), "json": _("All records:"), "shard": _("Shard record:")}
    for key, label in labels.items():
        if key in paths:
            print(f"{padded(label, 19)} {paths[key]}")
    failed = [r["name"] for r in runs if r.get("status") != "ok"]
    if failed:
        print(_("{failed} of {total} run(s) failed: {names}").format(
            failed=len(failed), total=len(runs), names=", ".join(failed)), file=sys.stderr)
    return failed
