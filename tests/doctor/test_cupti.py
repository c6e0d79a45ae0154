"""The profiler's GPU trace refused: CUPTI's privilege error in a real TF 2.2 log (the TF 2.21 line and a missing CUPTI,
each a line of test_log_rules; their troubleshooting links: findings.json's "see", tests/test_troubleshooting.py)."""

from __future__ import annotations

from course_utils.doctor.logs import classify
from course_utils.doctor.model import log_findings

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


def test_both_refused_calls_are_one_finding_and_the_follow_up_is_left_unknown():
    report = classify(TF22_REFUSED)
    assert report.gpu is True  # only a machine where the profiler found a GPU prints these lines
    refused = [e for e in report.entries if e.code == "cupti-insufficient-privileges"]
    assert [e.lines for e in refused] == [[3], [4]]
    assert [(f.code, f.severity) for f in log_findings(report)] == [("cupti-insufficient-privileges", "error")]
    follow_up = report.entries[-1]
    assert follow_up.verdict == "unknown" and "CUPTI_ERROR_INVALID_PARAMETER" in follow_up.message

