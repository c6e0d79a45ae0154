"""A real TensorBoard server: started on 127.0.0.1 at a free port, queried, stopped, nothing left behind."""

from __future__ import annotations

import importlib.util
import socket
import sys

import numpy as np
import pytest

from course_utils.errors import CourseError
from course_utils.tb_server import PROXY_ENV, TensorBoardServer, configure_proxy, proxy_url_hint

from .conftest import IN_CI

READY_S = 120  # TensorBoard imports TensorFlow before it answers: 15-20 s on a busy 2-core machine
RUN = "dense"
EPOCHS = 3


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """The Q&A post's dense model trained for 3 epochs with the course's callback (and a profiled range)."""
    from course_utils.tf_setup import quiet_tensorflow

    quiet_tensorflow()
    import keras

    from course_utils.channels import compile_dense
    from course_utils.models import build_dense
    from course_utils.tb_logs import tensorboard_callback

    root = tmp_path_factory.mktemp("logs")
    rng = np.random.default_rng(0)
    x = rng.random((320, 1568), dtype=np.float32)
    y = rng.integers(0, 10, size=320)
    keras.utils.set_random_seed(0)
    model = build_dense()
    compile_dense(model)
    callback = tensorboard_callback(root, RUN, histogram_freq=1, profile_batch=(5, 7), total_batches=4 * EPOCHS)
    history = model.fit(x[:256], y[:256], validation_data=(x[256:], y[256:]), batch_size=64, epochs=EPOCHS,
                        verbose=0, callbacks=[callback])
    return root, history.history


def refused(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(2)
        return s.connect_ex(("127.0.0.1", port)) != 0


@pytest.mark.timeout(READY_S + 120)
def test_the_server_serves_what_training_recorded_and_leaves_nothing_behind(trained):
    psutil = pytest.importorskip("psutil")
    root, history = trained
    server = TensorBoardServer(root)
    assert server.host == "127.0.0.1" and refused(server.port), "a free port on the loopback interface"
    try:
        server.start()
        runs = server.wait_ready(timeout=READY_S, runs=[f"{RUN}/train", f"{RUN}/validation"])
        assert set(runs) == {f"{RUN}/train", f"{RUN}/validation"}, "the profile folder is not a run"
        tags = server.scalar_tags()
        assert {"epoch_loss", "epoch_accuracy", "epoch_learning_rate"} <= set(tags[f"{RUN}/train"])
        assert {"epoch_loss", "epoch_accuracy"} <= set(tags[f"{RUN}/validation"])
        for key, values in history.items():
            split, metric = ("validation", key[4:]) if key.startswith("val_") else ("train", key)
            points = server.scalars(f"{RUN}/{split}", f"epoch_{metric}")
            assert [step for _, step, _ in points] == list(range(EPOCHS))
            assert np.array_equal(np.float32([v for _, _, v in points]), np.float32(values)), key
        assert server.pids and all(psutil.pid_exists(pid) for pid in [server.process.pid])
    finally:
        code = server.stop()
    assert code is not None and server.process.poll() is not None
    assert server.leftovers() == [], "TensorBoard and its helper processes have ended"
    assert refused(server.port), "nothing listens on the port any more"


@pytest.mark.timeout(READY_S + 60)
def test_a_server_that_cannot_start_raises_with_its_output(tmp_path):
    with TensorBoardServer(tmp_path, extra_args=["--no_such_flag"]) as server:
        with pytest.raises(CourseError, match="exited with code") as caught:
            server.wait_ready(timeout=READY_S)
        assert "no_such_flag" in caught.value.what
    assert server.leftovers() == []


@pytest.mark.timeout(READY_S + 120)
def test_with_the_profile_extra_the_plugin_lists_the_trace(trained):
    if importlib.util.find_spec("xprof") is None:  # the dev extra brings it, so CI always runs this test
        message = 'the optional profile plugin (xprof) is absent: pip install -c constraints/course.txt -e ".[dev]"'
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    root, _ = trained
    with TensorBoardServer(root) as server:
        server.wait_ready(timeout=READY_S, runs=[f"{RUN}/train"])
        profile_runs = server.get("/data/plugin/profile/runs")
        assert len(profile_runs) == 1 and profile_runs[0].startswith(f"{RUN}/train/")
        tools = server.get("/data/plugin/profile/run_tools", {"run": profile_runs[0]})
        assert "trace_viewer@" in tools or "trace_viewer" in tools
    assert server.leftovers() == []


def test_proxy_url_on_a_hub_and_off_it():
    assert proxy_url_hint({}) is None
    assert proxy_url_hint({"JUPYTERHUB_SERVICE_PREFIX": "/user/ada/"}) == "/user/ada/proxy/%PORT%/"
    assert proxy_url_hint({"JUPYTERHUB_SERVICE_PREFIX": ""}) == "/proxy/%PORT%/", "${PREFIX:-/}"
    env = {"JUPYTERHUB_SERVICE_PREFIX": "/user/ada/"}
    assert "set TENSORBOARD_PROXY_URL=/user/ada/proxy/%PORT%/" in configure_proxy(env)
    assert env[PROXY_ENV] == "/user/ada/proxy/%PORT%/"
    assert "already set" in configure_proxy({**env, PROXY_ENV: "/custom/%PORT%/"})
    off_hub: dict[str, str] = {}
    assert "Not on a JupyterHub" in configure_proxy(off_hub) and PROXY_ENV not in off_hub


# --- a port that is not ours: refused before starting, or found out while waiting (no TensorBoard process) -----


@pytest.fixture
def other_server():
    """Another 'TensorBoard' on a loopback port: it lists its own runs and serves another log folder."""
    import http.server
    import json
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            answers = {"/data/runs": ["other/train"],
                       "/data/environment": {"version": "2.21.0", "data_location": self.server.data_location}}
            body = json.dumps(answers.get(self.path.split("?")[0], {})).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.data_location = "/somewhere/else/logs"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def not_started(*args, **kwargs):
    raise AssertionError("TensorBoard was started on a port something else holds")


def test_a_port_held_by_a_plain_listener_is_refused_before_tensorboard_starts(tmp_path, monkeypatch):
    monkeypatch.setattr("course_utils.tb_server.start_in_group", not_started)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        server = TensorBoardServer(tmp_path, port=port)
        with pytest.raises(CourseError) as caught:
            server.start()
    assert f"port {port}" in caught.value.what and "already" in caught.value.what
    assert "port=None" in caught.value.fix
    assert server.process is None


def test_a_port_held_by_another_tensorboard_is_refused_naming_what_it_serves(tmp_path, monkeypatch, other_server):
    monkeypatch.setattr("course_utils.tb_server.start_in_group", not_started)
    server = TensorBoardServer(tmp_path, port=other_server.server_address[1])
    with pytest.raises(CourseError) as caught:
        server.start()
    assert "/somewhere/else/logs" in caught.value.what and str(tmp_path) in caught.value.what


@pytest.mark.parametrize("same_folder", [False, True])
@pytest.mark.timeout(60)
def test_wait_ready_does_not_take_another_servers_answer_for_ours(tmp_path, other_server, same_folder):
    """The port was free at start() but another server took it first: its runs must not pass for ours."""
    from course_utils.system.processes import start_in_group

    if same_folder:  # even a server of the same folder is not the one we started (ours cannot bind: it will fail)
        other_server.data_location = str(tmp_path)
    server = TensorBoardServer(tmp_path, port=other_server.server_address[1])
    # our 'TensorBoard' is still importing TensorFlow: alive, not yet listening
    server.process = start_in_group([sys.executable, "-c", "import time; time.sleep(60)"])
    server.pids.add(server.process.pid)
    try:
        with pytest.raises(CourseError) as caught:
            server.wait_ready(timeout=20)
    finally:
        server.stop(timeout=5)
    assert f"port {server.port}" in caught.value.what and "not the TensorBoard started here" in caught.value.what
    if not same_folder:
        assert "/somewhere/else/logs" in caught.value.what
    assert server.leftovers() == []


@pytest.mark.timeout(60)
def test_a_server_that_could_not_bind_says_the_port_is_taken(tmp_path):
    import tempfile

    from course_utils.system.processes import start_in_group

    server = TensorBoardServer(tmp_path, port=6006)
    server._log = tempfile.TemporaryFile()
    said = "E0101 program.py] TensorBoard could not bind to port 6006, it was already in use"
    server.process = start_in_group([sys.executable, "-c", f"print({said!r}); raise SystemExit(1)"], stdout=server._log)
    server.process.wait(timeout=30)
    with pytest.raises(CourseError) as caught:
        server.wait_ready(timeout=10)
    server.stop()
    assert "port 6006 is already in use" in caught.value.what and "port=None" in caught.value.fix
