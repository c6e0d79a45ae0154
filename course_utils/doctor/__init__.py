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

Language: ``COURSE_LANG=zh-CN course doctor`` reports in Simplified Chinese (``course_utils.i18n``,
catalogue domain "doctor"). Codes, severities, verdicts, commands, version numbers and the tools' own
words stay as they are. The JSON keeps its keys and structure in every language; its sentences for
people (a finding's ``message`` and ``fix``, a note's ``text``, nvidia-smi ``problems``, a log
entry's ``meaning`` and ``fix``, ``gpu_reason``) and its ``see`` links (the Chinese troubleshooting
page) follow the language too, so a program must match on the codes, never on the wording.
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
    Gpu,
    NvccReport,
    SmiReport,
    parse_nvcc,
    parse_nvidia_smi,
    probe_nvcc,
    probe_nvidia_smi,
    windows_evidence,
)
from course_utils.doctor.recommend import (
    Note,
    Recommendation,
    normalize_python,
    pip_install,
    platform_name,
    recommend,
    routes,
)
from course_utils.doctor.texts import N_, join, sentence
from course_utils.doctor.troubleshooting import links, more_line, page
from course_utils.doctor.versions import PLATFORMS, check_platform, load, parse_version
from course_utils.errors import InputError
from course_utils.i18n import translator
from course_utils.tf_setup import quiet_tensorflow, startup_log

_ = translator("doctor")

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
    """How a recommendation note becomes a finding: its code, severity and fix (English, marked ``N_``; translated,
    then ``{rec.python}`` etc. and ``{command}`` filled in, when the finding is made)."""

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
        N_("Use Python {rec.python} for TensorFlow (the commands create that environment)."),
    ),
    "python-limits-tensorflow": NoteFinding(
        "python-limits-tensorflow", "warning", N_("Use a newer Python for the newest TensorFlow.")
    ),
    "keras-2-only": NoteFinding(
        "keras-2-only",
        "warning",
        N_(
            "For this course use TensorFlow 2.16 or newer (Keras 3): WSL2 or Linux with the current TensorFlow, "
            "or the CPU."
        ),
    ),
    "gpu-too-old": NoteFinding(
        "gpu-too-old",
        "warning",
        N_("Install what the commands above say, or use a GPU of compute capability 6.0 or newer (or a hosted GPU)."),
    ),
    "gpu-known-failure": NoteFinding(
        "gpu-known-failure",
        "warning",
        N_(
            "Until a TensorFlow release supports this GPU, train on the CPU or on a hosted GPU (Colab, Kaggle); "
            "the issue threads say when that changes."
        ),
    ),
    "gpu-generation-unknown": NoteFinding(
        "gpu-generation-unknown",
        "info",
        N_("Run `{command}` and give its output to the doctor (--nvidia-smi FILE)."),
    ),
}


def note_findings(rec: Recommendation) -> list[Finding]:
    """The findings ``rec``'s notes give, by ``NOTE_FINDINGS`` (their codes decide, their wording does not)."""
    out = []
    for note in rec.notes:
        how = NOTE_FINDINGS.get(note.code)
        if how is not None:
            fix = _(how.fix).format(rec=rec, command=QUERY_COMMAND)
            out.append(Finding(how.code, how.severity, sentence(note.text), fix))
    return out


MAIN_GROUP = N_("Install, driver and TensorFlow")  # English, like the live checks' groups; translated in the report


def check_findings(notes: list[Note], python: str | None = None) -> list[Finding]:
    """The findings the live checks' notes give, by ``checks.CHECK_FINDINGS`` (codes decide, wording does not);
    ``python`` fills ``{python}`` in the fixes (default: this Python)."""
    out = []
    for note in notes:
        how = CHECK_FINDINGS.get(note.code)
        if how is not None:
            wsl2 = load().rule("wsl2")
            fix = _(how.fix).format(
                python=python or sys.executable,
                wsl_driver_min=wsl2["driver_min"],
                wsl_windows_build=wsl2["windows_build_min"],
            )
            out.append(Finding(note.code, how.severity, sentence(note.text), fix))
    return out


def finding_groups(findings: list[Finding]) -> dict[str, list[Finding]]:
    """Findings by what they look at (the live checks' groups, by code, English), in order; empty groups left
    out."""
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
        if len(entry.lines) == 1:
            message = _("line {number}: {line} - {meaning}")
        else:
            message = _("lines {number}, ...: {line} - {meaning}")
        message = message.format(number=entry.lines[0], line=entry.message[:200], meaning=entry.meaning)
        out.append(Finding(entry.code, _LOG_SEVERITY[entry.verdict], sentence(message), entry.fix))
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
        return "windows", _("assumed native Windows from {evidence} (pass --platform to change it)").format(
            evidence=evidence
        )
    return "linux", _("assumed Linux (pass --platform wsl2, windows or macos to change it)")


def probe_tensorflow() -> TensorFlowInfo:
    """Import TensorFlow quietly (its start-up log captured) and read its build and devices."""

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
        ``{"code", "text"}`` objects). The keys, codes and groups are the same in every language; the
        sentences (messages, fixes, note texts, problems) and the ``see`` links follow the language now."""
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
        if m.live:
            who = _("This machine: {platform}, Python {python}")
        else:
            who = _("Described machine: {platform}, Python {python}")
        lines = [who.format(platform=platform_name(m.platform), python=m.python or _("(not given)"))]
        if smi is None:
            lines.append("  " + _("NVIDIA driver: not looked at"))
        elif smi.status == "ok":
            version = smi.driver_version or _("unreadable")
            if smi.driver_cuda:
                driver = _("NVIDIA driver: {version}, supports CUDA up to {cuda}").format(
                    version=version, cuda=smi.driver_cuda
                )
            else:
                driver = _("NVIDIA driver: {version}").format(version=version)
            lines.append("  " + driver)
            for g in smi.gpus:
                lines.append(f"  GPU {g.index}: {g.name} ({_gpu_details(g)})")
                lines.append(f"    {_coverage_line(g.name, g.compute_capability, m.tensorflow)}")
        else:
            said = smi.message or "; ".join(smi.problems)
            lines.append("  " + _("NVIDIA driver: none found ({status}: {said})").format(status=smi.status, said=said))
        if nvcc is not None:
            release = nvcc.release if nvcc.status == "ok" else nvcc.status
            lines.append("  " + _("CUDA toolkit (nvcc): {release}").format(release=release))
        tf = m.tensorflow
        if tf is not None:
            if tf.installed and tf.built_with_cuda:
                line = _("TensorFlow: {version} (CUDA build {cuda}), GPUs visible: {count}")
            elif tf.installed:
                line = _("TensorFlow: {version} (CPU-only build), GPUs visible: {count}")
            else:
                line = _("TensorFlow: not importable ({error})")
            lines.append(
                "  " + line.format(version=tf.version, cuda=tf.cuda_version, count=len(tf.gpus), error=tf.error)
            )
        lines += ["", _("Install:"), self.recommendation.text()]
        for alt in self.alternatives:
            lines += ["", _("Or:"), alt.text()]
        lines += ["", _("Findings:")]
        groups = finding_groups(self.findings)
        pad = "  " if len(groups) > 1 else ""
        for group, found in groups.items():
            if pad:
                # Translators: a heading of the report's findings, "{group}" is one of the groups' names
                lines.append("  " + _("{group}:").format(group=_(group)))
            for f in found:
                lines.append(f"{pad}  [{f.severity}] {f.code}: {f.message}")
                lines.append(f"{pad}      " + _("fix: {fix}").format(fix=f.fix))
                lines += more_line(f.code, f"{pad}      ")
        status = _("Result: errors found (exit status 1)") if self.exit_code else _("Result: no errors (exit status 0)")
        lines += ["", status]
        return "\n".join(lines)


def _gpu_details(gpu: Gpu) -> str:
    """``"8188 MiB, WDDM"``: the GPU's memory and (on Windows) its driver model."""
    memory = f"{gpu.memory_mib} MiB" if gpu.memory_mib is not None else _("memory unknown")
    return f"{memory}, {gpu.driver_model}" if gpu.driver_model else memory


def _coverage_line(name: str, reported: str | None, tf: TensorFlowInfo | None) -> str:
    """One GPU's generation and whether a TensorFlow build covers it: the installed CUDA build's own target list,
    else the wheels of the newest TensorFlow the table has a list for."""
    generation = identify(name, reported)
    if not generation.known:
        return _("{generation}: run `{command}` to read it").format(
            generation=generation.describe(), command=QUERY_COMMAND
        )
    fields = {"generation": generation.describe()}
    if tf is not None and tf.installed and tf.built_with_cuda and tf.compute_capabilities:
        targets, line = tf.compute_capabilities, _("{generation}; for this TensorFlow {tensorflow}: {reason}")
        fields["tensorflow"] = tf.version
    else:
        line, fields["tensorflow"] = _("{generation}; for TF {tensorflow}'s wheels: {reason}"), load().linux[0].minor
        targets = build_targets(load().linux[0].minor)
    coverage = covered_by_build(generation.compute_capability, targets, tf.version if tf and tf.version else None)
    return line.format(reason=coverage.reason, **fields)


def _gpu_summary(smi: SmiReport) -> str:
    if not smi.gpus:
        return _("no GPU rows could be read")
    parts = []
    for g in smi.gpus:
        memory = f"{g.memory_mib} MiB" if g.memory_mib is not None else _("memory unknown")
        if g.driver_model:
            extra = _("{memory}, {model} mode").format(memory=memory, model=g.driver_model)
        else:
            extra = memory
        parts.append(f"GPU {g.index}: {g.name} ({extra})")
    return "; ".join(parts)


def _driver_findings(m: Machine, rec: Recommendation) -> list[Finding]:
    smi, table, out = m.smi, load(), []
    if smi is None:
        return out
    where = platform_name(m.platform)
    problems = "; ".join(smi.problems)
    paste = _("Paste the complete output of `nvidia-smi` (or run the doctor on the machine itself).")
    if smi.status == "ok" and smi.driver_version is None:  # a table, but its driver version cannot be read
        out.append(
            Finding(
                "nvidia-smi-partly-read",
                "warning",
                _(
                    "An NVIDIA driver answered, but its version cannot be read from this nvidia-smi output: "
                    "{problems}. The advice below assumes nothing about the driver."
                ).format(problems=problems),
                paste,
            )
        )
    elif smi.status == "ok":
        if smi.driver_cuda:
            driver = _("NVIDIA driver {version}; it supports CUDA up to {cuda}. {gpus}.")
        else:
            driver = _("NVIDIA driver {version}. {gpus}.")
        out.append(
            Finding(
                "nvidia-driver",
                "info",
                driver.format(version=smi.driver_version, cuda=smi.driver_cuda, gpus=_gpu_summary(smi)),
                _("Nothing to do."),
            )
        )
        if smi.problems:
            out.append(
                Finding(
                    "nvidia-smi-partly-read",
                    "info",
                    _("Parts of the nvidia-smi output could not be read: {problems}.").format(problems=problems),
                    paste,
                )
            )
    elif smi.status in ("missing", "no-driver"):
        if m.platform == "macos":
            return out
        severity = "error" if smi.status == "no-driver" else "warning"
        if smi.status == "no-driver":
            what = _(
                "nvidia-smi is installed but cannot talk to the NVIDIA driver ({said}): TensorFlow can only use the "
                "CPU on {platform}."
            )
        else:
            what = _("No NVIDIA driver was found ({said}): TensorFlow can only use the CPU on {platform}.")
        if m.platform == "wsl2":
            minimum = rec.driver_min or table.rule("wsl2")["driver_min"]
            fix = _("Install or update the NVIDIA driver on Windows (>= {minimum}); {rule}").format(
                minimum=minimum, rule=table.rule("wsl2-no-linux-driver")["text"]
            )
        else:
            fix = _(
                "If this machine has an NVIDIA GPU, install NVIDIA's driver (>= {minimum}) and reboot; "
                "without one, TensorFlow runs on the CPU (every notebook of this course still works)."
            ).format(minimum=rec.driver_min)
        said = smi.message or _("no output")
        out.append(Finding("no-nvidia-driver", severity, what.format(said=said, platform=where), fix))
    elif smi.status == "no-devices":
        out.append(
            Finding(
                "no-nvidia-gpu",
                "warning",
                _('The NVIDIA driver is loaded but nvidia-smi found no GPU ("No devices were found").'),
                _(
                    "Check that the GPU is seated and enabled (BIOS, passthrough, power); until then TensorFlow "
                    "uses the CPU."
                ),
            )
        )
    else:
        out.append(
            Finding(
                "nvidia-smi-unreadable",
                "warning",
                _("Could not read the nvidia-smi output: {problems}.").format(problems=problems),
                _(
                    "If that line says the command was not found (in any language), this machine has no NVIDIA "
                    "driver, or nvidia-smi is not on PATH; otherwise give the doctor the complete, unedited output "
                    "of `nvidia-smi`."
                ),
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
        tf = m.tensorflow
        installed_cpu_only = bool(
            tf is not None and tf.installed and tf.version and parse_version(tf.version)[:2] > parse_version(last)[:2]
        )
        if installed_cpu_only:
            message = _(
                "Native Windows has no GPU TensorFlow after {last}: TF 2.11 and later install CPU-only there. "
                "TF {last} was built and tested with CUDA {cuda} and cuDNN {cudnn}, on Python {low}-{high}. "
                "The installed TensorFlow {installed} cannot use the GPU."
            )
        else:
            message = _(
                "Native Windows has no GPU TensorFlow after {last}: TF 2.11 and later install CPU-only there. "
                "TF {last} was built and tested with CUDA {cuda} and cuDNN {cudnn}, on Python {low}-{high}."
            )
        if wsl.driver_min and driver and parse_version(driver) < parse_version(wsl.driver_min):
            fix = _(
                "Either stay on native Windows with the official conda recipe - `{conda}`, then `{install}` in a "
                "Python <= {high} environment; TF {last} comes with Keras 2, so the course's notebooks (Keras 3) do "
                'not run there - or use WSL2 with current TensorFlow: `pip install "{wsl}"` (Windows 10 {build} or '
                "newer, Windows NVIDIA driver >= {minimum} - yours is {driver}, update it first)."
            )
        else:
            fix = _(
                "Either stay on native Windows with the official conda recipe - `{conda}`, then `{install}` in a "
                "Python <= {high} environment; TF {last} comes with Keras 2, so the course's notebooks (Keras 3) do "
                'not run there - or use WSL2 with current TensorFlow: `pip install "{wsl}"` (Windows 10 {build} or '
                "newer, Windows NVIDIA driver >= {minimum})."
            )
        fields = {"last": last, "cuda": build.cuda, "cudnn": build.cudnn, "low": build.python_min}
        fields.update(high=build.python_max, installed=tf.version if tf else None, conda=recipe["conda"])
        fields.update(install=pip_install(recipe["requirement"], build.minor), wsl=wsl.tensorflow, driver=driver)
        fields.update(build=table.rule("wsl2")["windows_build_min"], minimum=wsl.driver_min)
        out.append(
            Finding(
                "windows-native-no-gpu-after-2.10",
                "error" if installed_cpu_only and smi and smi.gpus else "warning",
                message.format(**fields),
                fix.format(**fields),
            )
        )
    if m.platform == "macos":
        out.append(
            Finding(
                "macos-no-cuda",
                "info",
                table.rule("macos")["text"],
                _("Install {tensorflow} (the commands above). Apple's Metal plugin is a separate route: {rule}").format(
                    tensorflow=rec.tensorflow, rule=table.rule("macos-metal")["text"]
                ),
            )
        )
    if rec.gpu and rec.driver_ok is False:
        out.append(Finding("driver-too-old", "error", _old_driver_message(rec, smi), _old_driver_fix(rec)))
    elif rec.gpu and rec.driver_ok and smi and smi.driver_cuda and rec.build:
        have, need = parse_version(smi.driver_cuda), parse_version(rec.build.cuda)
        if have[0] == need[0] and have < need:
            out.append(
                Finding(
                    "minor-version-compatibility",
                    "info",
                    _(
                        "TF {tensorflow} is built with CUDA {cuda}; your driver supports up to {driver_cuda}. That "
                        "works through CUDA minor-version compatibility (same major family, driver >= {minimum}), "
                        "with a limited feature set."
                    ).format(
                        tensorflow=rec.build.minor,
                        cuda=rec.build.cuda,
                        driver_cuda=smi.driver_cuda,
                        minimum=table.min_driver(need[0], rec.platform),
                    ),
                    _("Nothing to do; a newer driver lifts the limits."),
                )
            )
    out += note_findings(rec)
    return out


def _old_driver_message(rec: Recommendation, smi: SmiReport | None) -> str:
    """driver-too-old's message: the driver, the CUDA it supports (when nvidia-smi said), and what TF needs."""
    if smi and smi.driver_cuda:
        text = _(
            "The NVIDIA driver {driver} (it supports CUDA up to {driver_cuda}) is older than the {minimum} that TF "
            "{tensorflow} (CUDA {cuda}) needs on {platform}."
        )
    else:
        text = _(
            "The NVIDIA driver {driver} is older than the {minimum} that TF {tensorflow} (CUDA {cuda}) needs on "
            "{platform}."
        )
    return text.format(
        driver=rec.driver,
        driver_cuda=smi.driver_cuda if smi else None,
        minimum=rec.driver_min,
        tensorflow=rec.build.minor,
        cuda=rec.build.cuda,
        platform=platform_name(rec.platform),
    )


def _old_driver_fix(rec: Recommendation) -> str:
    """driver-too-old's fix: update the driver, or the fallback build this driver runs (with what it needs)."""
    if not rec.fallback:
        return _("Update the NVIDIA driver to >= {minimum}; no tested TensorFlow build runs on this driver.").format(
            minimum=rec.driver_min
        )
    build = rec.fallback_build
    system = bool(build and rec.platform != "windows" and "[and-cuda]" not in rec.fallback)
    keras_2 = bool(build and load().keras_2(build.minor))
    if system and keras_2:
        text = _(
            "Update the NVIDIA driver to >= {minimum}; if you cannot, {fallback} is the newest tested TensorFlow whose "
            "CUDA family this driver supports (CUDA minor-version compatibility): `{install}`, with CUDA {cuda} and "
            "cuDNN {cudnn} on the system - it comes with Keras 2, on which the course's notebooks do not run."
        )
    elif system:
        text = _(
            "Update the NVIDIA driver to >= {minimum}; if you cannot, {fallback} is the newest tested TensorFlow whose "
            "CUDA family this driver supports (CUDA minor-version compatibility): `{install}`, with CUDA {cuda} and "
            "cuDNN {cudnn} on the system."
        )
    elif keras_2:
        text = _(
            "Update the NVIDIA driver to >= {minimum}; if you cannot, {fallback} is the newest tested TensorFlow whose "
            "CUDA family this driver supports (CUDA minor-version compatibility): `{install}` - it comes with Keras 2, "
            "on which the course's notebooks do not run."
        )
    else:
        text = _(
            "Update the NVIDIA driver to >= {minimum}; if you cannot, {fallback} is the newest tested TensorFlow whose "
            "CUDA family this driver supports (CUDA minor-version compatibility): `{install}`."
        )
    return text.format(
        minimum=rec.driver_min,
        fallback=rec.fallback,
        install=rec.fallback_install,
        cuda=build.cuda if build else None,
        cudnn=build.cudnn if build else None,
    )


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
            how = _(
                "Programs built with it run only under CUDA minor-version compatibility (same major family "
                "{major}, driver >= {minimum}), with a limited feature set; PTX it generates fails with "
                "cudaErrorUnsupportedPtxVersion."
            )
        else:
            how = _("Programs built with it do not run on this driver: CUDA {major}.x needs a driver >= {minimum}.")
        how = how.format(major=toolkit[0], minimum=family_min)
        out.append(
            Finding(
                "toolkit-newer-than-driver",
                "warning",
                _(
                    "nvcc reports CUDA toolkit {release}, newer than the CUDA {limit} the driver {driver} supports. "
                    "{how}"
                ).format(release=nvcc.release, limit=limit_text, driver=driver, how=how),
                _(
                    "For TensorFlow nothing to do: it never calls nvcc (see nvcc-not-used). For your own CUDA code, "
                    "update the driver to one that supports CUDA {release}, or use a toolkit no newer than {limit}."
                ).format(release=nvcc.release, limit=limit_text),
            )
        )
    if "[and-cuda]" in rec.tensorflow:
        route = _("the CUDA/cuDNN pip wheels that tensorflow[and-cuda] brings")
    elif rec.build:
        route = _("CUDA {cuda} + cuDNN {cudnn} (TF {tensorflow}'s tested pair)").format(
            cuda=rec.build.cuda, cudnn=rec.build.cudnn, tensorflow=rec.build.minor
        )
    else:
        route = _("the libraries the TensorFlow package brings")
    if driver and smi and smi.driver_cuda:
        driver_text = _("the driver ({driver}, CUDA <= {cuda})").format(driver=driver, cuda=smi.driver_cuda)
    elif driver:
        driver_text = _("the driver ({driver})").format(driver=driver)
    else:
        driver_text = _("the NVIDIA driver")
    message = _(
        "nvcc is the CUDA toolkit's compiler ({release} here). A pip-installed TensorFlow never calls nvcc: what "
        "matters is {driver} and the CUDA/cuDNN runtime libraries TensorFlow loads - here {route}."
    ).format(release=nvcc.release, driver=driver_text, route=route)
    fix = _("Choose TensorFlow by platform, Python and driver; the nvcc version is not an input to that choice.")
    if m.platform in ("linux", "wsl2"):  # where tensorflow[and-cuda]'s pip wheels and a system toolkit can meet
        message = join(message, table.rule("system-toolkit")["text"])
        fix = join(
            fix,
            _(
                "If TensorFlow then finds no GPU, loads the wrong cuDNN, or XLA fails to compile: keep the toolkit's "
                "library folder off LD_LIBRARY_PATH and do the pip guide's symlink step ({source})."
            ).format(source=table.rule("system-toolkit")["source"]),
        )
    out.append(Finding("nvcc-not-used", "info", message, fix))
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
                _("TensorFlow is not importable here ({error}).").format(error=tf.error),
                _("Install it: {commands}").format(
                    commands=" && ".join(c for c in rec.commands if c.startswith("pip install"))
                ),
            )
        )
        return out
    nvidia_gpu = bool(smi and smi.status == "ok" and smi.gpus)
    hints = _log_hints(tf.startup_log, gpu=nvidia_gpu if smi is not None else None)
    if tf.built_with_cuda is False:
        windows = m.platform == "windows"
        if nvidia_gpu and windows:
            message = _(
                "This TensorFlow ({version}) is a CPU-only build (tf.test.is_built_with_cuda() is False) (on native "
                "Windows every TensorFlow after 2.10 is CPU-only): it can never use a GPU, although nvidia-smi "
                "shows one."
            )
        elif nvidia_gpu:
            message = _(
                "This TensorFlow ({version}) is a CPU-only build (tf.test.is_built_with_cuda() is False): it can "
                "never use a GPU, although nvidia-smi shows one."
            )
        elif windows:
            message = _(
                "This TensorFlow ({version}) is a CPU-only build (tf.test.is_built_with_cuda() is False) (on native "
                "Windows every TensorFlow after 2.10 is CPU-only): it can never use a GPU."
            )
        else:
            message = _(
                "This TensorFlow ({version}) is a CPU-only build (tf.test.is_built_with_cuda() is False): it can "
                "never use a GPU."
            )
        if rec.gpu:
            fix = _("For the GPU install {tensorflow} instead: {commands}").format(
                tensorflow=rec.tensorflow, commands=" ; ".join(rec.commands[:5])
            )
        else:
            fix = _("Nothing to do on a machine without an NVIDIA GPU.")
        out.append(
            Finding("cpu-only-build", "error" if nvidia_gpu else "info", message.format(version=tf.version), fix)
        )
    elif tf.gpus:
        names = ", ".join(
            _("{name} (compute capability {cc})").format(name=g["name"], cc=g["compute_capability"])
            if g["compute_capability"]
            else g["name"]
            for g in tf.gpus
        )
        out.append(
            Finding(
                "tensorflow-uses-gpu",
                "info",
                _("TensorFlow {version} sees {count} GPU(s): {names}.").format(
                    version=tf.version, count=len(tf.gpus), names=names
                ),
                _("Nothing to do."),
            )
        )
    elif nvidia_gpu:
        message = _("nvidia-smi shows {count} GPU(s) but TensorFlow {version} (a CUDA {cuda} build) sees none.")
        message = message.format(count=len(smi.gpus), version=tf.version, cuda=tf.cuda_version)
        if hints:
            message = join(message, _("Its start-up log says: {lines}").format(lines=" | ".join(hints)))
        out.append(
            Finding(
                "tensorflow-sees-no-gpu",
                "error",
                message,
                _("Install {tensorflow} (it brings CUDA and cuDNN as pip wheels); {rule}").format(
                    tensorflow=rec.tensorflow, rule=table.rule("pip-symlink-step")["text"]
                ),
            )
        )
    else:
        message = _(
            "TensorFlow {version} (a CUDA {cuda} build) sees no GPU, as expected without an NVIDIA driver."
        ).format(version=tf.version, cuda=tf.cuda_version)
        if hints:
            message = join(message, _("Its start-up log says: {lines}").format(lines=" | ".join(hints[:2])))
        out.append(
            Finding(
                "tensorflow-sees-no-gpu",
                "info",
                message,
                _("Nothing to do unless this machine has an NVIDIA GPU."),
            )
        )
    for entry in classify(tf.startup_log).entries:
        if entry.code == "cudnn-mismatch":
            out.append(
                Finding(
                    "cudnn-mismatch",
                    "error",
                    _("TensorFlow loaded cuDNN {runtime} but was built with {compiled}. {rule}").format(
                        runtime=entry.details.get("runtime"),
                        compiled=entry.details.get("compiled"),
                        rule=table.cudnn_rule["text"],
                    ),
                    _(
                        "Another package (often PyTorch) pinned an older cuDNN in this environment: give "
                        "TensorFlow its own environment, or install a cuDNN of the same major and at least "
                        "the same minor version."
                    ),
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
                table.rule("tensorboard-separate")["text"],  # in the language now (versions.Row)
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
            fix = _(
                "TF {tensorflow} is the last release with 5.x kernels: on Linux or WSL2 `{install}` (Python "
                "{low}-{high}; the course's notebooks are tested with newer TensorFlow) - or use a GPU of compute "
                "capability {minimum} or newer, or a hosted GPU (Colab, Kaggle)."
            ).format(
                tensorflow=last.minor,
                install=pip_install(f"tensorflow[and-cuda]=={last.minor}.*", last.minor),
                low=last.python_min,
                high=last.python_max,
                minimum=rule["min_compute_capability"],
            )
        else:
            fix = _(
                "Use a GPU of compute capability {minimum} or newer, or a hosted GPU (Colab, Kaggle); TensorFlow "
                "runs on the CPU meanwhile."
            ).format(minimum=rule["min_compute_capability"])
        out.append(
            Finding(
                "compute-capability-unsupported",
                "error",
                _("{name} has {generation}; this TensorFlow {version}: {reason}. {rule}").format(
                    name=name,
                    generation=generation.describe(),
                    version=tf.version,
                    reason=coverage.reason,
                    rule=rule["text"],
                ),
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
                _("No platform given: {how}.").format(how=m.platform_note),
                _("Pass --platform linux, wsl2, windows or macos."),
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
        print(result.report())
    return result.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
