"""TensorBoard logs read back as data (``course logs``): every scalar equal to Keras History, damaged files named."""

from __future__ import annotations

import csv
import io
import os

import numpy as np
import pytest

from course_utils.core import variables
from course_utils.core.errors import CourseError
from course_utils.tb_logs import log_root
from course_utils.tools.logs import Scalar, event_dirs, main, read_scalars

EPOCHS = 3
IMAGES = 320  # 256 train (4 batches of 64) + 64 validation
EPOCH_TAGS = {"epoch_loss", "epoch_accuracy"}


def series(rows, run, tag, split):
    """One curve of the table: its steps and values, in step order."""
    points = sorted((r.step, r.value) for r in rows if (r.run, r.tag, r.split) == (run, tag, split))
    return [step for step, _ in points], [value for _, value in points]


# --- paths -------------------------------------------------------------------------------------


def test_log_root_is_relative_to_the_cwd_or_course_log_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(variables.LOG_DIR, raising=False)
    assert log_root("logs") == tmp_path / "logs" and (tmp_path / "logs").is_dir()
    monkeypatch.setenv(variables.LOG_DIR, str(tmp_path / "elsewhere"))
    assert log_root("logs") == tmp_path / "elsewhere" / "logs"
    assert log_root(tmp_path / "abs") == tmp_path / "abs", "an absolute LOG_DIR wins"


def test_missing_tensorboard_is_a_clear_error(monkeypatch, tmp_path):
    import importlib.util

    write_loss_events(tmp_path / "run" / "train")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "tensorboard" else real(name, *a))
    with pytest.raises(CourseError, match="2.21") as caught:
        read_scalars(tmp_path, [])
    assert "pip install" in caught.value.fix and "docs/troubleshooting.md#tensorboard-missing" in caught.value.fix
    # TF 2.21 without tensorboard: tf.summary is limited (scalar & co. raise TBNotInstalledError), not gone
    assert "limited" in caught.value.what and "TBNotInstalledError" in caught.value.what
    assert "unavailable" not in caught.value.what


# --- real runs ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    """Two runs logged by Keras's own callback, one folder each: a small dense model, and the blog post's CNN
    with a profiled range."""
    from course_utils.core.tf_setup import quiet_tensorflow

    quiet_tensorflow()
    import keras

    from course_utils.models import build_blog_cnn
    from course_utils.tools.bench.ladder import image_dataset

    root = tmp_path_factory.mktemp("logs")
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(IMAGES, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, size=IMAGES).astype(np.int32)
    split = 256
    histories = {}
    keras.utils.set_random_seed(0)
    dense = keras.Sequential([keras.Input((28, 28)), keras.layers.Flatten(), keras.layers.Dense(10)])
    dense.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    callback = keras.callbacks.TensorBoard(log_dir=str(root / "dense"), histogram_freq=1)
    pixels = images / 255.0
    history = dense.fit(pixels[:split], labels[:split], validation_data=(pixels[split:], labels[split:]),
                        batch_size=64, epochs=EPOCHS, verbose=0, callbacks=[callback])
    histories["dense"] = history.history
    keras.utils.set_random_seed(0)
    cnn = build_blog_cnn()
    cnn.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                metrics=["accuracy"])
    callback = keras.callbacks.TensorBoard(log_dir=str(root / "cnn"), histogram_freq=2, profile_batch=(5, 7))
    history = cnn.fit(image_dataset(images[:split], labels[:split], batch_size=64),
                      validation_data=image_dataset(images[split:], labels[split:], batch_size=64),
                      epochs=EPOCHS, shuffle=False, verbose=0, callbacks=[callback])
    histories["cnn"] = history.history
    return root, histories


def test_each_run_writes_train_and_validation_event_files(logged):
    root, histories = logged
    found = {(run, split) for run, split, _ in event_dirs(root)}
    assert found == {(run, split) for run in histories for split in ("train", "validation")}
    for run in histories:
        for split in ("train", "validation"):
            files = list((root / run / split).glob("events.out.tfevents.*"))
            assert len(files) == 1, f"{run}/{split}: one event file per run and split"


def test_the_epoch_scalars_hold_one_step_per_epoch(logged):
    root, histories = logged
    rows = read_scalars(root, [])
    for run in histories:
        assert EPOCH_TAGS | {"epoch_learning_rate"} <= {r.tag for r in rows if (r.run, r.split) == (run, "train")}
        for split in ("train", "validation"):
            for tag in EPOCH_TAGS:
                steps, _ = series(rows, run, tag, split)
                assert steps == list(range(EPOCHS)), f"{run}/{split}/{tag}: one step per epoch"


def test_scalars_are_tensor_summaries_so_the_common_recipe_finds_nothing(logged):
    """EventAccumulator(...).Scalars() is empty for TF2 logs (docs/references.md#tensor-summaries)."""
    from tensorboard.backend.event_processing import event_accumulator as ea

    root, _ = logged
    acc = ea.EventAccumulator(str(root / "cnn" / "validation"), size_guidance={ea.TENSORS: 0})
    acc.Reload()
    assert acc.Tags()["scalars"] == []
    assert EPOCH_TAGS <= set(acc.Tags()["tensors"])


def test_the_reader_equals_keras_history(logged):
    root, histories = logged
    rows = read_scalars(root, [])
    assert rows and all(isinstance(r, Scalar) for r in rows)
    for run, history in histories.items():
        for key, values in history.items():
            split, metric = ("validation", key[4:]) if key.startswith("val_") else ("train", key)
            steps, logged_values = series(rows, run, f"epoch_{metric}", split)
            assert steps == list(range(len(values)))
            # TensorBoard stores float32; History holds the same float32 numbers as Python floats
            assert np.array_equal(np.float32(logged_values), np.float32(values)), (run, key)


def test_filters_and_the_order_of_the_table(logged):
    root, _ = logged
    rows = read_scalars(root, [], runs=["cnn"], tags=["epoch_loss"])
    assert {(r.run, r.tag) for r in rows} == {("cnn", "epoch_loss")}
    assert [r.split for r in rows] == ["train"] * EPOCHS + ["validation"] * EPOCHS, "sorted: train first"
    assert [r.step for r in rows] == [*range(EPOCHS), *range(EPOCHS)]


def test_the_profiled_run_is_not_mistaken_for_a_run(logged):
    root, _ = logged
    assert list((root / "cnn" / "train" / "plugins" / "profile").glob("*/*.xplane.pb"))
    assert all("plugins" not in str(folder.relative_to(root)) for _, _, folder in event_dirs(root))


def test_legacy_simple_value_scalars_are_read_too(tmp_path):
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    writer = EventFileWriter(str(tmp_path / "old" / "train"))
    for step, value in enumerate([0.5, 0.25]):
        summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag="loss", simple_value=value)])
        writer.add_event(event_pb2.Event(step=step, wall_time=1.0, summary=summary))
    writer.close()
    assert [(r.run, r.split, r.tag, r.step, r.value) for r in read_scalars(tmp_path, [])] == [
        ("old", "train", "loss", 0, 0.5), ("old", "train", "loss", 1, 0.25)]


def test_command_line_prints_the_table_as_csv(logged, capsys):
    root, histories = logged
    assert main([str(root), "--run", "cnn", "--tag", "epoch_accuracy"]) == 0
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["split"], int(r["step"])) for r in table] == [("train", s) for s in range(EPOCHS)] + [
        ("validation", s) for s in range(EPOCHS)]
    assert float(table[-1]["value"]) == pytest.approx(histories["cnn"]["val_accuracy"][-1], rel=1e-6)
    assert main([os.fspath(root / "missing")]) == 2


# --- damaged event files: named, and every record that can be read is still read (no TensorFlow writer needed) --


def write_loss_events(folder, steps=10):
    """A legacy-scalar event file (like any writer's): a version record, then one ``loss`` record per step."""
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    writer = EventFileWriter(str(folder))
    for step in range(steps):
        summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag="loss", simple_value=1.0 / (step + 1))])
        writer.add_event(event_pb2.Event(step=step, wall_time=1.0 + step, summary=summary))
    writer.close()
    (path,) = folder.glob("events.out.tfevents.*")
    return path


def record_offsets(data):
    """Where each TFRecord starts: 8-byte length, 4-byte CRC of it, the data, 4-byte CRC of the data."""
    import struct

    offsets, at = [], 0
    while at < len(data):
        offsets.append(at)
        at += 16 + struct.unpack_from("<Q", data, at)[0]
    return offsets


def logged_steps(out):
    return [int(r["step"]) for r in csv.DictReader(io.StringIO(out))]


def test_an_event_file_cut_mid_record_is_named_and_its_whole_records_are_read(tmp_path, capsys):
    path = write_loss_events(tmp_path / "run" / "train")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 7])  # the writer was killed inside the last record
    assert main([str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert logged_steps(out) == list(range(9)), "every complete record is still read"
    assert str(path) in err and "10 whole records read" in err and "cut off" in err  # 9 steps + the version
    assert "1 event file is damaged" in err


def test_a_record_that_fails_its_checksum_is_skipped_and_the_records_after_it_are_read(tmp_path, capsys):
    path = write_loss_events(tmp_path / "run" / "train")
    data = bytearray(path.read_bytes())
    data[record_offsets(data)[4] + 14] ^= 0xFF  # a byte inside record 4's data: step 3's scalar
    path.write_bytes(bytes(data))
    assert main([str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert logged_steps(out) == [0, 1, 2, 4, 5, 6, 7, 8, 9], "TensorBoard alone stops at the bad record"
    assert str(path) in err and "1 record failed its checksum (CRC32C)" in err


def test_a_damaged_record_header_is_stepped_over_to_the_next_whole_record(tmp_path):
    path = write_loss_events(tmp_path / "run" / "train")
    data = bytearray(path.read_bytes())
    data[record_offsets(data)[4] + 2] ^= 0x40  # record 4's length: nothing says where record 5 starts
    path.write_bytes(bytes(data))
    damaged = []
    rows = read_scalars(tmp_path, damaged)
    assert [r.step for r in rows] == [0, 1, 2, 4, 5, 6, 7, 8, 9]
    (found,) = damaged
    assert found.path == path and found.records == 10 and found.skipped_bytes + found.cut_bytes > 0 and not found.cut
    assert "could not be read as records" in found.describe()


def test_whole_event_files_are_read_as_they_are(tmp_path, capsys):
    write_loss_events(tmp_path / "run" / "train")
    damaged = []
    assert [r.step for r in read_scalars(tmp_path, damaged)] == list(range(10)) and damaged == []
    assert main([str(tmp_path)]) == 0 and capsys.readouterr().err == ""
