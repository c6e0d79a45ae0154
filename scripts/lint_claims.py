"""Rules on what the pages say about the code: commands, make targets and variables, the doctor's WSL2 answer and
driver minimums, the generated links, the licences, where the course installs from, the captures' sources.

The code is read through the course's own modules (``course_utils.cli``, ``.core.variables``, ``.doctor``:
standard library only) and tools/course_tools/links.py. Part of scripts/course_lint.py (``RULES``).
"""

from __future__ import annotations

import contextlib
import os
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

from lint_base import Finding, Rule, cells, code_blocks, line_at, read, rel, rules_of, source

from course_tools import links as notebook_links  # make links: what `make links` writes
from course_utils.core.errors import CourseError

RULES: list[Rule] = []
rule = rules_of(RULES)

GUIDE, ROUTES = "docs/wsl2.md", "docs/routes.md"
DRIVER_VERSION = re.compile(r">=\s*(\d{3}\.\d+(?:\.\d+)?)")  # a driver minimum as the docs write it: ">= 528.33"


# ----------------------------------------------------------------- commands, make, variables

def command_lines(text: str) -> list[str]:
    """The code of a page: its inline code spans and its fenced blocks."""
    return re.findall(r"`([^`\n]+)`", text) + re.findall(r"```[a-z]*\n(.*?)```", text, re.S)


@rule("doc-command", "the docs name exactly the `course` commands that exist (instructors.md's table: all, in order)")
def doc_commands(root: Path) -> Iterator[Finding]:
    from course_utils import cli  # the commands of `course --help` (standard library only)

    commands = list(cli.commands())
    text = read(root / "docs" / "instructors.md")
    table = re.findall(r"^\| `course ([a-z-]+)` \|", text, re.M)
    if table != commands:
        yield Finding("docs/instructors.md", None, "doc-command", f"the table lists {table}",
                      f"list the commands of `course --help`, in its order: {commands}")
    pages = [*sorted((root / "docs").rglob("*.md")), root / "README.md", root / "CONTRIBUTING.md"]
    for page in pages:
        # a command line: `course X` at the start of a span or a line, or after a notebook's ! or a pipe/&&
        named = {m for code in command_lines(read(page))
                 for m in re.findall(r"(?:^\s*|!|\|\s*|&&\s*)course ([a-z][a-z-]*)", code, re.M)}
        for name in sorted(named - set(commands)):
            yield Finding(rel(page, root), None, "doc-command", f"`course {name}` is no command",
                          f"name one of {commands}")
    class_page = read(root / "docs" / "class.md")
    for name in ("preflight", "class-report", "hand-in", "progress", "grading"):
        if f"`course {name}`" not in class_page:
            yield Finding("docs/class.md", None, "doc-command", f"`course {name}` is not explained",
                          "the class page explains every class command")
    blocks = "\n".join(code_blocks(read(root / GUIDE)) + code_blocks(read(root / ROUTES)))
    for name in sorted(set(re.findall(r"^(?:\.venv/bin/)?course ([a-z]+)", blocks, re.M)) - set(commands)):
        yield Finding(GUIDE, None, "doc-command", f"`course {name}` is no command", f"name one of {commands}")


def make_commands(root: Path) -> list[tuple[str, str]]:
    """(page, command) for every ``make ...`` in the README's and the guides' code blocks and inline code."""
    found = []
    for name in ("README.md", GUIDE, ROUTES, "docs/instructors.md", "docs/maintainers.md"):
        text = read(root / name)
        lines = [line for block in code_blocks(text) for line in block.splitlines()]
        lines += re.findall(r"`(make [^`]+)`", text)
        found += [(name, re.sub(r"\s+#.*", "", line).strip()) for line in lines if line.startswith("make ")]
    return found


@rule("doc-make", "the docs' make commands use targets and variables the Makefile has; the gpu extra as GPU=1")
def doc_make(root: Path) -> Iterator[Finding]:
    makefile = read(root / "Makefile")
    targets = set(re.findall(r"^([a-z][\w-]*):", makefile, re.M))
    known = set(re.findall(r"^([A-Z_]+) \?=", makefile, re.M))
    commands = make_commands(root)
    for page, command in commands:
        target = command.split()[1] if len(command.split()) > 1 else ""
        if page in (GUIDE, ROUTES) and re.fullmatch(r"[a-z][\w-]*", target) and target not in targets:
            yield Finding(page, None, "doc-make", f"`{command}`: no target {target!r}", "use a target of the Makefile")
        for variable in sorted(set(re.findall(r"\b([A-Z_]+)=", command)) - known):
            yield Finding(page, None, "doc-make", f"`{command}`: the Makefile reads no {variable}",
                          f"use one of {sorted(known)}")
    for page in dict(commands):
        text = read(root / page)
        for wrong, fix in (("EXTRAS=dev,gpu", "the switch is GPU=1"),
                           ('.venv/bin/pip install -e ".[gpu]"', "make venv GPU=1 keeps the stamp right"),
                           ("LEAD:", "a note to the team: remove it")):
            if wrong in text:
                yield Finding(page, line_at(text, text.index(wrong)), "doc-make", f"{wrong!r}", fix)
    guide = read(root / GUIDE)
    step8 = guide[guide.find("## 8."):guide.find("## 9.")]
    if "make venv GPU=1" not in (code_blocks(step8) or [""])[0]:
        yield Finding(GUIDE, None, "doc-make", "step 8 does not start with `make venv GPU=1`", "install the gpu extra")
    if "Environment ready:" not in read(root / "scripts" / "venv.sh"):
        yield Finding("scripts/venv.sh", None, "doc-make", "no 'Environment ready:' line",
                      "docs/wsl2.md step 8 says `make venv` ends with it")


@rule("doc-variable", "CONTRIBUTING's table of COURSE_* variables is core/variables.py's; the docs name no other")
def doc_variables(root: Path) -> Iterator[Finding]:
    from course_utils.core import variables

    text = read(root / "CONTRIBUTING.md")
    table = re.search(r"<!-- variables:start -->\n(.*?)\n<!-- variables:end -->", text, re.S)
    if not table or table.group(1) != variables.markdown_table():
        yield Finding("CONTRIBUTING.md", line_at(text, table.start()) if table else None, "doc-variable",
                      "the table of variables differs from course_utils/core/variables.py",
                      "paste variables.markdown_table() between the markers")
    page = read(root / "docs" / "instructors.md")
    for m in re.finditer(r"`(COURSE_[A-Z_]+)", page):
        if m[1] not in variables.NAMES:
            yield Finding("docs/instructors.md", line_at(page, m.start()), "doc-variable", f"{m[1]} is no variable",
                          "name one of course_utils/core/variables.py")


# ----------------------------------------------------------------- the WSL2 guide and the doctor

def accepted_pythons(root: Path) -> list[str]:
    """The Python 3 minor versions pyproject.toml's requires-python accepts (e.g. ">=3.11,<3.14")."""
    spec = tomllib.loads(read(root / "pyproject.toml"))["project"]["requires-python"]
    tests = {">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, "<": lambda a, b: a < b}
    clauses = [re.fullmatch(r"\s*(>=|<=|>|<)\s*3\.(\d+)\s*", part) for part in spec.split(",")]
    if not all(clauses):
        raise ValueError(f"requires-python {spec!r}: only >=, <=, >, < on 3.N are understood")
    return [f"3.{m}" for m in range(6, 20) if all(tests[c[1]](m, int(c[2])) for c in clauses)]


@contextlib.contextmanager
def in_english() -> Iterator[None]:
    """The doctor's sentences in English (what the English guide quotes)."""
    before = os.environ.get("COURSE_LANG")
    os.environ["COURSE_LANG"] = "en"
    try:
        yield
    finally:
        if before is None:
            del os.environ["COURSE_LANG"]
        else:
            os.environ["COURSE_LANG"] = before


def example_tensorflow(**overrides: object) -> object:
    """The guide's example: TensorFlow 2.21's CUDA build, seeing the RTX 4070."""
    from course_utils.doctor import TensorFlowInfo

    values = {"installed": True, "version": "2.21.0", "built_with_cuda": True, "cuda_version": "12.5.1",
              "cudnn_version": "9", "compute_capabilities": ["sm_60", "sm_70", "sm_80", "sm_89", "compute_90"],
              "gpus": [{"name": "NVIDIA GeForce RTX 4070", "compute_capability": "8.9"}]}
    return TensorFlowInfo(**{**values, **overrides})


def guide_python(guide: str) -> str | None:
    """The Python the guide's Ubuntu has: from the `python3 --version` output it shows ("Python 3.12.3")."""
    found = {m for block in code_blocks(guide) for m in re.findall(r"^Python (3\.\d+)\.\d+$", block, re.M)}
    return found.pop() if len(found) == 1 else None


def wsl2_problems(root: Path, guide: str) -> Iterator[str]:
    """What the guide says that the doctor does not (each a sentence)."""
    from course_utils.doctor import describe, diagnose
    from course_utils.doctor.versions import load

    fixtures = root / "tests" / "fixtures" / "nvidia"  # real nvidia-smi captures: the guide's example machine
    accepted, python = accepted_pythons(root), guide_python(guide)
    if python not in accepted:
        yield f"the guide's `python3 --version` shows {python}, which pyproject.toml does not accept ({accepted})"
    if f"Python {accepted[0]} to {accepted[-1]}" not in guide:
        yield f"the guide does not state the accepted range 'Python {accepted[0]} to {accepted[-1]}'"
    if "3.10" in accepted or "wsl --install -d Ubuntu-24.04" not in guide:
        yield "the guide moves Ubuntu 22.04 (Python 3.10) users to Ubuntu 24.04: true only while 3.10 is refused"
    smi = (fixtures / "smi_wsl2_555.99_rtx4070.txt").read_text(encoding="utf-8")
    with in_english():
        result = diagnose(describe("wsl2", python or "3.12", smi, tensorflow=example_tensorflow()))
        answer, report = result.to_json(), result.summary().splitlines()
        nvcc = (fixtures / "nvcc_linux_12.6.txt").read_text(encoding="utf-8")
        toolkit = diagnose(describe("wsl2", "3.12", smi, nvcc)).codes()
    commands = answer["recommended_install"]
    if not any("[and-cuda]" in c for c in commands):
        yield f"the doctor's WSL2 answer is not the GPU route: {commands}"
    yield from (f"the doctor's WSL2 command {c!r} is not in the guide" for c in [*commands, answer["tensorflow"]]
                if c not in guide)
    table = load()
    if set(DRIVER_VERSION.findall(guide)) != {table.rule("wsl2")["driver_min"]}:
        yield f"the driver minimums {sorted(set(DRIVER_VERSION.findall(guide)))}: the doctor's is " \
              f"{table.rule('wsl2')['driver_min']}"
    if f"build {table.rule('wsl2')['windows_build_min']} or higher" not in guide:
        yield f"the guide does not say 'build {table.rule('wsl2')['windows_build_min']} or higher'"
    codes = [note["code"] for note in answer["recommended"]["notes"]]
    for code in codes:
        if code in table.rules and table.rules[code]["source"] not in guide:
            yield f"the doctor's note {code!r} cites {table.rules[code]['source']}, which the guide does not"
    section = guide.split("## What not to install", 1)[-1].split("\n## ", 1)[0]
    if not ("Linux NVIDIA driver" in section and "wsl2-no-linux-driver" in codes and "nvcc-not-used" in toolkit
            and "CUDA toolkit" in section):
        yield "'What not to install' and the doctor's notes (wsl2-no-linux-driver, nvcc-not-used) differ"
    yield from sample_report_problems(guide, report)
    yield from explained_codes(guide, fixtures, python or "3.12")


def sample_report_problems(guide: str, report: list[str]) -> Iterator[str]:
    """The guide's `course doctor` sample ("..." ends a line early or skips lines) is, in order, the doctor's report."""
    samples = [block for block in code_blocks(guide) if block.startswith("Verdict: ")]
    if len(samples) != 1:
        yield f"{len(samples)} sample doctor reports (blocks that start with 'Verdict: '); one is shown"
        return
    at = 0
    for line in samples[0].splitlines():
        if line.strip() == "...":
            continue
        prefix = line[:-3] if line.endswith("...") else None
        while at < len(report) and not (report[at] == line or (prefix is not None and report[at].startswith(prefix))):
            at += 1
        if at >= len(report):
            yield f"the sample's line {line!r} is not in the doctor's report for the example machine (in this order)"
            return
        at += 1


def explained_codes(guide: str, fixtures: Path, python: str) -> Iterator[str]:
    """Each finding the guide explains is what the doctor says in that case."""
    from course_utils.doctor import describe, diagnose

    smi = (fixtures / "smi_wsl2_555.99_rtx4070.txt").read_text(encoding="utf-8")
    cases = {
        "tensorflow-uses-gpu": (smi, example_tensorflow()),
        "no-nvidia-driver": ((fixtures / "smi_missing_command_not_found.txt").read_text(encoding="utf-8"), None),
        "driver-too-old": ((fixtures / "smi_qa_post_windows_512.77_wddm.txt").read_text(encoding="utf-8"), None),
        "cpu-only-build": (smi, example_tensorflow(built_with_cuda=False)),
        "tensorflow-sees-no-gpu": (smi, example_tensorflow(gpus=[])),
    }
    for code, (capture, tensorflow) in cases.items():
        if f"`{code}`" not in guide:
            yield f"the guide does not explain `{code}`"
        elif code not in diagnose(describe("wsl2", python, capture, tensorflow=tensorflow)).codes():
            yield f"the guide explains `{code}`, which the doctor does not give in that case"


@rule("wsl2-doctor", "docs/wsl2.md says what the doctor says for WSL2: Python, commands, driver, notes, its report")
def wsl2_doctor(root: Path) -> Iterator[Finding]:
    for problem in wsl2_problems(root, read(root / GUIDE)):
        yield Finding(GUIDE, None, "wsl2-doctor", problem, "make the guide say what `course doctor` says")


@rule("driver-minimum", "docs/routes.md states the doctor's driver minimums (Linux, WSL2) and no others")
def driver_minimums(root: Path) -> Iterator[Finding]:
    from course_utils.doctor.versions import load

    table = load()
    wanted = {table.rule("linux-driver-min")["driver_min"], table.rule("wsl2")["driver_min"]}
    stated = set(DRIVER_VERSION.findall(read(root / ROUTES)))
    if stated != wanted:
        yield Finding(ROUTES, None, "driver-minimum", f"driver minimums {sorted(stated)}",
                      f"state the doctor's (course_utils/doctor/versions.json): {sorted(wanted)}")


# ----------------------------------------------------------------- generated links, first screens, licences

@rule("links-current", "the notebooks' badges and install cells and the READMEs' tables are what `make links` writes")
def links_current(root: Path) -> Iterator[Finding]:
    try:
        files = notebook_links.expected(root)
    except CourseError as error:
        yield Finding("pyproject.toml", None, "links-current", error.what, error.fix)
        return
    for path, text in files.items():
        if read(path) != text:
            yield Finding(rel(path, root), None, "links-current",
                          "differs from what tools/course_tools/links.py writes",
                          "run `make links` and commit the result")


@rule("readme", "each README's first screen: the other README, the routes, the WSL2 guide, the check page")
def readme_first_screen(root: Path) -> Iterator[Finding]:
    website = notebook_links.release(root).website
    english, chinese = read(root / "README.md"), read(root / "README.zh-CN.md")
    needs = [("README.md", english, 5, "](README.zh-CN.md)"), ("README.zh-CN.md", chinese, 5, "](README.md)"),
             ("README.md", english, 40, "](docs/wsl2.md)"), ("README.md", english, 40, "](docs/routes.md)"),
             ("README.md", english, 40, "Which route fits your machine"),
             ("README.md", english, 12, f"]({website}check.html)"),
             ("README.zh-CN.md", chinese, 12, f"]({website}zh/check.html)")]
    for name, text, lines, needed in needs:
        if needed not in "\n".join(text.splitlines()[:lines]):
            yield Finding(name, None, "readme", f"no {needed!r} in the first {lines} lines", "put it up there")
    for notebook, page in (("notebooks/01_install_versions.ipynb", "check.html"),
                           ("notebooks/zh/01_install_versions.ipynb", "zh/check.html")):
        if f"]({website}{page})" not in source(cells(root / notebook)[1]):
            yield Finding(notebook, "cell 1", "readme", f"the header does not link {website}{page}",
                          "students without an environment check their machine there")
    if "OWNER/REPO" in english:
        yield Finding("README.md", line_at(english, english.index("OWNER/REPO")), "readme", "OWNER/REPO",
                      "name the repository (pyproject.toml's Repository)")


@rule("licence", "pyproject and LICENSE say MIT; LICENSE-CONTENT.md gives CC BY 4.0; both READMEs name both")
def licences(root: Path) -> Iterator[Finding]:
    project = tomllib.loads(read(root / "pyproject.toml"))["project"]
    if project.get("license") != "MIT" or not read(root / "LICENSE").startswith("MIT License\n"):
        yield Finding("pyproject.toml", None, "licence", "the code's licence is not MIT in both pyproject and LICENSE",
                      "make them agree")
    content = read(root / "LICENSE-CONTENT.md")
    if "https://creativecommons.org/licenses/by/4.0/" not in content or "mnist_sample.npz" not in content:
        yield Finding("LICENSE-CONTENT.md", None, "licence", "no CC BY 4.0 link or no mnist_sample.npz",
                      "state the text's licence and the sample's")
    for name in ("README.md", "README.zh-CN.md"):
        text = read(root / name)
        if not ("](LICENSE)" in text and "](LICENSE-CONTENT.md)" in text and "CC BY 4.0" in text):
            yield Finding(name, None, "licence", "does not link LICENSE and LICENSE-CONTENT.md with CC BY 4.0",
                          "name both licences where a reuser looks")


CAPTURES = {"tests/fixtures/nvidia": "SOURCES.md", "tests/fixtures/tf_logs": "README.md"}
# a real capture names its thread, its file at a commit, the Q&A post or how it was captured; a constructed or
# composed file names the public source of what it is built from
CAPTURE_SOURCE = re.compile(r"https://\S+|docs/sources\.md|captured (with|on)")


@rule("capture-sources", "every saved nvidia-smi, nvcc and TensorFlow capture has a row that names its source")
def capture_sources(root: Path) -> Iterator[Finding]:
    for folder, listing in CAPTURES.items():
        rows = {m[1]: m[0] for m in re.finditer(r"^\| `([^`]+)` \|.*$", read(root / folder / listing), re.M)}
        for path in sorted((root / folder).iterdir()):
            if path.name == listing:
                continue
            if path.name not in rows or not CAPTURE_SOURCE.search(rows[path.name]):
                yield Finding(rel(path, root), None, "capture-sources", f"no row with a source in {listing}",
                              f"add `| `{path.name}` | what it shows | its public source |` to {folder}/{listing}")


MIRROR = re.compile(r"index-url\S*|INDEX_URL\S*|tuna\.tsinghua|mirrors\.ustc|aliyun")


@rule("no-mirror", "a package mirror is the reader's choice: the files that install the course name none")
def no_mirror(root: Path) -> Iterator[Finding]:
    installers = [root / "Makefile", root / "pyproject.toml", root / "environment.yml", root / "scripts" / "venv.sh",
                  *sorted((root / "constraints").glob("*.txt")), *sorted((root / "binder").glob("*")),
                  *sorted((root / ".ci").glob("*"))]
    for path in installers:
        if path.is_file():
            text = read(path)
            for m in MIRROR.finditer(text):
                yield Finding(rel(path, root), line_at(text, m.start()), "no-mirror", m[0], "PyPI stays the default")

