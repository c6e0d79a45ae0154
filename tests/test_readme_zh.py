"""README.zh-CN.md is the README in Chinese: the same commands, in the same order, a way to and from the English
README on each first screen, links to the Chinese documents where they exist, its own notebook table (written by
scripts/notebook_links.py, opening notebooks/zh/), and a section for students in mainland China that states what
the code does.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

from course_utils.data import connect

from .conftest import ROOT
from .test_wsl2_guide import code_blocks, relative_links

README = ROOT / "README.md"
README_ZH = ROOT / "README.zh-CN.md"
TRANSLATED_DOCS = ("troubleshooting.md", "wsl2.md", "sources.md")  # the pages that exist in docs/zh/
SCRIPT = ROOT / "scripts" / "notebook_links.py"
BLOCK = re.compile(r"<!-- links:start -->\n(.*?)<!-- links:end -->", re.S)
ROW_LINK = re.compile(r"\]\((https://[^)\s]+)\)")


def text(path) -> str:
    return path.read_text(encoding="utf-8")


def test_the_chinese_readme_has_the_english_readmes_code_blocks_in_order():
    english, chinese = code_blocks(text(README)), code_blocks(text(README_ZH))
    assert len(english) >= 3
    assert chinese == english


def test_each_readme_links_the_other_on_its_first_screen():
    assert "](README.zh-CN.md)" in "\n".join(text(README).splitlines()[:5])
    assert "](README.md)" in "\n".join(text(README_ZH).splitlines()[:5])


def test_links_to_a_page_that_exists_in_chinese_go_to_the_chinese_page():
    links = relative_links(README_ZH)
    english = [link for link in links for name in TRANSLATED_DOCS if link.partition("#")[0] == f"docs/{name}"]
    assert not english, f"README.zh-CN.md links the English page where docs/zh/ has one: {english}"
    assert {f"docs/zh/{name}" for name in TRANSLATED_DOCS} <= {link.partition("#")[0] for link in links}


def test_the_notebook_table_opens_every_chinese_notebook_at_the_release():
    block = BLOCK.search(text(README_ZH))
    assert block, "README.zh-CN.md has no links block for scripts/notebook_links.py"
    notebooks = sorted(p.name for p in (ROOT / "notebooks" / "zh").glob("[0-9][0-9]_*.ipynb"))
    links = ROW_LINK.findall(block.group(1))
    for name in notebooks:
        assert sum(link.endswith(f"/notebooks/zh/{name}") for link in links) == 2, f"{name}: Colab and Kaggle"
    assert not [link for link in links if "/notebooks/0" in link], "a row opens an English notebook"
    assert any(link.endswith("urlpath=lab/tree/notebooks/zh") for link in links)


def test_the_generator_rewrites_the_chinese_table_and_check_names_it(tmp_path):
    """On a copy: a stale Chinese table is found by --check and rewritten, the English README left alone."""
    root = tmp_path / "course"
    for name in ("pyproject.toml", "README.md", "README.zh-CN.md"):
        root.mkdir(exist_ok=True)
        shutil.copy(ROOT / name, root / name)
    shutil.copytree(ROOT / "notebooks", root / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    readme = root / "README.zh-CN.md"
    good = text(readme)
    readme.write_text(BLOCK.sub("<!-- links:start -->\n| stale |\n<!-- links:end -->", good), encoding="utf-8")
    check = subprocess.run([sys.executable, str(SCRIPT), "--check", "--root", str(root)],
                           capture_output=True, text=True, timeout=120)
    assert check.returncode == 1 and "README.zh-CN.md: differs" in check.stdout, check.stdout + check.stderr
    fix = subprocess.run([sys.executable, str(SCRIPT), "--root", str(root)],
                         capture_output=True, text=True, timeout=120)
    assert fix.returncode == 0, fix.stderr
    assert text(readme) == good and text(root / "README.md") == text(README)


def test_the_mainland_china_section_gives_the_mirror_as_an_option_and_the_measured_wait():
    section = text(README_ZH).split('<a id="mainland-china"></a>', 1)[1].split("\n## ", 2)[1]
    for needed in ("PIP_INDEX_URL=https://pypi.tuna.tsinghua.edu.cn/simple make venv",
                   "pip config set global.index-url https://pypi.tuna.tsinghua.edu.cn/simple",
                   "pip config unset global.index-url", "不是默认设置",
                   "https://mirrors.tuna.tsinghua.edu.cn/help/pypi/", "https://mirrors.ustc.edu.cn/help/pypi.html",
                   "course data fetch", "COURSE_DATA_DIR", "COURSE_OFFLINE=1", "](docs/zh/mainland-china.md)"):
        assert needed in section, needed
    assert f"约 {connect.ANSWER_DEADLINE_S:g} 秒" in section
