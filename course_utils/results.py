"""Record a notebook's key results once; the instructor report and the tests read the same records.

A record is one JSON file per notebook run (docs/instructors.md, "What each notebook records"), rewritten atomically
at each ``record``. In a kernel it is also one output of the notebook (``RECORD_MIME``, updated in place), which
``course run`` reads back (``record_in``). A new run keeps the earlier run's ``exercises``: a student's attempts
count across Run Alls.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
import os
import sys
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from course_utils.core.files import write_json_atomic
from course_utils.core.places import results_dir
from course_utils.core.rss import peak_rss_mib

RECORD_MIME = "application/vnd.course.record+json"  # a record as one output of its notebook (``Recorder._show``)


def earlier_exercises(path: Path, notebook: str) -> dict[str, dict[str, Any]]:
    """The exercise entries of ``notebook``'s earlier record at ``path``, to go on counting from; {} when there is no
    such record, or it cannot be read (a kernel killed while writing), or it belongs to another notebook."""
    try:
        earlier = read_results(path)
    except (OSError, ValueError):
        return {}
    exercises = earlier.get("exercises") if isinstance(earlier, dict) and earlier.get("notebook") == notebook else None
    if not isinstance(exercises, dict):
        return {}
    kept = {}
    for number, entry in exercises.items():
        if not isinstance(entry, dict):
            continue
        attempts, right_at = entry.get("attempts"), entry.get("right_at")
        whole = isinstance(attempts, int) and not isinstance(attempts, bool) and attempts >= 0
        kept[str(number)] = {
            "status": str(entry.get("status", "")),
            "attempts": attempts if whole else 0,
            "right_at": right_at if whole and isinstance(right_at, int) and 0 < right_at <= attempts else None,
        }
    return kept


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


class Recorder:
    """Collects one run's results and keeps its JSON record up to date."""

    def __init__(
        self,
        notebook: str,
        *,
        parameters: Mapping[str, Any],
        smoke: bool,
        path: Path | None = None,
        key_results: Sequence[str] | Mapping[str, str] = (),
        smoke_changes: Mapping[str, tuple[Any, Any]] | None = None,
    ):
        # default: COURSE_RESULTS_DIR, else the course home's results/
        self.path = Path(path) if path else results_dir() / f"{notebook}.json"
        self.data: dict[str, Any] = {
            "notebook": notebook,
            "smoke": smoke,
            "parameters": _plain(dict(parameters)),
            "environment": {},
            "results": {},
            "key_results": list(key_results),  # the few results a report shows for this notebook, in order
            # what each means (a lesson file's KEY_RESULTS says it; a notebook of one's own may not)
            "key_meanings": dict(key_results) if isinstance(key_results, Mapping) else {},
            # in smoke mode, each parameter the smoke caps lowered: [its value, the cap]
            "smoke_changes": {name: _plain(list(change)) for name, change in (smoke_changes or {}).items()},
            "started": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        }
        earlier = earlier_exercises(self.path, notebook)
        if earlier:
            self.data["exercises"] = earlier
        # Measured again at every save, e.g. {"peak_gpu_mib": ...}; a probe that returns None is left out.
        self.measures: dict[str, Callable[[], float | None]] = {}
        self._display_id: str | None = None  # the record's output in the notebook, once shown
        self._save()

    def environment(self, **values: Any) -> None:
        """Record facts about the run (device, TensorFlow version, data source)."""
        self.data["environment"].update(_plain(values))
        self._save()

    def note_data(self, info: Any, *, train_images_used: int) -> None:
        """Add a dataset's origin (a ``data.LoadInfo``) and the training images kept to ``environment["data"]``,
        one entry per dataset (``course.load`` calls this).
        """
        facts = {**dataclasses.asdict(info), "train_images_used": train_images_used}
        self.environment(data={**self.data["environment"].get("data", {}), facts.pop("dataset"): facts})

    def exercise(self, number: str, status: str, *, answered: bool, right: bool) -> dict[str, Any]:
        """Count an attempt at exercise ``number`` (``"3.1"``) and keep its outcome: ``exercises[number]`` is the
        last ``status``, the ``attempts`` with an answer (across runs) and ``right_at``, the first right one."""
        entry = self.data.setdefault("exercises", {}).setdefault(number, {"status": status, "attempts": 0,
                                                                           "right_at": None})
        entry["status"] = status
        if answered:
            entry["attempts"] += 1
            if right and entry["right_at"] is None:
                entry["right_at"] = entry["attempts"]
        self._save()
        return dict(entry)

    def record(self, **results: Any) -> None:
        """Record key results (numbers, strings, lists)."""
        self.data["results"].update(_plain(results))
        self._save()

    def _save(self) -> None:
        self.data["peak_rss_mib"] = round(peak_rss_mib(), 1)
        for name, probe in self.measures.items():
            value = probe()
            if value is not None:
                self.data[name] = value
        self.data["updated"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
        write_json_atomic(self.path, self.data, sort_keys=True)
        self._show()

    def _show(self) -> None:
        """The record as one output of the notebook, shown once and then updated in place; nothing outside a kernel.
        Only ``RECORD_MIME``: JupyterLab has no renderer for it and shows nothing."""
        shell = sys.modules["IPython"].get_ipython() if "IPython" in sys.modules else None
        if shell is None or getattr(shell, "kernel", None) is None:  # a script or a test, not a notebook's kernel
            return
        from IPython.display import display, update_display  # lazy: loaded already in a kernel (checked above)

        bundle = {RECORD_MIME: self.data}  # JSON types already (_plain); the kernel serialises it on sending
        if self._display_id is None:
            self._display_id = f"course-record-{uuid.uuid4().hex}"
            display(bundle, raw=True, display_id=self._display_id)
        else:
            update_display(bundle, raw=True, display_id=self._display_id)


def data_summary(environment: Mapping[str, Any]) -> str:
    """One line for a record's datasets, e.g. ``mnist: download, 60,000 + 10,000 (2,000 used)``; '' if none."""
    parts = []
    for dataset, facts in (environment.get("data") or {}).items():
        if not isinstance(facts, Mapping):
            continue
        text = f"{dataset}: {facts.get('source', '?')}"
        train, test, used = facts.get("train_images"), facts.get("test_images"), facts.get("train_images_used")
        if isinstance(train, int) and isinstance(test, int):
            text += f", {train:,} + {test:,}"
            if isinstance(used, int) and used != train:
                text += f" ({used:,} used)"
        parts.append(text)
    return "; ".join(parts)


def read_results(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read one record file (as written by ``Recorder``)."""
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def record_in(notebook: Mapping[str, Any]) -> dict[str, Any] | None:
    """The record an executed notebook holds in its outputs (``RECORD_MIME``; the last one, when the notebook ran
    twice in one kernel), or None when it has none (a run that stopped before ``setup``)."""
    found = None
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []):
            data = output.get("data", {}).get(RECORD_MIME)
            if isinstance(data, dict):
                found = data
    return found
