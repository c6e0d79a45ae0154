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


def test_cli_dense_memory_passes_its_options_and_prints_the_report(monkeypatch, capsys):
    # the measurement itself is tested in test_dense_memory.py; here only the command's wiring
    from course_tools.bench import cli

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


def test_cli_refuses_what_it_cannot_measure():
    # argument errors, through `python -m course_utils` (neither imports TensorFlow)
    proc = run_cli("dense-memory", "--json", "--epochs", "0")
    assert proc.returncode == 2 and "--epochs and --images must be positive" in proc.stderr
    proc = run_cli("dense-memory", "--json", "--images", "1")  # nothing left to validate on
    assert proc.returncode == 2 and "--images must be at least 2" in proc.stderr and not proc.stdout
    proc = run_cli("cnn")  # gone: notebook 05 measures its speed ladder itself
    assert proc.returncode == 2 and "invalid choice: 'cnn'" in proc.stderr
