"""The course's JupyterHub: the instructor's settings, and what each student's server gets.

``hub/jupyterhub_config.py`` reads its settings through this module, so they are checked (and
tested) without starting a hub. The instructor sets a few environment variables where the hub
starts (``COURSE_HUB_*``, ``COURSE_GPU_MEMORY``); a bad value stops the hub at start-up with
a message that names the variable, instead of failing later in forty students' notebooks.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from course_tools import _
from course_utils.core import variables
from course_utils.core.errors import CourseError, ParameterError
from course_utils.core.gpu_config import memory_policy
from course_utils.core.places import PROJECT_ROOT

DEFAULT_GROUP = "tf-course"
DEFAULT_STATE = "/srv/tf-gpu-course-hub"
DEFAULT_HANDIN = "/srv/tf-gpu-course-hand-in"
# The hand-in folder: setgid (a file takes the folder's group, root, not a group students share), sticky (no one
# renames or removes another's file), and others may write and pass but not list it (-wx).
HANDIN_MODE = 0o3733
DEFAULT_MEM_LIMIT = "8G"
DEFAULT_CPU_LIMIT = 2.0
# Course switches passed on from the hub's environment to every student, when set there.
PASSED_ON = (variables.OFFLINE, variables.SMOKE, variables.DATA_DIR)
# The proxy in front of the hub, an npm package: .ci/run installs this copy into build/npm.
PROXY_NAME = "configurable-http-proxy"
LOCAL_PROXY = PROJECT_ROOT / "build" / "npm" / "node_modules" / ".bin" / PROXY_NAME

_BYTES = re.compile(r"^[0-9]+(\.[0-9]+)?[KMGT]?$")


@dataclass(frozen=True)
class HubSettings:
    """What the instructor chose, checked: who may log in, each student's limits and devices, where state goes."""

    users: frozenset[str]
    group: str | None  # None when a list of users is given
    admins: frozenset[str]
    mem_limit: str | None  # JupyterHub's byte format: "8G"; None: no limit
    cpu_limit: float | None
    gpus: tuple[str, ...]  # empty: every student sees every GPU
    gpu_memory: str  # COURSE_GPU_MEMORY as given ("growth" when unset)
    state_dir: Path
    handin_dir: Path  # where `course hand-in` puts each student's progress (COURSE_HANDIN_DIR)
    repo: str | None = None  # the course's git repository that nbgitpuller merges into each student's folder
    branch: str | None = None  # its branch; None: the repository's default branch


def names(text: str) -> list[str]:
    """The names in one of the hub's list settings (users, admins, GPUs), separated by commas or spaces."""
    return [part for part in re.split(r"[\s,]+", text.strip()) if part]


def _local_repo(text: str) -> Path | None:
    """The folder of a repository given as a path or a ``file://`` URL; None for a remote URL."""
    if text.startswith("file://"):
        return Path(text.removeprefix("file://"))
    if "://" in text or re.match(r"^[^/]+:", text):  # https://..., ssh://..., git@host:path
        return None
    return Path(text)


def _repo(environ: Mapping[str, str]) -> tuple[str | None, str | None]:
    """COURSE_HUB_REPO and COURSE_HUB_BRANCH, checked: a repository on this machine must be one (a clone or a bare
    repository), named by its absolute path, because each student's server reads it from their own home."""
    repo = environ.get(variables.HUB_REPO, "").strip() or None
    branch = environ.get(variables.HUB_BRANCH, "").strip() or None
    if repo is None:
        if branch is not None:
            raise ParameterError(
                _("{variable} is set, but {repo} is not: there is no repository to take the branch from.").format(
                    variable=variables.HUB_BRANCH, repo=variables.HUB_REPO),
                _("Set {repo} to the course's git repository, e.g. {repo}=/opt/tf-gpu-course, or unset "
                  "{variable}.").format(repo=variables.HUB_REPO, variable=variables.HUB_BRANCH))
        return None, None
    local = _local_repo(repo)
    if local is not None and not (local.is_absolute() and ((local / ".git").exists() or (local / "HEAD").is_file())):
        raise ParameterError(
            _("{variable}={value!r} is not a git repository on this machine, named by its absolute path.").format(
                variable=variables.HUB_REPO, value=repo),
            _("Name the course's clone, e.g. {variable}=/opt/tf-gpu-course, or a URL, e.g. "
              "{variable}=https://github.com/tf-gpu-course/tf-gpu-course.").format(variable=variables.HUB_REPO))
    return repo, branch


def _limit(environ: Mapping[str, str], name: str, default: str) -> str | None:
    """A limit's text; "none" or "0" turns the limit off."""
    text = environ.get(name, default).strip()
    return None if text.lower() in ("none", "0", "") else text


def read_settings(environ: Mapping[str, str] | None = None) -> HubSettings:
    """The hub's settings from ``environ`` (default: this process's environment); ``ParameterError`` if one is bad."""
    env = os.environ if environ is None else environ
    users = frozenset(names(env.get(variables.HUB_USERS, "")))
    group = None if users else (env.get(variables.HUB_GROUP, "").strip() or DEFAULT_GROUP)
    mem_limit = _limit(env, variables.HUB_MEM_LIMIT, DEFAULT_MEM_LIMIT)
    if mem_limit is not None and not _BYTES.match(mem_limit.upper()):
        raise ParameterError(
            _("{variable}={value!r} is not an amount of memory.").format(
                variable=variables.HUB_MEM_LIMIT, value=mem_limit),
            _("Write a number with K, M, G or T, e.g. {variable}=8G, or {variable}=none for no limit.").format(
                variable=variables.HUB_MEM_LIMIT),
        )
    cpu_text = _limit(env, variables.HUB_CPU_LIMIT, str(DEFAULT_CPU_LIMIT))
    try:
        cpu_limit = None if cpu_text is None else float(cpu_text)
    except ValueError:
        cpu_limit = -1.0
    if cpu_limit is not None and not cpu_limit > 0:
        raise ParameterError(
            _("{variable}={value!r} is not a number of CPU cores.").format(
                variable=variables.HUB_CPU_LIMIT, value=cpu_text),
            _("Write a positive number, e.g. {variable}=2 or 0.5, or {variable}=none for no limit.").format(
                variable=variables.HUB_CPU_LIMIT),
        )
    gpu_memory = env.get(variables.GPU_MEMORY, "").strip() or "growth"
    memory_policy(gpu_memory)  # the notebooks' own check: a bad value stops the hub, not every notebook
    repo, branch = _repo(env)
    return HubSettings(
        users=users, group=group, admins=frozenset(names(env.get(variables.HUB_ADMINS, ""))),
        mem_limit=mem_limit.upper() if mem_limit else None, cpu_limit=cpu_limit,
        gpus=tuple(names(env.get(variables.HUB_GPUS, ""))), gpu_memory=gpu_memory,
        state_dir=Path(env.get(variables.HUB_STATE, "").strip() or DEFAULT_STATE),
        handin_dir=Path(env.get(variables.HANDIN_DIR, "").strip() or DEFAULT_HANDIN), repo=repo, branch=branch)


def gpu_for_user(name: str, devices: Sequence[str]) -> str | None:
    """The one device of ``devices`` that user ``name`` gets, the same on every start; None when none are given.

    The choice is a hash of the name (SHA-256, not Python's ``hash``, which changes from run to run), so
    it needs no stored state and survives a restart of the hub. Students are spread over the devices
    evenly on average, not exactly: two may share a device while another has none.
    """
    if not devices:
        return None
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return devices[int.from_bytes(digest[:8], "big") % len(devices)]


def log_dir_for(name: str) -> str:
    """``COURSE_LOG_DIR`` for student ``name``: ``~/tf-gpu-course/logs``, the folder their private TensorBoard shows
    (``tb_server``) and where notebook 06's relative ``LOG_DIR`` starts."""
    return str(Path(os.path.expanduser(f"~{name}")) / "tf-gpu-course" / "logs")


def prepare_hand_in(folder: Path, admins: Sequence[str]) -> list[str]:
    """Make the class's hand-in folder at the hub's start (as root): each student writes their own file there,
    which they and the admins read, and no other student (``HANDIN_MODE``, and a POSIX ACL entry per admin - on the
    folder, as the default for new files, and on the files already there). The admins are exactly ``admins`` at
    every start: an admin taken out of the settings reads no hand-in any more. Returns the problems, to log."""
    folder.mkdir(parents=True, exist_ok=True)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        os.chown(folder, 0, 0)
    folder.chmod(HANDIN_MODE)
    setfacl = shutil.which("setfacl")
    if setfacl is None:
        return [_("setfacl was not found (Debian and Ubuntu: the package acl), so only root reads the hand-ins in "
                  "{folder}.").format(folder=folder)] if admins else []
    files = [str(p) for p in folder.iterdir() if p.is_file()]
    commands = [[setfacl, "-b", str(folder), *files]]  # every named entry gone: the admins of this start only
    for name in sorted(admins):
        # rwx: an admin lists and reads, and hands in too (a named entry replaces "others" -wx for that account)
        commands += [[setfacl, "-m", f"u:{name}:rwx", str(folder)], [setfacl, "-d", "-m", f"u:{name}:r", str(folder)]]
        commands += [[setfacl, "-m", f"u:{name}:r", *files]] if files else []
    problems = []
    for command in commands:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            problems.append(f"{' '.join(command[:4])}: {done.stderr.strip()}")
    return problems


def student_environment(settings: HubSettings, python_bin: Path) -> dict[str, str]:
    """The variables every student's server gets whatever their name (the per-user ones come from the spawner)."""
    system_path = "/usr/local/bin:/usr/bin:/bin"
    # SHARED_SERVER: classmates' processes run here too (notebook 07's workers then need a network of their own)
    found = {variables.GPU_MEMORY: settings.gpu_memory, variables.SHARED_SERVER: "1",
             "PATH": f"{python_bin}:{system_path}"}
    # hub/start-student reads these: nbgitpuller (in python_bin) merges the course into the student's folder
    if settings.repo:
        found[variables.HUB_REPO] = settings.repo
    if settings.branch:
        found[variables.HUB_BRANCH] = settings.branch
    return found


def proxy_command(environ: Mapping[str, str] | None = None) -> list[str]:
    """How to start configurable-http-proxy: the checkout's npm copy, else the one on PATH."""
    if LOCAL_PROXY.is_file():
        return [str(LOCAL_PROXY)]
    found = shutil.which(PROXY_NAME, path=(os.environ if environ is None else environ).get("PATH"))
    if found:
        return [found]
    raise CourseError(
        _("JupyterHub needs its proxy, {proxy}, and it is neither in {folder} nor on PATH.").format(
            proxy=PROXY_NAME, folder=LOCAL_PROXY.parent),
        _("Install it with npm (it needs Node.js): npm install --prefix {prefix} {proxy}@5.3.0, or npm install -g "
          "{proxy}@5.3.0.").format(prefix=PROJECT_ROOT / "build" / "npm", proxy=PROXY_NAME),
    )


def singleuser_command() -> list[str]:
    """Each student's server: ``jupyterhub-singleuser`` of the environment the hub runs in (the course's)."""
    return [str(Path(sys.executable).parent / "jupyterhub-singleuser")]


def _blocked(path: Path) -> str | None:
    """Why another user cannot reach ``path`` (a folder on the way without o+x, ``path`` itself without o+rx), or
    None."""
    for item in [*reversed(path.parents), path]:
        try:
            mode = item.stat().st_mode
        except OSError as err:
            return f"{item} cannot be read ({err.strerror})"
        if item != path and not mode & stat.S_IXOTH:
            return f"{path} is out of their reach: the folder {item} is closed to other users " \
                   f"(mode {stat.filemode(mode)})"
    if mode & (stat.S_IROTH | stat.S_IXOTH) != stat.S_IROTH | stat.S_IXOTH:
        return f"{path} is closed to other users (mode {stat.filemode(mode)})"
    return None


def closed_to_students(python: str | None = None, checkout: Path = PROJECT_ROOT, repo: str | None = None) -> list[str]:
    """What stops a student's account from running the course: each a sentence; empty when nothing does.

    A student's server runs the environment's Python (followed through its links to the real
    program) and reads the course's folder, so each of those must be open to other users.
    Group permissions are not looked at: a setup that opens them to a students' group only is
    reported too, which errs on the safe side.
    """
    program = Path(python or sys.executable)
    checks = [checkout / "notebooks", program]
    if repo and (local := _local_repo(repo)) is not None:  # COURSE_HUB_REPO: each student's server clones it
        checks.append(local)
    if program.resolve() != program:
        checks.append(program.resolve())
    found = []
    for path in checks:
        problem = _blocked(Path(os.path.abspath(path)))
        if problem and problem not in found:
            found.append(problem)
    return found
