# JupyterHub for a class on one GPU server: every student logs in with their own account and gets
# their own JupyterLab, which runs the course's Python. docs/class.md ("JupyterHub on a GPU server")
# explains each setting; the hub test (make hub, tests/tools/hub/) starts a real hub with this file.
#
# Start it as root, from the course's environment (the class extra), in the course's checkout:
#
#     .venv/bin/jupyterhub -f hub/jupyterhub_config.py
#
# ---- The settings an instructor changes: environment variables where the hub starts -------------------------
#
#   COURSE_HUB_USERS    students allowed to log in, e.g. "ana,ben,chen" (they must have OS accounts)
#   COURSE_HUB_GROUP    or: the OS group whose members may log in (default tf-course; used when no users are given)
#   COURSE_HUB_ADMINS   accounts with the hub's admin page, e.g. "teacher"
#   COURSE_HUB_MEM_LIMIT  memory per student (default 8G; "none": no limit)
#   COURSE_HUB_CPU_LIMIT  CPU cores per student (default 2; "none": no limit)
#   COURSE_HUB_GPUS     optional: devices to share out, one per student, e.g. "0,1,2,3" or MIG UUIDs
#   COURSE_GPU_MEMORY   how much GPU memory each notebook may take: growth (default), all, or a number of MiB
#                       (size it for the class first: course preflight --students N --gpu-memory MIB)
#   COURSE_HUB_STATE    the hub's own files: user database, cookie secret (default /srv/tf-gpu-course-hub)
#   COURSE_HANDIN_DIR   where students hand in their progress (default /srv/tf-gpu-course-hand-in): they write,
#                       the admins read (course progress FOLDER)
#   COURSE_HUB_REPO     optional: the course's git repository (a path such as /opt/tf-gpu-course, or a URL); at every
#                       start of a student's server, nbgitpuller merges it into ~/tf-gpu-course (hub/start-student)
#   COURSE_HUB_BRANCH   its branch (default: the repository's default branch)
#   COURSE_OFFLINE, COURSE_SMOKE, COURSE_DATA_DIR  passed on to every student when set here
#
# Any JupyterHub setting can also be changed on the command line, which wins over this file, e.g.
#     jupyterhub -f hub/jupyterhub_config.py --JupyterHub.bind_url=http://127.0.0.1:8000
#
# ---- Limits: what enforces them --------------------------------------------------------------------------------
# SystemdSpawner runs each student's server as a systemd unit with MemoryMax and CPUQuota: the kernel
# enforces the memory and CPU limits. LocalProcessSpawner (JupyterHub's default, and the hub test's: a
# container has no systemd) enforces none of them: it only shows them to the student as MEM_LIMIT and
# CPU_LIMIT. CUDA_VISIBLE_DEVICES only chooses which GPU TensorFlow uses; it does not forbid the others.
# ------------------------------------------------------------------------------------------------------------

import logging
import sys
from pathlib import Path

from jupyterhub.auth import PAMAuthenticator

from course_tools.classroom import hub
from course_utils.core import variables

c = get_config()  # noqa: F821 - JupyterHub defines it when it reads this file
log = logging.getLogger("JupyterHub")
settings = hub.read_settings()  # a bad value stops the hub here, with a message naming the variable
checkout = Path(__file__).resolve().parents[1]

# Where the hub listens. Put it behind a TLS reverse proxy (docs/class.md), or give it a certificate here.
c.JupyterHub.bind_url = "http://127.0.0.1:8000"
c.JupyterHub.cleanup_servers = True  # stopping the hub stops every student's server too

# The hub's own files, readable by root only.
settings.state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
c.JupyterHub.db_url = f"sqlite:///{settings.state_dir / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(settings.state_dir / "jupyterhub_cookie_secret")
c.ConfigurableHTTPProxy.pid_file = str(settings.state_dir / "jupyterhub-proxy.pid")
c.ConfigurableHTTPProxy.command = hub.proxy_command()

# Users: real OS accounts, checked with PAM (their own password). The settings above are the whole class at every
# start: a name taken out of COURSE_HUB_USERS (or out of the group) or out of COURSE_HUB_ADMINS loses its access.


class ClassAuthenticator(PAMAuthenticator):
    """PAM, where a name the settings no longer allow is not valid: with delete_invalid_users, the hub deletes such
    a user from its database when it starts - their API tokens, cookies' sessions and server with them."""

    def validate_username(self, username):
        return super().validate_username(username) and self.check_allowed(username, None)


c.JupyterHub.authenticator_class = ClassAuthenticator
c.Authenticator.allowed_users = set(settings.users) | set(settings.admins)  # admins log in too
if not settings.users:
    c.PAMAuthenticator.allowed_groups = {settings.group}
c.Authenticator.allow_existing_users = False  # JupyterHub's default with a user list is True: a removed name stays
c.Authenticator.delete_invalid_users = True
# Admins through the admin role: JupyterHub sets the role's members to exactly this list at every start (admin_users
# only ever adds). An admin can see every user, stop and start their servers, and open a student's server - run
# code there as that student (docs/class.md, "What an admin can do").
c.JupyterHub.load_roles = [{"name": "admin", "users": sorted(settings.admins)}]

# Each student's server: the course's jupyterhub-singleuser (its kernels run the course's Python),
# as a systemd unit with enforced limits. hub/start-student first gives the student the notebooks in their home
# (~/tf-gpu-course/notebooks): with COURSE_HUB_REPO, nbgitpuller merges the repository's new commits into their
# clone and keeps their changes; without it, it copies the notebooks they do not have yet. JupyterLab opens there.
c.JupyterHub.spawner_class = "systemdspawner.SystemdSpawner"
c.Spawner.cmd = [str(checkout / "hub" / "start-student"), *hub.singleuser_command()]
c.Spawner.default_url = "/lab/tree/tf-gpu-course/notebooks"
if settings.mem_limit:
    c.Spawner.mem_limit = settings.mem_limit
if settings.cpu_limit:
    c.Spawner.cpu_limit = settings.cpu_limit
c.SystemdSpawner.isolate_tmp = True  # each student's own /tmp
c.SystemdSpawner.disable_user_sudo = True
c.Spawner.env_keep = ["JUPYTERHUB_SINGLEUSER_APP", "LANG", "LC_ALL", *hub.PASSED_ON]
c.Spawner.environment = {
    **hub.student_environment(settings, Path(sys.executable).parent),
    # Each student's TensorBoard is at /user/<name>/tensorboard/, on a Unix socket only they can reach
    # (tools/course_tools/classroom/tb_server.py); it shows this folder. No TENSORBOARD_PROXY_URL: %tensorboard
    # would listen on a TCP port that every classmate's process can reach.
    variables.LOG_DIR: lambda spawner: hub.log_dir_for(spawner.user.name),
}
# The hand-in folder: `course hand-in` writes each student's progress there, for the admins to read with
# `course progress FOLDER` (tools/course_tools/classroom/handin.py and progress.py); no student reads another's.
for problem in hub.prepare_hand_in(settings.handin_dir, sorted(settings.admins)):
    log.warning("The hand-in folder: %s", problem)
c.Spawner.environment[variables.HANDIN_DIR] = str(settings.handin_dir)
if settings.gpus:
    c.Spawner.environment["CUDA_VISIBLE_DEVICES"] = lambda spawner: hub.gpu_for_user(spawner.user.name, settings.gpus)

for problem in hub.closed_to_students(sys.executable, checkout, settings.repo):
    log.warning("Students may not be able to start their servers: %s. Install the course where every "
                "account can read it (docs/class.md).", problem)
log.info("Course hub settings: %s", settings)
