"""Sizing a class on a shared GPU server: how many students' notebooks fit on each GPU (``course preflight
--students N``; docs/class.md, "Sizing the limit").

With ``COURSE_GPU_MEMORY`` set to a limit, a notebook takes up to that many MiB of each GPU it sees, plus a CUDA
context outside the limit, so a GPU of M MiB holds floor(M / (limit + context)) notebooks. With ``COURSE_HUB_GPUS``
each student gets one listed device (``classroom.hub``); without it every student sees every GPU, and TensorFlow takes
memory on every GPU it sees, so each GPU must hold the whole class.
"""

from __future__ import annotations

import argparse
import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from course_tools import _
from course_utils.core import variables

CONTEXT_MIB = 512  # docs/class.md, "Sizing the limit": 0.5 GiB per CUDA context, an approximate value
STEP_MIB = 256  # a recommended limit is rounded down to a multiple of this


def _whole(text: str, least: int) -> int | None:
    value = str(text).strip()
    return int(value) if value.isascii() and value.isdigit() and int(value) >= least else None


def students_count(text: str) -> int:
    """``--students``: a whole number, 1 or more (argparse's ``type``)."""
    if (value := _whole(text, 1)) is None:
        raise argparse.ArgumentTypeError(_("{value!r} is not a number of students: give a whole number, 1 or more, "
                                           "e.g. --students 30.").format(value=text))
    return value


def context_size(text: str) -> int:
    """``--context-mib``: the memory of one CUDA context in MiB, a whole number, 0 or more (argparse's ``type``)."""
    if (value := _whole(text, 0)) is None:
        raise argparse.ArgumentTypeError(_("{value!r} is not an amount of memory in MiB: give a whole number, e.g. "
                                           "--context-mib 512.").format(value=text))
    return value


def plan(students: int, policy: str | int, gpus: Sequence[dict[str, Any]], hub_gpus: Sequence[str] = (),
         context_mib: int = CONTEXT_MIB) -> dict[str, Any]:
    """The sizing of a class: ``students`` notebooks, ``policy`` from ``gpu_config.memory_policy``, ``gpus`` as
    the preflight record lists them (``index``, ``name``, ``memory_mib``), ``hub_gpus`` as in ``COURSE_HUB_GPUS``.

    ``fits`` is True or False, or None when the class cannot be sized (``not_sized`` says why).
    """
    found: dict[str, Any] = {
        "students": students, "gpu_memory": policy, "context_mib": context_mib, "hub_gpus": list(hub_gpus),
        "spread": "one each" if hub_gpus else "every GPU", "per_notebook_mib": None, "gpus": [], "fit": None,
        "fits": None, "recommended_gpu_memory": None, "gpus_needed": None, "fit_one_each": None, "not_sized": None,
    }
    known = {number if g.get("index") is None else g["index"]: g  # a capture without numbers: in its order
             for number, g in enumerate(gpus) if g.get("memory_mib")}
    if not known:
        found["not_sized"] = "nvidia-smi found no GPU with its memory on this machine"
        return found
    if hub_gpus:
        missing = [name for name in hub_gpus if not (name.isdigit() and int(name) in known)]
        if missing:
            found["not_sized"] = (f"{variables.HUB_GPUS}={','.join(hub_gpus)} names {', '.join(missing)}, which is "
                                  f"not a GPU number that nvidia-smi lists here ({', '.join(map(str, known))})")
            return found
        # nvidia-smi numbers GPUs in PCI bus order, CUDA_VISIBLE_DEVICES by default fastest first: the same GPUs when
        # they are all alike, which is what this assumes when it reads a number of COURSE_HUB_GPUS as nvidia-smi's
        counts = Counter(int(name) for name in hub_gpus)
        shares = {index: (count, len(hub_gpus)) for index, count in counts.items()}
    else:
        shares = {index: (1, 1) for index in known}  # each student's notebook is on every GPU
    if isinstance(policy, int):
        found["per_notebook_mib"] = policy + context_mib
    rows = []
    for index in sorted(shares):
        memory, (count, out_of) = known[index]["memory_mib"], shares[index]
        load = math.ceil(students * count / out_of)  # an even spread; the hub's hash is even on average only
        if policy == "growth":
            fit = None
        elif policy == "all":
            fit = 1 if memory > context_mib else 0  # one notebook takes nearly all of the GPU
        else:
            fit = memory // (policy + context_mib)
        rows.append({"index": index, "name": known[index]["name"], "memory_mib": memory, "students": load,
                     "fit": fit, "largest_limit": memory // load - context_mib})
        if fit is not None:
            # the most students whose share on this GPU still fits: ceil(N * count / out_of) <= fit
            rows[-1]["class_fit"] = fit * out_of // count
    found["gpus"] = rows
    largest = min(row["largest_limit"] for row in rows) // STEP_MIB * STEP_MIB
    found["recommended_gpu_memory"] = largest if largest >= STEP_MIB else None
    if policy == "growth":
        found["not_sized"] = f"{variables.GPU_MEMORY}=growth sets no limit"
        return found
    found["fit"] = min(row["class_fit"] for row in rows)
    found["fits"] = all(row["students"] <= row["fit"] for row in rows)
    smallest = min(row["fit"] for row in rows)
    if smallest and (hub_gpus or len(rows) == 1):
        found["gpus_needed"] = math.ceil(students / smallest)
    if not hub_gpus and len(rows) > 1:  # what giving each student one GPU would change
        one_each = plan(students, policy, gpus, [str(row["index"]) for row in rows], context_mib)
        found["fit_one_each"] = one_each["fit"]
    return found


def summary_lines(sizing: dict[str, Any]) -> list[str]:
    """The summary's lines about the sizing (English, like the rest of the preflight summary)."""
    n, policy, context = sizing["students"], sizing["gpu_memory"], sizing["context_mib"]
    setting = f"{variables.GPU_MEMORY}={policy}"
    lines = [f"Class sizing: {n} students, one running notebook each"]
    if policy == "growth":
        lines.append(f"  Each notebook: no limit ({setting}): it takes what it needs.")
    elif policy == "all":
        lines.append(f"  Each notebook: nearly all of each GPU it sees ({setting}).")
    else:
        lines.append(f"  Each notebook: {policy} MiB ({setting}) + {context} MiB (its CUDA context, "
                     f"approximate) = {sizing['per_notebook_mib']} MiB.")
    if not sizing["gpus"]:
        return [*lines, f"  Not sized: {sizing['not_sized']}."]
    if sizing["hub_gpus"]:
        if len(sizing["gpus"]) > 1:
            lines.append(f"  Each student gets one GPU of {variables.HUB_GPUS}={','.join(sizing['hub_gpus'])}, "
                         "chosen from a hash of the name: even on average, not exactly.")
    elif len(sizing["gpus"]) > 1:
        lines.append(f"  Every student sees every GPU ({variables.HUB_GPUS} is not set), and TensorFlow takes "
                     "memory on every GPU it sees: each GPU must hold the whole class.")
    for row in sizing["gpus"]:
        fit = "" if row["fit"] is None else (f"{row['fit']} notebook fits, " if row["fit"] == 1
                                             else f"{row['fit']} notebooks fit, ")
        on_it = "1 student on it" if row["students"] == 1 else f"{row['students']} students on it"
        lines.append(f"  GPU {row['index']}: {row['name']}, {row['memory_mib']} MiB: {fit}{on_it}.")
    if sizing["fits"] is None:
        return [*lines, f"  Not sized: {sizing['not_sized']}."]
    verdict = "The class fits." if sizing["fits"] else "The class does NOT fit."
    return [*lines, f"  In all: {sizing['fit']} students fit, {n} wanted. {verdict}"]
