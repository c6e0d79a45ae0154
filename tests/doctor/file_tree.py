"""The live checks' tests build a machine as a file tree: ``touch`` makes a file, ``codes`` reads the notes."""

from __future__ import annotations

from pathlib import Path

from course_utils.doctor.texts import Note


def codes(notes: list[Note]) -> list[str]:
    return [n.code for n in notes]


def touch(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path
