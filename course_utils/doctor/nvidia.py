"""Read what NVIDIA's tools print: ``nvidia-smi`` (driver, the CUDA it supports, GPUs) and ``nvcc --version``.

The parsers take text - pasted, saved to a file, or captured live (``probes`` runs the tools) - and never raise:
what they cannot read becomes a ``status`` and a list of ``problems`` that the doctor turns into findings. They read
the ``nvidia-smi`` table in the layouts of the real outputs in ``tests/fixtures/nvidia`` (SOURCES.md lists them),
``nvidia-smi -q``, ``--query-gpu=... --format=csv``, a missing command or driver in any language (by the shape each
shell prints it: ``words.json``) and ``nvcc --version``; saved files in UTF-16 and CRLF too. A version cut
where the text ends ("Driver Version: 53") is reported as a cut capture, never read as a version.

The ``problems`` are sentences for people, in the language at the time of parsing (``COURSE_LANG``);
the tools' own words (``message``, a quoted first line) stay as the tools printed them.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field

from course_utils.core.i18n import translator
from course_utils.doctor.logs import decode_text, looks_binary
from course_utils.doctor.versions import read_data

_ = translator("doctor")

# The fields the doctor asks --query-gpu for (probes.probe_nvidia_smi), in this order.
QUERY_FIELDS = ("index", "name", "memory.total", "compute_cap")
_QUERY_ROW = re.compile(r"^\s*(?P<name>[^,]+?)\s*,\s*(?P<cc>\d+\.\d+)\s*,\s*(?P<driver>\d{3}\.\d+(?:\.\d+)?)\s*$")

_DRIVER = re.compile(r"(?:Driver|KMD) Version:[ \t]*(\S*)")
_CUDA = re.compile(r"CUDA (?:UMD )?Version:[ \t]*(\S*)")
_LOG_DRIVER = re.compile(r"^\s*Driver Version\s*:[ \t]*(\S*)", re.M)
_LOG_CUDA = re.compile(r"^\s*CUDA Version\s*:[ \t]*(\S*)", re.M)
_DRIVER_VALUE = re.compile(r"^\d+\.\d+(\.\d+)*$")
_PART_OF_A_VERSION = re.compile(r"^\d*\.?$")  # "", "53", "535." - what a cut leaves of "535.113.01"
_SMI_TOOL = re.compile(r"NVIDIA-SMI\s+(\d[\d.]*)")
_BUS_ID = r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]"
_GPU_ROW = re.compile(r"^\|\s*(\d+)\s+(.*?)\s+(On|Off|WDDM|TCC|N/A)\s*\|\s*(" + _BUS_ID + r")")
_MEMORY_TOTAL = re.compile(r"/\s*(\d+)\s*MiB")
_CUDA_VALUE = re.compile(r"^\d+\.\d+$")
_NVCC_RELEASE = re.compile(r"release\s+(\d+\.\d+)\s*,\s*V?(\d[\d.]*)")

_WORDS = read_data("words")["nvidia_smi"]  # what the tools and the shells print: failures, --query-gpu's field names
_NO_DRIVER = _WORDS["no_driver"]["words"]
_WINDOWS_WORDS = _WORDS["missing"]["windows_words"]
_MISSING = _WORDS["missing"]["words"] + _WINDOWS_WORDS
_WINDOWS_SHAPES = [re.compile(shape) for shape in _WORDS["missing"]["windows_shapes"]]
_MISSING_SHAPES = [re.compile(shape) for shape in _WORDS["missing"]["shapes"]] + _WINDOWS_SHAPES
_KNOWN_QUERY_FIELDS = frozenset(_WORDS["query_fields"]["words"])
_WINDOWS_PATH = re.compile(r"(?:^|[\s'\"(=>])[A-Za-z]:\\", re.M)


@dataclass
class Gpu:
    """One NVIDIA GPU as a tool reported it."""

    index: int | None
    name: str
    memory_mib: int | None
    driver_model: str | None = None  # "WDDM" or "TCC" on Windows; None elsewhere
    compute_capability: str | None = None  # only from --query-gpu on drivers that know the field

    def describe(self) -> str:
        """``"GPU 0: NVIDIA GeForce RTX 3060 (8188 MiB, WDDM)"``: its memory and (on Windows) its driver model."""
        memory = f"{self.memory_mib} MiB" if self.memory_mib is not None else _("memory unknown")
        return f"GPU {self.index}: {self.name} ({memory}{f', {self.driver_model}' if self.driver_model else ''})"


@dataclass
class SmiReport:
    """What ``nvidia-smi`` said.

    ``status``: "ok" (a driver answered), "no-devices" (driver loaded, no GPU found),
    "no-driver" (the tool cannot talk to the driver), "missing" (no nvidia-smi),
    "unreadable" (text this parser does not recognise), "empty" (no text at all).
    """

    status: str
    driver_version: str | None = None
    driver_cuda: str | None = None  # the newest CUDA the driver supports, as printed
    gpus: list[Gpu] = field(default_factory=list)
    tool_version: str | None = None  # "NVIDIA-SMI x" - can differ from the driver (WSL2)
    problems: list[str] = field(default_factory=list)
    message: str | None = None  # the tool's own words when it failed

    @property
    def no_driver_found(self) -> bool:
        """Nothing in the text shows an NVIDIA driver: no nvidia-smi, an empty capture (what ``nvidia-smi > smi.txt``
        leaves where the command is missing) or text that is not nvidia-smi's (binary junk, another file)."""
        return self.status in ("missing", "empty", "unreadable")


@dataclass
class NvccReport:
    """What ``nvcc --version`` said: the CUDA *toolkit* on PATH (not what the driver supports)."""

    status: str  # "ok", "missing", "unreadable" or "empty"
    release: str | None = None  # "11.7"
    build: str | None = None  # "11.7.64"
    problems: list[str] = field(default_factory=list)


def _text(raw: str | bytes | None) -> str:
    if raw is None:
        return ""
    if isinstance(raw, bytes):
        raw = decode_text(raw)  # UTF-8, or UTF-16 as Windows PowerShell saves it
    return raw.replace("\r\n", "\n").replace("\r", "\n")


def windows_evidence(raw: str | bytes | None) -> str | None:
    """What in a capture shows it was made on native Windows, in words (only Windows drivers print the WDDM/TCC
    column); None when nothing does."""
    text = _text(raw)
    if re.search(r"\b(WDDM|TCC)\b", text):
        return _("the WDDM/TCC driver-model column")
    if "Microsoft Windows [Version" in text:
        return _("the Windows console's banner")
    if _WINDOWS_PATH.search(text):
        return _("a Windows path or prompt in the text")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if any(shape.match(line) for line in lines[:5] for shape in _WINDOWS_SHAPES) or any(
        needle in text.lower() for needle in _WINDOWS_WORDS
    ):
        return _("a cmd or PowerShell error message")
    return None


def _first_line(text: str) -> str:
    """The first line with text, at most 100 characters, control characters shown as ``?`` (it is printed)."""
    for line in text.splitlines():
        if line.strip():
            line = "".join(c if c.isprintable() else "?" for c in line.strip())
            return line if len(line) <= 100 else line[:97] + "..."
    return ""


def _failure(text: str) -> SmiReport | None:
    """Recognise nvidia-smi's (or the shell's) failure messages."""
    lower = text.lower()
    if "no devices were found" in lower:
        return SmiReport("no-devices", message="No devices were found")
    for needle in _NO_DRIVER:
        if needle in lower:
            line = next(line.strip() for line in text.splitlines() if needle in line.lower())
            return SmiReport("no-driver", message=line)
    if ("nvidia-smi" in lower or len(text.strip().splitlines()) <= 3) and any(n in lower for n in _MISSING):
        return SmiReport("missing", message=_first_line(text))
    lines = [line.strip() for line in text.splitlines() if line.strip()][:3]  # it may follow the prompt it was typed at
    shown = next((line for line in lines if any(shape.match(line) for shape in _MISSING_SHAPES)), None)
    return None if shown is None else SmiReport("missing", message=_first_line(shown))


def _cut_at(match: re.Match | None, text: str) -> bool:
    """True when the ``NAME: value`` match is a version cut short where the text ends ("Driver Version: 53")."""
    return match is not None and bool(_PART_OF_A_VERSION.match(match.group(1))) and not text[match.end() :].strip()


def _version(name: str, match: re.Match, text: str, problems: list[str]) -> str | None:
    """The version a ``NAME: value`` match holds, when it is whole; else None, with the problem named."""
    value = match.group(1)
    if _DRIVER_VALUE.match(value):
        return value
    shown = f"{name}: {value}".strip()
    if _cut_at(match, text):
        problem = _("the capture looks cut: it ends at '{shown}', inside the version (a whole one has a dot part, "
                    "like 535.113.01 or 12.2)")
    elif _PART_OF_A_VERSION.match(value) and value:
        problem = _("'{shown}' is not a whole version (it has no dot part): the text looks cut or edited")
    else:
        problem = _("no readable '{name}' (it says {value})")
    problems.append(problem.format(shown=shown, name=name, value=repr(value)))
    return None


def memory_missing(index: int) -> str:
    """The problem when a GPU's memory is not in the text (a probe drops it once --query-gpu has read it)."""
    return _("GPU {index}: its memory is not in the text (the paste may be cut)").format(index=index)


def _parse_table(text: str) -> SmiReport:
    """The ``nvidia-smi`` table: its header (driver, CUDA), then a row and a memory line per GPU."""
    lines = [line.strip() for line in text.splitlines()]
    rows = [(i, match) for i, line in enumerate(lines) if (match := _GPU_ROW.match(line))]
    gpus = []
    for n, (i, match) in enumerate(rows):
        below = lines[i + 1 : min(rows[n + 1][0] if n + 1 < len(rows) else len(lines), i + 3)]
        memory = next((int(found.group(1)) for line in below if (found := _MEMORY_TOTAL.search(line))), None)
        gpus.append(Gpu(int(match.group(1)), match.group(2).strip(), memory, _driver_model(match.group(3))))
    tool = _SMI_TOOL.search(text)
    return _driver_report(text, _DRIVER.search(text), _CUDA.search(text), gpus if rows else None,
                          tool.group(1) if tool else None)


def _parse_log(text: str) -> SmiReport:
    """``nvidia-smi -q`` / ``-a``: "Driver Version : ...", one "Product Name" per GPU."""
    blocks = re.split(r"^GPU [0-9A-Fa-f]{4,8}:", text, flags=re.M)[1:]
    gpus = []
    for index, block in enumerate(blocks):
        name = re.search(r"^\s*Product Name\s*:\s*(.+?)\s*$", block, re.M)
        memory = re.search(r"FB Memory Usage\s*\n\s*Total\s*:\s*(\d+)\s*MiB", block)
        model = re.search(r"Driver Model\s*\n\s*Current\s*:\s*(\S+)", block)
        gpus.append(Gpu(index, name.group(1) if name else "unknown GPU", int(memory.group(1)) if memory else None,
                        _driver_model(model.group(1) if model else None)))
    return _driver_report(text, _LOG_DRIVER.search(text), _LOG_CUDA.search(text), gpus if blocks else None)


def _driver_model(value: str | None) -> str | None:
    return value if value in ("WDDM", "TCC") else None


def _driver_report(
    text: str, driver: re.Match | None, cuda: re.Match | None, gpus: list[Gpu] | None, tool: str | None = None
) -> SmiReport:
    """A driver's answer (the table or ``-q``): the driver and CUDA versions its header gives, when they are whole,
    its GPUs (None: none found), and what could not be read."""
    problems: list[str] = []
    report = SmiReport("ok", tool_version=tool, gpus=gpus or [], problems=problems)
    if driver is None:
        problems.append(_("no readable 'Driver Version' in the header"))
    else:  # "Driver Version" or, from driver 610 on, "KMD Version"
        report.driver_version = _version(driver.group(0).split(":")[0].strip(), driver, text, problems)
    if cuda is None:
        if not _cut_at(driver, text):  # a cut before the CUDA field is already said
            problems.append(_("this nvidia-smi output has no 'CUDA Version' field (older drivers did not print one)"))
    elif _CUDA_VALUE.match(cuda.group(1)):
        report.driver_cuda = cuda.group(1)
    elif _PART_OF_A_VERSION.match(cuda.group(1)):
        _version("CUDA Version", cuda, text, problems)
    else:
        problems.append(_("the driver reports 'CUDA Version: {value}', which is not a version").format(
            value=cuda.group(1)))
    problems += [memory_missing(gpu.index) for gpu in report.gpus if gpu.memory_mib is None]
    if gpus is None:
        problems.append(_("no GPU rows found below the header (the paste may be cut)"))
    return report


def _query_header(line: str) -> list[str] | None:
    """``"name, compute_cap, driver_version"`` -> the field names, when the line is a --query-gpu CSV header."""
    fields = [cell.strip().split(" [")[0] for cell in line.split(",")]
    known = len(fields) >= 2 and all(f in _KNOWN_QUERY_FIELDS for f in fields)
    if known and {"name", "gpu_name", "compute_cap"} & set(fields):
        return fields
    return None


def _unlabelled_rows(lines: list[str]) -> bool:
    """True for ``--query-gpu ... --format=csv,noheader`` rows of fields other than the doctor's: every line the
    same number (two or more) of comma-separated values, none of them a name with a compute capability and a driver."""
    counts = {len(next(csv.reader([line], skipinitialspace=True))) for line in lines}
    numbers = all(re.search(r"\d", line) for line in lines)  # nvidia-smi's rows always hold an index, MiB, %, ...
    return len(counts) == 1 and counts != {1} and numbers and not any(_QUERY_ROW.match(line) for line in lines)


def _parse_query(text: str) -> SmiReport | None:
    """``nvidia-smi --query-gpu=... --format=csv`` as the whole text: with a header naming the fields, or without
    one in the order the doctor asks for (name, compute_cap, driver_version). None if the text is not that."""
    lines = [line for line in text.splitlines() if line.strip()]
    fields = _query_header(lines[0]) if lines else None
    if fields is None:
        if lines and _unlabelled_rows(lines):  # a driver answered, but which value is which is not written
            return SmiReport("ok", problems=[_(
                "it is --query-gpu output without a header, so the doctor cannot tell which value is which; give it "
                "`nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv` or the plain `nvidia-smi` "
                "table")])
        if not lines or not all(_QUERY_ROW.match(line) for line in lines):
            return None
        fields = ["name", "compute_cap", "driver_version"]
    rows, problems = parse_query_gpu("\n".join(lines), tuple(fields))  # it drops the header
    drivers = sorted({row.get("driver_version") for row in rows} - {None})
    report = SmiReport("ok", drivers[0] if drivers else None, gpus=gpus_from_query(rows), problems=problems)
    if "driver_version" not in fields:
        problems.append(_("the --query-gpu output has no driver_version field: add it "
                          "(--query-gpu=name,compute_cap,driver_version)"))
    if not rows:
        problems.append(_("no GPU rows below the --query-gpu header (the paste may be cut)"))
    return report


def parse_nvidia_smi(raw: str | bytes | None) -> SmiReport:
    """Read ``nvidia-smi`` output (table, ``-q`` log, ``--query-gpu`` CSV, or an error message); never raises."""
    try:
        text = _text(raw)
        if not text.strip():
            return SmiReport("empty", problems=[_("no text to read")])
        if _DRIVER.search(text) and "NVIDIA-SMI" in text:
            return _parse_table(text)
        if _LOG_DRIVER.search(text):
            return _parse_log(text)
        query = _parse_query(text)
        if query is not None:
            return query
        failure = _failure(text)
        if failure is not None:
            return failure
        if looks_binary(text):
            return SmiReport("unreadable", problems=[_("it is binary data, such as an image or a compressed file")])
        first = _first_line(text).replace('"', "'")
        return SmiReport("unreadable", problems=[_('no nvidia-smi table found; the text starts: "{first}"').format(
            first=first)])
    except Exception as error:  # noqa: BLE001 - a parser of pasted text must not crash its caller
        return SmiReport("unreadable", problems=[_parse_failed(error)])


def _parse_failed(error: Exception) -> str:
    return _("could not parse the text: {error}").format(error=f"{type(error).__name__}: {error}")


def _value(cell: str) -> str | None:
    cell = cell.strip()
    if cell in ("", "N/A", "[N/A]", "[Not Supported]", "[Unknown Error]"):
        return None
    return re.sub(r"\s*(MiB|%|W|MHz)$", "", cell)


def parse_query_gpu(raw: str | bytes | None, fields: tuple[str, ...] | list[str]) -> tuple[list[dict], list[str]]:
    """Read ``nvidia-smi --query-gpu=<fields> --format=csv[,noheader][,nounits]``.

    Returns ``(rows, problems)``: one dict per GPU keyed by field name (values are strings,
    units stripped, ``None`` for "[N/A]"), and what could not be read. Never raises.
    """
    problems: list[str] = []
    rows: list[dict] = []
    try:
        lines = [line for line in _text(raw).splitlines() if line.strip()]
        if not lines:
            return [], [_("no text to read")]
        first = [c.strip().split(" [")[0] for c in lines[0].split(",")]
        if first == list(fields):
            lines = lines[1:]  # a header line ("name, memory.total [MiB]")
        for line in lines:
            cells = next(csv.reader([line], skipinitialspace=True))
            if len(cells) != len(fields):
                problems.append(_("expected {expected} values, got {got}: {line}").format(
                    expected=len(fields), got=len(cells), line=repr(line.strip()[:100])))
                continue
            rows.append({name: _value(cell) for name, cell in zip(fields, cells, strict=True)})
    except Exception as error:  # noqa: BLE001
        problems.append(_parse_failed(error))
    return rows, problems


def gpus_from_query(rows: list[dict]) -> list[Gpu]:
    """Turn ``parse_query_gpu`` rows (fields from QUERY_FIELDS, or ``gpu_name`` for ``name``) into ``Gpu`` records."""
    return [
        Gpu(int(row["index"]) if (row.get("index") or "").isdigit() else n,
            row.get("name") or row.get("gpu_name") or "unknown GPU",
            int(float(memory)) if (memory := row.get("memory.total")) and re.match(r"^\d+(\.\d+)?$", memory) else None,
            compute_capability=row.get("compute_cap"))
        for n, row in enumerate(rows)
    ]


def parse_nvcc(raw: str | bytes | None) -> NvccReport:
    """Read ``nvcc --version``: the CUDA toolkit release on PATH. Never raises: a regex and substring tests."""
    text = _text(raw)
    if not text.strip():
        return NvccReport("empty", problems=[_("no text to read")])
    match = _NVCC_RELEASE.search(text)
    if match:
        return NvccReport("ok", match.group(1), match.group(2))
    lower = text.lower()
    if any(needle in lower for needle in _MISSING):
        return NvccReport("missing", problems=[_first_line(text)])
    first = repr(_first_line(text))
    return NvccReport("unreadable", problems=[_("no 'release X.Y' line; it starts: {first}").format(first=first)])
