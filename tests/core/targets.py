"""Functions that tests/core/test_child.py and test_rss.py run in child processes (``core.child`` targets)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def echo(payload: Any) -> dict[str, Any]:
    print("echo says hello", flush=True)
    return {"payload": payload, "pid": os.getpid()}


def environment(payload: list[str]) -> dict[str, str | None]:
    return {name: os.environ.get(name) for name in payload}


def course_error(payload: Any) -> None:
    from course_utils.core.errors import DataError

    raise DataError("The file mnist.npz is truncated.", "Delete it and download it again.")


def value_error(payload: Any) -> None:
    raise ValueError(f"bad value {payload!r}")


def exit_hard(payload: int) -> None:
    print("about to exit hard", flush=True)
    os._exit(payload)


def killed(payload: Any) -> None:
    print("about to be killed", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(30)


def looks_like_an_error(payload: Any) -> dict[str, str]:
    return {"error": "just a value"}


def sleep_with_grandchild(payload: dict[str, Any]) -> None:
    """Start a grandchild (in this process's group), write both pids to payload["pids"], then sleep."""
    grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", payload["marker"]])
    Path(payload["pids"]).write_text(json.dumps([os.getpid(), grandchild.pid]))
    time.sleep(payload.get("seconds", 120))


def allocate(payload: dict[str, Any]) -> dict[str, float]:
    """Peak before and after holding ``payload["mib"]`` MiB; waits for ``payload["release"]`` to appear if given."""
    import numpy as np
    import psutil

    from course_utils.core.rss import MIB, peak_rss_mib

    before = peak_rss_mib()
    block = np.ones(int(payload["mib"]) * 2**20 // 8)  # float64, touched: resident
    after, rss = peak_rss_mib(), psutil.Process().memory_info().rss / MIB
    if payload.get("ready"):
        Path(payload["ready"]).write_text("allocated")
        deadline = time.monotonic() + 60
        while not Path(payload["release"]).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    del block
    return {"before": before, "after": after, "rss": rss}
