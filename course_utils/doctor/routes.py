"""A platform's routes: ``routes()`` gives ``recommend()``'s answer, then the alternatives worth knowing - WSL2 next
to native Windows; Apple's Metal plugin and the Intel-Mac line next to macOS.

Apart from ``recommend`` because an alternative is a whole recommendation of its own, built from the same notes and
commands; the doctor's diagnosis and notebook 01's picker ask this module. ``in_order`` puts the route to follow
first (WSL2 before native Windows' TF 2.10).
"""

from __future__ import annotations

from course_utils.core.i18n import N_, translator
from course_utils.doctor.commands import in_venv, install_build, pip_install
from course_utils.doctor.recommend import (
    Recommendation,
    _build_for_python,
    build_notes,
    metal_supports,
    normalize_python,
    recommend,
    rule_note,
)
from course_utils.doctor.versions import check_platform, load, parse_version, version_text

_ = translator("doctor")

METAL_ROUTE = N_("Apple silicon, Metal GPU")
INTEL_MAC_ROUTE = N_("Intel Mac")


def routes(
    platform: str,
    python: str | None = None,
    driver: str | None = None,
    gpu: bool | str | None = None,
    *,
    driver_cuda: str | None = None,
    compute_capability: str | None = None,
) -> list[Recommendation]:
    """The recommendation for a platform, then the alternatives worth knowing: native Windows -> WSL2;
    macOS -> Apple's Metal route (where the Python has the plugin) and the Intel-Mac line."""
    platform = check_platform(platform)
    first = recommend(platform, python, driver, gpu, driver_cuda=driver_cuda, compute_capability=compute_capability)
    if platform == "windows" and first.gpu:
        return [first, recommend("wsl2", python, driver, gpu, compute_capability=compute_capability)]
    if platform == "macos":
        asked = normalize_python(python)
        metal = _metal(asked)
        return [first, *([metal] if metal else []), _intel_mac(asked)]
    return [first]


def _metal(asked: str | None) -> Recommendation | None:
    """Apple silicon's Metal route (TF <= 2.18 + tensorflow-metal), for a Python the plugin has wheels for."""
    table = load()
    metal = table.rule("macos-metal")
    if asked and not metal_supports(asked):
        return None
    python = asked or metal["python"][1]
    minor = metal["tensorflow_max"]
    requirement = f"tensorflow=={minor}.*"
    install = pip_install(requirement, minor) + f' "{metal["plugin"]}"'
    notes = [rule_note("macos-metal"), *build_notes(minor)]
    return Recommendation("macos", requirement, in_venv("macos", python, install), None, python, True,
                          route=METAL_ROUTE, notes=notes)


def _intel_mac(asked: str | None) -> Recommendation:
    """Intel Macs: the last TensorFlow line released for them (2.16), CPU only."""
    last = parse_version(load().rule("macos-intel")["last"])
    before = version_text((last[0], last[1] + 1))
    build, python, notes = _build_for_python("linux", asked, before, "macos")
    requirement = f"tensorflow=={build.minor}.*"
    commands = in_venv("macos", python, *install_build(build, requirement))
    notes = [rule_note("macos-intel"), *notes, *build_notes(build.minor)]
    return Recommendation("macos", requirement, commands, build, python, False, route=INTEL_MAC_ROUTE, notes=notes)


def in_order(routes: list[Recommendation]) -> list[Recommendation]:
    """A platform's routes (``routes``) in the order the doctor, its JSON and notebook 01's picker show them, the
    one to follow first: on native Windows with an NVIDIA GPU, WSL2 (the course's TensorFlow on the GPU) before native
    Windows' TF 2.10, on which the course's notebooks do not run; elsewhere as they are."""
    if routes[0].platform == "windows" and routes[0].gpu:
        return sorted(routes, key=lambda rec: rec.platform != "wsl2")
    return list(routes)
