"""Planning a batch: notebooks, -p values, grid files and parameter checks - all before anything runs."""

from __future__ import annotations

import pytest

from course_tools.batch import grid
from course_tools.batch.grid import (
    InputError,
    check_parameters,
    discover,
    expand,
    load_grid,
    make_plan,
    parse_value,
    resolve_notebook,
    run_name,
)

from ...conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures"
CURVE = FIXTURES / "curve.ipynb"


@pytest.mark.parametrize(
    "text, value",
    [
        ("3", 3),
        ("1e-3", 0.001),
        ("null", None),
        ("gpu:0", "gpu:0"),
        ("[32, 64]", [32, 64]),
    ],
)
def test_values_are_read_like_papermill_p_plus_yaml(text, value):
    assert parse_value(text) == value and type(parse_value(text)) is type(value)


def test_an_unreadable_value_is_refused():
    """Aliases too (one strict YAML reader): test_yaml_aliases_are_refused_so_a_billion_laughs_file_cannot_expand."""
    with pytest.raises(InputError, match=r"cannot read the value '\{a: \[1'"):
        parse_value("{a: [1")


@pytest.mark.parametrize(("notebook", "params", "message"), [
    (CURVE, {"N": "2"}, "parameter N = '2' for curve.ipynb: an int is expected, not a str (its default is 1)"),
    (CURVE, {"N": None}, "None is not allowed"),
    (CURVE, {"N": True}, "an int is expected, not a bool"),
    (CURVE, {"M": 1}, "curve.ipynb does not declare parameter M (it declares"),
    ('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}', {"N": 1}, "x.ipynb declares no parameters"),
    ("{not json", {}, "cannot read notebook"),
])
def test_a_value_of_another_type_or_a_notebook_without_parameters_is_named(tmp_path, notebook, params, message):
    if isinstance(notebook, str):  # a notebook's text
        (tmp_path / "x.ipynb").write_text(notebook)
        notebook = tmp_path / "x.ipynb"
    with pytest.raises(InputError) as info:
        check_parameters(notebook, params)
    assert message in str(info.value)


def test_notebooks_resolve_by_path_name_or_number(tmp_path, monkeypatch):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    for name in ("02_verify_gpu.ipynb", "05_cnn.ipynb"):
        (folder / name).write_text("{}")
    monkeypatch.setattr(grid, "NOTEBOOKS_DIR", folder)
    assert [p.name for p in discover()] == ["02_verify_gpu.ipynb", "05_cnn.ipynb"]
    assert resolve_notebook(5).name == "05_cnn.ipynb"  # YAML reads 05 as 5
    assert resolve_notebook("02_verify_gpu").name == resolve_notebook("02_verify_gpu.ipynb").name
    assert resolve_notebook("curve.ipynb", base=FIXTURES) == FIXTURES / "curve.ipynb"
    with pytest.raises(InputError, match=r"no notebook '07' \(choose from: 02_verify_gpu, 05_cnn\)"):
        resolve_notebook("07")


def test_expand_is_the_cartesian_product_last_name_fastest():
    assert expand({"A": [1, 2], "B": ["x", "y"]}) == [
        {"A": 1, "B": "x"},
        {"A": 1, "B": "y"},
        {"A": 2, "B": "x"},
        {"A": 2, "B": "y"},
    ]


def test_run_names_come_from_the_notebook_and_its_parameters():
    """(A notebook alone, one parameter: the plans' names in test_a_plan_from_a_grid and the tests below it.)"""
    assert run_name("nb", {"DEVICE": "gpu/0 x", "SIZES": [1, 2], "IMAGES": None}) == (
        "nb__DEVICE-gpu_0_x_SIZES-1_2_IMAGES-null"
    )


def write(tmp_path, text):
    path = tmp_path / "grid.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "text, message",
    [
        ("parameter:\n  N: [1]\n", "unknown key 'parameter'"),
        ("parameters: [1, 2]\n", "'parameters' must map each NAME"),
        ("parameters:\n  N: []\n", "parameter N has no values"),
        ("parameters:\n  1x: [1]\n", "'1x' is not a parameter name"),
        ("notebooks: {a: 1}\n", "'notebooks' must be a list"),
        ("smoke: maybe\n", "'smoke' must be a bool"),
        ("timeout: soon\n", "'timeout' must be a positive number of whole seconds"),
        ("results: test_accuracy\n", "'results' must be a list of result names"),
        ("notebooks: [a\n", "is not valid YAML: .* at line 2"),
        ("", "must be a mapping"),
    ],
)
def test_malformed_grid_files_are_named(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(InputError, match=f"grid file {path}.*{message}"):
        load_grid(path)


def test_an_unreadable_grid_file_is_named(tmp_path):
    with pytest.raises(InputError, match="cannot read grid file .*nope.yaml: No such file"):
        load_grid(tmp_path / "nope.yaml")


def test_a_plan_from_a_grid(tmp_path):
    path = write(
        tmp_path,
        "title: T\nnotebooks: [ok.ipynb, curve.ipynb]\nparameters:\n  N: [1, 2]\n"
        "smoke: true\ntimeout: 30\nresults: [score]\n",
    )
    (tmp_path / "ok.ipynb").write_text((FIXTURES / "ok.ipynb").read_text())  # paths are relative to the grid file
    (tmp_path / "curve.ipynb").write_text(CURVE.read_text())
    plan = make_plan([], grid_file=path)
    assert [(r.notebook.name, r.parameters, r.name, r.point, r.points) for r in plan.runs] == [
        ("ok.ipynb", {"N": 1}, "ok__N-1", 1, 2),
        ("ok.ipynb", {"N": 2}, "ok__N-2", 2, 2),
        ("curve.ipynb", {"N": 1}, "curve__N-1", 1, 2),
        ("curve.ipynb", {"N": 2}, "curve__N-2", 2, 2),
    ]
    assert (plan.smoke, plan.timeout, plan.title, plan.results) == (True, 30, "T", ["score"])
    assert plan.runs[3].label == "curve point 2/2 (N=2)"


def test_command_line_notebooks_and_p_values_override_the_grid(tmp_path):
    path = write(tmp_path, "notebooks: [nope]\nparameters:\n  N: [1, 2]\n  SCALE: [1.0, 2.0]\n")
    plan = make_plan([str(CURVE)], parameters={"SCALE": 3}, grid_file=path, timeout=5)
    assert [r.parameters for r in plan.runs] == [{"N": 1, "SCALE": 3}, {"N": 2, "SCALE": 3}]
    assert plan.timeout == 5 and plan.smoke is False


def test_the_same_notebook_twice_gets_distinct_names():
    plan = make_plan([str(CURVE), str(CURVE)])
    assert [r.name for r in plan.runs] == ["curve", "curve-2"]


@pytest.mark.timeout(20)
def test_a_billion_run_grid_is_counted_not_built_and_refused_with_its_count_and_how_to_split_it(tmp_path):
    values = ", ".join(str(i) for i in range(1000))
    path = write(tmp_path, "parameters:\n" + "".join(f"  {name}: [{values}]\n" for name in ("N", "SCALE", "IMAGES")))
    with pytest.raises(InputError) as info:
        make_plan([str(CURVE)], grid_file=path)
    message = str(info.value)
    assert "1,000,000,000 runs" in message and f"{grid.MAX_RUNS:,}" in message
    assert "N: 1,000 values" in message and "IMAGES: 1,000 values" in message
    assert "split" in info.value.fix.lower() and "-p" in info.value.fix


def test_the_run_limit_counts_notebooks_too(tmp_path):
    values = ", ".join(str(i) for i in range(grid.MAX_RUNS // 2 + 1))
    path = write(tmp_path, f"parameters:\n  N: [{values}]\n")
    make_plan([str(CURVE)], grid_file=path)  # under the limit with one notebook
    with pytest.raises(InputError, match=r"2 notebook\(s\)"):
        make_plan([str(CURVE), str(CURVE)], grid_file=path)


@pytest.mark.timeout(20)
def test_yaml_aliases_are_refused_so_a_billion_laughs_file_cannot_expand(tmp_path):
    # One value of SIZES (a list parameter): nine levels of nine aliases, 9**9 (387 million) numbers from a
    # 400-byte file. Written out (a run's name, the report's JSON) it never ends; the first alias is on line 4.
    levels = ["&a [1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        levels.append(f"&{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    path = write(tmp_path, "parameters:\n  SIZES:\n    - [" + ",\n       ".join(levels) + "]\n")
    with pytest.raises(InputError) as info:
        make_plan([str(CURVE)], grid_file=path)
    assert "alias *a" in str(info.value) and "line 4" in str(info.value)


def test_a_duplicate_key_is_refused_naming_the_key_and_both_lines(tmp_path):
    path = write(tmp_path, "parameters:\n  N: [1, 2]\n  SCALE: [1.0]\n  N: [3]\n")
    with pytest.raises(InputError) as info:
        load_grid(path)
    assert "duplicate key 'N'" in str(info.value) and "line 4" in str(info.value) and "line 2" in str(info.value)


def test_a_huge_grid_file_is_not_read_whole(tmp_path):
    path = write(tmp_path, "title: big\n# " + "x" * grid.MAX_GRID_BYTES + "\n")
    with pytest.raises(InputError, match=r"grid file .* is larger than"):
        load_grid(path)


@pytest.mark.parametrize("timeout", [0.5, 0])
def test_a_timeout_that_is_not_whole_seconds_of_at_least_one_is_refused_at_once(timeout):
    with pytest.raises(InputError, match=r"--timeout must be a positive number of whole seconds, at least 1"):
        make_plan([str(CURVE)], timeout=timeout)


def test_a_whole_timeout_given_as_a_float_becomes_an_int():
    assert make_plan([str(CURVE)], timeout=30.0).timeout == 30
    assert isinstance(make_plan([str(CURVE)], timeout=30.0).timeout, int)


def test_a_value_that_is_not_a_finite_number_is_refused():
    with pytest.raises(InputError, match=r"SCALE = .* is not a finite number"):
        make_plan([str(CURVE)], parameters={"SCALE": float("inf")})


def test_a_parameter_some_notebooks_lack_is_refused_unless_if_declared():
    with pytest.raises(InputError) as caught:
        make_plan(["01", "02"], parameters={"DEVICE": "gpu"})
    assert "01_install_versions" in caught.value.what and "--if-declared" in caught.value.fix
    plan = make_plan(["01", "02"], parameters={"DEVICE": "gpu"}, if_declared=True)
    assert [(r.notebook.stem, r.parameters) for r in plan.runs] == [
        ("01_install_versions", {}), ("02_verify_gpu", {"DEVICE": "gpu"})]
    assert plan.skipped == {"01_install_versions": ["DEVICE"]}


def test_if_declared_still_refuses_a_name_no_notebook_declares():
    with pytest.raises(InputError, match="no notebook in this run declares parameter DEVIC - did you mean DEVICE"):
        make_plan(["01", "02"], parameters={"DEVIC": "gpu"}, if_declared=True)


def test_if_declared_runs_equal_points_once(tmp_path):
    grid_file = tmp_path / "g.yaml"
    grid_file.write_text("notebooks: ['01', '02']\nparameters:\n  DEVICE: [cpu, auto]\n")
    plan = make_plan([], grid_file=grid_file, if_declared=True)
    assert [(r.notebook.stem, r.parameters, r.point, r.points) for r in plan.runs] == [
        ("01_install_versions", {}, 1, 1),
        ("02_verify_gpu", {"DEVICE": "cpu"}, 1, 2),
        ("02_verify_gpu", {"DEVICE": "auto"}, 2, 2),
    ]
