"""A TensorBoard server you can start, query and stop from code - and reaching one on a hub.

``%tensorboard`` (notebook 06) starts a server for a student and leaves it running: right
for a person, wrong for an unattended run. ``TensorBoardServer`` is the bounded version::

    with TensorBoardServer("notebooks/logs") as tb:     # 127.0.0.1, a free port
        tb.wait_ready(runs=["cnn/train"])               # polls /data/runs, at most `timeout` s
        tb.scalars("cnn/validation", "epoch_accuracy")  # [(wall_time, step, value), ...]

It runs ``python -m tensorboard.main --logdir ... --host ... --port ...`` with this
Python (so the same environment), in a process group of its own, and ``stop()`` ends the
whole group (TensorBoard's fast loader runs a second process, ``tensorboard-data-server``),
and any process of the server seen earlier that left it (``system.processes``).

A port that is not ours is never taken for ours: ``start()`` refuses a port something already
listens on (naming the log folder when what answers is another TensorBoard), and ``wait_ready``
accepts an answer only from a port the server's own processes listen on - another server that
took the port in between would otherwise pass its runs off as ours while ours fails to bind.

The HTTP routes used are TensorBoard 2.21's own (``tensorboard/plugins/core/core_plugin.py``
and ``tensorboard/plugins/scalar/scalars_plugin.py``): ``/data/runs``,
``/data/plugin/scalars/tags`` and ``/data/plugin/scalars/scalars?run=&tag=``; they serve the
TF2 tensor-summary scalars Keras writes; ``/data/environment`` says which log folder a server
serves (its ``data_location``). Responses may be gzip-encoded.

On JupyterHub or Binder the browser cannot reach the kernel's localhost; the server is
reached through ``jupyter-server-proxy`` at ``<hub prefix>proxy/<port>/``, and ``%tensorboard``
shows it there when ``TENSORBOARD_PROXY_URL`` is set (docs/references.md#tensorboard-proxy):
``proxy_url_hint`` works out that value for the current session.
"""

from __future__ import annotations

import gzip
import http.client
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from course_utils.errors import CourseError
from course_utils.i18n import translator
from course_utils.system.processes import (
    descendants,
    free_port,
    port_in_use,
    start_in_group,
    still_running,
    stop_group,
)

PROXY_ENV = "TENSORBOARD_PROXY_URL"
HUB_PREFIX_ENV = "JUPYTERHUB_SERVICE_PREFIX"
_ = translator("course")


class TensorBoardServer:
    """One TensorBoard process on ``host:port`` serving ``logdir``; a context manager that always stops it."""

    def __init__(
        self,
        logdir: str | os.PathLike[str],
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        python: str = sys.executable,
        extra_args: Iterable[str] = (),
    ) -> None:
        self.logdir = Path(logdir)
        self.host = host
        self.port = port or free_port(host)
        self.python = python
        self.extra_args = list(extra_args)
        self.process: subprocess.Popen | None = None
        self.pids: set[int] = set()  # every process of the server seen so far (for the leftovers check)
        self._log = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def command(self) -> list[str]:
        return [self.python, "-m", "tensorboard.main", "--logdir", str(self.logdir),
                "--host", self.host, "--port", str(self.port), *self.extra_args]

    def start(self) -> TensorBoardServer:
        """Start the process (it answers only seconds later: see ``wait_ready``); refuse a port already in use."""
        if self.process is not None:
            raise RuntimeError("this server was already started")
        if importlib.util.find_spec("tensorboard") is None:
            raise CourseError(_("The tensorboard package is not installed."), 'pip install "tensorboard>=2.21,<2.22"')
        if port_in_use(self.port, self.host):
            raise CourseError(
                _("Cannot start TensorBoard on port {port}: something already listens at {url} ({who}). Started "
                  "anyway, it would fail to bind, and that server's pages would show in its place.").format(
                    port=self.port, url=self.url, who=self._who_answers(self._served_folder())),
                self._port_fix(),
            )
        self._log = tempfile.TemporaryFile()
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2")}
        # its own process group: stop() ends TensorBoard and its helpers
        self.process = start_in_group(self.command, env=env, stdout=self._log)
        self.pids.add(self.process.pid)
        return self

    def log_text(self, last: int = 2000) -> str:
        """The last ``last`` characters the server printed."""
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read().decode("utf-8", errors="replace")[-last:]

    def _remember_children(self) -> None:
        self.pids.update(descendants(self.process.pid))

    def _port_fix(self) -> str:
        return _(
            "Leave the port out (port=None picks a free one), or stop the server that holds port "
            "{port} (`from tensorboard import notebook; notebook.list()` lists the ones TensorBoard started)."
        ).format(port=self.port)

    def _served_folder(self) -> str | None:
        """The log folder the server at ``url`` says it serves (``/data/environment``); None if it says none."""
        try:
            return str(self.get("/data/environment", timeout=3)["data_location"])
        except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError, KeyError, TypeError):
            return None

    def _who_answers(self, folder: str | None) -> str:
        if folder is None:
            return _("not a TensorBoard that says which folder it serves")
        return _("a TensorBoard serving {folder}, not {logdir}").format(folder=folder, logdir=self.logdir)

    def _listens_here(self) -> bool | None:
        """Whether one of this server's processes listens on its port; None when the system does not say."""
        try:
            import psutil
        except ImportError:
            return None
        unknown = False
        for pid in self.pids | {self.process.pid}:
            try:
                connections = psutil.Process(pid).net_connections(kind="tcp")
            except psutil.NoSuchProcess:
                continue
            except psutil.Error:  # not allowed to look (some systems)
                unknown = True
                continue
            if any(c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == self.port for c in connections):
                return True
        return None if unknown else False

    def _not_ours(self) -> str | None:
        """Why the server answering at ``url`` is not the one started here; None when it is (or cannot be told)."""
        ours = self._listens_here()
        if ours:
            return None
        folder = self._served_folder()
        if ours is None and folder is not None and _same_folder(folder, self.logdir):
            return None  # its sockets cannot be seen here, but it serves our folder
        said = (_("Another server answers on port {port} ({who}): not the TensorBoard started here (pid {pid}), "
                  "which does not listen there. Ours will fail to bind, or is still starting.") if ours is False
                else _("Another server answers on port {port} ({who}): not the TensorBoard started here (pid {pid}), "
                       "which cannot be seen to. Ours will fail to bind, or is still starting."))
        return said.format(port=self.port, who=self._who_answers(folder), pid=self.process.pid)

    def get(self, path: str, params: Mapping[str, Any] | None = None, *, timeout: float = 30) -> Any:
        """GET ``path`` (with query ``params``) and decode the JSON answer."""
        url = self.url + path + ("?" + urllib.parse.urlencode(params) if params else "")
        with urllib.request.urlopen(url, timeout=timeout) as response:
            body = response.read()
            if response.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
        return json.loads(body)

    def wait_ready(self, *, timeout: float = 90, runs: Iterable[str] = ()) -> list[str]:
        """Poll ``/data/runs`` until the server answers and lists ``runs``; return the runs it lists.

        Raises ``CourseError`` (with the server's output) if the process ends or ``timeout``
        seconds pass first. TensorBoard imports TensorFlow and then scans the log folder,
        so it takes seconds (about 15-20 s on a busy 2-core machine).
        """
        if self.process is None:
            self.start()
        expected = set(runs)
        deadline = time.monotonic() + timeout
        listed: list[str] = []
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                output = self.log_text()
                if "could not bind" in output.lower():
                    raise CourseError(
                        _("TensorBoard could not start: port {port} is already in use (another server took "
                          "it after this one was set up). Its output:\n{output}").format(port=self.port, output=output),
                        self._port_fix(),
                    )
                raise CourseError(
                    _("TensorBoard exited with code {code} before it answered:\n{output}").format(
                        code=self.process.returncode, output=output),
                    _("Check that the log folder exists and the port is free; run the command above by hand to see "
                      "more."),
                )
            self._remember_children()
            try:
                answer = self.get("/data/runs", timeout=5)
            except (urllib.error.URLError, http.client.HTTPException, OSError, json.JSONDecodeError):
                answer = None
            if answer is not None:
                problem = self._not_ours()  # an answer, but from whom?
                if problem:
                    raise CourseError(problem, self._port_fix())
                listed = answer
                if expected <= set(listed):
                    return listed
            time.sleep(0.25)
        raise CourseError(
            _("TensorBoard at {url} did not list the runs {missing} within {seconds:.0f} s (it lists {listed}). Its "
              "output:\n{output}").format(url=self.url, missing=sorted(expected - set(listed)), seconds=timeout,
                                          listed=listed, output=self.log_text()),
            _("Check the log folder holds those runs; on a slow machine give it more time."),
        )

    def runs(self) -> list[str]:
        """The runs TensorBoard found: ``run/split`` folders that hold event files."""
        return self.get("/data/runs")

    def scalar_tags(self) -> dict[str, list[str]]:
        """``{run: [scalar tags]}`` as the scalars dashboard lists them."""
        return {run: sorted(tags) for run, tags in self.get("/data/plugin/scalars/tags").items()}

    def scalars(self, run: str, tag: str) -> list[tuple[float, int, float]]:
        """One scalar series as TensorBoard serves it: ``[(wall_time, step, value), ...]``."""
        return [tuple(point) for point in self.get("/data/plugin/scalars/scalars", {"run": run, "tag": tag})]

    def stop(self, timeout: float = 10) -> int | None:
        """End the server's process group and every process of it seen so far (SIGTERM, then SIGKILL after
        ``timeout`` s); return its exit code."""
        if self.process is None:
            return None
        code = stop_group(self.process, grace_s=timeout, also=self.pids)
        if self._log is not None:
            self._log.close()
            self._log = None
        return code

    def leftovers(self) -> list[int]:
        """Processes of this server still running (zombies count as ended)."""
        return still_running(self.pids)

    def __enter__(self) -> TensorBoardServer:
        if self.process is None:
            self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _same_folder(served: str, logdir: Path) -> bool:
    try:
        return Path(served).resolve() == logdir.resolve()
    except (OSError, ValueError):
        return served == str(logdir)


def proxy_url_hint(environ: Mapping[str, str] | None = None) -> str | None:
    """The ``TENSORBOARD_PROXY_URL`` a JupyterHub/Binder session needs, or ``None`` off a hub.

    ``${JUPYTERHUB_SERVICE_PREFIX:-/}proxy/%PORT%/`` (docs/references.md#tensorboard-proxy): ``%tensorboard``
    puts its port in place of ``%PORT%``. Needs ``jupyter-server-proxy`` in the hub's environment.
    """
    env = os.environ if environ is None else environ
    prefix = env.get(HUB_PREFIX_ENV)
    if prefix is None:
        return None
    prefix = prefix or "/"
    return prefix + ("" if prefix.endswith("/") else "/") + "proxy/%PORT%/"


def configure_proxy(environ: dict[str, str] | None = None) -> str:
    """On a hub, set ``TENSORBOARD_PROXY_URL`` for this kernel (unless set); return what was done, in words."""
    env = os.environ if environ is None else environ
    if env.get(PROXY_ENV):
        return _("{variable} is already set ({value}): %tensorboard will use it.").format(
            variable=PROXY_ENV, value=env[PROXY_ENV])
    hint = proxy_url_hint(env)
    if hint is None:
        return _("Not on a JupyterHub (no JUPYTERHUB_SERVICE_PREFIX): %tensorboard shows http://localhost:<port>/.")
    env[PROXY_ENV] = hint
    said = (_("On a JupyterHub: set {variable}={value} (jupyter-server-proxy is installed).")
            if importlib.util.find_spec("jupyter_server_proxy")
            else _("On a JupyterHub: set {variable}={value} (jupyter-server-proxy is NOT installed - ask for it)."))
    return said.format(variable=PROXY_ENV, value=hint)
