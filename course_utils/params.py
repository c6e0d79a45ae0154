"""Notebook parameters and the one smoke switch, ``COURSE_SMOKE``.

Every notebook's first code cell (tagged ``parameters``) holds literal values that
papermill can override. nbval cannot inject parameters, so the environment switch
``COURSE_SMOKE=1`` shortens every notebook the same way under both runners: each
notebook declares *caps* (``{"EPOCHS": 1, "IMAGES": 2000}``) and in smoke mode a
parameter is lowered to its cap, never raised - so a papermill grid over small values
keeps its points.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping
from typing import Any

from course_utils.errors import ParameterError

SMOKE_ENV = "COURSE_SMOKE"
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")


def smoke_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """True when ``COURSE_SMOKE`` asks for the short run; an unknown value is an error."""
    value = (environ if environ is not None else os.environ).get(SMOKE_ENV, "").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ParameterError(
        f"{SMOKE_ENV}={value!r} is not understood.",
        f"Set {SMOKE_ENV}=1 for the short smoke run, or unset it (or 0) for the full run.",
    )


def apply_smoke(namespace: MutableMapping[str, Any], caps: Mapping[str, Any], *, smoke: bool) -> dict[str, tuple]:
    """Lower each capped parameter in ``namespace`` to its cap when ``smoke``; return what changed.

    ``None`` as a parameter value means "all" (e.g. ``IMAGES = None``: every image), so it
    is lowered to the cap as well.
    """
    missing = [name for name in caps if name not in namespace]
    if missing:
        raise ParameterError(
            f"Smoke caps name parameters this notebook does not define: {', '.join(missing)}.",
            "Define them in the parameters cell, or remove them from the caps.",
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
        raise ParameterError(
            f"Parameter {name} = {value!r} must be a positive integer"
            + (" (or None for all)" if allow_none else "")
            + ".",
            f"Change {name} in the parameters cell (or pass -p {name} <integer> to papermill).",
        )


def check_choice(name: str, value: Any, choices: tuple) -> None:
    """Reject a parameter outside its allowed values."""
    if value not in choices:
        raise ParameterError(
            f"Parameter {name} = {value!r} is not one of {', '.join(map(repr, choices))}.",
            f"Set {name} to one of those values in the parameters cell.",
        )
