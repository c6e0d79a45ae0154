"""Old import paths that keep working after the package took its present shape.

Until the layout of subpackages, every module sat side by side (``course_utils.nvidia``,
``course_utils.runner``, ...). A student's saved notebook or an instructor's script may still
import them: a finder maps each old name to its new home, with a ``DeprecationWarning`` that
names the new path. Nothing in the course itself uses these names.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
import warnings

MOVED = {
    "course_utils.idx": "course_utils.data.idx",
    "course_utils.download": "course_utils.data.download",
    "course_utils.nvidia": "course_utils.doctor.nvidia",
    "course_utils.versions": "course_utils.doctor.versions",
    "course_utils.recommend": "course_utils.doctor.recommend",
    "course_utils.runner": "course_utils.batch.runner",
    "course_utils.grid": "course_utils.batch.grid",
    "course_utils.report": "course_utils.batch.report",
    "course_utils.progress": "course_utils.batch.progress",
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old module name as a read-only view of the module at its new path."""

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return types.ModuleType(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        new = MOVED[module.__name__]
        warnings.warn(f"{module.__name__} has moved to {new}; import it from there.", DeprecationWarning, stacklevel=2)
        target = importlib.import_module(new)
        module.__dict__.update({k: v for k, v in vars(target).items() if not k.startswith("__")})
        module.__doc__ = target.__doc__


def install() -> None:
    """Put the finder on ``sys.meta_path`` once."""
    if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
        sys.meta_path.append(_MovedModules())
