"""Notebook 05's training controls: set the values, click Train, read the runs, the plot and the table."""

from __future__ import annotations

import numpy as np
import pytest

from course_utils.data import load_mnist
from course_utils.errors import CourseError
from course_utils.training_controls import BATCH_SIZES, TrainingControls, TrainingRun, render_png, runs_table

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def tiny():
    """256 training and 128 test digits from the bundled sample: a few seconds of training on a CPU."""
    (x_train, y_train), (x_test, y_test) = load_mnist(quiet=True)
    return (x_train[:256], y_train[:256]), (x_test[:128], y_test[:128])


def controls_for(tiny, **kwargs) -> TrainingControls:
    train, test = tiny
    kwargs.setdefault("devices", ["/CPU:0"])
    kwargs.setdefault("min_interval_s", 0.0)
    return TrainingControls(train, test, **kwargs)


def test_the_widgets_start_at_the_given_values_and_nothing_is_trained(tiny):
    controls = controls_for(tiny, batch_size=64, epochs=2)
    assert (controls.device.value, controls.batch_size.value, controls.epochs.value) == ("/CPU:0", 64, 2)
    assert tuple(controls.batch_size.options) == BATCH_SIZES
    assert controls.runs == [] and controls.plot.value == b"" and controls.table.value == ""
    assert "256 training images" in controls.status.value
    with pytest.raises(CourseError, match="Nothing has been trained"):
        controls.final_figure()


def test_a_batch_size_outside_the_list_is_added_in_order(tiny):
    controls = controls_for(tiny, batch_size=100)
    assert tuple(controls.batch_size.options) == (32, 64, 100, 128, 256, 512)


def test_an_unknown_device_is_rejected_by_the_dropdown(tiny):
    controls = controls_for(tiny)
    with pytest.raises(Exception):  # noqa: B017 - traitlets raises its own TraitError
        controls.device.value = "/GPU:7"


def test_images_caps_the_training_data(tiny):
    assert len(controls_for(tiny, images=100).train_data[0]) == 100


def test_click_trains_with_the_chosen_values_and_the_plot_follows_live(tiny):
    controls = controls_for(tiny)
    controls.batch_size.value, controls.epochs.value = 64, 2
    seen = []  # (button disabled?, epochs finished so far) each time the live plot changes
    controls.plot.observe(lambda change: seen.append((controls.button.disabled, change["new"][:8])), names="value")

    run = controls.click()

    assert run is controls.runs[-1] and run.number == 1
    assert (run.device, run.batch_size, run.epochs, run.images) == ("/CPU:0", 64, 2, 256)
    assert len(run.loss) == len(run.accuracy) == len(run.epoch_s) == 2
    assert 0 <= run.test_accuracy <= 1 and run.test_loss > 0
    assert run.weights_device.endswith("CPU:0")
    assert run.curve[-1][0] == 2.0 and all(0 < x <= 2 for x, _, _ in run.curve)
    # redrawn during training (every batch with min_interval_s=0, and each epoch), with the inputs locked
    drawn = [png for _, png in seen if png]
    assert len(drawn) >= 2 * 4 and all(png == PNG for png in drawn)
    assert all(disabled for disabled, png in seen[:-1]), "the Train button is disabled while training"
    assert not controls.button.disabled and not controls.epochs.disabled, "and enabled again afterwards"
    assert controls.progress.value == controls.progress.max == 2 * 4  # 256 images / batch 64 = 4 steps per epoch
    assert f"{run.test_accuracy:.4f}" in controls.status.value and controls.last_error is None
    assert bytes(controls.plot.value).startswith(PNG)


def test_runs_accumulate_in_the_table_and_earlier_runs_are_drawn_behind(tiny):
    controls = controls_for(tiny, epochs=1)
    controls.batch_size.value = 128
    first = controls.click()
    controls.batch_size.value, controls.epochs.value = 64, 2
    second = controls.click()
    assert [r.batch_size for r in controls.runs] == [128, 64] and second.number == 2
    table = controls.table.value
    assert table.count("<tr>") == 3 and "1 epoch: all warm-up" in table and f"{second.images_per_s:,.0f}" in table
    fig = controls.final_figure()
    loss_ax, acc_ax = fig.axes[:2]
    labels = [line.get_label() for line in loss_ax.lines]
    assert first.label in labels and second.label in labels
    current = next(line for line in loss_ax.lines if line.get_label() == second.label)
    assert list(current.get_ydata()) == second.loss
    assert any(line.get_label().startswith("test ") for line in acc_ax.lines)
    # the first run's own figure does not show the second
    assert second.label not in [line.get_label() for line in controls.final_figure(first).axes[0].lines]


def test_the_same_settings_give_the_same_run(tiny):
    controls = controls_for(tiny, epochs=1, batch_size=64)
    a, b = controls.click(), controls.click()
    np.testing.assert_allclose(a.loss, b.loss, rtol=1e-4)
    assert a.test_accuracy == pytest.approx(b.test_accuracy, abs=1e-6)


def test_a_failing_run_is_shown_not_raised_and_the_controls_come_back(tiny, monkeypatch):
    controls = controls_for(tiny, epochs=1)

    def broken(**kwargs):
        raise ValueError("no model today")

    monkeypatch.setattr("course_utils.models.build_blog_cnn", broken)
    assert controls.click() is None
    assert "Could not train" in controls.status.value and "no model today" in controls.status.value
    assert isinstance(controls.last_error, ValueError) and controls.runs == []
    assert not controls.button.disabled
    with pytest.raises(ValueError, match="no model today"):
        controls.train()  # called from code (the notebook's default run), the error is raised


def test_a_press_during_training_is_ignored(tiny):
    controls = controls_for(tiny, epochs=1, batch_size=128)
    controls.plot.observe(lambda change: controls.button.click(), names="value")  # press again mid-run
    controls.click()
    assert len(controls.runs) == 1
    with pytest.raises(CourseError, match="already going"):
        controls._busy = True
        controls.train()


def test_show_final_displays_a_static_png(tiny, monkeypatch):
    controls = controls_for(tiny, epochs=1)
    controls.click()
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    controls.show_final()
    assert len(shown) == 1 and shown[0].data.startswith(PNG) and shown[0].format == "png"


def test_the_text_form_names_the_settings_and_the_widget_view_is_kept(tiny):
    bundle = controls_for(tiny, batch_size=256, epochs=4)._repr_mimebundle_()
    assert bundle["text/plain"].startswith("Training controls (device /CPU:0, batch 256, 4 epochs)")
    assert "model_id" in bundle["application/vnd.jupyter.widget-view+json"]


def test_render_png_and_the_table_without_a_browser():
    run = TrainingRun(number=1, device="/CPU:0", batch_size=32, epochs=2, images=100, loss=[1.0], accuracy=[0.5],
                      epoch_s=[2.0], curve=[(0.5, 1.5, 0.3), (1.0, 1.0, 0.5)])
    assert render_png(run).startswith(PNG)  # mid-run: one epoch of two, no test accuracy yet
    assert run.images_per_s is None and runs_table([]) == ""
    run.epoch_s.append(0.5)
    assert run.images_per_s == 200.0
    assert "<td>200</td>" in runs_table([run])
    assert "curve" not in run.as_dict() and run.as_dict()["images_per_s"] == 200.0


def test_no_images_is_an_error_a_student_can_act_on(tiny):
    (x, y), test = tiny
    with pytest.raises(CourseError, match="no images"):
        TrainingControls((x[:0], y[:0]), test, devices=["/CPU:0"])
