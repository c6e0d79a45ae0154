"""What to install: the TensorFlow requirement and the exact commands for a platform, Python, driver and GPU.

``recommend()`` takes every version fact from ``versions.json`` (``tensorflow_requirement``, ``pip_install``,
``in_venv`` and ``install_build`` spell the command lines, which the doctor's rules use too);
``routes()`` adds a platform's alternatives, each a whole recommendation of its own - WSL2 next to native Windows;
Apple's Metal plugin and the Intel-Mac line next to macOS - and ``in_order`` puts the route to follow first. The
doctor, notebook 01's picker and the tests all call them. The notes are ``Note``s, whose codes the doctor's findings
match on. ``PLATFORM_NAMES`` and the route names stay English (data); ``platform_name`` and ``Recommendation.title``
translate.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from course_utils.core.i18n import N_, translator
from course_utils.doctor.gpus import Generation, gpu_notes, identify, ptx_driver, release_cap
from course_utils.doctor.texts import Note, join
from course_utils.doctor.troubleshooting import links, more_text
from course_utils.doctor.versions import Build, check_platform, load, parse_version, version_text

_ = translator("doctor")

PLATFORM_NAMES = {"linux": N_("Linux"), "wsl2": N_("WSL2"), "windows": N_("native Windows"), "macos": N_("macOS")}
VERIFY = "python -c \"import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))\""


def tensorflow_requirement(build: Build, platform: str, gpu: bool) -> str:
    """``tensorflow[and-cuda]==2.21.*`` for a GPU build that has a working extra, the conda recipe's requirement on
    native Windows, else the plain wheel."""
    table = load()
    if platform == "windows" and gpu and build.minor == table.rule("windows-native-gpu-last")["last"]:
        return table.rule("windows-native-recipe")["requirement"]
    and_cuda = gpu and platform != "windows" and build.minor not in table.rule("and-cuda-uninstallable")["tensorflow"]
    and_cuda = and_cuda and parse_version(build.tensorflow) >= parse_version(table.rule("and-cuda")["since"])
    return f"tensorflow[and-cuda]=={build.minor}.*" if and_cuda else f"tensorflow=={build.minor}.*"


def pip_install(requirement: str, tensorflow: str) -> str:
    """The pip command for a TensorFlow requirement: ``pip install "tensorflow<2.11" "numpy<2"`` for a TensorFlow
    built against NumPy 1 (``tensorflow`` is its release, ``"2.10"``), else without the pin."""
    pin = load().numpy_pin(tensorflow)
    return f'pip install "{requirement}"' + (f' "{pin}"' if pin else "")


def in_venv(platform: str, python: str | None, *installs: str) -> list[str]:
    """Create and activate a virtual environment ``tf`` (with ``python``, else any Python 3), upgrade pip, run the
    ``installs`` and verify."""
    if platform == "windows":
        venv = [f"py -{python} -m venv tf" if python else "py -3 -m venv tf", r"tf\Scripts\activate"]
        return [*venv, "python -m pip install --upgrade pip", *installs, VERIFY]
    venv = [f"python{python or '3'} -m venv tf", "source tf/bin/activate"]
    return [*venv, "pip install --upgrade pip", *installs, VERIFY]


def install_build(build: Build, requirement: str) -> list[str]:
    """The pip commands for a tested build: the requirement (with its NumPy pin), then TensorBoard where the build no
    longer brings it."""
    install = [pip_install(requirement, build.minor)]
    if parse_version(build.tensorflow) >= parse_version(load().rule("tensorboard-separate")["since"]):
        install.append(f'pip install "tensorboard=={build.minor}.*"')
    return install


def platform_name(platform: str) -> str:
    """``"windows"`` -> ``"native Windows"``, in the language now."""
    return _(PLATFORM_NAMES[platform])


@dataclass
class Recommendation:
    """What to install on one platform, and the exact commands."""

    platform: str
    tensorflow: str  # the requirement, e.g. 'tensorflow[and-cuda]==2.21.*' or 'tensorflow<2.11'
    commands: list[str]
    build: Build | None  # the tested configuration behind it (None for macOS's Metal route)
    python: str | None  # the Python the commands use (None: any the build supports)
    gpu: bool  # True: a GPU route; False: CPU only
    driver_min: str | None = None  # NVIDIA driver this route needs
    driver: str | None = None  # the driver it was checked against
    driver_ok: bool | None = None  # None when no driver was given
    fallback: str | None = None  # the newest requirement the given driver does run, if it is too old
    fallback_install: str | None = None  # the pip command for the fallback (with "numpy<2" where it needs it)
    fallback_build: Build | None = None  # the tested configuration behind the fallback
    route: str | None = None  # which of a platform's routes: "Apple silicon, Metal GPU", "Intel Mac"
    generation: Generation | None = None  # the GPU's generation, when it was given or could be read from its name
    notes: list[Note] = field(default_factory=list)

    def note_codes(self) -> list[str]:
        """The codes of the notes, in order (what programs should match on, never the text)."""
        return [note.code for note in self.notes]

    def title(self) -> str:
        """``"native Windows"``, ``"macOS (Intel Mac)"`` (in the language now)."""
        return platform_name(self.platform) + (f" ({_(self.route)})" if self.route else "")

    @property
    def runs_course(self) -> bool:
        """False for a TensorFlow that comes with Keras 2 (before 2.16): the course's notebooks do not run on it."""
        return self.build is None or not load().keras_2(self.build.minor)

    def mark(self) -> str | None:
        """What a route the course's notebooks do not run on says next to its name; None for the others."""
        if self.runs_course:
            return None
        text = _("the course's notebooks do not run on this route: TF {tensorflow} comes with Keras 2")
        return text.format(tensorflow=self.build.minor)

    def mark_suffix(self) -> str:
        """``" (the course's notebooks do not run on this route: ...)"``, or ``""``: what follows a route's name."""
        mark = self.mark()
        return f" ({mark})" if mark else ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; notes as ``{"code": ..., "text": ...}`` objects."""
        build = self.build
        return {
            "platform": self.platform,
            "route": self.route,
            "tensorflow": self.tensorflow,
            "recommended_install": list(self.commands),
            "python": self.python,
            "gpu": self.gpu,
            "build": None
            if build is None
            else {
                "tensorflow": build.tensorflow,
                "python": f"{build.python_min}-{build.python_max}",
                "cuda": build.cuda,
                "cudnn": build.cudnn,
                "source": build.source,
            },
            "driver_min": self.driver_min,
            "driver_ok": self.driver_ok,
            "fallback": self.fallback,
            "fallback_install": self.fallback_install,
            "generation": None if self.generation is None else self.generation.to_dict(),
            "runs_course_notebooks": self.runs_course,
            "mark": self.mark(),  # what the report writes next to such a route (None where the notebooks run)
            "notes": [asdict(note) for note in self.notes],
        }

    def text(self) -> str:
        """The heading (``"WSL2: tensorflow[and-cuda]==2.21.*"``, and the mark of a route the course's notebooks do
        not run on), the commands, the notes and their troubleshooting links."""
        lines = [f"{self.title()}: {self.tensorflow}{self.mark_suffix()}"]
        lines += [f"    {command}" for command in self.commands]
        lines += ["  " + _("note: {text}").format(text=note.text) for note in self.notes]
        lines += ["  " + more_text(link) for link in dict.fromkeys(links(note.code for note in self.notes).values())]
        return "\n".join(lines)


def normalize_python(python: str | None) -> str | None:
    """'3.11.4' -> '3.11'; None stays None; text that is not a version -> None."""
    version = parse_version(python)
    return version_text(version[:2]) if version and len(version) >= 2 else None


def rule_note(name: str) -> Note:
    """The note whose text is the versions.json rule ``name``; its code is the rule's name."""
    return Note(name, load().rule(name)["text"])


def build_notes(minor: str) -> list[Note]:
    """What the table says about TF ``minor`` itself: its NumPy 1 pin (numpy-2), its Keras 2 (keras-2-only)."""
    table = load()
    notes = [rule_note("numpy-2")] if table.numpy_pin(minor) else []
    if table.keras_2(minor):
        notes.append(_keras_note(minor))
    return notes


def _keras_note(minor: str, fallback: bool = False) -> Note:
    """TF ``minor`` (the offered build, or the ``fallback`` one) comes with Keras 2: the course's notebooks do not
    run on it."""
    rule = load().rule("keras-2-only")
    if fallback:
        text = _("The fallback TF {tensorflow} comes with Keras 2. {rule}")
    else:
        text = _("TF {tensorflow} comes with Keras 2. {rule}")
    return Note("keras-2-only", text.format(tensorflow=minor, rule=rule["text"]))


def recommend(
    platform: str,
    python: str | None = None,
    driver: str | None = None,
    gpu: bool | str | None = None,
    *,
    driver_cuda: str | None = None,
    compute_capability: str | None = None,
) -> Recommendation:
    """The TensorFlow to install and the exact commands, for one platform.

    ``platform``: "linux", "wsl2", "windows" (native) or "macos". ``python``: "3.11" (None:
    any). ``driver``: the NVIDIA driver version from nvidia-smi (None: unknown).
    ``gpu``: False for a machine without an NVIDIA GPU (CPU install); anything else (a GPU
    name, True, None) means the GPU route - a name also tells the GPU's generation.
    ``driver_cuda``: nvidia-smi's "CUDA Version", when known. ``compute_capability``: the GPU's
    ("8.6"), when the driver or TensorFlow reported it.
    """
    platform = check_platform(platform)
    asked = normalize_python(python)
    notes: list[Note] = []
    if python is not None and asked is None:
        text = _("could not read the Python version {python}; assuming any supported one").format(python=repr(python))
        notes.append(Note("python-unreadable", text))
    if platform == "macos":
        return _macos(asked, notes)
    use_gpu = gpu is not False
    name = gpu if isinstance(gpu, str) and gpu.strip() else None  # a GPU's name tells its generation
    generation = identify(name, compute_capability) if use_gpu and (name or compute_capability) else None
    before = release_cap(generation, platform)
    build_platform = platform if use_gpu else "linux"  # CPU wheels: the Linux table's Python ranges
    build, env_python, python_notes = _build_for_python(build_platform, asked, before, platform)
    notes += python_notes
    requirement = tensorflow_requirement(build, platform, use_gpu)
    if platform == "windows" and use_gpu:
        env_python = env_python or build.python_max
        commands, route_notes = _windows_native(build, env_python, requirement)
    else:
        commands, route_notes = _pip_route(platform, build, env_python, requirement, use_gpu)
    notes += route_notes + build_notes(build.minor)
    if not asked and use_gpu and platform != "windows":
        tested = _("TF {tensorflow} was tested with Python {low}-{high}")
        notes.append(Note("tested-python-range", tested.format(tensorflow=build.minor, low=build.python_min,
                                                               high=build.python_max)))
    notes += gpu_notes(generation, build, capped=before is not None, platform=platform)
    if not use_gpu:
        notes.append(Note("cpu-only-install", _("CPU-only install: no NVIDIA GPU on this machine")))
    rec = Recommendation(platform, requirement, commands, build, env_python, use_gpu, generation=generation,
                         notes=notes)
    if use_gpu:
        rec.driver_min = load().min_driver(build.cuda_major, platform)
        ptx = ptx_driver(generation, build, platform)
        if ptx:  # the driver compiles the build's PTX for this GPU: it must know the build's CUDA
            rec.driver_min = max(rec.driver_min, ptx[0], key=parse_version)
            rec.notes.append(Note("ptx-driver", ptx[1]))
        _check_driver(rec, driver, driver_cuda, before, ptx is not None)
    return rec


# No tested build supports the Python asked for, by (a Mac's CPU route, the builds capped by a release): the note.
_UNSUPPORTED = {
    (False, False): N_("no tested TensorFlow GPU build supports Python {python} on {platform} (tested: {low}-{high}); "
                       "the commands create a Python {env_python} environment"),
    (False, True): N_("no tested TensorFlow GPU build from before {before} (what this GPU needs) supports Python "
                      "{python} on {platform} (tested: {low}-{high}); the commands create a Python {env_python} "
                      "environment"),
    (True, False): N_("no tested TensorFlow supports Python {python} (tested: {low}-{high}); the commands create a "
                      "Python {env_python} environment"),
    (True, True): N_("no TensorFlow for Intel Macs (the last is {tensorflow}) supports Python {python} (tested: "
                     "{low}-{high}); the commands create a Python {env_python} environment"),
}


def _build_for_python(
    build_platform: str, asked: str | None, before: str | None, platform: str
) -> tuple[Build, str | None, list[Note]]:
    """The newest tested build for the Python asked for (from before ``before``), the Python the commands use, and
    the note on that choice: no-gpu-build-for-python (``_UNSUPPORTED``) when no build supports the Python,
    python-limits-tensorflow when it gets an older line than the newest."""
    table = load()
    newest = table.newest(build_platform, before=before)
    build = table.newest(build_platform, asked, before=before) if asked else newest
    if build is None:  # no tested build for this Python: use a Python the newest build supports
        low, high = table.python_range(build_platform, before=before)
        text = _(_UNSUPPORTED[platform == "macos", before is not None]).format(
            python=asked, platform=platform_name(platform), low=low, high=high, before=before, tensorflow=newest.minor,
            env_python=newest.python_max)
        return newest, newest.python_max, [Note("no-gpu-build-for-python", text)]
    if asked and build is not newest:  # the student's Python keeps them on an older line than the newest
        text = _("Python {python} limits you to TensorFlow {tensorflow}; Python {low}-{high} gets {newest}").format(
            python=asked, tensorflow=build.minor, low=newest.python_min, high=newest.python_max, newest=newest.minor
        )
        return build, asked, [Note("python-limits-tensorflow", text)]
    return build, asked, []


def _windows_native(build: Build, env_python: str, requirement: str) -> tuple[list[str], list[Note]]:
    """Native Windows's GPU route: the official conda recipe (CUDA and cuDNN from conda-forge) in an environment
    ``tf`` of ``env_python``, then pip for the TensorFlow; and the note on its last GPU build."""
    recipe = load().rule("windows-native-recipe")["conda"]
    commands = [f"conda create --name tf python={env_python}", "conda activate tf", recipe, "pip install --upgrade pip",
                pip_install(requirement, build.minor), VERIFY]
    last = rule_note("windows-native-gpu-last")
    tested = _("TF {tensorflow} was built and tested with CUDA {cuda} and cuDNN {cudnn}, on Python {low}-{high}.")
    tested = tested.format(
        tensorflow=build.minor, cuda=build.cuda, cudnn=build.cudnn, low=build.python_min, high=build.python_max
    )
    return commands, [Note(last.code, join(last.text, tested))]


def _pip_route(
    platform: str, build: Build, env_python: str | None, requirement: str, use_gpu: bool
) -> tuple[list[str], list[Note]]:
    """The pip route (Linux, WSL2, a CPU install): a venv and pip, and what the requirement leaves to the system."""
    commands = in_venv(platform, env_python, *install_build(build, requirement))
    notes = []
    if use_gpu and "[and-cuda]" not in requirement:
        text = _(
            "TF {tensorflow} needs CUDA {cuda} and cuDNN {cudnn} installed on the system (its tested "
            "configuration); tensorflow[and-cuda], which brings them as pip wheels, exists only from TF {since}"
        ).format(tensorflow=build.minor, cuda=build.cuda, cudnn=build.cudnn, since=load().rule("and-cuda")["since"])
        notes.append(Note("system-cuda-needed", text))
    if use_gpu and "[and-cuda]" in requirement:
        notes.append(rule_note("pip-symlink-step"))
    if platform == "wsl2":
        notes += [rule_note("wsl2"), rule_note("wsl2-no-linux-driver")]
    return commands, notes


def _macos(asked: str | None, notes: list[Note]) -> Recommendation:
    """macOS: the CPU wheel of the newest TensorFlow for the Python - what the course runs on a Mac."""
    # macOS wheels follow the same Python ranges as Linux's
    build, env_python, python_notes = _build_for_python("linux", asked, None, "macos")
    notes += python_notes
    requirement = f"tensorflow=={build.minor}.*"
    commands = in_venv("macos", env_python, *install_build(build, requirement))
    notes.append(rule_note("macos"))
    metal = load().rule("macos-metal")
    if asked and not metal_supports(asked):
        text = _(
            "tensorflow-metal has no wheel for Python {python}: no Metal GPU with this Python (Apple's plugin "
            "needs Python {low}-{high} and TensorFlow up to {tensorflow_max}); TensorFlow {tensorflow} runs on the CPU"
        )
        low, high = metal["python"]
        fields = {"python": asked, "low": low, "high": high, "tensorflow": build.minor}
        notes.append(Note("macos-no-metal-for-python", text.format(tensorflow_max=metal["tensorflow_max"], **fields)))
    notes += build_notes(build.minor)
    return Recommendation("macos", requirement, commands, build, env_python, False, notes=notes)


def metal_supports(python: str) -> bool:
    """Whether Apple's tensorflow-metal plugin has a wheel for ``python`` ("3.12")."""
    low, high = load().rule("macos-metal")["python"]
    return parse_version(low) <= parse_version(python) <= parse_version(high)


def _check_driver(
    rec: Recommendation, driver: str | None, driver_cuda: str | None, before: str | None, ptx: bool = False
) -> None:
    """Is the driver new enough (its CUDA family, or with ``ptx`` its CUDA version), and if not, which older tested
    build it runs; the notes say so. Through PTX no older build is offered: the course knows no older target list."""
    table = load()
    build = rec.build
    version = parse_version(driver)
    if driver and version is None:
        text = _("could not read the driver version {driver}; it needs to be >= {minimum}").format(
            driver=repr(driver), minimum=rec.driver_min
        )
        rec.notes.append(Note("driver-unreadable", text))
        return
    if version is None:
        rec.notes.append(
            Note("driver-minimum", _("needs an NVIDIA driver >= {minimum}").format(minimum=rec.driver_min))
        )
        return
    rec.driver = driver
    cuda = parse_version(driver_cuda)  # None: not given, or not a version
    need = parse_version(build.cuda)[:2] if ptx else (build.cuda_major,)
    rec.driver_ok = version >= parse_version(rec.driver_min) and (cuda is None or cuda[: len(need)] >= need)
    if rec.driver_ok:
        return
    major = table.driver_cuda_major(driver, rec.platform)
    if cuda is not None:
        major = min(major or 0, cuda[0]) or None
    fallback = None if ptx or not major else next(
        (b for b in table.matching(rec.platform, rec.python or None, before=before)
         if b.cuda_major <= major and version >= parse_version(table.min_driver(b.cuda_major, rec.platform))), None)
    if fallback is not None:
        rec.fallback, rec.fallback_build = tensorflow_requirement(fallback, rec.platform, True), fallback
        rec.fallback_install = pip_install(rec.fallback, fallback.minor)
    rec.notes.append(Note("driver-too-old", _update_driver(rec)))
    if fallback is not None and table.keras_2(fallback.minor) and "keras-2-only" not in rec.note_codes():
        rec.notes.append(_keras_note(fallback.minor, fallback=True))


def _update_driver(rec: Recommendation) -> str:
    """driver-too-old's advice (the note, and the finding's fix): update the driver, or the fallback build this
    driver runs, with what it needs (its Keras 2 has a note of its own)."""
    build = rec.fallback_build
    if build is None:
        text = _("Update the NVIDIA driver to >= {minimum}; no tested TensorFlow build runs on this driver.")
        return text.format(minimum=rec.driver_min)
    text = _(
        "Update the NVIDIA driver to >= {minimum}; if you cannot, {fallback} is the newest tested TensorFlow whose "
        "CUDA family this driver supports (CUDA minor-version compatibility): `{install}`."
    ).format(minimum=rec.driver_min, fallback=rec.fallback, install=rec.fallback_install)
    if rec.platform == "windows" or "[and-cuda]" in rec.fallback:
        return text
    system = _("It needs CUDA {cuda} and cuDNN {cudnn} installed on the system.")
    uninstallable = load().rule("and-cuda-uninstallable")
    return join(text, system.format(cuda=build.cuda, cudnn=build.cudnn),
                uninstallable["text"] if build.minor in uninstallable["tensorflow"] else "")


METAL_ROUTE = N_("Apple silicon, Metal GPU")
INTEL_MAC_ROUTE = N_("Intel Mac")


def routes(
    platform: str,
    python: str | None = None,
    driver: str | None = None,
    gpu: bool | str | None = None,
    *,
    driver_cuda: str | None = None,
    compute_capability: str | None = None,
) -> list[Recommendation]:
    """The recommendation for a platform, then the alternatives worth knowing: native Windows -> WSL2;
    macOS -> Apple's Metal route (where the Python has the plugin) and the Intel-Mac line."""
    first = recommend(platform, python, driver, gpu, driver_cuda=driver_cuda, compute_capability=compute_capability)
    if first.platform == "windows" and first.gpu:
        return [first, recommend("wsl2", python, driver, gpu, compute_capability=compute_capability)]
    if first.platform == "macos":
        asked = normalize_python(python)
        metal = _metal(asked)
        return [first, *([metal] if metal else []), _intel_mac(asked)]
    return [first]


def _metal(asked: str | None) -> Recommendation | None:
    """Apple silicon's Metal route (TF <= 2.18 + tensorflow-metal), for a Python the plugin has wheels for."""
    metal = load().rule("macos-metal")
    if asked and not metal_supports(asked):
        return None
    python = asked or metal["python"][1]
    minor = metal["tensorflow_max"]
    requirement = f"tensorflow=={minor}.*"
    install = pip_install(requirement, minor) + f' "{metal["plugin"]}"'
    notes = [rule_note("macos-metal"), *build_notes(minor)]
    return Recommendation("macos", requirement, in_venv("macos", python, install), None, python, True,
                          route=METAL_ROUTE, notes=notes)


def _intel_mac(asked: str | None) -> Recommendation:
    """Intel Macs: the last TensorFlow line released for them (2.16), CPU only."""
    last = parse_version(load().rule("macos-intel")["last"])
    before = version_text((last[0], last[1] + 1))
    build, python, notes = _build_for_python("linux", asked, before, "macos")
    requirement = f"tensorflow=={build.minor}.*"
    commands = in_venv("macos", python, *install_build(build, requirement))
    notes = [rule_note("macos-intel"), *notes, *build_notes(build.minor)]
    return Recommendation("macos", requirement, commands, build, python, False, route=INTEL_MAC_ROUTE, notes=notes)


def in_order(routes: list[Recommendation]) -> list[Recommendation]:
    """A platform's routes (``routes``) in the order the doctor, its JSON and notebook 01's picker show them, the
    one to follow first: on native Windows with an NVIDIA GPU, WSL2 (the course's TensorFlow on the GPU) before native
    Windows' TF 2.10, on which the course's notebooks do not run; elsewhere as they are."""
    if routes[0].platform == "windows" and routes[0].gpu:
        return sorted(routes, key=lambda rec: rec.platform != "wsl2")
    return list(routes)
