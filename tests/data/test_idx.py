"""IDX parsing: magic numbers and sizes are checked, corrupt files named."""

from __future__ import annotations

import gzip
import struct

import numpy as np
import pytest

from course_utils.core.errors import DataError
from course_utils.data.idx import parse_idx, read_bytes


def read_idx(path, *, ndim=None):
    """One IDX file (optionally .gz) read and checked, as the loaders read theirs."""
    return parse_idx(read_bytes(path, limit=1 << 30), source=path, ndim=ndim)


def idx_bytes(array: np.ndarray) -> bytes:
    header = struct.pack(">BBBB", 0, 0, 0x08, array.ndim) + struct.pack(f">{array.ndim}I", *array.shape)
    return header + array.astype(np.uint8).tobytes()


def test_images_and_labels_round_trip(tmp_path):
    images = np.arange(3 * 28 * 28, dtype=np.uint32).reshape(3, 28, 28) % 256
    labels = np.array([7, 2, 1], dtype=np.uint8)
    (tmp_path / "img.gz").write_bytes(gzip.compress(idx_bytes(images)))
    (tmp_path / "lab").write_bytes(idx_bytes(labels))
    got = read_idx(tmp_path / "img.gz", ndim=3)
    assert got.dtype == np.uint8 and got.shape == (3, 28, 28)
    np.testing.assert_array_equal(got, images)
    np.testing.assert_array_equal(read_idx(tmp_path / "lab", ndim=1), labels)
    got[0, 0, 0] = 1  # a writable array, like Keras returns


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda b: b"\x00\x00\x0d\x03" + b[4:], "magic number"),  # float type, not unsigned bytes
        (lambda b: b[:-10], "truncated"),
        (lambda b: b + b"\x00" * 5, "longer than its header"),
        (lambda b: b[:6], "truncated inside its header"),
        (lambda b: b[:2], "too short"),
    ],
)
def test_corrupt_payloads_are_named(mutate, message, tmp_path):
    good = idx_bytes(np.zeros((2, 28, 28), dtype=np.uint8))
    path = tmp_path / "train-images-idx3-ubyte"
    path.write_bytes(mutate(good))
    with pytest.raises(DataError) as info:
        read_idx(path)
    assert message in info.value.what
    assert str(path) in info.value.what and str(path) in info.value.fix


def test_wrong_dimension_count():
    with pytest.raises(DataError, match="1 dimensions, expected 3"):
        parse_idx(idx_bytes(np.zeros(5, dtype=np.uint8)), ndim=3)


def test_corrupt_gzip_is_a_data_error(tmp_path):
    path = tmp_path / "labels.gz"
    path.write_bytes(gzip.compress(idx_bytes(np.zeros(5, dtype=np.uint8)))[:-12])
    with pytest.raises(DataError, match="not a readable"):
        read_idx(path)
