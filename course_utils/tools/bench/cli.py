"""``course bench cnn|dense-memory`` (a stable contract; JSON on stdout with ``--json``)::

    course bench cnn --json [--images N] [--epochs N] [--dataset D] [--device D] [--no-xla] [--seed N]
    course bench dense-memory --json [--images N] [--epochs N] [--dataset D] [--seed N]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from course_utils.core.errors import CourseError, ParameterError
from course_utils.core.i18n import translator
from course_utils.core.tf_setup import quiet_tensorflow
from course_utils.device import check_device, choose_device
from course_utils.tools.bench import load_dataset
from course_utils.tools.bench.dense_memory import dense_memory
from course_utils.tools.bench.ladder import ladder, run_ladder, summarize

_ = translator("course")

Arrays = tuple[np.ndarray, np.ndarray]


DATASETS = ("auto", "mnist", "fashion-mnist")


def cnn(
    *,
    dataset: str = "auto",
    images: int | None = None,
    epochs: int = 3,
    device: str = "auto",
    seed: int = 0,
    xla: bool = True,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The whole speed ladder on this machine, as the ``cnn`` command reports it."""
    import keras


    tf = quiet_tensorflow()
    choice = choose_device(device)
    train, test, info = load_dataset(dataset, images=images)
    configs, precision_reason = ladder(choice.name)
    if not xla:
        configs = [c for c in configs if not c.jit_compile]
    results = run_ladder(train, test, device=choice.name, epochs=epochs, seed=seed, configs=configs, progress=progress)
    return {
        "benchmark": "cnn",
        "dataset": info.dataset,
        "dataset_source": info.source,
        "images": len(train[0]),
        "test_images": len(test[0]),
        "epochs": epochs,
        "warmup_epochs": 1,
        "device": choice.name,
        "device_description": choice.description,
        "mixed_precision": precision_reason,
        "tensorflow": tf.__version__,
        "keras": keras.__version__,
        **summarize(results),
    }


def format_cnn(report: dict[str, Any]) -> str:
    lines = [
        f"{report['dataset']} ({report['dataset_source']}): {report['images']:,} training images, "
        f"{report['epochs']} epochs (first excluded), on {report['device']} ({report['device_description']})",
        f"{'configuration':28} {'batch':>5} {'images/s':>9} {'epoch s':>8} {'speedup':>8} {'test acc':>9}",
    ]
    for c in report["configs"]:
        kept = "" if c["keeps_accuracy"] else "  (lost accuracy)"
        lines.append(
            f"{c['name']:28} {c['batch_size']:5d} {c['images_per_s']:9,.0f} {c['epoch_s']:8.2f} "
            f"{c['speedup_vs_baseline']:7.2f}x {c['test_accuracy']:9.4f}{kept}"
        )
    lines.append(f"best: {report['best']} - {report['speedup_best_vs_baseline']:.2f}x the blog post's images/s")
    return "\n".join(lines)


def format_dense(report: dict[str, Any]) -> str:
    return (
        f"{report['dataset']} ({report['dataset_source']}), {report['images']:,} images, {report['epochs']} epoch(s)\n"
        f"book way:   peak {report['book_peak_mib']:,.0f} MiB, {report['book_s']:.1f} s\n"
        f"course way: peak {report['course_peak_mib']:,.0f} MiB, {report['course_s']:.1f} s"
    )


def _device(value: str) -> str:
    """argparse type for --device: the course's one DEVICE check (course_utils.device)."""

    try:
        return check_device(value, "--device")
    except ParameterError as exc:
        raise argparse.ArgumentTypeError(exc.what) from None


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog="course bench", description="The course's benchmarks: the CNN speed ladder and notebook 04's memory."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_cnn = sub.add_parser("cnn", help="the blog post's CNN: its own way and the course's speed ladder")
    p_cnn.add_argument(
        "--epochs", type=int, default=3, help="epochs per configuration; the first is warm-up (default 3)"
    )
    p_cnn.add_argument("--device", default="auto", type=_device, help="auto (default), cpu or gpu")
    p_cnn.add_argument(
        "--no-xla", action="store_true", help="skip the XLA rung (on CPUs it is slow: minutes per epoch)"
    )
    p_dense = sub.add_parser(
        "dense-memory",
        help="the Q&A post's noise-vs-zeros training: peak memory and time, the book's way and the course's",
    )
    p_dense.add_argument("--epochs", type=int, default=1, help="epochs per variant (default 1)")
    for p in (p_cnn, p_dense):
        p.add_argument("--images", type=int, default=None, help="training images to use (default: all)")
        p.add_argument(
            "--dataset",
            default="auto",
            choices=DATASETS,
            help="auto: MNIST (dense-memory: full-size, so Fashion-MNIST when only the MNIST sample is here)",
        )
        p.add_argument("--seed", type=int, default=0, help="the random seed, so that a run can be repeated (default 0)")
        p.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    if args.epochs < 1 or (args.images is not None and args.images < 1):
        parser.error("--epochs and --images must be positive")

    try:
        if args.command == "dense-memory":
            report = dense_memory(dataset=args.dataset, images=args.images, epochs=args.epochs, seed=args.seed)
            print(json.dumps(report, indent=2) if args.json else format_dense(report))
            return 0
        if args.epochs < 2:
            parser.error("cnn needs --epochs 2 or more: the first epoch is warm-up and is not timed")

        def progress(msg: str) -> None:
            print(msg, file=sys.stderr, flush=True)

        report = cnn(
            dataset=args.dataset,
            images=args.images,
            epochs=args.epochs,
            device=args.device,
            seed=args.seed,
            xla=not args.no_xla,
            progress=progress,
        )
        print(json.dumps(report, indent=2) if args.json else format_cnn(report))
        return 0
    except CourseError as exc:
        print(_("error: {error}").format(error=exc), file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
