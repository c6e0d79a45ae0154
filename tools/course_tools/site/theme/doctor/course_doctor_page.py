"""The website's "Check your machine" page, run by Pyodide in the browser: ``course doctor`` on what was pasted
(docs/maintainers.md, 'The page "Check your machine"'). ``answer`` writes each pasted text to a file and runs the
course's own command line on them, so the page answers exactly what ``course doctor`` answers; no rule lives here.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from course_utils.core import variables
from course_utils.doctor import cli as doctor_cli
from course_utils.doctor.logs import decode_text

# The file names the page shows in its "same as" command line, as a student would save the outputs.
NAMES = {"nvidia_smi": "nvidia-smi.txt", "nvcc": "nvcc.txt", "log": "tensorflow-log.txt"}


def decode(data: Any) -> str:
    """A chosen file's text, read as the command line reads a file (UTF-8, or UTF-16 from PowerShell's ``>``).

    ``data``: the file's bytes - a JavaScript Uint8Array in the page (Pyodide hands it over as a proxy with
    ``to_bytes``), or ``bytes``."""
    return decode_text(data.to_bytes() if hasattr(data, "to_bytes") else bytes(data))


def machine_arguments(request: dict[str, Any], files: dict[str, str]) -> list[str]:
    """``course doctor``'s arguments for the machine: always ``--nvidia-smi`` (an empty paste is read as such, so the
    doctor never looks at the browser's own machine), ``--nvcc`` when given, the platform and Python when chosen."""
    arguments = ["--nvidia-smi", files["nvidia_smi"], *(["--nvcc", files["nvcc"]] if "nvcc" in files else [])]
    for option in ("platform", "python"):
        arguments += [f"--{option}", request[option]] if request.get(option) else []
    return arguments


def run(arguments: list[str]) -> dict[str, Any]:
    """``course doctor ARGUMENTS``: its exit status, standard output and standard error."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = doctor_cli.main(arguments)
        except SystemExit as stop:  # argparse's usage errors: status 2 and a message on standard error
            status = stop.code if isinstance(stop.code, int) else 2
    return {"exit": status, "stdout": out.getvalue(), "stderr": err.getvalue()}


def answer(request_json: str) -> str:
    """The page's answer, as JSON: the command line it ran, and that command's JSON and report for the machine and,
    when a log was pasted, for the log."""
    request = json.loads(request_json)
    os.environ[variables.LANG] = request.get("language") or "en"
    texts = {key: request.get(key) or "" for key in NAMES}
    with tempfile.TemporaryDirectory() as folder:
        files = {}
        for key, text in texts.items():
            if key == "nvidia_smi" or text.strip():
                files[key] = str(Path(folder) / NAMES[key])
                Path(files[key]).write_text(text, encoding="utf-8", newline="")
        machine = machine_arguments(request, files)
        shown = machine_arguments(request, {key: NAMES[key] for key in files})
        result: dict[str, Any] = {
            "command": " ".join(["course doctor", *shown]),
            "machine": run([*machine, "--json"]),
            "report": run(machine),
        }
        if "log" in files:
            # With the nvidia-smi text, the doctor knows whether the machine has a GPU (lines that depend on it).
            smi = ["nvidia_smi"] if texts["nvidia_smi"].strip() else []
            log = ["--log", files["log"], *(a for key in smi for a in ("--nvidia-smi", files[key]))]
            result["log_command"] = " ".join(["course doctor", "--log", NAMES["log"],
                                              *(a for key in smi for a in ("--nvidia-smi", NAMES[key]))])
            result["log"] = run([*log, "--json"])
            result["log_report"] = run(log)
    return json.dumps(result)
