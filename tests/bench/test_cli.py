"""``course bench``: its JSON contract, and what it refuses."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    return subprocess.run([sys.executable, "-m", "course_utils", "bench", *args], capture_output=True, text=True,
                          env=env)


def test_cli_cnn_json_contract(capsys):
    # In this process (TensorFlow is imported here anyway); `python -m course_utils.tools.bench` is run below.
    # --no-xla: the XLA rung compiles for minutes on a CPU; notebook 05 runs it in every notebook tier
    from course_utils.tools.bench import cli

    returncode = cli.main(["cnn", "--json", "--images", "128", "--epochs", "2", "--no-xla"])
    captured = capsys.readouterr()
    assert returncode == 0, captured.err
    report = json.loads(captured.out)
    assert report["configs"][0]["name"] == "as in the blog post" and len(report["configs"]) >= 3
    assert not any(c["jit_compile"] for c in report["configs"])
    for config in report["configs"]:
        assert {"name", "device", "batch_size", "images_per_s", "epoch_s", "test_accuracy"} <= set(config)
        assert config["images_per_s"] > 0 and 0 <= config["test_accuracy"] <= 1
    assert report["speedup_best_vs_baseline"] > 0 and report["images"] == 128
    best = next(c for c in report["configs"] if c["name"] == report["best"])
    assert best["test_accuracy"] >= report["configs"][0]["test_accuracy"] - 0.005


def test_cli_dense_memory_passes_its_options_and_prints_the_report(monkeypatch, capsys):
    # the measurement itself is tested in test_dense_memory.py; here only the command's wiring
    from course_utils.tools.bench import cli

    calls = []
    report = {"benchmark": "dense-memory", "dataset": "mnist", "dataset_source": "sample", "images": 500,
              "epochs": 2, "book_peak_mib": 300.0, "course_peak_mib": 150.0, "book_s": 2.0, "course_s": 1.0,
              "memory_ratio": 2.0, "final_val_accuracy": {"book": {}, "course": {}}}
    monkeypatch.setattr(cli, "dense_memory", lambda **kw: calls.append(kw) or report)
    assert cli.main(["dense-memory", "--json", "--images", "500", "--epochs", "2", "--seed", "3"]) == 0
    assert calls == [{"dataset": "auto", "images": 500, "epochs": 2, "seed": 3}]
    assert json.loads(capsys.readouterr().out) == report
    assert cli.main(["dense-memory"]) == 0
    text = capsys.readouterr().out
    assert "300" in text and "150" in text


def test_cli_refuses_what_it_cannot_measure(capsys):
    # the two argument errors through `python -m course_utils.tools.bench` (neither imports TensorFlow) ...
    proc = run_cli("cnn", "--json", "--epochs", "1")
    assert proc.returncode == 2 and "warm-up" in proc.stderr
    proc = run_cli("dense-child", "--way", "book")  # gone: the children run through course_utils.core.child
    assert proc.returncode == 2 and "invalid choice: 'dense-child'" in proc.stderr
    # ... and the data's limit in this process: it is found after TensorFlow's import, which this process has done
    from course_utils.tools.bench import cli

    assert cli.main(["cnn", "--json", "--images", "99999999", "--epochs", "2"]) == 1
    captured = capsys.readouterr()
    assert "training images" in captured.err and captured.out == ""
