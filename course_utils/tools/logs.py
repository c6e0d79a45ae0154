"""TensorBoard logs read back as data, and where a notebook writes them.

Keras's ``keras.callbacks.TensorBoard(log_dir=...)`` writes (docs/references.md#tensorboard-callback)::

    log_dir/train/events.out.tfevents...        epoch_loss, epoch_accuracy, epoch_learning_rate,
                                                 weight histograms, the model graph
    log_dir/validation/events.out.tfevents...   epoch_loss, epoch_accuracy, evaluation_*_vs_iterations
    log_dir/train/plugins/profile/<timestamp>/<host>.xplane.pb   only with profile_batch

Reading - TF2 writes scalars as *tensor* summaries, so the common recipe
``EventAccumulator(...).Scalars(tag)`` finds nothing; ``read_scalars`` reads
``.Tensors(tag)`` and converts each with ``make_ndarray`` (tensorboard's copy of
``tf.make_ndarray``), keeping the 0-d tensors the scalars plugin owns. It returns a tidy
table - one ``Scalar(run, split, tag, step, value, wall_time)`` per logged number.
No pandas needed; ``pandas.DataFrame(rows)`` works if you have it. Notebook 06 shows the
recipe itself; this module is the reader of ``course logs``.

Damaged logs - an event file is a sequence of TFRecords, each framed by its length and two
CRC32C checksums (https://www.tensorflow.org/tutorials/load_data/tfrecord, "TFRecords format
details"). TensorBoard's reader stops at the first record that fails a check, silently, and
drops every record after it. Here each file is checked record by record first: a record that
fails its checksum is skipped, a damaged length is stepped over to the next whole record, and
a file cut off inside its last record (a writer killed mid-write, or one still writing) keeps
its whole records. What was skipped is reported as an ``EventFileDamage`` in the
``damaged`` list the reader is given, so nothing is dropped unsaid.

Command line: ``course logs LOG_DIR [--tag TAG]`` prints the table as CSV, and names on
standard error each damaged file and what was skipped in it.
"""
from __future__ import annotations

import argparse
import csv
import importlib.util
import os
import struct
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from course_utils.core.errors import CourseError
from course_utils.core.i18n import translator

SPLITS = ("train", "validation")
EVENT_PREFIX = "events.out.tfevents."
_ = translator("course")


class Scalar(NamedTuple):
    """One logged number: which run and split, which tag, at which step (epoch for epoch_* tags)."""

    run: str
    split: str  # "train", "validation", or "" for a run folder without splits
    tag: str
    step: int
    value: float
    wall_time: float


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


def _accumulator(folder: Path, damaged: list[EventFileDamage]):
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
    damaged += found
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


def read_scalars(
    log_dir: str | os.PathLike[str],
    damaged: list[EventFileDamage],
    *,
    runs: Iterable[str] | None = None,
    tags: Iterable[str] | None = None,
) -> list[Scalar]:
    """Every scalar under ``log_dir`` as a tidy table, sorted by run, split, tag and step.

    Reads TF2 tensor summaries of the scalars plugin (``.Tensors`` + ``make_ndarray``) and
    legacy ``simple_value`` scalars (``.Scalars``), so it works for logs from any writer.
    Damaged event files: see the module docstring (``damaged`` collects them).
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
    rows = read_scalars(args.log_dir, damaged, runs=args.run, tags=args.tag)
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
