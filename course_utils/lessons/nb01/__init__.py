"""Notebook 01's lesson: what setup reads, and the exercises (1.1 ``check_route``, the route for the Q&A post's
machine; 1.2 ``check_laptop_install`` and 1.3 ``check_server_install``, pip commands for two other machines).

The right answers are never written here: they come from the version table through ``recommend()``, as the
doctor's do, so the exercises follow the table. A command is read as a terminal reads it (``shlex``) and each
requirement as pip does (``packaging``): the release pip would install is the newest row whose versions the pin
allows and whose Python range holds the machine's (any patch version counts as its row; one before the row's
first does not). Then: whether the task allows it, the package and its ``[and-cuda]`` extra, and NumPy 1 against
NumPy 2 (before 2.12 ``"numpy<2"`` is needed, before 2.18 NumPy 1 must be kept; an unneeded ``"numpy<2"`` passes
with a note).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from course_utils.core.i18n import N_, translator
from course_utils.doctor.recommend import Recommendation, platform_name, recommend, tensorflow_requirement
from course_utils.doctor.versions import Build, load, parse_version
from course_utils.lessons import Feedback, feedback, is_empty, multiple_choice, not_answered

_ = translator("lessons")


NOTEBOOK = "01_install_versions"  # the name the notebook gives setup
SMOKE = {}  # nothing to shorten: the notebook runs in seconds
KEY_RESULTS = {  # name: what it means, as the run report explains it
    "qa_tensorflow": "the TensorFlow the doctor recommends for the Q&A post's machine (expected: tensorflow<2.11)",
}


@dataclass(frozen=True)
class Machine:
    """A machine an exercise describes: what ``recommend()`` is asked about it."""

    platform: str
    python: str
    driver: str
    words: str  # how the notebook describes it

    def recommendation(self) -> Recommendation:
        return recommend(self.platform, self.python, self.driver)

    def newest(self) -> tuple[Build | None, str | None]:
        """The newest release that runs with this machine's GPU, as ``recommend()`` says (its fallback when the
        driver is too old for the newest for its Python), and its pip command; (None, None) when none does."""
        rec = self.recommendation()
        if rec.driver_ok is False:
            return rec.fallback_build, rec.fallback_install
        return rec.build, next(c for c in rec.commands if c.startswith("pip install") and "tensorflow" in c)


# The words are marked here and translated where the feedback uses them (_(machine.words)), so they follow
# the language chosen at that time, whichever language was chosen when this module was imported.
LAPTOP = Machine("wsl2", "3.12", "560.94", _("Windows 11 with WSL2 (Ubuntu), Python 3.12, NVIDIA driver 560.94"))
SERVER = Machine("linux", "3.8", "535.183.01", _("Linux, Python 3.8, NVIDIA driver 535.183.01"))


ROUTES = ("a", "b", "c", "d")


def check_route(answer: object) -> Feedback:
    """Exercise 1.1: the route for the Q&A post's machine (native Windows 11, driver 512.77) to run this course
    on its GPU: "b", WSL2 with current TensorFlow after a driver update. The reasons come from the table."""
    table = load()
    keras_3 = table.rule("keras-2-only")["before"]
    wsl2 = table.min_driver(12, "wsl2")
    said = {
        "a": _("TF 2.10 is the last GPU release on native Windows, and it comes with Keras 2. The course needs Keras 3 "
               "(TF {keras_3} or newer).").format(keras_3=keras_3),
        "c": _("tensorflow-gpu is an empty package today, and current pip cannot install it. The GPU support is in "
               "the package tensorflow."),
        "d": _("TensorFlow never calls the toolkit (nvcc), and on native Windows it has no GPU support after 2.10, "
               "whatever toolkit is installed."),
    }
    right = _("Right: WSL2 runs the Linux build, whose [and-cuda] extra brings CUDA and cuDNN as pip packages. Only "
              "the Windows driver is needed, {wsl2} or newer: 512.77 is too old.").format(wsl2=wsl2)
    return multiple_choice("Exercise 1.1", answer, ROUTES, said, right=right)


# The TensorFlow packages a command may name, and why each but the first is not the one to install.
_PACKAGES = {
    "tensorflow": None,
    "tensorflow-gpu": N_("`tensorflow-gpu` is an empty package today, and current pip cannot install it. The GPU "
                         "support is in the package `tensorflow`."),
    "tensorflow-cpu": N_("`tensorflow-cpu` has no GPU support. Install `tensorflow`."),
    "tf-nightly": N_("`tf-nightly` is an untested daily build. Install a tested release of `tensorflow`."),
}
_PATCHES = 10  # the patch versions a row may have: 2.13.0 to 2.13.9 (the table holds releases, not patches)
# pip options followed by a value, which is not a requirement: pip install -i URL "tensorflow"
_VALUE_OPTIONS = {"-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-i", "--index-url",
                  "--extra-index-url", "-f", "--find-links", "-t", "--target", "--prefix", "--root",
                  "--upgrade-strategy", "--python-version", "--platform", "--only-binary", "--no-binary"}
_NUMPY_1 = ("1.22.4", "1.23.5", "1.24.3", "1.26.4")  # NumPy 1 releases that the TensorFlow rows accept
_NUMPY_2 = ("2.0.2", "2.1.3", "2.2.6", "2.3.5", "2.4.6", "3.0.0")


def _allows(specifier, build: Build) -> bool:
    """True when a version pin allows some version of the row ``build``: its first (2.16.1 for the row 2.16.1) to
    patch 9."""
    first = parse_version(build.tensorflow)
    return any(specifier.contains(f"{build.minor}.{patch}")
               for patch in range(first[2] if len(first) > 2 else 0, _PATCHES))


def _runs(build: Build, machine: Machine) -> bool:
    """True when ``build`` runs with the machine's GPU: its Python, and a driver of the build's CUDA family."""
    major = load().driver_cuda_major(machine.driver, machine.platform)
    return build.supports_python(machine.python) and major is not None and build.cuda_major <= major


def _allowed(machine: Machine, newest_only: bool) -> list[Build]:
    """The releases a task allows: the newest that runs with the machine's GPU, or with ``newest_only=False`` every
    release up to it that runs there."""
    newest, _command = machine.newest()
    if newest is None or newest_only:
        return [newest] if newest else []
    return [b for b in load().linux if _runs(b, machine) and parse_version(b.minor) <= parse_version(newest.minor)]


def _built_for_numpy_1(minor: str) -> bool:
    """TF ``minor`` was built against NumPy 1 (before rule 'numpy-2''s ``since``, 2.18)."""
    return parse_version(minor)[:2] < parse_version(load().rule("numpy-2")["since"])[:2]


def _keeps_numpy_1(specifier) -> bool:
    """True when a NumPy requirement allows NumPy 1 and refuses NumPy 2."""
    return any(specifier.contains(v) for v in _NUMPY_1) and not any(specifier.contains(v) for v in _NUMPY_2)


def _split(command: str, posix: bool) -> list[str]:
    lexer = shlex.shlex(command, posix=posix, punctuation_chars=True)
    lexer.whitespace_split = True
    return list(lexer)


def _words(command: str) -> tuple[list[str] | None, str | None]:
    """The command split as a terminal splits it; or (None, what is wrong)."""
    command = command.strip().lstrip("!%").strip()
    try:
        words, raw = _split(command, posix=True), _split(command, posix=False)
    except ValueError as error:  # "No closing quotation"
        return None, _("The quotes do not pair up ({error}). Put each requirement in a pair of double quotes.").format(
            error=error)
    if any(word.startswith(("<", ">")) for word in words):
        return None, _("Put each requirement in double quotes, such as \"numpy<2\". In a terminal, < and > "
                       "without quotes redirect input and output: pip never sees them.")
    separator = next((word for word in words if word.startswith(("|", "&", ";"))), None)
    if separator:
        return None, _("Write only the pip command: {separator} starts another command.").format(separator=separator)
    bare = [word for word in raw if any(c in word for c in "[]*") and not word.startswith(('"', "'"))]
    if bare:
        return None, _("Put {word} in double quotes. Some shells (zsh, the one macOS uses) read [ ] and * "
                       "as file patterns and stop with 'no matches found'.").format(word=bare[0])
    return words, None


def _requirements(words: list[str]) -> tuple[list, str | None]:
    """The requirements after ``pip install`` (options such as --upgrade skipped); or ([], what is wrong)."""

    if "install" not in words or not any(re.fullmatch(r"pip(3(\.\d+)?)?", w) for w in words[: words.index("install")]):
        return [], _("Write one pip command: it starts with `pip install`, then the requirements.")
    found, after = [], words[words.index("install") + 1:]
    for before, word in zip(["install", *after][:-1], after, strict=True):
        if word.startswith("-") or before in _VALUE_OPTIONS:
            continue
        try:
            found.append(Requirement(word))
        except InvalidRequirement as error:
            return [], _("pip cannot read the requirement {word!r}: {error}.").format(word=word, error=error)
    return found, None


def check_install(name: str, machine: Machine, answer: object, *, newest_only: bool) -> Feedback:
    """Check one pip command for ``machine``: right when pip would install a release the task allows (with
    ``newest_only``, the one ``recommend()`` gives; else any that runs with the machine's GPU), with its GPU route."""
    if is_empty(answer):
        return not_answered(
            name, _("Write the pip command as text, for example "
                    "answer = 'pip install \"tensorflow==2.99.*\"'. Then run the cell."))
    if not isinstance(answer, str):
        return feedback(name, [_("`answer` is not text (it is {answer!r}). Write the command as text, in "
                                 "quotes.").format(answer=answer)], right="")
    table, (newest, command) = load(), machine.newest()
    newest = newest or machine.recommendation().build  # no release runs there: judged against the newest for it
    words, problem = _words(answer)
    requirements, problem = _requirements(words) if words is not None else ([], problem)
    if problem:
        return feedback(name, [problem], right="")

    problems, build = [], None
    tf_req = next((r for r in requirements if canonicalize_name(r.name) in _PACKAGES), None)
    numpy = [r for r in requirements if canonicalize_name(r.name) == "numpy"]
    if tf_req is None:
        problems.append(_("Install the package `tensorflow`: the command has no TensorFlow in it."))
    else:
        package = canonicalize_name(tf_req.name)
        if _PACKAGES[package]:
            problems.append(_(_PACKAGES[package]))
        # what pip installs: the newest row the pin allows that has a wheel for the machine's Python (its range)
        build = next((b for b in table.linux if b.supports_python(machine.python) and _allows(tf_req.specifier, b)),
                     None)
        if build not in _allowed(machine, newest_only):
            problems.append(_wrong_release(tf_req.specifier, machine, build, newest))
            build = None  # the extra and the NumPy pin are judged for the release to install instead
        if package == "tensorflow":
            target = build or newest  # the release whose route the extra must follow
            and_cuda = "[and-cuda]" in tensorflow_requirement(target, machine.platform, True)
            has_extra = "and-cuda" in {e.lower() for e in tf_req.extras}
            if and_cuda and not has_extra:
                problems.append(_("On {platform}, add the extra [and-cuda]: \"tensorflow[and-cuda]...\". It installs "
                                  "CUDA and cuDNN as pip packages.").format(platform=platform_name(machine.platform)))
            elif has_extra and not and_cuda:
                problems.append(_("The extra [and-cuda] exists from TensorFlow {since} on. TF {minor} needs CUDA "
                                  "{cuda} and cuDNN {cudnn} installed on the system instead: leave it out.").format(
                    since=table.rule("and-cuda")["since"], minor=target.minor, cuda=target.cuda, cudnn=target.cudnn))
    chosen = build or newest  # the release the NumPy requirement is judged against
    numpy_pin, since = table.rule("numpy-2")["pin"], table.rule("numpy-2")["since"]
    if table.numpy_pin(chosen.minor) and not numpy:
        problems.append(_("Add \"{pin}\": TF {minor} was built against NumPy 1. The course pins it for every "
                          "TensorFlow before {since}. Releases 2.11 and older do not limit NumPy themselves, "
                          "and with NumPy 2 `import tensorflow` fails.").format(
            pin=numpy_pin, minor=chosen.minor, since=since))
    elif _built_for_numpy_1(chosen.minor) and not all(_keeps_numpy_1(r.specifier) for r in numpy):
        problems.append(_("The NumPy pin must keep NumPy 1 and refuse NumPy 2: write \"{pin}\".").format(pin=numpy_pin))
    return feedback(name, problems, right=_right(machine, chosen, newest, command, numpy) if not problems else "")


def _right(machine: Machine, build: Build, newest: Build, command: str, numpy: list) -> str:
    """What a right command gets: the release, what it was tested with, and what else the machine needs."""
    table = load()
    if build == newest:
        right = _("This is the command for {machine}: {command}. TF {minor} was tested with Python "
                  "{python_min}-{python_max}, CUDA {cuda} and cuDNN {cudnn}.").format(
            machine=_(machine.words), command=command, minor=build.minor, python_min=build.python_min,
            python_max=build.python_max, cuda=build.cuda, cudnn=build.cudnn)
    else:
        right = _("TF {chosen} runs on {machine} with its GPU. The newest release that does is TF {minor}: "
                  "{command}.").format(chosen=build.minor, machine=_(machine.words), minor=newest.minor,
                                       command=command)
    if "[and-cuda]" not in tensorflow_requirement(build, machine.platform, True):
        right += " " + _("Install CUDA {cuda} and cuDNN {cudnn} on the system too.").format(
            cuda=build.cuda, cudnn=build.cudnn)
    if table.keras_2(build.minor):
        right += " " + _("TF {minor} comes with Keras 2, so the course's notebooks (Keras 3) do not run on it.").format(
            minor=build.minor)
    pin = next((str(r) for r in numpy if _keeps_numpy_1(r.specifier)), None)
    if pin and not table.numpy_pin(build.minor):
        if _built_for_numpy_1(build.minor):
            right += " " + _("The pin \"{pin}\" is allowed but not needed: TF {minor} limits NumPy itself.").format(
                pin=pin, minor=build.minor)
        else:
            right += " " + _("The pin \"{pin}\" is not needed: TF {minor} works with NumPy 2.").format(
                pin=pin, minor=build.minor)
    return right


def _wrong_release(specifier, machine: Machine, build: Build | None, newest: Build) -> str:
    """Why the release pip takes for a pin (``build``; None: none for the machine's Python) is not one the task
    allows; ``newest`` is the newest release that runs with the machine's GPU."""
    table = load()
    if build is None:
        allowed = [b for b in table.linux if _allows(specifier, b)]
        early = next((b for b in table.linux if not allowed and any(
            specifier.contains(f"{b.minor}.{patch}") for patch in range(parse_version(b.tensorflow)[2]))), None)
        if early:  # ==2.16.0, where the table's row is 2.16.1
            return _("The pin {pin} allows no release in the table of tested builds: its TF {minor} row starts at "
                     "{first}.").format(pin=specifier, minor=early.minor, first=early.tensorflow)
        if not allowed:
            return _("The pin {pin} allows no release in the table of tested builds (TF {oldest} to "
                     "{newest}).").format(pin=specifier, oldest=table.linux[-1].tensorflow,
                                          newest=table.linux[0].tensorflow)
        return _("The pin {pin} allows no release tested with Python {python}: its newest, TF {chosen}, was "
                 "tested with Python {python_min}-{python_max}. Choose a row that lists Python {python}.").format(
            pin=specifier, python=machine.python, chosen=allowed[0].minor, python_min=allowed[0].python_min,
            python_max=allowed[0].python_max)
    if not str(specifier):
        return _("Without a version pin, pip takes the newest TensorFlow for Python {python}: TF {newest}. This "
                 "machine needs TF {minor} (its driver decides). Pin it, such as ==2.99.*.").format(
            python=machine.python, newest=build.minor, minor=newest.minor)
    if not _runs(build, machine):
        return _("The pin {pin} selects TF {chosen}, built with CUDA {cuda}. Driver {driver} is too old for "
                 "CUDA {major}: take an older row.").format(pin=specifier, chosen=build.minor, cuda=build.cuda,
                                                          driver=machine.driver, major=build.cuda_major)
    if parse_version(build.minor) < parse_version(newest.minor):
        return _("The pin {pin} selects TF {chosen}. A newer tested release also supports Python "
                 "{python}: take the newest row that lists it.").format(pin=specifier, chosen=build.minor,
                                                                        python=machine.python)
    return _("The pin {pin} selects TF {chosen}, not the release for this machine.").format(
        pin=specifier, chosen=build.minor)


def check_laptop_install(answer: object) -> Feedback:
    """Exercise 1.2: a pip command that installs TensorFlow with GPU support on the WSL2 laptop: any release that
    runs there with its GPU."""
    return check_install("Exercise 1.2", LAPTOP, answer, newest_only=False)


def check_server_install(answer: object) -> Feedback:
    """Exercise 1.3: the pip command that gets the old Linux server the newest TensorFlow that can use its GPU."""
    return check_install("Exercise 1.3", SERVER, answer, newest_only=True)


# The notebook's exercises, by number: its task cells call ``course.check("1.1", answer)``.
CHECKS = {
    "1.1": check_route,
    "1.2": check_laptop_install,
    "1.3": check_server_install,
}
