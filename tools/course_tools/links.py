"""Write the Colab, Kaggle and Binder links and the hosted install cell, from two values in pyproject.toml
(``make links``; the lint rule ``links-current`` names each file that differs).

What is written, and where: CONTRIBUTING.md, "A notebook"; everything points at the release tag, "v" + version.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from course_utils.core.errors import CourseError
from course_utils.core.places import PROJECT_ROOT as ROOT

LINKS_TAG = "links"  # the generated cells' tags, and their ids (fixed: the output is the same on every run)
SETUP_TAG = "hosted-setup"
PARAMETERS_TAG = "parameters"
README_START = "<!-- links:start -->"
README_END = "<!-- links:end -->"
README_ZH = "README.zh-CN.md"
# The badges' images, each README's words and the hosted install cell: data, in links.toml.
TEXTS = tomllib.loads(Path(__file__).with_name("links.toml").read_text(encoding="utf-8"))
IMAGE_URLS = TEXTS["images"]

GITHUB_URL = re.compile(r"https://github\.com/(?P<slug>[A-Za-z0-9-]+/[A-Za-z0-9._-]+?)(?:\.git)?/?")
ZH_FOLDER = "zh"  # notebooks/zh/: the Chinese edition, same file names
TITLE = re.compile(r"# (?P<number>\d\d) · (?P<title>.+)")


@dataclass(frozen=True)
class Release:
    repository: str  # https://github.com/OWNER/REPO
    slug: str  # OWNER/REPO
    tag: str  # vX.Y.Z
    website: str = ""  # where the course website is published, ending in "/" (Website in pyproject.toml)

    def urls(self, notebook: str) -> tuple[str, str, str]:
        """Colab, Kaggle and Binder links that open ``notebooks/<notebook>`` at the tag."""
        path = f"notebooks/{notebook}"
        return (
            f"https://colab.research.google.com/github/{self.slug}/blob/{self.tag}/{path}",
            f"https://kaggle.com/kernels/welcome?src={self.repository}/blob/{self.tag}/{path}",
            f"https://mybinder.org/v2/gh/{self.slug}/{self.tag}?urlpath=lab/tree/{path}",
        )

    def badges(self, notebook: str) -> str:
        """The three badges for ``notebooks/<notebook>`` at the tag, on one line."""
        colab, kaggle, binder = self.urls(notebook)
        return " ".join([
            f"[![Open In Colab]({IMAGE_URLS['colab']})]({colab})",
            f"[![Open in Kaggle]({IMAGE_URLS['kaggle']})]({kaggle})",
            f"[![Open in Binder]({IMAGE_URLS['binder']})]({binder})",
        ])

    def setup_source(self, edition: str = "en") -> str:
        """The hosted install cell of edition ``edition`` ("en" or "zh"), installing the course at the tag."""
        return (TEXTS["setup"][edition] + TEXTS["setup"]["code"]).format(repository=self.repository, tag=self.tag)


def release(root: Path) -> Release:
    """The repository and the release tag, from ``root/pyproject.toml``."""
    path = root / "pyproject.toml"
    project = tomllib.loads(path.read_text(encoding="utf-8")).get("project", {})
    url = project.get("urls", {}).get("Repository")
    version = project.get("version")
    if not url or not version:
        raise CourseError(f"{path} has no [project] version or no Repository in [project.urls].",
                          "Set both, then run make links again.")
    found = GITHUB_URL.fullmatch(url)
    if not found:
        raise CourseError(f"{path}: Repository is {url!r}, not https://github.com/OWNER/REPO.",
                          "Set Repository to the course's GitHub address.")
    slug = found["slug"]
    website = project["urls"].get("Website", "")
    if website and not website.endswith("/"):
        raise CourseError(f"{path}: Website is {website!r}, which does not end with '/'.",
                          "Write the folder of the site's pages, ending with '/'.")
    return Release(repository=f"https://github.com/{slug}", slug=slug, tag=f"v{version}", website=website)


def notebooks(folder: Path) -> list[Path]:
    """The lessons in ``folder`` (``notebooks/``, ``notebooks/zh/``, a run's ``executed/``) in order: ``NN_*.ipynb``."""
    return sorted(folder.glob("[0-9][0-9]_*.ipynb"))


def tags(cell: dict) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def title(path: Path, cells: list[dict]) -> tuple[str, str]:
    """The number and title from the notebook's ``# NN · Title`` line."""
    for cell in cells:
        if cell["cell_type"] == "markdown" and LINKS_TAG not in tags(cell):
            first = "".join(cell["source"]).split("\n", 1)[0]
            found = TITLE.fullmatch(first.strip())
            if not found or found["number"] != path.name[:2]:
                title = f"# {path.name[:2]} · Title"
                raise CourseError(f"{path.name}: its first markdown cell does not start with '{title}'.",
                                  "Give the notebook that title line.")
            return found["number"], found["title"]
    raise CourseError(f"{path.name}: no markdown title cell.", f"Start the notebook with '# {path.name[:2]} · Title'.")


def notebook_text(path: Path, rel: Release) -> str:
    """The notebook as it should be stored: the two generated cells in place, all else unchanged."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    cells = [c for c in nb["cells"] if not {LINKS_TAG, SETUP_TAG} & set(tags(c))]
    title(path, cells)  # fails early on a notebook without its title line
    at = [i for i, c in enumerate(cells) if PARAMETERS_TAG in tags(c)]
    if len(at) != 1 or cells[at[0]]["cell_type"] != "code":
        raise CourseError(f"{path.name}: {len(at)} code cells are tagged '{PARAMETERS_TAG}', not one.",
                          f"Tag exactly one code cell '{PARAMETERS_TAG}'.")
    taken = {c.get("id") for c in cells} & {LINKS_TAG, SETUP_TAG}
    if taken:
        raise CourseError(f"{path.name}: another cell already has the id {sorted(taken)}.",
                          "Give that cell another id: make links writes cells with these ids.")
    chinese = path.parent.name == ZH_FOLDER  # a notebook of the Chinese edition: its own links, Chinese comments
    setup = rel.setup_source("zh" if chinese else "en")
    # a cell's source as Jupyter stores it: one string per line, each but the last ending in a newline
    cells.insert(at[0], {"cell_type": "code", "execution_count": None, "id": SETUP_TAG,
                         "metadata": {"tags": [SETUP_TAG]}, "outputs": [], "source": setup.splitlines(keepends=True)})
    badges = rel.badges(f"{ZH_FOLDER}/{path.name}" if chinese else path.name)
    cells.insert(0, {"cell_type": "markdown", "id": LINKS_TAG, "metadata": {"tags": [LINKS_TAG]}, "source": [badges]})
    nb["cells"] = cells
    # the way the notebooks are stored (nbformat's own layout): indent 1, sorted keys, UTF-8, final newline
    return json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def readme_table(paths: list[Path], rel: Release, chinese: bool = False) -> str:
    """The README's block: per notebook its Colab and Kaggle badges; Binder once, for all of them.

    Short on purpose (the README stays small): the title up to its first colon, and the badge
    images as reference links defined once below the table. ``chinese``: README.zh-CN.md's block, whose
    rows open the Chinese notebooks (``paths`` are those in notebooks/zh/).
    """
    words = TEXTS["readme"]["zh" if chinese else "en"]
    folder = f"{ZH_FOLDER}/" if chinese else ""
    rows = [words["header"], "|---|---|---|"]
    for path in paths:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        number, name = title(path, cells)
        short = re.split("[:：]", name, maxsplit=1)[0].replace("|", "\\|")  # a "|" would end the table cell
        colab, kaggle, _ = rel.urls(folder + path.name)
        rows.append(f"| {number} · {short} | [![Open In Colab][colab-badge]]({colab}) "
                    f"| [![Open in Kaggle][kaggle-badge]]({kaggle}) |")
    binder = f"https://mybinder.org/v2/gh/{rel.slug}/{rel.tag}?urlpath=lab/tree/notebooks/{folder}".rstrip("/")
    rows += [
        "",
        f"{words['binder']} [![Open in Binder][binder-badge]]({binder})",
        "",
        f"[colab-badge]: {IMAGE_URLS['colab']}",
        f"[kaggle-badge]: {IMAGE_URLS['kaggle']}",
        f"[binder-badge]: {IMAGE_URLS['binder']}",
    ]
    return "\n".join(rows)


def readme_text(path: Path, paths: list[Path], rel: Release, chinese: bool = False) -> str:
    text = path.read_text(encoding="utf-8")
    start, end = text.find(README_START), text.find(README_END)
    if start < 0 or end < start:
        raise CourseError(f"{path.name}: no block between {README_START} and {README_END}.",
                          "Put the two markers where the table of notebooks goes.")
    return text[: start + len(README_START)] + "\n" + readme_table(paths, rel, chinese) + "\n" + text[end:]


def expected(root: Path) -> dict[Path, str]:
    """Each generated file and the text it should have."""
    rel = release(root)
    paths, chinese = notebooks(root / "notebooks"), notebooks(root / "notebooks" / ZH_FOLDER)
    if not paths:
        raise CourseError(f"{root / 'notebooks'}: no NN_*.ipynb notebooks.", "Run make links in the course's folder.")
    files = {path: notebook_text(path, rel) for path in [*paths, *chinese]}
    files[root / "README.md"] = readme_text(root / "README.md", paths, rel)
    if (root / README_ZH).is_file():
        files[root / README_ZH] = readme_text(root / README_ZH, chinese, rel, chinese=True)
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout (default: this one)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    try:
        files = expected(root)
    except CourseError as error:
        print(f"course_tools.links: {error}", file=sys.stderr)
        return 2
    for path, text in files.items():
        if path.read_text(encoding="utf-8") != text:
            with open(path, "w", encoding="utf-8", newline="\n") as out:
                out.write(text)
            print(f"updated {path.relative_to(root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
