"""Version knowledge as data: which TensorFlow fits which Python, CUDA, cuDNN and driver.

The facts, each row with its public source, live in ``versions.json``: TensorFlow's tested build configurations,
NVIDIA's minimum drivers per CUDA major family and the platform rules. This module reads and compares them; it never
decides a version in code. A rule's ``text`` is read in the student's language (``localized``: CONTRIBUTING, "The
doctor's data files"); a changed English text no longer matches its translation, so the English is shown until the
translation is redone.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from course_utils.core.i18n import language

DATA_DIR = Path(__file__).parent
PLATFORMS = ("linux", "wsl2", "windows", "macos")

Version = tuple[int, ...]


def parse_version(text: str | None) -> Version | None:
    """``"512.77"`` -> ``(512, 77)``; ``"11.7"`` -> ``(11, 7)``; ``None`` for text without a leading number."""
    if text is None:
        return None
    match = re.match(r"\s*v?(\d+(?:\.\d+)*)", str(text))
    return tuple(int(part) for part in match.group(1).split(".")) if match else None


def version_text(version: Version) -> str:
    return ".".join(str(part) for part in version)


@lru_cache
def read_data(name: str) -> Any:
    """The doctor's data file ``<name>.json`` (versions, log_rules, findings, words; read once: do not change it),
    beside its modules in the package and in the website's bundle; ``schemas/<name>.schema.json`` is its schema
    (tests/doctor/test_data_files.py)."""
    return json.loads((DATA_DIR / f"{name}.json").read_text(encoding="utf-8"))


def english_hash(text: str) -> str:
    """The ``en_sha256`` of an English text: the first 16 hex digits of its SHA-256 (UTF-8)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def localized(entry: Mapping[str, Any]) -> str:
    """An entry's ``text`` in the language now: its translation when it translates the current English (same
    ``en_sha256``), else the English."""
    found = entry.get("translations", {}).get(language())
    if found and found.get("en_sha256") == english_hash(entry["text"]):
        return found["text"]
    return entry["text"]


@dataclass(frozen=True)
class Build:
    """One tested build configuration: a TensorFlow release and what it was built and tested with."""

    tensorflow: str
    python_min: str
    python_max: str
    cuda: str
    cudnn: str
    source: str

    @property
    def minor(self) -> str:
        """``"2.21.0"`` -> ``"2.21"`` (what ``==2.21.*`` pins)."""
        return ".".join(self.tensorflow.split(".")[:2])

    @property
    def cuda_major(self) -> int:
        return parse_version(self.cuda)[0]

    def supports_python(self, python: str) -> bool:
        """True when ``python`` ("3.11", "3.11.4") is inside this build's tested range."""
        version = parse_version(python)
        return version is not None and parse_version(self.python_min) <= version[:2] <= parse_version(self.python_max)


@dataclass(frozen=True)
class Table:
    """Everything in versions.json, typed."""

    linux: tuple[Build, ...]
    windows: tuple[Build, ...]
    driver_minimums: list[dict[str, Any]]  # versions.json's rows: cuda_major, linux, windows
    rules: dict[str, dict[str, Any]]
    gpus: dict[str, Any]  # the GPU families, the builds' target lists, the known failures (course_utils.doctor.gpus)

    def builds(self, platform: str) -> tuple[Build, ...]:
        """Tested GPU builds for a platform, newest first (WSL2 uses the Linux builds; macOS has none)."""
        return {"linux": self.linux, "wsl2": self.linux, "windows": self.windows}.get(check_platform(platform), ())

    def rule(self, rule_id: str) -> dict[str, Any]:
        """The rule ``rule_id`` of versions.json, its ``"text"`` in the language now."""
        raw = self.rules[rule_id]
        return {**raw, "text": localized(raw)}

    def matching(self, platform: str, python: str | None = None, *, before: str | None = None) -> Iterator[Build]:
        """The GPU builds for ``platform``, newest first, whose Python range holds ``python`` (any if None) and whose
        release is older than ``before`` (``"2.17"``; any if None)."""
        return (build for build in self.builds(platform) if (python is None or build.supports_python(python))
                and (before is None or parse_version(build.minor) < parse_version(before)))

    def newest(self, platform: str, python: str | None = None, *, before: str | None = None) -> Build | None:
        return next(self.matching(platform, python, before=before), None)

    def python_range(self, platform: str, *, before: str | None = None) -> tuple[str, str]:
        """Oldest and newest Python any GPU build of ``platform`` (older than ``before``) was tested with."""
        builds = list(self.matching(platform, before=before))
        return (
            version_text(min(parse_version(b.python_min) for b in builds)),
            version_text(max(parse_version(b.python_max) for b in builds)),
        )

    def min_driver(self, cuda_major: int, platform: str) -> str | None:
        """The minimum driver for a CUDA major family on this platform: NVIDIA's (WSL2 runs the Windows driver),
        raised for CUDA 12 and later to the one TensorFlow's pip guide asks for on Linux and WSL2."""
        row = next((row for row in self.driver_minimums if row["cuda_major"] == cuda_major), None)
        if row is None:
            return None
        platform = check_platform(platform)
        minimum = row["windows" if platform in ("windows", "wsl2") else "linux"]
        route = {"linux": "linux-driver-min", "wsl2": "wsl2"}.get(platform)
        if route and cuda_major >= 12:
            minimum = max(minimum, self.rule(route)["driver_min"], key=parse_version)
        return minimum

    def numpy_pin(self, tensorflow: str) -> str | None:
        """``"numpy<2"`` for a TensorFlow that lets pip install NumPy 2 beside it although it was built against NumPy 1
        (before ``capped_since``, 2.12: rule 'numpy-2'), else None: 2.12 to 2.17 cap NumPy themselves."""
        rule = self.rule("numpy-2")
        version = parse_version(tensorflow)
        return rule["pin"] if version is not None and version[:2] < parse_version(rule["capped_since"])[:2] else None

    def keras_2(self, tensorflow: str) -> bool:
        """True for a TensorFlow that comes with Keras 2 (before 2.16, rule 'keras-2-only')."""
        version = parse_version(tensorflow)
        return version is not None and version[:2] < parse_version(self.rule("keras-2-only")["before"])[:2]

    def driver_cuda_major(self, driver: str, platform: str) -> int | None:
        """The newest CUDA major family a driver version can run (minor-version compatibility), or None."""
        version = parse_version(driver)
        return max((row["cuda_major"] for row in self.driver_minimums
                    if version is not None and version >= parse_version(self.min_driver(row["cuda_major"], platform))),
                   default=None)


def check_platform(platform: str) -> str:
    value = str(platform).lower()
    if value not in PLATFORMS:
        raise ValueError(f"platform {platform!r} is not one of {', '.join(PLATFORMS)}")
    return value


def _build(row: dict[str, Any]) -> Build:
    low, high = row["python"]
    return Build(row["tensorflow"], low, high, row["cuda"], row["cudnn"], row["source"])


@lru_cache(maxsize=1)
def load() -> Table:
    """Read versions.json (cached): the course's single source of version facts."""
    data = read_data("versions")
    return Table(
        linux=tuple(_build(r) for r in data["linux_gpu"]),
        windows=tuple(_build(r) for r in data["windows_native_gpu"]),
        driver_minimums=data["driver_minimums"],
        rules={r["id"]: r for r in data["rules"]},
        gpus=data["gpus"],
    )
