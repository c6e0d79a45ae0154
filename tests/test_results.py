"""Results records: one JSON file per run, atomic, readable by the runner and the tests."""

from __future__ import annotations

import json

import numpy as np
import pytest

from course_utils.data import LoadInfo
from course_utils.results import (
    Recorder,
    data_summary,
    read_results,
)


def test_record_writes_and_merges_numbers_and_refuses_objects(tmp_path):
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
    rec.record(loss=float("nan"))  # a non-finite number becomes null; an object is refused
    assert read_results(path)["results"]["loss"] is None
    with pytest.raises(TypeError, match="cannot record object"):
        rec.record(model=object())


SAMPLE = LoadInfo("mnist", "bundled-sample", "/pkg/mnist_sample.npz", 8000, 2000, "verified")
FASHION = LoadInfo("fashion-mnist", "download", "/home/a/.keras/datasets/fashion-mnist", 60000, 10000, "verified")


def test_note_data_keeps_one_entry_per_dataset_beside_the_other_facts_and_the_summary_shows_each(tmp_path):
    rec = Recorder("04_dense", parameters={}, smoke=False, path=tmp_path / "r.json")
    rec.environment(device="/CPU:0")
    rec.note_data(SAMPLE, train_images_used=2000)
    rec.note_data(FASHION, train_images_used=60000)
    env = read_results(rec.path)["environment"]
    assert env["device"] == "/CPU:0", "the other facts stay"
    assert env["data"] == {
        "mnist": {"source": "bundled-sample", "location": "/pkg/mnist_sample.npz", "train_images": 8000,
                  "test_images": 2000, "train_images_used": 2000, "checksum": "verified"},
        "fashion-mnist": {"source": "download", "location": "/home/a/.keras/datasets/fashion-mnist",
                          "train_images": 60000, "test_images": 10000, "train_images_used": 60000,
                          "checksum": "verified"},
    }
    assert data_summary(env) == (  # in the record's order (its keys are sorted)
        "fashion-mnist: download, 60,000 + 10,000; mnist: bundled-sample, 8,000 + 2,000 (2,000 used)")
    assert data_summary({}) == "" and data_summary({"data": None}) == ""
    assert data_summary({"data": {"mnist": {"source": "keras-cache"}}}) == "mnist: keras-cache"


def test_the_record_keeps_the_key_results_in_order_with_their_meanings_and_the_smoke_changes(tmp_path):
    path = tmp_path / "r.json"
    declared = {"zeta": "the last letter, declared first", "alpha": "the first letter"}
    Recorder("05_x", parameters={"IMAGES": 2000}, smoke=True, path=path, key_results=declared,
             smoke_changes={"IMAGES": (None, 2000)})
    data = json.loads(path.read_text())
    assert data["key_results"] == ["zeta", "alpha"], "the order the lesson declares, though the file sorts its keys"
    assert data["key_meanings"] == declared and data["smoke_changes"] == {"IMAGES": [None, 2000]}
    Recorder("99_mine", parameters={}, smoke=False, path=path, key_results=["acc"])  # a notebook of one's own
    data = json.loads(path.read_text())
    assert data["key_results"] == ["acc"] and data["key_meanings"] == {} and data["smoke_changes"] == {}


def test_a_new_run_goes_on_counting_the_earlier_runs_attempts(tmp_path):
    path = tmp_path / "03_memory.json"
    for _ in range(3):  # three Run Alls, each a new Recorder (setup in a new kernel), each one wrong try
        Recorder("03_memory", parameters={}, smoke=False, path=path).exercise("3.2", "wrong", answered=True,
                                                                              right=False)
    fourth = Recorder("03_memory", parameters={}, smoke=False, path=path)
    assert fourth.exercise("3.2", "right", answered=True, right=True) == {"status": "right", "attempts": 4,
                                                                        "right_at": 4}
    assert fourth.exercise("3.1", "not answered yet", answered=False, right=False)["attempts"] == 0
    assert read_results(path)["exercises"]["3.2"]["right_at"] == 4


def test_a_record_of_another_notebook_or_cut_short_or_tampered_starts_the_count_afresh(tmp_path):
    path = tmp_path / "record.json"
    Recorder("03_memory", parameters={}, smoke=False, path=path).exercise("3.2", "wrong", answered=True, right=False)
    assert "exercises" not in Recorder("05_cnn", parameters={}, smoke=False, path=path).data
    path.write_text('{"notebook": "03_memory", "exercises": {"3.2": {"attem', encoding="utf-8")  # a killed kernel
    assert "exercises" not in Recorder("03_memory", parameters={}, smoke=False, path=path).data
    path.write_text(json.dumps({"notebook": "03_memory", "exercises": {
        "3.1": {"status": "wrong", "attempts": "many", "right_at": 9},
        "3.2": {"status": "right", "attempts": 2, "right_at": 5},
        "3.3": "not an entry"}}), encoding="utf-8")
    assert Recorder("03_memory", parameters={}, smoke=False, path=path).data["exercises"] == {
        "3.1": {"status": "wrong", "attempts": 0, "right_at": None},
        "3.2": {"status": "right", "attempts": 2, "right_at": None},
    }
