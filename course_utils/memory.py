"""The most GPU memory TensorFlow's allocator held in a run: what a notebook's record keeps (``notebook.setup``).

``tf.config.experimental.get_memory_info(name)["peak"]`` counts the bytes in use on a (logical) GPU -
not the memory TensorFlow reserved on the card, which ``nvidia-smi`` shows. Notebook 03 reads the same
counters in view; the record only needs their peak at the end of a run.
"""

from __future__ import annotations

from course_utils.core.gpu_config import runtime_initialized
from course_utils.core.tf_setup import quiet_tensorflow

MIB = 2**20


def peak_gpu_mib() -> float | None:
    """The first GPU's peak in MiB, or None: no GPU, or TensorFlow's runtime not started yet.

    Asking would start the runtime, and fix the device configuration a notebook may still be about to
    make (notebooks 03 and 07 make theirs after setup), so the record of a run asks only once it has started.
    """

    if not runtime_initialized():
        return None

    tf = quiet_tensorflow()
    if not tf.config.get_visible_devices("GPU"):
        return None
    try:
        return round(tf.config.experimental.get_memory_info("GPU:0")["peak"] / MIB, 1)
    except (ValueError, RuntimeError):  # no such logical GPU
        return None
