"""Write a JSON file so that a reader never sees half of it."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_json_atomic(
    path: str | os.PathLike[str], data: Any, *, indent: int | None = 2, sort_keys: bool = False
) -> Path:
    """Write ``data`` as JSON to ``path`` atomically; return the path.

    The text goes to a temporary file in the same folder, which then replaces ``path``
    (``os.replace`` is atomic on one file system): a reader - another process polling the
    file, or the next run after a crash - sees the old file or the new one, never a part.
    If ``data`` cannot be written (not JSON-able, a full disk), ``path`` is left as it was
    and the temporary file is removed. The parent folder is created if needed.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=indent, sort_keys=sort_keys)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
