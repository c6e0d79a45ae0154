"""``course bench``: its JSON contract, and what it refuses."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    return subprocess.run([sys.executable, "-m", "course_utils.bench", *args], capture_output=True, text=True, env=env)


def test_cli_cnn_json_contract():
    proc = run_cli("cnn", "--json", "--images", "128", "--epochs", "2")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["configs"][0]["name"] == "seed as written" and len(report["configs"]) >= 4
    for config in report["configs"]:
        assert {"name", "device", "batch_size", "images_per_s", "epoch_s", "test_accuracy"} <= set(config)
        assert config["images_per_s"] > 0 and 0 <= config["test_accuracy"] <= 1
    assert report["speedup_best_vs_seed"] > 0 and report["images"] == 128
    best = next(c for c in report["configs"] if c["name"] == report["best"])
    assert best["test_accuracy"] >= report["configs"][0]["test_accuracy"] - 0.005


def test_cli_cnn_can_skip_the_xla_rung():
    proc = run_cli("cnn", "--json", "--images", "64", "--epochs", "2", "--no-xla")
    assert proc.returncode == 0, proc.stderr
    configs = json.loads(proc.stdout)["configs"]
    assert configs[0]["name"] == "seed as written" and not any(c["jit_compile"] for c in configs)


def test_cli_dense_memory_json_contract_and_the_course_way_is_leaner():
    proc = run_cli("dense-memory", "--json", "--images", "8000", "--dataset", "mnist")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    for key in ("seed_peak_mib", "course_peak_mib", "seed_s", "course_s"):
        assert report[key] > 0
    assert report["images"] == 8000 and report["epochs"] == 1
    # the book's two float64 arrays alone are 8,000 x 1,568 x 8 x 2 bytes = 191 MiB; the course keeps 6 MiB of uint8
    assert report["course_peak_mib"] + 100 < report["seed_peak_mib"]


def test_cli_refuses_what_it_cannot_measure():
    proc = run_cli("cnn", "--json", "--epochs", "1")
    assert proc.returncode == 2 and "warm-up" in proc.stderr
    proc = run_cli("cnn", "--json", "--images", "99999999", "--epochs", "2")
    assert proc.returncode == 1 and "training images" in proc.stderr
