"""Every ``COURSE_*`` environment variable: its name, who sets it, and what it does - the one place that names them.

Modules read a variable through its constant here (``tests/test_architecture.py`` holds them to that);
CONTRIBUTING's table is ``markdown_table()`` (``scripts/course_lint.py`` compares). The on/off switches share one
reading, ``flag``; other values are checked by the module that uses them, with an error naming the variable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

# For students and instructors (docs/instructors.md, "Switches")
LANG = "COURSE_LANG"
SMOKE = "COURSE_SMOKE"
OFFLINE = "COURSE_OFFLINE"
DATA_DIR = "COURSE_DATA_DIR"
HOME = "COURSE_HOME"
RESULTS_DIR = "COURSE_RESULTS_DIR"
LOG_DIR = "COURSE_LOG_DIR"
TF_LOGS = "COURSE_TF_LOGS"
GPU_MEMORY = "COURSE_GPU_MEMORY"
# For a class's JupyterHub (docs/class.md)
HUB_USERS = "COURSE_HUB_USERS"
HUB_GROUP = "COURSE_HUB_GROUP"
HUB_ADMINS = "COURSE_HUB_ADMINS"
HUB_MEM_LIMIT = "COURSE_HUB_MEM_LIMIT"
HUB_CPU_LIMIT = "COURSE_HUB_CPU_LIMIT"
HUB_GPUS = "COURSE_HUB_GPUS"
HUB_STATE = "COURSE_HUB_STATE"
HUB_REPO = "COURSE_HUB_REPO"
HUB_BRANCH = "COURSE_HUB_BRANCH"
SHARED_SERVER = "COURSE_SHARED_SERVER"
HANDIN_DIR = "COURSE_HANDIN_DIR"
# For a cluster (docs/class.md)
SHARDS = "COURSE_SHARDS"
# Set by the course for its own child processes (course_utils.core.child)
PARENT_PID = "COURSE_PARENT_PID"
TIME_LIMIT_S = "COURSE_TIME_LIMIT_S"
CHILD_TEMP_DIR = "COURSE_CHILD_TEMP_DIR"

TRUE = ("1", "true", "yes", "on")
FALSE = ("", "0", "false", "no", "off")


@dataclass(frozen=True)
class Variable:
    """One ``COURSE_*`` variable as CONTRIBUTING's table shows it."""

    name: str
    set_by: str  # "student", "instructor" or "the course" (for its own processes)
    meaning: str


VARIABLES = (
    Variable(LANG, "student", "the language of the course's messages: `en` or `zh-CN` (default: the locale's, else "
                              "English); a notebook sets its own"),
    Variable(SMOKE, "student", "`1`: every notebook runs its short version (`course run` and `make course` follow it)"),
    Variable(OFFLINE, "student", "`1`: never use the network; data comes from the caches or the bundled sample"),
    Variable(DATA_DIR, "instructor", "a folder with `mnist.npz` and `fashion-mnist/`, looked in first"),
    Variable(HOME, "student", "where the course writes results, logs and runs (default: `build/` in your own copy)"),
    Variable(RESULTS_DIR, "student", "where notebooks record their results (default: `results/` in the course home)"),
    Variable(LOG_DIR, "the course", "the folder a relative `LOG_DIR` is taken in (`course run` sets one per run)"),
    Variable(TF_LOGS, "student", "`1`: show TensorFlow's C++ start-up lines instead of capturing them"),
    Variable(GPU_MEMORY, "instructor", "how much of each GPU a notebook may take: `growth` (default), `all`, or MiB"),
    Variable(HUB_USERS, "instructor", "the hub: user names allowed to log in (commas or spaces)"),
    Variable(HUB_GROUP, "instructor", "the hub: or the OS group whose members may log in"),
    Variable(HUB_ADMINS, "instructor", "the hub: user names with the admin page"),
    Variable(HUB_MEM_LIMIT, "instructor", "the hub: memory per student, e.g. `8G`"),
    Variable(HUB_CPU_LIMIT, "instructor", "the hub: CPU cores per student, e.g. `2`"),
    Variable(HUB_GPUS, "instructor", "the hub: GPU indexes or MIG UUIDs to share out among the students"),
    Variable(HUB_STATE, "instructor", "the hub: the folder of its own files (user database, cookie secret)"),
    Variable(HUB_REPO, "instructor", "the hub: the course's git repository (a path or URL) that nbgitpuller merges "
                                     "into each student's `~/tf-gpu-course` at every start of their server"),
    Variable(HUB_BRANCH, "instructor", "the hub: the branch of `COURSE_HUB_REPO` (default: its default branch)"),
    Variable(SHARED_SERVER, "the course", "`1`: other people's processes run on this machine (the class hub sets it); "
                                          "notebook 07's workers then need a network of their own"),
    Variable(HANDIN_DIR, "instructor", "the folder `course hand-in` writes each student's progress into (the class hub "
                                       "makes it and passes it on; default there: `/srv/tf-gpu-course-hand-in`)"),
    Variable(SHARDS, "instructor", "a Kubernetes Indexed Job: the number of shards of `course run --shard auto`"),
    Variable(PARENT_PID, "the course", "a child process ends when this process has ended"),
    Variable(TIME_LIMIT_S, "the course", "a child process ends after this many seconds"),
    Variable(CHILD_TEMP_DIR, "the course", "the temporary folder of a child process, removed by an orphan"),
)
NAMES = frozenset(v.name for v in VARIABLES)


def flag(name: str, environ: Mapping[str, str] | None = None) -> bool | None:
    """An on/off variable: True (``1``, ``true``, ``yes``, ``on``), False (unset, ``0``, ...), None: not understood."""
    value = (os.environ if environ is None else environ).get(name, "").strip().lower()
    return True if value in TRUE else False if value in FALSE else None


def markdown_table() -> str:
    """CONTRIBUTING's table of the variables, one row each."""
    rows = ["| variable | set by | what it does |", "|---|---|---|"]
    rows += [f"| `{v.name}` | {v.set_by} | {v.meaning} |" for v in VARIABLES]
    return "\n".join(rows)
