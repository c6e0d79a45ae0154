"""The doctor: which TensorFlow to install on a machine, and what stands in the way of its GPU.

``recommend(platform, python, driver, gpu)`` answers "what do I install?" from the version
table (``course_utils.doctor.versions``). ``diagnose()`` inspects this machine - platform,
``nvidia-smi``, ``nvcc``, TensorFlow's build info, devices and start-up log - or a machine
described by captured text, and returns ``Finding``s: a stable ``code``, a ``severity``
(info, warning, error), a ``message`` and a ``fix``.

Command line (a stable contract: other tools read its JSON)::

    course doctor                       # this machine
    course doctor --nvidia-smi FILE [--nvcc FILE]
        [--platform linux|wsl2|windows|macos] [--python X.Y] [--json]
    course doctor --log FILE [--gpu | --no-gpu | --nvidia-smi FILE] [--json]   # a pasted TensorFlow log

On this machine the report also holds the live checks (``course_utils.doctor.checks``: the pip NVIDIA
libraries load, WSL2's plumbing, the Jupyter kernels' Pythons, a TensorFlow wheel for this Python),
grouped by what they look at. ``--log`` classifies each line of a TensorFlow log
(``course_utils.doctor.logs``): harmless, the problem, or depends on whether the machine has a GPU.

Exit status 0 unless a finding has severity "error" (then 1); 2 for a usage error. In the JSON,
a recommendation's ``notes`` are ``{"code": ..., "text": ...}`` objects: match on the code.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform as _platform
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from course_utils.doctor.checks import CHECK_FINDINGS, GROUPS, live_checks
from course_utils.doctor.gpus import QUERY_COMMAND, build_targets, covered_by_build, identify
from course_utils.doctor.logs import LogReport, classify, decode_text, read_log
from course_utils.doctor.nvidia import (
    NvccReport,
    SmiReport,
    parse_nvcc,
    parse_nvidia_smi,
    probe_nvcc,
    probe_nvidia_smi,
    windows_evidence,
)
from course_utils.doctor.recommend import (
    PLATFORM_NAMES,
    Note,
    Recommendation,
    normalize_python,
    pip_install,
    recommend,
    routes,
)
from course_utils.doctor.troubleshooting import links, more_line
from course_utils.doctor.versions import PLATFORMS, check_platform, load, parse_version
from course_utils.errors import InputError

SEVERITIES = ("info", "warning", "error")


@dataclass(frozen=True)
class Finding:
    """One thing the doctor found: ``code`` is stable (tools match on it), the rest is for people."""

    code: str
    severity: str  # "info", "warning" or "error"
    message: str
    fix: str

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity {self.severity!r} is not one of {SEVERITIES}")

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True)
class NoteFinding:
    """How a recommendation note becomes a finding: its code, severity and fix (``{rec.python}`` etc. filled in)."""

    code: str
    severity: str
    fix: str


# The recommendation notes that become findings, keyed by the note's code - never by its wording; the
# finding's message is the note's text. Other notes stay with the recommendation only, or a finding is
# built from structured fields instead (driver-too-old from ``rec.driver_ok``, macos-no-cuda from the platform).
NOTE_FINDINGS: dict[str, NoteFinding] = {
    "no-gpu-build-for-python": NoteFinding(
        "python-unsupported",
        "warning",
        "Use Python {rec.python} for TensorFlow (the commands create that environment).",
    ),
    "python-limits-tensorflow": NoteFinding(
        "python-limits-tensorflow", "warning", "Use a newer Python for the newest TensorFlow."
    ),
    "keras-2-only": NoteFinding(
        "keras-2-only",
        "warning",
        "For this course use TensorFlow 2.16 or newer (Keras 3): WSL2 or Linux with the current TensorFlow, "
        "or the CPU.",
    ),
    "gpu-too-old": NoteFinding(
        "gpu-too-old",
        "warning",
        "Install what the commands above say, or use a GPU of compute capability 6.0 or newer (or a hosted GPU).",
    ),
    "gpu-known-failure": NoteFinding(
        "gpu-known-failure",
        "warning",
        "Until a TensorFlow release supports this GPU, train on the CPU or on a hosted GPU (Colab, Kaggle); "
        "the issue threads say when that changes.",
    ),
    "gpu-generation-unknown": NoteFinding(
        "gpu-generation-unknown",
        "info",
        f"Run `{QUERY_COMMAND}` and give its output to the doctor (--nvidia-smi FILE).",
    ),
}


def _sentence(text: str) -> str:
    """A note's text as a finding's message: capital first letter, final full stop."""
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def note_findings(rec: Recommendation) -> list[Finding]:
    """The findings ``rec``'s notes give, by ``NOTE_FINDINGS`` (their codes decide, their wording does not)."""
    out = []
    for note in rec.notes:
        how = NOTE_FINDINGS.get(note.code)
        if how is not None:
            out.append(Finding(how.code, how.severity, _sentence(note.text), how.fix.format(rec=rec)))
    return out


MAIN_GROUP = "Install, driver and TensorFlow"


def check_findings(notes: list[Note], python: str | None = None) -> list[Finding]:
    """The findings the live checks' notes give, by ``checks.CHECK_FINDINGS`` (codes decide, wording does not);
    ``python`` fills ``{python}`` in the fixes (default: this Python)."""
    out = []
    for note in notes:
        how = CHECK_FINDINGS.get(note.code)
        if how is not None:
            wsl2 = load().rule("wsl2")
            fix = how.fix.format(
                python=python or sys.executable,
                wsl_driver_min=wsl2["driver_min"],
                wsl_windows_build=wsl2["windows_build_min"],
            )
            out.append(Finding(note.code, how.severity, _sentence(note.text), fix))
    return out


def finding_groups(findings: list[Finding]) -> dict[str, list[Finding]]:
    """Findings by what they look at (the live checks' groups, by code), in order; empty groups left out."""
    groups: dict[str, list[Finding]] = {MAIN_GROUP: [], **{group: [] for group in GROUPS}}
    for f in findings:
        rule = CHECK_FINDINGS.get(f.code)
        groups[rule.group if rule else MAIN_GROUP].append(f)
    return {group: found for group, found in groups.items() if found}


_LOG_SEVERITY = {"problem": "error", "depends": "warning", "harmless": "info"}


def log_findings(report: LogReport) -> list[Finding]:
    """A classified log's known lines as findings (problem: error, depends: warning, harmless: info), by rule
    code, each code once, worst first."""
    out, seen = [], set()
    for entry in report.entries:
        if entry.rule is None or entry.code in seen:
            continue
        seen.add(entry.code)
        where = f"line {entry.lines[0]}" if len(entry.lines) == 1 else f"lines {entry.lines[0]}, ..."
        message = f"{where}: {entry.message[:200]} - {entry.meaning}"
        out.append(Finding(entry.code, _LOG_SEVERITY[entry.verdict], _sentence(message), entry.fix))
    order = {"error": 0, "warning": 1, "info": 2}
    return sorted(out, key=lambda f: order[f.severity])


# --------------------------------------------------------------------------- the machine


@dataclass
class TensorFlowInfo:
    """What the installed TensorFlow says about itself (only for this machine, never for a described one)."""

    installed: bool
    version: str | None = None
    built_with_cuda: bool | None = None
    cuda_version: str | None = None
    cudnn_version: str | None = None
    compute_capabilities: list[str] = field(default_factory=list)
    gpus: list[dict[str, Any]] = field(default_factory=list)  # name, compute_capability per visible GPU
    startup_log: str = ""
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["startup_log"] = _log_hints(self.startup_log)  # the telling lines, not the whole log
        return data


@dataclass
class Machine:
    """A machine to diagnose: this one (``probe``) or one described by captured text (``describe``)."""

    platform: str
    python: str | None
    smi: SmiReport | None = None  # None: nvidia-smi was not looked at
    nvcc: NvccReport | None = None
    tensorflow: TensorFlowInfo | None = None
    live: bool = False
    platform_note: str | None = None  # how the platform was decided, when it was guessed
    checks: list[Note] | None = None  # the live checks' notes (course_utils.doctor.checks); None: not run


def detect_platform() -> str:
    """This machine's platform: linux, wsl2, windows or macos."""
    if sys.platform == "darwin":
        return "macos"
    if sys.platform.startswith("win"):
        return "windows"
    text = _platform.release().lower()
    try:
        text += Path("/proc/version").read_text(encoding="utf-8", errors="replace").lower()
    except OSError:
        pass
    return "wsl2" if "microsoft" in text or "wsl" in text else "linux"


def guess_platform(smi_text: str | bytes | None) -> tuple[str, str]:
    """Guess the platform of captured nvidia-smi text: (platform, why).

    Native Windows when the capture shows it (``nvidia.windows_evidence``: the WDDM/TCC column, a
    ``C:\\`` path or prompt, the console banner, a cmd or PowerShell error); else Linux.
    """
    evidence = windows_evidence(smi_text)
    if evidence:
        return "windows", f"assumed native Windows from {evidence} (pass --platform to change it)"
    return "linux", "assumed Linux (pass --platform wsl2, windows or macos to change it)"


def probe_tensorflow() -> TensorFlowInfo:
    """Import TensorFlow quietly (its start-up log captured) and read its build and devices."""
    from course_utils.tf_setup import quiet_tensorflow, startup_log

    try:
        tf = quiet_tensorflow()
    except Exception as error:  # noqa: BLE001 - a missing or broken install is a finding, not a crash
        return TensorFlowInfo(False, error=f"{type(error).__name__}: {error}")
    info = TensorFlowInfo(True, version=getattr(tf, "__version__", None), startup_log=startup_log())
    try:
        build = dict(tf.sysconfig.get_build_info())
        info.built_with_cuda = bool(tf.test.is_built_with_cuda())
        info.cuda_version = build.get("cuda_version")
        info.cudnn_version = build.get("cudnn_version")
        info.compute_capabilities = list(build.get("cuda_compute_capabilities", []) or [])
        for gpu in tf.config.list_physical_devices("GPU"):
            details = tf.config.experimental.get_device_details(gpu)
            cc = details.get("compute_capability")
            info.gpus.append(
                {"name": details.get("device_name", gpu.name), "compute_capability": f"{cc[0]}.{cc[1]}" if cc else None}
            )
    except Exception as error:  # noqa: BLE001
        info.error = f"{type(error).__name__}: {error}"
    return info


def probe(
    platform: str | None = None, python: str | None = None, *, tensorflow: bool = True, checks: bool = True
) -> Machine:
    """This machine: platform, Python, nvidia-smi, nvcc, (unless ``tensorflow=False``) TensorFlow and (unless
    ``checks=False``) the live checks."""
    where = check_platform(platform) if platform else detect_platform()
    smi = probe_nvidia_smi()
    gpu = smi.status == "ok" and bool(smi.gpus)
    return Machine(
        platform=where,
        python=normalize_python(python) or normalize_python(_platform.python_version()),
        smi=smi,
        nvcc=probe_nvcc(),
        tensorflow=probe_tensorflow() if tensorflow else None,
        live=True,
        checks=live_checks(where, gpu=gpu) if checks else None,
    )


def describe(
    platform: str | None = None,
    python: str | None = None,
    nvidia_smi: str | bytes | None = None,
    nvcc: str | bytes | None = None,
    tensorflow: TensorFlowInfo | None = None,
) -> Machine:
    """A machine described by captured ``nvidia-smi`` / ``nvcc --version`` text (either may be None)."""
    note = None
    if platform is None:
        platform, note = guess_platform(nvidia_smi)
    return Machine(
        platform=check_platform(platform),
        python=normalize_python(python),
        smi=parse_nvidia_smi(nvidia_smi) if nvidia_smi is not None else None,
        nvcc=parse_nvcc(nvcc) if nvcc is not None else None,
        tensorflow=tensorflow,
        platform_note=note,
    )


# --------------------------------------------------------------------------- the diagnosis


def _log_hints(log: str, gpu: bool | None = None) -> list[str]:
    """The start-up log lines that explain a missing GPU (``logs.classify``: the problem lines, and the ones that
    are the problem when there is a GPU), without their time/thread prefix, each once."""
    report = classify(log, gpu=gpu)
    return [e.message for e in report.entries if e.verdict in ("problem", "depends")][:8]


@dataclass
class Diagnosis:
    machine: Machine
    recommendation: Recommendation
    alternatives: list[Recommendation]
    findings: list[Finding]

    @property
    def exit_code(self) -> int:
        return 1 if any(f.severity == "error" for f in self.findings) else 0

    def codes(self) -> list[str]:
        return [f.code for f in self.findings]

    def to_json(self) -> dict[str, Any]:
        """The CLI's JSON: driver_version, driver_cuda, toolkit_cuda, gpus, tensorflow,
        recommended_install and findings (the contract), plus details (recommendations' notes as
        ``{"code", "text"}`` objects)."""
        smi, nvcc, m = self.machine.smi, self.machine.nvcc, self.machine
        return {
            "driver_version": smi.driver_version if smi else None,
            "driver_cuda": smi.driver_cuda if smi else None,
            "toolkit_cuda": nvcc.release if nvcc else None,
            "gpus": [
                {
                    "name": g.name,
                    "memory_mib": g.memory_mib,
                    "index": g.index,
                    "driver_model": g.driver_model,
                    "compute_capability": g.compute_capability,
                    "generation": identify(g.name, g.compute_capability).to_dict(),
                }
                for g in (smi.gpus if smi else [])
            ],
            "tensorflow": self.recommendation.tensorflow,
            "recommended_install": list(self.recommendation.commands),
            "findings": [f.to_dict() for f in self.findings],
            "platform": m.platform,
            "python": m.python,
            "machine": "this machine" if m.live else "described",
            "recommended": self.recommendation.to_dict(),
            "alternatives": [a.to_dict() for a in self.alternatives],
            "nvidia_smi": None
            if smi is None
            else {
                "status": smi.status,
                "message": smi.message,
                "problems": smi.problems,
                "tool_version": smi.tool_version,
            },
            "nvcc": None if nvcc is None else nvcc.to_dict(),
            "installed_tensorflow": None if m.tensorflow is None else m.tensorflow.to_dict(),
            "checks": None
            if m.checks is None
            else [
                {**note.to_dict(), "group": CHECK_FINDINGS[note.code].group if note.code in CHECK_FINDINGS else None}
                for note in m.checks
            ],
            # where docs/troubleshooting.md explains a finding's or a note's code: {code: link}
            "see": links(
                [f.code for f in self.findings]
                + [code for rec in (self.recommendation, *self.alternatives) for code in rec.note_codes()]
            ),
        }

    def report(self) -> str:
        """A readable report: the machine, what to install, and the findings, worst first."""
        m, smi, nvcc = self.machine, self.machine.smi, self.machine.nvcc
        who = "This machine" if m.live else "Described machine"
        lines = [f"{who}: {PLATFORM_NAMES[m.platform]}, Python {m.python or '(not given)'}"]
        if smi is None:
            lines.append("  NVIDIA driver: not looked at")
        elif smi.status == "ok":
            cuda = f", supports CUDA up to {smi.driver_cuda}" if smi.driver_cuda else ""
            lines.append(f"  NVIDIA driver: {smi.driver_version or 'unreadable'}{cuda}")
            for g in smi.gpus:
                memory = f"{g.memory_mib} MiB" if g.memory_mib is not None else "memory unknown"
                mode = f", {g.driver_model}" if g.driver_model else ""
                lines.append(f"  GPU {g.index}: {g.name} ({memory}{mode})")
                lines.append(f"    {_coverage_line(g.name, g.compute_capability, m.tensorflow)}")
        else:
            lines.append(f"  NVIDIA driver: none found ({smi.status}: {smi.message or '; '.join(smi.problems)})")
        if nvcc is not None:
            lines.append(f"  CUDA toolkit (nvcc): {nvcc.release if nvcc.status == 'ok' else nvcc.status}")
        tf = m.tensorflow
        if tf is not None:
            if tf.installed:
                build = f"CUDA build {tf.cuda_version}" if tf.built_with_cuda else "CPU-only build"
                lines.append(f"  TensorFlow: {tf.version} ({build}), GPUs visible: {len(tf.gpus)}")
            else:
                lines.append(f"  TensorFlow: not importable ({tf.error})")
        lines += ["", "Install:", self.recommendation.text()]
        for alt in self.alternatives:
            lines += ["", "Or:", alt.text()]
        lines += ["", "Findings:"]
        groups = finding_groups(self.findings)
        pad = "  " if len(groups) > 1 else ""
        for group, found in groups.items():
            if pad:
                lines.append(f"  {group}:")
            for f in found:
                lines.append(f"{pad}  [{f.severity}] {f.code}: {f.message}")
                lines.append(f"{pad}      fix: {f.fix}")
                lines += more_line(f.code, f"{pad}      ")
        status = "errors found (exit status 1)" if self.exit_code else "no errors (exit status 0)"
        lines += ["", f"Result: {status}"]
        return "\n".join(lines)


def _coverage_line(name: str, reported: str | None, tf: TensorFlowInfo | None) -> str:
    """One GPU's generation and whether a TensorFlow build covers it: the installed CUDA build's own target list,
    else the wheels of the newest TensorFlow the table has a list for."""
    generation = identify(name, reported)
    if not generation.known:
        return f"{generation.describe()}: run `{QUERY_COMMAND}` to read it"
    if tf is not None and tf.installed and tf.built_with_cuda and tf.compute_capabilities:
        targets, which = tf.compute_capabilities, f"this TensorFlow {tf.version}"
    else:
        which = f"TF {load().linux[0].minor}'s wheels"
        targets = build_targets(load().linux[0].minor)
    coverage = covered_by_build(generation.compute_capability, targets, tf.version if tf and tf.version else None)
    return f"{generation.describe()}; for {which}: {coverage.reason}"


def _gpu_summary(smi: SmiReport) -> str:
    if not smi.gpus:
        return "no GPU rows could be read"
    parts = []
    for g in smi.gpus:
        extra = [f"{g.memory_mib} MiB" if g.memory_mib is not None else "memory unknown"]
        if g.driver_model:
            extra.append(f"{g.driver_model} mode")
        parts.append(f"GPU {g.index}: {g.name} ({', '.join(extra)})")
    return "; ".join(parts)


def _driver_findings(m: Machine, rec: Recommendation) -> list[Finding]:
    smi, table, out = m.smi, load(), []
    if smi is None:
        return out
    where = PLATFORM_NAMES[m.platform]
    if smi.status == "ok" and smi.driver_version is None:  # a table, but its driver version cannot be read
        out.append(
            Finding(
                "nvidia-smi-partly-read",
                "warning",
                "An NVIDIA driver answered, but its version cannot be read from this nvidia-smi output: "
                + "; ".join(smi.problems) + ". The advice below assumes nothing about the driver.",
                "Paste the complete output of `nvidia-smi` (or run the doctor on the machine itself).",
            )
        )
    elif smi.status == "ok":
        cuda = f"; it supports CUDA up to {smi.driver_cuda}" if smi.driver_cuda else ""
        out.append(
            Finding(
                "nvidia-driver",
                "info",
                f"NVIDIA driver {smi.driver_version}{cuda}. {_gpu_summary(smi)}.",
                "Nothing to do.",
            )
        )
        if smi.problems:
            out.append(
                Finding(
                    "nvidia-smi-partly-read",
                    "info",
                    "Parts of the nvidia-smi output could not be read: " + "; ".join(smi.problems) + ".",
                    "Paste the complete output of `nvidia-smi` (or run the doctor on the machine itself).",
                )
            )
    elif smi.status in ("missing", "no-driver"):
        if m.platform == "macos":
            return out
        severity = "error" if smi.status == "no-driver" else "warning"
        what = (
            "nvidia-smi is installed but cannot talk to the NVIDIA driver"
            if smi.status == "no-driver"
            else "No NVIDIA driver was found"
        )
        if m.platform == "wsl2":
            minimum = rec.driver_min or table.rule("wsl2")["driver_min"]
            fix = (
                f"Install or update the NVIDIA driver on Windows (>= {minimum}); "
                f"{table.rule('wsl2-no-linux-driver')['text']}"
            )
        else:
            fix = (
                f"If this machine has an NVIDIA GPU, install NVIDIA's driver (>= {rec.driver_min}) and reboot; "
                "without one, TensorFlow runs on the CPU (every notebook of this course still works)."
            )
        out.append(
            Finding(
                "no-nvidia-driver",
                severity,
                f"{what} ({smi.message or 'no output'}): TensorFlow can only use the CPU on {where}.",
                fix,
            )
        )
    elif smi.status == "no-devices":
        out.append(
            Finding(
                "no-nvidia-gpu",
                "warning",
                'The NVIDIA driver is loaded but nvidia-smi found no GPU ("No devices were found").',
                "Check that the GPU is seated and enabled (BIOS, passthrough, power); until then TensorFlow "
                "uses the CPU.",
            )
        )
    else:
        out.append(
            Finding(
                "nvidia-smi-unreadable",
                "warning",
                "Could not read the nvidia-smi output: " + "; ".join(smi.problems) + ".",
                "If that line says the command was not found (in any language), this machine has no NVIDIA "
                "driver, or nvidia-smi is not on PATH; otherwise give the doctor the complete, unedited output "
                "of `nvidia-smi`.",
            )
        )
    return out


def _route_findings(m: Machine, rec: Recommendation, alternatives: list[Recommendation]) -> list[Finding]:
    table, out = load(), []
    smi = m.smi
    if m.platform == "windows":
        last = table.rule("windows-native-gpu-last")["last"]
        recipe = table.rule("windows-native-recipe")
        build = table.newest("windows")
        wsl = next((a for a in alternatives if a.platform == "wsl2"), None) or recommend("wsl2", m.python)
        driver = smi.driver_version if smi and smi.status == "ok" else None
        yours = ""
        if wsl.driver_min and driver and parse_version(driver) < parse_version(wsl.driver_min):
            yours = f" - yours is {driver}, update it first"
        tf = m.tensorflow
        installed_cpu_only = bool(
            tf is not None and tf.installed and tf.version and parse_version(tf.version)[:2] > parse_version(last)[:2]
        )
        out.append(
            Finding(
                "windows-native-no-gpu-after-2.10",
                "error" if installed_cpu_only and smi and smi.gpus else "warning",
                f"Native Windows has no GPU TensorFlow after {last}: TF 2.11 and later install CPU-only there. "
                f"TF {last} was built and tested with CUDA {build.cuda} and cuDNN {build.cudnn}, on Python "
                f"{build.python_min}-{build.python_max}."
                + (f" The installed TensorFlow {tf.version} cannot use the GPU." if installed_cpu_only else ""),
                f"Either stay on native Windows with the official conda recipe - `{recipe['conda']}`, "
                f"then `{pip_install(recipe['requirement'], build.minor)}` in a Python <= {build.python_max} "
                f"environment; TF {last} comes with Keras 2, so the course's notebooks (Keras 3) do not run "
                f'there - or use WSL2 with current TensorFlow: `pip install "{wsl.tensorflow}"` '
                f"(Windows 10 {table.rule('wsl2')['windows_build_min']} or newer, Windows NVIDIA driver >= "
                f"{wsl.driver_min}{yours}).",
            )
        )
    if m.platform == "macos":
        out.append(
            Finding(
                "macos-no-cuda",
                "info",
                table.rule("macos")["text"],
                f"Install {rec.tensorflow} (the commands above). Apple's Metal plugin is a separate route: "
                + table.rule("macos-metal")["text"],
            )
        )
    if rec.gpu and rec.driver_ok is False:
        smi_cuda = f" (it supports CUDA up to {smi.driver_cuda})" if smi and smi.driver_cuda else ""
        out.append(
            Finding(
                "driver-too-old",
                "error",
                f"The NVIDIA driver {rec.driver}{smi_cuda} is older than the {rec.driver_min} that TF "
                f"{rec.build.minor} (CUDA {rec.build.cuda}) needs on {PLATFORM_NAMES[rec.platform]}.",
                f"Update the NVIDIA driver to >= {rec.driver_min}"
                + (
                    f"; if you cannot, {rec.fallback} is the newest tested TensorFlow whose CUDA family this "
                    f"driver supports (CUDA minor-version compatibility): `{rec.fallback_install}`"
                    + (
                        f", with CUDA {rec.fallback_build.cuda} and cuDNN {rec.fallback_build.cudnn} on the system"
                        if rec.fallback_build and rec.platform != "windows" and "[and-cuda]" not in rec.fallback
                        else ""
                    )
                    + (
                        " - it comes with Keras 2, on which the course's notebooks do not run."
                        if rec.fallback_build and load().keras_2(rec.fallback_build.minor)
                        else "."
                    )
                    if rec.fallback
                    else "; no tested TensorFlow build runs on this driver."
                ),
            )
        )
    elif rec.gpu and rec.driver_ok and smi and smi.driver_cuda and rec.build:
        have, need = parse_version(smi.driver_cuda), parse_version(rec.build.cuda)
        if have[0] == need[0] and have < need:
            out.append(
                Finding(
                    "minor-version-compatibility",
                    "info",
                    f"TF {rec.build.minor} is built with CUDA {rec.build.cuda}; your driver supports up to "
                    f"{smi.driver_cuda}. That works through CUDA minor-version compatibility (same major "
                    f"family, driver >= {table.min_driver(need[0], rec.platform)}), with a limited feature set.",
                    "Nothing to do; a newer driver lifts the limits.",
                )
            )
    out += note_findings(rec)
    return out


def _toolkit_findings(m: Machine, rec: Recommendation) -> list[Finding]:
    nvcc, smi, table, out = m.nvcc, m.smi, load(), []
    if nvcc is None or nvcc.status != "ok":
        return out
    toolkit = parse_version(nvcc.release)
    driver = smi.driver_version if smi and smi.status == "ok" else None
    if smi and smi.driver_cuda:
        limit, limit_text = parse_version(smi.driver_cuda), smi.driver_cuda
    elif driver and table.driver_cuda_major(driver, m.platform):
        major = table.driver_cuda_major(driver, m.platform)
        limit, limit_text = (major, 99), f"{major}.x"
    else:
        limit = None
    if limit is not None and toolkit > limit:
        same_family = toolkit[0] == limit[0]
        family_min = table.min_driver(toolkit[0], m.platform)
        if same_family:
            how = (
                f"Programs built with it run only under CUDA minor-version compatibility (same major family "
                f"{toolkit[0]}, driver >= {family_min}), with a limited feature set; PTX it generates fails with "
                "cudaErrorUnsupportedPtxVersion."
            )
        else:
            how = (
                f"Programs built with it do not run on this driver: CUDA {toolkit[0]}.x needs a driver >= {family_min}."
            )
        out.append(
            Finding(
                "toolkit-newer-than-driver",
                "warning",
                f"nvcc reports CUDA toolkit {nvcc.release}, newer than the CUDA {limit_text} the driver {driver} "
                f"supports. {how}",
                "For TensorFlow nothing to do: it never calls nvcc (see nvcc-not-used). For your own CUDA code, update "
                f"the driver to one that supports CUDA {nvcc.release}, or use a toolkit no newer than {limit_text}.",
            )
        )
    route = (
        "the CUDA/cuDNN pip wheels that tensorflow[and-cuda] brings"
        if "[and-cuda]" in rec.tensorflow
        else f"CUDA {rec.build.cuda} + cuDNN {rec.build.cudnn} (TF {rec.build.minor}'s tested pair)"
        if rec.build
        else "the libraries the TensorFlow package brings"
    )
    driver_text = (
        f"the driver ({driver}{', CUDA <= ' + smi.driver_cuda if smi and smi.driver_cuda else ''})"
        if driver
        else "the NVIDIA driver"
    )
    interferes = ""
    fix = "Choose TensorFlow by platform, Python and driver; the nvcc version is not an input to that choice."
    if m.platform in ("linux", "wsl2"):  # where tensorflow[and-cuda]'s pip wheels and a system toolkit can meet
        interferes = " " + table.rule("system-toolkit")["text"]
        fix += (
            " If TensorFlow then finds no GPU, loads the wrong cuDNN, or XLA fails to compile: keep the toolkit's "
            "library folder off LD_LIBRARY_PATH and do the pip guide's symlink step "
            f"({table.rule('system-toolkit')['source']})."
        )
    out.append(
        Finding(
            "nvcc-not-used",
            "info",
            f"nvcc is the CUDA toolkit's compiler ({nvcc.release} here). A pip-installed TensorFlow never calls nvcc: "
            f"what matters is {driver_text} and the CUDA/cuDNN runtime libraries TensorFlow loads - here {route}."
            + interferes,
            fix,
        )
    )
    return out


def _tensorflow_findings(m: Machine, rec: Recommendation) -> list[Finding]:
    tf, smi, table, out = m.tensorflow, m.smi, load(), []
    if tf is None:
        return out
    if not tf.installed:
        out.append(
            Finding(
                "tensorflow-not-installed",
                "info",
                f"TensorFlow is not importable here ({tf.error}).",
                "Install it: " + " && ".join(c for c in rec.commands if c.startswith("pip install")),
            )
        )
        return out
    nvidia_gpu = bool(smi and smi.status == "ok" and smi.gpus)
    hints = _log_hints(tf.startup_log, gpu=nvidia_gpu if smi is not None else None)
    if tf.built_with_cuda is False:
        windows = " (on native Windows every TensorFlow after 2.10 is CPU-only)" if m.platform == "windows" else ""
        out.append(
            Finding(
                "cpu-only-build",
                "error" if nvidia_gpu else "info",
                f"This TensorFlow ({tf.version}) is a CPU-only build (tf.test.is_built_with_cuda() is False){windows}: "
                "it can never use a GPU" + (", although nvidia-smi shows one." if nvidia_gpu else "."),
                f"For the GPU install {rec.tensorflow} instead: " + " ; ".join(rec.commands[:5])
                if rec.gpu
                else "Nothing to do on a machine without an NVIDIA GPU.",
            )
        )
    elif tf.gpus:
        names = ", ".join(
            g["name"] + (f" (compute capability {g['compute_capability']})" if g["compute_capability"] else "")
            for g in tf.gpus
        )
        out.append(
            Finding(
                "tensorflow-uses-gpu",
                "info",
                f"TensorFlow {tf.version} sees {len(tf.gpus)} GPU(s): {names}.",
                "Nothing to do.",
            )
        )
    elif nvidia_gpu:
        said = f" Its start-up log says: {' | '.join(hints)}" if hints else ""
        out.append(
            Finding(
                "tensorflow-sees-no-gpu",
                "error",
                f"nvidia-smi shows {len(smi.gpus)} GPU(s) but TensorFlow {tf.version} (a CUDA {tf.cuda_version} build) "
                f"sees none.{said}",
                f"Install {rec.tensorflow} (it brings CUDA and cuDNN as pip wheels); "
                f"{table.rule('pip-symlink-step')['text']}",
            )
        )
    else:
        said = f" Its start-up log says: {' | '.join(hints[:2])}" if hints else ""
        out.append(
            Finding(
                "tensorflow-sees-no-gpu",
                "info",
                f"TensorFlow {tf.version} (a CUDA {tf.cuda_version} build) sees no GPU, as expected without "
                f"an NVIDIA driver.{said}",
                "Nothing to do unless this machine has an NVIDIA GPU.",
            )
        )
    for entry in classify(tf.startup_log).entries:
        if entry.code == "cudnn-mismatch":
            out.append(
                Finding(
                    "cudnn-mismatch",
                    "error",
                    f"TensorFlow loaded cuDNN {entry.details.get('runtime')} but was built with "
                    f"{entry.details.get('compiled')}. " + table.cudnn_rule["text"],
                    "Another package (often PyTorch) pinned an older cuDNN in this environment: give "
                    "TensorFlow its own environment, or install a cuDNN of the same major and at least "
                    "the same minor version.",
                )
            )
    if tf.built_with_cuda and tf.compute_capabilities:
        out += _coverage_findings(
            tf,
            [(g["name"], g["compute_capability"]) for g in tf.gpus]
            + [(g.name, g.compute_capability) for g in (smi.gpus if smi else [])],
        )
    tb_since = table.rule("tensorboard-separate")["since"]
    if (
        tf.version
        and parse_version(tf.version) >= parse_version(tb_since)
        and importlib.util.find_spec("tensorboard") is None
    ):
        out.append(
            Finding(
                "tensorboard-not-installed",
                "info",
                table.rule("tensorboard-separate")["text"],
                f'pip install "tensorboard=={".".join(tf.version.split(".")[:2])}.*"',
            )
        )
    return out


def _coverage_findings(tf: TensorFlowInfo, gpus: list[tuple[str, str | None]]) -> list[Finding]:
    """A GPU the installed CUDA build has no code for (NVIDIA's binary-compatibility rules, gpus.covered_by_build)."""
    table, out, seen = load(), [], set()
    rule = table.rule("compute-capability-5-dropped")
    for name, reported in gpus:
        generation = identify(name, reported)
        if not generation.known or generation.compute_capability in seen:
            continue
        seen.add(generation.compute_capability)
        coverage = covered_by_build(generation.compute_capability, tf.compute_capabilities, tf.version)
        if coverage.covered:
            continue
        if parse_version(generation.compute_capability)[0] == 5:
            last = table.newest("linux", before=rule["since"])
            fix = (
                f"TF {last.minor} is the last release with 5.x kernels: on Linux or WSL2 "
                f"`{pip_install(f'tensorflow[and-cuda]=={last.minor}.*', last.minor)}` (Python {last.python_min}-"
                f"{last.python_max}; the course's notebooks are tested with newer TensorFlow) - or use a GPU of "
                f"compute capability {rule['min_compute_capability']} or newer, or a hosted GPU (Colab, Kaggle)."
            )
        else:
            fix = (
                f"Use a GPU of compute capability {rule['min_compute_capability']} or newer, or a hosted GPU "
                "(Colab, Kaggle); TensorFlow runs on the CPU meanwhile."
            )
        out.append(
            Finding(
                "compute-capability-unsupported",
                "error",
                f"{name} has {generation.describe()}; this TensorFlow {tf.version}: {coverage.reason}. {rule['text']}",
                fix,
            )
        )
    return out


def diagnose(machine: Machine | None = None) -> Diagnosis:
    """Diagnose a machine (default: this one, probed live) and say what to install."""
    m = machine if machine is not None else probe()
    smi = m.smi
    driver = smi.driver_version if smi and smi.status == "ok" else None
    driver_cuda = smi.driver_cuda if smi and smi.status == "ok" else None
    gpu: bool | str | None = False if (smi and smi.status == "no-devices" and m.live) else None
    reported = None
    if gpu is None:  # the GPU's name and compute capability: TensorFlow's view first, then nvidia-smi's
        seen = [(g["name"], g["compute_capability"]) for g in (m.tensorflow.gpus if m.tensorflow else [])]
        seen += [(g.name, g.compute_capability) for g in (smi.gpus if smi and smi.status == "ok" else [])]
        gpu, reported = seen[0] if seen else (None, None)
    options = routes(m.platform, m.python, driver, gpu, driver_cuda=driver_cuda, compute_capability=reported)
    rec, alternatives = options[0], options[1:]
    findings: list[Finding] = []
    if m.platform_note:
        findings.append(
            Finding(
                "platform-assumed",
                "info",
                f"No platform given: {m.platform_note}.",
                "Pass --platform linux, wsl2, windows or macos.",
            )
        )
    findings += _driver_findings(m, rec)
    findings += _route_findings(m, rec, alternatives)
    findings += _toolkit_findings(m, rec)
    findings += _tensorflow_findings(m, rec)
    findings += check_findings(m.checks or [])
    order = {"error": 0, "warning": 1, "info": 2}
    findings.sort(key=lambda f: order[f.severity])
    return Diagnosis(m, rec, alternatives, findings)


# --------------------------------------------------------------------------- command line


def _read(path: str) -> str:
    """A captured file's text, UTF-8 or UTF-16 (Windows PowerShell's ``>``); ``-`` reads standard input."""
    data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    return decode_text(data)


def _log_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``course doctor --log FILE``: the problem line and its fix first, then every line's verdict."""
    if args.log == "-" and args.nvidia_smi == "-":
        parser.error("only one of --log and --nvidia-smi can read stdin")
    try:
        text = read_log(args.log)
        smi_text = _read(args.nvidia_smi) if args.nvidia_smi else None
    except InputError as error:
        print(f"course doctor: {error.what}\nWhat to do: {error.fix}", file=sys.stderr)
        return 2
    except OSError as error:
        parser.error(f"cannot read {error.filename}: {error.strerror}")
    gpu = args.gpu
    if gpu is None and smi_text is not None:
        smi = parse_nvidia_smi(smi_text)
        gpu = {"ok": bool(smi.gpus), "no-driver": True, "no-devices": False}.get(smi.status)
    report = classify(text, gpu=gpu)
    findings = log_findings(report)
    if args.json:
        print(json.dumps({"log": report.to_dict(), "findings": [f.to_dict() for f in findings]}, indent=2))
    else:
        status = "a problem line found (exit status 1)" if report.problem else "no problem line (exit status 0)"
        more = [f"  {code}: {link}" for code, link in links(report.codes()).items()]
        help_text = "\n\nMore help (docs/troubleshooting.md), by code:\n" + "\n".join(more) if more else ""
        print(report.text() + help_text + f"\n\nResult: {status}")
    return 1 if report.problem else 0


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
        parser.error("--gpu/--no-gpu go with --log")
    if args.python is not None and normalize_python(args.python) is None:
        parser.error(f"--python {args.python!r} is not a version like 3.11")
    try:
        smi_text = _read(args.nvidia_smi) if args.nvidia_smi else None
        nvcc_text = _read(args.nvcc) if args.nvcc else None
    except OSError as error:
        parser.error(f"cannot read {error.filename}: {error.strerror}")
    if smi_text is not None or nvcc_text is not None:
        machine = describe(args.platform, args.python, smi_text, nvcc_text)
    else:
        machine = probe(args.platform, args.python)
    result = diagnose(machine)
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        print(result.report())
    return result.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
