"""core.rss: resident memory now and at its peak, for this process or another, on every platform."""

from __future__ import annotations

import os
from collections import namedtuple

import psutil
import pytest

from course_utils.core import rss
from course_utils.core.child import run_python, start_python
from course_utils.core.rss import MIB, peak_rss_mib

from ..process_checks import wait_until

T = "tests.core.targets:"


def rss_mib(pid: int | None = None) -> float:
    """The resident memory of process ``pid`` (default: this process) now, in MiB."""
    return psutil.Process(pid).memory_info().rss / MIB


def test_the_peak_grows_after_allocating_100_mib_in_a_child():
    # In a fresh process, so an earlier allocation cannot hide the growth.
    run = run_python(T + "allocate", {"mib": 100}, timeout_s=120, what="The allocating child")
    before, after = run.value["before"], run.value["after"]
    assert 10 < before and after - before >= 90 and run.value["rss"] >= 100


@pytest.mark.timeout(120)  # only catches a hang: the child never became ready
def test_the_peak_of_another_process(tmp_path):
    ready, release = tmp_path / "ready", tmp_path / "release"
    parent_before = peak_rss_mib()
    with start_python(T + "allocate", {"mib": 100, "ready": str(ready), "release": str(release)}) as child:
        wait_until(lambda: ready.exists() or child.process.poll() is not None)
        assert ready.exists(), child.log_tail()
        assert peak_rss_mib(child.process.pid) >= 100 and rss_mib(child.process.pid) >= 100
        release.write_text("go")
        value = child.result()
    assert value["after"] >= 100
    assert peak_rss_mib() - parent_before < 50, "the child's 100 MiB are not counted in the parent's own peak"
    with pytest.raises(psutil.NoSuchProcess):
        peak_rss_mib(child.process.pid)


def test_each_platforms_counter(monkeypatch):
    # Windows: psutil's peak_wset, one of the fields memory_info() has there (a stand-in here: Linux has none)
    windows_pmem = namedtuple("pmem", "rss vms num_page_faults peak_wset wset")
    monkeypatch.setattr(psutil.Process, "memory_info", lambda self: windows_pmem(10 * MIB, 20 * MIB, 0, 123 * MIB, 0))
    monkeypatch.setattr(rss.sys, "platform", "win32")
    assert rss.peak_rss_mib() == 123
    monkeypatch.undo()
    monkeypatch.setattr(rss, "_vmhwm_mib", lambda pid: None)  # as if there were no /proc
    monkeypatch.setattr(rss.sys, "platform", "darwin")  # ru_maxrss: bytes on macOS (KiB here, so a small number)
    assert 0 < rss.peak_rss_mib()
    monkeypatch.setattr(rss.sys, "platform", "linux")  # no VmHWM and not this process: the current RSS stands in
    assert rss.peak_rss_mib(os.getppid()) == pytest.approx(rss_mib(os.getppid()), abs=1)
