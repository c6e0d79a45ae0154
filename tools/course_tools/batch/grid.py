"""What a batch run will do, checked before anything runs: notebooks, parameters, grid files (docs/instructors.md,
"Batch runs" and "Parameter grids"). Every problem is an ``InputError`` naming it, raised before any kernel starts."""

from __future__ import annotations

import ast
import contextlib
import difflib
import itertools
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import ConstructorError

from course_tools import _
from course_tools.links import notebooks
from course_utils.core.errors import InputError, ParameterError
from course_utils.core.places import PROJECT_ROOT
from course_utils.params import check_value

NOTEBOOKS_DIR = PROJECT_ROOT / "notebooks"
GRID_KEYS = {"title", "notebooks", "parameters", "results", "smoke", "timeout"}
_NO_DEFAULT = object()  # a declared default that is not a literal: any value is accepted
# The most runs one plan may hold (notebooks x grid points). A full course run is 7; the largest grid shipped
# (grids/batch_size.yaml) is 5. Each run is a kernel start and minutes of training, so past this a grid is
# almost certainly a slip (a range written out, one list too many); split it into several files instead.
MAX_RUNS = 1000
MAX_GRID_BYTES = 1 << 20  # a grid file is a few lines; past 1 MiB it is not a grid file


@dataclass(frozen=True)
class RunSpec:
    """One run: a notebook, the parameters given to it, and the name of its outputs."""

    notebook: Path
    parameters: dict[str, Any]
    name: str
    point: int = 1  # which grid point of this notebook (1-based)
    points: int = 1  # how many grid points this notebook has

    @property
    def label(self) -> str:
        """How the progress display names this run."""
        shown = ", ".join(f"{k}={v!r}" for k, v in self.parameters.items())
        where = (" " + _("point {point}/{points}").format(point=self.point, points=self.points)
                 if self.points > 1 else "")
        return f"{self.notebook.stem}{where}" + (f" ({shown})" if shown else "")


@dataclass
class Plan:
    """Every run of a batch, in order, and the settings they share."""

    runs: list[RunSpec]
    smoke: bool = False
    timeout: int | None = None  # seconds per cell, whole (nbclient takes an integer)
    title: str | None = None
    results: list[str] | None = None  # key results to compare (None: every numeric result)
    grid_file: str | None = None
    grid: dict[str, Any] = field(default_factory=dict)
    skipped: dict[str, list[str]] = field(default_factory=dict)  # --if-declared: notebook -> parameters left out


def discover() -> list[Path]:
    """The course notebooks in order: ``NN_name.ipynb``."""
    return notebooks(NOTEBOOKS_DIR)


def resolve_notebook(name: str | int, *, base: Path | None = None) -> Path:
    """A notebook argument as a path: a file (also relative to ``base``), or a name/number in ``notebooks/``."""
    if isinstance(name, int) and not isinstance(name, bool):
        name = f"{name:02d}"  # YAML reads `05` as the number 5
    if not isinstance(name, str) or not name:
        raise InputError(_("a notebook must be a name, number or path, not {name!r}").format(name=name))
    for candidate in (Path(name), *((base / name,) if base else ())):
        if candidate.is_file():
            return candidate
    course = discover()
    matches = [p for p in course if name in (p.stem, p.name, p.stem.split("_")[0])]
    if len(matches) != 1:
        raise InputError(_("no notebook {name!r} (choose from: {choices})").format(
            name=name, choices=", ".join(p.stem for p in course) or _("none found")))
    return matches[0]


_CONSTANTS = {"True": True, "true": True, "False": False, "false": False, "None": None, "null": None, "~": None}


def parse_value(text: str) -> Any:
    """A ``-p NAME VALUE`` value, read as papermill's ``-p`` does, plus YAML lists, dicts and quoted strings
    (docs/instructors.md, "Batch runs")."""
    if text in _CONSTANTS:
        return _CONSTANTS[text]
    for kind in (int, float):
        with contextlib.suppress(ValueError):
            return kind(text)
    if text[:1] in ("[", "{", '"', "'"):
        try:
            return _load_yaml(text)
        except yaml.YAMLError as exc:
            raise InputError(_("cannot read the value {text!r}: {problem}").format(
                text=text, problem=_yaml_problem(exc))) from None
    return text


def declared_parameters(notebook: Path) -> dict[str, dict[str, Any]]:
    """The parameters ``notebook`` declares (papermill's inspection), each with its default as a value."""
    import papermill as pm

    try:
        found = pm.inspect_notebook(str(notebook))
    except Exception as exc:  # not JSON, not a notebook: papermill's own errors vary
        raise InputError(_("cannot read notebook {notebook}: {type}: {error}").format(
            notebook=notebook, type=type(exc).__name__, error=exc)) from None
    for info in found.values():
        try:
            info["value"] = ast.literal_eval(info["default"])
        except (ValueError, SyntaxError, TypeError):
            info["value"] = _NO_DEFAULT
    return found


def _type_problem(value: Any, info: Mapping[str, Any]) -> str | None:
    """Why ``value`` does not fit a parameter declared with ``info``; None when it fits."""
    default = info["value"]
    if default is _NO_DEFAULT or default is None:
        return None  # None means "all" or "unset": the notebook checks the value itself
    if value is None:
        hint = str(info.get("inferred_type_name", ""))
        return None if ("None" in hint and hint != "None") or "Optional" in hint else _("None is not allowed")
    expected: tuple[type, ...] = {float: (int, float), list: (list, tuple), tuple: (list, tuple)}.get(
        type(default), (type(default),))
    if (isinstance(value, bool) and bool not in expected) or not isinstance(value, expected):
        return _("{expected} is expected, not {given}").format(
            expected=_a(type(default).__name__), given=_a(type(value).__name__))
    return None


def _a(noun: str) -> str:
    """A value of type ``noun``, as the problem names it: "an int", "a str"."""
    return (_("an {type}") if noun[0] in "aeiou" else _("a {type}")).format(type=noun)


def check_parameters(notebook: Path, parameters: Mapping[str, Any], declared: Mapping[str, Any] | None = None) -> None:
    """Raise InputError unless ``notebook`` declares every parameter and each value fits its name and its default's
    type."""
    declared = declared_parameters(notebook) if declared is None else declared
    for name, value in parameters.items():
        if name not in declared:
            if not declared:
                raise InputError(
                    _("{notebook} declares no parameters (no cell tagged 'parameters'), not {name}").format(
                        notebook=notebook.name, name=name))
            close = difflib.get_close_matches(name, list(declared), n=1)
            what = (_("{notebook} does not declare parameter {name} - did you mean {close}? (it declares: {declared})")
                    if close else _("{notebook} does not declare parameter {name} (it declares: {declared})"))
            raise InputError(what.format(notebook=notebook.name, name=name, close=close[0] if close else "",
                                         declared=", ".join(declared)))
        try:  # what the name promises (params.check_value): a finite number, a count >= 1, an amount > 0
            check_value(name, value)
        except ParameterError as exc:
            raise InputError(f"{notebook.name}: {exc.what}", exc.fix) from None
        problem = _type_problem(value, declared[name])
        if problem:
            raise InputError(
                _("parameter {name} = {value!r} for {notebook}: {problem} (its default is {default})").format(
                    name=name, value=value, notebook=notebook.name, problem=problem, default=declared[name]["default"])
            )


def _yaml_problem(exc: Exception) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or exc
    if not mark:
        return str(problem)
    return _("{problem} at line {line}, column {column}").format(problem=problem, line=mark.line + 1,
                                                                 column=mark.column + 1)


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's SafeLoader, made strict: an alias is an error, and so is a key repeated in one mapping."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise ConstructorError(
                None, None,
                _("YAML aliases are not allowed in grid files (nested ones can turn a few lines into billions "
                  "of values): write the values out instead of the alias *{anchor}").format(anchor=event.anchor),
                event.start_mark,
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: dict[Any, Any] = {}
        for key_node, _value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: SafeLoader names it below
                continue
            if first is not None:
                raise ConstructorError(
                    None, None,
                    _("duplicate key {key!r} (a YAML reader silently keeps only the last): give each key once; "
                      "it is first at line {line} and again").format(key=key, line=first.line + 1),
                    key_node.start_mark,
                )
            seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)


def _load_yaml(text: str) -> Any:
    """``yaml.safe_load`` with the strict loader (no aliases, no duplicate keys)."""
    return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass


def load_grid(path: Path) -> dict[str, Any]:
    """Read and check a grid file; every value in ``parameters`` becomes a list of values to try."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_GRID_BYTES + 1)  # no more: a huge file is refused unread
        if len(data) > MAX_GRID_BYTES:
            raise InputError(
                _("grid file {path} is larger than {limit:,} bytes: a grid file is a few lines").format(
                    path=path, limit=MAX_GRID_BYTES),
                _("Check that you passed the grid file itself (not a data or notebook file) to --grid."),
            )
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(_("cannot read grid file {path}: {reason}").format(
            path=path, reason=getattr(exc, "strerror", None) or exc)) from None
    try:
        grid = _load_yaml(text)
    except yaml.constructor.ConstructorError as exc:  # valid YAML that a grid file may not hold
        raise InputError(_("grid file {path} is refused: {problem}").format(
            path=path, problem=_yaml_problem(exc))) from None
    except yaml.YAMLError as exc:
        raise InputError(_("grid file {path} is not valid YAML: {problem}").format(
            path=path, problem=_yaml_problem(exc))) from None
    if not isinstance(grid, dict):
        raise InputError(_("grid file {path} must be a mapping with keys {keys}").format(
            path=path, keys=", ".join(sorted(GRID_KEYS))))
    unknown = sorted(set(map(str, grid)) - GRID_KEYS)
    if unknown:
        raise InputError(_("grid file {path}: unknown key {key!r} (allowed: {keys})").format(
            path=path, key=unknown[0], keys=", ".join(sorted(GRID_KEYS))))
    params = grid.get("parameters") or {}
    if not isinstance(params, dict):
        raise InputError(_("grid file {path}: 'parameters' must map each NAME to a list of values").format(path=path))
    grid["parameters"] = {}
    for name, values in params.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise InputError(_("grid file {path}: {name!r} is not a parameter name").format(path=path, name=name))
        values = values if isinstance(values, list) else [values]
        if not values:
            raise InputError(_("grid file {path}: parameter {name} has no values to try").format(path=path, name=name))
        grid["parameters"][name] = values
    notebooks = grid.get("notebooks", [])
    notebooks = [notebooks] if isinstance(notebooks, (str, int)) else notebooks
    if not isinstance(notebooks, list) or not all(isinstance(n, (str, int)) for n in notebooks):
        raise InputError(_("grid file {path}: 'notebooks' must be a list of notebook names, numbers or paths").format(
            path=path))
    grid["notebooks"] = notebooks
    for key, kind in (("smoke", bool), ("title", str)):
        if key in grid and not isinstance(grid[key], kind):
            raise InputError(_("grid file {path}: {key!r} must be a {kind}, not {value!r}").format(
                path=path, key=key, kind=kind.__name__, value=grid[key]))
    if "timeout" in grid:
        problem = _timeout_problem(grid["timeout"], "'timeout'")
        if problem:
            raise InputError(_("grid file {path}: {problem}").format(path=path, problem=problem))
        grid["timeout"] = int(grid["timeout"])
    results = grid.get("results")
    if results is not None and (not isinstance(results, list) or not all(isinstance(r, str) for r in results)):
        raise InputError(_("grid file {path}: 'results' must be a list of result names").format(path=path))
    return grid


def _timeout_problem(timeout: Any, name: str) -> str | None:
    """Why ``timeout`` (given as ``name``) is no per-cell time limit (nbclient takes whole seconds); None if it is."""
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        return _("{name} must be a positive number of whole seconds, at least 1, not {value!r}").format(
            name=name, value=timeout)
    if not (math.isfinite(timeout) and timeout >= 1 and timeout == int(timeout)):
        return _("{name} must be a positive number of whole seconds, at least 1, not {value!r} (nbclient's cell "
                 "timeout is an integer)").format(name=name, value=timeout)
    return None


def check_size(notebooks: int, parameters: Mapping[str, Sequence[Any]], where: str) -> int:
    """The number of runs; an InputError naming each list's length (``where``: their file) past ``MAX_RUNS``."""
    runs = notebooks * math.prod(len(values) for values in parameters.values())  # counted: nothing is built yet
    if runs > MAX_RUNS:
        lists = " x ".join(_("{name}: {count:,} values").format(name=name, count=len(values))
                           for name, values in parameters.items() if len(values) > 1)
        raise InputError(
            _("{where} makes {runs:,} runs ({lists}, times {notebooks} notebook(s)), more than the limit of "
              "{limit:,} runs a batch may hold").format(where=where, runs=runs, lists=lists or _("one value each"),
                                                        notebooks=notebooks, limit=MAX_RUNS),
            _("Split the grid into several files of at most {limit:,} runs each (e.g. one file per value of "
              "the longest list, each run with its own --out folder), or fix the values you do not need to vary "
              "with -p NAME VALUE.").format(limit=MAX_RUNS),
        )
    return runs


def expand(parameters: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Every combination of the values (the cartesian product), the last name varying fastest."""
    names = list(parameters)
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*parameters.values())]


def slug(text: str) -> str:
    """``text`` for a file name: each run of characters other than ``A-Za-z0-9.+-`` one ``_``."""
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", text).strip("_")


def run_name(stem: str, parameters: Mapping[str, Any]) -> str:
    """The output name of a run: the notebook, then each parameter as NAME-value (file-name safe)."""
    parts = [f"{name}-{slug(v if isinstance(v, str) else json.dumps(v))[:40]}" for name, v in parameters.items()]
    return f"{stem}__{'_'.join(parts)}" if parts else stem


def make_plan(notebooks: Sequence[str], *, parameters: Mapping[str, Any] | None = None, grid_file: Path | None = None,
              smoke: bool = False, timeout: float | None = None, if_declared: bool = False) -> Plan:
    """Check everything and list the runs; raise InputError naming the first problem. Notebooks and ``parameters``
    (``-p``) replace the grid's; ``if_declared``: docs/instructors.md, "Batch runs"."""
    grid: dict[str, Any] = load_grid(grid_file) if grid_file else {}
    base = Path(grid_file).parent if grid_file else None
    names = list(notebooks) or grid.get("notebooks") or []
    paths = [resolve_notebook(n, base=None if notebooks else base) for n in names] if names else discover()
    if not paths:
        raise InputError(_("no notebooks to run (none given, none in {folder})").format(folder=NOTEBOOKS_DIR))
    values = {**grid.get("parameters", {}), **{k: [v] for k, v in (parameters or {}).items()}}
    check_size(len(paths), values, _("grid file {path}").format(path=grid_file) if grid_file else _("the command line"))
    points = expand(values)
    if timeout is not None:
        problem = _timeout_problem(timeout, "--timeout")
        if problem:
            raise InputError(problem)
        timeout = int(timeout)
    else:
        timeout = grid.get("timeout")
    runs: list[RunSpec] = []
    used: set[str] = set()
    skipped: dict[str, list[str]] = {}
    found = {path: declared_parameters(path) for path in dict.fromkeys(paths)}
    _check_declared_somewhere(found, values, if_declared)
    for path in paths:  # a notebook named twice runs twice
        declared = found[path]
        own = points
        if if_declared and any(name not in declared for name in values):
            skipped[path.stem] = [name for name in values if name not in declared]
            kept = ({k: v for k, v in point.items() if k in declared} for point in points)
            own = list({json.dumps(p, sort_keys=True): p for p in kept}.values())  # equal points run once
        for point in own:
            check_parameters(path, point, declared)
        for i, point in enumerate(own, start=1):
            name = base_name = run_name(path.stem, point)
            n = 2
            while name in used:
                name, n = f"{base_name}-{n}", n + 1
            used.add(name)
            runs.append(RunSpec(path, point, name, i, len(own)))
    return Plan(runs=runs, smoke=bool(smoke or grid.get("smoke", False)), timeout=timeout, title=grid.get("title"),
                results=grid.get("results"), grid_file=str(grid_file) if grid_file else None, grid=grid,
                skipped=skipped)


def _check_declared_somewhere(
    found: Mapping[Path, Mapping[str, Any]], values: Mapping[str, Any], if_declared: bool
) -> None:
    """With several notebooks, name the ones missing a parameter; with ``if_declared``, refuse only a name none has."""
    if len(found) < 2:
        return  # one notebook: check_parameters says what it declares, with a did-you-mean
    for name in values:
        missing = [path.stem for path, declared in found.items() if name not in declared]
        if len(missing) == len(found):
            known = sorted({n for declared in found.values() for n in declared})
            close = difflib.get_close_matches(name, known, n=1)
            what = (_("no notebook in this run declares parameter {name} - did you mean {close}?") if close
                    else _("no notebook in this run declares parameter {name}"))
            raise InputError(
                what.format(name=name, close=close[0] if close else ""),
                _("Check its spelling: each notebook's parameters are in its cell tagged 'parameters'."),
            )
        if missing and not if_declared:
            raise InputError(
                _("parameter {name} is not declared by {notebooks}").format(name=name, notebooks=", ".join(missing)),
                _("Add --if-declared to set {name} only in the notebooks that declare it, or leave those "
                  "notebooks out.").format(name=name),
            )
