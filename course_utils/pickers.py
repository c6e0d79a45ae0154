"""Notebook 01's install picker: platform, Python and driver in, the install command out.

The widget holds no version knowledge: its button calls ``course_utils.doctor.recommend.routes``,
the function the doctor and the tests use, and shows the result. The logic lives here,
not in the notebook, so tests can set the values and click the button::

    picker = InstallPicker(platform="windows", python="3.10", driver="512.77")
    picker.click()
    picker.recommendations[0].tensorflow   # 'tensorflow<2.11'
"""

from __future__ import annotations

import html

from course_utils.doctor.recommend import PLATFORM_NAMES, Recommendation, routes

PYTHONS = ("3.7", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14")


def render(recommendations: list[Recommendation]) -> str:
    """The recommendations as a small HTML block: requirement, commands, notes (their text, the code as data-code)."""
    parts = []
    for n, rec in enumerate(recommendations):
        title = "Install" if n == 0 else "Or"
        commands = html.escape("\n".join(rec.commands))
        notes = "".join(f'<li data-code="{html.escape(note.code)}">{html.escape(note.text)}</li>' for note in rec.notes)
        where, requirement = html.escape(rec.title()), html.escape(rec.tensorflow)
        parts.append(
            f"<h4>{title} - {where}: <code>{requirement}</code></h4><pre>{commands}</pre>"
            + (f"<ul>{notes}</ul>" if notes else "")
        )
    return "\n".join(parts)


def text(recommendations: list[Recommendation]) -> str:
    """The same as plain text, for printing."""
    return "\n\n".join(("Install - " if n == 0 else "Or - ") + rec.text() for n, rec in enumerate(recommendations))


class InstallPicker:
    """Three inputs (platform, Python, driver), a button, and the answer of ``recommend``."""

    def __init__(self, platform: str = "linux", python: str = "3.11", driver: str = "") -> None:
        import ipywidgets as widgets

        self.platform = widgets.Dropdown(
            options=[(f"{name} ({key})", key) for key, name in PLATFORM_NAMES.items()],
            value=platform,
            description="Platform",
        )
        self.python = widgets.Dropdown(options=list(PYTHONS), value=python, description="Python")
        self.driver = widgets.Text(
            value=driver, description="Driver", placeholder="from nvidia-smi, e.g. 512.77 (empty: unknown)"
        )
        self.button = widgets.Button(description="Show the install command", button_style="primary")
        self.result = widgets.HTML()
        self.recommendations: list[Recommendation] = []
        self.button.on_click(self._update)
        self.box = widgets.VBox([self.platform, self.python, self.driver, self.button, self.result])

    def _update(self, _button=None) -> None:
        driver = self.driver.value.strip() or None
        try:
            self.recommendations = routes(self.platform.value, self.python.value, driver)
            self.result.value = render(self.recommendations)
        except Exception as error:  # noqa: BLE001 - a widget callback must show the problem, not die silently
            self.recommendations = []
            self.result.value = f"<b>Could not recommend:</b> {html.escape(str(error))}"

    def click(self) -> list[Recommendation]:
        """Press the button (what a student does); returns the recommendations it showed."""
        self.button.click()
        return self.recommendations

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.box)
