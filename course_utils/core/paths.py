"""Where the course is. Where it writes is ``core.places`` (``COURSE_HOME``)."""

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]  # the checkout that holds course_utils/ and notebooks/
