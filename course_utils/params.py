"""Notebook parameters and the one smoke switch, ``COURSE_SMOKE``.

A notebook's first code cell (tagged ``parameters``) holds literals papermill can override. nbval cannot
inject parameters, so ``COURSE_SMOKE=1`` shortens every notebook the same way under both: each parameter in the
lesson's ``SMOKE`` caps is lowered to its cap, never raised (a papermill grid over small values keeps its points).

``check_parameters(values, needs)`` runs in ``setup`` before TensorFlow, so a bad value fails the setup cell, not
the checkpoint: what each name promises (counts are whole numbers >= 1, amounts numbers > 0, every number finite),
then the lesson's own ``needs``.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

from course_utils.core import i18n, variables
from course_utils.core.errors import ParameterError
from course_utils.core.i18n import translator

_ = translator("course")

# What a notebook needs beyond its names' promises: its lesson's ``needs`` (course_utils/lessons/nbNN.py).
Needs = Callable[[Mapping[str, Any]], None]


def check_language(value: object) -> str:
    """A language the student chose (``setup(language=...)``, ``COURSE_LANG``) as one of ``i18n.LANGUAGES``;
    a ``ParameterError`` naming the choices otherwise."""
    found = i18n.spelled(value)
    if found is None:
        raise ParameterError(
            _("Language {value!r} is not one the course speaks.").format(value=value),
            _("Use {english!r} or {chinese!r} (in the environment: {variable}=zh-CN).").format(
                english=i18n.ENGLISH, chinese=i18n.CHINESE, variable=variables.LANG),
        )
    return found


def switch(variable: str, environ: Mapping[str, str] | None = None) -> bool:
    """An on/off ``COURSE_*`` variable (``variables.flag``); a value it does not take is a ``ParameterError``."""
    found = variables.flag(variable, environ)
    if found is not None:
        return found
    value = (environ if environ is not None else os.environ).get(variable, "").strip().lower()
    raise ParameterError(
        _("{variable}={value!r} is not understood: it takes {on} (on), or {off} or nothing (off).").format(
            variable=variable, value=value, on="/".join(variables.TRUE), off="/".join(variables.FALSE[1:])),
        _("Set {variable}=1, or {variable}=0 (or unset it).").format(variable=variable),
    )


def smoke_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """True when ``COURSE_SMOKE`` asks for the short run; an unknown value is an error."""
    return switch(variables.SMOKE, environ)


def apply_smoke(namespace: MutableMapping[str, Any], caps: Mapping[str, Any], *, smoke: bool) -> dict[str, tuple]:
    """Lower each capped parameter in ``namespace`` to its cap when ``smoke`` (None, "all", too); what changed."""
    missing = [name for name in caps if name not in namespace]
    if missing:
        raise ParameterError(
            _("Smoke caps name parameters this notebook does not define: {names}.").format(names=", ".join(missing)),
            _("Define them in the parameters cell, or remove them from the caps."),
        )
    changed: dict[str, tuple] = {}
    if not smoke:
        return changed
    for name, cap in caps.items():
        value = namespace[name]
        if value is None or value > cap:
            namespace[name] = cap
            changed[name] = (value, cap)
    return changed


def check_positive_int(name: str, value: Any, *, allow_none: bool = False) -> None:
    """Reject a parameter that should be a positive integer, with a message naming it."""
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        what = (_("Parameter {name} = {value!r} must be a positive integer (or None for all).") if allow_none
                else _("Parameter {name} = {value!r} must be a positive integer."))
        raise ParameterError(what.format(name=name, value=value), _change(name, _("integer")))


_COUNT = re.compile(r"^(EPOCHS|IMAGES|BATCH_SIZE|REPEATS|WORKERS|\w+_(EPOCHS|IMAGES|SIZE|DEVICES|REPLICAS))$")
_NONE_IS_ALL = re.compile(r"^(\w+_)?IMAGES$")
_AMOUNT = re.compile(r"^\w+_(RATE|MB|S)$")


def _change(name: str, what: str) -> str:
    """The fix for a parameter: change ``name`` to a ``what`` (already in the reader's language)."""
    return _("Change {name} in the parameters cell (or pass -p {name} <{what}> to course run / papermill).").format(
        name=name, what=what)


def check_value(name: str, value: Any) -> None:
    """Reject a value its name rules out: a non-finite number anywhere, a count below 1, an amount <= 0."""
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else [value]
    if any(isinstance(v, float) and not math.isfinite(v) for v in items):  # one level into lists, tuples and dicts
        what = (_("Parameter {name} = {value!r} is not a finite number: training on it would run to the end and "
                  "fail late.") if isinstance(value, float)
                else _("Parameter {name} = {value!r} holds a number that is not finite: training on it would run to "
                       "the end and fail late."))
        raise ParameterError(what.format(name=name, value=value), _change(name, _("number")))
    if _COUNT.match(name):
        check_positive_int(name, value, allow_none=bool(_NONE_IS_ALL.match(name)))
    elif _AMOUNT.match(name) and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
        raise ParameterError(_("Parameter {name} = {value!r} must be a number greater than 0.").format(
            name=name, value=value), _change(name, _("number")))


def too_few(images: int, least: int, why: str, fix: str | None = None) -> ParameterError:
    """IMAGES = ``images`` below the ``least`` a notebook needs (``why``: the reason, one sentence in the reader's
    language), raised by a lesson's ``needs``; it keeps ``least_images`` so a smoke cap that caused it can give way
    (``settle_smoke``).
    """
    error = ParameterError(
        _("Parameter IMAGES = {images:,} is too few for this notebook: it needs at least {least:,} - {why}").format(
            images=images, least=least, why=why),
        fix or _change("IMAGES", _("{least:,} or more, or None for all").format(least=least)))
    error.least_images = least
    return error


def train_images(images: int, validation_split: float = 0.2) -> int:
    """Training images left when the last ``validation_split`` validate: notebook 04's split, the same as Keras's."""
    return int(math.floor(images * (1.0 - validation_split)))


def needs_split(images: int | None) -> None:
    """Refuse IMAGES too few to leave one image to train on and one to validate (the last 20% validate)."""
    if images is not None and (train_images(images) < 1 or images - train_images(images) < 1):
        raise too_few(images, 2, _("one image to train on and one to validate (the last 20% validate)."))


def check_parameters(values: Mapping[str, Any], needs: Needs | None = None) -> None:
    """Check a notebook's parameters (see the module docstring), then ``needs`` (its lesson's): ``ParameterError``
    naming the first problem."""
    for name, value in values.items():
        check_value(name, value)
    if needs is not None:
        needs(values)


def settle_smoke(values: Callable[[], Mapping[str, Any]], namespace: MutableMapping[str, Any],
                 changes: dict[str, tuple], needs: Needs | None = None) -> None:
    """``check_parameters(values(), needs)`` after ``apply_smoke``, where a smoke cap never makes a choice illegal:
    a cap on IMAGES that leaves too few images for what the student chose (06's ``PROFILE_BATCH``) rises to the least
    the notebook needs, and ``changes`` says so. A value the student chose that is too few by itself still fails.
    """
    while True:
        try:
            check_parameters(values(), needs)
            return
        except ParameterError as error:
            least, lowered = getattr(error, "least_images", None), changes.get("IMAGES")
            if least is None or lowered is None or namespace.get("IMAGES") == least:
                raise
            chosen = lowered[0]
            if chosen is not None and chosen < least:  # too few by the student's own choice: say so with it
                namespace["IMAGES"] = chosen
                del changes["IMAGES"]
                check_parameters(values(), needs)
                raise
            namespace["IMAGES"] = least
            if chosen == least:
                del changes["IMAGES"]
            else:
                changes["IMAGES"] = (chosen, least)
