"""The WSL2 guide (docs/wsl2.md) and the doctor's WSL2 answer say the same things; the README's first
screen sends each machine on its route; every relative link in README.md, CONTRIBUTING.md and docs/*.md
resolves, to a file and, for a Markdown file, to a heading or an explicit anchor there.

The guide and the doctor are compared on structured data - commands, version numbers, note and
finding codes, the sources behind the notes - never on sentences, so either side may be reworded.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from course_utils import cli
from course_utils.doctor import Machine, TensorFlowInfo, describe, diagnose
from course_utils.doctor.nvidia import parse_nvidia_smi
from course_utils.doctor.versions import load

from .conftest import ROOT
from .doctor.test_doctor import cuda_tf

GUIDE = ROOT / "docs" / "wsl2.md"
ROUTES = ROOT / "docs" / "routes.md"
README = ROOT / "README.md"
FIXTURES = ROOT / "tests" / "fixtures" / "nvidia"
# the guide's example machine: real nvidia-smi output under WSL2 (GeForce RTX 4070, Windows driver 555.99)
WSL2_SMI = FIXTURES / "smi_wsl2_555.99_rtx4070.txt"
OLD_DRIVER_SMI = FIXTURES / "smi_qa_post_windows_512.77_wddm.txt"  # driver 512.77: older than WSL2 needs
NO_SMI = FIXTURES / "smi_missing_command_not_found.txt"
NVCC = FIXTURES / "nvcc_linux_12.6.txt"
DRIVER_VERSION = re.compile(r">=\s*(\d{3}\.\d+(?:\.\d+)?)")  # a driver minimum as the docs write it: ">= 528.33"


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def code_blocks(markdown: str) -> list[str]:
    """The fenced code blocks' contents."""
    return re.findall(r"^```[^\n]*\n(.*?)^```", markdown, flags=re.S | re.M)


def guide_python() -> str:
    """The Python the guide's Ubuntu has: from the `python3 --version` output it shows ("Python 3.12.3")."""
    versions = {m for block in code_blocks(text(GUIDE)) for m in re.findall(r"^Python (3\.\d+)\.\d+$", block, re.M)}
    assert len(versions) == 1, f"the guide should show one `python3 --version` output, found {versions}"
    return versions.pop()


def accepted_pythons() -> list[str]:
    """The Python 3 minor versions pyproject.toml's requires-python accepts (e.g. ">=3.11,<3.14")."""
    spec = tomllib.loads(text(ROOT / "pyproject.toml"))["project"]["requires-python"]
    tests = {">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, "<": lambda a, b: a < b}
    clauses = [re.fullmatch(r"\s*(>=|<=|>|<)\s*3\.(\d+)\s*", part) for part in spec.split(",")]
    assert all(clauses), f"requires-python {spec!r}: only >=, <=, >, < on 3.N are understood here"
    return [f"3.{m}" for m in range(6, 20) if all(tests[c[1]](m, int(c[2])) for c in clauses)]


def doctor_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    """`course doctor ... --json` run in-process on a described machine (no TensorFlow import, no probing)."""
    capsys.readouterr()
    status = cli.main(["doctor", *args, "--json"])
    data = json.loads(capsys.readouterr().out)
    data["exit_status"] = status
    return data


def wsl2_answer(capsys: pytest.CaptureFixture[str]) -> dict:
    return doctor_json(capsys, "--nvidia-smi", str(WSL2_SMI), "--platform", "wsl2", "--python", guide_python())


def gpu_tensorflow(**overrides) -> TensorFlowInfo:
    """The doctor tests' CUDA build of TensorFlow 2.21, seeing one RTX 4070."""
    return cuda_tf(**{"gpus": [{"name": "NVIDIA GeForce RTX 4070", "compute_capability": "8.9"}], **overrides})


# ----------------------------------------------------------------- the guide and the doctor agree


def test_the_guides_python_is_one_the_course_accepts_and_ubuntu_22_04s_is_not():
    accepted = accepted_pythons()
    assert guide_python() in accepted
    assert f"Python {accepted[0]} to {accepted[-1]}" in text(GUIDE), "the guide states the accepted range"
    # the guide tells Ubuntu 22.04 users (Python 3.10) to move to Ubuntu 24.04: true only while 3.10 is refused
    assert "3.10" not in accepted
    assert "wsl --install -d Ubuntu-24.04" in text(GUIDE)


def test_every_install_command_the_doctor_gives_for_wsl2_is_in_the_guide_verbatim(capsys):
    data = wsl2_answer(capsys)
    assert data["platform"] == "wsl2" and data["exit_status"] == 0
    commands = data["recommended_install"]
    assert any("[and-cuda]" in c for c in commands), commands  # the GPU route, not a CPU install
    guide = text(GUIDE)
    missing = [c for c in commands if c not in guide]
    assert not missing, f"docs/wsl2.md lacks the doctor's WSL2 commands: {missing}"
    assert data["tensorflow"] in guide


def test_the_guide_states_the_doctors_wsl2_driver_minimum_and_no_other(capsys):
    data = wsl2_answer(capsys)
    minimum = data["recommended"]["driver_min"]
    assert minimum == load().rule("wsl2")["driver_min"]  # the report and the table agree
    assert set(DRIVER_VERSION.findall(text(GUIDE))) == {minimum}
    build = load().rule("wsl2")["windows_build_min"]
    assert f"build {build} or higher" in text(GUIDE)


def test_the_guide_cites_the_source_of_every_note_the_doctor_gives_for_wsl2(capsys):
    """A note the doctor adds for WSL2 (a rule of versions.json) must be covered by the guide: same source."""
    notes = wsl2_answer(capsys)["recommended"]["notes"]
    codes = [note["code"] for note in notes]
    assert {"wsl2", "wsl2-no-linux-driver"} <= set(codes)
    rules = load().rules
    guide = text(GUIDE)
    for code in codes:
        if code in rules:
            source = rules[code]["source"]
            assert source in guide, f"note {code!r}: the guide does not cite {source}"


def test_what_the_guide_forbids_the_doctor_forbids_too(capsys):
    section = text(GUIDE).split("## What not to install", 1)[1].split("\n## ", 1)[0]
    assert "Linux NVIDIA driver" in section and "CUDA toolkit" in section
    # the doctor: no Linux driver inside WSL2 (a note on every WSL2 answer) ...
    assert "wsl2-no-linux-driver" in [n["code"] for n in wsl2_answer(capsys)["recommended"]["notes"]]
    # ... and the toolkit (nvcc) is not what TensorFlow uses, when a toolkit is there
    data = doctor_json(
        capsys, "--nvidia-smi", str(WSL2_SMI), "--nvcc", str(NVCC), "--platform", "wsl2", "--python", "3.12"
    )
    assert "nvcc-not-used" in {f["code"] for f in data["findings"]}


def test_the_guides_doctor_output_is_what_the_doctor_prints_for_its_example_machine():
    """The guide's sample `course doctor` report (an excerpt: "..." ends a line early or skips lines) is, line by
    line and in order, the short report the doctor prints by default for that machine: the RTX 4070 under WSL2,
    TensorFlow seeing it."""
    samples = [block for block in code_blocks(text(GUIDE)) if block.startswith("Verdict: ")]
    assert len(samples) == 1
    machine = Machine(
        "wsl2", guide_python(), smi=parse_nvidia_smi(WSL2_SMI.read_text()), tensorflow=gpu_tensorflow(), live=True
    )
    report = diagnose(machine).summary().splitlines()
    at = 0
    for line in samples[0].splitlines():
        if line.strip() == "...":
            continue
        prefix = line[:-3] if line.endswith("...") else None
        while at < len(report) and not (report[at] == line or (prefix is not None and report[at].startswith(prefix))):
            at += 1
        assert at < len(report), f"the guide's doctor line {line!r} is not in the doctor's report (in this order)"
        at += 1


@pytest.mark.parametrize(
    ("code", "machine"),
    [
        ("tensorflow-uses-gpu", lambda: describe("wsl2", "3.12", WSL2_SMI.read_text(), tensorflow=gpu_tensorflow())),
        ("no-nvidia-driver", lambda: describe("wsl2", "3.12", NO_SMI.read_text())),
        ("driver-too-old", lambda: describe("wsl2", "3.12", OLD_DRIVER_SMI.read_text())),
        (
            "cpu-only-build",
            lambda: describe("wsl2", "3.12", WSL2_SMI.read_text(), tensorflow=gpu_tensorflow(built_with_cuda=False)),
        ),
        (
            "tensorflow-sees-no-gpu",
            lambda: describe("wsl2", "3.12", WSL2_SMI.read_text(), tensorflow=gpu_tensorflow(gpus=[])),
        ),
    ],
)
def test_each_finding_the_guide_explains_is_what_the_doctor_says_in_that_case(code, machine):
    assert f"`{code}`" in text(GUIDE)
    assert code in diagnose(machine()).codes()


def test_the_guides_make_targets_and_course_commands_exist():
    blocks = "\n".join(code_blocks(text(GUIDE)) + code_blocks(text(ROUTES)))
    targets = set(re.findall(r"^([a-z][\w-]*):", text(ROOT / "Makefile"), re.M))
    used = set(re.findall(r"^make ([a-z][\w-]*)", blocks, re.M))
    assert used and used <= targets, f"make targets the docs use but the Makefile lacks: {used - targets}"
    commands = set(re.findall(r"^(?:\.venv/bin/)?course ([a-z]+)", blocks, re.M))  # `course` after activation
    assert commands and commands <= set(cli.commands())
    assert (ROOT / "notebooks" / "02_verify_gpu.ipynb").is_file()  # `course run 02` in step 9
    assert "Environment ready:" in text(ROOT / "scripts" / "venv.sh")  # what step 8 says `make venv` ends with


def test_routes_page_states_the_doctors_driver_minimums_and_no_others():
    table = load()
    expected = {table.rule("linux-driver-min")["driver_min"], table.rule("wsl2")["driver_min"]}
    assert set(DRIVER_VERSION.findall(text(ROUTES))) == expected


@pytest.mark.parametrize("path", [GUIDE, ROUTES], ids=lambda p: p.name)
def test_the_docs_stand_alone(path):
    """Shipped docs name the public sources, never the team's working material."""
    found = re.findall(r"\.\./shared|\bseeds?\b|seed\s+0\d\d|facts\s+file", text(path), flags=re.I)
    assert not found, found


# ----------------------------------------------------------------- the README's first screen and the links


def test_readme_first_screen_links_the_wsl2_guide_and_the_routes_page():
    first_screen = "\n".join(text(README).splitlines()[:40])
    assert "](docs/wsl2.md)" in first_screen
    assert "](docs/routes.md)" in first_screen
    assert "Which route fits your machine" in first_screen


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    heading = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", heading).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The headings' anchors, and the explicit ones (``<a id="...">``, as docs/troubleshooting.md gives each entry)."""
    markdown = re.sub(r"^```.*?^```", "", text(path), flags=re.S | re.M)
    explicit = set(re.findall(r"<a (?:id|name)=\"([^\"]+)\"", markdown))
    return {slug(h) for h in re.findall(r"^#{1,6} (.+)$", markdown, re.M)} | explicit


def relative_links(path: Path) -> list[str]:
    """Markdown link and image targets outside code, except web and mail addresses."""
    markdown = re.sub(r"^```.*?^```", "", text(path), flags=re.S | re.M)
    markdown = re.sub(r"`[^`\n]*`", "", markdown)
    targets = re.findall(r"\]\(([^)\s]+)\)", markdown)
    return [t for t in targets if not re.match(r"[a-z][a-z0-9+.-]*:", t, re.I)]


MARKDOWN = [README, ROOT / "README.zh-CN.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md")),
            *sorted((ROOT / "docs" / "zh").glob("*.md"))]  # the Chinese edition's pages too


def test_the_link_check_covers_the_guides_for_each_reader():
    names = {p.relative_to(ROOT).as_posix() for p in MARKDOWN}
    assert {"README.md", "CONTRIBUTING.md", "docs/instructors.md", "docs/maintainers.md", "docs/glossary.md",
            "docs/routes.md", "docs/troubleshooting.md", "README.zh-CN.md", "docs/zh/troubleshooting.md",
            "docs/zh/wsl2.md", "docs/zh/sources.md", "docs/zh/mainland-china.md"} <= names


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_at_an_existing_file_and_heading(path):
    links = relative_links(path)
    assert links, f"{path.name}: no relative links found (is the link pattern still right?)"
    broken = []
    for link in links:
        target, _, anchor = link.partition("#")
        file = (path.parent / target).resolve() if target else path
        if not file.is_file():
            broken.append(f"{link} (no file {file})")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{link} (no heading #{anchor} in {file.name})")
    assert not broken, f"{path.name}: broken links: {broken}"


def test_the_link_checker_catches_a_missing_file_and_a_missing_heading(tmp_path):
    (tmp_path / "there.md").write_text('# A heading (with words)\n\n<a id="an-entry"></a>\n')
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](there.md#a-heading-with-words) [gone](missing.md) [bad](there.md#nope) "
        "[web](https://example.org/x.md) `[code](inside.md)`\n"
    )
    assert relative_links(page) == ["there.md#a-heading-with-words", "missing.md", "there.md#nope"]
    assert anchors(tmp_path / "there.md") == {"a-heading-with-words", "an-entry"}
