"""``course doctor``: the command line (docs/instructors.md describes it and its JSON)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from course_utils.core.errors import InputError
from course_utils.core.i18n import translator
from course_utils.doctor.gpus import QUERY_COMMAND
from course_utils.doctor.logs import classify, read_log
from course_utils.doctor.model import log_findings
from course_utils.doctor.nvidia import parse_nvidia_smi
from course_utils.doctor.probes import describe, probe
from course_utils.doctor.recommend import normalize_python
from course_utils.doctor.rules import diagnose
from course_utils.doctor.troubleshooting import links, page
from course_utils.doctor.versions import PLATFORMS

_ = translator("doctor")


def _read(path: str) -> bytes:
    """A captured file's bytes (the parsers decode UTF-8 and PowerShell's UTF-16); ``-`` reads standard input."""
    return sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()


def _log_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``course doctor --log FILE``: the problem line and its fix first, then every line's verdict."""
    if args.log == "-" and args.nvidia_smi == "-":
        parser.error(_("only one of --log and --nvidia-smi can read stdin"))
    try:
        text = read_log(args.log)
        smi_text = _read(args.nvidia_smi) if args.nvidia_smi else None
    except InputError as error:
        print(f"course doctor: {error.what}\n" + _("What to do: {fix}").format(fix=error.fix), file=sys.stderr)
        return 2
    except OSError as error:
        parser.error(_cannot_read(error))
    gpu = args.gpu
    if gpu is None and smi_text is not None:
        smi = parse_nvidia_smi(smi_text)
        gpu = {"ok": bool(smi.gpus), "no-driver": True, "no-devices": False}.get(smi.status)
    report = classify(text, gpu=gpu)
    findings = log_findings(report)
    if args.json:
        print(json.dumps({"log": report.to_dict(), "findings": [f.to_dict() for f in findings]}, indent=2))
    else:
        if report.problem:
            status = _("Result: a problem line found (exit status 1)")
        else:
            status = _("Result: no problem line (exit status 0)")
        more = [f"  {code}: {link}" for code, link in links(report.codes()).items()]
        heading = _("More help ({page}), by code:").format(page=page())
        help_text = "\n\n" + heading + "\n" + "\n".join(more) if more else ""
        print(report.text() + help_text + "\n\n" + status)
    return 1 if report.problem else 0


def _cannot_read(error: OSError) -> str:
    return _("cannot read {path}: {reason}").format(path=error.filename, reason=error.strerror)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="course doctor",
        description="Diagnose this machine (or one described by captured nvidia-smi / nvcc output) and say which "
        "TensorFlow to install. Exit status 1 if any finding is an error.",
    )
    parser.add_argument(
        "--nvidia-smi",
        metavar="FILE",
        help=f"captured `nvidia-smi` output, or of `{QUERY_COMMAND}` (which adds the GPU's generation); '-' for stdin",
    )
    parser.add_argument("--nvcc", metavar="FILE", help="captured `nvcc --version` output")
    parser.add_argument("--platform", choices=PLATFORMS, help="the machine's platform (default: this one, or guessed)")
    parser.add_argument("--python", metavar="X.Y", help="the Python version to install for (default: this one)")
    parser.add_argument("--json", action="store_true", help="print JSON (the stable contract) instead of a report")
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="the whole report: the machine as read, every route with its notes, every finding (the default shows "
        "the verdict, the install to follow, and the errors and warnings); --log always shows every line",
    )
    parser.add_argument(
        "--log",
        metavar="FILE",
        help="a pasted TensorFlow log ('-' for stdin): which lines are harmless and which one is the problem",
    )
    parser.add_argument(
        "--gpu",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="with --log: the machine that printed it has an NVIDIA GPU (--no-gpu: it has none)",
    )
    args = parser.parse_args(argv)
    if args.log is not None:
        return _log_command(args, parser)
    if args.gpu is not None:
        parser.error(_("--gpu/--no-gpu go with --log"))
    if args.python is not None and normalize_python(args.python) is None:
        parser.error(_("--python {value} is not a version like 3.11").format(value=repr(args.python)))
    try:
        smi_text = _read(args.nvidia_smi) if args.nvidia_smi else None
        nvcc_text = _read(args.nvcc) if args.nvcc else None
    except OSError as error:
        parser.error(_cannot_read(error))
    if smi_text is not None or nvcc_text is not None:
        machine = describe(args.platform, args.python, smi_text, nvcc_text)
    else:
        machine = probe(args.platform, args.python)
    result = diagnose(machine)
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        print(result.report() if args.verbose else result.summary())
    return result.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
