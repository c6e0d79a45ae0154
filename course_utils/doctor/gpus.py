"""GPU generations and build coverage: does a TensorFlow build have code that runs on this GPU?

A GPU's generation is its compute capability ("8.6"): reported by the driver, else looked up by name in
versions.json's "gpus" families. ``covered_by_build()`` applies NVIDIA's binary-compatibility rules to a build's
target list, plus the known failures of the current wheels (docs/references.md, "Which GPUs a build covers").
Notebook 02 and the doctor both call it. What a generation means for the build ``recommend`` offers - a release cap,
a driver for its PTX, a too-old or known-failing GPU - is said here too (``release_cap``, ``ptx_driver``,
``gpu_notes``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from course_utils.core.i18n import translator
from course_utils.doctor.texts import Note
from course_utils.doctor.versions import Build, load, localized, parse_version, version_text

_ = translator("doctor")

QUERY_COMMAND = "nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv"
_TARGET = re.compile(r"^(sm|compute)_(\d+)(\d)([af]?)$")


def compute_capability(value: str | tuple[int, int] | list[int]) -> tuple[int, int]:
    """``"8.6"``, ``"12.0"``, ``(8, 6)`` -> ``(8, 6)``; anything else is a ``ValueError`` that says what to pass."""
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return int(value[0]), int(value[1])
    if isinstance(value, str) and re.fullmatch(r"\s*\d+\.\d+\s*", value):
        major, minor = parse_version(value)[:2]
        return major, minor
    raise ValueError(
        f"compute capability {value!r} is not a version like '8.6' or (8, 6): pass what nvidia-smi's compute_cap "
        "or tf.config.experimental.get_device_details(gpu)['compute_capability'] gives"
    )


@dataclass(frozen=True)
class Generation:
    """What is known about one GPU's generation, and where it comes from."""

    name: str
    compute_capability: str | None  # None: unknown
    source: str | None  # "reported" (nvidia-smi / TensorFlow), "name" (the family table), None
    family: str | None = None

    @property
    def known(self) -> bool:
        return self.compute_capability is not None

    def describe(self) -> str:
        """``"compute capability 8.6 (from its name: Ampere ...; https://developer.nvidia.com/cuda-gpus)"``."""
        if self.compute_capability is None:
            return _("compute capability unknown")
        if self.source == "name":
            return _("compute capability {cc} (from its name: {family}; {source})").format(
                cc=self.compute_capability, family=self.family, source=load().gpus["families_source"]
            )
        return _("compute capability {cc} (reported by the driver)").format(cc=self.compute_capability)

    def to_dict(self) -> dict[str, str | None]:
        return {"compute_capability": self.compute_capability, "from": self.source, "family": self.family}


def identify(name: str | None, reported: str | None = None) -> Generation:
    """A GPU's generation: the compute capability the driver or TensorFlow ``reported`` when there is one
    (``"8.6"``), else the family table's value for its ``name``, else unknown."""
    name = name or "unknown GPU"
    text = re.sub(r"^NVIDIA ", "", re.sub(r"\s+", " ", name).strip().upper())  # "GEFORCE RTX 3060 LAPTOP GPU"
    family = next((row for row in load().gpus["families"] if re.search(row["pattern"], text)), None)  # the first match
    if reported:
        cc = version_text(compute_capability(reported))
        return Generation(name, cc, "reported", family["family"] if family else None)
    if family is not None:
        return Generation(name, family["compute_capability"], "name", family["family"])
    return Generation(name, None, None)


@dataclass(frozen=True)
class Target:
    """One entry of a build's list: ``sm_89`` (a cubin) or ``compute_90`` (PTX)."""

    text: str
    kind: str  # "sm" or "compute"
    major: int
    minor: int
    arch_specific: bool  # sm_90a / compute_90a: runs on exactly that compute capability

    def runs_on(self, cc: tuple[int, int]) -> bool:
        """NVIDIA's binary compatibility: a cubin runs on the same major version with an equal or higher minor;
        PTX is compiled by the driver for its compute capability and every newer one."""
        if self.arch_specific:
            return cc == (self.major, self.minor)
        if self.kind == "sm":
            return cc[0] == self.major and cc[1] >= self.minor
        return cc >= (self.major, self.minor)


def parse_target(text: str) -> Target:
    """``"sm_89"`` -> Target(kind="sm", 8, 9); ``"compute_120"`` -> (12, 0); anything else is a ``ValueError``."""
    match = _TARGET.match(str(text).strip())
    if not match:
        raise ValueError(
            f"{text!r} is not a CUDA build target like 'sm_80' or 'compute_90': pass the entries of "
            "tf.sysconfig.get_build_info()['cuda_compute_capabilities']"
        )
    kind, major, minor, suffix = match.groups()
    return Target(str(text).strip(), kind, int(major), int(minor), suffix == "a")


@dataclass(frozen=True)
class Coverage:
    """The answer of ``covered_by_build``: whether the build has code for the GPU, how, and why."""

    covered: bool  # the binary-compatibility rules give this GPU code from the build
    via: str | None  # the target that does it: "sm_86"... or "compute_90"
    jit: bool  # True: only PTX covers it, the driver compiles it at first use
    reason: str


def known_failure(cc: str | tuple[int, int], tensorflow: str | None = None) -> dict[str, Any] | None:
    """The known failure for this compute capability (for ``tensorflow`` up to the release it was checked on): a
    generation the rules cover but the current wheels fail on - versions.json's row, its ``text`` in the language now,
    its ``issues`` the threads that show it."""
    have = compute_capability(cc)
    version = parse_version(tensorflow) if tensorflow else None
    for row in load().gpus["known_failures"]:
        low = compute_capability(row["compute_capability_min"])
        below = compute_capability(row["compute_capability_below"])
        if version is not None and version[:2] > parse_version(row["tensorflow_checked"])[:2]:
            continue  # a newer TensorFlow than the one the failure was checked on: no claim
        if low <= have < below:
            return {**row, "text": localized(row)}
    return None


def covered_by_build(
    cc: str | tuple[int, int], built_for: list[str] | tuple[str, ...], tensorflow: str | None = None
) -> Coverage:
    """Does a build made for ``built_for`` (``["sm_60", ..., "compute_90"]``) have code for a GPU of compute
    capability ``cc``? By NVIDIA's binary-compatibility rules, plus the known failures of the current wheels.

    ``tensorflow`` (the build's version, optional) limits the known failures to the releases they were checked on.
    """
    have = compute_capability(cc)
    text = version_text(have)
    targets = [parse_target(t) for t in built_for]
    if not targets:
        raise ValueError(
            "the build lists no CUDA targets: a CPU-only TensorFlow has none (tf.test.is_built_with_cuda() is False); "
            "pass a CUDA build's list, e.g. gpus.build_targets('2.21')"
        )
    cubins = [t for t in targets if t.kind == "sm" and t.runs_on(have)]
    ptx = [t for t in targets if t.kind == "compute" and t.runs_on(have)]
    if not cubins and not ptx:
        why = _(
            "not covered: no code in the build ({listed}) runs on compute capability {cc} - a cubin runs only "
            "on GPUs of its own major version ({major}.x here) with an equal or higher minor version, and PTX "
            "only on its own compute capability and newer ones"
        ).format(listed=", ".join(t.text for t in targets), cc=text, major=have[0])
        return Coverage(False, None, False, why)
    best = max(cubins or ptx, key=lambda t: (t.major, t.minor))
    if cubins and (best.major, best.minor) != have:
        reason = _("covered by the build's {target} code, which runs on every {major}.x GPU from {first} up")
    elif cubins:
        reason = _("covered by the build's {target} code")
    elif have[0] > best.major:
        reason = _(
            "covered by the build's {target} PTX, which the driver compiles for compute capability {cc} "
            "when it is first loaded (a slower first start); the build targets nothing newer than {target}, "
            "so this later generation is untested with it"
        )
    else:
        reason = _(
            "covered by the build's {target} PTX, which the driver compiles for compute capability {cc} "
            "when it is first loaded (a slower first start)"
        )
    reason = reason.format(target=best.text, major=best.major, first=f"{best.major}.{best.minor}", cc=text)
    failure = known_failure(have, tensorflow)
    if failure is not None:
        reason = _(
            "by the binary-compatibility rules {reason}; but compute capability {cc} is a known "
            "failure with the current wheels: {failure} ({links})"
        ).format(reason=reason, cc=text, failure=failure["text"], links=", ".join(failure["issues"]))
    return Coverage(True, best.text, not cubins, reason)


def build_targets(tensorflow: str) -> tuple[str, ...]:
    """The CUDA targets of a TensorFlow release's wheels, as the table records them (``"2.21"``)."""
    version = parse_version(tensorflow)
    for row in load().gpus["builds"]:
        if version is not None and version[:2] == parse_version(row["tensorflow"])[:2]:
            return tuple(row["cuda_compute_capabilities"])
    known = ", ".join(row["tensorflow"] for row in load().gpus["builds"])
    raise ValueError(
        f"the table has no CUDA target list for TensorFlow {tensorflow!r} (it has: {known}); read the installed "
        "wheel's own list with tf.sysconfig.get_build_info()['cuda_compute_capabilities']"
    )


def ptx_driver(generation: Generation | None, build: Build, platform: str) -> tuple[str, str] | None:
    """For a GPU that ``build`` covers only through PTX: the driver that can compile that PTX on ``platform`` and
    why, in words (rule 'ptx-driver': a driver of the build's CUDA version). None when cubins cover the GPU, or
    when its generation, the build's targets or the driver for the build's CUDA is not known."""
    if generation is None or not generation.known:
        return None
    try:
        coverage = covered_by_build(generation.compute_capability, build_targets(build.minor), build.tensorflow)
    except ValueError:  # no target list for this release: no claim
        return None
    rule = load().rule("ptx-driver")
    drivers = rule["drivers"].get(build.cuda)
    if not (coverage.covered and coverage.jit) or drivers is None:
        return None
    minimum = drivers["windows" if platform in ("windows", "wsl2") else "linux"]
    text = _(
        "{name} (compute capability {cc}) runs TF {tensorflow} only through the build's {target} PTX. {rule} "
        "TF {tensorflow} was built with CUDA {cuda}, so this GPU needs a driver for CUDA {cuda} or newer: "
        ">= {minimum} (nvidia-smi's 'CUDA Version' {cuda} or higher), not only the CUDA {major} minimum ({source})"
    ).format(name=generation.name, cc=generation.compute_capability, tensorflow=build.minor, target=coverage.via,
             rule=rule["text"], cuda=build.cuda, minimum=minimum, major=build.cuda_major, source=drivers["source"])
    return minimum, text


def gpu_notes(generation: Generation | None, build: Build, capped: bool, platform: str) -> list[Note]:
    """What the GPU's generation means for ``build`` on ``platform``: too old, a known failure, or unknown."""
    if generation is None:
        return []
    table = load()
    if not generation.known:
        text = _(
            "the GPU's name ({name}) does not tell its generation (compute capability), which decides whether a "
            "TensorFlow build has code for it: run `{command}` and give the doctor its output (drivers that do not "
            "know compute_cap need `--query-gpu=name,driver_version`, and the name then decides)"
        )
        return [Note("gpu-generation-unknown", text.format(name=repr(generation.name), command=QUERY_COMMAND))]
    rule, wsl = table.rule("compute-capability-5-dropped"), table.rule("wsl2-gpu-generations")
    fields = {"name": generation.name, "generation": generation.describe(), "rule": rule["text"], "wsl": wsl["text"]}
    fields.update(tensorflow=build.minor, since=rule["since"], minimum=rule["min_compute_capability"])
    cc = parse_version(generation.compute_capability)
    too_old = cc < parse_version(rule["min_compute_capability"])
    if platform == "wsl2" and cc < parse_version(wsl["min_compute_capability"]):
        text = _(
            "{name} has {generation}. {wsl} TensorFlow in WSL2 will use only the CPU - on this GPU use native "
            "Linux, or a hosted GPU such as Colab's or Kaggle's"
        )
    elif too_old and parse_version(build.minor) >= parse_version(rule["since"]):
        text = _(
            "{name} has {generation}. {rule} No tested build known to the course covers it: TensorFlow will use "
            "only the CPU - use a GPU of compute capability {minimum} or newer, or a hosted GPU such as Colab's or "
            "Kaggle's"
        )
    elif capped:
        text = _(
            "{name} has {generation}. {rule} So the commands install TF {tensorflow}, the newest tested build from "
            "before {since}, which still has 5.x kernels (the course's notebooks are tested with newer TensorFlow) "
            "- or use a GPU of compute capability {minimum} or newer, or a hosted GPU such as Colab's or Kaggle's"
        )
    else:
        text = None
    notes = [Note("gpu-too-old", text.format(**fields))] if text else []
    failure = known_failure(generation.compute_capability)
    if failure is not None:
        text = _("{name} has {generation}. {failure} Issue threads: {issues}")
        fields.update(failure=failure["text"], issues=", ".join(failure["issues"]))
        notes.append(Note("gpu-known-failure", text.format(**fields)))
    return notes


def release_cap(generation: Generation | None, platform: str) -> str | None:
    """On Linux, a Maxwell (5.x) GPU caps TensorFlow below 2.17, the first release without 5.x kernels (WSL2 runs
    no GPU older than Pascal: rule 'wsl2-gpu-generations')."""
    if generation is None or not generation.known or platform != "linux":
        return None
    rule = load().rule("compute-capability-5-dropped")
    cc = parse_version(generation.compute_capability)
    if (5, 0) <= cc < parse_version(rule["min_compute_capability"]):
        return rule["since"]
    return None
