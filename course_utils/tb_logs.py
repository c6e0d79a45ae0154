"""TensorBoard logs: write them one folder per run, and read them back as data.

Writing - ``tensorboard_callback(root, "cnn", ...)`` makes the Keras callback for the run
``cnn`` under the log folder ``root``. Keras then writes (docs/references.md#tensorboard-callback)::

    root/cnn/train/events.out.tfevents...        epoch_loss, epoch_accuracy, epoch_learning_rate,
                                                  weight histograms, the model graph
    root/cnn/validation/events.out.tfevents...   epoch_loss, epoch_accuracy, evaluation_*_vs_iterations
    root/cnn/train/plugins/profile/<timestamp>/<host>.xplane.pb   only with profile_batch

A run's folder is emptied first (``fresh=True``), so running a notebook again replaces
its runs instead of adding a second, overlapping series to each.

Reading - TF2 writes scalars as *tensor* summaries, so the common recipe
``EventAccumulator(...).Scalars(tag)`` finds nothing; ``read_scalars`` reads
``.Tensors(tag)`` and converts each with ``make_ndarray`` (tensorboard's copy of
``tf.make_ndarray``), keeping the 0-d tensors the scalars plugin owns. It returns a tidy
table - one ``Scalar(run, split, tag, step, value, wall_time)`` per logged number - that
``series``, ``pivot`` and ``plot_runs`` turn into what a notebook shows. No pandas needed;
``pandas.DataFrame(rows)`` works if you have it.

Damaged logs - an event file is a sequence of TFRecords, each framed by its length and two
CRC32C checksums (https://www.tensorflow.org/tutorials/load_data/tfrecord, "TFRecords format
details"). TensorBoard's reader stops at the first record that fails a check, silently, and
drops every record after it. Here each file is checked record by record first: a record that
fails its checksum is skipped, a damaged length is stepped over to the next whole record, and
a file cut off inside its last record (a writer killed mid-write, or one still writing) keeps
its whole records. What was skipped is reported as an ``EventFileDamage`` - in the
``damaged`` list the reader is given, else as a warning - so nothing is dropped unsaid.

Command line: ``course logs LOG_DIR [--tag TAG]`` prints the table as CSV, and names on
standard error each damaged file and what was skipped in it.

Where logs go (``log_root``): a notebook's ``LOG_DIR`` parameter. A relative ``LOG_DIR`` starts in
the current folder - the kernel's working folder, which JupyterLab and ``course run`` set to the
notebook's folder, and Colab and Kaggle to their working folders (``/content``, ``/kaggle/working``).
When the environment sets ``COURSE_LOG_DIR`` (the tests do; ``course run`` sets one folder per run), a
relative ``LOG_DIR`` starts in that folder instead. When the current folder is not the student's own (a
shared, read-only copy of the course on a class server), it starts in the course home's ``logs/``
(``system.places.log_base``). An absolute ``LOG_DIR`` is used as it is.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import os
import re
import shutil
import struct
import sys
import tempfile
import warnings
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from course_utils.errors import CourseError, ParameterError
from course_utils.i18n import translator
from course_utils.system.places import LOGS_VARIABLE, log_base
from course_utils.tb_profile import check_profile_batch

LOG_ENV = LOGS_VARIABLE  # "COURSE_LOG_DIR"
SPLITS = ("train", "validation")
EVENT_PREFIX = "events.out.tfevents."
_RUN_NAME = re.compile(r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$")
_ = translator("course")


class Scalar(NamedTuple):
    """One logged number: which run and split, which tag, at which step (epoch for epoch_* tags)."""

    run: str
    split: str  # "train", "validation", or "" for a run folder without splits
    tag: str
    step: int
    value: float
    wall_time: float


def log_root(log_dir: str | os.PathLike[str]) -> Path:
    """The absolute log folder for a ``LOG_DIR`` parameter (see the module docstring); created if missing."""
    path = Path(log_dir).expanduser()
    if not path.is_absolute():
        path = log_base() / path  # COURSE_LOG_DIR, else the current folder if it is ours, else the course home
    path = path.resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def check_run_name(run: str) -> None:
    """Run names become folder names and TensorBoard run labels: letters, digits, ``_.-``, ``/`` to nest."""
    if not isinstance(run, str) or not _RUN_NAME.match(run) or any(part in (".", "..") for part in run.split("/")):
        raise ParameterError(
            _("Run name {run!r} cannot be used as a log folder.").format(run=run),
            _("Use letters, digits, '_', '-' and '.', e.g. 'dense_noise' (a '/' nests runs: 'week1/cnn')."),
        )


def _is_tensorboard_file(relative: Path) -> bool:
    name = relative.name
    return (
        name.startswith(EVENT_PREFIX)
        or "plugins" in relative.parts  # profiles, and what the profile plugin caches beside them
        or name == "projector_config.pbtxt"
        or name.startswith("keras_embedding.ckpt")
    )


def clear_run(path: str | os.PathLike[str]) -> None:
    """Delete a run's folder - only if everything in it is something TensorBoard or Keras wrote."""
    path = Path(path)
    if not path.exists():
        return
    strangers = [p for p in path.rglob("*") if p.is_file() and not _is_tensorboard_file(p.relative_to(path))]
    if strangers or not path.is_dir():
        shown = ", ".join(str(p.relative_to(path)) for p in strangers[:3]) if strangers else _("it is not a folder")
        raise CourseError(
            _("{path} holds files that are not TensorBoard logs ({files}); the course will not delete it.").format(
                path=path, files=shown),
            _("Choose another LOG_DIR or run name, or move those files away."),
        )
    shutil.rmtree(path)


def run_dir(root: str | os.PathLike[str], run: str, *, fresh: bool = True) -> Path:
    """``root/run``: the folder of one run, emptied first when ``fresh``."""
    check_run_name(run)
    path = Path(root) / run
    if fresh:
        clear_run(path)
    return path


def require_tensorboard() -> None:
    """Say clearly when ``tensorboard`` is missing: since TF 2.21, ``tensorflow`` does not bring it.

    Without it TF 2.21's ``tf.summary`` is limited, not gone: its writer and ``tf.summary.write`` are
    TensorFlow's own, while ``scalar``, ``histogram``, ``image``, ``audio`` and ``text`` forward to
    the ``tensorboard`` package and raise ``TBNotInstalledError`` without it
    (``tensorflow/python/summary/tb_summary.py``). Source: docs/references.md#tensorboard-package.
    """
    if importlib.util.find_spec("tensorboard") is None:
        raise CourseError(
            _("The tensorboard package is not installed. TensorFlow 2.20 and older install it with tensorflow; "
              "TensorFlow 2.21 does not. Without it tf.summary is limited: tf.summary.create_file_writer and "
              "tf.summary.write work, but tf.summary.scalar, histogram and image raise TBNotInstalledError, so "
              "the Keras TensorBoard callback cannot write its logs."),
            _('pip install "tensorboard>=2.21,<2.22" (or pip install -e . in the course folder). '
              "More: docs/troubleshooting.md#tensorboard-missing"),
        )


def tensorboard_callback(
    root: str | os.PathLike[str],
    run: str,
    *,
    histogram_freq: int = 1,
    profile_batch: Sequence[int] | None = None,
    total_batches: int | None = None,
    fresh: bool = True,
    write_graph: bool = True,
):
    """The Keras TensorBoard callback for run ``run``, logging to ``root/run``.

    ``histogram_freq``: weight histograms every that many epochs (0: none).
    ``profile_batch``: ``(start, stop)`` to profile those batches, validated by
    ``tb_profile.check_profile_batch`` (against ``total_batches`` when given); ``None``: no profiling.
    ``fresh``: empty the run's folder first (see ``clear_run``).
    """
    require_tensorboard()
    if isinstance(histogram_freq, bool) or not isinstance(histogram_freq, int) or histogram_freq < 0:
        raise ParameterError(
            _("histogram_freq = {value!r} must be a whole number of epochs (0 = no histograms).").format(
                value=histogram_freq),
            _("Use e.g. histogram_freq=1 (every epoch) or 0."),
        )
    profile = check_profile_batch(profile_batch, total_batches=total_batches)
    import keras

    path = run_dir(root, run, fresh=fresh)
    return callback_class(keras)(
        log_dir=str(path), histogram_freq=histogram_freq, write_graph=write_graph, profile_batch=profile or 0
    )


# Keras before 3.14 tags each weight histogram with the weight's short name ("kernel", "bias"), so all
# Dense layers write to the same two tags and TensorBoard keeps one of them (keras-team/keras#20809).
# Keras 3.14 uses the weight's path ("dense/kernel") instead (keras-team/keras#22317). Colab and Kaggle
# run Keras 3.13: there the course's callback writes path tags too, so the notebook reads the same logs.
PATH_TAGS_SINCE = (3, 14)


def keras_version(keras: Any) -> tuple[int, int]:
    """``keras.__version__`` as (major, minor)."""
    major, minor = (int(part) for part in keras.__version__.split(".")[:2])
    return major, minor


def callback_class(keras: Any) -> type:
    """Keras's TensorBoard callback; before Keras 3.14 a subclass that tags histograms by weight path."""
    base = keras.callbacks.TensorBoard
    if keras_version(keras) >= PATH_TAGS_SINCE:
        return base

    class TensorBoard(base):
        """Keras 3.14's ``_log_weights``: one tag per weight path, so layers do not overwrite each other."""

        def _log_weights(self, epoch: int) -> None:
            with self._train_writer.as_default():
                for layer in self.model.layers:
                    for weight in layer.weights:
                        name = weight.path.replace(":", "_")
                        self.summary.histogram(f"{name}/histogram", weight, step=epoch)
                        if self.write_images:
                            self._log_weight_as_image(weight, f"{name}/image", epoch)
                self._train_writer.flush()

    return TensorBoard


def event_dirs(log_dir: str | os.PathLike[str]) -> list[tuple[str, str, Path]]:
    """Every folder under ``log_dir`` that holds event files, as ``(run, split, folder)``."""
    root = Path(log_dir)
    found = sorted({p.parent for p in root.rglob(f"{EVENT_PREFIX}*") if p.is_file()})
    result = []
    for folder in found:
        relative = folder.relative_to(root)
        if "plugins" in relative.parts:
            continue
        parts = relative.parts
        if parts and parts[-1] in SPLITS:
            run, split = "/".join(parts[:-1]) or ".", parts[-1]
        else:
            run, split = "/".join(parts) or ".", ""
        result.append((run, split, folder))
    return result


def _crc32c_table() -> list[int]:
    table = []
    for n in range(256):
        crc = n
        for _attempt in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1  # CRC-32C (Castagnoli), reflected
        table.append(crc)
    return table


_CRC32C = _crc32c_table()


def masked_crc32c(data: bytes) -> int:
    """The masked CRC-32C a TFRecord stores after its length and after its data (TensorFlow's ``crc32c::Mask``)."""
    crc, table = 0xFFFFFFFF, _CRC32C
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


class EventFileDamage(NamedTuple):
    """What could not be read in one event file; its other records were read."""

    path: Path
    records: int  # whole records read
    corrupt: int  # records skipped: their data failed its checksum
    skipped_bytes: int  # bytes stepped over after a damaged record length
    cut_bytes: int  # the bytes of a last record cut short (0: none)

    @property
    def cut(self) -> bool:
        """The file ends inside a record: its writer was stopped mid-write, or is writing still."""
        return self.cut_bytes > 0

    @property
    def lost_bytes(self) -> int:
        """Bytes that are no whole record."""
        return self.skipped_bytes + self.cut_bytes

    def describe(self) -> str:
        """One line for a person: the file, what was read, what was skipped and why."""
        read = (_("{path}: {records} whole records read") if self.records != 1
                else _("{path}: {records} whole record read"))
        parts = [read.format(path=self.path, records=self.records)]
        if self.corrupt == 1:
            parts.append(_("1 record failed its checksum (CRC32C) and was skipped"))
        elif self.corrupt:
            parts.append(_("{count} records failed their checksums (CRC32C) and were skipped").format(
                count=self.corrupt))
        if self.skipped_bytes:
            parts.append(_("{count} bytes could not be read as records (a damaged record length)").format(
                count=self.skipped_bytes))
        if self.cut:
            parts.append(_("the last {count} bytes are a record cut off mid-write (its writer was stopped, "
                           "or is still writing)").format(count=self.cut_bytes))
        return _("; ").join(parts)


def scan_event_file(path: str | os.PathLike[str]) -> tuple[list[bytes], EventFileDamage | None]:
    """Every record of an event file whose length and data pass their checksums, and what was skipped (None: nothing).

    A record whose data fails its checksum is skipped; after a damaged length, reading goes on
    at the next offset where a whole record starts; a last record cut short is reported.
    """
    path = Path(path)
    data = path.read_bytes()
    records: list[bytes] = []
    corrupt = skipped = cut = 0
    at, size = 0, len(data)
    while at < size:
        if size - at < 12:
            cut = size - at
            break
        length = struct.unpack_from("<Q", data, at)[0]
        if struct.unpack_from("<I", data, at + 8)[0] != masked_crc32c(data[at : at + 8]):
            start, at = at, _next_record(data, at + 1)
            skipped += at - start
            continue
        if at + 16 + length > size:
            cut = size - at
            break
        body = data[at + 12 : at + 12 + length]
        if struct.unpack_from("<I", data, at + 12 + length)[0] == masked_crc32c(body):
            records.append(body)
        else:
            corrupt += 1
        at += 16 + length
    damage = EventFileDamage(path, len(records), corrupt, skipped, cut) if corrupt or skipped or cut else None
    return records, damage


def _next_record(data: bytes, at: int) -> int:
    """The first offset from ``at`` where a whole record starts (its length passes its checksum, and fits)."""
    size = len(data)
    while at + 16 <= size:
        length = struct.unpack_from("<Q", data, at)[0]
        if at + 16 + length <= size and struct.unpack_from("<I", data, at + 8)[0] == masked_crc32c(data[at : at + 8]):
            return at
        at += 1
    return size


def _accumulator(folder: Path, damaged: list[EventFileDamage] | None = None):
    """TensorBoard's EventAccumulator over ``folder``; over a checked copy of its event files when one is damaged."""
    require_tensorboard()
    from tensorboard.backend.event_processing import event_accumulator as ea

    # 0 = keep every event (the default keeps a sample of 10 tensors per tag)
    guidance = {ea.TENSORS: 0, ea.SCALARS: 0}
    files = sorted(p for p in folder.iterdir() if p.is_file() and EVENT_PREFIX in p.name)
    scanned = [(path, *scan_event_file(path)) for path in files]
    found = [damage for _path, _records, damage in scanned if damage is not None]
    if not found:
        acc = ea.EventAccumulator(str(folder), size_guidance=guidance)
        acc.Reload()
        return acc
    for damage in found:
        if damaged is None:
            warnings.warn(_("damaged TensorBoard event file: {damage}").format(damage=damage.describe()), UserWarning,
                          stacklevel=3)
        else:
            damaged.append(damage)
    with tempfile.TemporaryDirectory(prefix="course-logs-") as checked:
        for path, records, _damage in scanned:  # the whole records, each framed again with its checksums
            with open(Path(checked) / path.name, "wb") as out:
                for record in records:
                    header = struct.pack("<Q", len(record))
                    out.write(header + struct.pack("<I", masked_crc32c(header)) + record
                              + struct.pack("<I", masked_crc32c(record)))
        acc = ea.EventAccumulator(checked, size_guidance=guidance)
        acc.Reload()  # reads everything into memory: the copy can go
    return acc


def read_tags(
    log_dir: str | os.PathLike[str], *, damaged: list[EventFileDamage] | None = None
) -> dict[tuple[str, str], dict[str, list[str]]]:
    """What each run and split logged: ``{(run, split): {plugin: [tags]}}`` (scalars, histograms, ...).

    Damaged event files: see the module docstring (``damaged`` collects them; without it, a warning each).
    """
    result: dict[tuple[str, str], dict[str, list[str]]] = {}
    for run, split, folder in event_dirs(log_dir):
        acc = _accumulator(folder, damaged)
        plugins: dict[str, list[str]] = defaultdict(list)
        for tag in acc.Tags()["tensors"]:
            plugins[acc.SummaryMetadata(tag).plugin_data.plugin_name or "tensors"].append(tag)
        for tag in acc.Tags()["scalars"]:  # legacy simple_value scalars (TF1, other writers)
            plugins["scalars"].append(tag)
        result[(run, split)] = {plugin: sorted(tags) for plugin, tags in sorted(plugins.items())}
    return result


def read_scalars(
    log_dir: str | os.PathLike[str],
    *,
    runs: Iterable[str] | None = None,
    tags: Iterable[str] | None = None,
    damaged: list[EventFileDamage] | None = None,
) -> list[Scalar]:
    """Every scalar under ``log_dir`` as a tidy table, sorted by run, split, tag and step.

    Reads TF2 tensor summaries of the scalars plugin (``.Tensors`` + ``make_ndarray``) and
    legacy ``simple_value`` scalars (``.Scalars``), so it works for logs from any writer.
    Damaged event files: see the module docstring (``damaged`` collects them; without it, a warning each).
    """
    from tensorboard.util import tensor_util

    wanted_runs = set(runs) if runs is not None else None
    wanted_tags = set(tags) if tags is not None else None
    rows: list[Scalar] = []
    for run, split, folder in event_dirs(log_dir):
        if wanted_runs is not None and run not in wanted_runs:
            continue
        acc = _accumulator(folder, damaged)
        for tag in acc.Tags()["tensors"]:
            if wanted_tags is not None and tag not in wanted_tags:
                continue
            if acc.SummaryMetadata(tag).plugin_data.plugin_name != "scalars":
                continue
            for event in acc.Tensors(tag):
                value = tensor_util.make_ndarray(event.tensor_proto)
                if value.ndim == 0:
                    rows.append(Scalar(run, split, tag, int(event.step), float(value), float(event.wall_time)))
        for tag in acc.Tags()["scalars"]:
            if wanted_tags is None or tag in wanted_tags:
                for e in acc.Scalars(tag):
                    rows.append(Scalar(run, split, tag, int(e.step), float(e.value), float(e.wall_time)))
    return sorted(rows, key=lambda r: (r.run, SPLITS.index(r.split) if r.split in SPLITS else 2, r.tag, r.step))


def series(rows: Iterable[Scalar], run: str, tag: str, split: str = "validation") -> tuple[list[int], list[float]]:
    """One curve: the steps and values of ``tag`` for ``run``'s ``split``, in step order."""
    points = sorted((r.step, r.value) for r in rows if r.run == run and r.tag == tag and r.split == split)
    return [s for s, _ in points], [v for _, v in points]


def pivot(
    rows: Iterable[Scalar], tag: str, split: str = "validation"
) -> tuple[list[int], dict[str, list[float | None]]]:
    """A wide table of one tag: the steps, and each run's values at those steps (``None`` where it logged none)."""
    cells: dict[str, dict[int, float]] = defaultdict(dict)
    for r in rows:
        if r.tag == tag and r.split == split:
            cells[r.run][r.step] = r.value
    steps = sorted({s for by_step in cells.values() for s in by_step})
    return steps, {run: [cells[run].get(s) for s in steps] for run in sorted(cells)}


def columns(rows: Iterable[Scalar]) -> dict[str, list[Any]]:
    """The table column by column (``pandas.DataFrame(columns(rows))`` if you use pandas)."""
    rows = list(rows)
    return {name: [getattr(r, name) for r in rows] for name in Scalar._fields}


def plot_runs(
    rows: Iterable[Scalar],
    tags: Sequence[str] = ("epoch_accuracy", "epoch_loss"),
    *,
    runs: Sequence[str] | None = None,
    splits: Sequence[str] = ("validation", "train"),
    title: str | None = None,
):
    """Compare runs: one panel per tag, one colour per run, solid = validation, dashed = train."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    rows = list(rows)
    runs = list(runs) if runs is not None else sorted({r.run for r in rows})
    fig, axes = plt.subplots(1, len(tags), figsize=(5.5 * len(tags), 3.8), squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    styles = {"validation": "o-", "train": "s--", "": "o-"}
    for ax, tag in zip(axes[0], tags, strict=True):
        for i, run in enumerate(runs):
            for split in splits:
                steps, values = series(rows, run, tag, split)
                if steps:
                    ax.plot(
                        steps, values, styles.get(split, "o:"), color=colors[i % len(colors)],
                        alpha=1.0 if split != "train" else 0.55, label=f"{run} ({split or 'run'})",
                    )
        ax.set(title=tag, xlabel=_("step (epoch, from 0)") if tag.startswith("epoch_") else _("step"))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.0, 0.95), fontsize="small")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def main(argv: list[str] | None = None) -> int:
    """``course logs LOG_DIR [--tag TAG ...] [--run RUN ...]``: the tidy table as CSV; damaged files named on stderr."""
    parser = argparse.ArgumentParser(prog="course logs", description=main.__doc__)
    parser.add_argument("log_dir", help="a TensorBoard log folder (e.g. notebooks/logs)")
    parser.add_argument("--tag", action="append", help="only these tags (repeatable)")
    parser.add_argument("--run", action="append", help="only these runs (repeatable)")
    args = parser.parse_args(argv)
    if not Path(args.log_dir).is_dir():
        print(_("error: {path} is not a folder").format(path=args.log_dir), file=sys.stderr)
        return 2
    damaged: list[EventFileDamage] = []
    rows = read_scalars(args.log_dir, runs=args.run, tags=args.tag, damaged=damaged)
    writer = csv.writer(sys.stdout)
    writer.writerow(Scalar._fields)
    writer.writerows(rows)
    if damaged:
        warning = (_("warning: {count} event files are damaged; the table holds every whole record, and leaves out:")
                   if len(damaged) != 1 else
                   _("warning: {count} event file is damaged; the table holds every whole record, and leaves out:"))
        print(warning.format(count=len(damaged)), file=sys.stderr)
        for damage in damaged:
            print(f"  {damage.describe()}", file=sys.stderr)
        print(_("What to do: re-run the training that wrote them for complete logs (a file still being written "
                "is whole once its writer closes it)."), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
