"""What the package supports, and what the course installs, agree.

pyproject.toml states ranges; constraints/course.txt the course's exact versions (make,
environment.yml, Binder); constraints/hosted.txt the versions Colab and Kaggle run. Each range
must admit both pins and nothing older than the hosted one or newer than the course's line.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tomllib

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from .conftest import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
TOOLS = tomllib.loads((ROOT / "tools" / "pyproject.toml").read_text())["project"]  # the instructor's package
SELF = canonicalize_name(PYPROJECT["name"])
OURS = {SELF, canonicalize_name(TOOLS["name"])}


def read_pins(name: str) -> dict[str, Version]:
    """``constraints/<name>``: one ``package==version`` per line, each package once."""
    pins: dict[str, Version] = {}
    for number, raw in enumerate((ROOT / "constraints" / name).read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        requirement = Requirement(line)
        specs = list(requirement.specifier)
        where = f"constraints/{name}:{number}: {line!r}"
        assert len(specs) == 1 and specs[0].operator == "==", f"{where} must pin one exact version (name==x.y.z)"
        key = canonicalize_name(requirement.name)
        assert key not in pins, f"{where}: {requirement.name} is pinned twice"
        pins[key] = Version(specs[0].version)
    return pins


# Packages whose minor releases change what the course relies on: their ranges end at the course's minor line.
# The others follow semantic versioning: their ranges end at the next major release.
MINOR_LINES = {"tensorflow", "keras", "tensorboard", "numpy", "matplotlib", "jupyterlab", "papermill", "nbval",
               "ruff", "playwright", "xprof"}
COURSE = read_pins("course.txt")
HOSTED = read_pins("hosted.txt")


def requirements(group: str | None = None, project: dict = PYPROJECT) -> list[Requirement]:
    lines = project["dependencies"] if group is None else project["optional-dependencies"][group]
    return [r for r in map(Requirement, lines) if canonicalize_name(r.name) not in OURS]


def every_requirement() -> list[Requirement]:
    """Both packages' requirements, extras included."""
    found = []
    for project in (PYPROJECT, TOOLS):
        found += requirements(None, project)
        for group in project["optional-dependencies"]:
            found += requirements(group, project)
    return found


def test_a_package_both_require_has_one_range():
    mine = {canonicalize_name(r.name): r.specifier for r in requirements()}
    for requirement in requirements(None, TOOLS):
        key = canonicalize_name(requirement.name)
        assert key not in mine or mine[key] == requirement.specifier, f"{key}: {mine[key]} here, {requirement} there"


def test_the_tools_require_the_students_package_and_it_never_the_tools():
    assert "course-utils" in TOOLS["dependencies"]
    lines = PYPROJECT["dependencies"] + [x for group in PYPROJECT["optional-dependencies"].values() for x in group]
    assert not [line for line in lines if "course-tools" in line]


def next_line(name: str, version: Version) -> Version:
    if canonicalize_name(name) in MINOR_LINES:
        return Version(f"{version.major}.{version.minor + 1}")
    return Version(f"{version.major + 1}")


def previous_minor(version: Version) -> Version | None:
    if version.minor == 0:
        return None
    return Version(f"{version.major}.{version.minor - 1}.0")


@pytest.mark.parametrize("requirement", every_requirement(), ids=str)
def test_the_course_pins_every_dependency_inside_its_range(requirement):
    key = canonicalize_name(requirement.name)
    assert key in COURSE, f"{requirement.name}: add its tested version to constraints/course.txt"
    assert requirement.specifier.contains(COURSE[key]), (
        f"pyproject.toml says {requirement}, constraints/course.txt pins {COURSE[key]}"
    )
    newer = next_line(key, COURSE[key])
    assert not requirement.specifier.contains(newer, prereleases=True), (
        f"{requirement} admits {newer}, a release line the course has not tested: end the range below it"
    )


@pytest.mark.parametrize("requirement", requirements(), ids=str)
def test_the_package_installs_beside_the_hosted_runtimes_versions(requirement):
    key = canonicalize_name(requirement.name)
    assert key in HOSTED, f"{requirement.name}: add the version Colab has to constraints/hosted.txt"
    assert requirement.specifier.contains(HOSTED[key]), (
        f"pyproject.toml says {requirement}: installing the package on Colab/Kaggle would replace their "
        f"{requirement.name} {HOSTED[key]}"
    )
    older = previous_minor(HOSTED[key])
    if older is not None:
        assert not requirement.specifier.contains(older), (
            f"{requirement} admits {older}, older than anything tested (hosted: {HOSTED[key]})"
        )


def test_the_hosted_versions_are_tensorflow_2_20_with_keras_3_13():
    assert (HOSTED["tensorflow"].major, HOSTED["tensorflow"].minor) == (2, 20)
    assert (HOSTED["keras"].major, HOSTED["keras"].minor) == (3, 13)
    assert HOSTED["tensorboard"].minor == HOSTED["tensorflow"].minor, "TensorBoard's line follows TensorFlow's"
    assert COURSE["tensorboard"].minor == COURSE["tensorflow"].minor


def test_lessons_need_no_jupyter_server_of_their_own():
    """Colab and Kaggle run their own notebook servers: installing ours there would replace theirs."""
    names = {canonicalize_name(r.name) for r in requirements()}
    assert not names & {"jupyterlab", "notebook", "ipykernel", "jupyter-server", "papermill", "nbval"}


def test_gpu_extra_has_the_tensorflow_range():
    tf = next(r for r in requirements() if r.name == "tensorflow")
    (gpu,) = requirements("gpu")
    assert gpu.name == "tensorflow" and gpu.extras == {"and-cuda"} and gpu.specifier == tf.specifier


def test_environment_yml_installs_with_the_course_constraints():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert pip_section == ["-c constraints/course.txt", "-e .[lab]"]  # what a student needs, not the dev tools
    python = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python="))
    assert python == "python=3.11"


def test_binder_installs_the_lessons_and_lab_with_tensorflow_cpu_at_the_course_versions():
    lines = [
        line.split("#", 1)[0].strip() for line in (ROOT / "binder" / "requirements.txt").read_text().splitlines()
    ]
    lines = [line for line in lines if line]
    assert lines[0] == "-c ../constraints/course.txt", "binder/requirements.txt takes its versions from one place"
    names = [canonicalize_name(Requirement(line).name) for line in lines[1:]]
    assert all(not Requirement(line).specifier for line in lines[1:]), "versions come from constraints/course.txt"
    wanted = [canonicalize_name(r.name) for r in requirements() + requirements("lab")]
    wanted = ["tensorflow-cpu" if name == "tensorflow" else name for name in wanted]
    assert names == wanted + ["jupyter-server-proxy"]
    assert all(name in COURSE for name in names)
    assert COURSE["tensorflow-cpu"] == COURSE["tensorflow"]


def test_the_package_reports_the_version_pyproject_gives_it():
    import course_utils

    assert course_utils.__version__ == PYPROJECT["version"], "reinstall the package (make venv) after a version bump"


def test_reading_a_notebook_builds_no_iri_grammar():
    """jsonschema 4.25+ imports rfc3987-syntax, which builds a parser at import: about 1.2 s of CPU in every process
    that reads a notebook (papermill, nbval, Jupyter). The pinned jsonschema must not (constraints/course.txt)."""
    done = subprocess.run([sys.executable, "-c", "import sys, nbformat; print('rfc3987_syntax' in sys.modules)"],
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False", "jsonschema imports rfc3987_syntax: pin a jsonschema older than 4.25"


def test_tensorflow_is_installed_with_its_bytecode():
    """Each process that imports TensorFlow reads its compiled .pyc files; without them it compiles about 1,800 files
    again (8.7 s of CPU instead of 4.2 here). pip writes them at install; uv only with --compile-bytecode
    (scripts/venv.sh), and Python does not write them where PYTHONDONTWRITEBYTECODE is set."""
    spec = importlib.util.find_spec("tensorflow")
    assert spec is not None and spec.origin is not None
    cached = importlib.util.cache_from_source(spec.origin)
    assert os.path.isfile(cached), f"no {cached}: install with pip, or with `uv pip install --compile-bytecode`"
