"""A download host that cannot be reached costs one short deadline, then the bundled sample; a slow link still works.

Students behind a firewall that drops the packets, or with no working name server, must not wait a minute per
notebook. Each case is built from local sockets (no internet). ``download.open_url`` waits on one deadline for the
name lookup, the connection and the reply headers together, so one unreachable host stands for all of them: a server
that accepts and never answers. A name lookup that fails ends the download at once. The deadline is lowered to 1 s
so the tests stay fast; the shipped value (``download.ANSWER_DEADLINE_S``) is the one the Chinese README states.

No test times the fallback (a loaded CI machine is slow). Each checks what ended the download - one opening,
ended by the deadline or by its error - and every other wait is made to last an hour, so that a download that
waited on anything but the deadline hangs, and the timeout below fails it.
"""

from __future__ import annotations

import hashlib
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from course_utils import data
from course_utils.core.errors import DataError
from course_utils.data import download
from course_utils.data.download import fetch_verified

from ..process_checks import wait_until

pytestmark = pytest.mark.timeout(120)  # a hang guard only: see the module docstring

DEADLINE = 1.0
HOUR = 3600.0  # any wait but the deadline: longer than the test's timeout


@pytest.fixture
def online(monkeypatch):
    """Downloads allowed, with a 1 s deadline; a read on an opened connection would wait an hour."""
    monkeypatch.setenv("COURSE_OFFLINE", "0")
    monkeypatch.setattr(download, "ANSWER_DEADLINE_S", DEADLINE)
    monkeypatch.setattr(download, "READ_TIMEOUT_S", HOUR)


@pytest.fixture
def openings(monkeypatch) -> list[tuple[str, str]]:
    """Each opening of a download (``download.open_url``), as (url, how it ended: an exception's name or "open")."""
    seen: list[tuple[str, str]] = []
    real = download.open_url

    def open_url(url, **kwargs):
        try:
            response = real(url, **kwargs)
        except BaseException as exc:
            seen.append((url, type(exc).__name__))
            raise
        seen.append((url, "open"))
        return response

    monkeypatch.setattr(download, "open_url", open_url)
    return seen


class Silent:
    """A server that accepts every connection and never sends a byte; ``accepted`` counts the connections."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}/"
        self.accepted: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                self.accepted.append(self.server.accept()[0])
            except OSError:  # closed at the end of the test
                return

    def until_accepted(self) -> int:
        """Wait until the connection the client made is accepted (the test's timeout catches a hang); how many."""
        wait_until(lambda: self.accepted)
        return len(self.accepted)

    def close(self) -> None:
        self.server.close()
        for conn in self.accepted:
            conn.close()


@pytest.fixture
def silent() -> Iterator[Silent]:
    server = Silent()
    yield server
    server.close()


@pytest.fixture
def dns_fails(monkeypatch) -> str:
    def fails(*args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", fails)
    return "http://storage.example/"


def load_mnist(monkeypatch, origin: str) -> data.LoadInfo:
    monkeypatch.setattr(data, "KERAS_ORIGIN", origin)
    _, info = data.load("mnist", with_info=True)
    return info


# -- data.load("mnist") falls back at the deadline: one opening, ended by it ----------------------------------------


@pytest.mark.usefixtures("online")
def test_a_host_that_never_answers_costs_one_deadline_then_the_sample(monkeypatch, openings, capsys, silent):
    info = load_mnist(monkeypatch, silent.url)
    assert info.source == "bundled-sample"
    assert openings == [(silent.url + data.MNIST_FILE, "TimeoutError")], "one opening, ended by the deadline"
    out = capsys.readouterr().out
    assert "Download of full MNIST failed" in out and f"no answer within {DEADLINE:g} s" in out
    assert silent.until_accepted() == 1, "no retry: one connection per download"


@pytest.mark.usefixtures("online")
def test_a_failed_name_lookup_falls_back_at_once(monkeypatch, dns_fails, openings, capsys):
    monkeypatch.setattr(download, "ANSWER_DEADLINE_S", HOUR)  # waiting for the deadline would hang
    info = load_mnist(monkeypatch, dns_fails)
    assert info.source == "bundled-sample"
    assert openings == [(dns_fails + data.MNIST_FILE, "URLError")], "ended by the failed lookup, not a deadline"
    assert "Name or service not known" in capsys.readouterr().out


@pytest.mark.usefixtures("online")
def test_fashion_mnist_tries_its_first_file_once_then_says_what_failed(monkeypatch, silent, openings, tmp_path):
    monkeypatch.setattr(data, "DEBIAN_FASHION_DIR", tmp_path / "absent")
    monkeypatch.setattr(data, "KERAS_ORIGIN", silent.url)
    with pytest.raises(DataError) as info:
        data.load("fashion-mnist")
    assert "train-images-idx3-ubyte.gz" in info.value.what and "no answer within" in info.value.what
    assert openings == [(silent.url + "train-images-idx3-ubyte.gz", "TimeoutError")], "one opening, at the deadline"
    assert silent.until_accepted() == 1, "the other three files are not tried after the first failed"


# -- a slow link still works; a stalled one ends ------------------------------------------------------------------


class Trickle:
    """A server that sends ``body`` in ``pieces`` pieces, ``gap`` seconds apart, or stops after ``stop_after``."""

    def __init__(self, body: bytes, pieces: int, gap: float, stop_after: int | None = None) -> None:
        self.body, self.pieces, self.gap, self.stop_after = body, pieces, gap, stop_after
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}/file.bin"
        self.done = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self.server.accept()
        with conn:
            conn.recv(65536)  # the request
            conn.sendall(f"HTTP/1.0 200 OK\r\nContent-Length: {len(self.body)}\r\n\r\n".encode())
            size = -(-len(self.body) // self.pieces)
            for i in range(self.pieces):
                if self.stop_after is not None and i == self.stop_after:
                    self.done.wait(HOUR)  # hold the connection open, silent, until the test ends
                    return
                conn.sendall(self.body[i * size:(i + 1) * size])
                time.sleep(self.gap)

    def close(self) -> None:
        self.done.set()
        self.server.close()


BODY = bytes(range(256)) * 64


def test_a_slow_download_that_keeps_moving_is_not_cut_off(tmp_path, monkeypatch):
    """40 pieces 0.05 s apart: nearly 2 s in all, longer than the deadline and the read timeout (1 s each), and
    each gap a twentieth of the read timeout, so that a slow machine does not make a gap look like a stall."""
    monkeypatch.setattr(download, "ANSWER_DEADLINE_S", 1.0)
    monkeypatch.setattr(download, "READ_TIMEOUT_S", 1.0)
    server = Trickle(BODY, pieces=40, gap=0.05)
    try:
        dest = fetch_verified(server.url, tmp_path / "file.bin", hashlib.sha256(BODY).hexdigest())
    finally:
        server.close()
    assert dest.read_bytes() == BODY


def test_a_download_that_stalls_ends_after_the_read_timeout_and_keeps_the_old_file(tmp_path, monkeypatch):
    """The server sends half the file, then holds the connection silent until the test ends: only the read
    timeout can end the download (a missing one would hang, for the test's timeout to catch)."""
    dest = tmp_path / "file.bin"
    dest.write_bytes(b"previous good copy")
    monkeypatch.setattr(download, "ANSWER_DEADLINE_S", 60.0)
    monkeypatch.setattr(download, "READ_TIMEOUT_S", 0.5)
    server = Trickle(BODY, pieces=4, gap=0.0, stop_after=2)
    try:
        with pytest.raises(DataError) as info:
            fetch_verified(server.url, dest, hashlib.sha256(BODY).hexdigest())
    finally:
        server.close()
    assert "failed after" in info.value.what and "timed out" in info.value.what
    assert dest.read_bytes() == b"previous good copy"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.bin"]  # no temporary file left


def test_an_answer_after_the_deadline_is_closed_not_leaked(monkeypatch):
    """The server answers once open_url has given up; its thread closes the response, and the server sees that."""
    server = socket.create_server(("127.0.0.1", 0))
    gave_up, closed = threading.Event(), threading.Event()

    def answer_late() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)
            gave_up.wait(HOUR)  # late: after the deadline, however slow the machine
            conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 1000000\r\n\r\n" + b"x" * 1000)
            conn.settimeout(HOUR)
            while conn.recv(65536):  # until the client closes its end
                pass
            closed.set()

    monkeypatch.setattr(download, "ANSWER_DEADLINE_S", 0.3)
    monkeypatch.setattr(download, "READ_TIMEOUT_S", HOUR)
    threading.Thread(target=answer_late, daemon=True).start()
    try:
        with pytest.raises(TimeoutError, match="no answer within 0.3 s"):
            download.open_url(f"http://127.0.0.1:{server.getsockname()[1]}/")
        gave_up.set()
        assert closed.wait(HOUR), "the late response was left open"  # the test's timeout catches a leak
    finally:
        gave_up.set()
        server.close()


def test_the_shipped_limits_fail_over_in_seconds_and_let_a_slow_link_pause():
    assert download.ANSWER_DEADLINE_S <= 10
    assert download.READ_TIMEOUT_S >= 2 * download.ANSWER_DEADLINE_S
