"""core.processes: free ports, a process group per child, and stopping all of it - leader, group, strays."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

import psutil
import pytest

from course_utils.core.processes import (
    StopSignals,
    free_ports,
    group_alive,
    leftover_processes,
    start_in_group,
    stop_group,
)

from ..process_checks import still_running, wait_until

# No test here bounds how long a start or a stop takes (a loaded CI machine is slow): each waits for what it
# checks, and the timeout below only catches a hang.
pytestmark = [pytest.mark.skipif(os.name == "nt", reason="POSIX process groups and signals"), pytest.mark.timeout(120)]

SLEEP = "import time; time.sleep(120)"
GRACE_S = 60  # ample for a polite SIGTERM on a loaded machine; stop_group returns as soon as everything has ended


def grace_passes_once(ready):
    """A clock for ``stop_group``: the SIGTERM grace period passes once ``ready()`` holds, never before, and the wait
    after SIGKILL never runs out (a hang there is the test timeout's to catch) - on a machine of any speed."""
    readings: list[float] = []

    def clock() -> float:
        later = bool(readings) and (readings[-1] > 0 or ready())  # the first reading starts the grace period
        readings.append(1e6 if later else 0.0)
        return readings[-1]

    return clock


def test_free_ports_are_distinct_and_free():
    ports = free_ports(3)
    assert len(set(ports)) == 3 and all(1024 <= p <= 65535 for p in ports)
    for port in [*ports, *free_ports(1)]:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))


def test_start_in_group_leads_a_group_of_its_own_and_logs_both_streams(tmp_path):
    log = tmp_path / "out.log"
    code = "import os, sys; print('to stdout', flush=True); print('to stderr', file=sys.stderr, flush=True)"
    proc = start_in_group([sys.executable, "-c", code], log_path=log)
    assert os.getpgid(proc.pid) == proc.pid != os.getpgid(0)
    assert proc.wait() == 0
    assert log.read_text().splitlines() == ["to stdout", "to stderr"]


def test_stop_group_also_stops_grandchildren(tmp_path):
    marker = tmp_path / "grandchild"
    code = f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {SLEEP!r}, {str(marker)!r}]); " + (
        "time.sleep(120)"
    )
    proc = start_in_group([sys.executable, "-c", code, str(marker)])
    wait_until(lambda: len(leftover_processes(marker)) == 2)
    assert group_alive(proc.pid)
    assert stop_group(proc, grace_s=GRACE_S) == -signal.SIGTERM
    assert leftover_processes(marker) == [] and not group_alive(proc.pid)


def test_stop_group_ends_members_that_outlive_the_leader(tmp_path):
    marker = tmp_path / "orphan"
    code = f"import subprocess, sys; subprocess.Popen([sys.executable, '-c', {SLEEP!r}, {str(marker)!r}])"
    proc = start_in_group([sys.executable, "-c", code])
    wait_until(lambda: len(leftover_processes(marker)) == 1)
    assert proc.wait() == 0 and group_alive(proc.pid), "the leader ended, its child lives on in the group"
    assert stop_group(proc, grace_s=GRACE_S) == 0
    assert leftover_processes(marker) == [] and not group_alive(proc.pid)


def test_stop_group_ends_descendants_that_left_the_group(tmp_path):
    marker = tmp_path / "own-session"  # like a Jupyter kernel: a session of its own
    code = (
        f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {SLEEP!r}, {str(marker)!r}], "
        "start_new_session=True); time.sleep(120)"
    )
    proc = start_in_group([sys.executable, "-c", code])
    wait_until(lambda: len(leftover_processes(marker)) == 2)  # the leader (its code names the marker) and the stray
    stop_group(proc, grace_s=GRACE_S)
    assert leftover_processes(marker) == [], "the stray in a session of its own ended before stop_group returned"


def test_stop_group_kills_what_ignores_sigterm_and_ends_the_pids_it_is_given(tmp_path):
    stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); " + (
        "time.sleep(120)"
    )
    proc = start_in_group([sys.executable, "-c", stubborn], stdout=subprocess.PIPE)
    assert proc.stdout.readline().strip() == b"ready"
    marker = tmp_path / "elsewhere"
    stray = subprocess.Popen([sys.executable, "-c", SLEEP, str(marker)], start_new_session=True)
    clock = grace_passes_once(lambda: stray.poll() is not None)  # SIGKILL only once SIGTERM has ended the stray
    assert stop_group(proc, grace_s=1, also=[stray.pid], clock=clock) == -signal.SIGKILL
    assert stray.wait() == -signal.SIGTERM, "a pid given in also= is stopped like the group"
    proc.stdout.close()


def test_stop_group_is_harmless_on_an_ended_process():
    proc = start_in_group([sys.executable, "-c", "raise SystemExit(5)"])
    proc.wait()
    assert stop_group(proc) == 5 and stop_group(proc) == 5


def test_still_running_and_leftover_processes(tmp_path):
    marker = tmp_path / "named"
    proc = start_in_group([sys.executable, "-c", SLEEP, str(marker)])
    try:
        wait_until(lambda: leftover_processes(marker) == [proc.pid])
        assert still_running([proc.pid, 2**22 + 12345]) == [proc.pid]
    finally:
        stop_group(proc, grace_s=GRACE_S)
    assert still_running([proc.pid]) == [] and leftover_processes(marker) == []
    assert not psutil.pid_exists(proc.pid) or psutil.Process(proc.pid).status() == psutil.STATUS_ZOMBIE


def test_stop_signals_raise_once_then_only_announce_and_are_restored():
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    announced = []
    with StopSignals(on_repeat=announced.append) as signals:
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGTERM)  # kill: stops the program as Ctrl-C does
        signal.raise_signal(signal.SIGINT)  # a second one while it stops: announced, not raised
        signals.disarm()
        signal.raise_signal(signal.SIGTERM)
    assert signals.received == ["SIGTERM", "Ctrl-C", "SIGTERM"] and signals.first == "SIGTERM"
    assert announced == ["Ctrl-C", "SIGTERM"]
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before


def test_stop_signals_outside_the_main_thread_change_nothing():
    import threading

    found = {}

    def other():
        with StopSignals() as signals:
            found["handler"] = signal.getsignal(signal.SIGTERM)
            found["received"] = signals.received

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert found == {"handler": signal.getsignal(signal.SIGTERM), "received": []}
