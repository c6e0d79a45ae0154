"""Shared fixtures: every test runs offline, with its own Keras cache and results folder."""

from __future__ import annotations

import contextlib
import http.server
import os
import signal
import threading
from collections.abc import Iterator
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


@pytest.fixture
def http_server() -> Iterator[_Server]:
    """A loopback HTTP server; set ``server.routes[path] = (body, announced_length)``."""
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


# The course website for the browser tests, built once per session (tests/test_site.py, tests/test_doctor_page.py).
from .site_served import built_site, chromium, served  # noqa: E402, F401 - fixtures
