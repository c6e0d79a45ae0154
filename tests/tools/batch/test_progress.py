"""The runner's progress display: what runs, which grid point, how long."""

from __future__ import annotations

import io
from unittest.mock import Mock

import pytest

from course_tools.batch.progress import Progress, clock_text


@pytest.mark.parametrize("seconds, text", [(0, "0s"), (59.9, "59s"), (65, "1m05s"), (3725, "1h02m")])
def test_clock_text(seconds, text):
    assert clock_text(seconds) == text


def test_lines_name_the_run_and_the_times():
    stream, clock = io.StringIO(), Mock(return_value=100.0)
    progress = Progress(3, stream=stream, live=False, clock=clock)
    progress.start(1, "05_cnn point 1/3 (BATCH_SIZE=32)")
    progress.start(2, "05_cnn point 2/3 (BATCH_SIZE=64)")
    clock.return_value += 75
    assert progress.status_line() == (
        "[0/3 done] running: 05_cnn point 1/3 (BATCH_SIZE=32) 1m15s; 05_cnn point 2/3 (BATCH_SIZE=64) 1m15s"
        " | elapsed 1m15s"
    )
    progress.finish(2, "failed", 75.0, "cell In [3]: ValueError: x")
    progress.finish(1, "ok", 75.04)
    lines = stream.getvalue().splitlines()
    assert lines == [
        "[1/3] start  05_cnn point 1/3 (BATCH_SIZE=32)",
        "[2/3] start  05_cnn point 2/3 (BATCH_SIZE=64)",
        "[2/3] FAILED 05_cnn point 2/3 (BATCH_SIZE=64) in 75.0 s (elapsed 1m15s) - cell In [3]: ValueError: x",
        "[1/3] ok     05_cnn point 1/3 (BATCH_SIZE=32) in 75.0 s (elapsed 1m15s)",
    ]
    assert progress.status_line() == "[2/3 done, 1 failed] running: - | elapsed 1m15s"


def test_on_a_terminal_the_status_line_is_redrawn_below_the_events():
    stream = io.StringIO()
    with Progress(1, stream=stream, live=True, clock=Mock(return_value=100.0)) as progress:
        progress.start(1, "02_verify_gpu")
    text = stream.getvalue()
    assert text.startswith("\r\033[K[1/1] start  02_verify_gpu\n[0/1 done] running: 02_verify_gpu 0s")
    assert text.endswith("\r\033[K")  # the status line is cleared at the end
