"""The doctor: which TensorFlow to install on a machine, and what stands in the way of its GPU.

``recommend.recommend(platform, python, driver, gpu)`` answers "what do I install?" from the version
table (``course_utils.doctor.versions``). ``diagnose()`` inspects this machine - platform,
``nvidia-smi``, ``nvcc``, TensorFlow's build info, devices and start-up log - or a machine
described by captured text, and returns ``Finding``s: a stable ``code``, a ``severity``
(info, warning, error), a ``message`` and a ``fix``.

Command line (``course_utils.tools.doctor_cli``; a stable contract: other tools read its JSON)::

    course doctor                       # this machine
    course doctor --nvidia-smi FILE [--nvcc FILE]
        [--platform linux|wsl2|windows|macos] [--python X.Y] [--json]
    course doctor --log FILE [--gpu | --no-gpu | --nvidia-smi FILE] [--json]   # a pasted TensorFlow log

On this machine the report also holds the live checks (``course_utils.doctor.checks``: the pip NVIDIA
libraries load, WSL2's plumbing, the Jupyter kernels' Pythons, a TensorFlow wheel for this Python),
grouped by what they look at. ``--log`` classifies each line of a TensorFlow log
(``course_utils.doctor.logs``): harmless, the problem, or depends on whether the machine has a GPU.

Exit status 0 unless a finding has severity "error" (then 1); 2 for a usage error. In the JSON,
a recommendation's ``notes`` are ``{"code": ..., "text": ...}`` objects: match on the code.

Language: ``COURSE_LANG=zh-CN course doctor`` reports in Simplified Chinese (``course_utils.core.i18n``,
catalogue domain "doctor"). Codes, severities, verdicts, commands, version numbers and the tools' own
words stay as they are. The JSON keeps its keys and structure in every language; its sentences for
people (a finding's ``message`` and ``fix``, a note's ``text``, nvidia-smi ``problems``, a log
entry's ``meaning`` and ``fix``, ``gpu_reason``) and its ``see`` links (the Chinese troubleshooting
page) follow the language too, so a program must match on the codes, never on the wording.

Where each part lives (this file is the package's face: it imports the names other code uses, nothing else):

- ``model``: the data - ``Finding``, ``Machine``, ``TensorFlowInfo``, ``Diagnosis`` (its JSON and its report) - and
  how notes and log lines become findings (``note_findings``, ``check_findings``, ``log_findings``, ``finding_groups``);
- ``probes``: looking at a machine - this one (``probe``, ``detect_platform``) or captured text (``describe``,
  ``guess_platform``);
- ``rules`` and ``rules_tensorflow``: the rule families (driver, route, toolkit, installed TensorFlow) and ``diagnose``;
- ``recommend`` and ``versions`` (what to install, from the table; ``routes`` adds a platform's alternatives,
  ``commands`` spells the command lines), ``nvidia`` (reading ``nvidia-smi`` and ``nvcc``),
  ``gpus`` (a GPU's generation), ``checks`` (the live checks' findings and ``live_checks``, which runs ``libraries``,
  ``wsl`` and ``kernels``), ``logs`` (a TensorFlow log's lines; ``log_rules``: what each kind of line means),
  ``troubleshooting`` (links to the troubleshooting page), ``texts`` (sentences in the language now).
"""

from __future__ import annotations

from course_utils.doctor.model import (
    MAIN_GROUP,
    NOTE_FINDINGS,
    SEVERITIES,
    Finding,
    Machine,
    TensorFlowInfo,
    check_findings,
    finding_groups,
    log_findings,
    note_findings,
)
from course_utils.doctor.probes import describe, detect_platform, guess_platform, probe
from course_utils.doctor.rules import diagnose

__all__ = [
    "MAIN_GROUP",
    "NOTE_FINDINGS",
    "SEVERITIES",
    "Finding",
    "Machine",
    "TensorFlowInfo",
    "check_findings",
    "describe",
    "detect_platform",
    "diagnose",
    "finding_groups",
    "guess_platform",
    "log_findings",
    "note_findings",
    "probe",
]
