"""What to install: the TensorFlow requirement and the exact commands for a platform, Python and driver.

``recommend(platform, python, driver, gpu)`` reads every version fact from the table in
``course_utils/doctor/versions.json`` (through ``course_utils.doctor.versions``): the newest tested
build for the Python, the platform's install route (``tensorflow[and-cuda]`` on Linux and
WSL2 since 2.14; the conda recipe and ``tensorflow<2.11`` on native Windows; ``tensorflow``
plus ``tensorflow-metal`` on macOS), and the NVIDIA driver that route needs. The doctor,
notebook 01's picker and the tests all call this one function.

Each note on a recommendation is a ``Note(code, text)``: the ``code`` (kebab-case, listed in
``NOTE_CODES``) is what programs match on - the doctor turns notes into findings by code - and
the ``text`` is for people, free to be reworded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from course_utils.doctor.versions import Build, check_platform, load, parse_version, version_text

PLATFORM_NAMES = {"linux": "Linux", "wsl2": "WSL2", "windows": "native Windows", "macos": "macOS"}
VERIFY = "python -c \"import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))\""

# Every note code ``recommend()`` gives, and what it means. A code whose text is a rule of
# versions.json (``table.rule(code)["text"]``) is named after that rule.
NOTE_CODES: dict[str, str] = {
    "python-unreadable": "the Python version given is not a version; any supported Python is assumed",
    "no-gpu-build-for-python": "no tested build supports the Python asked for; the commands use a tested Python",
    "python-limits-tensorflow": "the Python asked for gets an older TensorFlow than the newest tested one",
    "tested-python-range": "no Python was asked for: the Pythons the recommended build was tested with",
    "macos": "rule 'macos': no CUDA on macOS; tensorflow-metal on Apple silicon",
    "tensorboard-separate": "rule 'tensorboard-separate': tensorboard must be installed explicitly",
    "windows-native-gpu-last": "rule 'windows-native-gpu-last', plus the build's tested CUDA, cuDNN and Python",
    "system-cuda-needed": "the build predates tensorflow[and-cuda]: CUDA and cuDNN must be installed on the system",
    "pip-symlink-step": "rule 'pip-symlink-step': the pip guide's symlink step if the GPU is still not found",
    "wsl2": "rule 'wsl2': the Windows build and Windows NVIDIA driver WSL2 needs",
    "wsl2-no-linux-driver": "rule 'wsl2-no-linux-driver': no Linux NVIDIA driver inside WSL2",
    "cpu-only-install": "no NVIDIA GPU on the machine: the CPU-only wheel",
    "driver-unreadable": "the driver version given is not a version; the route's minimum is stated",
    "driver-minimum": "no driver version given: the minimum NVIDIA driver the route needs",
    "driver-too-old": "the driver given is older than the route needs; names the fallback build if one runs",
}


def _is_kebab(code: str) -> bool:
    """'no-gpu-build-for-python' yes; 'No_GPU', 'a--b', '-a', '' no."""
    return all(part and part.isascii() and part.isalnum() and part == part.lower() for part in code.split("-"))


@dataclass(frozen=True)
class Note:
    """A note on a recommendation: ``code`` is stable (programs match on it), ``text`` is for people."""

    code: str  # kebab-case, one of NOTE_CODES
    text: str

    def __post_init__(self) -> None:
        if not _is_kebab(self.code):
            raise ValueError(f"note code {self.code!r} is not kebab-case")

    def __str__(self) -> str:
        return self.text

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "text": self.text}


@dataclass
class Recommendation:
    """What to install on one platform, and the exact commands."""

    platform: str
    tensorflow: str  # the requirement, e.g. 'tensorflow[and-cuda]==2.21.*' or 'tensorflow<2.11'
    commands: list[str]
    build: Build | None  # the tested configuration behind it (None on macOS)
    python: str | None  # the Python the commands use (None: any the build supports)
    gpu: bool  # True: a GPU route; False: CPU only
    driver_min: str | None = None  # NVIDIA driver this route needs
    driver: str | None = None  # the driver it was checked against
    driver_ok: bool | None = None  # None when no driver was given
    fallback: str | None = None  # the newest requirement the given driver does run, if it is too old
    notes: list[Note] = field(default_factory=list)

    def note_codes(self) -> list[str]:
        """The codes of the notes, in order (what programs should match on, never the text)."""
        return [note.code for note in self.notes]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; notes as ``{"code": ..., "text": ...}`` objects."""
        build = self.build
        return {
            "platform": self.platform,
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
            "notes": [note.to_dict() for note in self.notes],
        }

    def text(self) -> str:
        lines = [f"{PLATFORM_NAMES[self.platform]}: {self.tensorflow}"]
        lines += [f"    {command}" for command in self.commands]
        lines += [f"  note: {note.text}" for note in self.notes]
        return "\n".join(lines)


def normalize_python(python: str | None) -> str | None:
    """'3.11.4' -> '3.11'; None stays None; text that is not a version -> None."""
    version = parse_version(python) if python is not None else None
    return version_text(version[:2]) if version and len(version) >= 2 else None


def _requirement(build: Build, platform: str, gpu: bool) -> str:
    table = load()
    if platform == "windows" and gpu:
        recipe = table.rule("windows-native-recipe")
        return (
            recipe["requirement"]
            if build.minor == table.rule("windows-native-gpu-last")["last"]
            else (f"tensorflow=={build.minor}.*")
        )
    and_cuda = parse_version(build.tensorflow) >= parse_version(table.rule("and-cuda")["since"])
    return f"tensorflow[and-cuda]=={build.minor}.*" if gpu and and_cuda else f"tensorflow=={build.minor}.*"


def _driver_min(build: Build, platform: str) -> str:
    """NVIDIA's minimum for the build's CUDA family, raised to the pip guide's for CUDA 12+ on Linux/WSL2."""
    table = load()
    minimum = table.min_driver(build.cuda_major, platform)
    route = {"linux": "linux-driver-min", "wsl2": "wsl2"}.get(platform)
    if route and build.cuda_major >= 12:
        minimum = max(minimum, table.rule(route)["driver_min"], key=parse_version)
    return minimum


def _rule_note(name: str) -> Note:
    """The note whose text is the versions.json rule ``name``; its code is the rule's name."""
    return Note(name, load().rule(name)["text"])


def _tensorboard(build: Build) -> list[str]:
    since = load().rule("tensorboard-separate")["since"]
    if parse_version(build.tensorflow) >= parse_version(since):
        return [f'pip install "tensorboard=={build.minor}.*"']
    return []


def recommend(
    platform: str,
    python: str | None = None,
    driver: str | None = None,
    gpu: bool | str | None = None,
    *,
    driver_cuda: str | None = None,
) -> Recommendation:
    """The TensorFlow to install and the exact commands, for one platform.

    ``platform``: "linux", "wsl2", "windows" (native) or "macos". ``python``: "3.11" (None:
    any). ``driver``: the NVIDIA driver version from nvidia-smi (None: unknown).
    ``gpu``: False for a machine without an NVIDIA GPU (CPU install); anything else (a GPU
    name, True, None) means the GPU route. ``driver_cuda``: nvidia-smi's "CUDA Version",
    when known. Everything version-related comes from the table in ``versions.json``.
    """
    platform = check_platform(platform)
    table = load()
    asked = normalize_python(python)
    notes: list[Note] = []
    if python is not None and asked is None:
        text = f"could not read the Python version {python!r}; assuming any supported one"
        notes.append(Note("python-unreadable", text))
    use_gpu = gpu is not False and platform != "macos"

    if platform == "macos":
        commands = [
            f"python{asked or '3'} -m venv tf",
            "source tf/bin/activate",
            "pip install --upgrade pip",
            "pip install tensorflow",
            "pip install tensorflow-metal",
            "pip install tensorboard",
            VERIFY,
        ]
        notes += [_rule_note("macos"), _rule_note("tensorboard-separate")]
        return Recommendation(platform, "tensorflow", commands, None, asked, False, notes=notes)

    build_platform = platform if use_gpu else "linux"  # CPU wheels: the Linux table's Python ranges
    newest = table.newest(build_platform)
    build = table.newest(build_platform, asked) if asked else newest
    env_python = asked
    if build is None:  # no tested build for this Python: use a Python the newest build supports
        build, env_python = newest, newest.python_max
        low, high = table.python_range(build_platform)
        notes.append(
            Note(
                "no-gpu-build-for-python",
                f"no tested TensorFlow GPU build supports Python {asked} on {PLATFORM_NAMES[platform]} "
                f"(tested: {low}-{high}); the commands create a Python {env_python} environment",
            )
        )
    elif asked and build is not newest:
        notes.append(
            Note(
                "python-limits-tensorflow",
                f"Python {asked} limits you to TensorFlow {build.minor}; "
                f"Python {newest.python_min}-{newest.python_max} gets {newest.minor}",
            )
        )
    requirement = _requirement(build, platform, use_gpu)

    if platform == "windows" and use_gpu:
        recipe = table.rule("windows-native-recipe")
        env_python = env_python or build.python_max
        commands = [
            f"conda create --name tf python={env_python}",
            "conda activate tf",
            recipe["conda"],
            "pip install --upgrade pip",
            f'pip install "{requirement}"',
            VERIFY,
        ]
        last = _rule_note("windows-native-gpu-last")
        notes.append(
            Note(
                last.code,
                f"{last.text} TF {build.minor} was built and tested with CUDA {build.cuda} and cuDNN {build.cudnn}, "
                f"on Python {build.python_min}-{build.python_max}.",
            )
        )
    elif platform == "windows":
        commands = [
            f"py -{env_python} -m venv tf" if env_python else "py -3 -m venv tf",
            r"tf\Scripts\activate",
            "python -m pip install --upgrade pip",
            f'pip install "{requirement}"',
            *_tensorboard(build),
            VERIFY,
        ]
    else:
        commands = [
            f"python{env_python or '3'} -m venv tf",
            "source tf/bin/activate",
            "pip install --upgrade pip",
            f'pip install "{requirement}"',
            *_tensorboard(build),
            VERIFY,
        ]
        if use_gpu and "[and-cuda]" not in requirement:
            notes.append(
                Note(
                    "system-cuda-needed",
                    f"TF {build.minor} needs CUDA {build.cuda} and cuDNN {build.cudnn} installed on the system "
                    f"(its tested configuration); tensorflow[and-cuda], which brings them as pip wheels, exists "
                    f"only from TF {table.rule('and-cuda')['since']}",
                )
            )
        if use_gpu and "[and-cuda]" in requirement:
            notes.append(_rule_note("pip-symlink-step"))
        if platform == "wsl2":
            notes += [_rule_note("wsl2"), _rule_note("wsl2-no-linux-driver")]
    if not asked and use_gpu and platform != "windows":
        tested = f"TF {build.minor} was tested with Python {build.python_min}-{build.python_max}"
        notes.append(Note("tested-python-range", tested))
    if not use_gpu:
        notes.append(Note("cpu-only-install", "CPU-only install: no NVIDIA GPU on this machine"))

    rec = Recommendation(platform, requirement, commands, build, env_python, use_gpu, notes=notes)
    if use_gpu:
        rec.driver_min = _driver_min(build, platform)
        _check_driver(rec, driver, driver_cuda)
    return rec


def _check_driver(rec: Recommendation, driver: str | None, driver_cuda: str | None) -> None:
    table = load()
    build = rec.build
    version = parse_version(driver) if driver else None
    if driver and version is None:
        text = f"could not read the driver version {driver!r}; it needs to be >= {rec.driver_min}"
        rec.notes.append(Note("driver-unreadable", text))
        return
    if version is None:
        rec.notes.append(Note("driver-minimum", f"needs an NVIDIA driver >= {rec.driver_min}"))
        return
    rec.driver = driver
    cuda_ok = True
    if driver_cuda and parse_version(driver_cuda):
        cuda_ok = parse_version(driver_cuda)[0] >= build.cuda_major
    rec.driver_ok = version >= parse_version(rec.driver_min) and cuda_ok
    if rec.driver_ok:
        return
    major = table.driver_cuda_major(driver, rec.platform)
    if driver_cuda and parse_version(driver_cuda):
        major = min(major or 0, parse_version(driver_cuda)[0]) or None
    fallback = None
    for candidate in table.builds(rec.platform) if major else ():
        if rec.python and not candidate.supports_python(rec.python):
            continue
        if candidate.cuda_major <= major and version >= parse_version(_driver_min(candidate, rec.platform)):
            fallback = candidate
            break
    if fallback is not None:
        rec.fallback = _requirement(fallback, rec.platform, True)
    rec.notes.append(
        Note(
            "driver-too-old",
            f"your driver {driver} is older than the {rec.driver_min} this route needs: update it"
            + (
                f" (or use {rec.fallback}: the newest tested build whose CUDA family this driver supports)"
                if rec.fallback
                else ""
            ),
        )
    )


def routes(
    platform: str,
    python: str | None = None,
    driver: str | None = None,
    gpu: bool | str | None = None,
    *,
    driver_cuda: str | None = None,
) -> list[Recommendation]:
    """The recommendation for a platform, then the alternatives worth knowing (native Windows -> WSL2)."""
    first = recommend(platform, python, driver, gpu, driver_cuda=driver_cuda)
    if check_platform(platform) == "windows" and first.gpu:
        return [first, recommend("wsl2", python, driver, gpu)]
    return [first]
