"""scripts/course_lint.py: each rule finds a violation planted in a copy of the repository, and the repository as it
is has none. Plus the pattern tables of the two rules whose patterns are the rule: standalone files and Chinese terms.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import course_lint  # noqa: E402 - scripts/course_lint.py
import lint_base  # noqa: E402
import lint_pages  # noqa: E402
import lint_terms  # noqa: E402
import lint_zh  # noqa: E402


def join(*parts: str) -> str:
    """Standalone samples are built from parts, so that this file does not contain them (it is shipped too)."""
    return "".join(parts)


# (rule, file, text in it, what to put instead); "" as the text appends. One for each rule: it shows the rule can
# fail (the patterns of the standalone rules are the tables further down).
PLANTED = [
    ("link", "README.md", "", "\nSee [the guide](docs/routes.md#no-such-heading).\n"),
    ("reference-anchor", "course_utils/models.py", "", join("# docs/references", ".md#no-such-fact\n")),
    ("sources-link", "notebooks/03_memory.ipynb", "# 03 · ", "# 03 · As the blog post says, "),
    ("standalone-path", "docs/glossary.md", "", join("\nsee ../sha", "red/reference/facts.md\n")),
    ("standalone-name", "docs/wsl2.md", "", "\nSet a random seed first.\n"),
    ("glossary", "docs/glossary.md", "", '\n<a id="abc"></a>\n### Abc\n\nFirst letters.\n'),
    ("ts-entry", "docs/troubleshooting.md", "**Cause.**", "**Reason.**"),
    ("ts-link", "docs/routes.md", "", "\nSee [it](troubleshooting.md#no-such-entry).\n"),
    ("sentence-length", "docs/troubleshooting.md", "", "\n" + "This word " * 13 + "ends.\n"),
    ("doc-command", "docs/routes.md", "", "\nRun `course trian`.\n"),
    ("doc-make", "README.md", "", "\nRun `make venv FLAVOUR=1`.\n"),
    ("doc-variable", "docs/instructors.md", "", "\nSet `COURSE_NOPE`.\n"),
    ("wsl2-doctor", "docs/wsl2.md", "build 19044 or higher", "build 19041 or higher"),
    ("driver-minimum", "docs/routes.md", ">= 528.33", ">= 528.34"),
    ("links-current", "README.md", "/blob/v", "/blob/main-"),
    ("readme", "README.md", "](README.zh-CN.md)", "](README.zh.md)"),
    ("licence", "README.zh-CN.md", "CC BY 4.0", "CC BY-SA"),
    ("capture-sources", "tests/fixtures/nvidia/SOURCES.md", "| `smi_no_driver.txt` |", "| `smi_no_driver.text` |"),
    ("no-mirror", "environment.yml", "", "# pip --index-url https://mirrors.aliyun.com/pypi/simple\n"),
    ("zh-anchor", "docs/zh/wsl2.md", '<a id="1-check-the-windows-version"></a>\n', ""),
    ("zh-code", "docs/zh/wsl2.md", "```bat\nver\n", "```bat\nver /a\n"),
    ("zh-source", "docs/zh/wsl2.md", "https://learn.microsoft.com/windows/wsl/install-manual",
     "https://learn.microsoft.com/windows/wsl/"),
    ("zh-prose", "docs/zh/wsl2.md", "", "\nThis paragraph is still in English.\n"),
    ("zh-troubleshooting", "docs/zh/troubleshooting.md", "**原因。**", "**原因：**"),
    ("zh-tf-link", "docs/zh/wsl2.md", "", "\n见 [指南](https://www.tensorflow.org/guide/gpu)。\n"),
    ("zh-line-break", "docs/zh/mainland-china.md", "", "\n第一行\n第二行\n"),
    ("mirror-page", "docs/zh/mainland-china.md", "连续 30 秒收不到新数据", "连续 60 秒收不到新数据"),
    ("translation", "notebooks/zh/03_memory.ipynb", 'language=\\"zh-CN\\"', 'language=\\"en\\"'),
    ("zh-term", "docs/zh/wsl2.md", "", "\n请看故障排除页面。\n"),
    ("zh-terms-list", "docs/zh/terms.toml", "", '\n[[term]]\nen = "thing"\nzh = "东西"\n'),
    ("nb-outputs", "notebooks/02_verify_gpu.ipynb", '"outputs": []', '"outputs": [{"output_type": "stream", '
                                                                        '"name": "stdout", "text": ["x"]}]'),
    ("nb-cells", "notebooks/zh/02_verify_gpu.ipynb", '\\"02_verify_gpu\\"', '\\"02_other\\"'),
    ("nb-header", "notebooks/03_memory.ipynb", "**What you learn**", "**What you get**"),
    ("word-budget", "notebooks/04_dense_noise_vs_zeros.ipynb", "# 04 · ", "# 04 · " + "word " * 1400),
    ("lesson-budget", "notebooks/05_cnn_cpu_vs_gpu.ipynb", "About 40 minutes", "About 90 minutes"),
]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    """The shipped files, copied (no git there: the linter lists what it finds)."""
    root = tmp_path_factory.mktemp("course")
    for path in lint_base.shipped_files(ROOT):
        target = root / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    return root


def copy(pristine: Path, tmp_path: Path) -> Path:
    """A copy of the pristine copy made of hard links (the rules only read): unlink a file before writing it."""
    root = tmp_path / "course"
    shutil.copytree(pristine, root, copy_function=os.link)
    return root


def test_every_rule_has_a_planted_violation_and_a_copy_without_git_passes(pristine):
    """The repository itself passes: `make lint` runs the linter on it. A copy without git (what the planted tests
    start from) passes too, or a planted test could not tell its own finding from one of the copy's."""
    assert [r.code for r in course_lint.RULES if r.code not in {code for code, *_ in PLANTED}] == []
    assert len(course_lint.CODES) == len(course_lint.RULES), "codes are unique"
    assert [str(f) for f in course_lint.run(pristine)] == []


@pytest.mark.parametrize(("code", "name", "old", "new"), PLANTED, ids=[f"{p[0]}:{p[1]}" for p in PLANTED])
def test_a_planted_violation_is_found_by_its_rule(code, name, old, new, pristine, tmp_path):
    root = copy(pristine, tmp_path)
    path = root / name
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{name} no longer has {old!r}: plant the violation elsewhere"
    path.unlink()  # a link to the pristine copy's file: write a file of its own
    path.write_text(text.replace(old, new, 1) if old else text + new, encoding="utf-8")
    found = course_lint.run(root, [code])
    assert found and {f.code for f in found} == {code}, found
    assert all(str(f).startswith(f"{f.path}") and f" {code} " in str(f) and " - " in str(f) for f in found)


def test_the_command_line_lists_the_rules_runs_one_and_exits_1_on_a_finding(pristine, tmp_path, capsys):
    assert course_lint.main(["--list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in listed] == list(course_lint.CODES)
    root = copy(pristine, tmp_path)
    routes = root / "docs" / "routes.md"
    text = routes.read_text(encoding="utf-8")
    routes.unlink()
    routes.write_text(text + "See [gone](missing.md).\n", encoding="utf-8")
    assert course_lint.main(["--root", str(root), "--rule", "link"]) == 1
    line = len(text.splitlines()) + 1
    assert capsys.readouterr().out.splitlines() == [
        f"docs/routes.md:{line}: link missing.md: no file missing.md - link a file that exists"]
    with pytest.raises(SystemExit):
        course_lint.main(["--rule", "no-such-rule"])


# ----------------------------------------------------------------- standalone files: what the patterns catch

FLAGGED = {
    join("fixture smi_seed", "000_windows.txt"): "a source post by number",
    join("fall short of the seed", "'s accuracy"): "a possessive name for one post",
    join("The course models have the ", "seeds' architectures."): "a plural name for the two posts",
    join("see ../sha", "red/reference/facts.md"): "a path into the team's shared folder",
    join("read /wo", "rk/main/README.md first"): "an absolute path on the team's machine",
    join("more than Binder has (facts ", "file, section 1)."): "the name of the team's fact list",
    join("as Keras warns (cla", "im e)."): "a claim letter of the team's fact list",
    join("the first rung, seed ", "as written"): "a code name for a post's way",
    join("model = build_seed", "_cnn(logits=True)"): "a code name for a post's way",
    join('report["speedup_best_vs', '_seed"]'): "a code name for a post's way",
    join("cite tf-gpu-", "facts.md"): "the file name of the team's fact list",
}
NOT_FLAGGED = [  # and what the shipped files say (SEED = 0, set_random_seed(SEED)): the repository passes the linter
    "the same seed always gives the same numbers; a seeded generator",
    "the gap over several seeds, on the course's machine: | seeds | gap |; 2 of 15 seeds",
    "seed_everything(seed, deterministic=True); noise from (seed, image, channel)",
    "under build/work/07_beyond_one_gpu/, or OUT/work/NAME/ under `course run`",
    "we claim a small speedup; section 5 explains; the Q&A post and the blog post",
    "docs/references.md#keras-3-device and docs/sources.md",
]
EVERY = {**lint_pages.OUTSIDE, **lint_pages.JARGON}


@pytest.mark.parametrize("sample", [*FLAGGED, *NOT_FLAGGED])
def test_the_standalone_patterns_name_each_kind_and_leave_random_seeds_and_the_course_s_own_paths_alone(sample):
    found = lint_pages.scan_text("lesson.md", None, f"# A lesson\n\n{sample}\n", "standalone-name", EVERY)
    assert [(f.line, f.what.split(":")[0]) for f in found] == ([(3, FLAGGED[sample])] if sample in FLAGGED else [])


def test_shipped_files_are_what_git_would_ship(tmp_path):
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("ignored/\n", encoding="utf-8")
    (tmp_path / "ignored").mkdir()
    (tmp_path / "ignored" / "notes.md").write_text("x\n", encoding="utf-8")
    (tmp_path / "new.md").write_text("y\n", encoding="utf-8")
    assert {p.name for p in lint_base.shipped_files(tmp_path)} == {".gitignore", "new.md"}
    assert lint_base.text_of(tmp_path / "new.md") == "y\n"
    (tmp_path / "capture.txt").write_bytes("text".encode("utf-16"))
    assert lint_base.text_of(tmp_path / "capture.txt") is None  # NUL bytes: binary, not scanned


# ----------------------------------------------------------------- Chinese terms: what the checker catches

# (text, the variants the checker must find): a rejected variant, the longer of two, a pattern (the term list's
# own examples are zh-terms-list's), an English word in a Chinese sentence (plural, beside a field, before brackets
# that are no gloss); then what is right: glosses, code, URLs, fields, identifiers, English prose, an allowed
# phrase, near misses of the patterns (the shipped Chinese files are checked by the repository passing the linter)
CAUGHT = [
    ("请把 nvidia-smi 的输出交给医生。", ["医生"]), ("速度梯子的每一级", ["速度梯子"]),
    ("CPU 上慢 3 倍。", ["慢 3 倍"]), ("下一个批量已经准备好。", ["个批量"]),
    ("本 notebook 会解释这一点。", ["notebook"]), ("所有 workers 都已停止。", ["workers"]),
    ("worker {index}（共 {count} 个）", ["worker"]), ("本课程的 notebook（基于 Keras 3）无法运行。", ["notebook"]),
]
RIGHT = [
    "课程的**工作进程**（worker）各自运行同一个程序。", "例如 *kernel*（内核）和 *epoch*（轮）。",
    "运行 `course doctor`，然后阅读诊断结果。", "见 https://example.org/notebook/worker 。",
    "{notebook} 没有声明参数。",
    "worker_options 要以 worker_index 为键。", "Multi-worker training with Keras",
    "TensorFlow 发现了 2 个 GPU；批量大小是 256；全局批量 {batch}。",
    "重新加载 nvidia_uvm 内核模块，或者重启 Jupyter 内核；Linux 内核没有 NUMA 信息。", "按操作系统的说明操作。",
    "在 Jupyter Notebook 中打开它。",
    "时间减少到原来的 1/4；XLA 快到 3 倍；合计是前向传播的 3 倍；大了大约一倍；增加了一倍；大约 3 倍；至少 3 倍；"
    "最多相差六倍；相差不到 3 倍；时间可能是这里的 2 到 3 倍；快很多倍。",
]


@pytest.fixture(scope="module")
def terms() -> list:
    return lint_terms.load_terms(ROOT / lint_terms.TERMS_FILE)


@pytest.mark.parametrize(("text", "variants"), [*CAUGHT, *((text, []) for text in RIGHT)],
                         ids=[v[0] for _, v in CAUGHT] + [f"right-{i}" for i in range(len(RIGHT))])
def test_the_term_checker_catches_each_variant_and_leaves_alone_what_is_right(text, variants, terms):
    assert [variant for variant, _ in lint_terms.check_text(text, terms)] == variants


def test_the_term_checker_reads_command_comments_and_code_strings_but_not_messages():
    page = "正文\n```bash\nmake lab    # 启动 worker\n```\n```text\nworker 0 crashed\n```\n"
    assert lint_terms.markdown_prose(page) == [(1, "正文"), (3, " # 启动 worker")]
    code = "%%time\nworkers = 2  # 两个工作进程\nprint(f\"worker {i}\")\n!ls workers\n"
    assert [text for _, text in lint_terms.code_reading(code)] == ["# 两个工作进程", 'f"worker {i}"']


def test_a_translated_page_is_compared_by_anchors_and_commands_not_words():
    english = '# A title\n\n<a id="entry"></a>\n### An entry\n\n## 7. Download it\n```text\n# not a heading\n```\n'
    chinese = '<a id="a-title"></a>\n# 标题\n\n<a id="entry"></a>\n### 条目\n\n<a id="7-download-it"></a>\n## 7. 下载\n'
    assert lint_zh.offered_anchors(english) == lint_zh.offered_anchors(chinese) == ["a-title", "entry", "7-download-it"]
    english = "```bash\nnvidia-smi    # which processes?\n```\n```text\nOOM when allocating\n```\n"
    chinese = "```bash\nnvidia-smi    # 哪些进程？\n```\n```text\nOOM when allocating\n```\n"
    assert lint_zh.comparable(english) == lint_zh.comparable(chinese)
    assert lint_zh.comparable(english) != lint_zh.comparable(chinese.replace("OOM when", "显存不足"))
