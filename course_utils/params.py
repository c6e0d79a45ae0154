"""Notebook parameters and the one smoke switch, ``COURSE_SMOKE``.

Every notebook's first code cell (tagged ``parameters``) holds literal values that
papermill can override. nbval cannot inject parameters, so the environment switch
``COURSE_SMOKE=1`` shortens every notebook the same way under both runners: each
notebook declares *caps* (``{"EPOCHS": 1, "IMAGES": 2000}``) and in smoke mode a
parameter is lowered to its cap, never raised - so a papermill grid over small values
keeps its points.

``check_parameters(values, notebook)`` - run by ``setup`` before anything else, so a bad
value fails the setup cell instead of training to the end and failing the checkpoint - checks
what each parameter's name promises in the course's vocabulary (CONTRIBUTING, "A notebook"):
every number is finite (no NaN, no infinity); counts (``EPOCHS``, ``BATCH_SIZE``, ``IMAGES``,
``*_EPOCHS``, ``*_IMAGES``, ``*_SIZE``, ``REPEATS``, ``WORKERS``, ``*_DEVICES``, ``*_REPLICAS``)
are whole numbers >= 1 (``IMAGES`` may be None: all); amounts (``*_RATE``, ``*_MB``, ``*_S``)
are numbers > 0. Then what the notebook itself needs (``NEEDS``), such as the fewest images
its checkpoint can be trusted with.
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


def smoke_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """True when ``COURSE_SMOKE`` asks for the short run; an unknown value is an error."""
    smoke = variables.flag(variables.SMOKE, environ)
    if smoke is not None:
        return smoke
    value = (environ if environ is not None else os.environ).get(variables.SMOKE, "").strip().lower()
    raise ParameterError(
        _("{variable}={value!r} is not understood.").format(variable=variables.SMOKE, value=value),
        _("Set {variable}=1 for the short smoke run, or unset it (or 0) for the full run.").format(
            variable=variables.SMOKE),
    )


def apply_smoke(namespace: MutableMapping[str, Any], caps: Mapping[str, Any], *, smoke: bool) -> dict[str, tuple]:
    """Lower each capped parameter in ``namespace`` to its cap when ``smoke``; return what changed.

    ``None`` as a parameter value means "all" (e.g. ``IMAGES = None``: every image), so it
    is lowered to the cap as well.
    """
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
        raise ParameterError(
            what.format(name=name, value=value),
            _("Change {name} in the parameters cell (or pass -p {name} <integer> to papermill).").format(name=name),
        )


_COUNT = re.compile(r"^(EPOCHS|IMAGES|BATCH_SIZE|REPEATS|WORKERS|\w+_(EPOCHS|IMAGES|SIZE|DEVICES|REPLICAS))$")
_NONE_IS_ALL = re.compile(r"^(\w+_)?IMAGES$")
_AMOUNT = re.compile(r"^\w+_(RATE|MB|S)$")


def _change(name: str, what: str) -> str:
    """The fix for a parameter: change ``name`` to a ``what`` (already in the reader's language)."""
    return _("Change {name} in the parameters cell (or pass -p {name} <{what}> to course run / papermill).").format(
        name=name, what=what)


def _numbers(value: Any) -> list[float]:
    """The floats in a parameter value, one level into lists, tuples and dicts."""
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else [value]
    return [v for v in items if isinstance(v, float)]


def check_value(name: str, value: Any) -> None:
    """Reject a value its name rules out: a non-finite number anywhere, a count below 1, an amount <= 0."""
    if any(not math.isfinite(v) for v in _numbers(value)):
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


def _too_few(what: str, least: int, fix: str | None = None) -> ParameterError:
    """IMAGES below what a notebook needs: ``what`` says so (one whole sentence), the fix asks for ``least``.

    The error keeps ``least``, so smoke mode can give way where its own cap was the cause (``settle_smoke``).
    """
    error = ParameterError(
        what, fix or _change("IMAGES", _("{least:,} or more, or None for all").format(least=least)))
    error.least_images = least
    return error


def _train_images(images: int, validation_split: float = 0.2) -> int:
    """Training images left when the last ``validation_split`` validate (``bench.channels.validation_start``'s rule)."""
    return int(math.floor(images * (1.0 - validation_split)))


def _needs_split(images: int | None) -> None:
    if images is not None and (_train_images(images) < 1 or images - _train_images(images) < 1):
        raise _too_few(_("Parameter IMAGES = {images:,} is too few for this notebook: it needs at least {least:,} - "
                         "one image to train on and one to validate (the last 20% validate).").format(
                             images=images, least=2), 2)


def _needs_04(values: Mapping[str, Any]) -> None:
    images = values.get("IMAGES")
    _needs_split(images)
    # The checkpoint asks MNIST runs for zeros ahead of noise (the average of the last 3 epochs);
    # docs/references.md#noise-gap lists the gaps measured, the smallest run being 4,000 images x 5 epochs (its
    # smoke run). Fewer: unmeasured.
    if images is not None and values.get("DATASET") == "mnist" and images < 4000:
        raise _too_few(_("Parameter IMAGES = {images:,} is too few for this notebook: it needs at least {least:,} - "
                         "its checkpoint's check that zeros beat noise was measured from 4,000 images (x 5 epochs) "
                         "up (docs/references.md#noise-gap).").format(images=images, least=4000),
                       4000)


def _needs_05(values: Mapping[str, Any]) -> None:
    epochs = values.get("EPOCHS", 2)
    if epochs < 2:  # the device comparison leaves the first epoch out
        raise ParameterError(
            _("EPOCHS = {epochs} leaves no epoch to time: the first one is warm-up.").format(epochs=epochs),
            _("Set EPOCHS >= 2."))
    policy = values.get("MIXED_PRECISION", "auto")
    from course_utils.speed import check_policy  # lazy: `import course_utils` loads no lesson helper

    try:
        check_policy(policy)
    except ParameterError as error:
        raise ParameterError(_("MIXED_PRECISION = {policy!r} is not understood.").format(policy=policy),
                             error.fix) from None
    target = values.get("TARGET_ACCURACY")
    if target is not None and (isinstance(target, bool) or not isinstance(target, (int, float)) or not 0 < target < 1):
        raise ParameterError(
            _("TARGET_ACCURACY = {target!r} is not an accuracy between 0 and 1.").format(target=target),
            _("Set TARGET_ACCURACY to a number such as 0.96, or None: one point below the test accuracy of "
              "section 2."))
    images = values.get("IMAGES")
    # The short-run accuracy the checkpoint asks for (80% MNIST, 65% Fashion-MNIST) is verified by every smoke
    # run of the course's tests, at 2,000 images x 3 epochs; fewer images are not known to reach it.
    if images is not None and images < 2000:
        raise _too_few(_("Parameter IMAGES = {images:,} is too few for this notebook: it needs at least {least:,} - "
                         "its checkpoint's short-run test accuracy is verified at 2,000 images (x 3 epochs, its "
                         "smoke run).").format(images=images, least=2000), 2000)


def _needs_06(values: Mapping[str, Any]) -> None:
    images, epochs, batch = values.get("IMAGES"), values.get("EPOCHS", 1), values.get("BATCH_SIZE", 1)
    _needs_split(images)
    from course_utils.tb_profile import check_profile_batch  # lazy: `import course_utils` loads no lesson helper

    profile = check_profile_batch(values.get("PROFILE_BATCH"))
    if images is None or profile is None:
        return  # None: the whole dataset, thousands of images
    stop = profile[1]
    batches = math.ceil(_train_images(images) / batch) * epochs
    if batches < stop:
        per_epoch = math.ceil(stop / epochs)  # CNN batches an epoch must have for batch `stop` to come
        least = math.ceil(((per_epoch - 1) * batch + 1) / (1.0 - 0.2))
        while math.ceil(_train_images(least) / batch) < per_epoch:  # float rounding at the edge
            least += 1
        what = (_("Parameter IMAGES = {images:,} is too few for this notebook: it needs at least {least:,} - "
                  "PROFILE_BATCH = {profile} profiles up to batch {stop}, and {images:,} images make {batches} CNN "
                  "batches of {batch} in {epochs} epoch(s).") if batches != 1
                else _("Parameter IMAGES = {images:,} is too few for this notebook: it needs at least {least:,} - "
                       "PROFILE_BATCH = {profile} profiles up to batch {stop}, and {images:,} images make {batches} "
                       "CNN batch of {batch} in {epochs} epoch(s)."))
        raise _too_few(
            what.format(images=images, least=least, profile=tuple(profile), stop=stop, batches=batches, batch=batch,
                        epochs=epochs),
            least,
            _("Use IMAGES >= {least:,} (or more EPOCHS, a smaller BATCH_SIZE), or PROFILE_BATCH = None.").format(
                least=least),
        )


def _needs_07(values: Mapping[str, Any]) -> None:
    images, batch = values.get("IMAGES"), values.get("BATCH_SIZE", 1)
    replicas = values.get("CPU_REPLICAS", 1)
    # Run (c) trains with a global batch of BATCH_SIZE x replicas, whole batches only (drop_remainder): one step
    # needs that many images. On several GPUs the replicas are the GPUs, known only after start-up (batch_plan).
    if images is not None and values.get("DEVICE", "auto") != "gpu" and images < batch * replicas:
        raise _too_few(_("Parameter IMAGES = {images:,} is too few for this notebook: it needs at least {least:,} - "
                         "one step of its run (c), whose global batch is BATCH_SIZE x CPU_REPLICAS = {batch} x "
                         "{replicas}.").format(images=images, least=batch * replicas, batch=batch, replicas=replicas),
                       batch * replicas)


# What each notebook needs beyond its names' promises, checked at setup. Keyed by the name setup() is given.
NEEDS: dict[str, Callable[[Mapping[str, Any]], None]] = {
    "04_dense_noise_vs_zeros": _needs_04,
    "05_cnn_cpu_vs_gpu": _needs_05,
    "06_tensorboard": _needs_06,
    "07_beyond_one_gpu": _needs_07,
}


def check_parameters(values: Mapping[str, Any], notebook: str | None = None) -> None:
    """Check a notebook's parameters (see the module docstring): ``ParameterError`` naming the first problem."""
    for name, value in values.items():
        check_value(name, value)
    need = NEEDS.get(notebook or "")
    if need is not None:
        need(values)


def settle_smoke(values: Callable[[], Mapping[str, Any]], namespace: MutableMapping[str, Any],
                 changes: dict[str, tuple], notebook: str | None = None) -> None:
    """``check_parameters(values(), notebook)`` after ``apply_smoke``, where a smoke cap never makes a choice illegal.

    A cap on IMAGES can leave too few images for what the student chose (06's ``PROFILE_BATCH`` with
    ``EPOCHS = 1``: the profiled steps never come). The cap is the course's choice, not the student's, so
    IMAGES then goes up to the least the notebook needs - still a short run - and ``changes`` says so. A value
    the student chose that is too few by itself still fails.
    """
    while True:
        try:
            check_parameters(values(), notebook)
            return
        except ParameterError as error:
            least, lowered = getattr(error, "least_images", None), changes.get("IMAGES")
            if least is None or lowered is None or namespace.get("IMAGES") == least:
                raise
            chosen = lowered[0]
            if chosen is not None and chosen < least:  # too few by the student's own choice: say so with it
                namespace["IMAGES"] = chosen
                del changes["IMAGES"]
                check_parameters(values(), notebook)
                raise
            namespace["IMAGES"] = least
            if chosen == least:
                del changes["IMAGES"]
            else:
                changes["IMAGES"] = (chosen, least)
