"""The site's pages and links: the two editions (``EN``, ``ZH``), which repository file becomes which page, and
``Linker``, which rewrites a page's links and images for the site (``course_tools.site.build`` uses them)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from course_tools.links import Release, notebooks
from course_utils.core.places import PROJECT_ROOT as ROOT

SPECIAL_PAGES = frozenset({"search", "genindex"})  # Sphinx pages that both languages have, whatever the course holds
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".svg")


@dataclass(frozen=True)
class Edition:
    """One language of the course: where its files are in the repository and where its pages go."""

    code: str  # "en" or "zh": also the folder of the Chinese pages in the site
    language: str  # Sphinx's language
    home: str  # the README that becomes the home page
    notebooks: str  # the folder of its notebooks
    docs: str  # the folder of its guides
    guides: tuple[str, ...]  # the guides on the site, in this order (file names in ``docs``)
    prefix: str  # where its pages are in the site: "" or "zh/"


EN = Edition("en", "en", "README.md", "notebooks", "docs",
             ("routes.md", "wsl2.md", "troubleshooting.md", "sources.md", "glossary.md"), "")
ZH = Edition("zh", "zh_CN", "README.zh-CN.md", "notebooks/zh", "docs/zh",
             ("wsl2.md", "troubleshooting.md", "sources.md", "mainland-china.md"), "zh/")
EDITIONS = (EN, ZH)


def other(edition: Edition) -> Edition:
    return ZH if edition is EN else EN


def guides(edition: Edition, root: Path = ROOT) -> list[str]:
    """The guides of ``edition`` that exist, as repository paths."""
    return [f"{edition.docs}/{name}" for name in edition.guides if (root / edition.docs / name).is_file()]


def notebook_names(edition: Edition, root: Path = ROOT) -> list[str]:
    return [p.name for p in notebooks(root / edition.notebooks)]


def page_map(edition: Edition, root: Path = ROOT) -> dict[str, str]:
    """Repository path -> page name (the page's path in its language's site, without ``.html``)."""
    pages = {edition.home: "index"}
    pages.update({path: f"docs/{Path(path).stem}" for path in guides(edition, root)})
    for name in notebook_names(edition, root):
        pages[f"{edition.notebooks}/{name}"] = f"notebooks/{Path(name).stem}"
    return pages


def source_name(repo_path: str, page: str) -> str:
    """The page's file in the Sphinx source tree: ``docs/wsl2.md``, ``notebooks/02_verify_gpu.ipynb``."""
    return page + Path(repo_path).suffix


def label(page: str, anchor: str) -> str:
    """The Sphinx label that replaces an ``<a id="anchor">`` on ``page``: labels are shared by a whole site."""
    return f"{page.replace('/', '-')}-{anchor}"


def switch_url(page: str, code: str, other_pages: set[str]) -> str:
    """The language switch's link on ``page`` of edition ``code``, relative to that page."""
    up = "../" * page.count("/")
    target = page if page in other_pages or page in SPECIAL_PAGES else "index"  # else the other language's home
    return f"{up}zh/{target}.html" if code == "en" else f"{up}../{target}.html"


def explicit_anchors(text: str) -> set[str]:
    """The ``<a id="...">`` anchors in a markdown text."""
    return set(re.findall(r'<a id="([^"]+)"></a>', text))


FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"(?<!!)\[(?P<text>(?:[^\[\]]|\[[^\[\]]*\])*)\]"
                  r"\((?P<target><[^>]*>|[^)\s]+)(?P<title>\s+\"[^\"]*\")?\)")
IMAGE = re.compile(r"!\[(?P<alt>[^\[\]]*)\]\((?P<target>[^)\s]+)(?P<title>\s+\"[^\"]*\")?\)")
IMAGE_REF = re.compile(r"!\[(?P<alt>[^\[\]]*)\]\[(?P<ref>[^\[\]]+)\]")
DEFINITION = re.compile(r"^\[(?P<ref>[^\]]+)\]:\s*(?P<target>\S+)\s*$")
ANCHOR_LINE = re.compile(r'^<a id="(?P<id>[^"]+)"></a>\s*$')


@dataclass
class Linker:
    """Rewrites the links of one language's files for its site.

    ``pages``: repository path -> page name, for both languages (``pages[edition.code]``); ``anchors``:
    (code, repository path) -> the explicit ``<a id>`` anchors of that file. Images that a page shows are
    collected in ``images`` (repository path -> path in the source tree) to be copied.
    """

    edition: Edition
    pages: Mapping[str, Mapping[str, str]]
    anchors: Mapping[tuple[str, str], set[str]]
    rel: Release
    root: Path = ROOT

    def __post_init__(self) -> None:
        self.images: dict[str, str] = {}

    def github(self, path: str, anchor: str) -> str:
        kind = "tree" if (self.root / path).is_dir() else "blob"
        return f"{self.rel.repository}/{kind}/{self.rel.tag}/{path}" + (f"#{anchor}" if anchor else "")

    def anchor_for(self, code: str, path: str, anchor: str) -> str:
        if anchor and anchor in self.anchors.get((code, path), set()):
            return label(self.pages[code][path], anchor)
        return anchor

    def target(self, source: str, link: str) -> tuple[str, bool]:
        """The link for the site, and whether it must be written as raw HTML (a page of the other language)."""
        if self.rel.website and link.startswith(self.rel.website):  # a page of the published site: this site's page
            here = f"{self.edition.prefix}{self.pages[self.edition.code][source]}"
            return posixpath.relpath(link[len(self.rel.website):] or "index.html", posixpath.dirname(here) or "."), True
        if re.match(r"^[a-z][a-z0-9+.-]*:", link, re.I) or link.startswith("//"):
            return link, False  # http:, https:, mailto: ...
        path, _, anchor = link.partition("#")
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(source), path)) if path else source
        mine, theirs = self.pages[self.edition.code], self.pages[other(self.edition).code]
        here = mine[source]
        here_dir = posixpath.dirname(source_name(source, here))
        if resolved.startswith("../"):
            return link, False
        if resolved in mine:
            anchor = self.anchor_for(self.edition.code, resolved, anchor)
            target = posixpath.relpath(source_name(resolved, mine[resolved]), here_dir or ".")
            return target + (f"#{anchor}" if anchor else ""), False
        if resolved in theirs:
            code = other(self.edition).code
            anchor = self.anchor_for(code, resolved, anchor)
            url = posixpath.relpath(f"{other(self.edition).prefix}{theirs[resolved]}.html",
                                    posixpath.dirname(f"{self.edition.prefix}{here}") or ".")
            return url + (f"#{anchor}" if anchor else ""), True
        if resolved.lower().endswith(IMAGE_SUFFIXES) and (self.root / resolved).is_file():
            self.images[resolved] = resolved
            return posixpath.relpath(resolved, here_dir or "."), False
        return self.github(resolved, anchor), False

    def rewrite(self, text: str, source: str) -> str:
        """``text`` (markdown of ``source``, a repository path) with its links and anchors made for the site."""
        definitions = {m["ref"].lower(): m["target"] for line in text.splitlines() if (m := DEFINITION.match(line))}
        external_refs = {ref for ref, target in definitions.items() if re.match(r"^https?:", target)}
        image_refs = {m["ref"].lower() for m in IMAGE_REF.finditer(text)} & external_refs
        out, fence = [], None
        page = self.pages[self.edition.code][source]
        for line in text.split("\n"):
            opened = FENCE.match(line)
            if fence is not None:
                fence = None if opened and opened[1] == fence else fence
                out.append(line)
                continue
            if opened:
                fence = opened[1]
                out.append(line)
                continue
            anchor = ANCHOR_LINE.match(line)
            if anchor:
                out.append(f"({label(page, anchor['id'])})=")
                continue
            definition = DEFINITION.match(line)
            if definition and definition["ref"].lower() in image_refs:
                continue  # an external image's definition: the images became their words (below)
            out.append(self._line(line, source, external_refs))
        return "\n".join(out)

    def _line(self, line: str, source: str, external_refs: set[str]) -> str:
        # External images (badges) become their words: the site loads nothing from elsewhere.
        line = IMAGE_REF.sub(lambda m: m["alt"] if m["ref"].lower() in external_refs else m[0], line)

        def image(m: re.Match[str]) -> str:
            target, _ = self.target(source, m["target"])
            if re.match(r"^https?:", target):
                return m["alt"]
            return f"![{m['alt']}]({target}{m['title'] or ''})"

        line = IMAGE.sub(image, line)

        def link(m: re.Match[str]) -> str:
            raw = m["target"][1:-1] if m["target"].startswith("<") else m["target"]
            target, as_html = self.target(source, raw)
            if as_html:
                return f'<a href="{target}">{m["text"]}</a>'
            return f"[{m['text']}]({target}{m['title'] or ''})"

        return LINK.sub(link, line)
