"""The website's page "Check your machine" (course_tools/site/doctor_page.py): the course's doctor in the browser, by
Pyodide.

Unit tests: the bundle holds what ``course doctor`` imports and not the lessons; the page's glue answers with the
command line's JSON (that the bundle runs on the standard library alone, as in Pyodide where psutil and the course's
other dependencies do not exist: the browser tests, and test_architecture's import with ``-I -S``); the Pyodide pin is
checked; the page's source has its form and its links.

Browser tests (marker ``browser``; the site that tests/test_site.py builds from the nbval and hosted tiers' runs): the
page loads Pyodide from the site in headless Chromium, and for every ``nvidia-smi`` capture in tests/fixtures/nvidia
(the Q&A post's Windows machine first), with an ``nvcc`` capture, a platform and a Python, its JSON is the JSON of
``course doctor --json`` (``doctor_cli.main``) for the same input. Odd input - Windows line ends, text that is not
nvidia-smi's, a UTF-16 or GBK file, nothing at all - gets the doctor's answer and never a JavaScript error (a cut table
and another language's are captures). The Chinese page answers in Chinese. The page's timings go to
build/ci/doctor-page-timing.json (reported, never asserted).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import statistics
import sys
import zipfile
from pathlib import Path
from unittest import mock
from urllib.parse import urldefrag, urljoin

import pytest

from course_tools.site import doctor_page
from course_utils.core.errors import CourseError
from course_utils.doctor import cli as doctor_cli
from course_utils.doctor.logs import decode_text
from course_utils.doctor.troubleshooting import ANCHORS

from .conftest import ROOT
from .site_served import Visit, fetch
from .test_browser import SCREENSHOTS

page_builder = doctor_page  # the page "Check your machine", which the site builder imports
sys.path.insert(0, str(page_builder.ASSETS))
import course_doctor_page  # noqa: E402 - the page's glue, tools/course_tools/site/theme/doctor/

NVIDIA = ROOT / "tests" / "fixtures" / "nvidia"
QA_SMI = NVIDIA / "smi_qa_post_windows_512.77_wddm.txt"
QA_NVCC = NVIDIA / "nvcc_qa_post_windows_11.7.txt"
TF_LOG = ROOT / "tests" / "fixtures" / "tf_logs" / "cudnn_mismatch_composed.txt"
CJK = re.compile(r"[\u4e00-\u9fff]")


def cli_json(*arguments: str, language: str = "en") -> dict:
    """What ``course doctor ARGUMENTS`` prints, parsed (its main, in this process, in ``language``)."""
    out = io.StringIO()
    with mock.patch.dict(os.environ, {"COURSE_LANG": language}), contextlib.redirect_stdout(out):
        doctor_cli.main([*arguments, "--json"])
    return json.loads(out.getvalue())


# --------------------------------------------------------------------------- the bundle and the page's source


def test_the_bundle_holds_the_doctors_modules_and_not_the_lessons():
    # what the doctor needs is there: the next test runs the bundle alone, and the browser tests run it in Pyodide
    modules = page_builder.doctor_modules()
    assert not [m for m in modules if m.startswith(("course_tools.batch", "course_utils.lessons"))]
    names = zipfile.ZipFile(io.BytesIO(page_builder.bundle())).namelist()
    assert "course_utils/notebook.py" not in names  # loaded on first use of course_utils.setup, never by the page
    assert names.count("course_utils/__init__.py") == 1
    packaged = zipfile.ZipFile(io.BytesIO(page_builder.bundle())).read("course_utils/__init__.py")
    assert packaged == (ROOT / "course_utils" / "__init__.py").read_bytes(), "the real file, not a stand-in"
    assert page_builder.bundle() == page_builder.bundle()  # the same bytes from the same code


def test_the_glue_runs_the_log_mode_and_reports_usage_errors_as_the_command_line_does():
    answer = json.loads(course_doctor_page.answer(json.dumps({
        "language": "en", "nvidia_smi": QA_SMI.read_text(encoding="utf-8"), "log": TF_LOG.read_text(encoding="utf-8"),
        "nvcc": QA_NVCC.read_text(encoding="utf-8"), "platform": "windows", "python": "3.10"})))
    command = "course doctor --nvidia-smi nvidia-smi.txt --nvcc nvcc.txt --platform windows --python 3.10"
    assert answer["command"] == command
    assert json.loads(answer["machine"]["stdout"]) == cli_json(*arguments(QA_SMI, QA_NVCC, "windows", "3.10"))
    assert answer["log_command"] == "course doctor --log tensorflow-log.txt --nvidia-smi nvidia-smi.txt"
    assert json.loads(answer["log"]["stdout"]) == cli_json("--log", str(TF_LOG), "--nvidia-smi", str(QA_SMI))
    assert answer["log"]["exit"] == 1  # the log has the problem line
    wrong = json.loads(course_doctor_page.answer(json.dumps({"language": "en", "python": "three"})))
    assert wrong["machine"]["exit"] == 2 and "is not a version like 3.11" in wrong["machine"]["stderr"]


def test_the_page_source_has_its_form_words_and_a_link_for_every_explained_code():
    # its form and scripts: the browser tests fill and run them
    source = page_builder.page_source("zh", "../_doctor/", lambda anchor: f"docs/troubleshooting.html#x-{anchor}")
    words = json.loads(source.split('id="course-doctor-words">')[1].split("</script>")[0])
    assert words["links"] == {code: f"docs/troubleshooting.html#x-{a}" for code, a in ANCHORS.items()}
    assert CJK.search(words["platforms"]["windows"]) and CJK.search(words["title"]), "in the page's language"
    assert "3.13" in page_builder.pythons()


def test_pyodide_is_the_pinned_tarball_which_ci_fetches_too_or_the_build_says_what_to_do(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(page_builder.shutil, "which", lambda name: None)
    with pytest.raises(CourseError, match="Install Node.js"):
        page_builder.pyodide_tarball(tmp_path)
    planted = tmp_path / "build" / "npm" / f"pyodide-{page_builder.PYODIDE_VERSION}.tgz"
    planted.parent.mkdir(parents=True)
    planted.write_bytes(b"not pyodide")
    with pytest.raises(CourseError, match="Delete it"):
        page_builder.pyodide_tarball(tmp_path)
    assert page_builder.integrity(b"") == (
        "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==")
    assert f"pyodide_version={page_builder.PYODIDE_VERSION}\n" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- the page in a browser

PLATFORM_CHOICES = ("", "linux", "wsl2", "windows", "macos")
PYTHON_CHOICES = ("", "3.12", "3.10", "3.13", "3.14", "3.9")


def captures() -> list[tuple[Path, Path | None, str, str]]:
    """Every nvidia-smi capture with an nvcc capture, a platform and a Python: the Q&A post's machine first, as its
    student gave it; then the others, the choices taken in turn so that each one is met."""
    smis = [QA_SMI] + sorted(p for p in NVIDIA.glob("*") if p.name.startswith(("smi_", "query_")) and p != QA_SMI)
    nvccs = sorted(NVIDIA.glob("nvcc_*.txt"))
    cases = [(QA_SMI, QA_NVCC, "", "")]
    for i, smi in enumerate(smis[1:]):
        nvcc = nvccs[i % len(nvccs)] if i % 3 else None
        cases.append((smi, nvcc, PLATFORM_CHOICES[i % len(PLATFORM_CHOICES)], PYTHON_CHOICES[i % len(PYTHON_CHOICES)]))
    return cases


def arguments(smi: Path, nvcc: Path | None, platform: str, python: str) -> list[str]:
    out = ["--nvidia-smi", str(smi)] + (["--nvcc", str(nvcc)] if nvcc else [])
    return out + (["--platform", platform] if platform else []) + (["--python", python] if python else [])


class CheckPage:
    """The page "Check your machine" in Chromium, ready to answer."""

    def __init__(self, chromium, served, path: str) -> None:
        self.visit = Visit(chromium, served.url, path)
        self.page = self.visit.page
        self.page.wait_for_function("window.courseDoctor && (window.courseDoctor.ready || window.courseDoctor.error)",
                                    timeout=180_000)
        state = self.page.evaluate("window.courseDoctor")
        assert state["ready"], f"{path}: the doctor did not load: {state['error']}"

    def ask(self, smi: str = "", nvcc: str = "", platform: str = "", python: str = "", log: str = "") -> None:
        before = self.page.evaluate("window.courseDoctor.answers")
        self.page.fill("#course-doctor-smi", smi)
        self.page.fill("#course-doctor-nvcc", nvcc)
        if log:  # the log's box is in a closed <details> until the student opens it
            self.page.evaluate("document.querySelector('details.course-doctor-log').open = true")
            self.page.fill("#course-doctor-log", log)
        else:
            self.page.evaluate("document.getElementById('course-doctor-log').value = ''")
        self.page.select_option("#course-doctor-platform", platform)
        self.page.select_option("#course-doctor-python", python)
        self.page.click("#course-doctor-check")
        self.page.wait_for_function(f"window.courseDoctor.answers > {before}")
        crash = self.page.locator(".course-doctor-crash")
        assert crash.count() == 0, crash.inner_text()

    def choose_file(self, path: Path, shows: str) -> None:
        """Give ``path`` to the file chooser of nvidia-smi's box, wait until the box ``shows`` it, and check it."""
        self.page.set_input_files("#course-doctor-smi-file", str(path))
        self.page.wait_for_function(f"document.getElementById('course-doctor-smi').value.includes({shows!r})")
        before = self.page.evaluate("window.courseDoctor.answers")
        self.page.click("#course-doctor-check")
        self.page.wait_for_function(f"window.courseDoctor.answers > {before}")

    def screenshot(self, name: str) -> None:
        """The whole page, from its top, with no element focused (the theme's skip link shows on focus)."""
        self.page.evaluate("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(SCREENSHOTS / name), full_page=True)

    def json(self, element: str = "#course-doctor-json") -> dict:
        return json.loads(self.page.locator(element).text_content())

    def problems(self) -> list[str]:
        self.page.wait_for_timeout(100)
        return self.visit.errors + [f"asked for {u} (outside the site)" for u in self.visit.outside]


@pytest.mark.browser
@pytest.mark.timeout(900)
def test_the_page_answers_every_capture_as_course_doctor_does(built_site: Path, served, chromium):
    check = CheckPage(chromium, served, "check.html")
    try:
        differ = []
        for smi, nvcc, platform, python in captures():
            pasted = decode_text(smi.read_bytes())  # what a browser hands over: text (a UTF-16 file decoded)
            check.ask(pasted, decode_text(nvcc.read_bytes()) if nvcc else "", platform, python)
            if check.json() != cli_json(*arguments(smi, nvcc, platform, python)):
                differ.append(f"{smi.name} + {nvcc and nvcc.name} ({platform or 'guessed'}, {python or 'no'} Python)")
            if smi == QA_SMI:  # the verdict first, then WSL2's install; native Windows after it
                answer = check.json()
                assert check.page.locator(".course-doctor-verdict").text_content() == answer["answer"]["verdict"]
                first = check.page.locator(".course-doctor-install p").first.text_content()
                assert answer["recommended"]["tensorflow"] in first, first
                alternatives = check.page.locator(".course-doctor-alternatives").text_content()
                assert answer["alternatives"][0]["tensorflow"] in alternatives, alternatives
                check.screenshot("site_check_qa_post.png")
        assert not differ, "the page's JSON is not course doctor's for: " + "; ".join(differ)
        # the answer's links lead to entries of the troubleshooting page
        hrefs = check.page.eval_on_selector_all("#course-doctor-answer a[href]", "as => as.map(a => a.href)")
        for href in set(hrefs):
            url, anchor = urldefrag(href)
            status, body = fetch(url)
            assert status == 200 and f'id="{anchor}"' in body, href
        timing = check.page.evaluate("window.courseDoctor")
        assert check.problems() == []
    finally:
        check.visit.close()
    record = {"ready_ms": round(timing["readyMs"]), "answers": len(timing["answerTimes"]),
              "answer_ms_median": round(statistics.median(timing["answerTimes"]), 1),
              "answer_ms_max": round(max(timing["answerTimes"]), 1),
              "browser": "headless Chromium (Debian), tests/test_doctor_page.py"}
    out = ROOT / "build" / "ci" / "doctor-page-timing.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"\nthe doctor page: {record}")


ODD = {
    "Windows line ends": QA_SMI.read_text(encoding="utf-8").replace("\n", "\r\n"),
    "not nvidia-smi at all": "Привет 你好 \x00\x07 ☃ " * 50,
    "nothing": "",
}


@pytest.mark.browser
@pytest.mark.timeout(600)
def test_odd_input_gets_the_doctors_answer_and_never_a_javascript_error(built_site: Path, served, chromium,
                                                                         tmp_path: Path):
    check = CheckPage(chromium, served, "check.html")
    smi, nvcc, gbk = tmp_path / "smi.txt", tmp_path / "nvcc.txt", tmp_path / "smi-gbk.txt"
    nvcc.write_text("nvcc: command not found", encoding="utf-8")
    try:
        for name, text in ODD.items():
            check.ask(text, "nvcc: command not found" if name == "nothing" else "")
            # a browser's text box holds "\n" line ends; the command line reads the file as it is
            smi.write_bytes(text.encode("utf-8"))
            assert check.json() == cli_json("--nvidia-smi", str(smi), *(
                ["--nvcc", str(nvcc)] if name == "nothing" else [])), name
        # a file saved by PowerShell's ">" (UTF-16) through the file chooser
        utf16 = NVIDIA / "smi_windows_517.48_2x_wddm_utf16le.txt"
        check.page.fill("#course-doctor-nvcc", "")
        check.choose_file(utf16, "NVIDIA-SMI")
        # the text box holds the decoded text, its line ends made "\n" as in every text box
        assert check.page.input_value("#course-doctor-smi") == decode_text(utf16.read_bytes()).replace("\r\n", "\n")
        assert check.json() == cli_json("--nvidia-smi", str(utf16))
        # a file in the Chinese Windows console's code page (GBK), not UTF-8: read as the command line reads it
        gbk.write_bytes((NVIDIA / "smi_missing_windows_cmd_zh.txt").read_text(encoding="utf-8").encode("gbk"))
        check.choose_file(gbk, "nvidia-smi")
        assert check.json() == cli_json("--nvidia-smi", str(gbk))
        # a "log" that is not text: the command line's own message, no JavaScript error
        check.ask(QA_SMI.read_text(encoding="utf-8"), log="\x00\x01\x02\x03" * 40)
        assert "is not a text log" in check.page.inner_text(".course-doctor-usage")
        # a TensorFlow log beside the machine
        check.ask(QA_SMI.read_text(encoding="utf-8"), log=TF_LOG.read_text(encoding="utf-8"))
        assert check.json("#course-doctor-log-json") == cli_json("--log", str(TF_LOG), "--nvidia-smi", str(QA_SMI))
        assert check.problems() == []
    finally:
        check.visit.close()


@pytest.mark.browser
@pytest.mark.timeout(600)
def test_the_chinese_page_answers_in_chinese(built_site: Path, served, chromium):
    check = CheckPage(chromium, served, "zh/check.html")
    try:
        check.ask(QA_SMI.read_text(encoding="utf-8"), QA_NVCC.read_text(encoding="utf-8"))
        answer = check.json()
        assert answer == cli_json("--nvidia-smi", str(QA_SMI), "--nvcc", str(QA_NVCC), language="zh-CN")
        assert all(any("\u4e00" <= ch <= "\u9fff" for ch in f["message"]) for f in answer["findings"])
        text = check.page.inner_text("#course-doctor-answer")
        assert answer["answer"]["verdict"] in text
        # "Copy the JSON" copies the command line's JSON
        check.visit.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=served.url.rstrip("/"))
        check.page.evaluate("document.querySelector('details.course-doctor-json').open = true")
        check.page.click("details.course-doctor-json .course-doctor-copy")
        check.page.wait_for_function("document.querySelector('details.course-doctor-json .course-doctor-copy')"
                                     ".textContent === '已复制'")
        assert json.loads(check.page.evaluate("navigator.clipboard.readText()")) == answer
        link = check.page.locator("#course-doctor-answer a[href]").first.get_attribute("href")
        assert urljoin(served.url + "zh/check.html", link).startswith(served.url + "zh/docs/troubleshooting.html#")
        check.screenshot("site_zh_check_qa_post.png")
        assert check.problems() == []
    finally:
        check.visit.close()
