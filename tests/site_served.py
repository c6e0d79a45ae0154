"""The course website served for the browser tests (tests/test_site.py, tests/test_doctor_page.py).

The fixtures - ``built_site`` (the site from the nbval tier's English run and the hosted tier's Chinese one, built
once), ``served`` (it on 127.0.0.1) and ``chromium`` (Debian's Chromium, headless, driven by Playwright) - are
session-wide (tests/conftest.py imports them), so the site is built once for both test modules. ``Visit`` opens pages
in one browser context and keeps their console errors, page errors and requests outside the site (which are refused).
"""

from __future__ import annotations

import functools
import re
import subprocess
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import requests

from course_tools.site import build as site

from .conftest import IN_CI, ROOT
from .test_browser import CHROMIUM, CHROMIUM_ARGS, CI_OUT, VIEWPORT, _require_browser

SITE = ROOT / "build" / "ci" / "site"


@pytest.fixture(scope="session")
def built_site() -> Path:
    """The site from the English (nbval tier) and Chinese (hosted tier) runs, built once for these tests."""
    runs = [CI_OUT, CI_OUT.with_name(CI_OUT.name + "-zh")]
    missing = [str(r) for r in runs if not (r / "executed").is_dir()]
    if missing:
        message = f"no course run in {', '.join(missing)}: run make nbval and make hosted first"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    seconds = site.build_site(runs[0], SITE, ROOT / "build" / "ci" / "site-src", runs[1])
    size = subprocess.run(["du", "-sh", str(SITE)], capture_output=True, text=True).stdout.split()[0]
    print(f"\nthe site: built in {seconds:.1f} s, {size} ({SITE})")
    return SITE


class Served(ThreadingHTTPServer):
    """The site on 127.0.0.1 (a missing file is a console error in the page that asks for it)."""

    def __init__(self, folder: Path) -> None:
        class Quiet(SimpleHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

        super().__init__(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
        self.url = f"http://127.0.0.1:{self.server_address[1]}/"


@pytest.fixture(scope="session")
def served(built_site: Path) -> Iterator[Served]:
    with Served(built_site) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        yield server
        server.shutdown()
        thread.join(timeout=10)


@pytest.fixture(scope="session")
def chromium():
    _require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


class Visit:
    """One page in a fresh browser context: console errors, page errors and requests outside ``site`` (the served
    site's URL, or ``file://`` for files on disk) kept."""

    def __init__(self, chromium, site: str, path: str) -> None:
        self.errors: list[str] = []
        self.outside: list[str] = []
        self.context = chromium.new_context(viewport=VIEWPORT)
        # Only requests outside the site reach Python (a pattern Chromium matches itself): they are kept and refused.
        self.context.route(re.compile(f"^(?!{re.escape(site)})"), self._refuse)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: self.errors.append(f"console: {m.text}") if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.site = site
        self.go(path)

    def go(self, path: str) -> None:
        """Open ``path`` of the site in this visit's page (a second page keeps the context's cache)."""
        response = self.page.goto(self.site + path, wait_until="load")
        assert response is not None and response.status == 200, f"{path}: {response and response.status}"

    def _refuse(self, route) -> None:
        self.outside.append(route.request.url)
        route.abort()

    def close(self) -> None:
        self.context.close()


def fetch(url: str) -> tuple[int, str]:
    response = requests.get(url, timeout=20)  # http.server names no charset: the site's pages are UTF-8
    return response.status_code, response.content.decode("utf-8", "replace") if url.endswith(".html") else ""
