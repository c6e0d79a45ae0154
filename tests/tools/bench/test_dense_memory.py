"""``bench.dense_memory``: notebook 04's training two ways, each in its own child process."""

from __future__ import annotations

import pytest

from course_tools.bench import dense_memory as dm
from course_utils.core.errors import ChildError


def test_the_course_way_is_leaner_and_each_way_ran_in_its_own_process():
    report = dm.dense_memory(dataset="mnist", images=6000)
    for key in ("book_peak_mib", "course_peak_mib", "book_s", "course_s"):
        assert report[key] > 0
    assert report["images"] == 6000 and report["epochs"] == 1 and report["dataset"] == "mnist"
    # the Q&A post's two float64 arrays alone are 6,000 x 1,568 x 8 x 2 bytes = 144 MiB;
    # the course builds one float32 batch at a time, 0.8 MB. In one process the second peak could not be lower.
    assert report["course_peak_mib"] + 100 < report["book_peak_mib"]
    assert report["memory_ratio"] == pytest.approx(report["book_peak_mib"] / report["course_peak_mib"], rel=0.01)
    assert set(report["final_val_accuracy"]) == {"book", "course"}


def test_a_failing_child_raises_a_child_error_that_keeps_its_message():
    with pytest.raises(ChildError) as info:
        dm.dense_memory(dataset="mnist", images=10**9)
    err = info.value
    assert "book-way training process" in err.what and err.ended == "error"
    assert err.error["type"] == "ParameterError" and "training images" in err.error["what"]
