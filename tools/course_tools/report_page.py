"""One report written twice from the same calls: as Markdown and as one self-contained HTML file.

Every value goes through ``html_text`` on the HTML side; with ``escape``, the Markdown side escapes HTML's special
characters too (a Markdown viewer may render raw HTML, and a student's record must not add markup to a report).
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Sequence
from pathlib import Path

CSS = Path(__file__).with_name("report.css").read_text(encoding="utf-8").rstrip("\n")  # the pages' one style


def html_text(text: str) -> str:
    """Text for HTML: escaped, and its `code` spans (the Markdown that messages and fixes use) as <code>."""
    return re.sub(r"`([^`\n]+)`", r"<code>\1</code>", html.escape(text))


class ReportPage:
    """A report's content, kept as Markdown lines and HTML parts side by side."""

    def __init__(self, title: str, escape: bool = False) -> None:
        self.escape = escape
        self.md = [f"# {title}", ""]
        self.html = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
                     f"<style>{CSS}</style></head><body><h1>{html.escape(title)}</h1>"]

    def _md(self, text: str) -> str:
        return html.escape(text, quote=False) if self.escape else text

    def heading(self, text: str) -> None:
        self.md += [f"## {text}", ""]
        self.html.append(f"<h2>{html.escape(text)}</h2>")

    def text(self, text: str, meta: bool = False) -> None:
        """A paragraph (``meta``: in grey, on the HTML side)."""
        self.md += [self._md(text), ""]
        self.html.append(("<p class='meta'>" if meta else "<p>") + f"{html_text(text)}</p>")

    def table(self, header: Sequence[str], rows: Sequence[Sequence[str]], classes: Sequence[str] = ()) -> None:
        """A table: in the Markdown a ``|`` in a cell escaped, a line break a space; ``classes``: each HTML row's
        class ("failed", "warning" or "")."""
        self.md += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        self.md += ["| " + " | ".join(self._md(c).replace("|", "\\|").replace("\n", " ") for c in row) + " |"
                    for row in rows] + [""]
        body = []
        for i, row in enumerate(rows):
            cls = f' class="{classes[i]}"' if i < len(classes) and classes[i] else ""
            body.append(f"<tr{cls}>" + "".join(f"<td>{html_text(c)}</td>" for c in row) + "</tr>")
        head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
        self.html.append(f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")

    def items(self, intro: str, pairs: dict[str, str]) -> None:
        """A list of names (as code) and what each means."""
        self.md += [f"{intro}", ""] + [f"- `{k}`: {v}" for k, v in pairs.items()] + [""]
        entries = "".join(f"<li><code>{html.escape(k)}</code>: {html.escape(v)}</li>" for k, v in pairs.items())
        self.html.append(f"<p>{html.escape(intro)}</p><ul>{entries}</ul>")

    def code(self, intro: str, lines: Sequence[str]) -> None:
        """Lines of code under a sentence (in the Markdown: indented under the list item above)."""
        self.md += ["", f"  {intro}", "", "  ```text", *(f"  {x}" for x in lines), "  ```"]
        self.html.append(f"<p>{html.escape(intro)}</p><pre>{html.escape(chr(10).join(lines))}</pre>")

    def raw(self, md: Sequence[str], page: str) -> None:
        """Markdown lines and HTML written by the caller (escaped there)."""
        self.md += md
        self.html.append(page)

    def chart(self, alt: str, path: str, png: bytes) -> None:
        """A PNG: linked from the Markdown (``path``), embedded in the HTML."""
        self.md.append(f"![{alt}]({path})")
        data = base64.b64encode(png).decode("ascii")
        self.html.append(f"<img alt='{html.escape(alt)}' src='data:image/png;base64,{data}'>")

    def write(self, md: Path, page: Path) -> None:
        """Write the Markdown to ``md`` and the HTML to ``page``."""
        md.write_text("\n".join(self.md), encoding="utf-8")
        page.write_text("\n".join([*self.html, "</body></html>"]) + "\n", encoding="utf-8")
