"""The doctor's data: what it found (``Finding``), the machine it looked at (``Machine``, ``TensorFlowInfo``) and its
answer (``Diagnosis``), with the JSON and the two readable reports they give: the short one (``summary``: the verdict,
the one install to follow, the errors and warnings) and the whole one (``report``, ``course doctor --verbose``).

How other answers become findings lives here too, each by its codes (never by its wording): a recommendation's notes
and the live checks' notes (``NOTE_FINDINGS``, ``CHECK_FINDINGS``: findings.json) and a classified TensorFlow log's
lines.
"""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass, field
from typing import Any

from course_utils.core.i18n import N_, translator
from course_utils.doctor.gpus import QUERY_COMMAND, build_targets, covered_by_build, identify
from course_utils.doctor.logs import LogReport, classify
from course_utils.doctor.nvidia import NvccReport, SmiReport
from course_utils.doctor.recommend import Recommendation, in_order, platform_name
from course_utils.doctor.texts import Note, join, sentence
from course_utils.doctor.troubleshooting import links, more_line
from course_utils.doctor.versions import load, localized, read_data

_ = translator("doctor")


@dataclass(frozen=True)
class Finding:
    """One thing the doctor found: ``code`` is stable (tools match on it), the rest is for people."""

    code: str
    severity: str  # "info", "warning" or "error"
    message: str
    fix: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def worst_first(findings: list[Finding]) -> list[Finding]:
    """Errors, then warnings, then information; in their order within each."""
    return sorted(findings, key=lambda f: ("error", "warning", "info").index(f.severity))


# The report's groups of findings: English (the JSON's "group"), translated in the report.
MAIN_GROUP = N_("Install, driver and TensorFlow")
GROUP_LIBRARIES = N_("NVIDIA libraries from pip")
GROUP_WSL = N_("WSL2")
GROUP_KERNELS = N_("Jupyter kernels")
GROUP_PYTHON = N_("Python")
GROUPS = (GROUP_PYTHON, GROUP_LIBRARIES, GROUP_WSL, GROUP_KERNELS)


# How a note becomes a finding, by its code (findings.json): the severity, the fix (a text entry, shown in the
# language now and filled in when the finding is made), a live check's report group, and the finding's code where it
# is not the note's.
CHECK_FINDINGS: dict[str, dict[str, Any]] = read_data("findings")["checks"]
NOTE_FINDINGS: dict[str, dict[str, Any]] = read_data("findings")["notes"]


def _findings(notes: list[Note], rules: dict[str, dict[str, Any]], **fields: Any) -> list[Finding]:
    """The findings ``notes`` give by ``rules`` (their codes decide, their wording does not): the note's text as the
    message, the rule's fix in the language now, filled in with ``fields``."""
    return [
        Finding(rule.get("code", note.code), rule["severity"], sentence(note.text),
                localized(rule["fix"]).format(**fields))
        for note in notes
        if (rule := rules.get(note.code)) is not None
    ]


def note_findings(rec: Recommendation) -> list[Finding]:
    """The findings ``rec``'s notes give, by ``NOTE_FINDINGS``."""
    return _findings(rec.notes, NOTE_FINDINGS, rec=rec, command=QUERY_COMMAND)


def check_findings(notes: list[Note]) -> list[Finding]:
    """The findings the live checks' notes give, by ``CHECK_FINDINGS``, their fixes filled in for this machine."""
    wsl2 = load().rule("wsl2")
    return _findings(
        notes,
        CHECK_FINDINGS,
        python=sys.executable,
        wsl_driver_min=wsl2["driver_min"],
        wsl_windows_build=wsl2["windows_build_min"],
    )


def finding_groups(findings: list[Finding]) -> dict[str, list[Finding]]:
    """Findings by what they look at (the live checks' groups, in English), in order; empty groups left out."""
    groups: dict[str, list[Finding]] = {MAIN_GROUP: [], **{group: [] for group in GROUPS}}
    for f in findings:
        groups[CHECK_FINDINGS.get(f.code, {}).get("group", MAIN_GROUP)].append(f)
    return {group: found for group, found in groups.items() if found}


_LOG_SEVERITY = {"problem": "error", "depends": "warning", "harmless": "info"}


def log_findings(report: LogReport) -> list[Finding]:
    """A classified log's known lines as findings (``_LOG_SEVERITY``), each rule code once, worst first."""
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
    return worst_first(out)


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
        data["startup_log"] = log_hints(self.startup_log)  # the telling lines, not the whole log
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
    checks: list[Note] | None = None  # the live checks' notes (probes.live_checks); None: not run

    @property
    def driver(self) -> str | None:
        """The NVIDIA driver's version, when nvidia-smi reached a driver."""
        return self.smi.driver_version if self.smi and self.smi.status == "ok" else None

    @property
    def gpus(self) -> list[tuple[str, str | None]]:
        """Each GPU's name and compute capability: TensorFlow's view first, then nvidia-smi's."""
        seen = [(g["name"], g["compute_capability"]) for g in (self.tensorflow.gpus if self.tensorflow else [])]
        return seen + [(g.name, g.compute_capability) for g in (self.smi.gpus if self.smi else [])]


def log_hints(log: str, gpu: bool | None = None) -> list[str]:
    """The start-up log lines that explain a missing GPU (``logs.classify``: the problem lines, and the ones that
    are the problem when there is a GPU), without their time/thread prefix, each once."""
    report = classify(log, gpu=gpu)
    return [e.message for e in report.entries if e.verdict in ("problem", "depends")][:8]


@dataclass
class Diagnosis:
    machine: Machine
    recommendation: Recommendation  # the platform's own answer (native Windows' TF 2.10 there)
    alternatives: list[Recommendation]
    findings: list[Finding]

    @property
    def exit_code(self) -> int:
        return 1 if any(f.severity == "error" for f in self.findings) else 0

    def codes(self) -> list[str]:
        return [f.code for f in self.findings]

    def ordered_routes(self) -> list[Recommendation]:
        """The routes in the order the report shows them (``in_order``)."""
        return in_order([self.recommendation, *self.alternatives])

    def verdict(self) -> str:
        """The answer in one or two sentences, what the report starts with: what this machine can do, and what to do
        first."""
        m, smi, lead = self.machine, self.machine.smi, self.ordered_routes()[0]
        errors = {f.code for f in self.findings if f.severity == "error"}
        fields = {"tensorflow": lead.build.minor if lead.build else lead.tensorflow, "minimum": lead.driver_min}
        fields.update(driver=lead.driver, gpus=_gpu_names(m))
        tf = m.tensorflow
        if m.platform == "macos":
            text = _("macOS has no CUDA: TensorFlow runs on the CPU, and so does every notebook of this course.")
        elif smi is not None and smi.no_driver_found:
            text = _("No NVIDIA driver found: TensorFlow will use the CPU, and every notebook of this course runs "
                     "there.")
        elif smi is not None and smi.status == "no-driver":
            text = _("nvidia-smi cannot talk to the NVIDIA driver: until it can, TensorFlow uses only the CPU.")
            errors.discard("no-nvidia-driver")
        elif smi is not None and smi.status == "no-devices":
            text = _("The NVIDIA driver finds no GPU: until it does, TensorFlow uses only the CPU.")
        elif lead is not self.recommendation:
            text = _("Native Windows has no GPU TensorFlow after {last}: use WSL2, where the course's TensorFlow uses "
                     "the GPU.").format(last=load().rule("windows-native-gpu-last")["last"])
            if lead.driver_ok is False:
                text = join(text, _("First update the Windows NVIDIA driver to >= {minimum} (yours is {driver}).")
                            .format(**fields))
        elif lead.gpu and lead.driver_ok is False:
            text = _("The NVIDIA driver {driver} is older than the {minimum} that TF {tensorflow} needs: update it, "
                     "then install.").format(**fields)
            errors.discard("driver-too-old")
        elif tf is not None and tf.gpus and not errors:
            text = _("TensorFlow {version} uses the GPU here ({gpus}); to install the same in a new environment:")
            text = text.format(version=tf.version, gpus=", ".join(dict.fromkeys(g["name"] for g in tf.gpus)))
        elif lead.driver and fields["gpus"]:
            text = _("{gpus}, NVIDIA driver {driver}: install TensorFlow {tensorflow} for the GPU.").format(**fields)
        else:  # the GPU route, for a driver not looked at or not read
            text = _("Install TensorFlow {tensorflow} for the GPU; it needs an NVIDIA driver >= {minimum}.")
            text = text.format(**fields)
        if {"gpu-too-old", "gpu-known-failure"} & set(lead.note_codes()):
            text = join(text, _("Read the warning about this GPU below."))
        return join(text, _("Fix the errors below first.")) if errors else text

    def to_json(self) -> dict[str, Any]:
        """The CLI's JSON (docs/instructors.md, "The doctor"), its routes in the report's order (``in_order``). The
        keys, codes and groups are the same in every language; the sentences and the ``see`` links follow the language
        now."""
        smi, nvcc, m = self.machine.smi, self.machine.nvcc, self.machine
        lead, *others = self.ordered_routes()
        return {
            "driver_version": smi.driver_version if smi else None,
            "driver_cuda": smi.driver_cuda if smi else None,
            "toolkit_cuda": nvcc.release if nvcc else None,
            "gpus": [{**asdict(g), "generation": identify(g.name, g.compute_capability).to_dict()}
                     for g in (smi.gpus if smi else [])],
            "tensorflow": lead.tensorflow,
            "recommended_install": list(lead.commands),
            "findings": [f.to_dict() for f in self.findings],
            "answer": {
                "verdict": self.verdict(),
                "platform": lead.platform,
                "route": lead.route,
                "tensorflow": lead.tensorflow,
                "install": list(lead.commands),
            },
            "platform": m.platform,
            "python": m.python,
            "machine": "this machine" if m.live else "described",
            "recommended": lead.to_dict(),
            "alternatives": [a.to_dict() for a in others],
            "nvidia_smi": None if smi is None else {key: getattr(smi, key) for key in ("status", "message", "problems",
                                                                                      "tool_version")},
            "nvcc": None if nvcc is None else asdict(nvcc),
            "installed_tensorflow": None if m.tensorflow is None else m.tensorflow.to_dict(),
            "checks": None if m.checks is None else [
                {**asdict(note), "group": CHECK_FINDINGS.get(note.code, {}).get("group")}
                for note in m.checks],
            # where docs/troubleshooting.md explains a finding's or a note's code: {code: link}
            "see": links(
                [f.code for f in self.findings]
                + [code for rec in (self.recommendation, *self.alternatives) for code in rec.note_codes()]
            ),
        }

    def _status(self) -> str:
        return _("Result: errors found (exit status 1)") if self.exit_code else _("Result: no errors (exit status 0)")

    def _to_act_on(self, lead: Recommendation) -> list[Finding]:
        """The errors and warnings the short report shows, worst first. When it leads with another route than the
        recommendation (WSL2 for native Windows), the recommendation's own notes give way to that route's."""
        elsewhere: set[str] = set()
        found = list(self.findings)
        if lead is not self.recommendation:
            ours = note_findings(lead)
            elsewhere = {f.code for f in note_findings(self.recommendation)} - {f.code for f in ours}
            found += [f for f in ours if f.code not in self.codes()]
        return worst_first([f for f in found if f.severity != "info" and f.code not in elsewhere])

    def summary(self) -> str:
        """The default report, one screen: the verdict, the one install to follow, the errors and warnings with their
        fixes, and what ``--verbose`` adds. Findings about a route shown second (native Windows') are left to it."""
        lead = self.ordered_routes()[0]
        lines = [_("Verdict: {verdict}").format(verdict=self.verdict())]
        heading = _("Install ({route}): {tensorflow}").format(route=lead.title(), tensorflow=lead.tensorflow)
        lines.append(heading + lead.mark_suffix())
        lines += [f"    {command}" for command in lead.commands]
        shown = self._to_act_on(lead)
        if shown:
            lines.append("")
        for f in shown:
            lines += _finding_lines(f, "")
        rest = list(dict.fromkeys(f.code for f in self.findings if f not in shown))
        if rest:
            more = _("--verbose adds the machine as read, the install notes, other routes and the findings {codes}.")
            more = more.format(codes=", ".join(rest))
        else:
            more = _("--verbose adds the machine as read, the install notes and other routes.")
        return "\n".join([*lines, "", more, self._status()])

    def report(self) -> str:
        """The whole report (``--verbose``): the verdict, the machine, every route in order with its notes, and every
        finding, worst first, grouped."""
        m, smi, nvcc = self.machine, self.machine.smi, self.machine.nvcc
        if m.live:
            who = _("This machine: {platform}, Python {python}")
        else:
            who = _("Described machine: {platform}, Python {python}")
        lines = [_("Verdict: {verdict}").format(verdict=self.verdict())]
        lines.append(who.format(platform=platform_name(m.platform), python=m.python or _("(not given)")))
        if smi is None:
            lines.append("  " + _("NVIDIA driver: not looked at"))
        elif smi.status == "ok":
            if smi.driver_cuda:
                driver = _("NVIDIA driver: {version}, supports CUDA up to {cuda}")
            else:
                driver = _("NVIDIA driver: {version}")
            lines.append("  " + driver.format(version=smi.driver_version or _("unreadable"), cuda=smi.driver_cuda))
            for g in smi.gpus:
                lines += [f"  {g.describe()}", f"    {_coverage_line(g.name, g.compute_capability, m.tensorflow)}"]
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
        lead, *others = self.ordered_routes()
        lines += ["", _("Install:"), lead.text()]
        for other in others:
            lines += ["", _("Or:"), other.text()]
        lines += ["", _("Findings:")]
        groups = finding_groups(self.findings)
        pad = "  " if len(groups) > 1 else ""
        for group, found in groups.items():
            if pad:
                # Translators: a heading of the report's findings, "{group}" is one of the groups' names
                lines.append("  " + _("{group}:").format(group=_(group)))
            for f in found:
                lines += _finding_lines(f, pad)
        lines += ["", self._status()]
        return "\n".join(lines)


def _finding_lines(f: Finding, pad: str) -> list[str]:
    """A finding in a report: its line, its fix and, where the troubleshooting page explains it, the link."""
    lines = [f"{pad}  [{f.severity}] {f.code}: {f.message}", f"{pad}      " + _("fix: {fix}").format(fix=f.fix)]
    return lines + more_line(f.code, f"{pad}      ")


def _gpu_names(m: Machine) -> str:
    """``"NVIDIA GeForce RTX 3060"``, ``"8 x NVIDIA H100 80GB HBM3"``: the GPUs nvidia-smi (else TensorFlow) names."""
    names = [g.name for g in m.smi.gpus] if m.smi and m.smi.gpus else [name for name, _cc in m.gpus]
    counts = {name: names.count(name) for name in names}
    return ", ".join(name if n == 1 else f"{n} x {name}" for name, n in counts.items())


def _coverage_line(name: str, reported: str | None, tf: TensorFlowInfo | None) -> str:
    """One GPU's generation and whether a TensorFlow build covers it: the installed CUDA build's own target list,
    else the wheels of the newest TensorFlow the table has a list for."""
    generation = identify(name, reported)
    if not generation.known:
        return _("{generation}: run `{command}` to read it").format(
            generation=generation.describe(), command=QUERY_COMMAND
        )
    if tf is not None and tf.installed and tf.built_with_cuda and tf.compute_capabilities:
        line, tensorflow = _("{generation}; for this TensorFlow {tensorflow}: {reason}"), tf.version
        targets = tf.compute_capabilities
    else:
        line, tensorflow = _("{generation}; for TF {tensorflow}'s wheels: {reason}"), load().linux[0].minor
        targets = build_targets(tensorflow)
    coverage = covered_by_build(generation.compute_capability, targets, tf.version if tf and tf.version else None)
    return line.format(generation=generation.describe(), tensorflow=tensorflow, reason=coverage.reason)
