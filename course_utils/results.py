"""Record a notebook's key results once; the instructor report and the tests read the same records.

A record is one JSON file per notebook run::

    {"notebook": "05_cnn", "smoke": true, "parameters": {...}, "environment": {...},
     "results": {"test_accuracy": 0.97, ...}, "peak_rss_mib": 812.4, "updated": "..."}

Where it goes: ``$COURSE_RESULTS_FILE`` (the runner sets one per run), else
``$COURSE_RESULTS_DIR/<notebook>.json``, else ``build/results/<notebook>.json`` in the
project folder. Each ``record`` call rewrites the file atomically.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import resource
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def peak_rss_mib() -> float:
    """This process's peak resident memory so far, in MiB.

    Linux: ``VmHWM`` from /proc/self/status. Not ``getrusage``'s ``ru_maxrss``: Linux keeps
    that across ``exec``, so a child started by a big process (a kernel started by a runner
    that holds TensorFlow) would report its parent's peak.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024  # bytes on macOS, KiB elsewhere


def default_results_path(notebook: str) -> Path:
    """Where ``notebook``'s record goes, following the environment (see module docstring)."""
    if os.environ.get("COURSE_RESULTS_FILE"):
        return Path(os.environ["COURSE_RESULTS_FILE"])
    if os.environ.get("COURSE_RESULTS_DIR"):
        return Path(os.environ["COURSE_RESULTS_DIR"]) / f"{notebook}.json"
    root = PROJECT_ROOT if (PROJECT_ROOT / "pyproject.toml").is_file() else Path.cwd()
    return root / "build" / "results" / f"{notebook}.json"


def _plain(value: Any) -> Any:
    """Turn NumPy scalars/arrays and tuples into JSON types; reject what JSON cannot hold."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot record {type(value).__name__} value {value!r}: use numbers, strings, lists or dicts")


def _write_atomic(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w") as fh:
        json.dump(data, fh, indent=2, sort_keys=True)
        fh.write("\n")
    os.replace(tmp, path)


class Recorder:
    """Collects one run's results and keeps its JSON record up to date."""

    def __init__(self, notebook: str, *, parameters: Mapping[str, Any], smoke: bool, path: Path | None = None):
        self.path = Path(path) if path else default_results_path(notebook)
        self.data: dict[str, Any] = {
            "notebook": notebook,
            "smoke": smoke,
            "parameters": _plain(dict(parameters)),
            "environment": {},
            "results": {},
            "started": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        }
        self._save()

    def environment(self, **values: Any) -> None:
        """Record facts about the run (device, TensorFlow version, data source)."""
        self.data["environment"].update(_plain(values))
        self._save()

    def record(self, **results: Any) -> dict[str, Any]:
        """Record key results (numbers, strings, lists); returns everything recorded so far."""
        self.data["results"].update(_plain(results))
        self._save()
        return dict(self.data["results"])

    def _save(self) -> None:
        self.data["peak_rss_mib"] = round(peak_rss_mib(), 1)
        self.data["updated"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
        _write_atomic(self.path, self.data)


def read_results(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read one record file (as written by ``Recorder``)."""
    with open(path) as fh:
        return json.load(fh)


def read_all(folder: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """Every record in ``folder``, keyed by file stem."""
    return {p.stem: read_results(p) for p in sorted(Path(folder).glob("*.json"))}
