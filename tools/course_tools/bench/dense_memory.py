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


def dense_child(way: str, dataset: str, images: int | None, epochs: int, seed: int) -> dict[str, Any]:
    """Run the noise-vs-zeros training one way in *this* process; report its peak memory and time.

    The dataset comes first: a request it cannot meet (too many ``images``) fails fast, before TensorFlow's import.
    """
    ((x, y), _test), info = data.load(dataset, images=images, strict=True, full_size=True, quiet=True, with_info=True)

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


def _measure(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The child process's entry point (``core.child``): ``dense_child(**payload)``."""
    return dense_child(**payload)


def dense_memory(*, dataset: str = "auto", images: int | None = None, epochs: int = 1, seed: int = 0) -> dict[str, Any]:
    """The book's way vs the course's way of notebook 04's training, each in a fresh child process.

    A fresh process per way, because peak memory (VmHWM) only ever grows within a process.
    A child that fails raises ``ChildError`` (a ``CourseError``) with the end of its output.
    """
    runs = {}
    for way in ("book", "course"):
        payload = {"way": way, "dataset": dataset, "images": images, "epochs": epochs, "seed": seed}
        runs[way] = run_python(
            "course_tools.bench.dense_memory:_measure", payload, timeout_s=None,
            env={"TF_CPP_MIN_LOG_LEVEL": "2"},
            what=_("The {way}-way training process").format(way=way), name=f"dense-{way}",
        ).value
    book_run, course_run = runs["book"], runs["course"]
    return {
        "benchmark": "dense-memory",
        "dataset": book_run["dataset"],
        "dataset_source": book_run["dataset_source"],
        "images": book_run["images"],
        "epochs": epochs,
        "book_peak_mib": round(book_run["peak_mib"], 1),
        "course_peak_mib": round(course_run["peak_mib"], 1),
        "book_s": round(book_run["seconds"], 2),
        "course_s": round(course_run["seconds"], 2),
        "memory_ratio": round(book_run["peak_mib"] / course_run["peak_mib"], 2),
        "final_val_accuracy": {"book": book_run["final_val_accuracy"], "course": course_run["final_val_accuracy"]},
    }
