"""Reaching TensorBoard on a hub: the TENSORBOARD_PROXY_URL a JupyterHub or Binder session needs."""

from __future__ import annotations

from course_utils.tools.classroom.tb_server import proxy_url_hint


def test_proxy_url_on_a_hub_and_off_it():
    assert proxy_url_hint({}) is None
    assert proxy_url_hint({"JUPYTERHUB_SERVICE_PREFIX": "/user/ada/"}) == "/user/ada/proxy/%PORT%/"
    assert proxy_url_hint({"JUPYTERHUB_SERVICE_PREFIX": "/user/ada"}) == "/user/ada/proxy/%PORT%/"
    assert proxy_url_hint({"JUPYTERHUB_SERVICE_PREFIX": ""}) == "/proxy/%PORT%/", "${PREFIX:-/}"
