"""Import TensorFlow quietly - the first thing every notebook does.

TensorFlow's C++ start-up messages go to the process's stderr, which Jupyter shows and stores; in TF 2.21 most are
written before absl logging starts, so ``TF_CPP_MIN_LOG_LEVEL`` cannot silence them all. ``quiet_tensorflow``
sets it *and* captures file descriptor 2 while TensorFlow is imported and lists its devices; ``startup_log()``
returns what was captured (the doctor and notebook 02 read it).
"""

from __future__ import annotations

import os
import sys
import tempfile
from types import ModuleType

from course_utils.core import variables

_STARTUP_LOG: str | None = None


def quiet_tensorflow() -> ModuleType:
    """Import and return ``tensorflow`` with its start-up logs captured, not printed (an explicit
    ``TF_CPP_MIN_LOG_LEVEL`` wins; ``COURSE_TF_LOGS=1`` captures nothing).
    """
    global _STARTUP_LOG
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if "tensorflow" in sys.modules or variables.flag(variables.TF_LOGS):
        import tensorflow as tf
    else:
        sys.stderr.flush()
        saved = os.dup(2)
        with tempfile.TemporaryFile() as tmp:
            os.dup2(tmp.fileno(), 2)  # OS-level stderr, where the C++ logs go, into the file meanwhile
            try:
                import tensorflow as tf

                tf.config.list_physical_devices()  # CUDA probing logs here; does not initialise the runtime
            finally:
                os.dup2(saved, 2)
                os.close(saved)
            tmp.seek(0)
            _STARTUP_LOG = tmp.read().decode("utf-8", errors="replace")
    import absl.logging

    tf.get_logger().setLevel("ERROR")
    absl.logging.set_verbosity(absl.logging.ERROR)
    return tf


def startup_log() -> str:
    """What TensorFlow wrote to stderr while ``quiet_tensorflow`` imported it ("" if nothing)."""
    return _STARTUP_LOG or ""


ONEDNN_ON_LINE = "oneDNN custom operations are on"


def onednn_on() -> bool | None:
    """Whether this TensorFlow runs oneDNN's CPU kernels (None: not imported, or cannot tell).

    They decide speed, memory statistics and the last digits of results (docs/troubleshooting.md#cpu-memory-stats),
    so a record keeps it. TensorFlow's ``IsMklEnabled`` answers; its log line does not: TF 2.20 drops it under
    ``TF_CPP_MIN_LOG_LEVEL=2``.
    """
    if "tensorflow" not in sys.modules:
        return None
    try:
        from tensorflow.python.util import _pywrap_util_port  # lazy: TensorFlow, imported already
    except ImportError:  # another TensorFlow build: the start-up line, if it was captured
        return ONEDNN_ON_LINE in _STARTUP_LOG if _STARTUP_LOG is not None else None
    return bool(_pywrap_util_port.IsMklEnabled())
