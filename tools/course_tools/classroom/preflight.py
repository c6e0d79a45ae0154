"""``course preflight``: one JSON record about this machine for the instructor, and the problems found in it
(docs/class.md, "Preflight: check every machine before the class", says what the record holds, every problem code
and the exit status). The problems: ``classroom.preflight_problems``; ``--students N``: ``classroom.sizing``."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime as _dt
import json
import os
import platform
import re
import statistics
import sys
import time
from importlib.metadata import PackageNotFoundError, requires
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

import course_utils.doctor as doctor
from course_tools import _, host_name, installed, user_name
from course_tools.classroom import sizing as class_sizing
from course_tools.classroom.class_report import CELLS, SCHEMA, student
from course_tools.classroom.hub import names as hub_names
from course_tools.classroom.preflight_problems import find_problems
from course_utils.core import gpu_config, variables
from course_utils.core.errors import CourseError, InputError
from course_utils.core.files import write_json_atomic
from course_utils.core.places import writable_places
from course_utils.core.tf_setup import quiet_tensorflow
from course_utils.data import data_dir_problem
from course_utils.data.cli import sources
from course_utils.device import cpu_model
from course_utils.doctor.gpus import identify
from course_utils.doctor.logs import decode_text
from course_utils.doctor.nvidia import parse_nvidia_smi
from course_utils.doctor.troubleshooting import more_line
from course_utils.lessons.nb02.verify import short_device

MATMUL_SIZE = 1024  # 1024 x 1024 float32: 2 GFLOP per product, tens of ms on a laptop CPU
MATMUL_REPEATS = 5


def default_out(user: str, host: str) -> Path:
    """``preflight-<user>-<host>.json`` in the current folder, with only safe characters in the name."""
    safe = [re.sub(r"[^A-Za-z0-9._-]+", "_", part).strip("._") or "unknown" for part in (user, host)]
    return Path(f"preflight-{safe[0]}-{safe[1]}.json")


def check_out(path: Path) -> Path:
    """Make sure the record can be written to ``path`` before anything is measured; else ``InputError``."""
    fix = _("Pass --out with a file in a folder you can write, for example --out ~/preflight.json.")
    if path.is_dir():
        raise InputError(_("--out {path} is a folder, not a file.").format(path=path), fix)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(_("The folder of --out {path} cannot be created ({reason}).").format(
            path=path, reason=error.strerror or error), fix) from None
    if not os.access(path.parent, os.W_OK):
        raise InputError(_("The folder {folder} cannot be written, so the record cannot be saved there.").format(
            folder=path.parent), fix)
    return path


def supported_range() -> str | None:
    """The version range of TensorFlow the course supports: the installed course-utils' requirement (course-tools
    requires course-utils, so its metadata is there); None when it names none."""
    try:
        texts = requires("course-utils") or []
    except PackageNotFoundError:
        texts = []
    for text in texts:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        if requirement.name == "tensorflow" and requirement.marker is None:
            return str(requirement.specifier) or None
    return None


def in_range(version: str | None, specifier: str | None) -> bool | None:
    """Whether ``version`` is in ``specifier`` (release candidates count); None when either is unknown."""
    if not version or not specifier:
        return None
    try:
        return SpecifierSet(specifier).contains(Version(version), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return None


def nvidia_info(smi: Any, source: str) -> dict[str, Any]:
    """The driver and GPUs from the doctor's ``SmiReport``; a GPU's compute capability from the driver, else
    from its name (the doctor's family table)."""
    if smi is None:
        return {"source": source, "status": "not looked at", "driver_version": None, "driver_cuda": None, "gpus": []}
    gpus = [{"index": g.index, "name": g.name, "memory_mib": g.memory_mib,
             "compute_capability": identify(g.name, g.compute_capability).compute_capability}
            for g in (smi.gpus if smi.status == "ok" else [])]
    return {"source": source, "status": smi.status, "driver_version": smi.driver_version,
            "driver_cuda": smi.driver_cuda, "gpus": gpus, "message": smi.message}


def tensorflow_info(info: Any) -> dict[str, Any] | None:
    """The doctor's ``TensorFlowInfo`` as the record keeps it; None when TensorFlow cannot be imported."""
    if info is None or not info.installed:
        return None
    wanted = supported_range()
    return {
        "version": info.version,
        "supported_range": wanted,
        "supported": in_range(info.version, wanted),
        "is_cuda_build": info.built_with_cuda,
        "cuda_version": info.cuda_version,
        "cudnn_version": info.cudnn_version,
        "gpus": list(info.gpus),
        "error": info.error,
    }


def time_matmul(tf: Any, device: str) -> dict[str, Any]:
    """The median time of a float32 product of ``MATMUL_SIZE`` square matrices on ``device``, and where it ran.

    The first product is not timed (kernels load, memory is allocated). Each timed product ends by copying
    one element to Python: GPU ops run asynchronously, so without it the clock would stop too early.
    """
    with tf.device(device):
        a = tf.random.uniform((MATMUL_SIZE, MATMUL_SIZE), dtype=tf.float32)
        b = tf.random.uniform((MATMUL_SIZE, MATMUL_SIZE), dtype=tf.float32)
        product = tf.linalg.matmul(a, b)
        product[0, 0].numpy()
        times = []
        for _repeat in range(MATMUL_REPEATS):
            start = time.perf_counter()
            product = tf.linalg.matmul(a, b)
            product[0, 0].numpy()
            times.append((time.perf_counter() - start) * 1000)
    ran_on = product.device
    return {
        "device": device,
        "ran_on": ran_on,
        "placed": short_device(ran_on) == short_device(device.lstrip("/")),
        "median_ms": round(statistics.median(times), 4),
        "times_ms": [round(t, 4) for t in times],
    }


def compute(tf: Any, gpu: bool) -> dict[str, Any]:
    """The timed product on the CPU and (when TensorFlow sees one) on the first GPU, with memory growth (docs/class.md,
    "Preflight"); an exception is recorded."""
    found: dict[str, Any] = {"size": MATMUL_SIZE, "repeats": MATMUL_REPEATS, "cpu": None, "gpu": None, "error": None}
    try:
        if gpu:
            with contextlib.suppress(CourseError):  # the runtime already started (a second call in one process)
                gpu_config.apply_memory_policy("growth")
        found["cpu"] = time_matmul(tf, "/CPU:0")
        if gpu:
            found["gpu"] = time_matmul(tf, "/GPU:0")
    except Exception as error:  # noqa: BLE001 - a failed product is a problem to report, not a crash
        found["error"] = f"{type(error).__name__}: {str(error)[:500]}"
    return found


def collect(
    *, expect_cpu: bool = False, run_compute: bool = True, smi_text: str | None = None, smi_source: str = "nvidia-smi",
    class_size: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The preflight record of this machine. ``smi_text``: captured nvidia-smi output to read instead of running it.
    ``class_size``: the arguments of ``sizing.plan`` but the GPUs (``students``, ``policy``, ``hub_gpus``,
    ``context_mib``), to size the class on this machine's GPUs."""
    machine = doctor.probe()
    if smi_text is not None:
        machine = dataclasses.replace(machine, smi=parse_nvidia_smi(smi_text))
    diagnosis = doctor.diagnose(machine)
    info = machine.tensorflow
    record: dict[str, Any] = {
        "schema": SCHEMA, "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "user": user_name(), "host": host_name(), "course_utils": installed("course-utils"), "expect_cpu": expect_cpu,
        # the doctor's platform (linux, wsl2, windows, macos), then what Python reports
        "platform": {"kind": machine.platform, "system": platform.system(), "release": platform.release(),
                     "machine": platform.machine(), "wsl2": machine.platform == "wsl2"},
        "python": {"version": platform.python_version(), "executable": sys.executable},
        "cpu": {"model": cpu_model(), "cores": os.cpu_count()}, "nvidia": nvidia_info(machine.smi, smi_source),
        "tensorflow": tensorflow_info(info), "tensorflow_error": None if info is None or info.installed else info.error,
        "keras": installed("keras"),
    }
    if record["tensorflow"] is None:
        record["compute"] = {"skipped": "TensorFlow cannot be imported"}
    elif not run_compute:
        record["compute"] = {"skipped": "--no-compute"}
    else:
        record["compute"] = compute(quiet_tensorflow(), gpu=bool(record["tensorflow"]["gpus"]))
    record["sizing"] = None if class_size is None else class_sizing.plan(gpus=record["nvidia"]["gpus"], **class_size)
    record["data"] = {"datasets": sources(), "data_dir_problem": data_dir_problem()}  # as `course data status`
    record["folders"] = writable_places()  # each folder the course writes, and whether it can be written
    record["doctor"] = {
        "findings": [f.to_dict() for f in diagnosis.findings],
        "recommended_install": list(diagnosis.ordered_routes()[0].commands),
    }
    record["problems"] = find_problems(record)
    return record


SUMMARY_CELLS = [column for column in CELLS if column not in ("student", "file", "problems")]  # said apart below


def summary(record: dict[str, Any], out: Path) -> str:
    """A few lines for the student: the class report's row of this record (its cells, one home), the folders, and
    the problems with their fixes."""
    lines = [f"Preflight of {student(record)} ({record['created']})"]
    lines += [f"  {column}: {CELLS[column](record)}" for column in SUMMARY_CELLS]
    for place in record["folders"]:
        lines.append(f"  Folder ({place['name']}): {place['path']}: {'ok' if place['writable'] else 'NOT writable'}")
    if record.get("sizing"):
        lines += ["", *class_sizing.summary_lines(record["sizing"])]
    problems = record["problems"]
    errors = sum(p["severity"] == "error" for p in problems)
    lines += ["", "Problems:" if problems else "Problems: none"]
    for item in problems:
        lines += [f"  [{item['severity']}] {item['code']}: {item['message']}", f"      fix: {item['fix']}"]
        lines += more_line(item["code"], "      ")  # the Troubleshooting entry, for the doctor's codes
    lines += [
        "",
        f"Record written to {out}. Send this file to your instructor.",
        f"Result: {errors} error(s), {len(problems) - errors} warning(s) (exit status {1 if errors else 0}).",
    ]
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="course preflight",
        description="Check this machine before the class: write one JSON record for the instructor and print "
        "the problems found. Exit status 1 if a problem is an error (the record is still written).",
    )
    parser.add_argument("--out", metavar="FILE", type=Path, help="where to write the record "
                        "(default: preflight-<user>-<host>.json in the current folder)")
    parser.add_argument("--json", action="store_true",
                        help="also print the record to standard output (the summary goes to standard error)")
    parser.add_argument("--no-compute", action="store_true", help="skip the timed matrix product")
    parser.add_argument("--expect-cpu", action="store_true",
                        help="this machine has no GPU on purpose: no GPU is then not a problem")
    parser.add_argument("--nvidia-smi", metavar="FILE", type=Path,
                        help="read this captured nvidia-smi output instead of running nvidia-smi (to try the "
                        "report; the record names the file)")
    server = parser.add_argument_group("sizing a class on this GPU server")
    server.add_argument("--students", metavar="N", type=class_sizing.students_count,
                        help="size a class of N students (one running notebook each) on this machine's GPUs")
    server.add_argument("--gpu-memory", metavar="VALUE",
                        help="COURSE_GPU_MEMORY as the hub sets it: a limit in MiB, growth or all "
                        "(default: the environment's COURSE_GPU_MEMORY)")
    server.add_argument("--hub-gpus", metavar="LIST", help="COURSE_HUB_GPUS as the hub sets it, e.g. 0,1: each "
                        "student gets one of them (default: the environment's; not set: every student sees every GPU)")
    server.add_argument("--context-mib", metavar="MIB", type=class_sizing.context_size,
                        default=class_sizing.CONTEXT_MIB, help="the GPU memory of one notebook's CUDA context, "
                        f"outside the limit (default: {class_sizing.CONTEXT_MIB}, approximate; measure yours)")
    return parser


def class_size(args: argparse.Namespace) -> dict[str, Any] | None:
    """What ``--students`` and its options ask to size, with ``COURSE_GPU_MEMORY`` read by the notebooks' own
    ``gpu_config.memory_policy``; None without ``--students``. ``ParameterError`` for a bad memory policy,
    ``InputError`` for a sizing option without ``--students``."""
    if args.students is None:
        if args.gpu_memory is not None or args.hub_gpus is not None:
            raise InputError(_("--gpu-memory and --hub-gpus size a class, so they need --students."),
                             _("Add --students N (the number of students), or leave those options out."))
        return None
    hub_gpus = os.environ.get(variables.HUB_GPUS) if args.hub_gpus is None else args.hub_gpus
    return {"students": args.students, "policy": gpu_config.memory_policy(args.gpu_memory),
            "hub_gpus": hub_names(hub_gpus or ""), "context_mib": args.context_mib}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    user, host = user_name(), host_name()
    try:
        size = class_size(args)
        out = check_out(args.out or default_out(user, host))
        smi_text = None
        if args.nvidia_smi is not None:
            try:
                smi_text = decode_text(args.nvidia_smi.read_bytes())
            except OSError as error:
                raise InputError(_("--nvidia-smi {path} cannot be read ({reason}).").format(
                    path=args.nvidia_smi, reason=error.strerror or error),
                    _("Pass a file saved from `nvidia-smi > FILE`, or leave --nvidia-smi out.")) from None
    except CourseError as error:
        print(f"course preflight: {error}", file=sys.stderr)  # CourseError says what, then what to do
        return 2
    record = collect(
        expect_cpu=args.expect_cpu,
        run_compute=not args.no_compute,
        smi_text=smi_text,
        smi_source=f"captured: {args.nvidia_smi.name}" if args.nvidia_smi else "nvidia-smi",
        class_size=size,
    )
    text = json.dumps(record, indent=2)
    try:
        write_json_atomic(out, record)
    except OSError as error:
        print(text)  # nothing is lost: the record is on the screen to copy
        print("course preflight: " + _("the record could not be written to {out} ({reason}).\nWhat to do: copy the "
                                       "JSON above into a file, or run again with --out in a folder you can "
                                       "write.").format(out=out, reason=error.strerror or error), file=sys.stderr)
        return 2
    if args.json:
        print(text)
    print(summary(record, out), file=sys.stderr if args.json else sys.stdout)
    return 1 if any(p["severity"] == "error" for p in record["problems"]) else 0
