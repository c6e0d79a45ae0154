"""The report of a batch run: ``report.md``, a self-contained ``report.html`` and ``results.json``.

- **Runs**: one row per run - notebook, smoke or full, the parameters the batch set and those smoke mode
  lowered, status (a failure names its cell and error), the checkpoint (passed, failed with what was not seen,
  or not reached), time, device (the CPU, or the GPU with its driver and peak GPU memory), peak host memory,
  TensorFlow version, data (each dataset the notebook loaded: its source and number of images, from the
  record's ``environment["data"]``), key results - the few the notebook declares (its lesson file's
  ``KEY_RESULTS``; every result stays in ``results.json``), with what each means under the table. Two
  machines' reports then show whether their runs used the same GPU and the same data.
- **Failures**: per failed run, its error, its executed notebook and log, and where it failed: the cell (its
  position in the executed notebook and its execution count [K], as JupyterLab shows it) and the failing line,
  marked "---->" among its neighbours; when no traceback names a line (a dead kernel, a timeout), the cell's first
  lines.
- **Comparisons**: for each notebook run at several grid points, a table of the
  parameters that vary against its key results, and a chart per result (x: the first
  varying numeric parameter; one line per combination of the others). Key results are
  the grid file's ``results``, else those the notebook declares, else every numeric result;
  a list of numbers (``epoch_s``) is shown as its median, a dict one column per key
  (``matmul_median_ms[/device:CPU:0]``).
- ``results.json``: ``{"meta": {...}, "runs": [...], "comparisons": [...]}`` - every
  recorded field of every run, the settings of the batch and the comparison tables.

The HTML embeds its charts as base64 PNGs; the Markdown links the same PNGs in ``charts/``.
"""

from __future__ import annotations

import base64
import html
import io
import json
import re
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from course_utils.results import data_summary

HIDDEN_RESULTS = {"checkpoint_passed", "checkpoint_failed"}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def flat_results(results: Mapping[str, Any], names: Sequence[str] | None = None) -> dict[str, Any]:
    """Results as label -> value, one value per column: a list of numbers becomes its median
    (``epoch_s (median)``), a dict one entry per key (``matmul_ms[/CPU:0]``); ``names`` picks results."""
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


def declared(runs: Sequence[Mapping[str, Any]]) -> list[str] | None:
    """The key results the notebook declared (the first run that recorded any), else None: every number."""
    return next((list(r["key_results"]) for r in runs if r.get("key_results")), None)


def comparisons(runs: Sequence[Mapping[str, Any]], wanted: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Per notebook run at two or more grid points: the varying parameters against the key results
    (``wanted``, else the notebook's declared ones)."""
    found = []
    for notebook in dict.fromkeys(r["notebook"] for r in runs):
        group = [r for r in runs if r["notebook"] == notebook]
        chosen = wanted or declared(group)
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
        if column == "time (s)":  # a run's wall time includes starting its kernel: epoch times say more
            continue
        if not points:
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


def _params(parameters: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={_text(v)}" for k, v in parameters.items())


def _parameters(run: Mapping[str, Any]) -> str:
    """The parameters the batch set (``EPOCHS=1``), then those smoke mode lowered (``smoke: IMAGES None -> 2000``);
    "as in the notebook" when neither."""
    parts = [_params(run["parameters"])] if run["parameters"] else []
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
    if "excerpt" in cell:
        lines = list(cell["excerpt"])
    else:  # a record from before the excerpt was recorded
        lines = (cell.get("source") or "").splitlines()[:8]
    error = str(cell.get("error") or "")
    first = error.strip().splitlines()[:1]
    if first:
        lines += ["", first[0][:300] + (" ..." if len(first[0]) > 300 or "\n" in error.strip() else "")]
    known = ":" if cell.get("line") else ". The failing line is not known; the cell begins:"
    return f"In {cell_place(cell)}{known}", lines


def _status(run: Mapping[str, Any]) -> str:
    return f"failed: {run['error']}" if run["status"] != "ok" else "ok"


def _checkpoint(run: Mapping[str, Any]) -> str:
    """``passed``, ``failed: <what was not seen>``, ``not reached`` (the run stopped before it) or ``none`` (a
    notebook of one's own may have no checkpoint)."""
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


RUN_COLUMNS = [
    "#",
    "notebook",
    "mode",
    "parameters",
    "status",
    "checkpoint",
    "time (s)",
    "device",
    "peak host memory (MiB)",
    "TensorFlow",
    "data",
    "key results",
]


def _run_row(i: int, run: Mapping[str, Any]) -> list[str]:
    return [
        str(i),
        run["notebook"],
        "smoke" if run.get("smoke") else "full",
        _parameters(run),
        _status(run),
        _checkpoint(run),
        _text(run["duration_s"]),
        _device(run),
        _text(run["peak_rss_mib"]),
        _text(run["tensorflow"]),
        data_summary(run.get("environment") or {}),
        _scalars(run["results"], run.get("key_results")),
    ]


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


def _started(meta: Mapping[str, Any], out: Path) -> str:
    return (f"Started {meta['started']}, output" if meta.get("started") else "Output") + f" in `{out}`."


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return lines


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", text).strip("_")


def render_markdown(runs, meta, tables, chart_files, out: Path) -> str:
    """report.md: the summary, the runs, the failures, the comparisons with their charts."""
    lines = [f"# {meta.get('title') or 'Course run report'}", "", _summary(runs, meta), ""]
    lines += [f"Command: `{meta.get('command', '')}`  ", _started(meta, out), ""]
    lines += ["## Runs", ""] + _md_table(RUN_COLUMNS, [_run_row(i, r) for i, r in enumerate(runs, 1)]) + [""]
    for notebook, described in meanings(runs).items():
        lines += [f"Key results of {notebook}:", ""] + [f"- `{k}`: {v}" for k, v in described.items()] + [""]
    failed = [r for r in runs if r["status"] != "ok"]
    if failed:
        lines += ["## Failures", ""]
        for r in failed:
            error = " ".join(str(r["error"]).split())  # one line: a multi-line error would end the list item
            lines.append(
                f"- **{r['name']}**: {error}; executed notebook [{_rel(r['executed'], out)}]"
                f"({_rel(r['executed'], out)}), log `{_rel(r['log'], out)}`"
            )
            heading, shown = failure_excerpt(r)
            if heading:
                lines += ["", f"  {heading}", "", "  ```text"] + [f"  {x}" for x in shown] + ["  ```"]
        lines += ["", CELL_NUMBERS, ""]
    for table in tables:
        lines += [f"## Comparison: {table['notebook']}", ""]
        header = table["varying"] + ["status"] + table["columns"]
        lines += _md_table(header, [[_text(row.get(c)) for c in header] for row in table["rows"]]) + [""]
        lines += [f"![{table['notebook']}: {c}]({path})" for c, path in chart_files.get(table["notebook"], [])]
        lines.append("")
    lines += ["## Environment", "", _environment(meta), ""]
    return "\n".join(lines)


_CSS = """body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1200px;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:13px}th,td{border:1px solid #ccc;padding:4px 8px;
text-align:left;vertical-align:top}th{background:#f3f3f3}tr.failed td{background:#fde8e8}
pre{background:#f6f6f6;padding:.5em;overflow-x:auto}img{margin:.5em 1em .5em 0;border:1px solid #eee}
.meta{color:#555}code{background:#f3f3f3;padding:0 .2em}"""


def html_text(text: str) -> str:
    """Text for HTML: escaped, and its `code` spans (the Markdown that messages and fixes use) as <code>."""
    return re.sub(r"`([^`\n]+)`", r"<code>\1</code>", html.escape(text))


def _html_table(header: Sequence[str], rows: Sequence[Sequence[str]], classes: Sequence[str] = ()) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = []
    for i, row in enumerate(rows):
        cls = f' class="{classes[i]}"' if i < len(classes) and classes[i] else ""
        body.append(f"<tr{cls}>" + "".join(f"<td>{html_text(c)}</td>" for c in row) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def render_html(runs, meta, tables, chart_pngs, out: Path) -> str:
    """report.html: the same content as report.md, one file, charts embedded."""
    esc = html.escape
    title = meta.get("title") or "Course run report"
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{esc(title)}</title>",
        f"<style>{_CSS}</style></head><body><h1>{esc(title)}</h1>",
        f"<p>{esc(_summary(runs, meta))}</p><p class='meta'>Command: <code>{esc(meta.get('command', ''))}"
        f"</code><br>{esc(_started(meta, out)).replace('`', '')}</p>",
        "<h2>Runs</h2>",
    ]
    classes = ["failed" if r["status"] != "ok" else "" for r in runs]
    parts.append(_html_table(RUN_COLUMNS, [_run_row(i, r) for i, r in enumerate(runs, 1)], classes))
    for notebook, described in meanings(runs).items():
        items = "".join(f"<li><code>{esc(k)}</code>: {esc(v)}</li>" for k, v in described.items())
        parts.append(f"<p>Key results of {esc(notebook)}:</p><ul>{items}</ul>")
    failed = [r for r in runs if r["status"] != "ok"]
    if failed:
        parts.append("<h2>Failures</h2>")
        for r in failed:
            link = _rel(r["executed"], out)
            parts.append(
                f"<p><b>{esc(r['name'])}</b>: {esc(r['error'])}<br>executed notebook "
                f"<a href='{esc(link)}'>{esc(link)}</a>, log <code>{esc(_rel(r['log'], out))}</code></p>"
            )
            heading, shown = failure_excerpt(r)
            if heading:
                parts.append(f"<p>{esc(heading)}</p><pre>{esc(chr(10).join(shown))}</pre>")
        parts.append(f"<p class='meta'>{esc(CELL_NUMBERS)}</p>")
    for table in tables:
        parts.append(f"<h2>Comparison: {esc(table['notebook'])}</h2>")
        header = table["varying"] + ["status"] + table["columns"]
        classes = ["failed" if row["status"] != "ok" else "" for row in table["rows"]]
        parts.append(_html_table(header, [[_text(row.get(c)) for c in header] for row in table["rows"]], classes))
        for column, png in chart_pngs.get(table["notebook"], []):
            data = base64.b64encode(png).decode("ascii")
            parts.append(f"<img alt='{esc(table['notebook'])}: {esc(column)}' src='data:image/png;base64,{data}'>")
    parts.append(f"<h2>Environment</h2><p>{esc(_environment(meta))}</p></body></html>")
    return "\n".join(parts) + "\n"


def write_report(runs: Sequence[Mapping[str, Any]], out: Path, meta: Mapping[str, Any]) -> dict[str, Path]:
    """Write results.json, report.md (+ charts/*.png) and report.html into ``out``; return their paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tables = comparisons(runs, meta.get("key_results"))
    chart_pngs = {t["notebook"]: charts(t) for t in tables}
    chart_files: dict[str, list[tuple[str, str]]] = {}
    for notebook, pngs in chart_pngs.items():
        for column, png in pngs:
            path = out / "charts" / f"{_slug(notebook)}__{_slug(column)}.png"
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(png)
            chart_files.setdefault(notebook, []).append((column, path.relative_to(out).as_posix()))
    paths = {"json": out / "results.json", "md": out / "report.md", "html": out / "report.html"}
    data = {"meta": dict(meta), "runs": list(runs), "comparisons": tables}
    paths["json"].write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    paths["md"].write_text(render_markdown(runs, meta, tables, chart_files, out), encoding="utf-8")
    paths["html"].write_text(render_html(runs, meta, tables, chart_pngs, out), encoding="utf-8")
    return paths
