"""Notebook 01's install picker (platform, Python and driver in, the install command out) and its timeline.

The widget holds no version knowledge: its button calls ``doctor.recommend.routes``, as the doctor does, and tests
click it: ``InstallPicker(platform="windows", python="3.10", driver="512.77").click()``. Its starting values
(``PLATFORM``, ``PYTHON``) are checked with a ``ParameterError`` naming the parameter. ``timeline(table)`` draws
the version table.
"""

from __future__ import annotations

import html
from typing import Any

from course_utils.core.errors import ParameterError
from course_utils.core.i18n import N_, translator
from course_utils.doctor.recommend import PLATFORM_NAMES, Recommendation, in_order, routes
from course_utils.doctor.versions import parse_version

_ = translator("course")

PYTHONS = ("3.7", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14")


def check_inputs(platform: object, python: object) -> None:
    """Refuse a platform or Python the picker does not offer, naming the notebook parameter (``ParameterError``)."""
    if platform not in PLATFORM_NAMES:
        raise ParameterError(_("{name} = {value!r} is not a platform.").format(name="PLATFORM", value=platform),
                             _("Set {name} to one of {choices}.").format(
                                 name="PLATFORM", choices=", ".join(map(repr, PLATFORM_NAMES))))
    if python not in PYTHONS:
        raise ParameterError(
            _("{name} = {value!r} is not one of the picker's Python versions.").format(name="PYTHON", value=python),
            _("Set {name} to one of {choices}, written as text: '3.10'.").format(
                name="PYTHON", choices=", ".join(PYTHONS)))


def render(recommendations: list[Recommendation]) -> str:
    """The recommendations as a small HTML block: requirement (and the mark of a route the course's notebooks do not
    run on), commands, notes (their text, the code as data-code)."""
    parts = []
    for n, rec in enumerate(recommendations):
        title = _("Install") if n == 0 else _("Or")
        commands = html.escape("\n".join(rec.commands))
        notes = "".join(f'<li data-code="{html.escape(note.code)}">{html.escape(note.text)}</li>' for note in rec.notes)
        where, requirement = html.escape(rec.title()), html.escape(rec.tensorflow)
        mark = html.escape(rec.mark_suffix())  # a route the course's notebooks do not run on
        parts.append(
            f"<h4>{title} - {where}: <code>{requirement}</code>{mark}</h4><pre>{commands}</pre>"
            + (f"<ul>{notes}</ul>" if notes else "")
        )
    return "\n".join(parts)


def text(recommendations: list[Recommendation]) -> str:
    """The same as plain text, for printing."""
    heads = [_("Install") if n == 0 else _("Or") for n in range(len(recommendations))]
    return "\n\n".join(f"{head} - {rec.text()}" for head, rec in zip(heads, recommendations, strict=True))


class InstallPicker:
    """Three inputs (platform, Python, driver), a button, and the answer of ``recommend``."""

    def __init__(self, platform: str = "linux", python: str = "3.11", driver: str = "") -> None:
        check_inputs(platform, python)
        import ipywidgets as widgets

        self.platform = widgets.Dropdown(
            options=[(f"{_(name)} ({key})", key) for key, name in PLATFORM_NAMES.items()],
            value=platform,
            description=_("Platform"),
        )
        self.python = widgets.Dropdown(options=list(PYTHONS), value=python, description="Python")
        self.driver = widgets.Text(
            value=driver, description=_("Driver"), placeholder=_("from nvidia-smi, e.g. 512.77 (empty: unknown)")
        )
        self.button = widgets.Button(description=_("Show the install command"), button_style="primary")
        self.result = widgets.HTML()
        self.recommendations: list[Recommendation] = []
        self.button.on_click(self._update)
        self.box = widgets.VBox([self.platform, self.python, self.driver, self.button, self.result])

    def _update(self, _button=None) -> None:
        driver = self.driver.value.strip() or None
        try:
            self.recommendations = in_order(routes(self.platform.value, self.python.value, driver))
            self.result.value = render(self.recommendations)
        except Exception as error:  # noqa: BLE001 - a widget callback must show the problem, not die silently
            self.recommendations = []
            self.result.value = f"<b>{html.escape(_('Could not recommend:'))}</b> {html.escape(str(error))}"

    def click(self) -> list[Recommendation]:
        """Press the button (what a student does); returns the recommendations it showed."""
        self.button.click()
        return self.recommendations

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.box)


# The rule changes the timeline marks: (rule id in versions.json, label).
MARKERS = (("and-cuda", "[and-cuda]"), ("keras-3", "Keras 3"), ("compute-capability-5-dropped", N_("no CC 5.x")),
           ("numpy-2", "NumPy 2"), ("tensorboard-separate", N_("TensorBoard separate")))


def timeline(table: Any):
    """Notebook 01's picture of the version table: CUDA and cuDNN per release (top), the tested Pythons (bottom),
    the native-Windows GPU releases (blue band) and the rule changes (dashed lines). Returns the figure."""
    import matplotlib.pyplot as plt

    builds = list(reversed(table.linux))  # oldest first
    where = {b.minor: i for i, b in enumerate(builds)}
    x = list(range(len(builds)))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 6.5), sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    for column, color, label, offset in (("cuda", "tab:green", "CUDA", 6), ("cudnn", "tab:purple", "cuDNN", -14)):
        values = [getattr(b, column) for b in builds]
        top.step(x, [float(v) for v in values], where="mid", lw=2.5, color=color, label=label)
        for i, value in enumerate(values):
            if i == 0 or value != values[i - 1]:
                top.annotate(value, (i, float(value)), textcoords="offset points", xytext=(0, offset), ha="center",
                             color=color)
    top.set_ylabel(_("version built with"))
    top.set_ylim(7, 13.5)
    low = [parse_version(b.python_min)[1] for b in builds]
    high = [parse_version(b.python_max)[1] for b in builds]
    bottom.bar(x, [h - lo + 1 for lo, h in zip(low, high, strict=True)], bottom=[lo - 0.5 for lo in low],
               color="tab:orange", alpha=0.7, width=0.7, label=_("Python versions tested"))
    bottom.set_yticks(range(6, 14), [f"3.{m}" for m in range(6, 14)])
    bottom.set_ylabel("Python")
    bottom.set_ylim(5.4, 13.6)
    windows_last = where[table.rule("windows-native-gpu-last")["last"]]
    for axis in (top, bottom):
        axis.axvspan(-0.5, windows_last + 0.5, color="tab:blue", alpha=0.08)
        for rule_id, _label in MARKERS:
            axis.axvline(where[table.rule(rule_id)["since"]] - 0.5, color="grey", ls="--", lw=1)
    top.text(windows_last / 2, 12.9, _("native-Windows GPU builds (2.4-2.10)"), ha="center", color="tab:blue")
    for rule_id, label in MARKERS:
        top.text(where[table.rule(rule_id)["since"]] - 0.42, 9.5, _(label), rotation=90, va="bottom", fontsize=8,
                 color="grey")
    bottom.set_xticks(x, [b.minor for b in builds])
    bottom.set_xlabel(_("TensorFlow release"))
    top.legend(loc="lower right", ncol=2)
    top.set_title(_("TensorFlow GPU builds 2.4-2.21: what each was built and tested with "
                    "(tensorflow.org/install/source)"))
    fig.tight_layout()
    return fig
