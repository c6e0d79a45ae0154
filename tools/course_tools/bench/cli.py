"""``course bench dense-memory`` (a stable contract; JSON on stdout with ``--json``)::

    course bench dense-memory --json [--images N] [--epochs N] [--dataset D] [--seed N]
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from course_tools import _
from course_tools.bench.dense_memory import dense_memory
from course_utils.core.errors import CourseError

DATASETS = ("auto", "mnist", "fashion-mnist")


def format_dense(report: dict[str, Any]) -> str:
    return (
        f"{report['dataset']} ({report['dataset_source']}), {report['images']:,} images, {report['epochs']} epoch(s)\n"
        f"book way:   peak {report['book_peak_mib']:,.0f} MiB, {report['book_s']:.1f} s\n"
        f"course way: peak {report['course_peak_mib']:,.0f} MiB, {report['course_s']:.1f} s"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="course bench", description="The course's benchmark: notebook 04's memory.")
    sub = parser.add_subparsers(dest="command", required=True)
    p_dense = sub.add_parser(
        "dense-memory",
        help="the Q&A post's noise-vs-zeros training: peak memory and time, the book's way and the course's",
    )
    p_dense.add_argument("--epochs", type=int, default=1, help="epochs per variant (default 1)")
    p_dense.add_argument("--images", type=int, default=None, help="training images to use (default: all)")
    p_dense.add_argument("--dataset", default="auto", choices=DATASETS,
                         help="auto: full-size MNIST, else Fashion-MNIST when only the MNIST sample is here")
    p_dense.add_argument("--seed", type=int, default=0,
                         help="the random seed, so that a run can be repeated (default 0)")
    p_dense.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    if args.epochs < 1 or (args.images is not None and args.images < 1):
        parser.error("--epochs and --images must be positive")
    if args.images == 1:  # the last 20% validate, as in notebook 04
        parser.error("--images must be at least 2: one image to train on and one to validate")
    try:
        report = dense_memory(dataset=args.dataset, images=args.images, epochs=args.epochs, seed=args.seed)
    except CourseError as exc:
        print(_("error: {error}").format(error=exc), file=sys.stderr)
        return 1
    print(json.dumps(report, indent=2) if args.json else format_dense(report))
    return 0
