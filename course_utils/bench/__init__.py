"""``course bench``: the course's benchmarks from the command line (JSON with ``--json``).

- ``cnn``: the blog post's CNN, its own way and the speed ladder (``course_utils.speed``).
- ``dense-memory``: notebook 04's training, peak memory and time, two ways, each in a fresh
  process (``course_utils.bench.dense_memory``).

The command line is in ``course_utils.bench.cli``.
"""

# Before the split, notebook 05 imported the speed ladder and the epoch timer from here.
_LESSON_NAMES = {"epoch_timer": "timing", "steady_state": "timing"}


def __getattr__(name: str):
    import importlib
    import warnings

    from course_utils import speed

    home = _LESSON_NAMES.get(name) or ("speed" if hasattr(speed, name) else None)
    if home is None:
        raise AttributeError(f"module 'course_utils.bench' has no attribute {name!r}")
    message = f"course_utils.bench.{name} has moved to course_utils.{home}.{name}"
    warnings.warn(message, DeprecationWarning, stacklevel=2)
    return getattr(importlib.import_module(f"course_utils.{home}"), name)
