"""Peak memory and time of notebook 04's training, two ways, each in a fresh child process.

A fresh process per way, because a process's peak memory (VmHWM) only ever grows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

from course_utils.bench.cli import load_dataset
from course_utils.errors import CourseError


def dense_child(way: str, dataset: str, images: int | None, epochs: int, seed: int) -> dict[str, Any]:
    """Run the noise-vs-zeros training one way in *this* process; report its peak memory and time."""
    from course_utils.channels import train_noise_vs_zeros
    from course_utils.results import peak_rss_mib
    from course_utils.tf_setup import quiet_tensorflow

    quiet_tensorflow()
    (x, y), _, info = load_dataset(dataset, images=images, full_size=True)
    start = time.perf_counter()
    histories = train_noise_vs_zeros(x, y, way=way, epochs=epochs, seed=seed)
    seconds = time.perf_counter() - start
    return {
        "way": way,
        "peak_mib": peak_rss_mib(),
        "seconds": seconds,
        "dataset": info.dataset,
        "dataset_source": info.source,
        "images": len(x),
        "final_val_accuracy": {kind: h["val_accuracy"][-1] for kind, h in histories.items()},
    }


def dense_memory(*, dataset: str = "auto", images: int | None = None, epochs: int = 1, seed: int = 0) -> dict[str, Any]:
    """Seed way vs course way of notebook 04's training, each in a fresh child process.

    A fresh process per way, because peak memory (VmHWM) only ever grows within a process.
    """
    runs = {}
    for way in ("seed", "course"):
        cmd = [
            sys.executable,
            "-m",
            "course_utils.bench",
            "dense-child",
            "--way",
            way,
            "--dataset",
            dataset,
            "--epochs",
            str(epochs),
            "--seed",
            str(seed),
        ]
        if images is not None:
            cmd += ["--images", str(images)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
        if proc.returncode != 0:
            raise CourseError(
                f"the {way}-way child process failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}",
                "Read the error above; run the child command alone to see it whole: " + " ".join(cmd),
            )
        runs[way] = json.loads(proc.stdout.strip().splitlines()[-1])
    seed_run, course_run = runs["seed"], runs["course"]
    return {
        "benchmark": "dense-memory",
        "dataset": seed_run["dataset"],
        "dataset_source": seed_run["dataset_source"],
        "images": seed_run["images"],
        "epochs": epochs,
        "seed_peak_mib": round(seed_run["peak_mib"], 1),
        "course_peak_mib": round(course_run["peak_mib"], 1),
        "seed_s": round(seed_run["seconds"], 2),
        "course_s": round(course_run["seconds"], 2),
        "memory_ratio": round(seed_run["peak_mib"] / course_run["peak_mib"], 2),
        "final_val_accuracy": {"seed": seed_run["final_val_accuracy"], "course": course_run["final_val_accuracy"]},
    }
