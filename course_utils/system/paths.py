"""Where the course is, and where its tools write by default."""

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]  # the checkout that holds course_utils/ and notebooks/


def build_dir() -> Path:
    """The default output folder: ``build/`` in the project checkout, else ``build/`` in the current folder.

    An installed package (not a checkout) has no project folder to write into, hence the fallback.
    """
    root = PROJECT_ROOT if (PROJECT_ROOT / "pyproject.toml").is_file() else Path.cwd()
    return root / "build"
