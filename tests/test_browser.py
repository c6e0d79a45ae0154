"""The student's view: the notebooks in JupyterLab, in Debian's Chromium (headless, driven by Playwright).

How it runs (a JupyterLab server on 127.0.0.1 with ``COURSE_SMOKE=1 COURSE_OFFLINE=1``; 01 run live, the others
shown as the nbval tier left them) and what it checks: docs/maintainers.md, "The browser test". A Chinese notebook
is shown as the hosted tier left it (``$COURSE_CI_OUT-zh``; that it speaks Chinese is the hosted tier's check).
When a kept copy is missing or stale (its code differs from the notebook's), ``course run --smoke`` makes it first.
Screenshots (full page, also on failure): ``build/screenshots/<notebook>.png``; the server's log:
``jupyter-server.log`` there. The last check: no Jupyter server or kernel started here still runs. Without
``/usr/bin/chromium`` or Playwright it is skipped locally and fails in CI (``CI=true``).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests

from course_utils.core.processes import descendants, free_ports, leftover_processes, start_in_group, stop_group

from .conftest import IN_CI, NOTEBOOKS, ROOT, ZH_NOTEBOOKS
from .process_checks import still_running

CHROMIUM = Path(os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    # without these Chromium reaches for Google's servers, and a closed network refuses it
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = ROOT / "build" / "screenshots"
NOTEBOOK_TIMEOUT_S = float(os.environ.get("COURSE_BROWSER_TIMEOUT", "420"))  # one notebook, all cells, smoke mode
STARTUP_TIMEOUT_S = 120.0
VIEWPORT = {"width": 1440, "height": 900}

# What a notebook's key output is, read from its code: a plot when it draws one, a widget when it shows one.
PLOT_MARKERS = ("plt.show()", ".show_final(")
WIDGET_MARKERS = ("ipywidgets", "InstallPicker(")
CI_OUT = Path(os.environ.get("COURSE_CI_OUT") or ROOT / "build" / "ci" / "course")
RENDERED_COPIES = ROOT / "build" / "browser-test" / "executed"  # under the server's root

pytestmark = [pytest.mark.browser, pytest.mark.timeout(NOTEBOOK_TIMEOUT_S + 300)]


def _require_browser() -> None:
    missing = []
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append('Playwright for Python (pip install -e ".[dev]")')
    if not CHROMIUM.is_file():
        missing.append(f"{CHROMIUM} (apt-get install chromium)")
    if missing:
        message = "the browser test needs " + " and ".join(missing)
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)


# --------------------------------------------------------------------------- the server


@dataclass
class Server:
    url: str
    token: str
    process: subprocess.Popen
    log: Path
    seen: set[int] = field(default_factory=set)  # every process the server was seen to start

    def api(self, method: str, path: str, timeout: float = 10.0):
        """Jupyter's REST API (a failure is an OSError: requests' exceptions are)."""
        response = requests.request(method, f"{self.url}{path}", headers={"Authorization": f"token {self.token}"},
                                    timeout=timeout)
        response.raise_for_status()
        return response.json() if response.content else None

    def remember_children(self) -> None:
        self.seen |= descendants(self.process.pid)

    def shut_down_kernels(self) -> None:
        """End every session (and its kernel) so the next notebook starts with the memory free."""
        self.remember_children()
        for session in self.api("GET", "/api/sessions"):
            self.api("DELETE", f"/api/sessions/{session['id']}", timeout=30)

    def log_tail(self, lines: int = 30) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def write_lab_settings(settings: Path) -> None:
    """Settings for a quiet, deterministic JupyterLab: no news or update checks, every cell in the DOM, no autosave."""
    files = {
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
            "fetchNews": "false",
            "checkForUpdates": False,
        },
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
        # never write the executed notebook back: the course is stored without outputs
        "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    }
    for name, values in files.items():
        path = settings / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


def server_env(scratch: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("COURSE_DATA_DIR", "COURSE_TF_LOGS", "MPLBACKEND")}
    env.update(
        COURSE_SMOKE="1",
        COURSE_OFFLINE="1",
        COURSE_RESULTS_DIR=str(scratch / "results"),
        KERAS_HOME=str(scratch / "keras-home"),  # no cached MNIST: the notebooks use the bundled sample, as in CI
        COURSE_LOG_DIR=str(scratch / "tb-logs"),  # notebook 06's TensorBoard logs, not into notebooks/logs
        JUPYTER_CONFIG_DIR=str(scratch / "config"),
        JUPYTER_RUNTIME_DIR=str(scratch / "runtime"),
        JUPYTER_DATA_DIR=str(scratch / "data"),
        IPYTHONDIR=str(scratch / "ipython"),
        PYTHONUNBUFFERED="1",
    )
    return env


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    _require_browser()
    scratch = tmp_path_factory.mktemp("course-browser")  # config, runtime, settings: in each child's command
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    write_lab_settings(scratch / "settings")
    port, token = free_ports(1)[0], secrets.token_hex(16)
    log = SCREENSHOTS / "jupyter-server.log"
    command = [
        sys.executable, "-m", "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={ROOT}",
        f"--LabApp.user_settings_dir={scratch / 'settings'}",
        f"--LabApp.workspaces_dir={scratch / 'workspaces'}",
        "--LabApp.expose_app_in_browser=True",  # window.jupyterapp: the test reads the notebook's model
        "--LabApp.news_url=None",
        "--LabApp.extension_manager=readonly",  # no PyPI queries for the extension manager
    ]
    if os.geteuid() == 0:  # CI containers run as root
        command.append("--allow-root")
    process = start_in_group(command, cwd=ROOT, env=server_env(scratch), log_path=log)
    srv = Server(f"http://127.0.0.1:{port}", token, process, log)
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            if process.poll() is not None:
                pytest.fail(f"JupyterLab exited with status {process.returncode} at start-up:\n{srv.log_tail()}")
            try:
                srv.api("GET", "/api/status", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not answer within {STARTUP_TIMEOUT_S:.0f} s:\n{srv.log_tail()}")
                time.sleep(0.5)
        yield srv
    finally:
        srv.remember_children()
        if process.poll() is None:
            try:
                srv.api("POST", "/api/shutdown", timeout=10)  # shuts its kernels down too
                process.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                pass
        # kernels run in sessions of their own: each process seen, and each naming the scratch folder, is ended too
        stop_group(process, grace_s=15.0, also=srv.seen | set(leftover_processes(scratch)))
        survivors = still_running(srv.seen | {process.pid}) + leftover_processes(scratch)
        assert not survivors, f"still running after the server stopped: {survivors}"


@pytest.fixture(scope="module")
def lab(server: Server, chromium):
    """One browser context for the notebooks: JupyterLab's own files load once."""
    context = chromium.new_context(viewport=VIEWPORT)
    try:
        yield context
    finally:
        context.close()


# --------------------------------------------------------------------------- in the page

READY = """(path) => {
  const app = window.jupyterapp;
  if (!app) return false;
  const panel = Array.from(app.shell.widgets('main')).find(w => w.context && w.context.path === path);
  if (!panel || !panel.context.isReady) return false;
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  return !!kernel && kernel.status === 'idle' && kernel.connectionStatus === 'connected';
}"""

# The notebook's state as JupyterLab's own model has it: per code cell, count, state and error outputs.
STATE = """(path) => {
  const app = window.jupyterapp;
  const panel = Array.from(app.shell.widgets('main')).find(w => w.context && w.context.path === path);
  if (!panel) return null;
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  const cells = panel.content.widgets.filter(c => c.model.type === 'code').map((c, i) => {
    const outputs = [];
    for (let j = 0; j < c.model.outputs.length; j++) outputs.push(c.model.outputs.get(j).toJSON());
    return {
      index: i,
      source: c.model.sharedModel.getSource(),
      tags: c.model.getMetadata('tags') || [],
      count: c.model.executionCount,
      running: c.model.executionState === 'running',
      errors: outputs.filter(o => o.output_type === 'error')
                     .map(o => ({ename: o.ename, evalue: o.evalue, traceback: (o.traceback || []).join('\\n')})),
    };
  });
  return {kernel: kernel ? kernel.status : 'none', cells};
}"""

DONE = """(path) => {
  const state = (__STATE__)(path);
  if (!state) return false;
  if (['dead', 'autorestarting', 'restarting'].includes(state.kernel)) return state;
  const cells = state.cells.filter(c => c.source.trim() !== '');
  const running = cells.some(c => c.running);
  const failed = cells.some(c => c.errors.length > 0);
  const allRun = cells.every(c => c.count !== null);
  return state.kernel === 'idle' && !running && (allRun || failed) ? state : false;
}""".replace("__STATE__", STATE)

# What was rendered: plots, widgets, and any traceback shown (in a cell or inside a widget).
RENDERED = """() => {
  const outputs = Array.from(document.querySelectorAll('.jp-Notebook .jp-OutputArea-output'));
  const images = outputs.filter(o => !o.closest('.jupyter-widgets'))
                        .flatMap(o => Array.from(o.querySelectorAll('img')));
  const plots = images.filter(img => img.complete && img.naturalWidth > 0 && img.naturalHeight > 0).length;
  const widgets = Array.from(document.querySelectorAll('.jp-Notebook .jp-OutputArea-output .jupyter-widgets'));
  const controls = widgets.filter(w => w.querySelector('[class*="widget-"]')).length;
  const widgetErrors = widgets.map(w => w.textContent).filter(t => /Error displaying widget/.test(t));
  const tracebacks = outputs.map(o => o.textContent)
                            .filter(t => /Traceback \\(most recent call last\\)/.test(t)).map(t => t.slice(-1500));
  return {outputs: outputs.length, plots, broken: images.length - plots, widgets: widgets.length, controls,
          widgetErrors, tracebacks};
}"""

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def expected_outputs(path: Path) -> dict[str, bool]:
    code = "\n".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code")
    return {"plot": any(m in code for m in PLOT_MARKERS), "widget": any(m in code for m in WIDGET_MARKERS)}


def code_sources(path: Path) -> list[str]:
    """A notebook's code cells, without the cell papermill injects for its parameters."""
    cells = json.loads(path.read_text())["cells"]
    return ["".join(c["source"]) for c in cells
            if c["cell_type"] == "code" and "injected-parameters" not in c.get("metadata", {}).get("tags", [])]


LIVE = [p for p in NOTEBOOKS if expected_outputs(p)["widget"]]  # a widget needs a live kernel
SHOWN = [p for p in NOTEBOOKS if p not in LIVE]  # shown as the nbval tier executed them


ZH_SHOWN = ROOT / "notebooks" / "zh" / "04_dense_noise_vs_zeros.ipynb"  # two plots, with Chinese titles and legends
ZH_CI_OUT = Path(os.environ.get("COURSE_CI_ZH_OUT") or f"{CI_OUT}-zh")  # the hosted tier's (tiers/test_course_run.py)


def executed_folder(sources: list[Path], kept: Path, out: Path) -> Path:
    """A folder with current executed copies of ``sources``: ``kept`` (a tier's run), else a run made now in ``out``."""
    def fresh(folder: Path) -> bool:
        return all((folder / p.name).is_file() and code_sources(folder / p.name) == code_sources(p) for p in sources)

    folder = next((f for f in (kept, out / "executed") if fresh(f)), None)
    if folder is None:
        command = [str(Path(sys.executable).with_name("course")), "run", *map(str, sources), "--smoke",
                   "--out", str(out), "--timeout", "600"]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1800)
        # a failed run still leaves its executed notebook: the test below names the cell that failed
        folder = out / "executed"
        absent = [p.name for p in sources if not (folder / p.name).is_file()]
        assert not absent, f"course run made no executed copy of {absent}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    return folder


@pytest.fixture(scope="module")
def executed() -> dict[Path, Path]:
    """Executed copies of the SHOWN notebooks and of ZH_SHOWN, copied under the server's root."""
    assert ZH_SHOWN in ZH_NOTEBOOKS, f"no {ZH_SHOWN.relative_to(ROOT)}"
    shutil.rmtree(RENDERED_COPIES, ignore_errors=True)
    copies = {}
    for sources, kept, out in ((SHOWN, CI_OUT, "course"), ([ZH_SHOWN], ZH_CI_OUT, "course-zh")):
        folder = executed_folder(sources, kept / "executed", ROOT / "build" / "browser-test" / out)
        for p in sources:
            copies[p] = RENDERED_COPIES / p.relative_to(ROOT / "notebooks")
            copies[p].parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / p.name, copies[p])
    return copies


def first_line(cell: dict) -> str:
    return repr((cell["source"].strip().splitlines() or [""])[0][:80])


def describe_errors(name: str, state: dict) -> str:
    lines = []
    for cell in state["cells"]:
        for error in cell["errors"]:
            tail = "\n".join(ANSI.sub("", error["traceback"]).splitlines()[-12:])
            lines.append(f"{name}: code cell {cell['index']} ({first_line(cell)}) raised {error['ename']}: "
                         f"{error['evalue']}\n{tail}")
    return "\n\n".join(lines)


def where_it_stopped(state: dict | None) -> str:
    if not state:
        return "the notebook never opened"
    running = [c for c in state["cells"] if c["running"]]
    if running:
        return f"kernel {state['kernel']}, still running code cell {running[0]['index']} ({first_line(running[0])})"
    return f"kernel {state['kernel']}, {sum(c['count'] is not None for c in state['cells'])} of " \
           f"{len(state['cells'])} code cells run"


class NotebookPage:
    """One notebook open in its own JupyterLab workspace."""

    def __init__(self, lab, server: Server, path: Path, name: str | None = None) -> None:
        self.server, self.path = server, path
        self.rel = path.relative_to(ROOT).as_posix()
        self.name = name or path.stem  # also the screenshot's file name
        self.page = lab.new_page()
        self.page.set_default_timeout(60_000)
        self.page_errors: list[str] = []
        self.page.on("pageerror", lambda error: self.page_errors.append(str(error)))

    def open(self) -> None:
        workspace = re.sub(r"[^A-Za-z0-9]+", "-", self.name)  # a fresh workspace: nothing else restored
        self.page.goto(f"{self.server.url}/lab/workspaces/{workspace}/tree/{self.rel}?token={self.server.token}")
        try:
            self.page.wait_for_function(READY, arg=self.rel, timeout=STARTUP_TIMEOUT_S * 1000, polling=500)
        except Exception as error:
            raise AssertionError(f"{self.name}: the notebook or its kernel did not become ready in "
                                 f"{STARTUP_TIMEOUT_S:.0f} s ({error.__class__.__name__}); "
                                 f"page errors: {self.page_errors[-3:]}\n{self.server.log_tail()}") from None

    def run_all(self) -> dict:
        """Run > Run All Cells, as a student does; wait until the kernel is idle and every cell has run."""
        self.page.locator("#jp-MainMenu").get_by_role("menuitem", name="Run", exact=True).click()
        self.page.locator(".lm-Menu").get_by_text("Run All Cells", exact=True).click()
        started = time.monotonic()
        try:
            handle = self.page.wait_for_function(DONE, arg=self.rel, timeout=NOTEBOOK_TIMEOUT_S * 1000, polling=1000)
        except Exception as error:
            state = self.page.evaluate(STATE, self.rel)
            raise AssertionError(
                f"{self.name}: not finished after {time.monotonic() - started:.0f} s "
                f"({error.__class__.__name__}): {where_it_stopped(state)}\n"
                + describe_errors(self.name, state or {"cells": []})
            ) from None
        state = handle.json_value()
        if state["kernel"] != "idle":
            raise AssertionError(f"{self.name}: the kernel is {state['kernel']} ({where_it_stopped(state)})\n"
                                 f"{self.server.log_tail()}")
        return state

    def close(self) -> None:
        """A full-page screenshot (also, and especially, when the test failed), with the cell of the key output
        (a widget, else a plot) scrolled to the top; then the page and its kernel closed."""
        try:
            self.page.evaluate("""() => {
              const key = document.querySelector('.jp-OutputArea-output .jupyter-widgets')
                || document.querySelector('.jp-OutputArea-output img');
              if (key) key.closest('.jp-Cell').scrollIntoView({block: 'start'});
            }""")
            self.page.screenshot(path=str(SCREENSHOTS / f"{self.name}.png"), full_page=True, timeout=30_000)
        except Exception:  # noqa: BLE001 - the failure itself is what the report must show
            pass
        try:
            self.page.close()
        finally:
            self.server.shut_down_kernels()


# --------------------------------------------------------------------------- the tests


def assert_shown(notebook: NotebookPage, state: dict, source: Path) -> None:
    """No error output, no traceback on screen, every code cell run, and the notebook's plot or widget rendered."""
    errors = describe_errors(notebook.name, state)
    assert not errors, errors
    shown = notebook.page.evaluate(RENDERED)
    assert not shown["tracebacks"], f"{notebook.name}: a traceback is shown:\n" + "\n---\n".join(shown["tracebacks"])
    assert not shown["widgetErrors"], f"{notebook.name}: a widget failed to display: {shown['widgetErrors']}"
    assert shown["broken"] == 0, f"{notebook.name}: an image in an output is not decoded ({shown})"
    expected = expected_outputs(source)
    if expected["plot"]:
        assert shown["plots"] > 0, f"{notebook.name}: draws a plot, but no image rendered in an output area ({shown})"
    if expected["widget"]:
        assert shown["controls"] > 0, f"{notebook.name}: shows a widget, but none rendered ({shown})"
    if not any(expected.values()):
        assert shown["outputs"] > 0, f"{notebook.name}: nothing rendered at all"
    # a cell tagged skip-execution (a server a person starts) is never run unattended
    to_run = [c for c in state["cells"] if c["source"].strip() and "skip-execution" not in c["tags"]]
    assert all(c["count"] is not None for c in to_run), where_it_stopped(state)


@pytest.mark.parametrize("source", [*NOTEBOOKS, ZH_SHOWN], ids=lambda p: p.stem if p != ZH_SHOWN else f"zh_{p.stem}")
def test_a_notebook_shows_its_outputs_in_jupyterlab(source: Path, executed, lab, server):
    """LIVE notebooks run here from the Run menu; the others open as a tier executed them."""
    path = executed.get(source, source)
    stored = path.read_bytes()
    notebook = NotebookPage(lab, server, path, f"zh_{source.stem}" if source == ZH_SHOWN else None)
    try:
        notebook.open()
        state = notebook.run_all() if source in LIVE else notebook.page.evaluate(STATE, notebook.rel)
        assert_shown(notebook, state, source)
    finally:
        notebook.close()
    assert path.read_bytes() == stored, f"{notebook.name}: JupyterLab wrote the notebook (autosave?)"
