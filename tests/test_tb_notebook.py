"""Notebook 06: its TensorBoard cell never runs unattended, and on a hub it sets the proxy URL.

The static guards are checked here, and papermill's part is shown on a small notebook built
from notebook 06's own cells (its server cell copied with its tags), run with the switch on -
so the whole notebook never runs in the unit tests. What a whole smoke run of notebook 06
records (the runs, their profiles and input shares, the logs read back, no server left) is checked
once per CI run by the papermill tier, tests/tiers/test_course_run.py.
"""

from __future__ import annotations

import ast
import json

from course_tools.batch.notebook_run import run_notebook

from .conftest import ROOT

NOTEBOOK = ROOT / "notebooks" / "06_tensorboard.ipynb"
PROXY_ENV = "TENSORBOARD_PROXY_URL"


def cells():
    return [c for c in json.loads(NOTEBOOK.read_text())["cells"] if c["cell_type"] == "code"]


def parameters_cell() -> dict:
    (cell,) = [c for c in cells() if "parameters" in c["metadata"].get("tags", [])]
    return cell


def parameters() -> dict:
    source = "".join(parameters_cell()["source"])
    return {n.targets[0].id: ast.literal_eval(n.value) for n in ast.parse(source).body}


def test_the_tensorboard_cell_is_guarded_three_ways_and_its_logs_go_to_a_git_ignored_folder():
    assert parameters()["LAUNCH_TENSORBOARD"] is True, "on for a student; its tags keep unattended runs out"
    starting = [c for c in cells() if any(s in "".join(c["source"]) for s in ("%tensorboard", "TensorBoardServer("))]
    assert len(starting) == 1, "one cell starts a server"
    cell = starting[0]
    assert {"nbval-skip", "skip-execution"} <= set(cell["metadata"]["tags"])
    source = "".join(cell["source"])
    assert source.lstrip().splitlines()[1].startswith("if LAUNCH_TENSORBOARD:"), "the code checks too"
    # its logs go to a git-ignored folder by default
    assert parameters()["LOG_DIR"] == "logs"
    assert "notebooks/logs/" in (ROOT / ".gitignore").read_text().splitlines()


def test_papermill_skips_the_tagged_server_cell_even_with_the_switch_on(tmp_path):
    """Papermill (through nbclient) never executes a cell tagged skip-execution, whatever LAUNCH_TENSORBOARD says:
    the course runner runs the small notebook with ``LAUNCH_TENSORBOARD=True``, as ``-p`` could pass it."""
    import nbformat
    import psutil

    original = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in original.cells if c.cell_type == "code"]
    (server,) = [c for c in code if "%tensorboard" in c.source]
    logs = tmp_path / "tb-logs"
    nb = nbformat.v4.new_notebook(
        cells=[
            # the parameters cell, tagged "parameters": papermill injects LAUNCH_TENSORBOARD = True after it
            next(c for c in code if "parameters" in c.metadata.get("tags", [])),
            nbformat.v4.new_code_cell(f"root = {str(logs)!r}"),
            server,
            nbformat.v4.new_code_cell('print(f"after the server cell: LAUNCH_TENSORBOARD = {LAUNCH_TENSORBOARD}")'),
        ],
        metadata=original.metadata,
    )
    copy = tmp_path / "06_server_cell.ipynb"
    nbformat.write(nb, copy)

    def servers():
        found = []
        for process in psutil.process_iter(["cmdline"]):
            if any(str(logs) in arg for arg in (process.info["cmdline"] or [])):
                found.append(process)
        return found

    try:
        record = run_notebook(copy, tmp_path / "out", parameters={"LAUNCH_TENSORBOARD": True}, timeout=120)
        assert record.status == "ok", f"{record.error} (log: {record.log})"
        executed = nbformat.read(tmp_path / "out" / "executed" / copy.name, as_version=4)
        cells = [c for c in executed.cells if c.cell_type == "code"]
        (injected,) = [c for c in cells if "injected-parameters" in c.metadata.get("tags", [])]
        assert "LAUNCH_TENSORBOARD = True" in injected.source, "papermill passed the switch on"
        (ran,) = [c for c in cells if c.source == server.source]
        assert set(ran.metadata["tags"]) == set(server.metadata["tags"]) >= {"skip-execution"}
        assert ran.execution_count is None and ran.outputs == [], "the tagged server cell did not run"
        last = "".join(o.get("text", "") for o in cells[-1].outputs)
        assert "after the server cell: LAUNCH_TENSORBOARD = True" in last, "the switch was on and later cells ran"
        assert servers() == [], "no TensorBoard was started"
    finally:
        for process in servers():  # only if the tag stopped working: leave no server behind
            process.kill()


def test_on_a_hub_the_server_cell_sets_the_proxy_url_the_course_works_out(monkeypatch):
    """The cell's own line (its magics left out) sets binder/start's address; a value the hub set is kept."""
    import os

    (cell,) = [c for c in cells() if "%tensorboard" in "".join(c["source"])]
    code = "\n".join(line for line in "".join(cell["source"]).splitlines() if not line.strip().startswith("%"))
    monkeypatch.setenv("JUPYTERHUB_SERVICE_PREFIX", "/user/ada/")
    monkeypatch.delenv(PROXY_ENV, raising=False)
    exec(code, {"LAUNCH_TENSORBOARD": True, "root": "logs"})  # noqa: S102 - the notebook's own cell
    assert os.environ[PROXY_ENV] == "/user/ada/proxy/%PORT%/"
    monkeypatch.setenv(PROXY_ENV, "/hub/set/this/%PORT%/")
    exec(code, {"LAUNCH_TENSORBOARD": True, "root": "logs"})  # noqa: S102
    assert os.environ[PROXY_ENV] == "/hub/set/this/%PORT%/"


def test_on_the_class_server_the_server_cell_links_to_the_private_tensorboard(monkeypatch):
    """COURSE_SHARED_SERVER=1 (the class hub): a link to <server>/tensorboard/, and no %tensorboard on a TCP port."""
    import os

    import IPython.display

    (cell,) = [c for c in cells() if "%tensorboard" in "".join(c["source"])]
    code = "\n".join(line for line in "".join(cell["source"]).splitlines() if not line.strip().startswith("%"))
    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda *objects: shown.extend(objects))
    monkeypatch.setenv("COURSE_SHARED_SERVER", "1")
    monkeypatch.setenv("JUPYTERHUB_SERVICE_PREFIX", "/user/ada/")
    monkeypatch.setenv("COURSE_LOG_DIR", "/home/ada/tf-gpu-course/logs")
    monkeypatch.delenv(PROXY_ENV, raising=False)
    exec(code, {"LAUNCH_TENSORBOARD": True, "root": "logs"})  # noqa: S102 - the notebook's own cell
    (link,) = shown
    assert "](/user/ada/tensorboard/)" in link.data and "/home/ada/tf-gpu-course/logs" in link.data
    assert PROXY_ENV not in os.environ, "no proxy address for a TensorBoard on a TCP port"
