"""``course bench``: the course's benchmark from the command line (JSON with ``--json``).

``dense-memory``: notebook 04's training, peak memory and time, two ways, each in a fresh process
(``course_utils.tools.bench.dense_memory``); the command line is in ``course_utils.tools.bench.cli``.
Speed is measured by notebook 05 itself (its speed ladder), which ``course run`` runs headless.
"""

from __future__ import annotations

from course_utils import data


def load_dataset(name: str, *, images: int | None = None, full_size: bool = False):
    """(train, test, LoadInfo) through the course's one dataset switch; ``--images`` beyond the data is an error."""
    (train, test), info = data.load(name, images=images, strict=True, full_size=full_size, quiet=True, with_info=True)
    return train, test, info
