"""The batch report: tables of runs, comparisons across grid points, charts, one self-contained HTML file."""

from __future__ import annotations

import json
import re

from course_tools.batch.report import charts, comparisons, flat_results, key_results, write_report


def run(name, notebook="05_cnn", status="ok", error=None, **parameters):
    size = parameters.get("BATCH_SIZE", 1)
    return {
        "name": name,
        "notebook": notebook,
        "status": status,
        "error": error,
        "parameters": parameters,
        "duration_s": 10.0 + size / 100,
        "device": "/CPU:0",
        "tensorflow": "2.21.0",
        "peak_rss_mib": 500.0 + size,
        "results": {}
        if status != "ok"
        else {"test_accuracy": 0.9 + size / 10_000, "epoch_s": [3.0, 60 / size, 50 / size], "checkpoint_passed": True},
        "executed": f"/out/executed/{name}.ipynb",
        "log": f"/out/logs/{name}.log",
        "failed_cell": {"index": 4, "execution_count": 3, "excerpt": ["model.fit(x)"]} if status != "ok" else None,
    }


GRID = [run(f"05_cnn__BATCH_SIZE-{b}", BATCH_SIZE=b, EPOCHS=1) for b in (32, 128, 512)]


def test_lists_of_numbers_are_compared_by_their_median():
    results = {"epoch_s": [3.0, 1.0, 2.0], "acc": 0.5, "ms": {"/CPU:0": 2.5, "/GPU:0": [1, 2, 3]}, "ok": True}
    assert flat_results(results) == {
        "epoch_s (median)": 2.0,
        "acc": 0.5,
        "ms[/CPU:0]": 2.5,
        "ms[/GPU:0] (median)": 2,
        "ok": True,
    }
    assert flat_results(results, ["acc", "missing"]) == {"acc": 0.5, "missing": None}
    assert key_results(GRID) == ["test_accuracy", "epoch_s (median)"]  # not the checkpoint flag
    assert key_results(GRID, ["epoch_s"]) == ["epoch_s (median)"]


def test_a_comparison_per_notebook_with_varying_parameters():
    single = run("02_verify_gpu", notebook="02_verify_gpu")
    tables = comparisons([*GRID, single])
    assert len(tables) == 1, "a notebook run once has nothing to compare"
    table = tables[0]
    assert table["notebook"] == "05_cnn" and table["varying"] == ["BATCH_SIZE"], "EPOCHS does not vary"
    assert table["columns"] == ["test_accuracy", "epoch_s (median)", "peak host memory (MiB)", "time (s)"]
    assert [r["BATCH_SIZE"] for r in table["rows"]] == [32, 128, 512]
    assert [r["epoch_s (median)"] for r in table["rows"]] == [60 / 32, 60 / 128, 60 / 512]


def test_charts_are_pngs_for_numeric_and_categorical_axes():
    table = comparisons(GRID, ["test_accuracy"])[0]
    made = charts(table)
    assert [name for name, _ in made] == ["test_accuracy", "peak host memory (MiB)"]
    assert all(png.startswith(b"\x89PNG") for _, png in made)
    two_way = [run(f"r{d}{b}", BATCH_SIZE=b, DEVICE=d) for d in ("cpu", "gpu") for b in (32, 64)]
    assert len(charts(comparisons(two_way)[0])) == 3  # x: BATCH_SIZE, a line per DEVICE
    by_device = [run(f"r{d}", DEVICE=d) for d in ("cpu", "gpu")]
    assert charts(comparisons(by_device)[0])  # strings on the x axis


def test_the_report_files_agree_with_the_records(tmp_path):
    failed = run("05_cnn__BATCH_SIZE-4096", status="failed", error="cell In [3]: ResourceExhaustedError: OOM | x")
    failed["parameters"] = {"BATCH_SIZE": 4096, "EPOCHS": 1}
    runs = [*GRID, failed]
    meta = {"title": "Batch sizes", "command": "course run --grid g.yaml", "planned_runs": 4}
    paths = write_report(runs, tmp_path, meta)
    data = json.loads(paths["json"].read_text())
    assert data["runs"] == runs and data["meta"]["title"] == "Batch sizes"
    assert [r["BATCH_SIZE"] for r in data["comparisons"][0]["rows"]] == [32, 128, 512, 4096]

    md = paths["md"].read_text()
    assert md.startswith("# Batch sizes\n") and "4 of 4 run(s), 3 ok, 1 failed" in md
    first = "| 1 | 05_cnn | full | BATCH_SIZE=32, EPOCHS=1 | ok | passed | 10.32 | CPU | 532 | 2.21.0 |"
    assert first in md
    assert "| failed: cell In [3]: ResourceExhaustedError: OOM \\| x | not reached |" in md, "a | is no border"
    assert "test_accuracy=0.9032, epoch_s (median)=1.875" in md
    assert "## Failures" in md and "model.fit(x)" in md
    assert "## Comparison: 05_cnn" in md and "| 128 | ok | 0.9128 | 0.4688 |" in md
    for link in re.findall(r"!\[[^]]*\]\(([^)]+)\)", md):
        assert (tmp_path / link).read_bytes().startswith(b"\x89PNG")

    page = paths["html"].read_text()
    assert page.startswith("<!doctype html>") and "<h1>Batch sizes</h1>" in page
    assert page.count('<tr class="failed">') == 2  # in the runs table and in the comparison
    sources = re.findall(r"src='([^']*)'", page)
    assert len(sources) == 3 and all(s.startswith("data:image/png;base64,") for s in sources)
    assert "OOM | x" in page and "<script" not in page


def test_the_runs_table_says_where_each_runs_data_came_from(tmp_path):
    home = run("05_cnn__home", BATCH_SIZE=32)
    home["environment"] = {"data": {"mnist": {"source": "bundled-sample", "train_images": 8000,
                                              "test_images": 2000, "train_images_used": 2000}}}
    lab = run("05_cnn__lab", BATCH_SIZE=32)
    lab["environment"] = {"data": {"mnist": {"source": "keras-cache", "train_images": 60000,
                                             "test_images": 10000, "train_images_used": 60000}}}
    paths = write_report([home, lab, run("02_verify_gpu", notebook="02_verify_gpu")], tmp_path, {})
    md = paths["md"].read_text()
    assert "| TensorFlow | data | key results |" in md
    assert "| 2.21.0 | mnist: bundled-sample, 8,000 + 2,000 (2,000 used) |" in md
    assert "| 2.21.0 | mnist: keras-cache, 60,000 + 10,000 |" in md
    assert "| 2.21.0 |  |" in md, "a run that loaded no data (or a record from before) has an empty cell"


def test_a_single_run_report_has_no_comparison(tmp_path):
    paths = write_report([run("02_verify_gpu", notebook="02_verify_gpu")], tmp_path, {})
    assert "Comparison" not in paths["md"].read_text() and "<img" not in paths["html"].read_text()
    assert json.loads(paths["json"].read_text())["comparisons"] == []


def test_a_run_shows_the_key_results_its_notebook_declares(tmp_path):
    declared = [dict(r, key_results=["test_accuracy"]) for r in GRID]
    table = comparisons(declared)[0]
    assert table["columns"] == ["test_accuracy", "peak host memory (MiB)", "time (s)"], "epoch_s is not declared"
    assert comparisons(declared, ["epoch_s"])[0]["columns"][0] == "epoch_s (median)", "the grid's results win"
    write_report(declared, tmp_path, {"title": "t"})  # the runs table shows the declared ones: the course-run tier
    everything = json.loads((tmp_path / "results.json").read_text())["runs"][0]["results"]
    assert "epoch_s" in everything, "results.json keeps every result"


def test_runs_on_a_gpu_compare_their_peak_gpu_memory():
    on_gpu = [
        dict(r, device="/GPU:0", peak_gpu_mib=1000.0 + i,
             environment={"gpu": {"name": "NVIDIA GeForce RTX 3060", "driver": "560.94", "memory_mib": 12288}})
        for i, r in enumerate(GRID)
    ]
    table = comparisons(on_gpu)[0]
    assert table["columns"][-3:] == ["peak GPU memory (MiB)", "peak host memory (MiB)", "time (s)"]
    assert [row["peak GPU memory (MiB)"] for row in table["rows"]] == [1000.0, 1001.0, 1002.0]


def test_each_column_of_the_runs_table_says_something_of_its_own(tmp_path):
    lowered = {"IMAGES": [None, 2000], "BATCH_SIZE": [128, 64]}
    gpu = dict(run("05_cnn", BATCH_SIZE=64), smoke=True, smoke_changes=lowered,
               peak_gpu_mib=1536.0, key_results=["test_accuracy", "epoch_s"],
               key_meanings={"test_accuracy": "test accuracy of the `fixed` model", "epoch_s": ""},
               environment={"device_kind": "GPU", "gpu": {"name": "NVIDIA A100", "driver": "550.54.15"}})
    cpu = dict(run("07_beyond_one_gpu", notebook="07_beyond_one_gpu"), smoke=True, smoke_changes={"EPOCHS": [5, 2]},
               environment={"device_kind": "CPU", "device_description": "AMD EPYC"})
    cpu["results"] = {"checkpoint_passed": False, "checkpoint_failed": ["the workers stayed in step"]}
    laptop = dict(run("03_memory", notebook="03_memory"), environment={"device_kind": "CPU", "onednn": False})
    paths = write_report([gpu, cpu, laptop], tmp_path, {"smoke": True})
    md = paths["md"].read_text()
    assert "| # | notebook | mode | parameters | status | checkpoint | time (s) | device |" in md
    assert "| 1 | 05_cnn | smoke | BATCH_SIZE=64; smoke: IMAGES None -> 2000 |" in md, "a set parameter is no cap"
    assert "| GPU: NVIDIA A100 (driver 550.54.15), peak 1,536 MiB |" in md
    assert "| 2 | 07_beyond_one_gpu | smoke | smoke: EPOCHS 5 -> 2 | ok | failed: the workers stayed in step |" in md
    assert "| CPU (AMD EPYC) |" in md
    assert "| CPU (oneDNN off) |" in md, "which CPU kernels ran: speed and memory statistics depend on it"
    assert "Key results of 05_cnn:\n\n- `test_accuracy`: test accuracy of the `fixed` model\n\n" in md
    assert "epoch_s`:" not in md, "a result it says nothing about has no line"
    page = paths["html"].read_text()
    assert "<li><code>test_accuracy</code>: test accuracy of the `fixed` model</li>" in page


def test_html_cells_show_code_spans_as_code_and_escape_the_rest():
    from course_tools.report_page import html_text

    assert html_text("run `pip install \"x<2\"` <b>now</b>") == (
        "run <code>pip install &quot;x&lt;2&quot;</code> &lt;b&gt;now&lt;/b&gt;")
    assert html_text("a lone ` stays") == "a lone ` stays"


def test_a_failure_with_a_multi_line_error_stays_in_its_list_item(tmp_path):
    failed = run("r", status="failed", error="cell In [3]: InternalError: first\nsecond")
    failed["failed_cell"] = {"index": 3, "execution_count": 3, "source": "model.fit(x)", "line": 1,
                             "excerpt": ["----> 1 model.fit(x)"], "error": "InternalError: first\nsecond"}
    md = write_report([failed], tmp_path, {})["md"].read_text(encoding="utf-8")
    assert "- **r**: cell In [3]: InternalError: first second; executed notebook" in md
    assert "  In cell 4 of the executed notebook (execution count [3]), line 1:" in md
    assert "  ----> 1 model.fit(x)\n  \n  InternalError: first ...\n  ```" in md, "the error's first line, cut"
