"""Do the Jupyter kernels run an environment that has TensorFlow?

A notebook fails with "No module named tensorflow" when its kernel runs another Python than the one
TensorFlow was installed into: a kernelspec that names another environment's Python, a stale one whose
Python is gone, or a bare ``python`` started by a ``jupyter`` from elsewhere on PATH.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from course_utils.core.i18n import translator
from course_utils.doctor.texts import Note
from course_utils.doctor.versions import read_data

_ = translator("doctor")

_TENSORFLOW_FOLDERS = read_data("words")["tensorflow_folders"]["names"]  # globs, relative to an environment's prefix


def env_prefix(python: Path) -> Path:
    """The environment a Python executable belongs to: ``ENV/bin/python`` and ``ENV\\Scripts\\python.exe`` ->
    ``ENV``; ``ENV\\python.exe`` (conda on Windows) -> ``ENV``."""
    parent = Path(python).parent
    return parent.parent if parent.name.lower() in ("bin", "scripts") else parent


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))


def has_tensorflow(prefix: Path, home: Path | None = None) -> bool | None:
    """Whether an environment has TensorFlow installed (its site-packages, or the user's for that Python);
    None when it cannot be told (a venv that also sees the system's packages)."""
    prefix = Path(prefix)
    if any(any(prefix.glob(p)) for p in _TENSORFLOW_FOLDERS):
        return True
    if home is not None:
        for version_dir in prefix.glob("lib/python3*"):
            if (Path(home) / ".local/lib" / version_dir.name / "site-packages/tensorflow").is_dir():
                return True
    cfg = prefix / "pyvenv.cfg"
    text = cfg.read_text(encoding="utf-8", errors="replace") if cfg.is_file() else ""
    if re.search(r"include-system-site-packages\s*=\s*true", text, re.I):
        return None
    return False


def kernel_specs(kernel_dirs: Sequence[Path] | None = None) -> list[dict[str, Any]]:
    """Jupyter's kernelspecs (``jupyter_client``): ``[{"display_name", "language", "argv", "dir"}]``."""
    from jupyter_client.kernelspec import KernelSpecManager

    kwargs: dict[str, Any] = {"ensure_native_kernel": False}  # the in-process one is this Python by definition
    if kernel_dirs is not None:
        kwargs["kernel_dirs"] = [str(d) for d in kernel_dirs]
    specs = KernelSpecManager(**kwargs).get_all_specs()
    return [
        {
            "display_name": entry["spec"].get("display_name", name),
            "language": entry["spec"].get("language", ""),
            "argv": list(entry["spec"].get("argv") or []),
            "dir": entry["resource_dir"],
        }
        for name, entry in sorted(specs.items())
    ]


def script_python(script: Path) -> Path | None:
    """The Python a console script (``jupyter``) runs with, from its ``#!`` line."""
    try:
        with open(script, "rb") as fh:
            first = fh.readline(512).decode("utf-8", errors="replace").strip()
    except OSError:
        return None
    if not first.startswith("#!"):
        return None
    parts = first[2:].split()
    if not parts:
        return None
    if Path(parts[0]).name == "env" and len(parts) > 1:
        found = shutil.which(parts[1])
        return Path(found) if found else None
    return Path(parts[0])


_BARE_PYTHON = re.compile(r"^python(?:3(?:\.\d+)?)?(?:\.exe)?$")


def _kernel_note(spec: dict[str, Any], server_python: Path | None, here: Path, home: Path) -> Note | None:
    """What one Python kernelspec runs: this environment, a Python that is gone, or another environment without
    TensorFlow; None when there is nothing to say (or a bare ``python`` whose Jupyter cannot be told)."""
    first = spec["argv"][0]
    kernel = {"kernel": spec["display_name"], "dir": spec["dir"]}
    if _BARE_PYTHON.match(first):
        if server_python is None:
            return None  # Jupyter runs it with its own Python, which cannot be told from here
        python = server_python
        runs = _("The kernel '{kernel}' ({dir}) runs '{command}', i.e. the Python of the `jupyter` on PATH ({python})")
        runs = runs.format(**kernel, command=first, python=python)
    else:
        python = Path(first)
        runs = _("The kernel '{kernel}' ({dir}) runs {python}").format(**kernel, python=python)
        if not python.exists():
            text = _("The kernel '{kernel}' ({dir}) runs {python}, which does not exist")
            return Note("kernel-python-missing", text.format(**kernel, python=python))
    prefix_of = env_prefix(python)
    if _same_dir(prefix_of, here):
        return Note("kernel-uses-this-environment", _("{runs}: this environment").format(runs=runs))
    if has_tensorflow(prefix_of, home) is False:
        text = _("{runs}, in {prefix} - another environment, without TensorFlow: `import tensorflow` fails there")
        return Note("kernel-without-tensorflow", text.format(runs=runs, prefix=prefix_of))
    return None


def kernel_checks(
    kernel_dirs: Sequence[Path] | None = None,
    *,
    executable: str | None = None,
    prefix: str | None = None,
    path_env: str | None = None,
    home: Path | None = None,
    tensorflow_here: bool | None = None,
) -> list[Note]:
    """Do the Jupyter kernels run an environment that has TensorFlow?

    ``kernel_dirs``: where kernelspecs are (default: Jupyter's search path); ``executable``/``prefix``:
    the Python that runs the doctor (default: this one); ``path_env``: PATH, to find the ``jupyter``
    that starts kernels named only ``python``; ``home``: for user site-packages; ``tensorflow_here``:
    whether this environment has TensorFlow (default: import lookup).
    """
    if importlib.util.find_spec("jupyter_client") is None:
        return []
    executable = executable or sys.executable
    here = Path(prefix or sys.prefix)
    home = Path.home() if home is None else home
    if tensorflow_here is None:
        tensorflow_here = importlib.util.find_spec("tensorflow") is not None
    path_env = os.environ.get("PATH", "") if path_env is None else path_env
    beside = Path(executable).parent / "jupyter"
    jupyter = shutil.which("jupyter", path=path_env) or (str(beside) if beside.is_file() else None)
    server_python = script_python(Path(jupyter)) if jupyter else None
    notes: list[Note] = []
    if server_python is not None and not _same_dir(env_prefix(server_python), here):
        if has_tensorflow(env_prefix(server_python), home) is False:
            text = _("`jupyter` on PATH ({jupyter}) runs from {prefix}, another environment without TensorFlow: a "
                     "kernel named just 'python3' started by it runs there, not here")
            notes.append(Note("jupyter-runs-elsewhere", text.format(jupyter=jupyter, prefix=env_prefix(server_python))))
    pythons = [spec for spec in kernel_specs(kernel_dirs) if spec["language"].lower() == "python" and spec["argv"]]
    notes += [note for spec in pythons if (note := _kernel_note(spec, server_python, here, home)) is not None]
    uses_here = any(note.code == "kernel-uses-this-environment" for note in notes)
    if tensorflow_here and not uses_here:
        text = _("No Jupyter kernel runs this environment ({prefix}), where TensorFlow is installed")
        notes.append(Note("no-kernel-for-this-environment", text.format(prefix=here)))
    return notes
