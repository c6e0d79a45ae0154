"""Build the course as a static website from a course run: ``make site`` (docs/maintainers.md, "The website").

The site shows what the English and the Chinese course runs executed; it never runs a notebook. Sphinx with MyST-NB
and the Sphinx Book Theme (the ``site`` extra) build it with no network, with ``-W``: a warning fails the build.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from course_tools import _, speaking
from course_tools.links import LINKS_TAG, Release, notebooks, release  # the one home of the Colab/Kaggle/Binder URLs
from course_tools.site import doctor_page  # the page "Check your machine"
from course_tools.site.pages import (
    EDITIONS,
    EN,
    ZH,
    Edition,
    Linker,
    explicit_anchors,
    label,
    notebook_names,
    other,
    page_map,
    source_name,
    switch_url,
)
from course_utils.core.child import python_command
from course_utils.core.errors import CourseError
from course_utils.core.i18n import CHINESE_CHARACTERS  # Chinese text's characters, one home
from course_utils.core.places import PROJECT_ROOT as ROOT
from course_utils.results import RECORD_MIME, data_summary, read_results  # RECORD_MIME: a notebook's record output

THEME = Path(__file__).resolve().parent / "theme"
SPHINX_SETTINGS = THEME.parent / "sphinx.toml"  # the settings both languages share

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


# The link to the same page in the other edition: its language's name, and a title in that language.
SWITCH = {"en": ("中文", "这一页的中文版"), "zh": ("English", "This page in English")}


def site_words(code: str) -> dict[str, str]:
    """The site's own words in the language of edition ``code`` (the tools' message catalogue)."""
    with speaking(code):
        return {
            "title": _("Training deep-learning models on the GPU with TensorFlow"),
            "authors": _("the tf-gpu-course authors"),
            "licence": _("the tf-gpu-course authors. Code: MIT licence. Text and notebooks: CC BY 4.0"),
            "notebooks": _("Notebooks"),
            "guides": _("Guides"),
            "box": _("Where these outputs come from"),
            "open": _("Run this notebook yourself: {colab} · {kaggle} · {binder}"),
            "colab": _("Open in Colab"),
            "kaggle": _("Open in Kaggle"),
            "binder": _("Open in Binder"),
            "machine": _("Machine: {platform}"),
            "device": _("Device: {device}"),
            "cpu_only": _("{description} (CPU; no GPU was used)"),
            "gpu": _("GPU: {name}"),
            "gpu_facts": _("compute capability {cc}, {memory} MiB, driver {driver}, CUDA {cuda}"),
            "versions": _("Python {python}, TensorFlow {tensorflow}, Keras {keras}"),
            "data": _("Data: {data}"),
            "smoke": _("Mode: smoke (a short run: fewer images and epochs than the full run)"),
            "full": _("Mode: full run"),
            "date": _("Date: {date}"),
            "no_record": _("The run has no record for this notebook: machine and versions unknown."),
            "widget": _("*An interactive widget is here. It works when you run the notebook (JupyterLab, Colab, "
                        "Kaggle or Binder).*"),
        }


def machine_lines(record: Mapping[str, Any] | None, code: str) -> list[str]:
    """Which machine and versions produced a notebook's outputs, one line each, from its run record."""
    words = site_words(code)
    if not record:
        return [words["no_record"]]
    env = record.get("environment") or {}
    lines = []
    if env.get("platform"):
        lines.append(words["machine"].format(platform=env["platform"]))
    gpu = env.get("gpu") or {}
    if env.get("device_kind") == "GPU" or gpu:
        name = gpu.get("name") or env.get("device_description") or "GPU"
        count = gpu.get("count")
        text = words["gpu"].format(name=f"{count} × {name}" if isinstance(count, int) and count > 1 else name)
        facts = {"cc": gpu.get("compute_capability"), "memory": gpu.get("memory_mib"),
                 "driver": gpu.get("driver"), "cuda": gpu.get("cuda_build")}
        if all(v is not None for v in facts.values()):
            text += f" ({words['gpu_facts'].format(**facts)})"
        lines.append(text)
    elif env.get("device_description") or env.get("device"):
        lines.append(words["device"].format(
            device=words["cpu_only"].format(description=env.get("device_description") or env.get("device"))))
    versions = {k: env.get(k) for k in ("python", "tensorflow", "keras")}
    if all(versions.values()):
        lines.append(words["versions"].format(**versions))
    data = data_summary(env)
    if data and code == "zh":
        data = re.sub(r" \(([\d,]+) used\)", r"（使用了 \1）", data)
    if data:
        lines.append(words["data"].format(data=data))
    if "smoke" in record:
        lines.append(words["smoke"] if record["smoke"] else words["full"])
    when = record.get("started") or record.get("updated")
    if isinstance(when, str) and len(when) >= 16:
        lines.append(words["date"].format(date=when[:10] + " " + when[11:16] + " UTC"))
    return lines


def machine_box(record: Mapping[str, Any] | None, code: str, urls: tuple[str, str, str]) -> str:
    """The box at the top of a notebook page: where to run the notebook, and where its outputs come from."""
    words = site_words(code)
    colab, kaggle, binder = urls
    opened = words["open"].format(colab=f"[{words['colab']}]({colab})", kaggle=f"[{words['kaggle']}]({kaggle})",
                                  binder=f"[{words['binder']}]({binder})")
    items = "\n".join("- " + re.sub(r"([\\`*_\[\]<>#|])", r"\\\1", line) for line in machine_lines(record, code))
    return f"```{{admonition}} {words['box']}\n:class: note course-run\n\n{opened}\n\n{items}\n```\n"


def check_run(folder: Path, edition: Edition, root: Path = ROOT) -> None:
    """Stop with what to do when ``folder`` is not a course run of ``edition`` with every notebook executed."""
    command = ("make course (or: course run --out DIR)" if edition is EN
               else "make course (or: course run notebooks/zh/*.ipynb --out DIR-zh)")
    what = "English" if edition is EN else "Chinese"
    if not folder.is_dir():
        raise CourseError(f"{folder}: no such folder. The site needs the {what} course run there.",
                          f"Make it with {command}.")
    executed = folder / "executed"
    if not notebooks(executed):
        raise CourseError(f"{folder} is not a course run: it has no executed/NN_*.ipynb notebooks.",
                          f"Give the folder that `course run --out` wrote, or make one with {command}.")
    missing = [name for name in notebook_names(edition, root) if not (executed / name).is_file()]
    if missing:
        raise CourseError(f"{folder}: the run lacks {', '.join(missing)} ({what} notebooks).",
                          f"Run every notebook: {command}.")


def read_record(folder: Path, stem: str) -> dict[str, Any] | None:
    try:
        return read_results(folder / "results" / f"{stem}.json")
    except (OSError, ValueError):
        return None


def notebook_for_site(nb: dict[str, Any], box: str, linker: Linker, source: str) -> dict[str, Any]:
    """An executed notebook as its page shows it: the box under its title, links rewritten, no live widgets, and
    no record output (data for ``course run``; the box shows what a reader needs of it)."""
    words = site_words(linker.edition.code)
    cells = [c for c in nb["cells"] if LINKS_TAG not in c.get("metadata", {}).get("tags", [])]  # the box replaces it
    titled = False
    for cell in cells:
        if cell["cell_type"] == "markdown":
            text = linker.rewrite("".join(cell["source"]), source)
            if not titled:
                first, _, rest = text.partition("\n")
                text = f"{first}\n\n{box}\n{rest}"
                titled = True
            cell["source"] = text
        if cell.get("outputs"):
            cell["outputs"] = [o for o in cell["outputs"] if RECORD_MIME not in o.get("data", {})]
        for output in cell.get("outputs", []):
            if WIDGET_VIEW in output.get("data", {}):
                output["data"] = {"text/markdown": words["widget"]}
                output["metadata"] = {}
    nb["cells"] = cells
    nb.get("metadata", {}).pop("widgets", None)  # MyST-NB would load the widget scripts from a CDN
    return nb


TOCTREE = "```{{toctree}}\n:caption: {caption}\n:hidden:\n\n{entries}\n```\n"


def write_conf(src: Path, edition: Edition, other_pages: set[str], rel: Release) -> None:
    """The Sphinx configuration of one language: read by conf.py's ``setup``, made here."""
    words = site_words(edition.code)
    settings = {
        "edition": edition.code, "language": edition.language, "title": words["title"], "authors": words["authors"],
        "licence": words["licence"], "repository": rel.repository, "other_pages": sorted(other_pages),
        "switch_label": SWITCH[edition.code][0], "switch_title": SWITCH[edition.code][1],
        "switch_lang": "zh-CN" if edition is EN else "en", "theme": str(THEME),
    }
    (src / "site.json").write_text(json.dumps(settings, ensure_ascii=False, indent=1), encoding="utf-8")
    (src / "conf.py").write_text(
        "# Made by tools/course_tools/site/build.py: the Sphinx settings are in sphinx_settings() there.\n"
        "from course_tools.site.build import sphinx_settings, sphinx_setup\n\n"
        "globals().update(sphinx_settings(__file__))\n"
        "setup = sphinx_setup\n",
        encoding="utf-8",
    )


def sphinx_settings(conf_file: str) -> dict[str, Any]:
    """conf.py's values: sphinx.toml's, and those of this language, from the site.json beside conf.py."""
    settings = json.loads((Path(conf_file).parent / "site.json").read_text(encoding="utf-8"))
    theme = Path(settings["theme"])
    conf = tomllib.loads(SPHINX_SETTINGS.read_text(encoding="utf-8"))
    conf["html_theme_options"]["repository_url"] = settings["repository"]
    return conf | {
        "project": settings["title"],
        "html_title": settings["title"],
        "author": settings["authors"],  # the footer's "By ..." (without it: "By Author name not set")
        "copyright": settings["licence"],  # the footer of every page: (C) Copyright <this>
        "language": settings["language"],
        "html_search_language": "zh" if settings["language"].startswith("zh") else "en",
        "templates_path": [str(theme / "templates")],
        "html_static_path": [str(theme / "static")],
        "course_site": settings,
    }


CJK_BREAK = re.compile(f"(?<=[{CHINESE_CHARACTERS}])\n(?=[{CHINESE_CHARACTERS}])")


def join_cjk_breaks(doctree: Any) -> None:
    """Drop the line breaks between Chinese characters in running text (not in code).

    The Chinese pages' sources break lines between sentences, as the English ones do. A browser shows such a
    break as a space, which Chinese text does not have (Chromium does not apply the CSS rule that would drop
    it: https://www.w3.org/TR/css-text-3/#line-break-transform).
    """
    from docutils import nodes  # lazy: Sphinx's docutils (the site extra), loaded only while Sphinx builds

    code = (nodes.literal_block, nodes.literal, nodes.raw, nodes.comment, nodes.doctest_block)
    in_code = {id(n) for block in doctree.findall(lambda n: isinstance(n, code)) for n in block.findall()}
    for element in list(doctree.findall(nodes.TextElement)):
        if id(element) in in_code:
            continue
        children = element.children
        for i, child in enumerate(list(children)):
            if not isinstance(child, nodes.Text) or "\n" not in child:
                continue
            before = children[i - 1].astext()[-1:] if i > 0 else ""
            after = children[i + 1].astext()[:1] if i + 1 < len(children) else ""
            joined = CJK_BREAK.sub("", before + str(child) + after)
            joined = joined[len(before):len(joined) - len(after)]
            if joined != str(child):  # by position: Text nodes are strings, and equal ones are not the same node
                replacement = nodes.Text(joined)
                replacement.parent = element
                children[i] = replacement


def sphinx_setup(app: Any) -> dict[str, Any]:
    """conf.py's ``setup``: the language switch's link on every page; Chinese text without stray spaces."""
    app.add_config_value("course_site", {}, "html")

    def doctree_read(app: Any, doctree: Any) -> None:
        if app.config.course_site.get("edition") == "zh":
            join_cjk_breaks(doctree)

    app.connect("doctree-read", doctree_read)

    def context(app: Any, pagename: str, templatename: str, ctx: dict[str, Any], doctree: Any) -> None:
        settings = app.config.course_site
        ctx["course_switch_url"] = switch_url(pagename, settings["edition"], set(settings["other_pages"]))
        ctx.update({f"course_{key}": settings[key] for key in ("switch_label", "switch_title", "switch_lang")})

    app.connect("html-page-context", context)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def assemble(edition: Edition, run: Path, src: Path, rel: Release, root: Path = ROOT) -> None:
    """The Sphinx source tree of one language in ``src``: the home page, the guides, the executed notebooks."""
    import nbformat

    pages = {e.code: page_map(e, root) for e in EDITIONS}
    anchors = {(e.code, path): explicit_anchors((root / path).read_text(encoding="utf-8"))
               for e in EDITIONS for path in pages[e.code] if path.endswith(".md")}
    linker = Linker(edition, pages, anchors, rel, root)
    mine = pages[edition.code]
    words = site_words(edition.code)
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    notebooks = [p for p in mine if p.endswith(".ipynb")]
    docs = [p for p in mine if p.startswith(edition.docs + "/")]
    trouble = mine[f"{edition.docs}/troubleshooting.md"]
    base = "../" * edition.prefix.count("/") + doctor_page.FOLDER + "/"
    (src / f"{doctor_page.PAGE}.md").write_text(
        doctor_page.page_source(edition.code, base, lambda anchor: f"{trouble}.html#{label(trouble, anchor)}"),
        encoding="utf-8")
    for path, page in mine.items():
        target = src / source_name(path, page)
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.endswith(".md"):
            text = linker.rewrite((root / path).read_text(encoding="utf-8"), path)
            if page == "index":
                text += "\n" + TOCTREE.format(caption=words["notebooks"],
                                              entries="\n".join(mine[p] for p in notebooks))
                text += "\n" + TOCTREE.format(caption=words["guides"],
                                              entries="\n".join([doctor_page.PAGE, *(mine[p] for p in docs)]))
            target.write_text(text, encoding="utf-8")
        else:
            name = Path(path).name
            nb = nbformat.read(run / "executed" / name, as_version=4)
            urls = rel.urls(f"zh/{name}" if edition is ZH else name)
            box = machine_box(read_record(run, Path(name).stem), edition.code, urls)
            nbformat.write(nbformat.from_dict(notebook_for_site(nb, box, linker, path)), target)
    for image in linker.images:
        (src / image).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / image, src / image)
    write_conf(src, edition, {doctor_page.PAGE, *pages[other(edition).code].values()}, rel)


def sphinx_build(src: Path, out: Path) -> None:
    """One language's pages: sphinx-build -W (a warning fails the build), doctrees kept out of the site."""
    command = python_command("sphinx", "-W", "--keep-going", "-q", "-b", "html",
                             "-d", str(src.parent / f".doctrees-{src.name}"), str(src), str(out))
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    if done.returncode != 0:
        raise CourseError(f"sphinx-build failed for {src} (exit {done.returncode}):\n{done.stdout}{done.stderr}",
                          "Fix what Sphinx names above (a page, a link, a notebook), then run make site again.")


# What Sphinx leaves in the output that no page uses: its build records, MyST-NB's copies of the notebooks and their
# images (the pages show those in _images/), the theme's message catalogues (used while building) and the source
# maps of its scripts (for a developer's browser tools).
UNUSED = (".buildinfo", ".buildinfo.bak", "jupyter_execute", "_sources", "_static/locales")


def prune(out: Path) -> None:
    """Remove from each language's pages in ``out`` what no page loads or links to (UNUSED)."""
    for top in (out, out / ZH.prefix):
        for name in UNUSED:
            path = top / name
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()
        for source_map in (top / "_static").rglob("*.map"):
            source_map.unlink()


def build_site(run: Path, out: Path, src: Path, zh_run: Path | None = None, root: Path = ROOT) -> float:
    """The whole site from the English run ``run`` and the Chinese run (default ``run`` + ``-zh``); seconds taken."""
    started = time.monotonic()
    zh_run = zh_run or run.with_name(run.name + "-zh")
    check_run(run, EN, root)
    check_run(zh_run, ZH, root)
    rel = release(root)
    if out.exists():
        shutil.rmtree(out)
    for edition, folder in ((EN, run), (ZH, zh_run)):
        assemble(edition, folder, src / edition.code, rel, root)
        sphinx_build(src / edition.code, out / edition.prefix)
    prune(out)
    doctor_page.write_assets(out, root)
    (out / ".nojekyll").write_text("", encoding="utf-8")  # GitHub Pages: serve the _static folders as they are
    return time.monotonic() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from", dest="run", type=Path, default=ROOT / "build" / "course",
                        help="the English course run (default build/course); the Chinese one is beside it, "
                             "with -zh added")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "site", help="the site (default build/site)")
    args = parser.parse_args(argv)
    try:
        seconds = build_site(args.run.resolve(), args.out.resolve(), ROOT / "build" / "site-src")
    except CourseError as error:
        print(f"course_tools.site: {error}", file=sys.stderr)
        return 2
    print(f"course_tools.site: the site is in {args.out} ({seconds:.0f} s). "
          f"To view it: python -m http.server -d {args.out}, then open http://localhost:8000")
    return 0


if __name__ == "__main__":
    sys.exit(main())
