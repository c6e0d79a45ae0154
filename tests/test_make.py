"""make's environment: GPU=1 installs the gpu extra, .venv is rebuilt when the extras or the Python change, and an
unsupported Python stops with a message that says which Pythons work and how to get one.

Dry runs (``make -n``) show what each command would install; real runs use a stand-in Python (a shell script in
tmp_path that reports a version, logs each call and makes stand-in environments), so no real install happens.
They never touch the checkout's .venv: every real run has ``VENV`` in tmp_path.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import lint_claims  # noqa: E402 - scripts/lint_claims.py: the Pythons pyproject.toml accepts

MAKE_VARIABLES = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "PYTHON", "GPU", "EXTRAS", "VENV", "UV")

FAKE_PYTHON = """#!/bin/sh
# A stand-in for Python {version}: logs each call; `-m venv DIR` makes a stand-in environment (python, jupyter, course).
echo "python{version} $*" >> "{log}"
case "$1" in
    -c) case "$2" in
            *version_info*) echo "{version}" ;;
            *tensorflow*) echo "TensorFlow 2.21.0" ;;
        esac ;;
    -m) if [ "$2" = venv ]; then
            mkdir -p "$3/bin"
            echo "home = /fake/python{version}" > "$3/pyvenv.cfg"
            cp "$0" "$3/bin/python"
            for tool in jupyter course; do
                printf '#!/bin/sh\\necho "%s $*" >> "{log}"\\n' "$tool" > "$3/bin/$tool"
                chmod +x "$3/bin/$tool"
            done
        fi ;;
esac
"""


@dataclass
class Machine:
    """A folder with stand-in Pythons (``python3`` on PATH among them), a log of their calls, and a VENV path."""

    root: Path

    def __post_init__(self) -> None:
        self.log = self.root / "calls.log"
        self.venv = self.root / "venv"
        self.stamp = self.venv / ".course-installed"

    def python(self, version: str, name: str | None = None) -> Path:
        """A stand-in Python ``version`` in the folder's bin/, as ``name`` (default ``python<version>``)."""
        path = self.root / "bin" / (name or f"python{version}")
        path.parent.mkdir(exist_ok=True)
        path.write_text(FAKE_PYTHON.format(version=version, log=self.log), encoding="utf-8")
        path.chmod(0o755)
        return path

    def calls(self) -> list[str]:
        return self.log.read_text(encoding="utf-8").splitlines() if self.log.exists() else []

    def make(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``make ARGS VENV=<tmp>`` in the checkout, with this folder's bin/ first on PATH; the log starts empty."""
        self.log.unlink(missing_ok=True)
        env = {k: v for k, v in os.environ.items() if k not in MAKE_VARIABLES}
        env["PATH"] = f"{self.root / 'bin'}{os.pathsep}{env['PATH']}"
        return subprocess.run(
            ["make", "--no-print-directory", *args, f"VENV={self.venv}"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
        )

    def installs(self) -> list[str]:
        """What each ``pip install`` of the last make put in: ``.[lab]``, or ``. ./tools[dev]`` with the tools."""
        pattern = r"-m pip install --quiet -c constraints/course.txt (.*)"
        return [found.replace("-e ", "") for found in re.findall(pattern, "\n".join(self.calls()))]

    def venvs_made(self) -> list[str]:
        """The version of each Python that made an environment in the last make."""
        return [line.split()[0].removeprefix("python") for line in self.calls() if " -m venv " in line]


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    return Machine(tmp_path)


def dry_run(*args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in MAKE_VARIABLES}
    done = subprocess.run(["make", "-n", "--no-print-directory", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


# --------------------------------------------------------------------------- the switch, in dry runs


@pytest.mark.parametrize(("target", "args", "extras"), [
    ("venv", (), "lab"),  # a student's commands: JupyterLab, none of the instructor's tools
    ("lab", ("GPU=1",), "gpu,lab"),
    ("course", (), "lab,tools"),  # an instructor's: the runner too
    ("course", ("GPU=1", "EXTRAS=dev,profile"), "dev,gpu,profile"),  # EXTRAS instead of the command's own
    ("venv", ("GPU=1", "EXTRAS=dev,gpu"), "dev,gpu"),  # once
    ("unit", (), "dev"),
    ("site", (), "site"),
])
def test_each_command_installs_the_extras_its_user_needs_and_gpu_1_adds_the_gpu_extra(target, args, extras):
    out = dry_run(target, *args)
    assert f"EXTRAS='{extras}' sh scripts/venv.sh" in out
    follows = {"lab": "jupyter lab notebooks/", "course": "course run --out build/course",
               "site": "-m course_tools.site.build --from build/course --out build/site"}.get(target)  # make course's
    if follows:
        assert out.rstrip().endswith(follows), out  # the environment first, then the command


def test_gpu_takes_0_or_1_only(machine):
    done = machine.make("venv", "GPU=yes")
    assert done.returncode != 0 and "GPU=yes is not a switch: write GPU=1" in done.stderr
    assert machine.calls() == [] and not machine.venv.exists()


def test_help_names_the_accepted_pythons_and_every_target_a_person_runs():
    out = subprocess.run(["make", "--no-print-directory", "help"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    accepted = lint_claims.accepted_pythons(ROOT)
    assert f"accepted: {accepted[0]}-{accepted[-1]}" in out, "read from requires-python (scripts/venv.sh --accepted)"
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    tiers = re.search(r"^TIERS := (.+)$", makefile, re.M)[1].split()
    phony = re.search(r"^\.PHONY: (.+)$", makefile, re.M)[1].replace("$(TIERS)", " ".join(tiers)).split()
    internal = {"lane1", "lane2", "FORCE"}  # the halves of make test, and the always-out-of-date marker
    listed = set(re.findall(r"^make ([a-z]+) ", out, re.M))
    assert set(phony) - internal == listed, f"make help lacks {set(phony) - internal - listed}"


# --------------------------------------------------------------------------- real runs, stand-in Pythons


def test_uv_installs_the_same_pins_and_their_bytecode_when_uv_is_named(machine):
    machine.python("3.12", "python3")
    uv = machine.root / "bin" / "uv"
    uv.write_text(f'#!/bin/sh\necho "uv $*" >> "{machine.log}"\n', encoding="utf-8")
    uv.chmod(0o755)
    done = machine.make("venv", f"UV={uv}")
    assert done.returncode == 0, done.stderr
    uv_calls = [line for line in machine.calls() if line.startswith("uv ")]
    python = machine.venv / "bin" / "python"
    wanted = f"uv pip install --quiet --compile-bytecode --python {python} -c constraints/course.txt -e .[lab]"
    assert uv_calls == [wanted]
    assert machine.installs() == [] and not any(" -m pip " in line for line in machine.calls()), "uv instead of pip"
    assert machine.stamp.read_text(encoding="utf-8") == "python 3.12\nextras lab\n"


def test_the_first_make_makes_the_environment_and_gpu_1_installs_the_gpu_extra_into_it_which_stays(machine):
    machine.python("3.12", "python3")
    first = machine.make("venv")
    assert first.returncode == 0, first.stderr
    assert machine.venvs_made() == ["3.12"] and machine.installs() == [".[lab]"]
    assert machine.stamp.read_text(encoding="utf-8") == "python 3.12\nextras lab\n"
    again = machine.make("venv")
    assert (again.returncode, again.stdout, machine.installs(), machine.venvs_made()) == (0, "", [], []), "nothing said"
    done = machine.make("lab", "GPU=1")
    assert done.returncode == 0, done.stderr
    assert machine.venvs_made() == [], "the same Python: the environment is kept"
    assert machine.installs() == [".[gpu,lab]"]
    assert machine.calls()[-1] == "jupyter lab notebooks/"
    assert machine.stamp.read_text(encoding="utf-8") == "python 3.12\nextras gpu,lab\n"
    ready = "(TensorFlow 2.21.0; Python 3.12, extras gpu,lab)"
    assert f"Environment ready: {machine.venv} {ready}" in done.stdout
    assert f"Environment ready: .venv {ready}" in (ROOT / "docs" / "wsl2.md").read_text(encoding="utf-8"), "step 8"
    # later commands without GPU=1 keep it: nothing to install, but the instructor's tools for make course
    assert machine.make("venv").returncode == 0 and machine.installs() == []
    os.utime(machine.stamp, (0, 0))  # as if pyproject.toml had changed since: every extra there is refreshed
    assert machine.make("venv").returncode == 0 and machine.installs() == [".[gpu,lab]"] and machine.venvs_made() == []
    assert machine.make("course").returncode == 0 and machine.installs() == [".[gpu,lab] ./tools"]
    # asking for another extra installs it beside the ones there
    assert machine.make("venv", "EXTRAS=dev,profile").returncode == 0
    assert machine.installs() == [".[gpu,lab,profile] ./tools[dev]"]


def test_another_python_makes_a_new_environment_and_keeps_the_extras(machine):
    machine.python("3.12", "python3")
    python313 = machine.python("3.13")
    assert machine.make("venv", "GPU=1").returncode == 0
    done = machine.make("venv", f"PYTHON={python313}")
    assert done.returncode == 0, done.stderr
    assert machine.venvs_made() == ["3.13"] and machine.installs() == [".[gpu,lab]"]
    assert "has Python 3.12, and PYTHON=" in done.stdout
    assert machine.stamp.read_text(encoding="utf-8") == "python 3.13\nextras gpu,lab\n"
    # the same PYTHON again, or none: nothing to do
    assert machine.make("venv", f"PYTHON={python313}").returncode == 0
    assert machine.installs() == [] and machine.venvs_made() == []
    assert machine.make("venv").returncode == 0 and machine.installs() == [] and machine.venvs_made() == []


def test_an_environment_whose_python_changed_underneath_is_made_again(machine):
    machine.python("3.12", "python3")
    assert machine.make("venv").returncode == 0
    machine.stamp.write_text("python 3.11\nextras dev\n", encoding="utf-8")  # made with 3.11; its python now is 3.12
    done = machine.make("venv")
    assert done.returncode == 0, done.stderr
    assert machine.venvs_made() == ["3.12"] and machine.installs() == [". ./tools[dev]"]
    assert "made with Python 3.11 but now runs Python 3.12" in done.stdout


def test_a_students_command_after_the_tests_extra_installs_nothing_and_an_empty_stamp_means_dev(machine):
    """dev brings lab, class, site and profile along (pyproject.toml): make lab finds lab there already."""
    machine.python("3.12", "python3")
    assert machine.make("venv", "EXTRAS=dev").returncode == 0 and machine.installs() == [". ./tools[dev]"]
    for target in ("lab", "course", "venv"):
        assert machine.make(target).returncode == 0 and machine.installs() == [], target
    assert machine.stamp.read_text(encoding="utf-8") == "python 3.12\nextras dev\n"
    assert machine.make("venv", "EXTRAS=lab,profile").returncode == 0 and machine.installs() == []
    machine.stamp.write_text("", encoding="utf-8")  # an empty stamp, what the Makefile's `touch` left, means dev
    assert machine.make("venv").returncode == 0 and machine.installs() == [] and machine.venvs_made() == []
    assert machine.stamp.read_text(encoding="utf-8") == "python 3.12\nextras dev\n"
    assert machine.make("venv", "EXTRAS=gpu").returncode == 0 and machine.installs() == [".[gpu] ./tools[dev]"]


def refusal(done: subprocess.CompletedProcess[str]) -> str:
    accepted = lint_claims.accepted_pythons(ROOT)
    assert done.returncode != 0
    message = done.stderr
    assert f"The course needs Python {accepted[0]}-{accepted[-1]}" in message, message
    assert "make venv PYTHON=python3.12" in message and "docs/wsl2.md" in message
    return message


@pytest.mark.parametrize(("python", "target", "said"), [
    ("python3", "lab", "python3 is Python 3.10"),  # python3 on PATH: Ubuntu 22.04's
    ("python3.99", "venv", "python3.99 is not a Python that runs here"),  # PYTHON=, a Python there is not
], ids=["python3", "missing"])
def test_an_unsupported_python_stops_with_what_works_and_how_to_get_it(machine, python, target, said):
    if python != "python3.99":
        machine.python("3.10", python)
    assert said in refusal(machine.make(target, *([] if python == "python3" else [f"PYTHON={python}"])))
    assert not machine.venv.exists() and machine.venvs_made() == []
    assert "jupyter lab notebooks/" not in machine.calls(), "lab did not start"


def test_an_environment_made_with_an_unsupported_python_is_not_reused(machine):
    python310 = machine.python("3.10")
    subprocess.run([python310, "-m", "venv", machine.venv], check=True)  # an old .venv, made with 3.10
    machine.python("3.10", "python3")
    message = refusal(machine.make("venv"))  # python3 is 3.10 as well: nothing to make it with
    assert "was made with Python 3.10, which the course does not accept" in message
    assert machine.venv.exists() and machine.installs() == [], "left as it was, not used"
    machine.python("3.12", "python3")  # now python3 is a Python the course accepts: it replaces the old one
    done = machine.make("venv")
    assert done.returncode == 0, done.stderr
    assert machine.venvs_made() == ["3.12"] and machine.installs() == [".[lab]"]
    assert "making it again with python3 (Python 3.12)" in done.stdout


def test_a_folder_that_is_not_an_environment_is_never_deleted(machine):
    machine.python("3.12", "python3")
    machine.venv.mkdir()
    (machine.venv / "notes.txt").write_text("mine", encoding="utf-8")
    done = machine.make("venv")
    assert done.returncode != 0 and "is not a virtual environment" in done.stderr
    assert (machine.venv / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_the_browser_tier_names_every_file_that_holds_a_browser_test():
    """make browser collects only the files it names (collecting all of tests/ cost 9 s): a browser test in any other
    file would never run, so every file that uses the marker must be one of them, and each of them must use it."""
    (command,) = [line for line in dry_run("browser").splitlines() if " -m pytest " in line]
    named = set(re.findall(r"\b(tests/\S+\.py)\b", command))
    marked = {path.relative_to(ROOT).as_posix() for path in (ROOT / "tests").rglob("*.py")
              if re.search(r"pytest\.mark\.browser\b", path.read_text(encoding="utf-8"))}
    assert " -m browser" in command and marked, command
    assert named == marked, f"make browser runs {sorted(named)}; the browser marker is in {sorted(marked)}"
