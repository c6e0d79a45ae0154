"""The lesson budget (issue 24): short notebooks, TensorFlow in view, little bookkeeping.

``scripts/prose_stats.py`` counts; this file holds the limits, for every numbered notebook.
"""

from __future__ import annotations

import json
import sys

import pytest

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import prose_stats  # noqa: E402 - scripts/prose_stats.py: the counts

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
WORDS, MINUTES, BOOKKEEPING, COURSE_WORDS = 1400, 45, 0.15, 8000
# Notebook 01 is about installing: it runs pip, nvidia-smi and the doctor, not TensorFlow, so the calls rule
# (helpers <= TF/Keras) does not apply to it (issue 24).
CALLS_EXEMPT = {"01_install_versions"}


def test_the_course_has_its_seven_lessons():
    assert [p.stem[:2] for p in NOTEBOOKS] == ["01", "02", "03", "04", "05", "06", "07"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_notebook_keeps_the_budget(path):
    name = path.stem
    words, code = prose_stats.wc_words(path), prose_stats.code_stats(path)
    assert words <= WORDS, f"{name}: {words} words of markdown (as wc -w counts them); at most {WORDS}"
    minutes = prose_stats.minutes(path)
    assert minutes is not None and minutes <= MINUTES, f"{name}: the header must say 'About N minutes for a student'"
    calls = f"{code['helper_calls']} helper calls, {code['tf_calls']} TensorFlow/Keras calls"
    assert name in CALLS_EXEMPT or code["helper_calls"] <= code["tf_calls"], f"{name}: {calls}"
    assert code["bookkeeping"] <= BOOKKEEPING, f"{name}: {code['bookkeeping']:.0%} of the code is bookkeeping"
    assert not code["misplaced"], f"{name}: outside a '# course bookkeeping' cell: {code['misplaced']}"


def test_the_whole_course_is_at_most_8000_words():
    words = {p.stem: prose_stats.wc_words(p) for p in NOTEBOOKS}
    assert sum(words.values()) <= COURSE_WORDS, words


@pytest.mark.parametrize("path", NOTEBOOKS + sorted((ROOT / "notebooks" / "zh").glob("[0-9][0-9]_*.ipynb")),
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_notebook_imports_tensorflow_where_the_student_reads_it(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    code = ["".join(c["source"]) for c in cells
            if c["cell_type"] == "code" and "hosted-setup" not in c.get("metadata", {}).get("tags", [])]
    assert any("import tensorflow as tf" in source.splitlines() for source in code)
    assert not any("course.tf" in source for source in code), "TensorFlow comes from its own import, not setup()"


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
