"""Verified atomic downloads: a bad or broken transfer never replaces a good file."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from course_utils.data.download import fetch_verified, sha256_of
from course_utils.errors import DataError

GOOD = b"the real file " * 1000
GOOD_SHA = hashlib.sha256(GOOD).hexdigest()


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_good_download_lands_verified(http_server, tmp_path):
    http_server.routes["/f.bin"] = (GOOD, None)
    dest = tmp_path / "cache" / "f.bin"
    assert fetch_verified(http_server.url + "/f.bin", dest, GOOD_SHA) == dest
    assert dest.read_bytes() == GOOD
    assert sha256_of(dest) == GOOD_SHA
    assert leftovers(dest.parent) == []


def test_wrong_checksum_keeps_the_good_file(http_server, tmp_path):
    dest = tmp_path / "f.bin"
    dest.write_bytes(b"previous good copy")
    http_server.routes["/f.bin"] = (b"something else entirely", None)
    with pytest.raises(DataError) as info:
        fetch_verified(http_server.url + "/f.bin", dest, GOOD_SHA)
    assert "expected " + GOOD_SHA in str(info.value)
    assert "was not changed" in info.value.fix
    assert dest.read_bytes() == b"previous good copy"
    assert leftovers(tmp_path) == []


def test_truncated_transfer_is_rejected(http_server, tmp_path):
    dest = tmp_path / "f.bin"
    dest.write_bytes(b"previous good copy")
    http_server.routes["/f.bin"] = (GOOD[:100], len(GOOD))  # server promises more than it sends
    with pytest.raises(DataError):
        fetch_verified(http_server.url + "/f.bin", dest, GOOD_SHA, timeout=5)
    assert dest.read_bytes() == b"previous good copy"
    assert leftovers(tmp_path) == []


def test_http_error_names_the_url(http_server, tmp_path):
    with pytest.raises(DataError) as info:
        fetch_verified(http_server.url + "/missing", tmp_path / "f.bin", GOOD_SHA)
    assert "/missing" in info.value.what
    assert not (tmp_path / "f.bin").exists()
    assert leftovers(tmp_path) == []


def test_custom_digest_checks_content(http_server, tmp_path):
    import gzip

    payload = b"idx payload"
    http_server.routes["/x.gz"] = (gzip.compress(payload), None)
    content_sha = hashlib.sha256(payload).hexdigest()

    def digest(path: Path) -> str:
        assert path.name.endswith(".gz"), "the temporary file keeps the .gz suffix"
        return hashlib.sha256(gzip.decompress(path.read_bytes())).hexdigest()

    dest = fetch_verified(http_server.url + "/x.gz", tmp_path / "x.gz", content_sha, digest_of=digest)
    assert gzip.decompress(dest.read_bytes()) == payload
