"""The doctor's data files - versions.json, log_rules.json, findings.json and words.json - against their JSON
Schemas (course_utils/doctor/schemas/), what a schema cannot say (a pattern compiles for Python's re, a code is used
once, a shared text exists), and their translations: current, and keeping the English's commands and {fields}."""

from __future__ import annotations

import json
import re
import string
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from course_utils.core import variables
from course_utils.core.i18n import ENGLISH, LANGUAGES
from course_utils.doctor import versions
from course_utils.doctor.versions import english_hash, localized

SCHEMAS = versions.DATA_DIR / "schemas"
FILES = {name: versions.DATA_DIR / f"{name}.json" for name in ("versions", "log_rules", "findings", "words")}


def schema_problems(name: str, data: Any) -> list[str]:
    """``where: what`` for each way ``data`` breaks ``schemas/<name>.schema.json``; ``where`` names the entry."""
    registry = Registry(retrieve=lambda uri: Resource.from_contents(json.loads((SCHEMAS / uri).read_text("utf-8"))))
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    validator = Draft202012Validator(schema, registry=registry)
    return [f"{where(data, error.absolute_path)}: {error.message}" for error in validator.iter_errors(data)]


def where(data: Any, path: Any) -> str:
    """``rules[cudnn-mismatch].meaning``: a JSON path, each list entry named by its code or id when it has one."""
    out, node = "", data
    for key in path:
        node = node[key]
        if isinstance(key, int):
            name = node.get("code") or node.get("id") if isinstance(node, dict) else None
            out += f"[{name or key}]"
        else:
            out += f".{key}" if out else str(key)
    return out


def patterns(name: str, data: dict) -> Iterator[tuple[str, str]]:
    """``(where, pattern)``: each regular expression a data file gives Python's re."""
    if name == "log_rules":
        yield from ((f"prefixes[{n}].pattern", prefix["pattern"]) for n, prefix in enumerate(data["prefixes"]))
        for rule in data["rules"]:
            yield from ((f"rules[{rule.get('code')}].patterns", p) for p in rule.get("patterns", []))
    elif name == "versions":
        yield from ((f"gpus.families[{row['family']}]", row["pattern"]) for row in data["gpus"]["families"])
    elif name == "words":
        missing = data["nvidia_smi"]["missing"]
        yield from ((f"nvidia_smi.missing.{key}", p) for key in ("shapes", "windows_shapes") for p in missing[key])
        yield from (("linux_driver_packages.shapes", p) for p in data["linux_driver_packages"]["shapes"])


def problems(name: str, data: dict) -> list[str]:
    """Everything wrong with one data file: the schema's findings, then the checks a schema cannot make."""
    found = schema_problems(name, data)
    for place, pattern in patterns(name, data):
        try:
            re.compile(pattern)
        except re.error as error:
            found.append(f"{place}: {pattern!r} does not compile: {error}")
    entries = data.get("rules", [])
    keys = [entry.get("code") or entry.get("id") for entry in entries if isinstance(entry, dict)]
    found += [f"rules[{key}]: used by {keys.count(key)} entries" for key in sorted(set(keys)) if keys.count(key) > 1]
    return found


def shipped(name: str) -> dict:
    return json.loads(FILES[name].read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", FILES)
def test_the_shipped_files_pass_their_schema_and_checks(name):
    Draft202012Validator.check_schema(json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8")))
    assert problems(name, shipped(name)) == []


def _rule(data: dict, code: str) -> dict:
    return next(rule for rule in data["rules"] if rule.get("code", rule.get("id")) == code)


PLANTED: list[tuple[str, Callable[[dict], Any], str]] = [
    ("log_rules", lambda d: _rule(d, "cudnn-mismatch").pop("source"),
     "rules[cudnn-mismatch]: 'source' is a required property"),
    ("log_rules", lambda d: _rule(d, "ptxas-failed")["patterns"].append("ptxas (returned"),
     "rules[ptxas-failed].patterns: 'ptxas (returned' does not compile"),
    ("log_rules", lambda d: _rule(d, "cuinit-failed").update(code="cuinit-no-device"),
     "rules[cuinit-no-device]: used by 2 entries"),
    ("versions", lambda d: d["linux_gpu"][0].pop("cuda"), "linux_gpu[0]: 'cuda' is a required property"),
    ("findings", lambda d: d["checks"]["wsl2-no-dxg"].update(severity="fatal"),
     "checks.wsl2-no-dxg.severity: 'fatal' is not one of"),
    ("versions", lambda d: d["gpus"]["families"][0].update(pattern=r"\bRTX 50[5-9"),
     "gpus.families[Blackwell (GeForce RTX 50 series)]: '\\\\bRTX 50[5-9' does not compile"),
    ("words", lambda d: d["nvidia_smi"]["missing"]["shapes"].append("^nvidia-smi: ("),
     "nvidia_smi.missing.shapes: '^nvidia-smi: (' does not compile"),
    ("words", lambda d: d["nvidia_smi"]["no_driver"]["words"].append("Failed to initialize NVML"),
     "nvidia_smi.no_driver.words[4]: 'Failed to initialize NVML' does not match"),
]


@pytest.mark.parametrize("name, plant, said", PLANTED, ids=[said.split(":")[0] for _, _, said in PLANTED])
def test_a_planted_bad_entry_fails_with_a_message_that_names_it(name, plant, said):
    data = shipped(name)
    plant(data)
    found = problems(name, data)
    assert any(problem.startswith(said) for problem in found), found


# ----------------------------------------------------------------- the translations


def texts(node: Any, place: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every entry of a data file with a ``text`` for people, and where it is (``rules[wsl2]``)."""
    if isinstance(node, dict):
        if isinstance(node.get("text"), str):
            yield place, node
        for key, value in node.items():
            if key != "translations":
                yield from texts(value, f"{place}.{key}" if place else key)
    elif isinstance(node, list):
        for n, value in enumerate(node):
            name = (value.get("code") or value.get("id")) if isinstance(value, dict) else None
            yield from texts(value, f"{place}[{name or n}]")


def stale_translations(path: Path) -> list[str]:
    """Each ``text`` of a data file without a current translation into every language the course speaks."""
    found = []
    for place, entry in texts(json.loads(path.read_text(encoding="utf-8"))):
        for lang in (lang for lang in LANGUAGES if lang != ENGLISH):
            translation = entry.get("translations", {}).get(lang)
            want = english_hash(entry["text"])
            if not translation or not translation.get("text"):
                found.append(f"{place}: no {lang} translation")
            elif translation.get("en_sha256") != want:
                found.append(f"{place}: the {lang} translation is of an older English text (en_sha256 now {want})")
    return found


@pytest.mark.parametrize("name", FILES)
def test_every_text_has_a_current_translation_that_keeps_its_commands_and_fields(name):
    assert stale_translations(FILES[name]) == []
    for place, entry in texts(shipped(name)):
        english, chinese = entry["text"], entry["translations"]["zh-CN"]["text"]
        assert set(re.findall(r"`[^`]+`", english)) <= set(re.findall(r"`[^`]+`", chinese)), place
        fields = [{f for _, f, _, _ in string.Formatter().parse(text) if f} for text in (english, chinese)]
        assert fields[0] == fields[1], place


def test_a_changed_english_text_shows_the_english_until_the_translation_is_redone(tmp_path, monkeypatch):
    name, place = "log_rules", "rules[cudnn-mismatch].meaning"
    data = shipped(name)
    entry = _rule(data, "cudnn-mismatch")["meaning"]
    entry["text"] += " Changed."
    changed = tmp_path / f"{name}.json"
    changed.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    assert stale_translations(changed) == [
        f"{place}: the zh-CN translation is of an older English text (en_sha256 now {english_hash(entry['text'])})"]
    monkeypatch.setenv(variables.LANG, "zh-CN")
    assert localized(entry) == entry["text"]  # the English, not a translation of what it used to say
    del entry["translations"]
    changed.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    assert stale_translations(changed) == [f"{place}: no zh-CN translation"]
