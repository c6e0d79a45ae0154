"""Shared fixtures: every test runs offline, with its own Keras cache and results folder."""

from __future__ import annotations

import contextlib
import http.server
import io
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
ZH_NOTEBOOKS = sorted((ROOT / "notebooks" / "zh").glob("[0-9][0-9]_*.ipynb"))  # the Chinese edition, same names
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def isolate(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """The environment every test runs in: offline, with its own Keras cache, results and logs under ``folder``."""
    monkeypatch.setenv("COURSE_OFFLINE", "1")
    monkeypatch.setenv("KERAS_HOME", str(folder / "keras-home"))
    monkeypatch.setenv("COURSE_RESULTS_DIR", str(folder / "results"))
    monkeypatch.setenv("COURSE_LOG_DIR", str(folder / "tb-logs"))  # a notebook's relative LOG_DIR lands here
    monkeypatch.delenv("COURSE_DATA_DIR", raising=False)
    monkeypatch.delenv("COURSE_SMOKE", raising=False)
    for variable in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):  # the course follows the locale: English here
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate(monkeypatch, tmp_path)


@contextlib.contextmanager
def isolated(folder: Path) -> Iterator[pytest.MonkeyPatch]:
    """``isolate`` for a module- or session-scoped fixture, which is set up before its first test's ``_isolated``.

    Such a fixture lets one child process (TensorFlow's import alone is 3-4 CPU seconds) check what several
    tests assert; ``monkeypatch`` changes made in the block are undone when it ends.
    """
    with pytest.MonkeyPatch.context() as monkeypatch:
        isolate(monkeypatch, folder)
        yield monkeypatch


def run_main(main: Callable[[list[str]], int], *args: str) -> subprocess.CompletedProcess:
    """A command's ``main(args)`` run in this process (a fresh Python costs a second): its status and output."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(args))
    return subprocess.CompletedProcess(list(args), status, out.getvalue(), err.getvalue())


class _Server(http.server.ThreadingHTTPServer):
    routes: dict[str, tuple[bytes, int | None]]


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        body, announced = self.server.routes.get(self.path, (None, None))
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(announced if announced is not None else len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def ctrl_c() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt, as in a terminal, also where pytest started with SIGINT ignored.

    A script's background job (``.ci/run &`` in a shell without job control) starts with SIGINT ignored,
    and then neither ``_thread.interrupt_main()`` nor a SIGINT reaches Python.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.fixture(scope="session")
def _http_serving() -> Iterator[_Server]:
    """One loopback HTTP server for the session: stopping one waits out its poll (0.5 s), so it stops once."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.routes = {}
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    server.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def http_server(_http_serving: _Server) -> Iterator[_Server]:
    """A loopback HTTP server with no routes; set ``server.routes[path] = (body, announced_length)``."""
    _http_serving.routes = {}
    try:
        yield _http_serving
    finally:
        _http_serving.routes = {}


@pytest.fixture(scope="session")
def stand_in_gpus(tmp_path_factory) -> dict:
    """One child with two stand-in GPUs for tests/test_gpu_config.py and tests/test_setup_gpu_policy.py (TensorFlow
    loads once): the policies it applied and every notebook's setup under each policy of the latter's CASES."""
    from .test_gpu_config import run_stand_in_child
    from .test_setup_gpu_policy import CASES, setup_cells

    folder = tmp_path_factory.mktemp("stand-in-gpus")
    request = {"policies": [case[0] for case in CASES], "notebooks": setup_cells(), "results": str(folder / "records")}
    with isolated(folder):
        return run_stand_in_child(request, NOTEBOOKS[0].parent)


# The course website for the browser tests, built once per session (tests/test_site.py, tests/test_doctor_page.py).
from .site_served import built_site, chromium, served  # noqa: E402, F401 - fixtures
