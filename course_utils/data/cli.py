"""``course data fetch|status`` - cache the datasets for offline use, or say which source each would use."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from course_utils.core.errors import CourseError, DataError
from course_utils.core.i18n import translator
from course_utils.data import (
    FASHION_DIR,
    _fashion_mnist,
    _mnist,
    data_dir_problem,
    fetch_fashion_mnist,
    fetch_mnist,
    offline,
)

_ = translator("course")


def sources() -> list[dict[str, str | None]]:
    """Per dataset, what a load would use right now, offline, without downloading: ``dataset``, ``source`` (None:
    none usable), ``location``, ``problem`` (DataError's, or "not available offline") and ``line`` (what ``course
    data status`` prints). ``course preflight`` records them.
    """
    found: list[dict[str, str | None]] = []
    for name, loader in (("mnist", _mnist), ("fashion-mnist", _fashion_mnist)):
        try:
            _arrays, info = loader(quiet=True, download=False)
            found.append({"dataset": name, "source": info.source, "location": info.location, "problem": None,
                          "line": info.describe()})
        except DataError as exc:
            if exc.problem:
                found.append({"dataset": name, "source": None, "location": str(exc.path), "problem": exc.problem,
                              "line": f"{name}: {exc.problem}: {exc.path} - {exc.fix}"})
            else:
                found.append({"dataset": name, "source": None, "location": None, "problem": "not available offline",
                              "line": _("{dataset}: not available offline - {fix}").format(dataset=name, fix=exc.fix)})
    return found


def status() -> list[str]:
    """One line per dataset (``sources``): a file there but unusable is named with its problem."""
    problem = data_dir_problem()
    return ([_("note: {problem}").format(problem=problem)] if problem else []) + [entry["line"] for entry in sources()]


def _error(exc: CourseError) -> None:
    print(_("error: {what}\nWhat to do: {fix}").format(what=exc.what, fix=exc.fix), file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="course data", description="Prepare the course's datasets.")
    sub = parser.add_subparsers(dest="command", required=True)
    fetch = sub.add_parser("fetch", help="download and verify datasets into the Keras cache (or --cache-dir)")
    fetch.add_argument("dataset", nargs="?", default="all", choices=("mnist", "fashion-mnist", "all"),
                       help="which dataset (default: all)")
    fetch.add_argument("--cache-dir", type=Path, default=None,
                       help="folder to fill instead of the Keras cache, e.g. one to share as COURSE_DATA_DIR")
    sub.add_parser("status", help="say which source each dataset would load from, offline")
    args = parser.parse_args(argv)
    try:  # bad input - the offline switch, --cache-dir - is found before anything is read or downloaded
        is_offline = offline()
        if args.command == "fetch" and args.cache_dir is not None and args.cache_dir.exists() \
                and not args.cache_dir.is_dir():
            raise DataError(
                _("--cache-dir {path} is a file, not a folder.").format(path=args.cache_dir),
                _("Pass a folder (it is created if missing), or leave --cache-dir out to fill the Keras cache."),
            )
    except CourseError as exc:
        _error(exc)
        return 2
    if args.command == "status":
        print("\n".join(status()))
        return 0
    if is_offline:
        print(_("COURSE_OFFLINE=1 is set: nothing can be fetched. Unset it to download."), file=sys.stderr)
        return 2
    try:
        if args.dataset in ("mnist", "all"):
            print(_("mnist: verified at {path}").format(path=fetch_mnist(args.cache_dir)))
        if args.dataset in ("fashion-mnist", "all"):
            folder = args.cache_dir / FASHION_DIR if args.cache_dir else None
            print(_("fashion-mnist: verified in {folder}").format(folder=fetch_fashion_mnist(folder)))
    except DataError as exc:
        _error(exc)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
