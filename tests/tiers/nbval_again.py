"""Run All twice in one kernel, under nbval: what a student does after changing a parameter ("run it again").

``make nbval`` loads this plugin (``pytest --nbval -p tests.tiers.nbval_again notebooks/``). nbval makes one
test per code cell and runs a notebook's cells in one kernel. After them, this plugin adds a check of the
notebook's checkpoint, then every cell again, then the check again. So the second run meets what the first
left in the kernel - TensorFlow started, a policy set, files written, a warning already shown - and must
pass as the first did.

The check reads ``$COURSE_RESULTS_DIR/<notebook>.json``, the record the notebook writes, and removes it, so
the second run writes its own. With ``COURSE_NBVAL_KEEP=DIR`` the first run is kept as ``course run`` keeps a
run: its record in ``DIR/results/<notebook>.json`` and the notebook with the outputs nbval received in
``DIR/executed/<notebook>.ipynb`` (the browser tier and the website show these; no notebook runs a third time).
It relies on nbval 0.11's items (``IPyNbFile``, ``IPyNbCell.from_parent``, ``test_outputs``); pyproject.toml
pins nbval to 0.11.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import nbformat
import pytest
from nbval.plugin import IPyNbCell, IPyNbFile


class CheckpointPassed(pytest.Item):
    """The notebook's record says its checkpoint passed; the record is removed (or kept) for the next run."""

    def __init__(self, *, cells: list[IPyNbCell] | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.cells = cells  # the first run's cells: kept with COURSE_NBVAL_KEEP

    def runtest(self) -> None:
        folder = os.environ.get("COURSE_RESULTS_DIR")
        if not folder:
            raise pytest.UsageError("tests.tiers.nbval_again needs COURSE_RESULTS_DIR: the folder the records go to")
        record = Path(folder) / f"{self.path.stem}.json"
        keep = os.environ.get("COURSE_NBVAL_KEEP") if self.cells is not None else None  # the first run only
        if keep:
            self.keep(Path(keep))
        assert record.is_file(), f"{self.path.name} wrote no record ({record}): a cell before the checkpoint failed"
        written = json.loads(record.read_text(encoding="utf-8"))
        if keep:
            (Path(keep) / "results").mkdir(parents=True, exist_ok=True)
            record.replace(Path(keep) / "results" / record.name)
        else:
            record.unlink()
        results = written["results"]
        assert results.get("checkpoint_passed") is True, f"{self.name}: the checkpoint did not pass: {results}"
        wanted = os.environ.get("TF_ENABLE_ONEDNN_OPTS")  # make nbval sets it: the kind of CPU this run stands for
        if wanted in ("0", "1"):
            ran = written["environment"].get("onednn")
            assert ran is (wanted == "1"), f"{self.name}: TF_ENABLE_ONEDNN_OPTS={wanted}, but oneDNN on is {ran}"

    def keep(self, folder: Path) -> None:
        """Write the notebook as the first run left it: each cell's outputs, numbered in the order they ran."""
        nb = copy.deepcopy(self.parent.nb)
        count = 0
        by_number = {cell.cell_num: cell for cell in self.cells}
        code = [c for c in nb.cells if c.cell_type == "code"]
        for number, cell in enumerate(code):
            item = by_number.get(number)
            outputs = getattr(item, "test_outputs", None)
            if outputs is None:  # skipped, or not reached
                cell.execution_count, cell.outputs = None, []
                continue
            count += 1
            cell.execution_count, cell.outputs = count, copy.deepcopy(outputs)
        (folder / "executed").mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, folder / "executed" / self.path.name)

    def reportinfo(self) -> tuple[Path, None, str]:
        return self.path, None, self.name


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each notebook's cells, its checkpoint, its cells again and its checkpoint again, in that order."""
    cells: dict[IPyNbFile, list[IPyNbCell]] = {}
    for item in items:
        if isinstance(item, IPyNbCell):
            cells.setdefault(item.parent, []).append(item)
    again: list[pytest.Item] = []
    for item in items:
        if not isinstance(item, IPyNbCell):
            again.append(item)
            continue
        notebook = item.parent
        if notebook not in cells:
            continue  # its items are in already
        first = cells.pop(notebook)
        second = [IPyNbCell.from_parent(notebook, name=f"{cell.name} again", cell_num=cell.cell_num, cell=cell.cell,
                                        options=cell.options) for cell in first]
        again += [*first, CheckpointPassed.from_parent(notebook, name="checkpoint, first run", cells=first),
                  *second, CheckpointPassed.from_parent(notebook, name="checkpoint, second run")]
    items[:] = again
