"""scripts/prose_stats.py: the counts the lesson budget rests on (scripts/course_lint.py holds the limits)."""

from __future__ import annotations

import json
import sys

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import prose_stats  # noqa: E402 - scripts/prose_stats.py: the counts


def test_the_counter_tells_tensorflow_from_the_course(tmp_path):
    """The counts the limits rest on: calls by their root name, variables inherit their source, bookkeeping cells."""
    def code(source, **meta):
        return {"cell_type": "code", "metadata": meta, "source": source, "outputs": [], "execution_count": None}

    nb = {"cells": [
        code('x = 1', tags=["parameters"]),
        code('import course_utils\ncourse = course_utils.setup(globals(), "99_x")\nimport tensorflow as tf\n'
             'from keras import layers'),
        code('model = tf.keras.Sequential([layers.Dense(2)])\nmodel.compile()\n'
             'from course_utils.device import why_no_gpu\nreason = why_no_gpu(tf)\nprint(len(reason))'),
        code('%%writefile p.py\nimport tensorflow as tf\ntf.config.list_physical_devices()'),
        code('# course bookkeeping: results\ncourse.record(a=1)\ncourse.checkpoint({"ok": True})'),
        code('course.record(b=2)'),
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "99_x.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    counts = prose_stats.code_stats(path)
    # TF: Sequential, Dense, compile (model inherits), list_physical_devices (the written program)
    assert counts["tf_calls"] == 4
    # helpers: setup, why_no_gpu, record x2, checkpoint
    assert counts["helper_calls"] == 5
    assert counts["code_lines"] == 4 + 5 + 3 + 2 + 1
    assert counts["bookkeeping_lines"] == 2 + 2  # import course_utils + setup; the bookkeeping cell
    assert counts["misplaced"] == ["cell 5: course.record"]


def test_words_are_counted_as_wc_counts_them_without_the_badge_cell_and_code_blocks(tmp_path):
    def markdown(source, **meta):
        return {"cell_type": "markdown", "metadata": meta, "source": source}

    nb = {"cells": [
        markdown("[![Open](https://badge)](https://colab)", tags=["links"]),
        markdown("# Title: one\n\nTwo  words,\tthen `code` and [a link](https://x.y).\n"),
        markdown("Before:\n```python\nanswer = 1  # not counted\n```\nafter."),
        {"cell_type": "code", "metadata": {}, "source": "print('not prose')", "outputs": [], "execution_count": None},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "99_x.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    # "#", "Title:", "one", "Two", "words,", "then", "`code`", "and", "[a", "link](https://x.y)." + "Before:", "after."
    assert prose_stats.wc_words(path) == 12
