"""A class on one server, for real: JupyterHub with the shipped configuration, two students, one notebook each.

The test (``make hub``; marker ``hub``) needs root, as a hub does: it creates two real OS accounts
(``useradd``, home folders, passwords through ``chpasswd``) and removes them and their homes at the
end, also when a check fails. It starts JupyterHub on 127.0.0.1 with ``hub/jupyterhub_config.py``
and the documented overrides only: the hub's settings as ``COURSE_HUB_*`` variables, and on the
command line free ports, and ``LocalProcessSpawner`` instead of ``SystemdSpawner`` (a container has
no systemd; test_settings.py checks the limits SystemdSpawner gives systemd). The proxy is the
checkout's npm copy (``build/npm``, installed by ``.ci/run``).

Each student logs in through the hub's login form with their password (PAM), takes an API token the way the hub's
token page does, and starts their server (``hub/start-student`` first has nbgitpuller clone the course's repository
- ``COURSE_HUB_REPO``, a local repository owned by root - into ``~/tf-gpu-course``). Then, in a kernel of each
server (both at once), the code cells of the student's copy of notebook 02 run in smoke mode through the server's
REST API and the kernel websocket; the tests below check what each student can and cannot reach. Last, the hub
starts again with other settings. At the end the hub is stopped and no process started here (hub, proxy, servers,
kernels) is left.

Without root or without the proxy it is skipped locally and fails in CI. An instructor installs the
course where every account can read it (docs/class.md); a test machine may not have (CI's Python lives under a 0700
``/root``): the test's two accounts, and no one else, pass through its closed folders (tests/accounts.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import psutil
import pytest
import requests

from course_tools.classroom import hub
from course_utils.core import variables
from course_utils.core.errors import CourseError
from course_utils.core.processes import descendants, free_ports, start_in_group, stop_group

from ...accounts import closed_folders, passage
from ...conftest import IN_CI, ROOT
from ...distribute.stand_in import WORKER, WORKER_MARKER
from ...process_checks import still_running
from .kernel import RemoteKernel

CONFIG = ROOT / "hub" / "jupyterhub_config.py"
NOTEBOOK = "tf-gpu-course/notebooks/02_verify_gpu.ipynb"  # the student's own copy, in their home
LOG = ROOT / "build" / "hub-test" / "jupyterhub.log"
GPU_MEMORY = "2048"  # the instructor's switch for the class, in MiB
GPUS = "0"  # the first GPU, where there is one (which GPU each student gets: test_settings.py)
START_TIMEOUT_S = 120.0
NOTEBOOK_TIMEOUT_S = float(os.environ.get("COURSE_HUB_TIMEOUT", "480"))

pytestmark = [pytest.mark.hub, pytest.mark.timeout(NOTEBOOK_TIMEOUT_S + 420)]


def _skip_or_fail(message: str) -> None:
    if IN_CI:
        pytest.fail(message)
    pytest.skip(message)


def require_hub() -> None:
    """Root, the OS tools, the proxy, and a course environment the students' accounts can run."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        _skip_or_fail("the hub test needs root: it creates OS accounts and starts JupyterHub as a server does")
    missing = [tool for tool in ("useradd", "userdel", "chpasswd") if shutil.which(tool) is None]
    if missing:
        _skip_or_fail(f"the hub test needs {', '.join(missing)} (Debian package passwd)")
    try:
        hub.proxy_command()
    except CourseError as err:
        _skip_or_fail(str(err))
    if closed_folders() and shutil.which("setfacl") is None:
        _skip_or_fail("the course lies under a folder closed to other accounts, and setfacl is missing to let the "
                      "test's accounts through (Debian package acl; .ci/run installs it)")


@dataclass
class Student:
    name: str
    password: str
    uid: int = -1
    home: Path = Path()
    token: str = ""
    kernel: RemoteKernel | None = None


def add_account(name: str, password: str) -> Student:
    subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", "--user-group", name],
                   check=True, capture_output=True, text=True)
    subprocess.run(["chpasswd"], input=f"{name}:{password}\n", check=True, capture_output=True, text=True)
    entry = pwd.getpwnam(name)
    return Student(name, password, entry.pw_uid, Path(entry.pw_dir))


def processes_of(uids: set[int]) -> list[psutil.Process]:
    """The processes of these accounts that still run; ``proc.info`` has their command line (psutil's process_iter
    skips a process that ends meanwhile)."""
    return [proc for proc in psutil.process_iter(["uids", "status", "cmdline"])
            if proc.info["status"] != psutil.STATUS_ZOMBIE and proc.info["uids"].real in uids]


def remove_account(student: Student) -> str | None:
    """Delete the account and its home (after ending whatever still runs as it); what went wrong, or None."""
    for proc in processes_of({student.uid}):
        with contextlib.suppress(psutil.Error):  # ended meanwhile
            proc.kill()
    psutil.wait_procs(processes_of({student.uid}), timeout=10)
    done = subprocess.run(["userdel", "--remove", student.name], capture_output=True, text=True)
    if student.name in {entry.pw_name for entry in pwd.getpwall()}:
        return f"userdel {student.name} failed: {done.stderr.strip()}"
    if student.home.exists():
        shutil.rmtree(student.home, ignore_errors=True)
        return f"userdel left {student.home} behind: {done.stderr.strip()}"
    return None


@dataclass
class Hub:
    url: str
    process: subprocess.Popen
    seen: set[int] = field(default_factory=set)

    def remember_children(self) -> None:
        self.seen |= descendants(self.process.pid)

    def log_tail(self, lines: int = 40) -> str:
        text = LOG.read_text(errors="replace") if LOG.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def api(self, method: str, path: str, token: str, **kwargs) -> requests.Response:
        return requests.request(method, f"{self.url}/hub/api{path}", headers={"Authorization": f"token {token}"},
                                timeout=30, **kwargs)


def hub_environment(folder: Path, names: list[str], admins: list[str]) -> dict[str, str]:
    """The environment an instructor starts the hub with: the course's settings, nothing of this test run's; the
    hub's state, the hand-in folder (the hub makes it) and the course's repository in the test's ``folder``."""
    env = {key: os.environ[key] for key in ("PATH", "LANG", "LC_ALL") if key in os.environ}
    env.update({
        "HOME": str(folder / "state"),
        variables.HUB_USERS: ",".join(names),
        variables.HUB_ADMINS: ",".join(admins),
        variables.HUB_STATE: str(folder / "state"),
        variables.HANDIN_DIR: str(folder / "hand-in"),
        variables.HUB_REPO: str(folder / "course"),
        variables.HUB_GPUS: GPUS,
        variables.GPU_MEMORY: GPU_MEMORY,
        "COURSE_SMOKE": "1",
        "COURSE_OFFLINE": "1",
        "PYTHONUNBUFFERED": "1",
    })
    return env


def make_course_repository(repo: Path) -> None:
    """The instructor's repository (COURSE_HUB_REPO: a local path, no network), owned by root as a server's
    checkout is: this checkout's notebooks, committed. Every account reads it (mode 0755), none writes it."""
    (repo / "notebooks").mkdir(parents=True)
    repo.chmod(0o755)
    for notebook in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        shutil.copy(notebook, repo / "notebooks" / notebook.name)
    for args in (["init", "-q", "-b", "main"], ["add", "--all"], ["commit", "-q", "-m", "the course"]):
        subprocess.run(["git", "-c", "user.name=Instructor", "-c", "user.email=instructor@example.org", *args],
                       cwd=repo, check=True, capture_output=True)


def start_hub(folder: Path, names: list[str], admins: list[str]) -> Hub:
    public, internal, proxy_api = free_ports(3)
    command = [
        sys.executable, "-m", "jupyterhub", "-f", str(CONFIG),
        f"--JupyterHub.bind_url=http://127.0.0.1:{public}",
        f"--JupyterHub.hub_bind_url=http://127.0.0.1:{internal}",
        f"--ConfigurableHTTPProxy.api_url=http://127.0.0.1:{proxy_api}",
        "--JupyterHub.spawner_class=localprocess",  # no systemd in a container
    ]
    LOG.parent.mkdir(parents=True, exist_ok=True)
    if LOG.exists():  # a restart: keep the first hub's log beside the new one
        LOG.rename(LOG.with_suffix(".before-restart.log"))
    process = start_in_group(command, cwd=folder, env=hub_environment(folder, names, admins), log_path=LOG)
    server = Hub(f"http://127.0.0.1:{public}", process)
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if process.poll() is not None:
            pytest.fail(f"JupyterHub exited with status {process.returncode} at start-up:\n{server.log_tail()}")
        try:
            if requests.get(f"{server.url}/hub/api", timeout=2).status_code == 200:
                return server
        except requests.RequestException:
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"JupyterHub did not answer within {START_TIMEOUT_S:.0f} s:\n{server.log_tail()}")
        time.sleep(0.5)


def log_in(server: Hub, student: Student) -> requests.Session | None:
    """The login form, as a browser fills it in: the _xsrf cookie and field, the name and the password; the session,
    or None when the hub refused (403, no login cookie)."""
    session = requests.Session()
    session.get(f"{server.url}/hub/login", timeout=30).raise_for_status()
    response = session.post(
        f"{server.url}/hub/login",
        data={"username": student.name, "password": student.password, "_xsrf": session.cookies["_xsrf"]},
        allow_redirects=False,
        timeout=60,
    )
    if response.status_code == 403 and "jupyterhub-hub-login" not in session.cookies:
        return None
    assert response.status_code == 302, f"{student.name}'s login failed ({response.status_code}):\n{server.log_tail()}"
    assert "jupyterhub-hub-login" in session.cookies
    return session


def take_token(server: Hub, student: Student, session: requests.Session) -> str:
    """An API token, asked for with the login cookie as the hub's token page does (XSRF header included)."""
    response = session.post(
        f"{server.url}/hub/api/users/{student.name}/tokens",
        json={"note": "hub test", "expires_in": 3600},
        headers={"X-XSRFToken": session.cookies.get("_xsrf", path="/hub/")},
        timeout=30,
    )
    assert response.status_code == 201, response.text
    return response.json()["token"]


def wait_ready(server: Hub, student: Student) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        spawned = server.api("GET", f"/users/{student.name}", student.token).json()["servers"].get("")
        if spawned is None:  # the start failed: the hub forgot the server
            pytest.fail(f"{student.name}'s server stopped while starting:\n{server.log_tail()}")
        if spawned["ready"]:
            return
        time.sleep(0.5)
    pytest.fail(f"{student.name}'s server was not ready within {START_TIMEOUT_S:.0f} s:\n{server.log_tail()}")


def run_notebook(student: Student) -> None:
    assert student.kernel is not None
    cells = nbformat.read(student.home / NOTEBOOK, as_version=4).cells
    for number, code in enumerate((cell.source for cell in cells if cell.cell_type == "code"), 1):
        done = student.kernel.run(code, timeout=NOTEBOOK_TIMEOUT_S)
        if done.error is not None or done.status != "ok":
            raise AssertionError(f"{student.name}: code cell {number} of {NOTEBOOK} failed: {done.describe()}")


@dataclass
class Class:
    hub: Hub
    students: list[Student]
    folder: Path  # the hub's state, the hand-in folder, the course's repository, nbgrader's exchange

    def restart(self, names: list[str], admins: list[str]) -> None:
        """Stop the hub (it stops every server) and start it again on the same state with other settings."""
        for student in self.students:
            if student.kernel is not None:
                student.kernel.close()
                student.kernel = None
        self.hub.remember_children()
        stop_hub(self.hub)
        seen = self.hub.seen | {self.hub.process.pid}
        self.hub = start_hub(self.folder, names, admins)
        self.hub.seen |= seen


def stop_hub(server: Hub) -> list[str]:
    """SIGTERM, as an instructor's Ctrl+C: the hub stops every server and the proxy; what went wrong."""
    problems = []
    server.remember_children()
    if server.process.poll() is None:
        server.process.send_signal(signal.SIGTERM)
        try:
            server.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            problems.append("JupyterHub did not stop within 60 s of SIGTERM")
    stop_group(server.process, grace_s=10.0, also=server.seen)
    return problems


@pytest.fixture(scope="module")
def klass() -> Iterator[Class]:
    require_hub()
    suffix = secrets.token_hex(3)
    folder = Path(tempfile.mkdtemp(prefix="course-hub-"))
    folder.chmod(0o711)  # every account passes through, none lists it
    (folder / "state").mkdir(mode=0o700)
    students: list[Student] = []
    server: Hub | None = None
    klass: Class | None = None
    problems: list[str] = []
    with contextlib.ExitStack() as cleanup:  # its callbacks run last first, also when a step fails
        cleanup.callback(no_problems, problems)
        cleanup.callback(remove_accounts, students, folder, problems)
        for first in ("alice", "bob"):
            students.append(add_account(f"{first}{suffix}", secrets.token_urlsafe(18)))
        cleanup.enter_context(passage([s.name for s in students]))
        cleanup.callback(lambda: problems.extend(stop_all(klass.hub if klass else server, students)))
        make_course_repository(folder / "course")
        server = start_hub(folder, [s.name for s in students], admins=[students[0].name])
        for student in students:
            session = log_in(server, student)
            student.token = take_token(server, student, session)
            started = server.api("POST", f"/users/{student.name}/server", student.token)
            assert started.status_code in (201, 202), f"{started.status_code} {started.text}\n{server.log_tail()}"
        for student in students:
            wait_ready(server, student)
            student.kernel = RemoteKernel(f"{server.url}/user/{student.name}/", student.token, NOTEBOOK)
        server.remember_children()
        with ThreadPoolExecutor(len(students)) as pool:  # both notebooks at once, as in a class
            for future in [pool.submit(run_notebook, s) for s in students]:
                future.result()
        server.remember_children()
        klass = Class(server, students, folder)
        yield klass


def no_problems(problems: list[str]) -> None:
    """Last: what the clean-up could not do fails the tests (after a failed start too)."""
    assert not problems, "; ".join(problems)


def stop_all(server: Hub | None, students: list[Student]) -> list[str]:
    """The kernels closed, the hub now running (after a restart too) stopped; what was left running, ended."""
    for student in students:
        if student.kernel is not None:
            student.kernel.close()
    if server is None:
        return []
    problems = stop_hub(server)
    left = still_running(server.seen | {server.process.pid})
    left += [p.pid for p in processes_of({s.uid for s in students}) if p.pid not in left]
    if left:
        problems.append(f"still running after the hub stopped: {report_and_end(left)}")
    return problems


def remove_accounts(students: list[Student], folder: Path, problems: list[str]) -> None:
    """The accounts and their homes removed, and the test's folder."""
    problems += [trouble for trouble in map(remove_account, students) if trouble]
    shutil.rmtree(folder, ignore_errors=True)


def report_and_end(pids: list[int]) -> list[str]:
    """Who each leftover is (for the message), ending it so that the accounts can be removed."""
    found = []
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            found.append(f"{pid} {proc.username()}: {' '.join(proc.cmdline())[:120]}")
            proc.kill()
        except psutil.Error:
            pass
    return found


def test_each_server_and_kernel_runs_as_its_students_account(klass):
    for student in klass.students:
        servers = [proc for proc in processes_of({student.uid})
                   if "jupyterhub-singleuser" in " ".join(proc.info["cmdline"] or [])]
        assert len(servers) == 1, f"{student.name}: {len(servers)} servers of their own account"
        assert servers[0].uids().effective == student.uid
        assert student.kernel.value("[__import__('os').getuid(), str(__import__('pathlib').Path.home())]") == [
            student.uid, str(student.home)]


def test_each_student_works_on_their_own_copy_of_the_notebooks(klass):
    for student in klass.students:
        folder = student.home / "tf-gpu-course"
        assert (folder / ".git").is_dir(), "nbgitpuller cloned the course's repository (COURSE_HUB_REPO)"
        assert (folder / "notebooks" / "02_verify_gpu.ipynb").stat().st_uid == student.uid
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, "other students must not copy their answers"
        assert student.kernel.value("__import__('os').getcwd()") == str(folder / "notebooks")


def test_the_notebook_ran_and_recorded_in_the_students_own_folder(klass):
    for student in klass.students:
        record_path = Path(student.kernel.value("str(course.recorder.path)"))
        course_home = student.home / ".local" / "share" / "tf-gpu-course"
        assert record_path == course_home / "results" / "02_verify_gpu.json"
        info, folder = record_path.stat(), course_home.stat()
        assert info.st_uid == student.uid and folder.st_uid == student.uid
        assert stat.S_IMODE(folder.st_mode) == 0o700, "other students must not read it"
        assert json.loads(record_path.read_text())["smoke"] is True, "COURSE_SMOKE reaches the student's kernel"


def test_a_student_cannot_read_another_students_record_or_notebook(klass):
    for student in klass.students:
        other = next(s for s in klass.students if s is not student)
        for theirs in (other.home / ".local" / "share" / "tf-gpu-course" / "results" / "02_verify_gpu.json",
                       other.home / NOTEBOOK):
            attempt = student.kernel.run(f"open({str(theirs)!r}).read()")
            assert attempt.error is not None and attempt.error["ename"] == "PermissionError", attempt.describe()


def test_the_instructors_gpu_memory_switch_and_device_reach_every_kernel(klass):
    policy = "__import__('course_utils.core.gpu_config').core.gpu_config.memory_policy()"
    for student in klass.students:
        assert student.kernel.value(policy) == int(GPU_MEMORY)
        device = student.kernel.value("__import__('os').environ.get('CUDA_VISIBLE_DEVICES')")
        assert device == hub.gpu_for_user(student.name, [GPUS])


def tensorboard_socket(student: Student) -> tuple[psutil.Process, str]:
    """The student's private TensorBoard process (started by their server's proxy) and its Unix socket."""
    for proc in processes_of({student.uid}):
        cmdline = proc.info["cmdline"] or []
        if "course_tools.classroom.tb_server" in cmdline and "--socket" in cmdline:
            return proc, cmdline[cmdline.index("--socket") + 1]
    raise AssertionError(f"no TensorBoard process of {student.name}")


def test_a_students_tensorboard_is_reached_by_its_owner_only(klass):
    alice, bob = klass.students
    url = f"{klass.hub.url}/user/{alice.name}/tensorboard/"
    own = requests.get(url, headers={"Authorization": f"token {alice.token}"}, timeout=120)  # starts it
    assert own.status_code == 200 and "tensorboard" in own.text.lower(), f"{own.status_code}: {own.text[:300]}"
    board, path = tensorboard_socket(alice)
    assert "--logdir" not in board.cmdline(), "the student's log folder comes from COURSE_LOG_DIR"
    listening = [c for c in board.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN]
    assert not listening, f"TensorBoard must not listen on a TCP port a classmate reaches: {listening}"
    # through the hub: alice's address refuses her classmate
    other = requests.get(url, headers={"Authorization": f"token {bob.token}"}, allow_redirects=False, timeout=30)
    assert other.status_code in (302, 403) and "tensorboard" not in other.text.lower()
    # on the machine: bob's own process cannot open the socket (a folder only alice may enter)
    tried = bob.kernel.run(f"import socket\nsocket.socket(socket.AF_UNIX).connect({path!r})")
    assert tried.error is not None and tried.error["ename"] == "PermissionError", tried.describe()
    assert stat.S_IMODE(Path(path).parent.stat().st_mode) == 0o700


START_WORKERS = """
import pathlib, threading
from course_utils.lessons.nb07.distribute import run_local_workers
_folder = pathlib.Path.home() / "hub-test-workers"
_folder.mkdir(exist_ok=True)
(_folder / "worker.py").write_text({program!r})
_runs = {{}}


def _run():
    try:
        _runs["run"] = run_local_workers(_folder / "worker.py", 2, folder=_folder / "run", timeout_s=120)
    except BaseException as error:  # shown by the test
        _runs["error"] = str(error)


_thread = threading.Thread(target=_run)
_thread.start()
"""
WORKER_PORTS = "(sorted(int(p.read_text()) for p in (_folder / 'run').glob('listening-*')), _runs.get('error'))"


SERVE = """
import http.server, threading
class _Marker(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"{marker}"
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
_server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Marker)
threading.Thread(target=_server.serve_forever, daemon=True).start()
print(_server.server_address[1])
"""


def test_a_students_workers_are_out_of_reach_of_another_students_processes(klass):
    alice, bob = klass.students
    # the control: a server bob starts on the machine's network is reached through his own proxy
    control = bob.kernel.run(SERVE.format(marker="bob-own"))
    assert control.error is None, control.describe()
    own = requests.get(f"{klass.hub.url}/user/{bob.name}/proxy/{int(control.stdout.split()[-1])}/", timeout=30,
                       headers={"Authorization": f"token {bob.token}"})
    assert own.status_code == 200 and own.text == "bob-own", own.status_code
    started = alice.kernel.run(START_WORKERS.format(program=WORKER))
    assert started.error is None, started.describe()
    deadline = time.monotonic() + 60
    while len((found := alice.kernel.value(WORKER_PORTS))[0]) < 2:
        assert found[1] is None, f"alice's workers failed: {found[1]}"
        assert time.monotonic() < deadline, "alice's workers did not start listening within 60 s"
        time.sleep(0.2)
    ports = found[0]
    try:
        for port in ports:  # bob's own process, on the same machine; then bob's proxy, on his server
            tried = bob.kernel.run(f"__import__('socket').create_connection(('127.0.0.1', {port}), timeout=10)")
            assert tried.error is not None and tried.error["ename"] == "ConnectionRefusedError", tried.describe()
            through = requests.get(f"{klass.hub.url}/user/{bob.name}/proxy/{port}/", timeout=30,
                                   headers={"Authorization": f"token {bob.token}"})
            assert through.status_code >= 500 and WORKER_MARKER not in through.text, through.status_code
    finally:
        alice.kernel.run("(_folder / 'run' / 'probed').write_text('')")
        finished = alice.kernel.run("_thread.join(); print(_runs['run'].network if 'run' in _runs else _runs)")
    assert finished.error is None and finished.stdout.strip() == "private", finished.describe()


HAND_IN = "(lambda d: [d.returncode, d.stdout + d.stderr])(__import__('subprocess').run([__import__('sys')" \
          ".executable, '-m', 'course_utils', 'hand-in'], capture_output=True, text=True))"


def test_a_hand_in_reaches_the_instructor_and_no_other_student(klass):
    alice, bob = klass.students  # alice is the admin: the instructor
    folder = klass.folder / "hand-in"
    for student in klass.students:
        returncode, printed = student.kernel.value(HAND_IN)
        assert returncode == 0, f"{student.name}'s hand-in: {printed}"
    files = {student.name: folder / f"{student.name}.json" for student in klass.students}
    for student in klass.students:
        info = files[student.name].stat()
        assert info.st_uid == student.uid and stat.S_IMODE(info.st_mode) & 0o007 == 0, oct(info.st_mode)
    # the instructor reads bob's hand-in from her own server; bob reads neither hers nor the folder's list
    assert alice.kernel.value(f"__import__('json').loads(open({str(files[bob.name])!r}).read())['user']") == bob.name
    for code in (f"open({str(files[alice.name])!r}).read()", f"__import__('os').listdir({str(folder)!r})"):
        attempt = bob.kernel.run(code)
        assert attempt.error is not None and attempt.error["ename"] == "PermissionError", attempt.describe()
    # nor can bob put a file of his in the place of hers (the folder is sticky)
    swap = (f"p = __import__('pathlib').Path({str(folder)!r}); (p / 'x.json').write_text('{{}}'); "
            f"__import__('os').replace(p / 'x.json', p / {alice.name + '.json'!r})")
    attempt = bob.kernel.run(swap)
    assert attempt.error is not None and attempt.error["ename"] == "PermissionError", attempt.describe()
    (folder / "x.json").unlink(missing_ok=True)


def nbgrader_in(student: Student, folder: Path, exchange: Path, *args: str) -> str:
    """Run nbgrader in ``student``'s kernel (their account), in ``folder``; what it printed. Fails on an error."""
    command = [*args, f"--Exchange.root={exchange}", "--CourseDirectory.course_id=tf-gpu-course"]
    code = (f"(lambda d: [d.returncode, d.stdout + d.stderr])(__import__('subprocess').run([__import__('sys')"
            f".executable, '-m', 'nbgrader', *{command!r}], cwd={str(folder)!r}, capture_output=True, text=True))")
    returncode, printed = student.kernel.value(code, timeout=300)
    assert returncode == 0 and "| ERROR]" not in printed, f"{student.name}: nbgrader {args}:\n{printed[-3000:]}"
    return printed


def test_nbgrader_releases_collects_grades_and_returns_feedback_between_two_accounts(klass):
    alice, bob = klass.students  # alice: the instructor
    exchange = klass.folder / "exchange"  # as /usr/local/share/nbgrader/exchange
    exchange.mkdir(mode=0o777)
    exchange.chmod(0o777)  # docs/class.md: made once by root, open to every account
    course = alice.home / "grades"
    made = alice.kernel.value(f"__import__('subprocess').run([__import__('sys').executable, '-m', 'course_utils', "
                              f"'grading', {str(course)!r}], capture_output=True, text=True).returncode")
    assert made == 0 and course.stat().st_uid == alice.uid
    for step in ("generate_assignment", "release_assignment"):
        nbgrader_in(alice, course, exchange, step, "nb03")
    # bob fetches and submits (the grades of right and wrong answers: tests/tools/classroom/test_grading.py)
    nbgrader_in(bob, bob.home, exchange, "fetch_assignment", "nb03")
    assert (bob.home / "nb03" / "03_memory.ipynb").stat().st_uid == bob.uid
    nbgrader_in(bob, bob.home, exchange, "submit", "nb03")
    # bob cannot see what others submitted, nor the instructor's solutions
    for code in (f"__import__('os').listdir({str(exchange / 'tf-gpu-course' / 'inbound')!r})",
                 f"open({str(course / 'source' / 'nb03' / '03_memory.ipynb')!r}).read()"):
        attempt = bob.kernel.run(code)
        assert attempt.error is not None and attempt.error["ename"] == "PermissionError", attempt.describe()
    for step in ("collect", "autograde", "generate_feedback", "release_feedback"):
        nbgrader_in(alice, course, exchange, step, "nb03")
    nbgrader_in(bob, bob.home, exchange, "fetch_feedback", "nb03")
    (feedback,) = (bob.home / "nb03" / "feedback").glob("*/03_memory.html")
    assert feedback.stat().st_uid == bob.uid


def test_a_name_taken_out_of_the_settings_loses_its_access_at_the_next_start(klass):
    alice, bob = klass.students
    assert klass.hub.api("GET", f"/users/{alice.name}", alice.token).json()["admin"] is True, "COURSE_HUB_ADMINS"
    klass.restart(names=[alice.name], admins=[])  # bob leaves the class; alice stays, as a student
    server = klass.hub
    assert server.api("GET", "/user", bob.token).status_code == 403, "bob's API token is gone with bob"
    assert log_in(server, bob) is None, "bob's login is refused"
    assert server.api("GET", f"/users/{alice.name}", alice.token).json()["admin"] is False, "no admin any more"
    assert log_in(server, alice), "the one still in the class logs in as before"
