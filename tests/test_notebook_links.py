"""The Colab, Kaggle and Binder links and the hosted install cell (tools/course_tools/links.py, ``make links``).

Everything is generated from two values in pyproject.toml: ``Repository`` in ``[project.urls]`` and
``version`` (the release tag is "v" + version). These tests run the generator on a copy, read the links back
and check them against pyproject on their own, and run the install cell with a stand-in for IPython. That the
files are what it writes is scripts/course_lint.py's rule links-current (here: which files it names).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
import types
from importlib.metadata import version
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell
from packaging.requirements import Requirement

from course_tools import links

from .conftest import NOTEBOOKS, ROOT, ZH_NOTEBOOKS, run_main
from .test_notebooks import EDITIONS, load, source  # EDITIONS: English, then Chinese (notebooks/zh/)

sys.path.insert(0, str(ROOT / "scripts"))
import lint_claims  # noqa: E402 - scripts/lint_claims.py, the rule links-current

MODULE = "course_tools.links"
IMAGES = {
    "Open In Colab": "https://colab.research.google.com/assets/colab-badge.svg",
    "Open in Kaggle": "https://kaggle.com/static/images/open-in-kaggle.svg",
    "Open in Binder": "https://mybinder.org/badge_logo.svg",
}


def settings(root: Path = ROOT) -> tuple[str, str]:
    """(https://github.com/OWNER/REPO, vX.Y.Z), read from pyproject.toml."""
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return project["urls"]["Repository"].rstrip("/"), "v" + project["version"]


def tagged(nb: dict, tag: str) -> list[dict]:
    return [c for c in nb["cells"] if tag in c.get("metadata", {}).get("tags", [])]


def link_name(path: Path) -> str:
    """What a notebook's badges open, under notebooks/: ``NN_x.ipynb``, or ``zh/NN_x.ipynb`` in Chinese."""
    return f"zh/{path.name}" if path.parent.name == "zh" else path.name


def stale(root: Path) -> list[str]:
    """The files the lint rule links-current names: those that differ from what ``make links`` writes."""
    return [finding.path for finding in lint_claims.links_current(root)]


def urls(repository: str, tag: str, path: str) -> dict[str, str]:
    """Where each badge opens ``path`` (a repository path) at ``tag``, by its alt text."""
    slug = repository.removeprefix("https://github.com/")
    return {"Open In Colab": f"https://colab.research.google.com/github/{slug}/blob/{tag}/{path}",
            "Open in Kaggle": f"https://kaggle.com/kernels/welcome?src={repository}/blob/{tag}/{path}",
            "Open in Binder": f"https://mybinder.org/v2/gh/{slug}/{tag}?urlpath=lab/tree/{path}"}


def check_badges(markdown: str, notebook: str, repository: str, tag: str) -> None:
    """Colab, Kaggle and Binder badges, in that order on one line, each opening ``notebooks/<notebook>`` at ``tag``."""
    opened = urls(repository, tag, f"notebooks/{notebook}")
    assert markdown.strip() == " ".join(f"[![{alt}]({IMAGES[alt]})]({url})" for alt, url in opened.items())


def readme_block(readme: str) -> str:
    start, end = readme.index("<!-- links:start -->"), readme.index("<!-- links:end -->")
    return readme[start:end]


def check_readme(readme: str, repository: str, tag: str, notebooks: list[Path]) -> None:
    """One row per notebook: its number and short title, Colab and Kaggle badges opening it at ``tag``;
    then one Binder badge opening the notebooks' folder; the badge images defined once."""
    block = readme_block(readme)
    rows = [line for line in block.splitlines() if line.startswith("| ")][1:]  # after the header
    wanted = []
    for path in notebooks:
        title = re.split("[:：]", source(load(path)["cells"][1]).splitlines()[0].removeprefix("# "), maxsplit=1)[0]
        opened = urls(repository, tag, f"notebooks/{link_name(path)}")
        wanted.append(f"| {title} | [![Open In Colab][colab-badge]]({opened['Open In Colab']}) | "
                      f"[![Open in Kaggle][kaggle-badge]]({opened['Open in Kaggle']}) |")
    assert rows == wanted
    folder = "notebooks/zh" if notebooks[0].parent.name == "zh" else "notebooks"
    assert f"[![Open in Binder][binder-badge]]({urls(repository, tag, folder)['Open in Binder']})" in block
    assert all(f"[{alt.split()[-1].lower()}-badge]: {image}\n" in block for alt, image in IMAGES.items())


def copy_of_the_repository(tmp_path: Path) -> Path:
    """The files the generator reads and writes, in a temporary folder."""
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks",
                    ignore=lambda folder, names: [n for n in names if not n.endswith(".ipynb") and n != "zh"])
    for name in ("README.md", "README.zh-CN.md", "pyproject.toml"):
        shutil.copy2(ROOT / name, tmp_path / name)
    return tmp_path


# --------------------------------------------------------------------------- the generated files are current


def test_the_rule_names_each_stale_file_and_a_rewrite_restores_it(tmp_path):
    """An edited badge, a stale README table, and a translation that starts as a copy of the English notebook (its
    badges still open the English one until `make links`; its English title is in README.zh-CN.md's table): the lint
    rule links-current names those files; a rewrite restores the first two and makes the copy Chinese's."""
    root = copy_of_the_repository(tmp_path)
    module = subprocess.run([sys.executable, "-m", MODULE, "--root", str(root)], capture_output=True, timeout=60)
    assert (module.returncode, module.stdout, stale(root)) == (0, b"", []), "make links runs the module"
    repository, tag = settings(root)
    notebook = root / "notebooks" / NOTEBOOKS[2].name
    nb = load(notebook)
    (badges,) = tagged(nb, "links")
    assert f"/blob/{tag}/" in source(badges)
    badges["source"] = [source(badges).replace(f"/blob/{tag}/", "/blob/main/", 1)]
    readme, english = root / "README.md", root / "notebooks" / NOTEBOOKS[1].name
    chinese = root / "notebooks" / "zh" / english.name
    originals = {path: path.read_text(encoding="utf-8") for path in (notebook, readme)}
    notebook.write_text(json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    readme.write_text(originals[readme].replace(readme_block(originals[readme]), "<!-- links:start -->\n| stale |\n"),
                      encoding="utf-8")
    shutil.copy2(english, chinese)
    edited = [notebook, readme, chinese, root / "README.zh-CN.md"]

    assert sorted(stale(root)) == sorted(path.relative_to(root).as_posix() for path in edited), "only those files"
    assert run_main(links.main, "--root", str(root)).returncode == 0
    assert {path: path.read_text(encoding="utf-8") for path in originals} == originals
    nb = load(chinese)
    check_badges(source(tagged(nb, "links")[0]), f"zh/{chinese.name}", repository, tag)
    shipped = load(ROOT / "notebooks" / "zh" / chinese.name)
    assert tagged(nb, "hosted-setup") == tagged(shipped, "hosted-setup"), "the Chinese install cell"
    assert [c["id"] for c in nb["cells"]] == [c["id"] for c in load(english)["cells"]], "every other cell kept"
    assert stale(root) == []


def test_the_links_and_the_install_cell_follow_the_two_settings(tmp_path):
    """A fork changes Repository (and a release the version); make links then points everything there."""
    root = copy_of_the_repository(tmp_path)
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    repository, _ = settings(root)
    text = text.replace(f'Repository = "{repository}"', 'Repository = "https://github.com/someone/course-fork"')
    text = re.sub(r'(?m)^version = "[^"]+"', 'version = "1.2.3"', text, count=1)
    pyproject.write_text(text, encoding="utf-8")
    assert settings(root) == ("https://github.com/someone/course-fork", "v1.2.3")

    assert stale(root)
    assert run_main(links.main, "--root", str(root)).returncode == 0
    for path in sorted((root / "notebooks").glob("**/*.ipynb")):
        nb = load(path)
        check_badges(source(nb["cells"][0]), link_name(path), "https://github.com/someone/course-fork", "v1.2.3")
        (setup,) = tagged(nb, "hosted-setup")
        assert '"course-utils @ git+https://github.com/someone/course-fork@v1.2.3"' in source(setup)
    for readme, notebooks in (("README.md", NOTEBOOKS), ("README.zh-CN.md", ZH_NOTEBOOKS)):
        check_readme((root / readme).read_text(encoding="utf-8"), "https://github.com/someone/course-fork", "v1.2.3",
                     notebooks)


@pytest.mark.parametrize(("setting", "wrong", "said"), [
    ("Repository", "https://gitlab.com/someone/fork", "https://github.com/OWNER/REPO"),
    ("Website", "https://tf-gpu-course.github.io/tf-gpu-course", "does not end with '/'"),  # an address of a folder
])
def test_a_repository_not_on_github_or_a_website_not_a_folder_is_refused(tmp_path, setting, wrong, said):
    root = copy_of_the_repository(tmp_path)
    pyproject = root / "pyproject.toml"
    text = re.sub(rf'(?m)^{setting} = "[^"]+"', f'{setting} = "{wrong}"', pyproject.read_text(encoding="utf-8"))
    pyproject.write_text(text, encoding="utf-8")
    done = run_main(links.main, "--root", str(root))
    assert done.returncode == 2 and said in done.stderr
    assert [p.read_text(encoding="utf-8") for p in sorted((root / "notebooks").glob("*.ipynb"))] == [
        p.read_text(encoding="utf-8") for p in NOTEBOOKS
    ], "nothing written"


# --------------------------------------------------------------------------- the install cell, run


def run_install_cell(path: Path) -> list[str]:
    """The cell run by IPython, its ``%pip`` recording its line instead (``{keep}`` expanded, as IPython does)."""
    (cell,) = tagged(load(path), "hosted-setup")
    shell = InteractiveShell.instance()
    lines: list[str] = []
    shell.register_magic_function(lines.append, "line", "pip")
    shell.run_cell(source(cell), store_history=False).raise_error()
    return lines


@pytest.fixture
def nowhere(monkeypatch):
    """Neither Colab nor Kaggle, whatever machine runs the tests."""
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    monkeypatch.delenv("KAGGLE_KERNEL_RUN_TYPE", raising=False)


@pytest.mark.usefixtures("nowhere")
@pytest.mark.parametrize("runtime", ["elsewhere", "colab", "kaggle"])
def test_the_install_cell_installs_the_release_beside_tensorflow_and_keras_on_colab_and_kaggle_only(
    runtime, monkeypatch
):
    if runtime == "colab":
        monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    elif runtime == "kaggle":
        monkeypatch.setenv("KAGGLE_KERNEL_RUN_TYPE", "Interactive")
    repository, tag = settings()
    for path in EDITIONS:
        calls = run_install_cell(path)
        if runtime == "elsewhere":
            assert calls == [], path.name
            continue
        (line,) = calls
        words = shlex.split(line)  # %pip hands its line to a shell
        assert words[:2] == ["install", "-q"], line
        wanted = {Requirement(word).name: Requirement(word) for word in words[2:]}
        assert sorted(wanted) == ["course-utils", "keras", "tensorflow"], line
        assert wanted["course-utils"].url == f"git+{repository}@{tag}"
        assert str(wanted["tensorflow"].specifier) == f"=={version('tensorflow')}"
        assert str(wanted["keras"].specifier) == f"=={version('keras')}"
