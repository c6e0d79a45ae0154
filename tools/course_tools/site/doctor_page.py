"""The website's "Check your machine" page: the course's doctor, run in the browser by Pyodide (``make site``).

A student pastes what ``nvidia-smi`` and ``nvcc --version`` print (and, if they have one, a TensorFlow log), chooses
a platform and a Python, and gets the report of ``course doctor``: the findings, the install commands, links to the
troubleshooting page. Nothing needs to be installed, and nothing pasted leaves the page.

How: the page (``check.html`` and ``zh/check.html``) loads Pyodide - CPython compiled to WebAssembly, with its
standard library - from the site itself (``_doctor/pyodide/``). Then it unpacks ``_doctor/course_doctor.zip``, which
this module makes from the package: the modules that ``course_utils.doctor.cli`` imports (found by reading their
imports), the doctor's version table, the message catalogues they use, and ``theme/doctor/course_doctor_page.py``,
which runs the command line's ``main`` on the pasted text. The page's script is ``theme/doctor/doctor.js``.
So the page runs the doctor's own code: no rule is written a second time, in JavaScript or elsewhere.

Pyodide comes from npm, the package ``pyodide`` at ``PYODIDE_VERSION``: ``npm pack`` fetches it into ``build/npm``
when it is not there (``.ci/run`` does it first), and its sha512 must be the registry's (``PYODIDE_INTEGRITY``).
"""

from __future__ import annotations

import ast
import base64
import hashlib
import html
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from course_tools.errors import PageError
from course_utils.core import variables
from course_utils.core.i18n import CHINESE, ENGLISH
from course_utils.core.paths import PROJECT_ROOT as ROOT
from course_utils.doctor.gpus import QUERY_COMMAND
from course_utils.doctor.recommend import platform_name
from course_utils.doctor.troubleshooting import ANCHORS
from course_utils.doctor.versions import PLATFORMS, load, parse_version

ASSETS = Path(__file__).resolve().parent / "theme" / "doctor"
ENTRY = "course_utils.doctor.cli"  # the command line the page runs
PAGE_MODULE = "course_doctor_page.py"  # its glue, at the top of the bundle
# Pyodide 0.29.5 ships CPython 3.13.2, a Python the course supports (requires-python >=3.11,<3.14 in pyproject.toml).
# The newer 314.x releases ship Python 3.14, which the course is not tested with.
PYODIDE_VERSION = "0.29.5"
PYODIDE_INTEGRITY = "sha512-TkYrUv9m8QmfImADKRmpwZulL48E0uUaBSO+dvRQKyAJc0qh9gu7jn8btyHPh3NZm1r2IH2YrJhIr7Q2B9urAw=="
# What loadPyodide() reads from its folder: the loader, the interpreter (JavaScript and WebAssembly), the standard
# library, and the list of packages (none is loaded). About 12 MB; the npm package's other files are not needed.
PYODIDE_FILES = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")
FOLDER = "_doctor"  # in the site: pyodide/, course_doctor.zip, doctor.js (one copy for both languages)
PAGE = "check"  # the page's name in each language: check.html, zh/check.html
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # the same bundle from the same code: no file dates in it
_TRANSLATOR = re.compile(r"""translator\(["'](\w+)["']\)""")  # a module's message domain


# --------------------------------------------------------------------------- the doctor's modules


def module_file(name: str, root: Path = ROOT) -> Path | None:
    """The file of module ``name`` (a package's ``__init__.py``) under ``root``, None when it is no module there."""
    base = root.joinpath(*name.split("."))
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.is_file():
            return path
    return None


def imported_names(path: Path) -> Iterator[str]:
    """The ``course_utils`` modules a file imports (also inside functions), ``from x import y`` giving ``x`` and,
    when ``y`` is a module, ``x.y``. Not those a module's ``__getattr__`` loads on first use (PEP 562): the package's
    notebook helpers (``course_utils.setup``), which the page never uses."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    on_use = {id(n) for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "__getattr__"
              for n in ast.walk(f)}
    for node in ast.walk(tree):
        if id(node) in on_use:
            continue
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.split(".")[0] == "course_utils")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("course_utils"):
            yield node.module
            yield from (f"{node.module}.{a.name}" for a in node.names)


def doctor_modules(root: Path = ROOT) -> list[str]:
    """The modules ``course_utils.doctor.cli`` needs, with their packages: the real ``course_utils`` among them."""
    found: set[str] = set()
    todo = [ENTRY]
    while todo:
        name = todo.pop()
        path = module_file(name, root)
        if name in found or path is None:
            continue
        found.add(name)
        parts = name.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]
        todo += imported_names(path)
    return sorted(found)


def catalogues(modules: list[str], root: Path = ROOT) -> list[Path]:
    """The compiled message catalogues (``.mo``) of the domains these modules translate with."""
    domains = set()
    for name in modules:
        domains |= set(_TRANSLATOR.findall(module_file(name, root).read_text(encoding="utf-8")))
    return sorted(p for domain in domains for p in root.glob(f"course_utils/locale/*/LC_MESSAGES/{domain}.mo"))


def bundle(root: Path = ROOT) -> bytes:
    """``course_doctor.zip``: the doctor's modules, their data files, the catalogues they use and the page's glue."""
    modules = doctor_modules(root)
    files = {module_file(name, root) for name in modules}
    files |= {data for path in list(files) for data in path.parent.glob("*.json")}  # the doctor's version table
    files |= set(catalogues(modules, root))
    entries = {str(path.relative_to(root)): path.read_bytes() for path in files}
    entries[PAGE_MODULE] = (ASSETS / PAGE_MODULE).read_bytes()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(entries):
            archive.writestr(zipfile.ZipInfo(name, ZIP_DATE), entries[name], zipfile.ZIP_DEFLATED)
    return out.getvalue()


# --------------------------------------------------------------------------- Pyodide


def integrity(data: bytes) -> str:
    """npm's ``dist.integrity`` of a tarball: ``sha512-`` and the base64 of its SHA-512."""
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def pyodide_tarball(root: Path = ROOT) -> Path:
    """``build/npm/pyodide-VERSION.tgz``, fetched with ``npm pack`` when missing, checked against the pin."""
    folder = root / "build" / "npm"
    tarball = folder / f"pyodide-{PYODIDE_VERSION}.tgz"
    if not tarball.is_file():
        npm = shutil.which("npm")
        if npm is None:
            raise PageError(f"the page 'Check your machine' needs Pyodide {PYODIDE_VERSION} from npm, and npm is not "
                            "installed.", f"Install Node.js (it brings npm), or put the file that `npm pack "
                            f"pyodide@{PYODIDE_VERSION}` makes at {tarball}.")
        folder.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([npm, "pack", "--silent", f"pyodide@{PYODIDE_VERSION}"], cwd=folder,
                              capture_output=True, text=True, check=False)
        if done.returncode != 0 or not tarball.is_file():
            raise PageError(f"`npm pack pyodide@{PYODIDE_VERSION}` failed in {folder} (exit {done.returncode}): "
                            f"{done.stderr.strip()}.", "Check the connection to the npm registry, then run make site "
                            "again.")
    found = integrity(tarball.read_bytes())
    if found != PYODIDE_INTEGRITY:
        raise PageError(f"{tarball} is not the npm registry's pyodide {PYODIDE_VERSION} (its sha512 is {found}).",
                        "Delete it; make site fetches it again.")
    return tarball


def write_assets(out: Path, root: Path = ROOT) -> None:
    """``out/_doctor/``: Pyodide's files, the doctor's bundle and the page's script."""
    folder = out / FOLDER
    (folder / "pyodide").mkdir(parents=True, exist_ok=True)
    with tarfile.open(pyodide_tarball(root)) as tar:
        for name in PYODIDE_FILES:
            source = tar.extractfile(f"package/{name}")
            (folder / "pyodide" / name).write_bytes(source.read())
    (folder / "course_doctor.zip").write_bytes(bundle(root))
    shutil.copyfile(ASSETS / "doctor.js", folder / "doctor.js")


# --------------------------------------------------------------------------- the page


WORDS: dict[str, dict[str, str]] = {
    "en": {
        "title": "Check your machine",
        "intro": "Paste what your computer prints, and get the commands that install TensorFlow for it. "
                 "You need nothing installed: the course's doctor, `course doctor`, runs here, in your browser. "
                 "What you paste stays on this page. It is not sent anywhere.",
        "step_smi": "In a terminal (on Windows: PowerShell or Command Prompt), run `nvidia-smi` and paste all "
                    "of what it prints. If the command is not found, paste that "
                    "message: it tells the doctor something too.",
        "step_query": "Optional: also run `{query}` and paste its lines below the table. They tell the doctor your "
                      "GPU's generation.",
        "step_nvcc": "Optional: if the CUDA toolkit is installed, run `nvcc --version` and paste it. "
                     "TensorFlow does not need the toolkit.",
        "step_choose": "Choose your platform and the Python you want to use, then press *Check*.",
        "later": "Once the course's environment is installed, the same doctor runs on your machine: `course doctor` "
                 "looks at the machine itself, and at TensorFlow once it is installed.",
        "smi": "What nvidia-smi printed",
        "nvcc": "What nvcc --version printed (optional)",
        "log": "A TensorFlow log (optional): what TensorFlow printed when it started or failed",
        "log_box": "Paste the log here",
        "file": "Or choose a file:",
        "platform": "Platform",
        "guess": "Guess from what I pasted",
        "python": "Python",
        "no_python": "Not chosen (the doctor suggests one)",
        "check": "Check",
        "loading": "Loading the doctor (about 12 MB, once)...",
        "ready": "The doctor is ready (loaded in {seconds} s).",
        "failed": "The doctor could not load in this browser: {error}. Use `course doctor` in the course's "
                  "environment instead.",
        "crashed": "The doctor stopped on this input: {error}. Please report it, with what you pasted.",
        "usage": "The doctor did not accept this input:",
        "machine": "Your machine",
        "install": "What to install",
        "alternatives": "Other ways",
        "findings": "Findings",
        "no_findings": "No findings.",
        "error": "Errors",
        "warning": "Warnings",
        "info": "Information",
        "fix": "What to do:",
        "more": "More:",
        "entry": "the troubleshooting page",
        "log_title": "Your TensorFlow log",
        "no_problem": "No problem line in the log.",
        "report": "The report as `course doctor` prints it",
        "same_as": "Same as this command, run where the files are:",
        "json": "The JSON (for a program, or to share)",
        "copy": "Copy",
        "copy_json": "Copy the JSON",
        "copied": "Copied",
        "platform_line": "Platform: {value}",
        "python_line": "Python: {value}",
        "not_given": "not chosen",
        "gpus_line": "GPU: {value}",
        "driver_line": "NVIDIA driver: {driver} (supports CUDA up to {cuda})",
        "no_driver": "NVIDIA driver: none found",
        "toolkit_line": "CUDA toolkit (nvcc): {value}",
        "result_errors": "Result: {count} error(s) and {warnings} warning(s). Read the findings below.",
        "result_ok": "Result: no errors, {warnings} warning(s).",
    },
    "zh": {
        "title": "检查你的机器",
        "intro": "粘贴你的电脑打印的内容，就能得到为它安装 TensorFlow 的命令。"
                 "你不需要安装任何东西：课程的诊断工具 `course doctor` 就在这里、在你的浏览器中运行。"
                 "你粘贴的内容只留在这个页面上，不会发送到任何地方。",
        "step_smi": "在终端中（Windows 上：PowerShell 或命令提示符）运行 `nvidia-smi`，粘贴它打印的全部内容。"
                    "如果提示找不到这个命令，就粘贴这条提示：它也能告诉诊断工具一些信息。",
        "step_query": "可选：再运行 `{query}`，把它的几行粘贴在表格下面。它们告诉诊断工具你的 GPU 属于哪一代。",
        "step_nvcc": "可选：如果装了 CUDA 工具包，运行 `nvcc --version` 并粘贴输出。TensorFlow 不需要这个工具包。",
        "step_choose": "选择你的平台和想用的 Python，然后点击“检查”。",
        "later": "装好课程的环境以后，同一个诊断工具也在你的机器上运行：`course doctor` 直接查看机器本身，"
                 "装好 TensorFlow 以后也查看 TensorFlow。",
        "smi": "nvidia-smi 打印的内容",
        "nvcc": "nvcc --version 打印的内容（可选）",
        "log": "TensorFlow 的日志（可选）：TensorFlow 启动或出错时打印的内容",
        "log_box": "把日志粘贴在这里",
        "file": "或者选择一个文件：",
        "platform": "平台",
        "guess": "根据粘贴的内容推断",
        "python": "Python",
        "no_python": "不选（由诊断工具建议）",
        "check": "检查",
        "loading": "正在加载诊断工具（大约 12 MB，只加载一次）……",
        "ready": "诊断工具已就绪（加载用了 {seconds} 秒）。",
        "failed": "诊断工具无法在这个浏览器中加载：{error}。请改为在课程的环境中使用 `course doctor`。",
        "crashed": "诊断工具处理这个输入时停止了：{error}。请报告这个问题，并附上你粘贴的内容。",
        "usage": "诊断工具没有接受这个输入：",
        "machine": "你的机器",
        "install": "要安装什么",
        "alternatives": "其他做法",
        "findings": "诊断结果",
        "no_findings": "没有发现问题。",
        "error": "错误",
        "warning": "警告",
        "info": "信息",
        "fix": "怎么做：",
        "more": "更多：",
        "entry": "故障排除页面",
        "log_title": "你的 TensorFlow 日志",
        "no_problem": "日志中没有出问题的行。",
        "report": "`course doctor` 打印的报告",
        "same_as": "等同于在这些文件所在的地方运行这条命令：",
        "json": "JSON（给程序用，或者分享给别人）",
        "copy": "复制",
        "copy_json": "复制 JSON",
        "copied": "已复制",
        "platform_line": "平台：{value}",
        "python_line": "Python：{value}",
        "not_given": "未选择",
        "gpus_line": "GPU：{value}",
        "driver_line": "NVIDIA 驱动：{driver}（最高支持 CUDA {cuda}）",
        "no_driver": "NVIDIA 驱动：没有找到",
        "toolkit_line": "CUDA 工具包（nvcc）：{value}",
        "result_errors": "结果：{count} 个错误，{warnings} 个警告。请阅读下面的诊断结果。",
        "result_ok": "结果：没有错误，{warnings} 个警告。",
    },
}
LANGUAGE = {"en": ENGLISH, "zh": CHINESE}


@contextmanager
def speaking(code: str) -> Iterator[None]:
    """The doctor's messages in the language of edition ``code`` for a while (its catalogues name the platforms)."""
    before = os.environ.get(variables.LANG)
    os.environ[variables.LANG] = LANGUAGE[code]
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(variables.LANG, None)
        else:
            os.environ[variables.LANG] = before


def pythons() -> list[str]:
    """The Python versions to choose from: those the version table's builds were tested with, and one newer
    (a student's new Python, which the doctor answers too)."""
    table = load()
    ranges = [table.python_range(p) for p in PLATFORMS if table.builds(p)]
    low = parse_version(min(ranges, key=lambda r: parse_version(r[0]))[0])
    high = parse_version(max(ranges, key=lambda r: parse_version(r[1]))[1])
    return [f"{low[0]}.{minor}" for minor in range(low[1], high[1] + 2)]


def page_source(code: str, base: str, entry: Callable[[str], str]) -> str:
    """The page's MyST source for edition ``code``. ``base`` is the way from the page to ``_doctor/``; ``entry``
    gives the link from the page to an entry (an anchor) of the troubleshooting page."""
    words = WORDS[code]
    with speaking(code):
        platforms = [("", words["guess"])] + [(p, platform_name(p)) for p in PLATFORMS]
    options = "".join(f'<option value="{v}">{html.escape(t)}</option>' for v, t in platforms)
    python_options = f'<option value="">{html.escape(words["no_python"])}</option>' + "".join(
        f'<option value="{v}">{v}</option>' for v in reversed(pythons()))
    data = {**words, "platforms": dict(platforms), "links": {c: entry(a) for c, a in ANCHORS.items()}}
    script_data = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    e = html.escape

    def box(key: str, rows: int, label: str) -> str:
        return (f'<label for="course-doctor-{key}">{e(label)}</label>'
                f'<textarea id="course-doctor-{key}" rows="{rows}" spellcheck="false" autocomplete="off"></textarea>'
                f'<span class="course-doctor-file">{e(words["file"])} '
                f'<input type="file" id="course-doctor-{key}-file" data-for="course-doctor-{key}" disabled></span>')

    form = "\n".join([
        f'<div id="course-doctor" class="course-doctor" data-base="{base}" data-language="{LANGUAGE[code]}">',
        f'<p id="course-doctor-status" class="course-doctor-status" role="status">{e(words["loading"])}</p>',
        '<form id="course-doctor-form">',
        box("smi", 12, words["smi"]),
        box("nvcc", 4, words["nvcc"]),
        '<div class="course-doctor-choices">',
        f'<label>{e(words["platform"])} <select id="course-doctor-platform">{options}</select></label>',
        f'<label>{e(words["python"])} <select id="course-doctor-python">{python_options}</select></label>',
        "</div>",
        f'<details class="course-doctor-log"><summary>{e(words["log"])}</summary>',
        box("log", 8, words["log_box"]),
        "</details>",
        f'<button type="submit" id="course-doctor-check" disabled>{e(words["check"])}</button>',
        "</form>",
        '<div id="course-doctor-answer" aria-live="polite"></div>',
        "</div>",
        f'<script type="application/json" id="course-doctor-words">{script_data}</script>',
        f'<script src="{base}pyodide/pyodide.js"></script>',
        f'<script src="{base}doctor.js"></script>',
    ])
    steps = [words["step_smi"], words["step_query"].format(query=QUERY_COMMAND), words["step_nvcc"],
             words["step_choose"]]
    return (f"# {words['title']}\n\n{words['intro']}\n\n"
            + "\n".join(f"{i}. {step}" for i, step in enumerate(steps, 1))
            + f"\n\n{form}\n\n{words['later']}\n")

