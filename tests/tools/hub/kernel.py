"""A small client for a kernel behind a Jupyter server: REST to start it, its websocket to run code.

The hub test runs a course notebook in each student's server the way JupyterLab does: a session for
the notebook's path (so the kernel starts in the notebook's folder), then ``execute_request``
messages on the kernel's websocket (the Jupyter messaging protocol,
https://jupyter-client.readthedocs.io/en/stable/messaging.html), one per code cell, collecting
what each cell printed on stdout until the kernel is idle again. jupyter_client's ``Session`` writes the
messages; those that come back as binary frames (with buffers) are read by jupyter_server's own decoder.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass
from typing import Any

import requests
import websocket
from jupyter_client.jsonutil import json_default
from jupyter_client.session import Session
from jupyter_server.services.kernels.connection.base import deserialize_binary_message

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class Execution:
    """What one ``execute_request`` produced."""

    code: str
    status: str = "pending"  # the reply's "ok" / "error" / "aborted"
    stdout: str = ""
    error: dict[str, Any] | None = None

    def describe(self) -> str:
        if self.error is None:
            return f"status {self.status}"
        trace = ANSI.sub("", "\n".join(self.error.get("traceback", [])))
        return f"{self.error.get('ename')}: {self.error.get('evalue')}\n{trace}"


class RemoteKernel:
    """A kernel for notebook ``path`` on the server at ``server_url`` (``http://host:port/user/<name>/``)."""

    def __init__(self, server_url: str, token: str, path: str, *, timeout: float = 60.0) -> None:
        self.server_url = server_url.rstrip("/") + "/"
        self.headers = {"Authorization": f"token {token}"}
        response = requests.post(
            self.server_url + "api/sessions",
            json={"path": path, "type": "notebook", "name": path.rsplit("/", 1)[-1], "kernel": {"name": "python3"}},
            headers=self.headers,
            timeout=timeout,
        )
        response.raise_for_status()
        kernel_id = response.json()["kernel"]["id"]
        self.messages = Session(username="hub-test")
        ws_url = self.server_url.replace("http://", "ws://", 1)
        self.ws = websocket.create_connection(
            f"{ws_url}api/kernels/{kernel_id}/channels?session_id={self.messages.session}",
            header=[f"{k}: {v}" for k, v in self.headers.items()],
            timeout=timeout,
        )

    def run(self, code: str, timeout: float = 300.0) -> Execution:
        """Execute ``code``; return when the kernel has replied and is idle again (TimeoutError when it sends nothing
        for ``timeout`` s)."""
        request = self.messages.msg("execute_request", content={"code": code})
        self.ws.send(json.dumps({**request, "channel": "shell"}, default=json_default))
        self.ws.settimeout(timeout)
        result = Execution(code)
        idle = False
        while result.status == "pending" or not idle:
            try:
                frame = self.ws.recv()
            except websocket.WebSocketTimeoutException:
                raise TimeoutError(f"the kernel sent nothing for {timeout:.0f} s: {code[:200]!r}") from None
            message = json.loads(frame) if isinstance(frame, str) else deserialize_binary_message(frame)
            if message["parent_header"].get("msg_id") != request["msg_id"]:
                continue
            kind, content = message["header"]["msg_type"], message["content"]
            if kind == "stream" and content["name"] == "stdout":
                result.stdout += content["text"]
            elif kind == "error":
                result.error = content
            elif kind == "execute_reply":
                result.status = content["status"]
                if result.status == "error" and result.error is None:
                    result.error = content
            elif kind == "status" and content["execution_state"] == "idle":
                idle = True
        return result

    def value(self, expression: str, timeout: float = 60.0) -> Any:
        """The value of a Python ``expression`` in the kernel, through JSON."""
        done = self.run(f"import json as _json\nprint(_json.dumps({expression}))", timeout)
        if done.error is not None:
            raise AssertionError(f"{expression!r} failed in the kernel: {done.describe()}")
        return json.loads(done.stdout.strip().splitlines()[-1])

    def close(self) -> None:
        with contextlib.suppress(Exception):  # already closed, or the server is gone
            self.ws.close()
