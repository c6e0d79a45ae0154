"""The doctor: which TensorFlow to install on a machine, and what stands in the way of its GPU.

``course doctor`` (``course_utils.doctor.cli``; docs/instructors.md describes its options, exit status and
JSON, a stable contract) diagnoses this machine, one described by captured ``nvidia-smi`` / ``nvcc`` text, or a pasted
TensorFlow log. A finding has a stable ``code``, a ``severity``, a ``message`` and a ``fix``. With
``COURSE_LANG=zh-CN`` its sentences - in the JSON too - are Chinese; codes and keys never change: match on the codes.

Where each part lives (this file only imports the names other code uses): ``model`` (``Finding``, ``Machine``,
``Diagnosis``; notes and log lines as findings), ``probes`` (looking at a machine and its live checks; the pip
libraries' in ``libraries``), ``rules`` (the rule families and ``diagnose``), ``recommend`` (what to install, with a
platform's routes and their commands) and ``versions``, ``nvidia`` (reading NVIDIA's tools), ``gpus`` (a GPU's
generation), ``logs`` (a TensorFlow log), ``troubleshooting`` and ``texts``.
"""

from __future__ import annotations

from course_utils.doctor.model import Finding, Machine, TensorFlowInfo
from course_utils.doctor.probes import describe, detect_platform, probe
from course_utils.doctor.rules import diagnose

__all__ = ["Finding", "Machine", "TensorFlowInfo", "describe", "detect_platform", "diagnose", "probe"]
