"""The profiler's GPU trace: CUPTI refused (the driver keeps the GPU's performance counters for administrators) or
not found. `course doctor --log` names the line, says what to do and links its troubleshooting entry, in English and
in Chinese (COURSE_LANG or a Chinese locale)."""

from __future__ import annotations

import pytest

from course_utils.core import variables
from course_utils.core.i18n import LOCALE_VARIABLES
from course_utils.doctor.logs import classify
from course_utils.doctor.model import log_findings
from course_utils.doctor.troubleshooting import see

# As tensorflow/tensorflow#39143 printed them (TF 2.2, CUDA 10.1), the lines tensorflow/tensorflow#35860 is about.
TF22_REFUSED = """\
2020-05-06 22:12:04.575505: I tensorflow/core/profiler/internal/gpu/cupti_tracer.cc:1372] Profiler found 1 GPUs
2020-05-06 22:12:04.576324: I tensorflow/stream_executor/platform/default/dso_loader.cc:44] Successfully opened \
dynamic library libcupti.so.10.1
2020-05-06 22:12:04.677122: E tensorflow/core/profiler/internal/gpu/cupti_tracer.cc:1419] function \
cupti_interface_->Subscribe( &subscriber_, (CUpti_CallbackFunc)ApiCallback, this)failed with error \
CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
2020-05-06 22:12:04.678646: E tensorflow/core/profiler/internal/gpu/cupti_tracer.cc:1458] function \
cupti_interface_->ActivityRegisterCallbacks( AllocCuptiActivityBuffer, FreeCuptiActivityBuffer)failed with error \
CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
2020-05-06 22:12:04.681355: E tensorflow/core/profiler/internal/gpu/cupti_tracer.cc:1441] function \
cupti_interface_->EnableCallback( 0 , subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid)failed with error \
CUPTI_ERROR_INVALID_PARAMETER
"""
# Composed in the TF 2.21 log format (absl prefix, as in linux_no_gpu_tf2.21_captured.txt): the message is the
# TF 2.21.0 wheel's own text ("function " + the call + "failed with error " + CUPTI's name for the error).
TF221_REFUSED = (
    "E0000 00:00:1796305095.201736   29611 cupti_tracer.cc:1121] function Subscribe(&subscriber_, "
    "(CUpti_CallbackFunc)ApiCallback, this)failed with error CUPTI_ERROR_INSUFFICIENT_PRIVILEGES\n"
)
# As aws/deep-learning-containers#251 printed it (TF 2.2); the second is TF 2.21's text in TensorBoard's Profile page.
NOT_FOUND = (
    "2020-06-03 01:47:51.923816: W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load "
    "dynamic library 'libcupti.so.10.1'; dlerror: libcupti.so.10.1: cannot open shared object file: No such file or "
    "directory; LD_LIBRARY_PATH: /usr/local/openmpi/lib:/usr/local/nvidia/lib:/usr/local/nvidia/lib64\n"
)
PROFILE_PAGE = "Failed to load libcupti (is it installed and accessible?)\n"


@pytest.fixture
def english(monkeypatch):
    for name in (variables.LANG, *LOCALE_VARIABLES):
        monkeypatch.setenv(name, "")  # recorded, so restored afterwards whatever the test sets
        monkeypatch.delenv(name)
    return monkeypatch


@pytest.mark.parametrize("log", [TF22_REFUSED, TF221_REFUSED,
                                 "Insufficient privilege to run libcupti (you need root permission).\n"])
def test_the_privilege_error_is_the_problem_on_a_machine_with_a_gpu(english, log):
    report = classify(log)
    assert report.problem.code == "cupti-insufficient-privileges"
    assert report.gpu is True  # only a machine where the profiler found a GPU prints it
    assert report.problem.rule.source.startswith("https://developer.nvidia.com/")
    assert see(report.problem.code) == "docs/troubleshooting.md#cupti-privileges"


def test_both_refused_calls_are_one_finding_and_the_follow_up_is_left_unknown(english):
    report = classify(TF22_REFUSED)
    refused = [e for e in report.entries if e.code == "cupti-insufficient-privileges"]
    assert [e.lines for e in refused] == [[3], [4]]
    assert [(f.code, f.severity) for f in log_findings(report)] == [("cupti-insufficient-privileges", "error")]
    follow_up = report.entries[-1]
    assert follow_up.verdict == "unknown" and "CUPTI_ERROR_INVALID_PARAMETER" in follow_up.message


@pytest.mark.parametrize("log", [NOT_FOUND, PROFILE_PAGE])
def test_a_missing_cupti_matters_only_with_a_gpu_and_is_not_the_general_library_rule(english, log):
    unknown = classify(log)
    assert [e.code for e in unknown.entries] == ["cupti-not-loaded"] and unknown.entries[0].verdict == "depends"
    assert classify(log, gpu=True).problem.code == "cupti-not-loaded"
    assert see("cupti-not-loaded") == "docs/troubleshooting.md#cupti-not-found"
