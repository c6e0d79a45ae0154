"""Reaching TensorBoard on a hub: the class hub's private TensorBoard.

``%tensorboard`` (notebook 06) starts a server on the session's ``localhost``. On JupyterHub or Binder
the browser cannot reach that; ``jupyter-server-proxy`` serves it at ``<hub prefix>proxy/<port>/``, and
``%tensorboard`` shows it there when ``TENSORBOARD_PROXY_URL`` is set (docs/references.md#tensorboard-proxy).
Binder (``binder/start``) sets it; notebook 06 sets it in view when it is missing.

On a class's shared server that is not private: every student's server runs on one machine, a TCP port on
``localhost`` is open to every classmate's process, and ``jupyter-server-proxy`` proxies "all ports listening
on the local machine" - through any student's own server. TensorBoard has no login. So on the class hub
each student's TensorBoard listens on a Unix socket instead, in a folder only that student can enter:
``jupyter-server-proxy`` starts it (``tensorboard_server``, the ``jupyter_serverproxy_servers`` entry point)
the first time the student opens ``<their server>/tensorboard/``, and reaches it through the socket
(its ``unix_socket`` option: https://jupyter-server-proxy.readthedocs.io/en/latest/server-process.html).
TensorBoard's own server (Werkzeug) listens on a ``unix://`` host; ``main`` starts it there, on the student's
log folder (``COURSE_LOG_DIR``, which the hub sets).
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Sequence
from typing import Any

from course_utils.core.child import python_command
from course_utils.core.places import log_base


def tensorboard_server() -> dict[str, Any]:
    """``jupyter-server-proxy``'s settings for the private TensorBoard at ``<server>/tensorboard/``."""
    return {
        "command": python_command("course_tools.classroom.tb_server", "--socket", "{unix_socket}"),
        "unix_socket": True,  # a socket in a new folder only this user can enter; no TCP port at all
        "timeout": 60,  # TensorBoard needs a few seconds to load its plugins
        "launcher_entry": {"title": "TensorBoard"},
    }


def main(argv: Sequence[str] | None = None) -> None:
    """TensorBoard on a Unix socket (``--socket PATH``), for the log folder (``--logdir``, default the student's)."""
    from tensorboard import program  # lazy: TensorBoard loads its plugins, seconds, only when a server starts

    parser = argparse.ArgumentParser(description="TensorBoard on a Unix socket, for jupyter-server-proxy.")
    parser.add_argument("--socket", required=True, help="the socket's path (jupyter-server-proxy's {unix_socket})")
    parser.add_argument("--logdir", default=None, help="the log folder (default: COURSE_LOG_DIR, else ./logs)")
    args = parser.parse_args(argv)
    logdir = args.logdir or str(log_base())

    class SocketServer(program.WerkzeugServer):
        """Werkzeug's server on a ``unix://`` host; TensorBoard's URL and message assume a TCP port."""

        def get_url(self) -> str:
            return f"unix:{args.socket}"

        def print_serving_message(self) -> None:
            sys.stderr.write(f"TensorBoard {logdir} on the Unix socket {args.socket}\n")

    board = program.TensorBoard(server_class=SocketServer)
    board.configure(argv=[None, "--logdir", logdir, "--host", f"unix://{args.socket}", "--port", "0"])
    print(board.launch(), flush=True)  # serves in a thread of its own
    threading.Event().wait()  # until jupyter-server-proxy stops it (SIGTERM)


if __name__ == "__main__":
    main()
