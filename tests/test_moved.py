"""Old import paths still work (with a DeprecationWarning naming the new one) and give the same objects."""

from __future__ import annotations

import importlib
import sys

import pytest

from course_utils._moved import MOVED


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_module_path_imports_the_new_module_with_a_warning(old):
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=MOVED[old].replace(".", r"\.")):
        module = importlib.import_module(old)
    new = importlib.import_module(MOVED[old])
    public = [name for name in vars(new) if not name.startswith("_")]
    assert public and all(getattr(module, name) is getattr(new, name) for name in public)


def test_old_bench_names_of_notebook_05_lead_to_speed_and_timing():
    from course_utils import bench, speed, timing

    with pytest.warns(DeprecationWarning, match="course_utils.timing.epoch_timer"):
        assert bench.epoch_timer is timing.epoch_timer
    with pytest.warns(DeprecationWarning, match="course_utils.speed.run_ladder"):
        assert bench.run_ladder is speed.run_ladder
    with pytest.raises(AttributeError):
        bench.no_such_name  # noqa: B018


def test_new_names_import_without_warnings(recwarn):
    for new in MOVED.values():
        importlib.import_module(new)
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning) and "moved" in str(w.message)]
