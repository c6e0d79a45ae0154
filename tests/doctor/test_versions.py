"""The version table: complete, ordered, sourced, and self-consistent."""

from __future__ import annotations

import pytest

from course_utils.doctor import versions
from course_utils.doctor.recommend import recommend
from course_utils.doctor.versions import load, parse_version

TF_MINORS = [f"2.{n}" for n in range(4, 22)]


def test_linux_table_covers_tf_2_4_to_2_21_newest_first():
    table = load()
    assert [b.minor for b in table.linux] == TF_MINORS[::-1]
    assert [b.minor for b in table.windows] == ["2.10", "2.9", "2.8", "2.7", "2.6", "2.5", "2.4"]


def test_the_build_rows_name_tensorflows_tested_configurations():  # every source is https: test_data_files.py
    data = versions.read_data("versions")
    linux = {r["source"] for r in data["linux_gpu"]}
    windows = {r["source"] for r in data["windows_native_gpu"]}
    assert linux == {"https://www.tensorflow.org/install/source#gpu"}
    assert windows == {"https://www.tensorflow.org/install/source_windows#gpu"}


def test_rules_agree_with_the_tables():
    table = load()
    assert table.rule("windows-native-gpu-last")["last"] == table.windows[0].minor
    assert "cudatoolkit=11.2 cudnn=8.1.0" in table.rule("windows-native-recipe")["conda"]
    assert table.rule("windows-native-recipe")["requirement"] == "tensorflow<2.11"
    assert table.rule("tensorboard-separate")["since"] == table.linux[0].minor
    assert table.rule("and-cuda")["since"] in [b.minor for b in table.linux]
    assert table.rule("linux-driver-min")["driver_min"] == table.min_driver(12, "linux")


@pytest.mark.parametrize(
    "driver, platform, major",
    [
        ("452.39", "windows", 11),
        ("452.38", "windows", None),
        ("450.80.02", "linux", 11),
        ("450.80.01", "linux", None),
        ("525.60.13", "linux", 12),
        ("525.60.12", "linux", 11),
        ("528.33", "windows", 12),
        ("528.32", "windows", 11),
        ("527.41", "wsl2", 11),  # NVIDIA's CUDA 12 minimum on native Windows: not enough under WSL2
        ("528.33", "wsl2", 12),
        ("580.126.09", "linux", 13),
        ("not a driver", "linux", None),
    ],
)
def test_driver_cuda_major_follows_nvidia_minimums(driver, platform, major):
    assert load().driver_cuda_major(driver, platform) == major


def test_no_gpu_build_on_macos_and_the_pythons_linux_builds_span():  # newest() by Python: test_recommend
    table = load()
    assert table.newest("macos") is None
    assert table.python_range("linux") == ("3.6", "3.13")


def test_parse_version_is_lenient():
    assert parse_version("512.77") == (512, 77)
    assert parse_version("v12.5") == (12, 5)
    assert parse_version("3.11.4") == (3, 11, 4)
    assert parse_version("ERR!") is None and parse_version("N/A") is None and parse_version(None) is None


def test_unknown_platform_is_rejected():  # recommend() asks the table for the platform's builds
    with pytest.raises(ValueError, match="not one of"):
        recommend("solaris")


@pytest.mark.parametrize(
    "tensorflow, pin, keras_2",
    [
        ("2.11", "numpy<2", True),
        ("2.12", None, True),  # 2.12-2.17 cap NumPy below 2 themselves
        ("2.16.1", None, False),
        ("not a version", None, False),
    ],
)
def test_numpy_1_and_keras_2_lines(tensorflow, pin, keras_2):
    table = load()
    assert table.numpy_pin(tensorflow) == pin and table.keras_2(tensorflow) is keras_2
