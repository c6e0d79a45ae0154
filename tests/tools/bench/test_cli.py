"""``course bench``: its JSON contract, and what it refuses."""

from __future__ import annotations

import json

import pytest

from course_tools.bench import cli


def test_cli_dense_memory_passes_its_options_and_prints_the_report(monkeypatch, capsys):
    # the measurement itself is tested in test_dense_memory.py; here only the command's wiring
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


@pytest.mark.parametrize(("argv", "said"), [
    (["dense-memory", "--json", "--epochs", "0"], "--epochs and --images must be positive"),
    (["dense-memory", "--json", "--images", "1"], "--images must be at least 2"),  # nothing left to validate on
    (["cnn"], "invalid choice: 'cnn'"),  # gone: notebook 05 measures its speed ladder itself
])
def test_cli_refuses_what_it_cannot_measure(argv, said, capsys):
    with pytest.raises(SystemExit) as stopped:
        cli.main(argv)
    captured = capsys.readouterr()
    assert stopped.value.code == 2 and said in captured.err and not captured.out
