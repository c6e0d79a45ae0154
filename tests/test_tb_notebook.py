"""Notebook 06's TensorBoard cell: guarded from unattended runs, and on a hub it sets the proxy URL or links the class
server's TensorBoard.

That papermill leaves the tagged server cell unrun with ``LAUNCH_TENSORBOARD = True`` and no server behind is
checked by the hosted tier (tests/tiers/test_course_run.py: test_notebook_passed_under_papermill_and_speaks_chinese,
test_06_tensorboard_key_results and test_06_left_no_tensorboard_serving_its_logs).
"""

from __future__ import annotations

import ast
import json
import os

from .conftest import ROOT

NOTEBOOK = ROOT / "notebooks" / "06_tensorboard.ipynb"
PROXY_ENV = "TENSORBOARD_PROXY_URL"


def cells():
    return [c for c in json.loads(NOTEBOOK.read_text())["cells"] if c["cell_type"] == "code"]


def server_cell_code() -> str:
    """The server cell's own lines, its magics left out."""
    (cell,) = [c for c in cells() if "%tensorboard" in "".join(c["source"])]
    return "\n".join(line for line in "".join(cell["source"]).splitlines() if not line.strip().startswith("%"))


def test_the_tensorboard_cell_is_guarded_three_ways_and_its_logs_go_to_a_git_ignored_folder():
    starting = [c for c in cells() if any(s in "".join(c["source"]) for s in ("%tensorboard", "TensorBoardServer("))]
    assert len(starting) == 1, "one cell starts a server"
    cell = starting[0]
    assert {"nbval-skip", "skip-execution"} <= set(cell["metadata"]["tags"])
    source = "".join(cell["source"])
    assert source.lstrip().splitlines()[1].startswith("if LAUNCH_TENSORBOARD:"), "the code checks too"
    (parameters,) = [c for c in cells() if "parameters" in c["metadata"].get("tags", [])]
    values = {n.targets[0].id: ast.literal_eval(n.value) for n in ast.parse("".join(parameters["source"])).body}
    assert values["LOG_DIR"] == "logs"
    assert "notebooks/logs/" in (ROOT / ".gitignore").read_text().splitlines()


def test_on_a_hub_the_server_cell_sets_the_proxy_url_the_course_works_out(monkeypatch):
    """The cell sets binder/start's address; a value the hub set is kept."""
    code = server_cell_code()
    monkeypatch.setenv("JUPYTERHUB_SERVICE_PREFIX", "/user/ada/")
    monkeypatch.delenv(PROXY_ENV, raising=False)
    exec(code, {"LAUNCH_TENSORBOARD": True, "root": "logs"})  # noqa: S102 - the notebook's own cell
    assert os.environ[PROXY_ENV] == "/user/ada/proxy/%PORT%/"
    monkeypatch.setenv(PROXY_ENV, "/hub/set/this/%PORT%/")
    exec(code, {"LAUNCH_TENSORBOARD": True, "root": "logs"})  # noqa: S102
    assert os.environ[PROXY_ENV] == "/hub/set/this/%PORT%/"


def test_on_the_class_server_the_server_cell_links_to_the_private_tensorboard(monkeypatch):
    """COURSE_SHARED_SERVER=1 (the class hub): a link to <server>/tensorboard/, and no %tensorboard on a TCP port."""
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda *objects: shown.extend(objects))
    monkeypatch.setenv("COURSE_SHARED_SERVER", "1")
    monkeypatch.setenv("JUPYTERHUB_SERVICE_PREFIX", "/user/ada/")
    monkeypatch.setenv("COURSE_LOG_DIR", "/home/ada/tf-gpu-course/logs")
    monkeypatch.delenv(PROXY_ENV, raising=False)
    exec(server_cell_code(), {"LAUNCH_TENSORBOARD": True, "root": "logs"})  # noqa: S102 - the notebook's own cell
    (link,) = shown
    assert "](/user/ada/tensorboard/)" in link.data and "/home/ada/tf-gpu-course/logs" in link.data
    assert PROXY_ENV not in os.environ, "no proxy address for a TensorBoard on a TCP port"
