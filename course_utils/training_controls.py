"""Notebook 05's training controls: device, batch size and epochs in, a Train button, a live plot.

The student picks a device, a batch size and a number of epochs and presses **Train**: the
blog post's CNN (the fixed one, logits + ``from_logits=True``) trains on the chosen device with the
course's ``tf.data`` pipeline, the loss/accuracy plot redraws while it trains, and a table
collects every run so CPU and GPU, or batch 32 and 512, can be compared side by side.

Nothing here waits for a person. A button press is an event the kernel handles when it
arrives, so a cell that shows the controls never blocks - under papermill and nbval no
frontend exists and no press ever comes. For those unattended runs, and for the stored
copy of the notebook, the cell also trains once with the default values and shows the
result as a static figure::

    controls = TrainingControls((x_train, y_train), (x_test, y_test), epochs=3, batch_size=128)
    display(controls)          # the widget: live in JupyterLab, a line of text under papermill
    run = controls.train()     # the default run, exactly what pressing Train does
    controls.show_final()      # the same curves as a static PNG that every copy of the notebook keeps

The logic lives here, not in the notebook, so tests set the values and click the button.
TensorFlow is imported only when training starts.
"""

from __future__ import annotations

import html
import io
import math
import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from course_utils.errors import CourseError
from course_utils.i18n import translator

_ = translator("course")

BATCH_SIZES = (32, 64, 128, 256, 512)
MAX_EPOCHS = 20
PREVIOUS_RUNS_DRAWN = 3  # earlier runs drawn faded behind the current one, for comparison

Arrays = tuple[np.ndarray, np.ndarray]


@dataclass
class TrainingRun:
    """One press of Train: the settings, the curves, the timing, the test accuracy."""

    number: int
    device: str
    batch_size: int
    epochs: int
    images: int
    loss: list[float] = field(default_factory=list)  # training loss at the end of each epoch
    accuracy: list[float] = field(default_factory=list)  # training accuracy at the end of each epoch
    epoch_s: list[float] = field(default_factory=list)
    curve: list[tuple[float, float, float]] = field(default_factory=list)  # (epoch, loss, accuracy) during training
    test_loss: float | None = None
    test_accuracy: float | None = None
    weights_device: str = ""
    seconds: float = 0.0

    @property
    def finished(self) -> bool:
        return self.test_accuracy is not None

    @property
    def images_per_s(self) -> float | None:
        """Training images per second over the epochs after the first (which includes tracing); None with 1 epoch."""
        if len(self.epoch_s) < 2:
            return None
        return self.images / statistics.median(self.epoch_s[1:])

    @property
    def label(self) -> str:
        return f"run {self.number}: {self.device}, batch {self.batch_size}"

    def as_dict(self) -> dict[str, Any]:
        """Plain values, for ``course.record``."""
        data = asdict(self)
        data.pop("curve")
        data["images_per_s"] = self.images_per_s
        return data


def draw(fig, run: TrainingRun, previous: Sequence[TrainingRun] = ()) -> None:
    """Draw ``run`` (during or after training) with earlier runs faded behind it, on a matplotlib Figure."""
    loss_ax, acc_ax = fig.subplots(1, 2)
    for old in list(previous)[-PREVIOUS_RUNS_DRAWN:]:
        epochs = range(1, len(old.loss) + 1)
        loss_ax.plot(epochs, old.loss, "o-", color="0.7", lw=1, ms=3, label=old.label)
        acc_ax.plot(epochs, old.accuracy, "o-", color="0.7", lw=1, ms=3, label=old.label)
    if run.curve:
        xs, losses, accuracies = zip(*run.curve, strict=True)
        loss_ax.plot(xs, losses, color="tab:blue", lw=1, alpha=0.6)
        acc_ax.plot(xs, accuracies, color="tab:orange", lw=1, alpha=0.6)
    epochs = range(1, len(run.loss) + 1)
    loss_ax.plot(epochs, run.loss, "o-", color="tab:blue", lw=2, label=run.label)
    acc_ax.plot(epochs, run.accuracy, "o-", color="tab:orange", lw=2, label=run.label)
    if run.test_accuracy is not None:
        acc_ax.axhline(run.test_accuracy, color="tab:green", ls="--", lw=1.5,
                       label=_("test {accuracy:.3f}").format(accuracy=run.test_accuracy))
    right = max([run.epochs] + [len(old.loss) for old in previous])
    for ax, title in ((loss_ax, _("training loss")), (acc_ax, _("training accuracy"))):
        ax.set(title=title, xlabel=_("epoch"), xlim=(0, right + 0.2))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="best")
    acc_ax.set_ylim(0, 1.02)
    state = (_("test accuracy {accuracy:.3f}").format(accuracy=run.test_accuracy) if run.finished
             else _("training... epoch {epoch}/{epochs}").format(epoch=len(run.loss), epochs=run.epochs))
    fig.suptitle(_("{label}, {epochs} epoch(s), {images:,} images - {state}").format(
        label=run.label, epochs=run.epochs, images=run.images, state=state), fontsize=10)
    fig.subplots_adjust(left=0.07, right=0.98, bottom=0.15, top=0.82, wspace=0.2)  # fixed: cheaper than tight_layout


def render_png(run: TrainingRun, previous: Sequence[TrainingRun] = (), *, figsize=(9, 3.4), dpi=80) -> bytes:
    """The plot as PNG bytes, drawn off-screen (no pyplot, no notebook backend needed)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, dpi=dpi)
    draw(fig, run, previous)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def runs_table(runs: Sequence[TrainingRun]) -> str:
    """Every finished run as an HTML table: what was chosen, how fast, how accurate."""
    if not runs:
        return ""
    rows = []
    for r in runs:
        speed = f"{r.images_per_s:,.0f}" if r.images_per_s is not None else _("- (1 epoch: all warm-up)")
        accuracy = f"{r.test_accuracy:.4f}" if r.test_accuracy is not None else "-"
        rows.append(
            f"<tr><td>{r.number}</td><td>{html.escape(r.device)}</td><td>{r.batch_size}</td><td>{r.epochs}</td>"
            f"<td>{r.images:,}</td><td>{speed}</td><td>{r.seconds:.1f}</td><td>{accuracy}</td></tr>"
        )
    columns = (_("run"), _("device"), _("batch"), _("epochs"), _("images"), _("images/s (after epoch 1)"),
               _("total s"), _("test accuracy"))
    header = "<tr>" + "".join(f"<th>{html.escape(column)}</th>" for column in columns) + "</tr>"
    style = "<style>.course-runs td, .course-runs th {padding: 2px 10px; text-align: right}</style>"
    return f"{style}<table class='course-runs'>{header}{''.join(rows)}</table>"


class TrainingControls:
    """Device, batch size and epochs, a Train button, a live plot and a table of runs."""

    def __init__(
        self,
        train: Arrays,
        test: Arrays,
        *,
        devices: Sequence[str] | None = None,
        device: str | None = None,
        batch_size: int = 128,
        epochs: int = 3,
        images: int | None = None,
        learning_rate: float = 0.002,
        seed: int = 0,
        min_interval_s: float = 0.5,
    ) -> None:
        """``train``/``test``: uint8 images (n, 28, 28) and labels; ``images`` caps the training images used.

        ``devices`` defaults to ``speed.available_devices()`` ("/CPU:0", and "/GPU:0" when there is one);
        ``min_interval_s`` is the least time between two redraws of the live plot within an epoch.
        """
        import ipywidgets as widgets

        if devices is None:
            from course_utils.speed import available_devices

            devices = available_devices()
        (x_train, y_train), (x_test, y_test) = train, test
        if images is not None:
            x_train, y_train = x_train[:images], y_train[:images]
        if len(x_train) == 0 or len(x_test) == 0:
            raise CourseError(_("The training controls got no images to train or test on."),
                              _("Pass the arrays load_mnist() returns, and images=None or a positive number."))
        self.train_data: Arrays = (x_train, y_train)
        self.test_data: Arrays = (x_test, y_test)
        self.learning_rate = learning_rate
        self.seed = seed
        self.min_interval_s = min_interval_s
        self.runs: list[TrainingRun] = []
        self.renders = 0  # how often the live plot was redrawn (tests read it)
        self.last_error: BaseException | None = None
        self._busy = False

        self.device = widgets.Dropdown(options=list(devices), value=device or devices[-1], description=_("Device"))
        self.batch_size = widgets.Dropdown(
            options=sorted({*BATCH_SIZES, batch_size}), value=batch_size, description=_("Batch size")
        )
        self.epochs = widgets.IntSlider(value=epochs, min=1, max=max(MAX_EPOCHS, epochs), description=_("Epochs"))
        self.button = widgets.Button(description=_("Train"), button_style="primary", icon="play",
                                     tooltip=_("Train the blog post's CNN with these settings"))
        self.progress = widgets.IntProgress(value=0, min=0, max=1, description=_("Progress"))
        self.status = widgets.HTML(value=_("{train:,} training images, {test:,} test images. Choose, then press "
                                           "Train.").format(train=len(x_train), test=len(x_test)))
        self.plot = widgets.Image(format="png", layout=widgets.Layout(width="680px"))
        self.table = widgets.HTML()
        self.button.on_click(self._on_click)
        inputs = widgets.VBox([self.device, self.batch_size, self.epochs, self.button, self.progress],
                              layout=widgets.Layout(min_width="320px"))
        self.box = widgets.VBox([widgets.HBox([inputs, self.plot]), self.status, self.table])

    # ------------------------------------------------------------------ training

    def train(self) -> TrainingRun:
        """Train once with the values the widgets show now; raises what goes wrong (the button shows it instead)."""
        if self._busy:
            raise CourseError(_("A training run is already going."),
                              _("Wait for it to finish, then press Train again."))
        self._busy = True
        self._enable(False)
        try:
            return self._train()
        finally:
            self._busy = False
            self._enable(True)

    def click(self) -> TrainingRun | None:
        """Press the button (what a student does); returns the run it made, or None if it failed or was ignored."""
        before = len(self.runs)
        self.button.click()
        return self.runs[-1] if len(self.runs) > before else None

    def _on_click(self, _button=None) -> None:
        if self._busy:  # a press while training: the button is disabled in the browser, but be safe
            return
        try:
            self.last_error = None
            self.train()
        except Exception as error:  # noqa: BLE001 - a widget callback must show the problem, not die silently
            self.last_error = error
            self.status.value = _("<b>Could not train:</b> {error}").format(error=html.escape(str(error)))

    def _enable(self, enabled: bool) -> None:
        for control in (self.device, self.batch_size, self.epochs, self.button):
            control.disabled = not enabled

    def _train(self) -> TrainingRun:
        import keras
        import tensorflow as tf

        from course_utils.models import build_blog_cnn
        from course_utils.pipeline import image_dataset

        (x_train, y_train), (x_test, y_test) = self.train_data, self.test_data
        run = TrainingRun(
            number=len(self.runs) + 1,
            device=self.device.value,
            batch_size=int(self.batch_size.value),
            epochs=int(self.epochs.value),
            images=len(x_train),
        )
        steps = math.ceil(run.images / run.batch_size)
        self.progress.max, self.progress.value = run.epochs * steps, 0
        self.status.value = _("Training {run}, {epochs} epoch(s) of {steps} batches...").format(
            run=html.escape(run.label), epochs=run.epochs, steps=steps)
        self.plot.value = b""
        began = time.perf_counter()
        keras.utils.set_random_seed(self.seed)
        train_ds = image_dataset(x_train, y_train, batch_size=run.batch_size, shuffle=True, seed=self.seed)
        test_ds = image_dataset(x_test, y_test, batch_size=run.batch_size)
        with tf.device(run.device):
            model = build_blog_cnn(logits=True)
            model.compile(
                optimizer=keras.optimizers.Adam(self.learning_rate),
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                metrics=["accuracy"],
            )
            model.fit(train_ds, epochs=run.epochs, shuffle=False, verbose=0, callbacks=[self._live(run, steps)])
            test_loss, test_accuracy = model.evaluate(test_ds, verbose=0)
            run.weights_device = model.weights[0].value.device
        run.test_loss, run.test_accuracy = float(test_loss), float(test_accuracy)
        run.seconds = time.perf_counter() - began
        self.runs.append(run)
        self._redraw(run)
        self.table.value = runs_table(self.runs)
        self.status.value = _(
            "Done: {run}, {epochs} epoch(s) in {seconds:.1f} s, test accuracy <b>{accuracy:.4f}</b> (weights on "
            "{device})."
        ).format(run=html.escape(run.label), epochs=run.epochs, seconds=run.seconds, accuracy=run.test_accuracy,
                 device=html.escape(run.weights_device))
        return run

    def _live(self, run: TrainingRun, steps: int):
        """The Keras callback that fills ``run`` and redraws the plot during training."""
        import keras

        controls = self

        class LivePlot(keras.callbacks.Callback):
            def on_epoch_begin(self, epoch, logs=None):
                self.epoch, self.started, self.drawn = epoch, time.perf_counter(), time.perf_counter()

            def on_train_batch_end(self, batch, logs=None):
                logs = logs or {}
                controls.progress.value = self.epoch * steps + batch + 1
                now = time.perf_counter()
                if "loss" in logs and now - self.drawn >= controls.min_interval_s:
                    x = self.epoch + (batch + 1) / steps
                    run.curve.append((x, float(logs["loss"]), float(logs.get("accuracy", math.nan))))
                    controls._redraw(run)
                    self.drawn = now

            def on_epoch_end(self, epoch, logs=None):
                logs = logs or {}
                loss, accuracy = float(logs["loss"]), float(logs["accuracy"])  # reading them waits for the epoch
                run.epoch_s.append(time.perf_counter() - self.started)
                run.loss.append(loss)
                run.accuracy.append(accuracy)
                run.curve.append((epoch + 1.0, loss, accuracy))
                controls.status.value = (
                    f"Training {html.escape(run.label)}: epoch {epoch + 1}/{run.epochs}, "
                    f"loss {loss:.4f}, accuracy {accuracy:.4f}, {run.epoch_s[-1]:.1f} s"
                )
                controls._redraw(run)

        return LivePlot()

    def _redraw(self, run: TrainingRun) -> None:
        self.plot.value = render_png(run, [r for r in self.runs if r is not run])
        self.renders += 1

    # ------------------------------------------------------------------ showing

    def final_figure(self, run: TrainingRun | None = None):
        """The last (or the given) finished run as a matplotlib Figure, earlier runs faded behind it."""
        from matplotlib.figure import Figure

        run = run or (self.runs[-1] if self.runs else None)
        if run is None:
            raise CourseError(_("Nothing has been trained yet, so there is no plot."),
                              _("Press Train (or call train())."))
        fig = Figure(figsize=(9, 3.4), dpi=100)
        draw(fig, run, [r for r in self.runs if r.number < run.number])
        return fig

    def show_final(self, run: TrainingRun | None = None) -> None:
        """Display the final plot as a static PNG: what papermill, nbval and a stored notebook keep."""
        from IPython.display import Image, display

        buffer = io.BytesIO()
        self.final_figure(run).savefig(buffer, format="png")
        display(Image(data=buffer.getvalue(), format="png"))

    def _repr_mimebundle_(self, **kwargs) -> dict[str, Any]:
        view = getattr(self.box, "_repr_mimebundle_", None)  # ipywidgets 8; ipywidgets 7 (Colab) has none
        if view is not None:
            bundle = view(**kwargs)
        else:  # the same widget-view record that ipywidgets 7 displays itself
            bundle = {"application/vnd.jupyter.widget-view+json": {
                "version_major": 2, "version_minor": 0, "model_id": self.box.model_id}}
        bundle["text/plain"] = _(
            "Training controls (device {device}, batch {batch}, {epochs} epochs): open the notebook in JupyterLab "
            "to use them"
        ).format(device=self.device.value, batch=self.batch_size.value, epochs=self.epochs.value)
        return bundle
