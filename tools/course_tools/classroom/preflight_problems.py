"""The problems ``course preflight`` finds in its record: each a ``code``, a ``severity``, a ``message``, a ``fix``
(docs/class.md, "Preflight: check every machine before the class", explains every code)."""

from __future__ import annotations

from typing import Any

from course_tools.classroom.sizing import STEP_MIB

# Doctor findings that only say "no GPU here": ``no-gpu`` says that once, and --expect-cpu silences it.
NO_GPU_FINDINGS = {"no-nvidia-driver", "no-nvidia-gpu", "tensorflow-sees-no-gpu"}


def problem(code: str, severity: str, message: str, fix: str, source: str = "preflight") -> dict[str, str]:
    """One problem of the record: what the class report sorts and counts by ``code`` and ``severity``."""
    return {"code": code, "severity": severity, "message": message, "fix": fix, "source": source}


def find_problems(record: dict[str, Any]) -> list[dict[str, str]]:
    """The problems a record shows, errors first: preflight's own checks, then the doctor's errors and warnings."""
    found = _tensorflow_problems(record) + _compute_problems(record) + _place_problems(record)
    found += _data_problems(record) + _sizing_problems(record) + _doctor_problems(record)
    return sorted(found, key=lambda p: p["severity"] != "error")


def _tensorflow_problems(record: dict[str, Any]) -> list[dict[str, str]]:
    tf, expect_cpu = record["tensorflow"], record["expect_cpu"]
    if tf is None:
        return [problem(
            "tensorflow-missing", "error",
            f"TensorFlow cannot be imported in this Python ({record.get('tensorflow_error') or 'no error text'}).",
            "Activate the course's environment (or install the course: pip install -e .), then run "
            "`course preflight` again; `course doctor` says which TensorFlow this machine needs.")]
    out = []
    if tf["supported"] is False:
        out.append(problem(
            "tensorflow-unsupported", "error",
            f"TensorFlow {tf['version']} is outside the range the course supports ({tf['supported_range']}).",
            "Install the course's TensorFlow in the course's environment: pip install -e . (or "
            f'pip install "tensorflow{tf["supported_range"]}"); `course doctor` gives the command for this machine.'))
    if not tf["gpus"] and not expect_cpu:
        out.append(problem(
            "no-gpu", "error", "TensorFlow sees no GPU on this machine, so the lessons will run on the CPU (slowly).",
            "Run `course doctor` and follow its fix. If this machine has no GPU on purpose, run "
            "`course preflight --expect-cpu`."))
    return out


def _compute_problems(record: dict[str, Any]) -> list[dict[str, str]]:
    result = record["compute"]
    if not result or result.get("skipped"):
        return []
    if result.get("error"):
        return [problem("compute-failed", "error", f"The test matrix product failed: {result['error']}",
                        "Run `course doctor`; if the GPU is busy or out of memory, try again when other programs end.")]
    out = []
    cpu, gpu = result.get("cpu"), result.get("gpu")
    if gpu and not gpu["placed"]:
        out.append(problem("gpu-placement-failed", "error",
                           f"A matrix product placed on {gpu['device']} ran on {gpu['ran_on']} instead.",
                           "Run `course doctor`: TensorFlow lists a GPU but cannot run work on it."))
    if gpu and cpu and gpu["median_ms"] > cpu["median_ms"]:
        out.append(problem(
            "gpu-slower-than-cpu", "warning",
            f"The {result['size']} x {result['size']} product took {gpu['median_ms']:.3g} ms on the GPU and "
            f"{cpu['median_ms']:.3g} ms on the CPU: the GPU is slower.",
            "Check with `nvidia-smi` whether other programs use the GPU; a small laptop GPU can be slower "
            "than a fast CPU. Tell the instructor."))
    return out


def _place_problems(record: dict[str, Any]) -> list[dict[str, str]]:
    return [problem(
        "folder-not-writable", "error",
        place.get("problem") or f"The course cannot write its {place.get('name')} folder {place.get('path')}.",
        f"Set {place.get('variable')} to a folder you can write, then run `course preflight` again.")
        for place in record["folders"] if not place.get("writable")]


def _data_problems(record: dict[str, Any]) -> list[dict[str, str]]:
    data = record["data"]
    out = []
    if data.get("data_dir_problem"):
        out.append(problem("data-dir-missing", "warning",
                           f"COURSE_DATA_DIR is set but cannot be used: {data['data_dir_problem']}.",
                           "Set COURSE_DATA_DIR to the data folder the instructor gave, or unset it."))
    for entry in data["datasets"]:
        if entry["problem"] and entry["problem"] != "not available offline":
            out.append(problem(
                "data-file-bad", "warning", f"{entry['dataset']}: {entry['problem']}: {entry['location']}.",
                "Delete that file and run `course data fetch` while online (it is never used as it is)."))
    return out


def _sizing_problems(record: dict[str, Any]) -> list[dict[str, str]]:
    """``class-does-not-fit`` (an error) or ``class-not-sized`` (a warning), when ``--students`` was given."""
    sizing = record.get("sizing")
    if not sizing or sizing["fits"] is True:
        return []
    n, policy, limit = sizing["students"], sizing["gpu_memory"], sizing["recommended_gpu_memory"]
    fixes = [f"set COURSE_GPU_MEMORY={limit} (the largest multiple of {STEP_MIB} MiB with which {n} students fit)"
             ] if limit else []
    if sizing["fits"] is None:
        if not sizing["gpus"]:
            fix = ("Run `course preflight --students N` on the class's GPU server; `course doctor` says why "
                   "nvidia-smi lists no GPU here.")
            if sizing["hub_gpus"]:
                fix = "Give --hub-gpus (or COURSE_HUB_GPUS) the GPU numbers that nvidia-smi lists."
            fix += ' MIG slices are not sized here (docs/class.md, "Sharing the GPU").'
            return [problem("class-not-sized", "warning", f"The class cannot be sized: {sizing['not_sized']}.", fix)]
        return [problem("class-not-sized", "warning",
                        f"The class cannot be sized: {sizing['not_sized']}: each notebook takes what it needs, and "
                        "one notebook can take a whole GPU.", _sentence(fixes, n))]
    if sizing["fit_one_each"] is not None:  # every student sees every GPU: one GPU each is the first fix
        numbers = ",".join(str(row["index"]) for row in sizing["gpus"])
        fixes.insert(0, f"set COURSE_HUB_GPUS={numbers}: each student then gets one GPU, and "
                        f"{sizing['fit_one_each']} students fit")
    if sizing["fit"]:
        fixes.append(f"take at most {sizing['fit']} students on this server")
    if sizing["gpus_needed"]:
        fixes.append(f"use {sizing['gpus_needed']} GPUs like these (COURSE_HUB_GPUS)")
    each = ("nearly a whole GPU per notebook" if policy == "all"
            else f"{sizing['per_notebook_mib']} MiB per notebook with its CUDA context")
    return [problem("class-does-not-fit", "error",
                    f"{n} students do not fit: the GPUs here hold {sizing['fit']} with COURSE_GPU_MEMORY={policy} "
                    f"({each}).", _sentence(fixes, n))]


def _sentence(fixes: list[str], students: int) -> str:
    """The fixes as one sentence: "Set ..., or put ..., or use ..."; more GPUs when nothing else helps."""
    if not fixes:
        return (f"No limit of {STEP_MIB} MiB or more fits {students} students on the GPUs here: use more GPUs, or "
                "put fewer students on each.")
    text = ", or ".join(fixes) + "."
    return text[0].upper() + text[1:]


def _doctor_problems(record: dict[str, Any]) -> list[dict[str, str]]:
    out = []
    for finding in record["doctor"]["findings"]:
        if finding["severity"] == "info":
            continue
        if finding["severity"] == "warning" and finding["code"] in NO_GPU_FINDINGS:
            continue  # ``no-gpu`` says it, or --expect-cpu asked not to be told
        out.append(problem(finding["code"], finding["severity"], finding["message"], finding["fix"], "doctor"))
    return out
