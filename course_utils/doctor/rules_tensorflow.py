"""The installed TensorFlow's rule family (part of the diagnosis, ``rules``): is it importable, a CUDA build, does it
see the GPU (and if not, what its start-up log says), which cuDNN it loaded, does the build have code for the GPU's
compute capability, is TensorBoard installed."""

from __future__ import annotations

import importlib.util

from course_utils.core.i18n import translator
from course_utils.doctor.commands import pip_install
from course_utils.doctor.gpus import covered_by_build, identify
from course_utils.doctor.logs import classify
from course_utils.doctor.model import Finding, Machine, TensorFlowInfo, log_findings, log_hints
from course_utils.doctor.recommend import Recommendation
from course_utils.doctor.texts import join
from course_utils.doctor.versions import load, parse_version

_ = translator("doctor")


def tensorflow_findings(m: Machine, rec: Recommendation) -> list[Finding]:
    """``rec``: the route the report leads with (on native Windows with an NVIDIA GPU, WSL2's), whose commands the
    fixes give."""
    tf, smi = m.tensorflow, m.smi
    if tf is None:
        return []
    if not tf.installed:
        return [_elsewhere(m, rec, _not_installed(tf, rec))]
    nvidia_gpu = bool(smi and smi.status == "ok" and smi.gpus)
    if tf.built_with_cuda is False:
        out = [_elsewhere(m, rec, _cpu_only_build(m, rec, nvidia_gpu))]
    elif tf.gpus:
        out = [_uses_gpu(tf)]
    else:
        out = [_elsewhere(m, rec, _sees_no_gpu(m, rec, nvidia_gpu))]
    out += _cudnn_findings(tf)
    if tf.built_with_cuda and tf.compute_capabilities:
        out += _coverage_findings(tf, m.gpus)
    out += _tensorboard_findings(tf)
    return out


def _elsewhere(m: Machine, rec: Recommendation, finding: Finding) -> Finding:
    """A fix whose commands are for WSL2 while this is native Windows says so first."""
    if rec.platform == m.platform:
        return finding
    first = _("On native Windows no TensorFlow after 2.10 uses the GPU: do this in WSL2.")
    return Finding(finding.code, finding.severity, finding.message, join(first, finding.fix))


def _not_installed(tf: TensorFlowInfo, rec: Recommendation) -> Finding:
    """TensorFlow cannot be imported: the recommendation's pip commands install it."""
    commands = " && ".join(c for c in rec.commands if c.startswith("pip install"))
    return Finding(
        "tensorflow-not-installed",
        "info",
        _("TensorFlow is not importable here ({error}).").format(error=tf.error),
        _("Install it: {commands}").format(commands=commands),
    )


def _cpu_only_build(m: Machine, rec: Recommendation, nvidia_gpu: bool) -> Finding:
    """A TensorFlow built without CUDA: an error next to an NVIDIA GPU, else only information."""
    message = _("This TensorFlow ({version}) is a CPU-only build (tf.test.is_built_with_cuda() is False): it can "
                "never use a GPU.").format(version=m.tensorflow.version)
    if m.platform == "windows":
        message = join(message, _("On native Windows every TensorFlow after 2.10 is CPU-only."))
    if nvidia_gpu:
        message = join(message, _("nvidia-smi shows an NVIDIA GPU on this machine."))
    if rec.gpu:
        fix = _("For the GPU install {tensorflow} instead: {commands}").format(
            tensorflow=rec.tensorflow, commands=" ; ".join(rec.commands[:5])
        )
    else:
        fix = _("Nothing to do on a machine without an NVIDIA GPU.")
    severity = "error" if nvidia_gpu else "info"
    return Finding("cpu-only-build", severity, message, fix)


def _uses_gpu(tf: TensorFlowInfo) -> Finding:
    """The GPUs TensorFlow sees, with their compute capabilities."""
    names = ", ".join(
        _("{name} (compute capability {cc})").format(name=g["name"], cc=g["compute_capability"])
        if g["compute_capability"]
        else g["name"]
        for g in tf.gpus
    )
    message = _("TensorFlow {version} sees {count} GPU(s): {names}.")
    return Finding("tensorflow-uses-gpu", "info", message.format(version=tf.version, count=len(tf.gpus), names=names),
                   _("Nothing to do."))


def _sees_no_gpu(m: Machine, rec: Recommendation, nvidia_gpu: bool) -> Finding:
    """A CUDA build that sees no GPU: an error next to one nvidia-smi shows (quoting its start-up log), else as
    expected."""
    tf, smi = m.tensorflow, m.smi
    hints = log_hints(tf.startup_log, gpu=nvidia_gpu if smi is not None else None)
    if nvidia_gpu:
        message = _("nvidia-smi shows {count} GPU(s) but TensorFlow {version} (a CUDA {cuda} build) sees none.")
        message = message.format(count=len(smi.gpus), version=tf.version, cuda=tf.cuda_version)
        fix = _("Install {tensorflow} (it brings CUDA and cuDNN as pip wheels); {rule}").format(
            tensorflow=rec.tensorflow, rule=load().rule("pip-symlink-step")["text"]
        )
    else:
        message = _("TensorFlow {version} (a CUDA {cuda} build) sees no GPU, as expected without an NVIDIA driver.")
        message, hints = message.format(version=tf.version, cuda=tf.cuda_version), hints[:2]
        fix = _("Nothing to do unless this machine has an NVIDIA GPU.")
    if hints:
        message = join(message, _("Its start-up log says: {lines}").format(lines=" | ".join(hints)))
    return Finding("tensorflow-sees-no-gpu", "error" if nvidia_gpu else "info", message, fix)


def _cudnn_findings(tf: TensorFlowInfo) -> list[Finding]:
    """A cuDNN older than the one TensorFlow was built with: its start-up log's line, as the log rule reads it."""
    return [f for f in log_findings(classify(tf.startup_log)) if f.code == "cudnn-mismatch"]


def _tensorboard_findings(tf: TensorFlowInfo) -> list[Finding]:
    """A TensorFlow that no longer brings TensorBoard, without it installed."""
    rule = load().rule("tensorboard-separate")
    if not tf.version or parse_version(tf.version) < parse_version(rule["since"]) or importlib.util.find_spec(
            "tensorboard"):
        return []
    install = f'pip install "tensorboard=={".".join(tf.version.split(".")[:2])}.*"'
    return [Finding("tensorboard-not-installed", "info", rule["text"], install)]  # the rule's text: the language now


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
            ).format(tensorflow=last.minor, install=pip_install(f"tensorflow[and-cuda]=={last.minor}.*", last.minor),
                     low=last.python_min, high=last.python_max, minimum=rule["min_compute_capability"])
        else:
            fix = _(
                "Use a GPU of compute capability {minimum} or newer, or a hosted GPU (Colab, Kaggle); TensorFlow "
                "runs on the CPU meanwhile."
            ).format(minimum=rule["min_compute_capability"])
        message = _("{name} has {generation}; this TensorFlow {version}: {reason}. {rule}").format(
            name=name, generation=generation.describe(), version=tf.version, reason=coverage.reason, rule=rule["text"])
        out.append(Finding("compute-capability-unsupported", "error", message, fix))
    return out
