"""The course as a website (tools/course_tools/site/build.py, ``make site``).

Fast unit tests check the builder's pure parts: the links rewritten for the site, the box of machine and versions
from a run record, and the refusal of a folder that is not a course run. The browser tests (marker ``browser``)
build the site from the nbval and hosted tiers' runs, open every page once in Chromium and check what
docs/maintainers.md ("The website", "The test") says; they start by checking that the two runs recorded the same
result names (names are data, never translated: the site's boxes read them). Without the runs or Chromium they are
skipped locally and fail in CI (``CI=true``).
"""

from __future__ import annotations

import html
import json
import re
import urllib.request
from pathlib import Path
from urllib.parse import urldefrag, urlsplit

import pytest

from course_tools.site import build as site
from course_tools.site import pages as sitepages
from course_utils.core.errors import CourseError

from .conftest import NOTEBOOKS, ROOT, ZH_NOTEBOOKS
from .site_served import CI_OUT, Served, Visit, fetch
from .test_browser import SCREENSHOTS

REL = site.release(ROOT)


def linker(edition) -> object:
    pages = {e.code: sitepages.page_map(e) for e in sitepages.EDITIONS}
    anchors = {(e.code, path): sitepages.explicit_anchors((ROOT / path).read_text(encoding="utf-8"))
               for e in sitepages.EDITIONS for path in pages[e.code] if path.endswith(".md")}
    return sitepages.Linker(edition, pages, anchors, REL)


@pytest.mark.browser
@pytest.mark.parametrize("stem", [p.stem for p in NOTEBOOKS])
def test_both_editions_recorded_the_same_result_names(built_site, stem):
    english, chinese = (site.read_record(run, stem) for run in (CI_OUT, CI_OUT.with_name(CI_OUT.name + "-zh")))
    assert english and chinese, f"{stem}: a run without its record (English: {bool(english)}, Chinese: {bool(chinese)})"
    assert english["key_results"] == chinese["key_results"]
    assert sorted(english["results"]) == sorted(chinese["results"]), "result names are data: never translated"


# --------------------------------------------------------------------------- the builder's parts


def test_the_site_has_every_notebook_and_guide_in_both_languages():
    en, zh = sitepages.page_map(sitepages.EN), sitepages.page_map(sitepages.ZH)
    assert en["README.md"] == "index" and zh["README.zh-CN.md"] == "index"
    assert [en[f"notebooks/{p.name}"] for p in NOTEBOOKS] == [f"notebooks/{p.stem}" for p in NOTEBOOKS]
    assert [zh[f"notebooks/zh/{p.name}"] for p in ZH_NOTEBOOKS] == [f"notebooks/{p.stem}" for p in ZH_NOTEBOOKS]
    assert {p for p in en if p.startswith("docs/")} == {
        f"docs/{n}" for n in ("routes.md", "wsl2.md", "troubleshooting.md", "sources.md", "glossary.md")}
    translated = {str(p.relative_to(ROOT)) for p in (ROOT / "docs" / "zh").glob("*.md")}
    assert {p for p in zh if p.startswith("docs/")} == translated


BLOB = f"{REL.repository}/blob/{REL.tag}"


@pytest.mark.parametrize(("source", "text", "out"), [
    ("README.md", "[r](docs/routes.md#binder)", "[r](docs/routes.md#binder)"),  # a guide on the site: MyST links it
    ("README.md", "[o](docs/troubleshooting.md#oom)", "[o](docs/troubleshooting.md#docs-troubleshooting-oom)"),  # id
    ("README.md", "[g](docs/instructors.md#binder)", f"[g]({BLOB}/docs/instructors.md#binder)"),  # not on the site
    ("README.md", "[f](notebooks)", f"[f]({REL.repository}/tree/{REL.tag}/notebooks)"),  # a folder
    ("README.md", "[p](https://example.org/x)", "[p](https://example.org/x)"),
    ("notebooks/zh/01_install_versions.ipynb", f"[x]({REL.website}zh/check.html)", '<a href="../check.html">x</a>'),
    ("README.md", "![s](docs/screenshots/01_install_picker.png)", "![s](docs/screenshots/01_install_picker.png)"),
    ("README.md", "```bash\nsee [c](CONTRIBUTING.md)\n```\n", "see [c](CONTRIBUTING.md)\n"),  # code: left alone
    ("README.md", "| [![Open In Colab][colab-badge]](https://x/y) |\n\n[colab-badge]: https://x/b.svg\n",
     "| [Open In Colab](https://x/y) |\n\n"),  # a badge becomes its words, and its definition goes
    ("docs/zh/wsl2.md", '<a id="pypi-mirror"></a>\n## x\n', "(docs-wsl2-pypi-mirror)="),
    ("README.zh-CN.md", "[在中国大陆学习](#mainland-china)", "[在中国大陆学习](index.md#index-mainland-china)"),
    ("notebooks/zh/03_memory.ipynb", "[词](../../docs/glossary.md)", '<a href="../../docs/glossary.html">词</a>'),
])
def test_a_link_leads_to_its_page_on_the_site_or_to_the_repository(source: str, text: str, out: str):
    assert out in linker(sitepages.ZH if "zh" in source else sitepages.EN).rewrite(text, source)


CPU_RECORD = {
    "notebook": "05_cnn_cpu_vs_gpu", "smoke": True, "started": "2026-12-04T14:32:54+00:00",
    "environment": {"device": "/CPU:0", "device_kind": "CPU", "device_description": "Intel(R) Xeon(R) Processor",
                    "platform": "Linux-6.18-x86_64-with-glibc2.36", "python": "3.11.7", "tensorflow": "2.21.0",
                    "keras": "3.15.1",
                    "data": {"mnist": {"source": "bundled-sample", "train_images": 8000, "test_images": 2000,
                                       "train_images_used": 2000}}},
}
GPU_RECORD = {
    "notebook": "02_verify_gpu", "smoke": False, "started": "2026-11-30T09:05:00+00:00",
    "environment": {"device": "/GPU:0", "device_kind": "GPU", "device_description": "NVIDIA L4",
                    "platform": "Linux-6.8-x86_64-with-glibc2.39", "python": "3.12.3", "tensorflow": "2.21.0",
                    "keras": "3.15.1",
                    "gpu": {"name": "NVIDIA L4", "compute_capability": "8.9", "memory_mib": 23034,
                            "driver": "550.54.15", "cuda_build": "12.5.1", "count": 1}},
}


def test_the_box_says_which_machine_and_versions_made_the_outputs():
    """One line each, with the record's values: machine, device, versions, data, mode, date."""
    cpu, gpu = site.machine_lines(CPU_RECORD, "en"), site.machine_lines(GPU_RECORD, "en")
    values = [("Linux-6.18-x86_64-with-glibc2.36",), ("Intel(R) Xeon(R) Processor", "CPU; no GPU was used"),
              ("3.11.7", "2.21.0", "3.15.1"), ("mnist", "bundled-sample", "8,000 + 2,000 (2,000 used)"), ("smoke",),
              ("2026-12-04 14:32 UTC",)]
    assert all(v in line for line, row in zip(cpu, values, strict=True) for v in row), cpu
    assert any(all(v in line for v in ("NVIDIA L4", "8.9", "23034 MiB", "550.54.15", "12.5.1")) for line in gpu), gpu
    assert any("full run" in line for line in gpu) and not any("no GPU" in line for line in gpu), gpu
    assert "no record" in site.machine_lines(None, "en")[0]


def test_the_box_is_translated_and_links_colab_kaggle_and_binder():
    urls = REL.urls("zh/05_cnn_cpu_vs_gpu.ipynb")
    box = site.machine_box(CPU_RECORD, "zh", urls)
    assert box.startswith("```{admonition} ") and "\n:class: note course-run\n" in box and box.rstrip().endswith("```")
    assert all(f"]({url})" in box for url in urls) and "notebooks/zh/05_cnn_cpu_vs_gpu.ipynb" in urls[0]
    lines = site.machine_lines(CPU_RECORD, "zh")
    assert all(f"- {line}\n" in box for line in lines[1:]), "the machine's lines (the first, markdown-escaped)"
    assert all(re.search(r"[\u4e00-\u9fff]", line) for line in lines if not line.startswith("Python")), lines
    assert "Intel(R) Xeon(R) Processor" in lines[1] and "8,000 + 2,000" in lines[3]


def test_a_notebook_page_loses_its_badges_and_live_widgets_and_gains_the_box():
    nb = {"metadata": {"widgets": {"state": {}}}, "cells": [
        {"cell_type": "markdown", "metadata": {"tags": ["links"]}, "source": "[![Open In Colab](https://x/b.svg)](u)"},
        {"cell_type": "markdown", "metadata": {},
         "source": "# 05 · The CNN\n\nSee [OOM](../docs/troubleshooting.md#oom)."},
        {"cell_type": "code", "metadata": {}, "source": "controls", "outputs": [
            {"output_type": "display_data", "metadata": {}, "data": {site.RECORD_MIME: {"notebook": "05"}}},
            {"output_type": "display_data", "metadata": {},
             "data": {site.WIDGET_VIEW: {"model_id": "x"}, "text/plain": "VBox(...)"}}]},
    ]}
    out = site.notebook_for_site(nb, "BOX\n", linker(sitepages.EN), "notebooks/05_cnn_cpu_vs_gpu.ipynb")
    assert len(out["cells"]) == 2 and "widgets" not in out["metadata"]
    assert len(out["cells"][1]["outputs"]) == 1, "the record is data for course run, not for the page"
    assert out["cells"][0]["source"].startswith("# 05 · The CNN\n\nBOX\n")
    assert "[OOM](../docs/troubleshooting.md#docs-troubleshooting-oom)" in out["cells"][0]["source"]
    assert list(out["cells"][1]["outputs"][0]["data"]) == ["text/markdown"]


def test_a_folder_that_is_not_a_course_run_is_refused_with_what_to_do(tmp_path: Path, capsys):
    with pytest.raises(CourseError, match=r"(?s)is not a course run: it has no executed/NN_\*\.ipynb.*make course"):
        site.check_run(tmp_path, sitepages.EN)
    with pytest.raises(CourseError, match=r"(?s)no such folder.*course run notebooks/zh/\*\.ipynb --out"):
        site.check_run(tmp_path / "course-zh", sitepages.ZH)
    (tmp_path / "executed").mkdir()
    (tmp_path / "executed" / NOTEBOOKS[0].name).write_text("{}")
    with pytest.raises(CourseError, match=f"the run lacks {NOTEBOOKS[1].name}"):
        site.check_run(tmp_path, sitepages.EN)
    # the command line: exit 2 and the message, nothing built
    assert site.main(["--from", str(tmp_path), "--out", str(tmp_path / "site")]) == 2
    assert "course_tools.site:" in capsys.readouterr().err and not (tmp_path / "site").exists()


def test_a_line_break_between_chinese_characters_is_dropped_but_not_in_code_or_english():
    from docutils import nodes

    para = nodes.paragraph("", "", nodes.Text("第一句。\n第二句"), nodes.emphasis("", "强调"),
                           nodes.Text("\n后面。\nEnglish\nwords"))
    # as MyST gives them: a break of its own between two texts, and an equal break earlier that must stay
    mixed = nodes.paragraph("", "", nodes.Text("徽章。"), nodes.Text("\n"), nodes.emphasis("", "Open"),
                            nodes.Text(" 内存。"), nodes.Text("\n"), nodes.Text("如果"))
    code = nodes.literal_block("", "打印(1)\n打印(2)")
    inline = nodes.paragraph("", "", nodes.literal("", "代码\n代码"))
    tree = nodes.section("", para, code, inline, mixed)
    site.join_cjk_breaks(tree)
    assert mixed.astext() == "徽章。\nOpen 内存。如果"
    assert para.astext() == "第一句。第二句强调后面。\nEnglish\nwords"  # a break next to English stays a space
    assert code.astext() == "打印(1)\n打印(2)" and inline.astext() == "代码\n代码"


# --------------------------------------------------------------------------- the site in a browser

# What each page shows, read in one call: its language, images, links, language switch, boxes, search results...
FACTS = """() => {
  const all = selector => Array.from(document.querySelectorAll(selector));
  const first = selector => document.querySelector(selector) || {};
  return {
    lang: document.documentElement.lang, h1: first('h1').innerText || '', author: first('.component-author').innerText,
    copyright: first('.copyright').innerText,
    images: Array.from(document.images).map(img => ({
      src: img.getAttribute('src'), ok: img.complete && img.naturalWidth > 0, output: !!img.closest('.cell_output')})),
    links: all('a[href]').map(a => a.href), nav: all('.bd-sidebar-primary nav a[href]').map(a => a.href),
    switch: first('a.course-lang-switch').href,
    boxes: all('.admonition.course-run').map(b => b.innerText),
    searchFields: all('.search-button-field').filter(f => f.checkVisibility({visibilityProperty: true})).length,
    outputs: all('div.cell_output pre').map(b => [b.scrollWidth, b.clientWidth, b.textContent.length]),
    found: all('#search-results ul.search li a').map(a => a.href.split('#')[0].split('?')[0]),
  };
}"""
SEARCHES = {"search.html": ("TensorBoard", "notebooks/06_tensorboard.html"),
            "zh/search.html": ("显存", "zh/notebooks/03_memory.html")}
SHOTS = {"index.html": "site_en_home.png",
         "zh/notebooks/04_dense_noise_vs_zeros.html": "site_zh_04_dense_noise_vs_zeros.png"}


def site_pages(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*.html") if "_static" not in p.parts)


def plots_in(executed: Path) -> int:
    nb = json.loads(executed.read_text(encoding="utf-8"))
    return sum("image/png" in o.get("data", {}) for c in nb["cells"] for o in c.get("outputs", []))


@pytest.fixture(scope="module")
def walk(built_site: Path, served: Served, chromium) -> dict[str, dict]:
    """Every page opened once, in one browser context: its FACTS, and its errors and requests outside the site (an
    error that comes after a page was read counts for the next one)."""
    facts: dict[str, dict] = {}
    visit = None
    try:
        for path in site_pages(built_site):
            query = f"?q={urllib.request.quote(SEARCHES[path][0])}" if path in SEARCHES else ""
            if visit is None:
                visit = Visit(chromium, served.url, path + query)
            else:
                visit.go(path + query)
            if path in SEARCHES:
                visit.page.locator("#search-results ul.search li a").first.wait_for(timeout=30_000)
            if path in SHOTS:
                SCREENSHOTS.mkdir(parents=True, exist_ok=True)
                visit.page.screenshot(path=str(SCREENSHOTS / SHOTS[path]), full_page=False)
            facts[path] = {**visit.page.evaluate(FACTS), "errors": visit.errors[:], "outside": visit.outside[:]}
            visit.errors.clear()
            visit.outside.clear()
    finally:
        if visit is not None:
            visit.close()
    return facts


@pytest.mark.browser
def test_every_page_loads_with_its_images_and_nothing_from_outside(walk):
    # that every page of each edition is there: its home page's menu links it and the link resolves (tests below)
    problems = [f"{path}: image not shown: {i['src']}" for path, page in walk.items() for i in page["images"]
                if not i["ok"]]
    problems += [f"{path}: {e}" for path, page in walk.items() for e in page["errors"]]
    problems += [f"{path}: asked for {u} (outside the site)" for path, page in walk.items() for u in page["outside"]]
    assert not problems, "\n".join(problems[:60])


@pytest.mark.browser
def test_a_notebook_page_shows_every_plot_and_one_box(walk):
    problems = []
    for path, page in walk.items():
        if "/notebooks/" not in f"/{path}":
            continue
        run = CI_OUT.with_name(CI_OUT.name + "-zh") if path.startswith("zh/") else CI_OUT
        plots = plots_in(run / "executed" / Path(path).with_suffix(".ipynb").name)
        shown = sum(i["ok"] and i["output"] for i in page["images"])
        if shown < plots:
            problems.append(f"{path}: {plots} plots in the executed notebook, {shown} shown")
        if len(page["boxes"]) != 1:  # what the box says: test_the_box_says_which_machine_and_versions_made_the_outputs
            problems.append(f"{path}: not one box of machine and versions: {page['boxes']}")
    assert not problems, "\n".join(problems)


@pytest.mark.browser
def test_every_link_inside_the_site_resolves_to_a_page_and_anchor(walk, served: Served):
    links = {href: path for path, page in sorted(walk.items(), reverse=True) for href in page["links"]
             if href.startswith(served.url)}  # internal link -> a page it is on
    assert len(links) > 50, f"only {len(links)} internal links"
    problems, bodies = [], {}
    for href, on in sorted(links.items()):
        url, fragment = urldefrag(href)
        if url not in bodies:
            status, bodies[url] = fetch(url)
            if status != 200:
                problems.append(f"{on}: link to {urlsplit(url).path} gives {status}")
                continue
        if fragment and url.endswith(".html") and f'id="{html.escape(fragment)}"' not in bodies[url]:
            problems.append(f"{on}: link to {urlsplit(url).path}#{fragment}: no such anchor there")
    assert not problems, "\n".join(problems[:60])


@pytest.mark.browser
def test_the_language_switch_leads_to_the_same_page_in_the_other_language_or_its_home(built_site, walk, served):
    for path, page in walk.items():
        zh = path.startswith("zh/")
        assert page["lang"] == ("zh-CN" if zh else "en"), path
        target = path[3:] if zh else f"zh/{path}"
        if not (built_site / target).is_file():
            target = "index.html" if zh else "zh/index.html"
        assert page["switch"] == served.url + target, path


@pytest.mark.browser
@pytest.mark.parametrize("path", SEARCHES, ids=["en", "zh"])
def test_a_search_finds_its_page(walk, served: Served, path: str):
    assert served.url + SEARCHES[path][1] in walk[path]["found"], walk[path]["found"]


@pytest.mark.browser
@pytest.mark.parametrize("edition", sitepages.EDITIONS, ids=lambda e: e.code)
def test_the_home_page_shows_the_readme_and_the_menu_has_the_notebooks_and_guides(walk, served: Served, edition):
    page = walk[f"{edition.prefix}index.html"]
    title = (ROOT / edition.home).read_text(encoding="utf-8").splitlines()[0].removeprefix("# ")
    assert page["h1"].startswith(title), page["h1"]
    pages = {served.url + edition.prefix + name + ".html" for name in sitepages.page_map(edition).values()}
    assert pages - {served.url + edition.prefix + "index.html"} <= set(page["nav"]), page["nav"]


@pytest.mark.browser
def test_every_page_names_its_authors_and_licences_has_one_search_field_and_wraps_long_outputs(walk):
    for path, page in walk.items():
        assert "tf-gpu-course" in page["author"] and page["searchFields"] == 1, (path, page["author"])
        assert "MIT" in page["copyright"] and "CC BY 4.0" in page["copyright"], (path, page["copyright"])
        # every output fits its column: a line longer than the column wraps instead of scrolling sideways
        assert all(scroll <= client + 1 for scroll, client, _ in page["outputs"]), (path, page["outputs"])
    longest = max(length for *_, length in walk["notebooks/02_verify_gpu.html"]["outputs"])
    assert longest > 200, "a long output line is on the page"
