"""Keep the course's message catalogues up to date: extract, then compile (GNU gettext files, made with Babel).

    python scripts/messages.py            # extract every _("...") into the .po files, then compile the .mo files
    python scripts/messages.py --check    # change nothing; exit 1 and list what is missing or out of date

Extraction reads course_utils/ and sorts each message into the domain its file names when it takes
its marker, ``_ = translator("doctor")`` (course_utils.core.i18n: doctor, lessons, course), else by its
folder (doctor/, lessons/, the rest). The instructor's tools (tools/course_tools/) are one domain, ``tools``, with
catalogues of their own in tools/course_tools/locale/.
A new message enters the Chinese ``.po`` file with an empty translation; a message no longer in
the code leaves it; every translation already made is kept. Translate the empty entries (``msgstr``),
then run this again to compile.
"""

from __future__ import annotations

import argparse
import datetime
import io
import re
import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "course_utils"
TOOLS = ROOT / "tools" / "course_tools"
sys.path.insert(0, str(ROOT))
from course_utils.core.i18n import DOMAINS as OWN_DOMAINS  # noqa: E402 - the checkout's own package
from course_utils.core.i18n import LOCALE_DIR  # noqa: E402

DOMAINS = (*OWN_DOMAINS, "tools")
LOCALE_DIRS = {**dict.fromkeys(OWN_DOMAINS, LOCALE_DIR), "tools": TOOLS / "locale"}

LOCALES = ("zh_CN",)
KEYWORDS = {"_": None, "N_": None}  # N_: gettext_noop - marked where a table defines it, translated where shown
FIXED_DATE = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)  # the same bytes on every run: no "now" in headers


_MARKER = re.compile(r'^_ = translator\("(\w+)"\)', re.M)


def domain_of(path: str) -> str:
    """The domain of a file under course_utils/ (a path relative to it): the one its marker names, else its folder's."""
    found = _MARKER.search((PACKAGE / path).read_text(encoding="utf-8"))
    if found is not None and found.group(1) in DOMAINS:
        return found.group(1)
    first = Path(path).parts[0]  # a file without a marker: its folder's domain
    return first if first in DOMAINS else "course"


def extract() -> dict[str, Catalog]:
    """Every marked message in the two packages, one template catalogue per domain."""
    templates = {domain: _catalog(None, domain) for domain in DOMAINS}
    for folder in (PACKAGE, TOOLS):
        for path, line, message, comments, _context in extract_from_dir(
            str(folder), method_map=[("**.py", "python")], keywords=KEYWORDS, comment_tags=("Translators:",)
        ):
            if "locale" in Path(path).parts:
                continue
            domain = "tools" if folder == TOOLS else domain_of(path)
            templates[domain].add(message, locations=[((folder / path).relative_to(ROOT).as_posix(), line)],
                                  auto_comments=comments, flags=("python-brace-format",))
    return templates


def _catalog(locale: str | None, domain: str) -> Catalog:
    return Catalog(locale=locale, domain=domain, project="tf-gpu-course", version="1", creation_date=FIXED_DATE,
                   revision_date=FIXED_DATE, fuzzy=False,
                   header_comment="# The course's messages in Simplified Chinese (scripts/messages.py; CONTRIBUTING).")


def po_path(locale: str, domain: str) -> Path:
    return LOCALE_DIRS[domain] / locale / "LC_MESSAGES" / f"{domain}.po"


def load(locale: str, domain: str) -> Catalog:
    path = po_path(locale, domain)
    if not path.is_file():
        return _catalog(locale, domain)
    with path.open("rb") as fh:
        return read_po(fh, locale=locale, domain=domain)


def updated(current: Catalog, template: Catalog) -> Catalog:
    """``current`` with the template's messages: new ones empty, gone ones dropped, translations kept."""
    new = _catalog(str(current.locale), current.domain)
    for message in template:
        if not message.id:
            continue
        old = current.get(message.id)
        new.add(message.id, string=old.string if old is not None else "", locations=message.locations,
                auto_comments=message.auto_comments, flags=message.flags)
    return new


def po_bytes(catalog: Catalog) -> bytes:
    buffer = io.BytesIO()
    write_po(buffer, catalog, width=100, omit_header=False, sort_output=True, include_lineno=False)
    return buffer.getvalue()


def mo_bytes(catalog: Catalog) -> bytes:
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    return buffer.getvalue()


def problems() -> list[str]:
    """What --check reports: untranslated messages, .po files behind the code, .mo files behind the .po."""
    found = []
    templates = extract()
    for locale in LOCALES:
        for domain, template in templates.items():
            current = load(locale, domain)
            fresh = updated(current, template)
            path = po_path(locale, domain)
            if po_bytes(fresh) != (path.read_bytes() if path.is_file() else b""):
                found.append(f"{path.relative_to(ROOT)} is behind the code: run python scripts/messages.py")
            for message in fresh:
                if message.id and not message.string:
                    where = ", ".join(f"{f}:{n}" for f, n in message.locations[:2])
                    found.append(f"no {locale} translation ({domain}, {where}): {message.id!r}")
            mo = path.with_suffix(".mo")
            if not mo.is_file() or mo.read_bytes() != mo_bytes(current):
                found.append(f"{mo.relative_to(ROOT)} is not compiled from its .po: run python scripts/messages.py")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; list what is missing or out of date")
    parser.add_argument("--domain", choices=DOMAINS, action="append",
                        help="only this domain's catalogue (repeatable; default: all)")
    args = parser.parse_args(argv)
    wanted = set(args.domain or DOMAINS)
    if args.check:
        found = [line for line in problems() if any(f"{d}." in line or f"({d}," in line for d in wanted)]
        for line in found:
            print(line)
        return 1 if found else 0
    for locale in LOCALES:
        for domain, template in extract().items():
            if domain not in wanted:
                continue
            catalog = updated(load(locale, domain), template)
            path = po_path(locale, domain)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(po_bytes(catalog))
            path.with_suffix(".mo").write_bytes(mo_bytes(catalog))
            missing = sum(1 for m in catalog if m.id and not m.string)
            print(f"{path.relative_to(ROOT)}: {len(catalog)} messages, {missing} without a translation")
    return 0


if __name__ == "__main__":
    sys.exit(main())
