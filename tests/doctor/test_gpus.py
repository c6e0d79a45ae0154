"""course_utils.doctor.gpus: a GPU's generation, and whether a TensorFlow build has code for it."""

from __future__ import annotations

import pytest

from course_utils.doctor.gpus import Target, build_targets, covered_by_build, identify, known_failure, parse_target
from course_utils.doctor.versions import load

# TF 2.21's wheels, as tf.sysconfig.get_build_info()["cuda_compute_capabilities"] lists them on TF 2.21.0.
TF_2_21 = ["sm_60", "sm_70", "sm_80", "sm_89", "compute_90"]
RTX_50_ISSUES = {
    "https://github.com/tensorflow/tensorflow/issues/111958",
    "https://github.com/tensorflow/tensorflow/issues/89272",
    "https://github.com/tensorflow/tensorflow/issues/99592",
}


def test_the_table_holds_tf_2_21s_build_list():
    assert list(build_targets("2.21")) == TF_2_21
    assert build_targets("2.21.0") == build_targets("2.21")
    with pytest.raises(ValueError, match="get_build_info"):
        build_targets("2.15")


# ----------------------------------------------------------------- the binary-compatibility rules


@pytest.mark.parametrize(
    "gpu, cc, via, jit",
    [
        ("GTX 1080", "6.1", "sm_60", False),  # a 6.0 cubin runs on 6.1
        ("A100", "8.0", "sm_80", False),
        ("RTX 3060", "8.6", "sm_80", False),  # 8.0 code on an 8.6 card, not the 8.9 one
        ("H100", "9.0", "compute_90", True),  # no sm_90 cubin: the driver compiles the PTX
        ("GTX 960", "5.2", None, False),  # Maxwell and older: nothing in TF 2.21 runs on them
    ],
)
def test_tf_2_21_covers_pascal_and_newer_and_nothing_older(gpu, cc, via, jit):
    coverage = covered_by_build(cc, TF_2_21)
    assert (coverage.covered, coverage.via, coverage.jit) == (via is not None, via, jit), coverage.reason
    assert (via or cc) in coverage.reason and known_failure(cc) is None


def test_a_cubin_never_crosses_a_major_version():
    # sm_89 is the newest cubin, but 9.0 is only reached by PTX; and an 8.x cubin does not run on 8.x below it
    assert covered_by_build("9.0", ["sm_80", "sm_89"]).covered is False
    assert covered_by_build("8.6", ["sm_89"]).covered is False
    assert covered_by_build("8.9", ["sm_86"]).via == "sm_86"


def test_ptx_runs_on_its_own_and_every_newer_generation_only():
    assert covered_by_build("8.0", ["compute_80"]).jit
    assert covered_by_build("10.0", ["compute_90"]).jit
    assert "untested" in covered_by_build("10.0", ["compute_90"]).reason  # newer than anything the build targets
    assert covered_by_build("7.5", ["compute_80"]).covered is False


def test_arch_specific_targets_run_on_exactly_one_generation():
    assert covered_by_build("9.0", ["sm_90a"]).covered and not covered_by_build("10.0", ["sm_90a"]).covered


def test_rtx_50_series_is_covered_by_the_rules_but_a_known_failure():
    coverage = covered_by_build("12.0", TF_2_21)
    assert coverage.covered and coverage.jit and coverage.via == "compute_90"  # what the rules alone say
    assert set(known_failure("12.0")["issues"]) == RTX_50_ISSUES
    assert all(url in coverage.reason for url in RTX_50_ISSUES)


def test_a_known_failure_is_claimed_only_up_to_the_release_it_was_checked_on():
    assert known_failure("12.0", "2.21.0") is not None and known_failure("12.0") is not None
    assert known_failure("12.0", "2.22") is None  # a later release: the course makes no claim
    assert known_failure("9.0") is None and known_failure("13.0") is None


@pytest.mark.parametrize("target", [Target("sm_120", "sm", 12, 0, False), Target("compute_90", "compute", 9, 0, False),
                                    Target("sm_90a", "sm", 9, 0, True)], ids=lambda target: target.text)
def test_targets_parse_with_two_digit_majors_and_arch_specific_suffixes(target):
    assert parse_target(target.text) == target


@pytest.mark.parametrize("bad", ["8.6.1", "eight", "", None, "86"])
def test_an_unreadable_compute_capability_is_a_clear_error(bad):
    with pytest.raises(ValueError, match="not a version like '8.6'"):
        covered_by_build(bad, TF_2_21)


@pytest.mark.parametrize("bad", ["sm80", "compute_", "ptx_90", "8.0"])
def test_an_unreadable_build_target_is_a_clear_error(bad):
    with pytest.raises(ValueError, match="get_build_info"):
        covered_by_build("8.6", ["sm_60", bad])


def test_a_cpu_only_build_has_no_targets_and_says_so():
    with pytest.raises(ValueError, match="CPU-only"):
        covered_by_build("8.6", [])


# ----------------------------------------------------------------- the GPU's generation from its name


@pytest.mark.parametrize(
    "name, cc",
    [
        # names as nvidia-smi prints them, several from the captured outputs in tests/fixtures/nvidia
        ("NVIDIA GeForce GTX 960", "5.2"),
        ("NVIDIA GeForce GTX 960M", "5.0"),  # the mobile 960M is first-generation Maxwell
        ("GeForce GTX 1080", "6.1"),
        ("NVIDIA GeForce GTX 1650", "7.5"),
        ("NVIDIA GeForce RTX 2080 Ti", "7.5"),
        ("Tesla T4", "7.5"),
        ("Tesla V100-SXM2-16GB", "7.0"),
        ("NVIDIA A100-SXM...", "8.0"),
        ("NVIDIA GeForce RTX 3060 Laptop GPU", "8.6"),
        ("NVIDIA GeForce RTX 4070 ...", "8.9"),  # cut by nvidia-smi's table, but the model is readable
        ("NVIDIA L4", "8.9"),
        ("NVIDIA H100 80GB HBM3", "9.0"),
        ("NVIDIA GeForce RTX 5090", "12.0"),
    ],
)
def test_generation_from_the_name(name, cc):
    generation = identify(name)
    assert (generation.compute_capability, generation.source) == (cc, "name")
    assert load().gpus["families_source"] in generation.describe()


@pytest.mark.parametrize("name", ["NVIDIA GeForce ...", "NVIDIA Graphics Device", "", None])
def test_a_name_that_does_not_tell_is_unknown(name):
    generation = identify(name)
    assert not generation.known and generation.source is None
    assert generation.to_dict() == {"compute_capability": None, "from": None, "family": None}


def test_a_reported_compute_capability_wins_over_the_name():
    generation = identify("NVIDIA GeForce ...", "8.6")
    assert (generation.compute_capability, generation.source) == ("8.6", "reported")
    assert "reported" in generation.describe()
    tuple_given = identify("NVIDIA GeForce RTX 3060", (8, 6))  # as TensorFlow's get_device_details gives it
    assert (tuple_given.compute_capability, tuple_given.family) == ("8.6", "Ampere (GeForce RTX 30 series)")
