"""The diagnosis: ``diagnose(machine)`` asks ``recommend.routes`` what to install, then runs the rule families, each
turning one part of the machine into ``Finding``s - the NVIDIA driver (``nvidia-smi``), the platform's route (native
Windows, macOS, an old driver), the CUDA toolkit (``nvcc``), the installed TensorFlow (``tensorflow_findings``: is it
importable, a CUDA build, does it see the GPU - and if not, what its start-up log says -, which cuDNN it loaded, does
the build have code for the GPU's compute capability, is TensorBoard installed) and the live checks' notes."""

from __future__ import annotations

import importlib.util

from course_utils.core.i18n import translator
from course_utils.doctor.gpus import covered_by_build, identify
from course_utils.doctor.logs import classify
from course_utils.doctor.model import (
    Diagnosis,
    Finding,
    Machine,
    TensorFlowInfo,
    check_findings,
    log_findings,
    log_hints,
    note_findings,
    worst_first,
)
from course_utils.doctor.nvidia import SmiReport
from course_utils.doctor.probes import probe
from course_utils.doctor.recommend import Recommendation, in_order, pip_install, platform_name, recommend, routes
from course_utils.doctor.texts import join, sentence
from course_utils.doctor.versions import load, parse_version

_ = translator("doctor")


def _driver_findings(m: Machine, rec: Recommendation) -> list[Finding]:
    """What nvidia-smi said: no driver, no GPU, or its table - the driver and its GPUs, and what could not be read."""
    smi = m.smi
    if smi is None:
        return []
    if smi.no_driver_found or smi.status == "no-driver":
        return [] if m.platform == "macos" else [_no_driver(m, rec)]
    if smi.status == "no-devices":
        message = _('The NVIDIA driver is loaded but nvidia-smi found no GPU ("No devices were found").')
        fix = _("Check that the GPU is seated and enabled (BIOS, passthrough, power); until then TensorFlow uses the "
                "CPU.")
        return [Finding("no-nvidia-gpu", "warning", message, fix)]
    problems = "; ".join(smi.problems)
    paste = _("Paste the complete output of `nvidia-smi` (or run the doctor on the machine itself).")
    if smi.driver_version is None:  # a table, but its driver version cannot be read
        message = _(
            "An NVIDIA driver answered, but its version cannot be read from this nvidia-smi output: "
            "{problems}. The advice below assumes nothing about the driver."
        ).format(problems=problems)
        return [Finding("nvidia-smi-partly-read", "warning", message, paste)]
    message = _("NVIDIA driver {version}.").format(version=smi.driver_version)
    if smi.driver_cuda:
        message = join(message, _("It supports CUDA up to {driver_cuda}.").format(driver_cuda=smi.driver_cuda))
    gpus = "; ".join(g.describe() for g in smi.gpus) or _("no GPU rows could be read")
    out = [Finding("nvidia-driver", "info", join(message, sentence(gpus)), _("Nothing to do."))]
    if smi.problems:
        message = _("Parts of the nvidia-smi output could not be read: {problems}.").format(problems=problems)
        out.append(Finding("nvidia-smi-partly-read", "info", message, paste))
    return out


def _no_driver(m: Machine, rec: Recommendation) -> Finding:
    """No NVIDIA driver answered - nvidia-smi missing, an empty or unreadable capture, or a tool that cannot reach the
    driver: TensorFlow uses the CPU."""
    smi, table = m.smi, load()
    if smi.status == "no-driver":
        what = _("nvidia-smi is installed but cannot talk to the NVIDIA driver ({said}).")
    elif smi.status == "missing":
        what = _("No NVIDIA driver was found ({said}).")
    elif smi.status == "empty":
        what = _("No NVIDIA driver was found: the nvidia-smi capture is empty, which is what `nvidia-smi > smi.txt` "
                 "leaves where the command is missing.")
    else:
        what = _("No NVIDIA driver was found: the capture is not nvidia-smi output ({problems}).")
    what = join(what.format(said=smi.message, problems="; ".join(smi.problems)),
                _("TensorFlow can only use the CPU on {platform}.").format(platform=platform_name(m.platform)))
    capture = smi.status in ("empty", "unreadable")
    save = _("save its whole output (`nvidia-smi > smi.txt`) and give the doctor that file")
    if m.platform == "wsl2":
        minimum = rec.driver_min or table.rule("wsl2")["driver_min"]
        fix = _("Install or update the NVIDIA driver on Windows (>= {minimum}); {rule}").format(
            minimum=minimum, rule=table.rule("wsl2-no-linux-driver")["text"]
        )
        if capture:
            fix = join(fix, _("If `nvidia-smi` runs in WSL2, {save}.").format(save=save))
    elif rec.gpu:
        fix = _(
            "If this machine has an NVIDIA GPU, install NVIDIA's driver (>= {minimum}) and reboot; "
            "without one, TensorFlow runs on the CPU (every notebook of this course still works)."
        ).format(minimum=rec.driver_min)
    else:
        fix = _("The commands above are the CPU install: every notebook of this course works with it.")
        if capture:
            then = _("If this machine has an NVIDIA GPU: where `nvidia-smi` runs, {save}; where the command is not "
                     "found, install NVIDIA's driver (>= {minimum}) and reboot.")
        else:
            then = _("If this machine has an NVIDIA GPU, install NVIDIA's driver (>= {minimum}), reboot, and run the "
                     "doctor again for the GPU install.")
        fix = join(fix, then.format(save=save, minimum=recommend(m.platform, m.python).driver_min))
    severity = "error" if smi.status == "no-driver" else "warning"
    return Finding("no-nvidia-driver", severity, what, fix)


def _route_findings(m: Machine, rec: Recommendation, alternatives: list[Recommendation]) -> list[Finding]:
    table, smi, out = load(), m.smi, []
    if m.platform == "windows":
        out.append(_native_windows(m, rec, alternatives))
    if m.platform == "macos":
        fix = _("Install {tensorflow} (the commands above). Apple's Metal plugin is a separate route: {rule}")
        fix = fix.format(tensorflow=rec.tensorflow, rule=table.rule("macos-metal")["text"])
        out.append(Finding("macos-no-cuda", "info", table.rule("macos")["text"], fix))
    if rec.gpu and rec.driver_ok is False:  # a driver nvidia-smi read, older than TF needs
        message = _("The NVIDIA driver {driver} is older than the {minimum} that TF {tensorflow} (CUDA {cuda}) needs "
                    "on {platform}.")
        if smi.driver_cuda:
            message = join(message, _("It supports CUDA up to {driver_cuda}."))
        message = message.format(driver=rec.driver, driver_cuda=smi.driver_cuda, minimum=rec.driver_min,
                                 tensorflow=rec.build.minor, cuda=rec.build.cuda, platform=platform_name(rec.platform))
        fix = next(note.text for note in rec.notes if note.code == "driver-too-old")
        out.append(Finding("driver-too-old", "error", message, fix))
    elif rec.gpu and rec.driver_ok and smi and smi.driver_cuda and rec.build:
        out += _minor_version_findings(rec, smi)
    out += note_findings(rec)
    return out


def _native_windows(m: Machine, rec: Recommendation, alternatives: list[Recommendation]) -> Finding:
    """Native Windows has no GPU TensorFlow after 2.10: WSL2 with the course's TensorFlow first; the conda recipe's TF
    2.10 after it, on which the course's notebooks (Keras 3) do not run. Only information where no NVIDIA driver was
    found (the CPU install)."""
    table, smi, tf = load(), m.smi, m.tensorflow
    last = table.rule("windows-native-gpu-last")["last"]
    recipe = table.rule("windows-native-recipe")
    build = table.newest("windows")
    wsl = next((a for a in alternatives if a.platform == "wsl2"), None) or recommend("wsl2", m.python)
    driver = m.driver
    installed_cpu_only = bool(
        tf is not None and tf.installed and tf.version and parse_version(tf.version)[:2] > parse_version(last)[:2]
    )
    message = _(
        "Native Windows has no GPU TensorFlow after {last}: TF 2.11 and later install CPU-only there. "
        "TF {last} was built and tested with CUDA {cuda} and cuDNN {cudnn}, on Python {low}-{high}."
    )
    if installed_cpu_only:
        message = join(message, _("The installed TensorFlow {installed} cannot use the GPU."))
    fix = _(
        "Use WSL2, where the course's TensorFlow uses the GPU: `{wsl}` inside WSL2 (Windows 10 {build} or newer, "
        "Windows NVIDIA driver >= {minimum}). Native Windows runs only TF {last}, by the official conda recipe - "
        "`{conda}`, then `{install}` in a Python <= {high} environment - and TF {last} comes with Keras 2: the "
        "course's notebooks (Keras 3) do not run there."
    )
    if wsl.driver_min and driver and parse_version(driver) < parse_version(wsl.driver_min):
        fix = join(_("First update the Windows NVIDIA driver to >= {minimum} (yours is {driver})."), fix)
    fields = {"last": last, "cuda": build.cuda, "cudnn": build.cudnn, "low": build.python_min}
    fields.update(high=build.python_max, installed=tf.version if tf else None, conda=recipe["conda"])
    fields.update(install=pip_install(recipe["requirement"], build.minor), driver=driver)
    fields.update(wsl=pip_install(wsl.tensorflow, wsl.build.minor), build=table.rule("wsl2")["windows_build_min"])
    fields.update(minimum=wsl.driver_min)
    severity = "error" if installed_cpu_only and smi and smi.gpus else "warning" if rec.gpu else "info"
    return Finding("windows-native-no-gpu-after-2.10", severity, message.format(**fields), fix.format(**fields))


def _minor_version_findings(rec: Recommendation, smi: SmiReport) -> list[Finding]:
    """A driver of the build's CUDA family but an older minor: it works, under minor-version compatibility."""
    have, need = parse_version(smi.driver_cuda), parse_version(rec.build.cuda)
    if not (have[0] == need[0] and have < need):
        return []
    message = _(
        "TF {tensorflow} is built with CUDA {cuda}; your driver supports up to {driver_cuda}. That "
        "works through CUDA minor-version compatibility (same major family, driver >= {minimum}), "
        "with a limited feature set."
    ).format(tensorflow=rec.build.minor, cuda=rec.build.cuda, driver_cuda=smi.driver_cuda,
             minimum=load().min_driver(need[0], rec.platform))
    fix = _("Nothing to do; a newer driver lifts the limits.")
    return [Finding("minor-version-compatibility", "info", message, fix)]


def _toolkit_findings(m: Machine, rec: Recommendation) -> list[Finding]:
    nvcc, smi, table, out = m.nvcc, m.smi, load(), []
    if nvcc is None or nvcc.status != "ok":
        return out
    toolkit, driver = parse_version(nvcc.release), m.driver
    if smi and smi.driver_cuda:
        limit, limit_text = parse_version(smi.driver_cuda), smi.driver_cuda
    elif driver and (major := table.driver_cuda_major(driver, m.platform)):
        limit, limit_text = (major, 99), f"{major}.x"
    else:
        limit = None
    if limit is not None and toolkit > limit:
        if toolkit[0] == limit[0]:
            how = _(
                "Programs built with it run only under CUDA minor-version compatibility (same major family "
                "{major}, driver >= {minimum}), with a limited feature set; PTX it generates fails with "
                "cudaErrorUnsupportedPtxVersion."
            )
        else:
            how = _("Programs built with it do not run on this driver: CUDA {major}.x needs a driver >= {minimum}.")
        how = how.format(major=toolkit[0], minimum=table.min_driver(toolkit[0], m.platform))
        message = _("nvcc reports CUDA toolkit {release}, newer than the CUDA {limit} the driver {driver} supports. "
                    "{how}").format(release=nvcc.release, limit=limit_text, driver=driver, how=how)
        fix = _("For TensorFlow nothing to do: it never calls nvcc (see nvcc-not-used). For your own CUDA code, "
                "update the driver to one that supports CUDA {release}, or use a toolkit no newer than {limit}.")
        out.append(Finding("toolkit-newer-than-driver", "warning", message,
                           fix.format(release=nvcc.release, limit=limit_text)))
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
    # a cuDNN older than the one TensorFlow was built with: its start-up log's line, as the log rule reads it
    out += [f for f in log_findings(classify(tf.startup_log)) if f.code == "cudnn-mismatch"]
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


def diagnose(machine: Machine | None = None) -> Diagnosis:
    """Diagnose a machine (default: this one, probed live) and say what to install."""
    m = machine if machine is not None else probe()
    smi = m.smi
    driver_cuda = smi.driver_cuda if smi and smi.status == "ok" else None
    # No driver in what nvidia-smi gave (no command, an empty or unreadable capture): the CPU route (the driver finding
    # says how to get the GPU one); no GPU found live: too
    if smi and (smi.no_driver_found or (smi.status == "no-devices" and m.live)):
        gpu, reported = False, None
    else:  # the GPU's name and compute capability: TensorFlow's view first, then nvidia-smi's
        gpu, reported = m.gpus[0] if m.gpus else (None, None)
    options = routes(m.platform, m.python, m.driver, gpu, driver_cuda=driver_cuda, compute_capability=reported)
    rec, alternatives = options[0], options[1:]
    findings: list[Finding] = []
    if m.platform_note:
        message, fix = _("No platform given: {how}.").format(how=m.platform_note), _(
            "Pass --platform linux, wsl2, windows or macos.")
        findings.append(Finding("platform-assumed", "info", message, fix))
    findings += _driver_findings(m, rec)
    findings += _route_findings(m, rec, alternatives)
    findings += _toolkit_findings(m, rec)
    findings += tensorflow_findings(m, in_order(options)[0])
    findings += check_findings(m.checks or [])
    return Diagnosis(m, rec, alternatives, worst_first(findings))
