"""What to install: the TensorFlow requirement and the exact commands for a platform, Python and driver.

``recommend(platform, python, driver, gpu)`` reads every version fact from the table in
``course_utils/doctor/versions.json`` (through ``course_utils.doctor.versions``): the newest tested
build for the Python, the platform's install route (``tensorflow[and-cuda]`` on Linux and
WSL2 since 2.14; the conda recipe and ``tensorflow<2.11`` on native Windows; ``tensorflow``
plus ``tensorflow-metal`` on macOS), and the NVIDIA driver that route needs. The doctor,
notebook 01's picker and the tests all call this one function.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from course_utils.doctor.versions import Build, check_platform, load, parse_version, version_text

PLATFORM_NAMES = {"linux": "Linux", "wsl2": "WSL2", "windows": "native Windows", "macos": "macOS"}
VERIFY = "python -c \"import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))\""


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
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
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
            "notes": list(self.notes),
        }

    def text(self) -> str:
        lines = [f"{PLATFORM_NAMES[self.platform]}: {self.tensorflow}"]
        lines += [f"    {command}" for command in self.commands]
        lines += [f"  note: {note}" for note in self.notes]
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
    notes: list[str] = []
    if python is not None and asked is None:
        notes.append(f"could not read the Python version {python!r}; assuming any supported one")
    use_gpu = gpu is not False and platform != "macos"

    if platform == "macos":
        rule = table.rule("macos")
        commands = [
            f"python{asked or '3'} -m venv tf",
            "source tf/bin/activate",
            "pip install --upgrade pip",
            "pip install tensorflow",
            "pip install tensorflow-metal",
            "pip install tensorboard",
            VERIFY,
        ]
        notes += [rule["text"], table.rule("tensorboard-separate")["text"]]
        return Recommendation(platform, "tensorflow", commands, None, asked, False, notes=notes)

    build_platform = platform if use_gpu else "linux"  # CPU wheels: the Linux table's Python ranges
    newest = table.newest(build_platform)
    build = table.newest(build_platform, asked) if asked else newest
    env_python = asked
    if build is None:  # no tested build for this Python: use a Python the newest build supports
        build, env_python = newest, newest.python_max
        low, high = table.python_range(build_platform)
        notes.append(
            f"no tested TensorFlow GPU build supports Python {asked} on {PLATFORM_NAMES[platform]} "
            f"(tested: {low}-{high}); the commands create a Python {env_python} environment"
        )
    elif asked and build is not newest:
        notes.append(
            f"Python {asked} limits you to TensorFlow {build.minor}; Python {newest.python_min}-{newest.python_max} "
            f"gets {newest.minor}"
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
        notes.append(
            f"{table.rule('windows-native-gpu-last')['text']} TF {build.minor} was built and tested with "
            f"CUDA {build.cuda} and cuDNN {build.cudnn}, on Python {build.python_min}-{build.python_max}."
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
                f"TF {build.minor} needs CUDA {build.cuda} and cuDNN {build.cudnn} installed on the system "
                f"(its tested configuration); tensorflow[and-cuda], which brings them as pip wheels, exists only "
                f"from TF {table.rule('and-cuda')['since']}"
            )
        if use_gpu and "[and-cuda]" in requirement:
            notes.append(table.rule("pip-symlink-step")["text"])
        if platform == "wsl2":
            notes += [table.rule("wsl2")["text"], table.rule("wsl2-no-linux-driver")["text"]]
    if not asked and use_gpu and platform != "windows":
        notes.append(f"TF {build.minor} was tested with Python {build.python_min}-{build.python_max}")
    if not use_gpu:
        notes.append("CPU-only install: no NVIDIA GPU on this machine")

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
        rec.notes.append(f"could not read the driver version {driver!r}; it needs to be >= {rec.driver_min}")
        return
    if version is None:
        rec.notes.append(f"needs an NVIDIA driver >= {rec.driver_min}")
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
        f"your driver {driver} is older than the {rec.driver_min} this route needs: update it"
        + (
            f" (or use {rec.fallback}: the newest tested build whose CUDA family this driver supports)"
            if rec.fallback
            else ""
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
