"""Notebook 01's lesson: what setup reads, and the exercises.

Setup reads ``NOTEBOOK``, ``SMOKE`` (none: the notebook runs in seconds) and ``KEY_RESULTS``.

The exercises: choose the route for the Q&A post's machine, and write the pip command for two others.

The right answers are never written here: they come from the version table
(``course_utils/doctor/versions.json``) through ``recommend()``, the function the doctor and the
picker use. So when the table gets a new row, the exercises follow it.

- Exercise 1.1, ``check_route(answer)``: the route that runs this course on the Q&A post's GPU (WSL2).
- Exercise 1.2, ``check_laptop_install(answer)``: the pip command for a Windows laptop with WSL2.
- Exercise 1.3, ``check_server_install(answer)``: the pip command for an old Linux server (Python 3.8).

An install command is read as a terminal reads it (``shlex``) and each requirement as pip reads
it (``packaging``, which TensorFlow itself depends on). The check looks at three things: the
package and its ``[and-cuda]`` extra (the platform's route), the release the version pin selects,
and the ``"numpy<2"`` pin that TensorFlow before 2.12 needs (2.12-2.17 cap NumPy themselves; a pin there
is accepted). A command without a version pin is right when pip would take the right release by itself.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement

from course_utils.core.i18n import translator
from course_utils.doctor.recommend import Recommendation, platform_name, recommend
from course_utils.doctor.versions import Build, load, parse_version
from course_utils.lessons import Feedback, feedback, is_empty, multiple_choice, not_answered

_ = translator("lessons")

# --------------------------------------------------------------------------- the run: what setup reads

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


# The words are marked here and translated where the feedback uses them (_(machine.words)), so they follow
# the language chosen at that time, whichever language was chosen when this module was imported.
LAPTOP = Machine("wsl2", "3.12", "560.94", _("Windows 11 with WSL2 (Ubuntu), Python 3.12, NVIDIA driver 560.94"))
SERVER = Machine("linux", "3.8", "535.183.01", _("Linux, Python 3.8, NVIDIA driver 535.183.01"))


# ----------------------------------------------------------------------------- Exercise 1.1

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


# ----------------------------------------------------------------------------- Exercises 1.2 and 1.3

_PACKAGES = ("tensorflow", "tensorflow-gpu", "tensorflow-cpu", "tf-nightly")


def _selects(specifier, minor: str) -> bool:
    """True when a version pin allows release ``minor`` ('2.21': 2.21.0) and nothing of the next one."""
    major, number = parse_version(minor)[:2]
    return specifier.contains(f"{minor}.0") and not specifier.contains(f"{major}.{number + 1}.0")


def _newest_allowed(specifier) -> Build | None:
    """The newest release in the table that a version pin allows (what pip would look for first)."""
    return next((b for b in load().linux if specifier.contains(f"{b.minor}.0")), None)


def _newest_for_python(python: str) -> Build | None:
    """The release pip takes without a pin: the newest whose wheels support ``python`` (its tested range)."""
    return next((b for b in load().linux if b.supports_python(python)), None)


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
    if any(word.startswith(("<", ">", "|", "&", ";")) for word in words):
        return None, _("Put each requirement in double quotes, such as \"numpy<2\". In a terminal, < and > "
                       "without quotes redirect input and output: pip never sees them.")
    bare = [word for word in raw if any(c in word for c in "[]*") and not word.startswith(('"', "'"))]
    if bare:
        return None, _("Put {word} in double quotes. Some shells (zsh, the one macOS uses) read [ ] and * "
                       "as file patterns and stop with 'no matches found'.").format(word=bare[0])
    return words, None


def _requirements(words: list[str]) -> tuple[list, str | None]:
    """The requirements after ``pip install`` (options such as --upgrade skipped); or ([], what is wrong)."""

    if "install" not in words or not any(re.fullmatch(r"pip(3(\.\d+)?)?", w) for w in words[: words.index("install")]):
        return [], _("Write one pip command: it starts with `pip install`, then the requirements.")
    found = []
    for word in words[words.index("install") + 1:]:
        if word.startswith("-"):
            continue
        try:
            found.append(Requirement(word))
        except InvalidRequirement as error:
            return [], _("pip cannot read the requirement {word!r}: {error}.").format(word=word, error=error)
    return found, None


def check_install(name: str, machine: Machine, answer: object) -> Feedback:
    """Check one pip command against what ``recommend()`` says for ``machine``."""
    if is_empty(answer):
        return not_answered(
            name, _("Write the pip command as text, for example "
                    "answer = 'pip install \"tensorflow==2.99.*\"'. Then run the cell."))
    if not isinstance(answer, str):
        return feedback(name, [_("`answer` is not text (it is {answer!r}). Write the command as text, in "
                                 "quotes.").format(answer=answer)], right="")
    rec = machine.recommendation()
    build = rec.build
    minor, and_cuda, numpy_pin = build.minor, "[and-cuda]" in rec.tensorflow, load().numpy_pin(build.minor)
    words, problem = _words(answer)
    requirements, problem = _requirements(words) if words is not None else ([], problem)
    if problem:
        return feedback(name, [problem], right="")

    problems = []
    tensorflow = [r for r in requirements if r.name.lower().replace("_", "-") in _PACKAGES]
    numpy = [r for r in requirements if r.name.lower() == "numpy"]
    if not tensorflow:
        problems.append(_("Install the package `tensorflow`: the command has no TensorFlow in it."))
    else:
        tf_req = tensorflow[0]
        package = tf_req.name.lower().replace("_", "-")
        if package == "tensorflow-gpu":
            problems.append(_("`tensorflow-gpu` is an empty package today, and current pip cannot install it. "
                              "The GPU support is in the package `tensorflow`."))
        elif package == "tensorflow-cpu":
            problems.append(_("`tensorflow-cpu` has no GPU support. Install `tensorflow`."))
        elif package == "tf-nightly":
            problems.append(_("`tf-nightly` is an untested daily build. Install a tested release of `tensorflow`."))
        has_extra = "and-cuda" in {e.lower() for e in tf_req.extras}
        since = load().rule("and-cuda")["since"]
        if and_cuda and not has_extra:
            problems.append(_("On {platform}, add the extra [and-cuda]: \"tensorflow[and-cuda]...\". It installs "
                              "CUDA and cuDNN as pip packages.").format(platform=platform_name(machine.platform)))
        elif has_extra and not and_cuda:
            problems.append(_("The extra [and-cuda] exists from TensorFlow {since} on. TF {minor} needs CUDA "
                              "{cuda} and cuDNN {cudnn} installed on the system instead: leave it out.").format(
                since=since, minor=minor, cuda=build.cuda, cudnn=build.cudnn))
        if not str(tf_req.specifier):
            newest = _newest_for_python(machine.python)
            if newest is None or newest.minor != minor:
                problems.append(_("Without a version pin, pip takes the newest TensorFlow for Python {python}: TF "
                                  "{newest}. This machine needs TF {minor} (its driver decides). Pin it, such as "
                                  "==2.99.*.").format(python=machine.python, newest=newest.minor if newest else "-",
                                                      minor=minor))
        elif not _selects(tf_req.specifier, minor):
            problems.append(_wrong_release(tf_req.specifier, machine, minor))
    if numpy_pin and not numpy and load().numpy_pin_needed(minor):
        since = load().rule("numpy-2")["since"]
        problems.append(_("Add \"{pin}\": TF {minor} was built against NumPy 1. The course pins it for every "
                          "TensorFlow before {since}. Releases 2.11 and older do not limit NumPy themselves, "
                          "and with NumPy 2 `import tensorflow` fails.").format(
            pin=numpy_pin, minor=minor, since=since))
    elif numpy_pin and not all(r.specifier.contains("1.26.4") and not r.specifier.contains("2.0.0") for r in numpy):
        problems.append(_("The NumPy pin must keep NumPy 1 and refuse NumPy 2: write \"{pin}\".").format(pin=numpy_pin))
    elif numpy and not numpy_pin:
        since = load().rule("numpy-2")["since"]
        problems.append(_("TF {minor} works with NumPy 2: the pin \"numpy<2\" is only for TensorFlow "
                          "before {since}. Leave it out.").format(minor=minor, since=since))
    command = next(c for c in rec.commands if c.startswith("pip install") and "tensorflow" in c)
    right = _("This is the command for {machine}: {command}. TF {minor} was tested with Python "
              "{python_min}-{python_max}, CUDA {cuda} and cuDNN {cudnn}.").format(
        machine=_(machine.words), command=command, minor=minor, python_min=build.python_min,
        python_max=build.python_max, cuda=build.cuda, cudnn=build.cudnn)
    if not and_cuda:
        right += " " + _("Install CUDA {cuda} and cuDNN {cudnn} on the system too.").format(
            cuda=build.cuda, cudnn=build.cudnn)
    if load().keras_2(minor):
        right += " " + _("TF {minor} comes with Keras 2, so the course's notebooks (Keras 3) do not run on it.").format(
            minor=minor)
    return feedback(name, problems, right=right)


def _wrong_release(specifier, machine: Machine, minor: str) -> str:
    """Why the release a pin selects is not the one for this machine."""
    if specifier.contains(f"{minor}.0"):
        return _("The pin {pin} also lets pip take a later release, which may need another Python, CUDA "
                 "or driver. Pin one release, such as ==2.99.*.").format(pin=specifier)
    chosen = _newest_allowed(specifier)
    if chosen is None:
        return _("The pin {pin} selects no TensorFlow in the table (2.4 to {newest}).").format(
            pin=specifier, newest=load().linux[0].minor)
    if not chosen.supports_python(machine.python):
        return _("The pin {pin} lets pip take TF {chosen}. It was tested with Python {python_min}-{python_max}, "
                 "not {python}. Find the newest row that lists Python {python}.").format(
            pin=specifier, chosen=chosen.minor, python_min=chosen.python_min, python_max=chosen.python_max,
            python=machine.python)
    if parse_version(chosen.minor) < parse_version(minor):
        return _("The pin {pin} selects TF {chosen}. A newer tested release also supports Python "
                 "{python}: take the newest row that lists it.").format(pin=specifier, chosen=chosen.minor,
                                                                        python=machine.python)
    return _("The pin {pin} selects TF {chosen}, not the release for this machine.").format(
        pin=specifier, chosen=chosen.minor)


def check_laptop_install(answer: object) -> Feedback:
    """Exercise 1.2: the pip command that installs TensorFlow with its GPU on the WSL2 laptop."""
    return check_install("Exercise 1.2", LAPTOP, answer)


def check_server_install(answer: object) -> Feedback:
    """Exercise 1.3: the pip command that installs TensorFlow with its GPU on the old Linux server."""
    return check_install("Exercise 1.3", SERVER, answer)


# The notebook's exercises, by number: its task cells call ``course.check("1.1", answer)``.
CHECKS = {
    "1.1": check_route,
    "1.2": check_laptop_install,
    "1.3": check_server_install,
}
