"""The website's "Check your machine" page: the course's doctor, run in the browser by Pyodide
(docs/maintainers.md, 'The page "Check your machine"').

This module writes the page and ``_doctor/``: Pyodide's files, the page's script and ``course_doctor.zip``, made from
the modules that ``course_utils.doctor.cli`` imports (found by reading their imports). So the page runs the doctor's
own code: no rule is written a second time, in JavaScript or elsewhere.
"""

from __future__ import annotations

import ast
import base64
import hashlib
import html
import io
import json
import re
import shutil
import subprocess
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

from course_tools import LANGUAGES, _, speaking
from course_utils.core.errors import CourseError
from course_utils.core.places import PROJECT_ROOT as ROOT
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
            raise CourseError(f"the page 'Check your machine' needs Pyodide {PYODIDE_VERSION} from npm, and npm is not "
                              "installed.", f"Install Node.js (it brings npm), or put the file that `npm pack "
                              f"pyodide@{PYODIDE_VERSION}` makes at {tarball}.")
        folder.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([npm, "pack", "--silent", f"pyodide@{PYODIDE_VERSION}"], cwd=folder,
                              capture_output=True, text=True, check=False)
        if done.returncode != 0 or not tarball.is_file():
            raise CourseError(f"`npm pack pyodide@{PYODIDE_VERSION}` failed in {folder} (exit {done.returncode}): "
                              f"{done.stderr.strip()}.", "Check the connection to the npm registry, then run make site "
                              "again.")
    found = integrity(tarball.read_bytes())
    if found != PYODIDE_INTEGRITY:
        raise CourseError(f"{tarball} is not the npm registry's pyodide {PYODIDE_VERSION} (its sha512 is {found}).",
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


def page_words(code: str) -> dict[str, str]:
    """The page's words in the language of edition ``code`` (the tools' message catalogue)."""
    with speaking(code):
        return {
            "title": _("Check your machine"),
            "intro": _("Paste what your computer prints, and get the commands that install TensorFlow for it. You "
                       "need nothing installed: the course's doctor, `course doctor`, runs here, in your browser. "
                       "What you paste stays on this page. It is not sent anywhere."),
            "step_smi": _("In a terminal (on Windows: PowerShell or Command Prompt), run `nvidia-smi` and paste "
                          "all of what it prints. If the command is not found, paste that message: it tells the "
                          "doctor something too."),
            "step_query": _("Optional: also run `{query}` and paste its lines below the table. They tell the "
                            "doctor your GPU's generation."),
            "step_nvcc": _("Optional: if the CUDA toolkit is installed, run `nvcc --version` and paste it. "
                           "TensorFlow does not need the toolkit."),
            "step_choose": _("Choose your platform and the Python you want to use, then press *Check*."),
            "later": _("Once the course's environment is installed, the same doctor runs on your machine: `course "
                       "doctor` looks at the machine itself, and at TensorFlow once it is installed."),
            "smi": _("What nvidia-smi printed"),
            "nvcc": _("What nvcc --version printed (optional)"),
            "log": _("A TensorFlow log (optional): what TensorFlow printed when it started or failed"),
            "log_box": _("Paste the log here"),
            "file": _("Or choose a file:"),
            "platform": _("Platform"),
            "guess": _("Guess from what I pasted"),
            "python": _("Python"),
            "no_python": _("Not chosen (the doctor suggests one)"),
            "check": _("Check"),
            "loading": _("Loading the doctor (about 12 MB, once)..."),
            "ready": _("The doctor is ready (loaded in {seconds} s)."),
            "failed": _("The doctor could not load in this browser: {error}. Use `course doctor` in the course's "
                        "environment instead."),
            "crashed": _("The doctor stopped on this input: {error}. Please report it, with what you pasted."),
            "usage": _("The doctor did not accept this input:"),
            "machine": _("Your machine"),
            "install": _("What to install"),
            "alternatives": _("Other ways"),
            "findings": _("Findings"),
            "no_findings": _("No findings."),
            "error": _("Errors"),
            "warning": _("Warnings"),
            "info": _("Information"),
            "fix": _("What to do:"),
            "more": _("More:"),
            "entry": _("the troubleshooting page"),
            "log_title": _("Your TensorFlow log"),
            "no_problem": _("No problem line in the log."),
            "report": _("The report as `course doctor` prints it"),
            "same_as": _("Same as this command, run where the files are:"),
            "json": _("The JSON (for a program, or to share)"),
            "copy": _("Copy"),
            "copy_json": _("Copy the JSON"),
            "copied": _("Copied"),
            "platform_line": _("Platform: {value}"),
            "python_line": _("Python: {value}"),
            "not_given": _("not chosen"),
            "gpus_line": _("GPU: {value}"),
            "driver_line": _("NVIDIA driver: {driver} (supports CUDA up to {cuda})"),
            "no_driver": _("NVIDIA driver: none found"),
            "toolkit_line": _("CUDA toolkit (nvcc): {value}"),
            "result_errors": _("Result: {count} error(s) and {warnings} warning(s). Read the findings below."),
            "result_ok": _("Result: no errors, {warnings} warning(s)."),
        }


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
    words = page_words(code)
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

    form = (ASSETS / "form.html").read_text(encoding="utf-8").format(  # {...}: the page's values, escaped
        base=base, language=LANGUAGES[code], platforms=options, pythons=python_options, words=script_data,
        smi=box("smi", 12, words["smi"]), nvcc=box("nvcc", 4, words["nvcc"]), log_box=box("log", 8, words["log_box"]),
        **{key: e(words[key]) for key in ("loading", "platform", "python", "log", "check")}).rstrip("\n")
    steps = [words["step_smi"], words["step_query"].format(query=QUERY_COMMAND), words["step_nvcc"],
             words["step_choose"]]
    return (f"# {words['title']}\n\n{words['intro']}\n\n"
            + "\n".join(f"{i}. {step}" for i, step in enumerate(steps, 1))
            + f"\n\n{form}\n\n{words['later']}\n")

