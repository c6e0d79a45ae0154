"""Results records: one JSON file per run, atomic, readable by the runner and the tests."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from course_utils import results
from course_utils.results import Recorder, default_results_path, peak_rss_mib, read_all, read_results
from course_utils.system import paths, rss


def test_record_writes_and_merges(tmp_path):
    path = tmp_path / "r.json"
    rec = Recorder("05_cnn", parameters={"EPOCHS": 2}, smoke=True, path=path)
    rec.environment(device="/CPU:0")
    rec.record(accuracy=np.float32(0.75), epoch_s=[np.float64(1.5), 2.0])
    rec.record(images=np.int64(8000))
    data = read_results(path)
    assert data["notebook"] == "05_cnn" and data["smoke"] is True and data["parameters"] == {"EPOCHS": 2}
    assert data["environment"] == {"device": "/CPU:0"}
    assert data["results"] == {"accuracy": 0.75, "epoch_s": [1.5, 2.0], "images": 8000}
    assert data["peak_rss_mib"] > 10
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"], "no temporary files left"


def test_non_finite_numbers_become_null_and_objects_are_refused(tmp_path):
    rec = Recorder("x", parameters={}, smoke=False, path=tmp_path / "x.json")
    rec.record(loss=float("nan"))
    assert read_results(tmp_path / "x.json")["results"]["loss"] is None
    with pytest.raises(TypeError, match="cannot record object"):
        rec.record(model=object())


def test_old_names_stay_importable_from_results():
    assert peak_rss_mib is rss.peak_rss_mib  # notebook 04 imports it from course_utils.results
    assert results.PROJECT_ROOT == paths.PROJECT_ROOT and (paths.PROJECT_ROOT / "course_utils").is_dir()


def test_path_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_RESULTS_DIR", str(tmp_path / "dir"))
    assert default_results_path("02_verify_gpu") == tmp_path / "dir" / "02_verify_gpu.json"
    monkeypatch.setenv("COURSE_RESULTS_FILE", str(tmp_path / "one.json"))
    assert default_results_path("02_verify_gpu") == tmp_path / "one.json"
    monkeypatch.delenv("COURSE_RESULTS_FILE")
    monkeypatch.delenv("COURSE_RESULTS_DIR")
    assert default_results_path("02_verify_gpu") == paths.build_dir() / "results" / "02_verify_gpu.json"


def test_read_all(tmp_path):
    for name in ("a", "b"):
        Recorder(name, parameters={}, smoke=False, path=tmp_path / f"{name}.json").record(v=1)
    assert sorted(read_all(tmp_path)) == ["a", "b"]
    assert json.loads((tmp_path / "a.json").read_text())["results"] == {"v": 1}


def test_peak_rss_grows_with_allocation():
    # In a fresh process, so an earlier test's peak cannot hide the growth.
    code = (
        "import numpy as np; from course_utils.results import peak_rss_mib;"
        "a = peak_rss_mib(); block = np.ones(128 * 2**20 // 8); print(a, peak_rss_mib())"
    )
    before, after = map(float, subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                              check=True).stdout.split())
    assert 10 < before < after and after >= 128  # the 128 MiB block is in the peak
    assert peak_rss_mib() > 10
