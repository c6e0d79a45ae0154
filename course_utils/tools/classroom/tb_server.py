"""Reaching TensorBoard on a hub: the ``TENSORBOARD_PROXY_URL`` a JupyterHub or Binder session needs.

``%tensorboard`` (notebook 06) starts a server on the session's ``localhost``. On JupyterHub or Binder
the browser cannot reach that; ``jupyter-server-proxy`` serves it at ``<hub prefix>proxy/<port>/``, and
``%tensorboard`` shows it there when ``TENSORBOARD_PROXY_URL`` is set (docs/references.md#tensorboard-proxy).
The class hub (``classroom.hub``) and Binder (``binder/start``) set it for every student; notebook 06 sets it
in view when it is missing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

PROXY_ENV = "TENSORBOARD_PROXY_URL"
HUB_PREFIX_ENV = "JUPYTERHUB_SERVICE_PREFIX"


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
