"""Open a download within a deadline: an unreachable host costs seconds, a slow link still works.

Python's ``urlopen(url, timeout=T)`` bounds each socket operation, not their sum, and not the
name lookup. A host whose addresses are all black-holed (packets dropped, no answer) costs
``T`` per address; a server that accepts and never answers costs ``T``; a resolver that never
answers blocks as long as the system lets it. Measured before this module, with ``T`` = 60 s:
``data.load("mnist")`` took 60 s to fall back to the bundled sample in the first two cases.

So two limits, each for one phase:

- ``ANSWER_DEADLINE_S`` for everything before the first byte - the name lookup, the connection
  to each address, the request and the response headers - together, once;
- ``READ_TIMEOUT_S`` for each wait for more bytes after that: a slow download that keeps
  moving is never cut off, one that stalls ends after that long.

There is no retry: a failed opening is a failed download (the caller falls back or says so).
"""

from __future__ import annotations

import threading
import urllib.request
from http.client import HTTPResponse

ANSWER_DEADLINE_S = 10.0
READ_TIMEOUT_S = 30.0


def open_url(url: str) -> HTTPResponse:
    """``urllib.request.urlopen(url)`` once the headers have arrived; ``TimeoutError`` after ``ANSWER_DEADLINE_S``.

    The opening runs in a daemon thread that the caller waits for no longer than ``ANSWER_DEADLINE_S``;
    a late answer is closed by that thread. Each later read on the response waits at most
    ``READ_TIMEOUT_S``. Errors of the opening (``URLError``, ``HTTPError``, ...) are raised here as
    ``urlopen`` raises them.
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
