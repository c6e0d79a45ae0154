"""What a batch run will do, checked before anything runs: notebooks, parameters, grid files.

A grid file (YAML) names notebooks and the values to try; every combination of values is
one run of each notebook::

    title: Batch size against accuracy and epoch time   # optional, heads the report
    notebooks: [05_cnn_cpu_vs_gpu]     # names, numbers ("05") or paths; optional
    parameters:                        # NAME: [values] -> the cartesian product
      BATCH_SIZE: [32, 128, 512]
      EPOCHS: 3                        # one value: the same in every run
    results: [test_accuracy, epoch_s]  # optional: the key results the report compares
    smoke: false                       # optional: the short run (as --smoke)
    timeout: 600                       # optional: seconds allowed per cell (as --timeout)

A YAML list is always the list of values to try, so a list-valued parameter is written
as a list of lists (``LAYERS: [[64], [128, 64]]``). Every problem - an unknown notebook, a
parameter a notebook does not declare, a value of the wrong type, a malformed grid - is an
``InputError`` naming it, raised before any kernel starts.

Limits, so that a typing slip or a hostile file cannot exhaust memory: a grid makes at most
``MAX_RUNS`` runs (counted as the product of the value lists' lengths, before any run is
built; past it, split the grid into several files); a grid file is at most ``MAX_GRID_BYTES``;
YAML aliases (``*name``) are refused, because nested aliases ("billion laughs") turn a small
file into an enormous value; a key given twice in one mapping is an error, not "the last one
wins" as PyYAML's own loader does. ``timeout`` is a whole number of seconds >= 1, because
nbclient's per-cell ``timeout`` is an integer trait.
"""

from __future__ import annotations

import ast
import difflib
import functools
import itertools
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from course_utils.errors import InputError, ParameterError
from course_utils.params import check_value
from course_utils.system.paths import PROJECT_ROOT

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
        where = f" point {self.point}/{self.points}" if self.points > 1 else ""
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


def discover(folder: Path = NOTEBOOKS_DIR) -> list[Path]:
    """The course notebooks in order: ``NN_name.ipynb``."""
    return sorted(p for p in folder.glob("[0-9][0-9]_*.ipynb"))


def resolve_notebook(name: str | int, *, base: Path | None = None) -> Path:
    """A notebook argument as a path: a file (also relative to ``base``), or a name/number in ``notebooks/``."""
    if isinstance(name, int) and not isinstance(name, bool):
        name = f"{name:02d}"  # YAML reads `05` as the number 5
    if not isinstance(name, str) or not name:
        raise InputError(f"a notebook must be a name, number or path, not {name!r}")
    for candidate in (Path(name), *((base / name,) if base else ())):
        if candidate.is_file():
            return candidate
    course = discover()
    matches = [p for p in course if name in (p.stem, p.name, p.stem.split("_")[0])]
    if len(matches) != 1:
        raise InputError(f"no notebook {name!r} (choose from: {', '.join(p.stem for p in course) or 'none found'})")
    return matches[0]


def parse_value(text: str) -> Any:
    """A ``-p NAME VALUE`` value, read as papermill's ``-p`` does, plus YAML lists, dicts and quoted strings.

    ``True``/``False``/``None`` (or ``true``/``false``/``null``), integers and floats become
    those types; ``[32, 64]``, ``{a: 1}`` and ``"128"`` are read as YAML; anything else is a string.
    """
    if text in ("True", "true"):
        return True
    if text in ("False", "false"):
        return False
    if text in ("None", "null", "~"):
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    if text[:1] in ("[", "{", '"', "'"):
        import yaml

        try:
            return _load_yaml(text)
        except yaml.YAMLError as exc:
            raise InputError(f"cannot read the value {text!r}: {_yaml_problem(exc)}") from None
    return text


def declared_parameters(notebook: Path) -> dict[str, dict[str, Any]]:
    """The parameters ``notebook`` declares (papermill's inspection), each with its default as a value."""
    import papermill as pm

    try:
        found = pm.inspect_notebook(str(notebook))
    except Exception as exc:  # not JSON, not a notebook: papermill's own errors vary
        raise InputError(f"cannot read notebook {notebook}: {type(exc).__name__}: {exc}") from None
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
        return None if ("None" in hint and hint != "None") or "Optional" in hint else "None is not allowed"
    expected: tuple[type, ...] = {
        bool: (bool,),
        int: (int,),
        float: (int, float),
        str: (str,),
        list: (list, tuple),
        tuple: (list, tuple),
        dict: (dict,),
    }.get(type(default), (type(default),))
    if (isinstance(value, bool) and bool not in expected) or not isinstance(value, expected):
        return f"{_a(type(default).__name__)} is expected, not {_a(type(value).__name__)}"
    return None


def _a(noun: str) -> str:
    return f"{'an' if noun[0] in 'aeiou' else 'a'} {noun}"


def check_parameters(notebook: Path, parameters: Mapping[str, Any], declared: Mapping[str, Any] | None = None) -> None:
    """Raise InputError unless ``notebook`` declares every parameter and each value fits its name and its default's
    type."""
    declared = declared_parameters(notebook) if declared is None else declared
    for name, value in parameters.items():
        if name not in declared:
            if not declared:
                raise InputError(f"{notebook.name} declares no parameters (no cell tagged 'parameters'), not {name}")
            close = difflib.get_close_matches(name, list(declared), n=1)
            hint = f" - did you mean {close[0]}?" if close else ""
            raise InputError(
                f"{notebook.name} does not declare parameter {name}{hint} (it declares: {', '.join(declared)})"
            )
        try:  # what the name promises (params.check_value): a finite number, a count >= 1, an amount > 0
            check_value(name, value)
        except ParameterError as exc:
            raise InputError(f"{notebook.name}: {exc.what}", exc.fix) from None
        problem = _type_problem(value, declared[name])
        if problem:
            raise InputError(
                f"parameter {name} = {value!r} for {notebook.name}: {problem} "
                f"(its default is {declared[name]['default']})"
            )


def _yaml_problem(exc: Exception) -> str:
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    return f"{getattr(exc, 'problem', None) or exc}{where}"


@functools.cache
def _strict_loader() -> type:
    """PyYAML's SafeLoader, made strict: an alias is an error, and so is a key repeated in one mapping."""
    import yaml
    from yaml.constructor import ConstructorError

    class StrictLoader(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise ConstructorError(
                    None, None,
                    "YAML aliases are not allowed in grid files (nested ones can turn a few lines into billions "
                    f"of values): write the values out instead of the alias *{event.anchor}",
                    event.start_mark,
                )
            return super().compose_node(parent, index)

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: dict[Any, Any] = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.get(key)
                except TypeError:  # an unhashable key: SafeLoader names it below
                    continue
                if first is not None:
                    raise ConstructorError(
                        None, None,
                        f"duplicate key {key!r} (a YAML reader silently keeps only the last): give each key once; "
                        f"it is first at line {first.line + 1} and again",
                        key_node.start_mark,
                    )
                seen[key] = key_node.start_mark
            return super().construct_mapping(node, deep=deep)

    return StrictLoader


def _load_yaml(text: str) -> Any:
    """``yaml.safe_load`` with the strict loader (no aliases, no duplicate keys)."""
    import yaml

    return yaml.load(text, Loader=_strict_loader())  # noqa: S506 - a SafeLoader subclass


def load_grid(path: Path) -> dict[str, Any]:
    """Read and check a grid file; every value in ``parameters`` becomes a list of values to try."""
    import yaml

    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_GRID_BYTES + 1)  # no more: a huge file is refused unread
        if len(data) > MAX_GRID_BYTES:
            raise InputError(
                f"grid file {path} is larger than {MAX_GRID_BYTES:,} bytes: a grid file is a few lines",
                "Check that you passed the grid file itself (not a data or notebook file) to --grid.",
            )
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read grid file {path}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        grid = _load_yaml(text)
    except yaml.constructor.ConstructorError as exc:  # valid YAML that a grid file may not hold
        raise InputError(f"grid file {path} is refused: {_yaml_problem(exc)}") from None
    except yaml.YAMLError as exc:
        raise InputError(f"grid file {path} is not valid YAML: {_yaml_problem(exc)}") from None
    if not isinstance(grid, dict):
        raise InputError(f"grid file {path} must be a mapping with keys {', '.join(sorted(GRID_KEYS))}")
    unknown = sorted(set(map(str, grid)) - GRID_KEYS)
    if unknown:
        raise InputError(f"grid file {path}: unknown key {unknown[0]!r} (allowed: {', '.join(sorted(GRID_KEYS))})")
    params = grid.get("parameters") or {}
    if not isinstance(params, dict):
        raise InputError(f"grid file {path}: 'parameters' must map each NAME to a list of values")
    grid["parameters"] = {}
    for name, values in params.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise InputError(f"grid file {path}: {name!r} is not a parameter name")
        values = values if isinstance(values, list) else [values]
        if not values:
            raise InputError(f"grid file {path}: parameter {name} has no values to try")
        grid["parameters"][name] = values
    notebooks = grid.get("notebooks", [])
    notebooks = [notebooks] if isinstance(notebooks, (str, int)) else notebooks
    if not isinstance(notebooks, list) or not all(isinstance(n, (str, int)) for n in notebooks):
        raise InputError(f"grid file {path}: 'notebooks' must be a list of notebook names, numbers or paths")
    grid["notebooks"] = notebooks
    for key, kind in (("smoke", bool), ("title", str)):
        if key in grid and not isinstance(grid[key], kind):
            raise InputError(f"grid file {path}: {key!r} must be a {kind.__name__}, not {grid[key]!r}")
    if "timeout" in grid:
        problem = _timeout_problem(grid["timeout"])
        if problem:
            raise InputError(f"grid file {path}: 'timeout' {problem}")
        grid["timeout"] = int(grid["timeout"])
    results = grid.get("results")
    if results is not None and (not isinstance(results, list) or not all(isinstance(r, str) for r in results)):
        raise InputError(f"grid file {path}: 'results' must be a list of result names")
    return grid


def _timeout_problem(timeout: Any) -> str | None:
    """Why ``timeout`` is not a per-cell time limit (nbclient takes whole seconds); None when it is one."""
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        return f"must be a positive number of whole seconds, at least 1, not {timeout!r}"
    if not (math.isfinite(timeout) and timeout >= 1 and timeout == int(timeout)):
        return (f"must be a positive number of whole seconds, at least 1, not {timeout!r} (nbclient's cell timeout "
                "is an integer)")
    return None


def count_runs(notebooks: int, parameters: Mapping[str, Sequence[Any]]) -> int:
    """How many runs a plan makes: notebooks x the product of the value lists' lengths (nothing is built)."""
    return notebooks * math.prod(len(values) for values in parameters.values())


def check_size(notebooks: int, parameters: Mapping[str, Sequence[Any]], where: str = "the grid") -> int:
    """The number of runs; an InputError naming each list's length when it is more than ``MAX_RUNS``."""
    runs = count_runs(notebooks, parameters)
    if runs > MAX_RUNS:
        lists = " x ".join(f"{name}: {len(values):,} values" for name, values in parameters.items() if len(values) > 1)
        raise InputError(
            f"{where} makes {runs:,} runs ({lists or 'one value each'}, times {notebooks} "
            f"notebook{'s' if notebooks != 1 else ''}), more than the limit of {MAX_RUNS:,} runs a batch may hold",
            f"Split the grid into several files of at most {MAX_RUNS:,} runs each (e.g. one file per value of "
            "the longest list, each run with its own --out folder), or fix the values you do not need to vary "
            "with -p NAME VALUE.",
        )
    return runs


def expand(parameters: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Every combination of the values (the cartesian product), the last name varying fastest."""
    names = list(parameters)
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*parameters.values())]


def run_name(stem: str, parameters: Mapping[str, Any]) -> str:
    """The output name of a run: the notebook, then each parameter as NAME-value (file-name safe)."""
    if not parameters:
        return stem
    parts = []
    for name, value in parameters.items():
        text = value if isinstance(value, str) else json.dumps(value)
        parts.append(f"{name}-{re.sub(r'[^A-Za-z0-9.+-]+', '_', text).strip('_')[:40]}")
    return f"{stem}__{'_'.join(parts)}"


def make_plan(
    notebooks: Sequence[str],
    *,
    parameters: Mapping[str, Any] | None = None,
    grid_file: Path | None = None,
    smoke: bool = False,
    timeout: float | None = None,
) -> Plan:
    """Check everything and list the runs; raise InputError naming the first problem.

    Notebooks on the command line replace the grid's; ``parameters`` (``-p``) fix a value
    for every run, replacing the grid's values for that name.
    """
    grid: dict[str, Any] = load_grid(grid_file) if grid_file else {}
    base = Path(grid_file).parent if grid_file else None
    names = list(notebooks) or grid.get("notebooks") or []
    paths = [resolve_notebook(n, base=None if notebooks else base) for n in names] if names else discover()
    if not paths:
        raise InputError(f"no notebooks to run (none given, none in {NOTEBOOKS_DIR})")
    values = {**grid.get("parameters", {}), **{k: [v] for k, v in (parameters or {}).items()}}
    check_size(len(paths), values, f"grid file {grid_file}" if grid_file else "the command line")
    points = expand(values)
    if timeout is not None:
        problem = _timeout_problem(timeout)
        if problem:
            raise InputError(f"--timeout {problem}")
        timeout = int(timeout)
    else:
        timeout = grid.get("timeout")
    runs: list[RunSpec] = []
    used: set[str] = set()
    for path in paths:
        declared = declared_parameters(path)
        for point in points:
            check_parameters(path, point, declared)
        for i, point in enumerate(points, start=1):
            name = base_name = run_name(path.stem, point)
            n = 2
            while name in used:
                name, n = f"{base_name}-{n}", n + 1
            used.add(name)
            runs.append(RunSpec(path, point, name, i, len(points)))
    return Plan(
        runs=runs,
        smoke=bool(smoke or grid.get("smoke", False)),
        timeout=timeout,
        title=grid.get("title"),
        results=grid.get("results"),
        grid_file=str(grid_file) if grid_file else None,
        grid=grid,
    )
