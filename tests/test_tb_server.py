"""A real TensorBoard server: started on 127.0.0.1 at a free port, queried, stopped, nothing left behind."""

from __future__ import annotations

import importlib.util
import socket

import numpy as np
import pytest

from course_utils.errors import CourseError
from course_utils.tb_server import PROXY_ENV, TensorBoardServer, configure_proxy, proxy_url_hint

READY_S = 120  # TensorBoard imports TensorFlow before it answers: 15-20 s on a busy 2-core machine
RUN = "dense"
EPOCHS = 3


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Seed 000's dense model trained for 3 epochs with the course's callback (and a profiled range)."""
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
@pytest.mark.skipif(importlib.util.find_spec("xprof") is None, reason="the optional profile plugin (xprof) is absent")
def test_with_the_profile_extra_the_plugin_lists_the_trace(trained):
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
