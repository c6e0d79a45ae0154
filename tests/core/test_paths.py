"""core.paths: the one home of the checkout's folder, which child processes import the package from."""

from __future__ import annotations

from pathlib import Path

import course_utils
from course_utils.core import child, paths


def test_the_project_root_holds_the_package_the_notebooks_and_pyproject():
    root = paths.PROJECT_ROOT
    assert root.is_absolute() and (root / "pyproject.toml").is_file() and (root / "notebooks").is_dir()
    assert (root / "course_utils" / "__init__.py").resolve() == Path(course_utils.__file__).resolve()
    assert child.PROJECT_ROOT is paths.PROJECT_ROOT, "one home: a child's PYTHONPATH starts from the same folder"
