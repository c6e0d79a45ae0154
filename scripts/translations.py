"""Keep the Chinese notebooks (``notebooks/zh/``) in step with the English ones they translate.

Each Chinese notebook is a copy of its English notebook: the same cells in the same order, with the
same ids, types and tags. Markdown, code comments and the strings a student reads are translated; the
code is otherwise identical. Each translated cell records which English text it translates, in its
metadata: ``"translation": {"en_sha256": "<the first 16 hex digits of the SHA-256 of the English
cell's source>"}``. When an English cell changes, its hash changes, and the Chinese cell is *stale*.
The two generated cells (tags ``links`` and ``hosted-setup``) carry no stamp:
``tools/course_tools/links.py`` writes them for each edition.

Usage:
    python scripts/translations.py status                  # what needs a translator; exit 1 if anything does
    python scripts/translations.py stamp 05                # record the English hashes in notebooks/zh/05_*.ipynb
    python scripts/translations.py stamp 05 --cell ID ...  # only these cells (after updating their translation)
    python scripts/translations.py new 08                  # start notebooks/zh/08_*.ipynb as a copy, unstamped
    python scripts/translations.py --root DIR ...          # another checkout (the tests use a copy)

``scripts/course_lint.py`` (rule ``translation``) runs every check below; CONTRIBUTING.md ("Translations (the Chinese
edition)") says how a maintainer updates a translation. This file imports no TensorFlow.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import hashlib
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ZH_FOLDER = "zh"
STAMP = "translation"  # the cell metadata key
HASH = "en_sha256"
HASH_DIGITS = 16
GENERATED_TAGS = frozenset({"links", "hosted-setup"})  # written by tools/course_tools/links.py, never stamped
GUIDE = 'CONTRIBUTING.md, "Translations (the Chinese edition)"'
SCRIPT = "python scripts/translations.py"

# CJK Unified Ideographs (with Extension A and the compatibility block): what counts as Chinese text.
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# What a markdown cell may hold without words to translate: links' targets, code, HTML tags, URLs.
NOT_WORDS = re.compile(r"\]\([^)]*\)|`[^`]*`|<[^>]+>|https?://\S+|\$[^$]*\$")
WORD = re.compile(r"[A-Za-z]{3,}")
# IPython calls whose string arguments are commands, not prose: kept when the other strings are blanked.
IPYTHON_CALLS = frozenset({"run_line_magic", "run_cell_magic", "system", "getoutput"})


class TranslationError(Exception):
    """A command cannot do what was asked (no such notebook, an unknown cell id); the message says why."""


@dataclass(frozen=True)
class Problem:
    """One thing that keeps a Chinese notebook out of step, with where it is and what to do."""

    notebook: str  # the Chinese notebook, relative to the checkout
    cell: int | None  # its index in the Chinese notebook (None: the notebook as a whole)
    cell_id: str | None
    kind: str  # missing, structure, code, setup, stale, unstamped, english
    what: str
    fix: str

    def __str__(self) -> str:
        where = self.notebook if self.cell is None else f"{self.notebook} cell {self.cell} (id {self.cell_id})"
        return f"{where}: {self.what}. {self.fix}"


# --------------------------------------------------------------------------- notebooks and cells


def english_notebooks(root: Path = ROOT) -> list[Path]:
    return sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def chinese_notebooks(root: Path = ROOT) -> list[Path]:
    return sorted((root / "notebooks" / ZH_FOLDER).glob("[0-9][0-9]_*.ipynb"))


def chinese_path(english: Path) -> Path:
    return english.parent / ZH_FOLDER / english.name


def english_path(chinese: Path) -> Path:
    return chinese.parent.parent / chinese.name


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def save(path: Path, nb: dict) -> None:
    """As tools/course_tools/links.py writes notebooks: indent 1, sorted keys, UTF-8, a final newline."""
    text = json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        out.write(text)


def source(cell: dict) -> str:
    return "".join(cell["source"])


def tags(cell: dict) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def generated(cell: dict) -> bool:
    return bool(GENERATED_TAGS & set(tags(cell)))


def english_hash(cell: dict) -> str:
    """The stamp a translation of ``cell`` carries: SHA-256 of its source (joined, UTF-8), 16 hex digits."""
    return hashlib.sha256(source(cell).encode("utf-8")).hexdigest()[:HASH_DIGITS]


def stamp_of(cell: dict) -> str | None:
    value = cell.get("metadata", {}).get(STAMP, {})
    return value.get(HASH) if isinstance(value, dict) else None


def has_chinese(text: str) -> bool:
    return bool(CJK.search(text))


def has_words(markdown: str) -> bool:
    """Whether a markdown cell has words to translate (not only links, code, HTML or formulas)."""
    return bool(WORD.search(NOT_WORDS.sub(" ", markdown)))


def relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


# --------------------------------------------------------------------------- code, without its words


class _Blank(ast.NodeTransformer):
    """Every string literal becomes "" (f-strings keep their {expressions} and format specs); IPython's
    magic and shell calls keep their command strings, which are code, not prose."""

    def visit_Constant(self, node: ast.Constant) -> ast.AST:  # noqa: N802 - ast's name
        return ast.Constant(value="") if isinstance(node.value, str) else node

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:  # noqa: N802
        parts: list[ast.expr] = []
        for part in node.values:
            if isinstance(part, ast.FormattedValue):
                part.value = self.visit(part.value)  # the format spec stays: it is code ("{x:.2f}")
                parts.append(part)
        return ast.JoinedStr(values=parts)

    def visit_Call(self, node: ast.Call) -> ast.AST:  # noqa: N802
        if isinstance(node.func, ast.Attribute) and node.func.attr in IPYTHON_CALLS and _is_get_ipython(node.func):
            node.func = self.visit(node.func)
            return node  # arguments kept as they are
        return self.generic_visit(node)


def _is_get_ipython(func: ast.Attribute) -> bool:
    call = func.value
    return isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "get_ipython"


def python_of(cell_source: str) -> str:
    """A code cell as plain Python: IPython's magics (%, %%, !) turned into calls, as IPython runs them."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(cell_source)


def code_shape(cell_source: str) -> str:
    """The cell's code with comments dropped and string literals blanked, as text (for comparing).

    A ``%%writefile NAME.py`` cell writes a program: its body is compared as Python (comments and strings a
    student reads are translated there too), and the magic line as code."""
    first, _, body = cell_source.partition("\n")
    if first.startswith("%%writefile ") and first.rstrip().endswith(".py"):
        return first.rstrip() + "\n" + code_shape(body)
    tree = _Blank().visit(ast.parse(python_of(cell_source)))
    return ast.unparse(ast.fix_missing_locations(tree))


def first_difference(english: str, chinese: str) -> str:
    """The first lines that differ between two code shapes, for the failure message."""
    removed, added = None, None
    for line in difflib.unified_diff(english.splitlines(), chinese.splitlines(), n=0, lineterm=""):
        if line.startswith("@@") and (removed or added):
            break
        if line.startswith("-") and not line.startswith("---") and removed is None:
            removed = line[1:].strip()
        elif line.startswith("+") and not line.startswith("+++") and added is None:
            added = line[1:].strip()
    return f"English `{removed or ''}`, Chinese `{added or ''}`"


def setup_language(code: str) -> str | None:
    """The ``language=`` given to ``course_utils.setup(...)`` in a cell's code, if the cell calls it."""
    try:
        tree = ast.parse(python_of(code))
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "setup":
            for keyword in node.keywords:
                if keyword.arg == "language" and isinstance(keyword.value, ast.Constant):
                    return keyword.value.value
    return None


# --------------------------------------------------------------------------- the checks


def check_pair(english: Path, chinese: Path, root: Path = ROOT) -> list[Problem]:
    """Everything that keeps ``chinese`` out of step with ``english`` (empty: in step)."""
    name = relative(chinese, root)
    en_nb, zh_nb = load(english), load(chinese)
    number = english.name[:2]
    problems = check_structure(name, en_nb, zh_nb)
    en_cells = {c.get("id"): c for c in en_nb["cells"]}
    for index, cell in enumerate(zh_nb["cells"]):
        original = en_cells.get(cell.get("id"))
        if original is None or original["cell_type"] != cell["cell_type"]:
            continue  # a structure problem, named above
        problems += check_cell(name, number, index, original, cell)
    return problems


def check_structure(name: str, en_nb: dict, zh_nb: dict) -> list[Problem]:
    """The same cells in the same order: ids, types and tags."""
    en_ids = [c.get("id") for c in en_nb["cells"]]
    zh_ids = [c.get("id") for c in zh_nb["cells"]]
    found = []
    fix = "Keep every English cell, in the same order, with the same id, type and tags (see " + GUIDE + ")."
    missing = [i for i in en_ids if i not in zh_ids]
    extra = [i for i in zh_ids if i not in en_ids]
    if missing:
        positions = ", ".join(f"{en_ids.index(i)} (id {i})" for i in missing)
        found.append(Problem(name, None, None, "structure", f"English cells {positions} have no Chinese cell", fix))
    if extra:
        positions = ", ".join(f"{zh_ids.index(i)} (id {i})" for i in extra)
        found.append(Problem(name, None, None, "structure", f"cells {positions} are not in the English notebook", fix))
    if not missing and not extra and en_ids != zh_ids:
        at = next(i for i, (a, b) in enumerate(zip(en_ids, zh_ids, strict=True)) if a != b)
        found.append(Problem(name, at, zh_ids[at], "structure",
                             f"the cells are in another order: the English cell {at} is id {en_ids[at]}", fix))
    if len(en_ids) != len(zh_ids):
        found.append(Problem(name, None, None, "structure",
                             f"{len(zh_ids)} cells, the English notebook has {len(en_ids)}", fix))
    en_cells = {c.get("id"): c for c in en_nb["cells"]}
    for index, cell in enumerate(zh_nb["cells"]):
        original = en_cells.get(cell.get("id"))
        if original is None:
            continue
        if original["cell_type"] != cell["cell_type"]:
            found.append(Problem(name, index, cell.get("id"), "structure",
                                 f"a {cell['cell_type']} cell; the English cell is {original['cell_type']}", fix))
        elif tags(original) != tags(cell):
            found.append(Problem(name, index, cell.get("id"), "structure",
                                 f"tags {tags(cell)}; the English cell has {tags(original)}", fix))
    return found


def check_cell(name: str, number: str, index: int, original: dict, cell: dict) -> list[Problem]:
    """One Chinese cell against its English cell: same code, a current stamp, Chinese words."""
    found = []
    cell_id = cell.get("id")
    if cell["cell_type"] == "code":
        try:
            en_shape, zh_shape = code_shape(source(original)), code_shape(source(cell))
        except SyntaxError as error:
            found.append(Problem(name, index, cell_id, "code", f"the code does not parse ({error.msg}, line "
                                 f"{error.lineno})", "Fix the Chinese cell's syntax."))
        else:
            if en_shape != zh_shape:
                difference = first_difference(en_shape, zh_shape)
                found.append(Problem(
                    name, index, cell_id, "code",
                    f"the code differs from the English cell beyond comments and strings: {difference}",
                    "Translate only comments and the strings a student reads; copy the code as it is.",
                ))
        if setup_language(source(original)) is not None and setup_language(source(cell)) != "zh-CN":
            found.append(Problem(name, index, cell_id, "setup",
                                 f'the setup call says language={setup_language(source(cell))!r}',
                                 'Write language="zh-CN" in the Chinese notebook\'s setup call.'))
    if generated(cell):
        return found  # tools/course_tools/links.py writes it for each edition: no stamp, no translation here
    stamp, current = stamp_of(cell), english_hash(original)
    if stamp is None:
        found.append(Problem(name, index, cell_id, "unstamped", "no translation stamp (not translated yet?)",
                             f"Translate it, then run `{SCRIPT} stamp {number} --cell {cell_id}` ({GUIDE})."))
    elif stamp != current:
        found.append(Problem(name, index, cell_id, "stale",
                             f"stale: the English cell changed since it was translated (stamp {stamp}, English now "
                             f"{current})",
                             f"Update the Chinese cell to match the English one, then run "
                             f"`{SCRIPT} stamp {number} --cell {cell_id}` ({GUIDE})."))
    if cell["cell_type"] == "markdown" and has_words(source(cell)) and not has_chinese(source(cell)):
        found.append(Problem(name, index, cell_id, "english", "a markdown cell with words but no Chinese text",
                             "Translate it into Chinese."))
    return found


def missing_translations(root: Path = ROOT) -> list[Problem]:
    """English notebooks without a Chinese one, and Chinese notebooks without an English one."""
    found = []
    for english in english_notebooks(root):
        if not chinese_path(english).is_file():
            found.append(Problem(relative(chinese_path(english), root), None, None, "missing",
                                 f"no Chinese notebook for {relative(english, root)}",
                                 f"Start one: `{SCRIPT} new {english.name[:2]}` ({GUIDE})."))
    for chinese in chinese_notebooks(root):
        if not english_path(chinese).is_file():
            found.append(Problem(relative(chinese, root), None, None, "missing",
                                 f"no English notebook {relative(english_path(chinese), root)}",
                                 "Every Chinese notebook translates an English one with the same file name."))
    return found


def status(root: Path = ROOT) -> list[Problem]:
    """Every problem in every notebook pair, then the missing notebooks."""
    found = []
    for chinese in chinese_notebooks(root):
        if english_path(chinese).is_file():
            found += check_pair(english_path(chinese), chinese, root)
    return found + missing_translations(root)


# --------------------------------------------------------------------------- the commands


def find_english(root: Path, number: str) -> Path:
    """The English notebook for ``05``, ``05_cnn_cpu_vs_gpu`` or ``05_cnn_cpu_vs_gpu.ipynb``."""
    wanted = Path(number).name.removesuffix(".ipynb")
    paths = english_notebooks(root)
    matches = [p for p in paths if wanted in (p.stem, p.stem[:2])]
    if len(matches) != 1:
        raise TranslationError(f"no English notebook {number!r} in {root / 'notebooks'} "
                               f"(choose from: {', '.join(p.stem[:2] for p in paths) or 'none'})")
    return matches[0]


def stamp(root: Path, number: str, cell_ids: list[str] | None = None) -> list[str]:
    """Record the current English hashes in the Chinese notebook (all cells, or those named); what changed."""
    english = find_english(root, number)
    chinese = chinese_path(english)
    if not chinese.is_file():
        raise TranslationError(f"no Chinese notebook {relative(chinese, root)}: start one with `{SCRIPT} new {number}`")
    en_cells = {c.get("id"): c for c in load(english)["cells"]}
    nb = load(chinese)
    zh_ids = [c.get("id") for c in nb["cells"]]
    unknown = [i for i in cell_ids or [] if i not in zh_ids or i not in en_cells]
    if unknown:
        raise TranslationError(f"{relative(chinese, root)}: no cell with id {', '.join(unknown)} in both editions "
                               f"(ids are in each cell's \"id\"; `{SCRIPT} status` lists the cells to update)")
    changed = []
    for index, cell in enumerate(nb["cells"]):
        original = en_cells.get(cell.get("id"))
        if original is None or generated(cell) or (cell_ids and cell.get("id") not in cell_ids):
            continue
        new = english_hash(original)
        if stamp_of(cell) != new:
            cell.setdefault("metadata", {})[STAMP] = {HASH: new}
            changed.append(f"{relative(chinese, root)} cell {index} (id {cell.get('id')}): stamped {new}")
    if changed:
        save(chinese, nb)
    return changed


def new(root: Path, number: str) -> Path:
    """Start a translation: the English notebook copied to notebooks/zh/, no stamps, its own generated cells."""
    english = find_english(root, number)
    chinese = chinese_path(english)
    if chinese.exists():
        raise TranslationError(f"{relative(chinese, root)} exists already: `{SCRIPT} status` shows what to update")
    nb = load(english)
    for cell in nb["cells"]:
        cell.get("metadata", {}).pop(STAMP, None)
        if cell["cell_type"] == "code" and 'language="en"' in source(cell):  # the setup call speaks Chinese
            cell["source"] = source(cell).replace('language="en"', 'language="zh-CN"').splitlines(keepends=True)
    chinese.parent.mkdir(parents=True, exist_ok=True)
    save(chinese, nb)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from course_tools import links as notebook_links  # lazy: the tools' package; `make links` writes these cells

    text = notebook_links.notebook_text(chinese, notebook_links.release(root))
    with open(chinese, "w", encoding="utf-8", newline="\n") as out:
        out.write(text)
    return chinese


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout (default: this one)")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("status", help="list stale and unstamped cells and missing notebooks; exit 1 if any")
    stamping = commands.add_parser("stamp", help="record the English cells' current hashes in a Chinese notebook")
    stamping.add_argument("notebook", help="its number (05) or name")
    stamping.add_argument("--cell", action="append", metavar="ID", help="only this cell (repeatable; default: all)")
    starting = commands.add_parser("new", help="start a Chinese notebook as an unstamped copy of the English one")
    starting.add_argument("notebook", help="its number (05) or name")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    try:
        if args.command == "status":
            found = status(root)
            for problem in found:
                print(problem)
            pairs = len([p for p in chinese_notebooks(root) if english_path(p).is_file()])
            print(f"{len(found)} to do in {pairs} Chinese notebook(s)" if found
                  else f"all {pairs} Chinese notebook(s) are in step with the English ones")
            return 1 if found else 0
        if args.command == "stamp":
            changed = stamp(root, args.notebook, args.cell)
            print("\n".join(changed) if changed else "nothing to stamp: every stamp is current")
            return 0
        path = new(root, args.notebook)
        print(f"started {relative(path, root)}: translate it, then `{SCRIPT} stamp {args.notebook}`")
        return 0
    except (TranslationError, OSError, json.JSONDecodeError) as error:
        print(f"translations: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
