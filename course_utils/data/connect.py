"""Open a download within a deadline: an unreachable host costs seconds, a slow link still works.

``urlopen(url, timeout=T)`` bounds each socket operation, not their sum nor the name lookup: black-holed
addresses cost ``T`` each, a server that never answers ``T`` (60 s before a fallback, measured). So two limits:
``ANSWER_DEADLINE_S`` for everything before the first byte (lookup, connections, headers) together, and
``READ_TIMEOUT_S`` for each wait after it, so a slow download that keeps moving is never cut off. No retry: the
caller falls back or says so.
"""

from __future__ import annotations

import threading
import urllib.request
from http.client import HTTPResponse

ANSWER_DEADLINE_S = 10.0
READ_TIMEOUT_S = 30.0


def open_url(url: str) -> HTTPResponse:
    """``urlopen(url)`` once the headers have arrived, opened in a daemon thread waited for at most
    ``ANSWER_DEADLINE_S`` (then ``TimeoutError``; a late answer is closed there); each later read waits at most
    ``READ_TIMEOUT_S``. ``urlopen``'s own errors are raised as they are.
    """
    deadline, read_timeout = ANSWER_DEADLINE_S, READ_TIMEOUT_S
    lock = threading.Lock()
    outcome: dict[str, object] = {}

    def attempt() -> None:
        try:
            response = urllib.request.urlopen(url, timeout=read_timeout)
        except BaseException as exc:  # handed to the caller below
            with lock:
                outcome["error"] = exc
            return
        with lock:
            late = outcome.get("abandoned", False)
            if not late:
                outcome["response"] = response
        if late:  # the caller has given up: nobody else will close it
            response.close()

    thread = threading.Thread(target=attempt, name="course-download-open", daemon=True)
    thread.start()
    thread.join(deadline)
    with lock:
        if "response" in outcome:
            return outcome["response"]  # type: ignore[return-value]
        if "error" in outcome:
            raise outcome["error"]  # type: ignore[misc]
        outcome["abandoned"] = True
    raise TimeoutError(f"no answer within {deadline:g} s (name lookup, connection and reply headers together)")
