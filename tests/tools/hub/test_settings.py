"""The hub's settings without a hub: what the instructor's variables become, and what each student gets.

These run in the unit tier (no ``hub`` marker): ``course_tools.classroom.hub`` alone, then the shipped
``hub/jupyterhub_config.py`` read by traitlets as JupyterHub reads it, then ``SystemdSpawner`` turning
the limits into the unit properties systemd enforces (systemd itself replaced by a recorder).
"""

from __future__ import annotations

import asyncio
import os
import pwd
import re
import stat
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from unittest.mock import AsyncMock

import pytest
from jupyterhub.auth import PAMAuthenticator
from traitlets.config.loader import PyFileConfigLoader

from course_tools.classroom import hub
from course_utils.core import variables
from course_utils.core.errors import CourseError, ParameterError

from ...conftest import ROOT

VARIABLES = (variables.HUB_USERS, variables.HUB_GROUP, variables.HUB_ADMINS, variables.HUB_MEM_LIMIT,
             variables.HUB_CPU_LIMIT, variables.HUB_GPUS, variables.HUB_STATE, variables.GPU_MEMORY)
DEVICES = ["0", "1", "2", "3"]
START = ROOT / "hub" / "start-student"


@pytest.mark.parametrize(("given", "expected"), [
    ({}, {"users": frozenset(), "group": "tf-course", "admins": frozenset(), "mem_limit": "8G", "cpu_limit": 2.0,
          "gpus": (), "gpu_memory": "growth", "state_dir": Path("/srv/tf-gpu-course-hub")}),
    ({variables.HUB_USERS: "ana, ben chen", variables.HUB_GROUP: "ignored", variables.HUB_ADMINS: "teach",
      variables.HUB_GPUS: "0,MIG-4f1c 2", variables.HUB_MEM_LIMIT: "12g", variables.HUB_CPU_LIMIT: "0.5",
      variables.GPU_MEMORY: "4096", variables.HUB_STATE: "/var/lib/hub"},
     {"users": {"ana", "ben", "chen"}, "group": None, "admins": {"teach"}, "mem_limit": "12G", "cpu_limit": 0.5,
      "gpus": ("0", "MIG-4f1c", "2"), "gpu_memory": "4096", "state_dir": Path("/var/lib/hub")}),
    ({variables.HUB_MEM_LIMIT: "none", variables.HUB_CPU_LIMIT: "None"}, {"mem_limit": None, "cpu_limit": None}),
], ids=["defaults-a-group-with-limits", "a-list-of-users-replaces-the-group", "none-turns-a-limit-off"])
def test_the_instructors_variables_become_the_hubs_settings(given, expected):
    settings = hub.read_settings(given)
    assert {name: getattr(settings, name) for name in expected} == expected


@pytest.mark.parametrize(("variable", "value"), [
    (variables.HUB_MEM_LIMIT, "8 gigabytes"),
    (variables.HUB_CPU_LIMIT, "two"),
    (variables.HUB_CPU_LIMIT, "-1"),
    (variables.GPU_MEMORY, "half"),
    (variables.HUB_REPO, "/nowhere/tf-gpu-course"),  # no repository there
    (variables.HUB_REPO, "tf-gpu-course"),  # relative: each student's server would take it in their own home
    (variables.HUB_BRANCH, "main"),  # a branch of no repository
])
def test_a_bad_value_stops_the_hub_with_a_message_naming_the_variable(variable, value):
    with pytest.raises(ParameterError) as caught:
        hub.read_settings({variable: value})
    assert variable in caught.value.what and variable in caught.value.fix


@pytest.mark.parametrize("given", ["checkout", "file://checkout", "https://github.com/tf-gpu-course/tf-gpu-course",
                                   "git@github.com:tf-gpu-course/tf-gpu-course.git"])
def test_the_course_repository_is_a_clone_on_this_machine_or_a_url_and_reaches_every_student(given):
    repo = given.replace("checkout", str(ROOT))  # the course's own checkout is a git clone
    settings = hub.read_settings({variables.HUB_REPO: repo, variables.HUB_BRANCH: "main"})
    assert (settings.repo, settings.branch) == (repo, "main")
    environment = hub.student_environment(settings, Path("/opt/course/.venv/bin"))
    assert environment[variables.HUB_REPO] == repo and environment[variables.HUB_BRANCH] == "main"
    unset = hub.student_environment(hub.read_settings({}), Path("/opt/course/.venv/bin"))
    assert variables.HUB_REPO not in unset and variables.HUB_BRANCH not in unset


def test_each_student_keeps_one_device_across_restarts_and_hash_seeds():
    """Pinned: Python's own hash() changes with PYTHONHASHSEED at each start, and a change of the choice would move
    every student of a running class to another GPU."""
    assert [hub.gpu_for_user(name, DEVICES) for name in ("ana", "ben", "chen", "dara")] == ["2", "2", "0", "1"]
    assert hub.gpu_for_user("ana", ["MIG-only"]) == "MIG-only"
    assert hub.gpu_for_user("ana", []) is None, "no device list: no choice"


def test_a_class_of_forty_is_spread_over_every_device():
    counts = Counter(hub.gpu_for_user(f"student{number:02d}", DEVICES) for number in range(40))
    assert set(counts) == set(DEVICES) and min(counts.values()) >= 5, counts


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    """A folder in the system's temporary folder, open to other users (pytest's tmp_path sits in a 0700 one)."""
    with tempfile.TemporaryDirectory(prefix="course-hub-") as folder:
        yield Path(folder)


def test_a_python_or_a_course_repository_inside_a_closed_folder_is_reported(open_tmp):
    checkout, closed, url = open_tmp / "open" / "course", open_tmp / "closed", "https://github.com/tf-gpu-course/x"
    python, repo = closed / "bin" / "python3", closed / "repo"  # COURSE_HUB_REPO: each student's server clones it
    for folder in (checkout / "notebooks", python.parent, repo):
        folder.mkdir(parents=True)
    python.write_text("#!/bin/sh\n")
    for path in (open_tmp, open_tmp / "open", checkout, checkout / "notebooks", closed, python.parent, python, repo):
        path.chmod(0o755)
    link = checkout / "python"
    link.symlink_to(python)  # the environment's python is a link: the real program is what must be reached
    assert hub.closed_to_students(str(link), checkout, f"file://{repo}") == []
    closed.chmod(0o700)  # TemporaryDirectory's clean-up opens it again
    found = {given: hub.closed_to_students(str(link), checkout, given) for given in (None, f"file://{repo}", url)}
    (alone,) = found[None]
    assert f"the folder {closed} is closed to other users" in alone and str(python) in alone
    assert found[url] == [alone], "a repository on the network is not this machine's folder"
    assert any(str(repo) in problem for problem in found[f"file://{repo}"])


def test_the_proxy_comes_from_the_checkout_then_path_else_a_message_with_the_npm_command(monkeypatch, tmp_path):
    local = tmp_path / "npm" / "configurable-http-proxy"
    monkeypatch.setattr(hub, "LOCAL_PROXY", local)
    on_path = tmp_path / "bin" / "configurable-http-proxy"
    on_path.parent.mkdir()
    on_path.write_text("#!/bin/sh\n")
    on_path.chmod(0o755)
    assert hub.proxy_command({"PATH": str(on_path.parent)}) == [str(on_path)]
    local.parent.mkdir()
    local.write_text("#!/bin/sh\n")
    assert hub.proxy_command({"PATH": str(on_path.parent)}) == [str(local)]
    local.unlink()
    with pytest.raises(CourseError) as caught:
        hub.proxy_command({"PATH": str(tmp_path / "nothing")})
    assert "npm install" in caught.value.fix and "configurable-http-proxy@5.3.0" in caught.value.fix


@pytest.fixture
def hub_env(monkeypatch, tmp_path):
    """The instructor's variables cleared, the hub's state under tmp_path, a stand-in proxy in the checkout."""
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variables.HUB_STATE, str(tmp_path / "state"))
    monkeypatch.setenv(variables.HANDIN_DIR, str(tmp_path / "hand-in"))
    proxy = tmp_path / "configurable-http-proxy"
    proxy.write_text("#!/bin/sh\n")
    monkeypatch.setattr(hub, "LOCAL_PROXY", proxy)
    return monkeypatch


def load_config():
    return PyFileConfigLoader("jupyterhub_config.py", path=str(ROOT / "hub")).load_config()


def fake_spawner(name: str) -> SimpleNamespace:
    return SimpleNamespace(user=SimpleNamespace(name=name), server=SimpleNamespace(base_url=f"/user/{name}/"))


def test_the_shipped_config_with_the_defaults(hub_env, tmp_path):
    c = load_config()
    assert issubclass(c.JupyterHub.authenticator_class, PAMAuthenticator)
    assert c.JupyterHub.spawner_class == "systemdspawner.SystemdSpawner"
    assert c.PAMAuthenticator.allowed_groups == {"tf-course"} and c.Authenticator.allowed_users == set()
    assert c.Authenticator.allow_existing_users is False and c.Authenticator.delete_invalid_users is True
    assert c.JupyterHub.load_roles == [{"name": "admin", "users": []}] and "admin_users" not in c.Authenticator
    assert c.JupyterHub.bind_url == "http://127.0.0.1:8000", "never open to the network before TLS is set up"
    assert c.JupyterHub.db_url == f"sqlite:///{tmp_path / 'state' / 'jupyterhub.sqlite'}"
    assert (tmp_path / "state").stat().st_mode & 0o777 == 0o700
    assert c.ConfigurableHTTPProxy.command == [str(hub.LOCAL_PROXY)]
    assert c.Spawner.cmd == [str(START), str(Path(sys.executable).parent / "jupyterhub-singleuser")]
    assert "notebook_dir" not in c.Spawner, "the server starts in the student's home"
    assert c.Spawner.default_url == "/lab/tree/tf-gpu-course/notebooks"
    assert (c.Spawner.mem_limit, c.Spawner.cpu_limit) == ("8G", 2.0)
    environment = c.Spawner.environment
    assert environment[variables.GPU_MEMORY] == "growth"
    assert environment["PATH"].split(":")[0] == str(Path(sys.executable).parent)
    assert "TENSORBOARD_PROXY_URL" not in environment, "%tensorboard's TCP port would be open to classmates"
    logs = Path(os.path.expanduser("~root")) / "tf-gpu-course" / "logs"  # in each student's own home
    assert environment[variables.LOG_DIR](fake_spawner("root")) == str(logs)
    assert environment[variables.SHARED_SERVER] == "1"
    assert environment[variables.HANDIN_DIR] == str(tmp_path / "hand-in")
    assert stat.S_IMODE((tmp_path / "hand-in").stat().st_mode) == hub.HANDIN_MODE
    assert "CUDA_VISIBLE_DEVICES" not in environment
    assert {"COURSE_OFFLINE", "COURSE_SMOKE", "COURSE_DATA_DIR"} <= set(c.Spawner.env_keep)
    assert "COURSE_RESULTS_DIR" not in c.Spawner.env_keep and "COURSE_HOME" not in c.Spawner.env_keep


def test_the_shipped_config_with_the_instructors_choices(hub_env):
    hub_env.setenv(variables.HUB_USERS, "ana,ben")
    hub_env.setenv(variables.HUB_ADMINS, "teach")
    hub_env.setenv(variables.HUB_GPUS, ",".join(DEVICES))
    hub_env.setenv(variables.HUB_MEM_LIMIT, "none")
    hub_env.setenv(variables.GPU_MEMORY, "3072")
    c = load_config()
    assert c.Authenticator.allowed_users == {"ana", "ben", "teach"}, "an admin logs in too"
    assert c.JupyterHub.load_roles == [{"name": "admin", "users": ["teach"]}]
    assert "allowed_groups" not in c.PAMAuthenticator
    assert "mem_limit" not in c.Spawner and c.Spawner.cpu_limit == 2.0
    assert c.Spawner.environment[variables.GPU_MEMORY] == "3072"
    for name in ("ana", "ben"):
        assert c.Spawner.environment["CUDA_VISIBLE_DEVICES"](fake_spawner(name)) == hub.gpu_for_user(name, DEVICES)


def test_the_shipped_config_refuses_a_bad_setting(hub_env):
    hub_env.setenv(variables.GPU_MEMORY, "most")
    with pytest.raises(ParameterError, match=variables.GPU_MEMORY):
        load_config()


def test_systemd_spawner_turns_the_limits_into_unit_properties_that_systemd_enforces(hub_env, monkeypatch):
    from systemdspawner import SystemdSpawner, systemd

    hub_env.setenv(variables.HUB_MEM_LIMIT, "3G")
    hub_env.setenv(variables.HUB_CPU_LIMIT, "1.5")
    start = AsyncMock()
    monkeypatch.setattr(systemd, "get_systemd_version", lambda: 252)
    # no unit before the start; the unit is up after it
    monkeypatch.setattr(systemd, "service_running", AsyncMock(side_effect=[False, True]))
    monkeypatch.setattr(systemd, "service_failed", AsyncMock(return_value=False))
    monkeypatch.setattr(systemd, "start_transient_service", start)
    monkeypatch.setattr(SystemdSpawner, "get_env", lambda self: {})  # the hub's own variables need a running hub
    spawner = SystemdSpawner(user=SimpleNamespace(name="root", id=1), config=load_config())
    asyncio.run(spawner.start())
    (unit,), started = start.call_args
    properties = started["properties"]
    assert properties["MemoryMax"] == 3 * 1024**3 and properties["MemoryAccounting"] == "yes"
    assert properties["CPUQuota"] == "150%" and properties["CPUAccounting"] == "yes"
    assert properties["PrivateTmp"] == "yes" and properties["NoNewPrivileges"] == "yes"
    assert started["cmd"] == [str(START), str(Path(sys.executable).parent / "jupyterhub-singleuser")]
    assert started["uid"] == 0 and unit == "jupyter-root-singleuser"
    # docs/class.md's command for an admin names this unit and each of these properties, as systemctl shows them
    command = re.search(r"^systemctl show (\S+) (.*)$", (ROOT / "docs" / "class.md").read_text(encoding="utf-8"), re.M)
    assert command, "docs/class.md: no `systemctl show` command for the limits"
    assert command.group(1) == spawner.unit_name_template.replace("{USERNAME}", "ana")
    shown = {"MemoryMax": "MemoryMax", "CPUQuota": "CPUQuotaPerSecUSec", "PrivateTmp": "PrivateTmp",
             "NoNewPrivileges": "NoNewPrivileges"}  # a property set, and the name systemctl show gives it
    assert command.group(2).split() == [word for name in shown.values() for word in ("-p", name)]
    assert set(shown) <= set(properties)


def start_student(home: Path, **settings: str) -> subprocess.CompletedProcess[str]:
    """hub/start-student as JupyterHub runs it, with ``pwd`` as the server's command: the course's environment first
    on PATH (its nbgitpuller), and ``settings`` (COURSE_HUB_REPO, ...) as the hub passes them."""
    env = {"HOME": str(home), "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", **settings}
    return subprocess.run([str(START), "pwd"], capture_output=True, text=True, env=env, cwd="/", check=True)


def test_the_start_script_copies_the_notebooks_once_and_keeps_the_students_work(tmp_path):
    home = tmp_path / "ana"
    home.mkdir()
    done = start_student(home)
    assert done.stdout.strip() == str(home), "the server starts in the student's home"
    mine = home / "tf-gpu-course" / "notebooks"
    course = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert sorted(p.name for p in mine.iterdir()) == [p.name for p in course]
    assert (mine / course[0].name).read_bytes() == course[0].read_bytes()
    assert (home / "tf-gpu-course").stat().st_mode & 0o777 == 0o700
    (mine / course[0].name).write_text("my answers")
    (mine / course[1].name).unlink()
    start_student(home)
    assert (mine / course[0].name).read_text() == "my answers", "a student's own copy is never replaced"
    assert (mine / course[1].name).read_bytes() == course[1].read_bytes(), "a missing notebook comes back"


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.name=Instructor", "-c", "user.email=instructor@example.org", *args],
                          cwd=folder, capture_output=True, text=True, check=True)
    return done.stdout


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_with_a_repository_every_start_pulls_the_course_and_a_copied_folder_is_kept_aside(tmp_path):
    """COURSE_HUB_REPO: the first start clones it (a copied folder from before is kept aside, once), every later start
    pulls the instructor's new commits (how nbgitpuller merges them with the student's work is nbgitpuller's:
    https://nbgitpuller.readthedocs.io/en/latest/topic/automatic-merging.html)."""
    upstream = tmp_path / "course"
    write(upstream / "notebooks" / "01_a.ipynb", "the course\n")
    git(upstream, "init", "-q", "-b", "main")
    git(upstream, "add", ".")
    git(upstream, "commit", "-q", "-m", "the course")
    home = tmp_path / "ana"
    write(home / "tf-gpu-course" / "notebooks" / "01_a.ipynb", "copied before, with my answers\n")
    done = start_student(home, COURSE_HUB_REPO=str(upstream))
    assert done.stdout.strip().splitlines()[-1] == str(home), "the server starts in the student's home"
    (before,) = home.glob("tf-gpu-course-before-updates-*")
    assert (before / "notebooks" / "01_a.ipynb").read_text() == "copied before, with my answers\n"
    mine = home / "tf-gpu-course"
    assert (mine / ".git").is_dir() and stat.S_IMODE(mine.stat().st_mode) == 0o700
    assert (mine / "notebooks" / "01_a.ipynb").read_text() == "the course\n"
    write(upstream / "notebooks" / "02_b.ipynb", "a new notebook\n")
    git(upstream, "add", ".")
    git(upstream, "commit", "-q", "-m", "the update")
    start_student(home, COURSE_HUB_REPO=str(upstream))
    assert (mine / "notebooks" / "02_b.ipynb").read_text() == "a new notebook\n"
    assert sorted(p.name for p in home.iterdir()) == sorted([before.name, "tf-gpu-course"]), "kept aside once"


def test_a_pull_that_fails_still_starts_the_server(tmp_path):
    home = tmp_path / "ben"
    home.mkdir()
    done = start_student(home, COURSE_HUB_REPO=str(tmp_path / "not-there"))
    assert done.stdout.strip().splitlines()[-1] == str(home)
    assert stat.S_IMODE((home / "tf-gpu-course").stat().st_mode) == 0o700


def acl(path: Path) -> str:
    return subprocess.run(["getfacl", "-p", str(path)], capture_output=True, text=True, check=True).stdout


def test_the_hand_in_folder_lets_students_write_and_the_admins_of_this_start_read(tmp_path):
    folder = tmp_path / "hand-in"
    folder.mkdir()
    (folder / "ana.json").write_text("{}")
    me = pwd.getpwuid(os.getuid()).pw_name
    assert hub.prepare_hand_in(folder, [me]) == []
    mode = stat.S_IMODE(folder.stat().st_mode)  # with an ACL, the group bits show its mask
    assert mode & 0o7707 == 0o3703, f"setgid, sticky; others write and pass, never list: {oct(mode)}"
    assert f"user:{me}:rwx" in acl(folder) and f"default:user:{me}:r--" in acl(folder)
    assert f"user:{me}:r--" in acl(folder / "ana.json"), "a hand-in from before this start is readable by its admins"
    assert hub.prepare_hand_in(folder, []) == []  # the admin taken out of the settings
    assert f"user:{me}" not in acl(folder) and f"user:{me}" not in acl(folder / "ana.json")
    assert stat.S_IMODE(folder.stat().st_mode) == hub.HANDIN_MODE
