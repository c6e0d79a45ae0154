"""diagnose() sees the GPU's generation: too old, a known failure, covered through PTX, or not told by its name."""

from __future__ import annotations

import pytest

from course_utils.doctor import describe, diagnose
from course_utils.doctor.gpus import QUERY_COMMAND, build_targets, covered_by_build, known_failure
from course_utils.doctor.recommend import recommend
from course_utils.doctor.versions import load

from ..conftest import ROOT
from .test_doctor import finding

FIXTURES = ROOT / "tests" / "fixtures" / "nvidia"
QA_SMI = (FIXTURES / "smi_qa_post_windows_512.77_wddm.txt").read_text()  # the Q&A post's nvidia-smi
QA_NVCC = (FIXTURES / "nvcc_qa_post_windows_11.7.txt").read_text()

GTX_960_SMI = (FIXTURES / "smi_linux_580.82.09_gtx960.txt").read_text()  # Maxwell, compute capability 5.2
# Constructed in the same format: an RTX 5090 (compute capability 12.0) on a 575 driver.
RTX_5090_QUERY = "name, compute_cap, driver_version\nNVIDIA GeForce RTX 5090, 12.0, 575.57.08\n"


def coverage_reason(cc: str) -> str:
    """What the report says about a GPU of compute capability ``cc`` and TF 2.21's wheels."""
    return covered_by_build(cc, build_targets("2.21")).reason


def test_the_qa_posts_cut_gpu_name_asks_for_the_compute_capability():
    result = diagnose(describe("windows", "3.10", QA_SMI, QA_NVCC))
    f = finding(result, "gpu-generation-unknown")
    assert f.severity == "info" and QUERY_COMMAND in f.fix
    assert f"run `{QUERY_COMMAND}`" in result.report()
    assert result.exit_code == 0


def test_a_captured_maxwell_card_is_warned_and_gets_the_last_tensorflow_with_its_kernels():
    result = diagnose(describe("linux", "3.12", GTX_960_SMI))
    f = finding(result, "gpu-too-old")
    assert f.severity == "warning" and "5.2" in f.message and "2.17" in f.message
    assert result.recommendation.tensorflow == "tensorflow[and-cuda]==2.16.*"
    assert 'pip install "tensorflow[and-cuda]==2.16.*"' in result.recommendation.commands
    assert not covered_by_build("5.2", build_targets("2.21")).covered and coverage_reason("5.2") in result.report()


def test_an_rtx_50_card_gets_a_sourced_warning():
    result = diagnose(describe("linux", "3.12", RTX_5090_QUERY))
    f = finding(result, "gpu-known-failure")
    assert f.severity == "warning"
    assert all(issue in f.message for issue in known_failure("12.0")["issues"])
    assert coverage_reason("12.0") in result.report()


def test_a_captured_supported_card_is_reported_covered():
    result, cc = diagnose(describe("linux", "3.12", (FIXTURES / "smi_linux_535.113.01_gtx1650.txt").read_text())), "7.5"
    assert result.recommendation.generation.compute_capability == cc and coverage_reason(cc) in result.report()
    assert not {"gpu-too-old", "gpu-known-failure"} & set(result.codes())


# ----------------------------------------------------------------- Hopper runs TF 2.21 only through PTX


def test_an_h100_on_a_driver_older_than_the_builds_cuda_is_told_to_update_it():
    # 535.161.08 supports CUDA 12.2: above the CUDA 12 minimum 525.60.13, below the 12.5 TF 2.21's PTX was made with
    result = diagnose(describe("linux", "3.12", (FIXTURES / "smi_linux_535.161.08_8x_h100.txt").read_text()))
    rec = result.recommendation
    assert (rec.driver_min, rec.driver_ok, rec.fallback) == ("555.42.06", False, None)
    old = finding(result, "driver-too-old")
    assert old.severity == "error" and "555.42.06" in old.message
    ptx = finding(result, "ptx-driver")
    assert "compute_90" in ptx.message and "12.5" in ptx.message and "525.60.13" not in ptx.message


@pytest.mark.parametrize("platform, gpu, driver, driver_cuda, minimum, ok", [
    # through PTX the driver number alone passes (555.99 >= 555.85); nvidia-smi's "CUDA Version" decides
    *(("wsl2", "NVIDIA H100 PCIe", "555.99", cuda, "555.85", cuda != "12.4") for cuda in ("12.4", "12.5")),
    ("linux", "NVIDIA A100-SXM4-80GB", "535.161.08", "12.2", "525.60.13", True),  # cubins: the CUDA 12 minimum
])
def test_a_gpu_reached_only_through_ptx_needs_a_driver_of_the_builds_cuda(platform, gpu, driver, driver_cuda, minimum,
                                                                         ok):
    rec = recommend(platform, "3.12", driver, gpu, driver_cuda=driver_cuda)
    assert (rec.driver_min, rec.driver_ok, "ptx-driver" in rec.note_codes()) == (minimum, ok, "H100" in gpu)


def test_a_maxwell_gpu_under_wsl2_is_told_wsl2_cannot_use_it_and_linux_still_gets_tf_2_16():
    wsl = diagnose(describe("wsl2", "3.11", GTX_960_SMI))
    assert load().rule("wsl2-gpu-generations")["text"] in finding(wsl, "gpu-too-old").message
    assert wsl.recommendation.tensorflow != "tensorflow[and-cuda]==2.16.*"  # no cap that would not help (Linux: above)
