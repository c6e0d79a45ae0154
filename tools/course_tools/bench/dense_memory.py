"""Peak memory and time of notebook 04's training, two ways, each in a fresh child process.

A fresh process per way (``core.child``), because a process's peak memory (VmHWM) only ever grows.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from course_tools import _
from course_tools.bench.channels import train_noise_vs_zeros
from course_utils import data
from course_utils.core.child import run_python
from course_utils.core.rss import peak_rss_mib
from course_utils.core.tf_setup import quiet_tensorflow


def dense_child(run: Mapping[str, Any]) -> dict[str, Any]:
    """The child process's entry point (``core.child``): the noise-vs-zeros training one way (``run``: way,
    dataset, images, epochs, seed) in *this* process; its peak memory and time.

    The dataset comes first: a request it cannot meet (too many ``images``) fails fast, before TensorFlow's import.
    """
    way, epochs, seed = run["way"], run["epochs"], run["seed"]
    ((x, y), _test), info = data.load(run["dataset"], images=run["images"], strict=True, full_size=True, quiet=True,
                                      with_info=True)

    quiet_tensorflow()
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
    """The book's way vs the course's way of notebook 04's training, each in a fresh child process; a child that
    fails raises ``ChildError`` (a ``CourseError``) with the end of its output."""
    runs = {}
    for way in ("book", "course"):
        payload = {"way": way, "dataset": dataset, "images": images, "epochs": epochs, "seed": seed}
        runs[way] = run_python(
            "course_tools.bench.dense_memory:dense_child", payload, timeout_s=None,
            env={"TF_CPP_MIN_LOG_LEVEL": "2"},
            what=_("The {way}-way training process").format(way=way), name=f"dense-{way}",
        ).value
    book = runs["book"]
    return {"benchmark": "dense-memory", "dataset": book["dataset"], "dataset_source": book["dataset_source"],
            "images": book["images"], "epochs": epochs,
            **{f"{w}_peak_mib": round(r["peak_mib"], 1) for w, r in runs.items()},
            **{f"{w}_s": round(r["seconds"], 2) for w, r in runs.items()},
            "memory_ratio": round(book["peak_mib"] / runs["course"]["peak_mib"], 2),
            "final_val_accuracy": {w: r["final_val_accuracy"] for w, r in runs.items()}}
