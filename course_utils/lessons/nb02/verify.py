"""Notebook 02's answer: can TensorFlow use a GPU here - one plain sentence, and where to read more.

``gpu_answer(...)`` turns what the notebook saw (its own TensorFlow calls) into "TensorFlow can use a GPU here:
yes/no, because ...", with the troubleshooting entry to read when the answer is no.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from course_utils.core.i18n import translator
from course_utils.device import check_device
from course_utils.doctor.model import Finding, worst_first
from course_utils.doctor.troubleshooting import page, see

_ = translator("course")


def short_device(name: str) -> str:
    """'/job:localhost/replica:0/task:0/device:GPU:0' -> 'GPU:0'."""
    return name.rsplit("device:", 1)[-1]


INDEX = "index"  # the anchor of the troubleshooting page's index, in docs/troubleshooting.md and docs/zh/


@dataclass(frozen=True)
class GpuAnswer:
    """Can TensorFlow use a GPU here? ``usable``, the reason in words, and where to read more."""

    usable: bool
    because: str
    see: str  # "docs/troubleshooting.md#<anchor>" (docs/zh/ in Chinese): the entry that fits what the doctor found
    finding: str | None = None  # the code of the doctor's finding that ``see`` explains

    def __str__(self) -> str:
        said = (_("TensorFlow can use a GPU here: yes, because {because}") if self.usable
                else _("TensorFlow can use a GPU here: no, because {because}"))
        return said.format(because=self.because)

    def advice(self) -> str:
        """What to do next, in one line."""
        if self.usable:
            return _("The GPU works: without a tf.device scope, TensorFlow puts work on it.")
        if self.finding:
            return _("No GPU: TensorFlow runs on the CPU here. The doctor's main finding is {finding}. See {see}, or "
                     "run `course doctor` in a terminal.").format(finding=self.finding, see=self.see)
        return _("No GPU: TensorFlow runs on the CPU here. See {see}, or run `course doctor` in a terminal.").format(
            see=self.see)

    def as_asked(self, device: str) -> bool:
        """The checkpoint's test: False only when ``device`` is "gpu" (a GPU was asked for) and none is usable."""
        return self.usable or check_device(device) != "gpu"

    def label(self, device: str) -> str:
        """The checkpoint line: the answer, and what DEVICE asked for."""
        choice = check_device(device)
        said = _("{answer}; DEVICE={choice!r} requires a GPU") if choice == "gpu" else _(
            "{answer}; DEVICE={choice!r} accepts the CPU")
        return said.format(answer=self, choice=choice)


def gpu_answer(
    gpus: Sequence[str], placed: Iterable[tuple[str, str]], why_not: str, findings: Iterable[Finding] = ()
) -> GpuAnswer:
    """The answer from what the notebook saw: the GPUs TensorFlow lists, where each product placed on a device
    ran (``(asked, ran)``), TensorFlow's reason for no GPU (``device.why_no_gpu``) and the doctor's findings. Yes
    needs both a GPU listed and a product placed on a GPU that ran there.
    """
    # The troubleshooting entry of the worst finding that has one (errors, then warnings, then infos), and that
    # finding's code; else the page's index and None. Both in the page of the language now (docs/zh/ in Chinese).
    index = f"{page()}#{INDEX}"
    linked = ((link, finding.code) for finding in worst_first(list(findings)) if (link := see(finding.code)))
    link, code = next(linked, (index, None))
    on_gpu = [short_device(ran) for asked, ran in placed
              if "GPU" in short_device(asked) and short_device(asked) == short_device(ran)]
    if gpus and on_gpu:
        because = (_("TensorFlow lists {count} GPUs ({names}), and a matrix product placed on {device} ran there")
                   if len(gpus) > 1 else
                   _("TensorFlow lists {count} GPU ({names}), and a matrix product placed on {device} ran there"))
        return GpuAnswer(True, because.format(count=len(gpus), names=", ".join(gpus), device=on_gpu[0]),
                         index)
    if gpus:
        return GpuAnswer(False, _("TensorFlow lists {count} GPU(s), but no matrix product placed on a GPU ran "
                                  "there").format(count=len(gpus)), link, code)
    return GpuAnswer(False, why_not, link, code)
