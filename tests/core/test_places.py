"""Where the course is, and where it writes: the student's own checkout, a folder of their own on a shared copy, or
COURSE_HOME."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import course_utils
from course_tools.batch import runner
from course_utils.core import child, places, variables
from course_utils.core.errors import PlaceError
from course_utils.lessons.nb06 import log_root
from course_utils.results import Recorder


def test_the_project_root_holds_the_package_the_notebooks_and_pyproject():
    root = places.PROJECT_ROOT
    assert root.is_absolute() and (root / "pyproject.toml").is_file() and (root / "notebooks").is_dir()
    assert (root / "course_utils" / "__init__.py").resolve() == Path(course_utils.__file__).resolve()
    assert child.PROJECT_ROOT is places.PROJECT_ROOT, "one home: a child's PYTHONPATH starts from the same folder"


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A user without COURSE_HOME, COURSE_RESULTS_DIR or COURSE_LOG_DIR, whose data folder is under tmp_path."""
    for variable in (variables.HOME, variables.RESULTS_DIR, variables.LOG_DIR):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / places.APP_NAME


def another_user(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on, this process runs as a user who owns neither the checkout nor anything in tmp_path."""
    me = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: me + 4242)


def blocked(tmp_path: Path) -> Path:
    """A folder that cannot be created, even by root: its parent is a file."""
    (tmp_path / "a-file").write_text("not a folder")
    return tmp_path / "a-file" / "course"


def test_own_checkout_writes_into_its_build_folder(home):
    assert places.is_checkout()
    assert places.course_home() == places.PROJECT_ROOT / "build"
    assert places.results_dir() == places.PROJECT_ROOT / "build" / "results"
    assert not home.exists(), "a student's own copy needs no folder elsewhere"


def test_shared_checkout_writes_into_a_private_folder_of_the_user(home, monkeypatch):
    another_user(monkeypatch)  # the checkout now belongs to someone else: the instructor, on a class server
    assert places.course_home() == home
    assert stat.S_IMODE(home.stat().st_mode) == 0o700, "other students must not read it"
    assert places.results_dir() == home / "results"
    assert Recorder("02_verify_gpu", parameters={}, smoke=True).path == home / "results" / "02_verify_gpu.json"
    assert runner.default_out() == home / "course"


def test_log_dir_starts_in_the_current_folder_only_when_it_is_ours(home, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert log_root("logs") == tmp_path / "logs"
    another_user(monkeypatch)  # a kernel started in a shared notebooks folder
    assert log_root("logs") == home / "logs" / "logs"
    monkeypatch.setenv(variables.LOG_DIR, str(tmp_path / "chosen"))
    assert log_root("logs") == tmp_path / "chosen" / "logs"


def test_course_home_moves_everything(home, monkeypatch, tmp_path):
    monkeypatch.setenv(variables.HOME, str(tmp_path / "mine"))
    assert places.course_home() == tmp_path / "mine"
    assert places.results_dir() == tmp_path / "mine" / "results"
    assert runner.default_out() == tmp_path / "mine" / "course"
    monkeypatch.setenv(variables.RESULTS_DIR, str(tmp_path / "records"))
    assert places.results_dir() == tmp_path / "records", "COURSE_RESULTS_DIR still moves the results alone"


def test_installed_package_writes_into_the_current_folder_when_it_is_ours(home, monkeypatch, tmp_path):
    monkeypatch.setattr(places, "PROJECT_ROOT", tmp_path / "site-packages")  # no pyproject.toml: not a checkout
    monkeypatch.chdir(tmp_path)
    assert places.course_home() == tmp_path / "build"  # Colab's /content, a student's home
    another_user(monkeypatch)
    assert places.course_home() == home


@pytest.mark.parametrize("variable", [variables.HOME, variables.RESULTS_DIR, variables.LOG_DIR])
def test_an_unwritable_place_names_the_variable_to_set(home, monkeypatch, tmp_path, variable):
    monkeypatch.setenv(variable, str(blocked(tmp_path)))
    with pytest.raises(PlaceError) as caught:
        {variables.HOME: places.course_home, variables.RESULTS_DIR: places.results_dir,
         variables.LOG_DIR: places.log_base}[variable]()
    assert variable in caught.value.fix
    assert str(blocked(tmp_path)) in caught.value.what


def test_a_notebook_without_a_writable_home_gets_the_course_error_not_a_permission_error(home, monkeypatch, tmp_path):
    another_user(monkeypatch)
    monkeypatch.setenv("XDG_DATA_HOME", str(blocked(tmp_path)))  # the per-user folder cannot be made
    with pytest.raises(PlaceError, match="cannot write") as caught:
        Recorder("02_verify_gpu", parameters={}, smoke=True)
    assert "COURSE_HOME" in caught.value.fix


def test_writable_places_lists_each_place_and_never_raises(home, monkeypatch, tmp_path):
    monkeypatch.setenv(variables.RESULTS_DIR, str(blocked(tmp_path)))
    found = {p["name"]: p for p in places.writable_places()}
    assert set(found) == {"course home", "results", "TensorBoard logs"}
    assert found["course home"]["writable"] and found["course home"]["problem"] is None
    assert not found["results"]["writable"] and found["results"]["variable"] == "COURSE_RESULTS_DIR"
    assert "cannot write" in found["results"]["problem"]


def test_course_run_with_an_unwritable_home_stops_before_running(home, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(variables.HOME, str(blocked(tmp_path)))
    assert runner.main(["02", "--smoke"]) == 2
    error = capsys.readouterr().err
    assert "COURSE_HOME" in error and "cannot write" in error
