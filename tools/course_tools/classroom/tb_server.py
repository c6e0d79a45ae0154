"""The class hub's private TensorBoard (docs/class.md, "TensorBoard" under "Sharing the GPU"): on a shared server a
TCP port on ``localhost`` is open to every classmate's process, and TensorBoard has no login. So
``jupyter-server-proxy`` starts each student's TensorBoard (``tensorboard_server``, the ``jupyter_serverproxy_servers``
entry point) on a Unix socket in a folder only that student can enter, and ``main`` serves the student's
``COURSE_LOG_DIR`` there (https://jupyter-server-proxy.readthedocs.io/en/latest/server-process.html).
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
    """TensorBoard on a Unix socket (``--socket PATH``), for the student's log folder (``COURSE_LOG_DIR``)."""
    from tensorboard import program  # lazy: TensorBoard loads its plugins, seconds, only when a server starts

    parser = argparse.ArgumentParser(description="TensorBoard on a Unix socket, for jupyter-server-proxy.")
    parser.add_argument("--socket", required=True, help="the socket's path (jupyter-server-proxy's {unix_socket})")
    args = parser.parse_args(argv)
    logdir = str(log_base())

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
