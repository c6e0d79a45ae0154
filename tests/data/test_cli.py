"""``course data status|fetch``: which source each dataset would use, and verified downloads."""

from __future__ import annotations

from course_utils import data
from course_utils.data import cli as data_cli

from .test_loaders import fake_mnist_npz


def test_status_says_which_source_each_dataset_would_use_offline():
    lines = data_cli.status()
    assert len(lines) == 2 and lines[0].startswith("mnist: 10,000 images") and "the course's bundled sample" in lines[0]
    assert lines[1].startswith("fashion-mnist")


def test_cli_fetch_refuses_offline(capsys):
    assert data_cli.main(["fetch", "mnist"]) == 2
    assert "COURSE_OFFLINE=1" in capsys.readouterr().err


def test_cli_fetch_downloads_and_the_checksum_rejects_a_wrong_file(monkeypatch, http_server, tmp_path, capsys):
    served = tmp_path / "served.npz"
    fake_mnist_npz(served)  # not MNIST's checksum
    http_server.routes["/mnist.npz"] = (served.read_bytes(), None)
    monkeypatch.setenv("COURSE_OFFLINE", "0")
    monkeypatch.setattr(data, "KERAS_ORIGIN", http_server.url + "/")
    assert data_cli.main(["fetch", "mnist", "--cache-dir", str(tmp_path / "c")]) == 1
    assert "expected " + data.MNIST_SHA256 in capsys.readouterr().err
    assert not (tmp_path / "c" / "mnist.npz").exists()


# -- bad input: each an error that names what to fix, never a traceback (issue 17) ---------------------------------


def test_status_calls_a_corrupt_file_corrupt_not_missing():
    cache = data.keras_cache_dir() / "mnist.npz"
    fake_mnist_npz(cache)  # not MNIST's checksum
    line = data_cli.status()[0]
    assert line.startswith("mnist: corrupt: checksum mismatch") and str(cache) in line
    assert "course data fetch" in line and "not available" not in line


def test_status_names_an_unreadable_file(monkeypatch, capsys):
    from .test_loaders import make_unreadable

    cache = data.keras_cache_dir() / "mnist.npz"
    monkeypatch.setattr(data, "MNIST_SHA256", fake_mnist_npz(cache))
    make_unreadable(monkeypatch, cache)
    assert data_cli.main(["status"]) == 0
    out = capsys.readouterr().out
    assert "mnist: unreadable" in out and "Permission denied" in out and str(cache) in out


def test_status_says_a_missing_data_dir_is_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_DATA_DIR", str(tmp_path / "typo"))
    lines = data_cli.status()
    assert any("COURSE_DATA_DIR" in line and "does not exist" in line for line in lines)


def test_fetch_into_a_file_given_as_the_cache_dir_is_refused(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("COURSE_OFFLINE", "0")
    monkeypatch.setattr(data, "KERAS_ORIGIN", "http://127.0.0.1:9/")  # never reached
    not_a_folder = tmp_path / "notes.txt"
    not_a_folder.write_text("mine", encoding="utf-8")
    assert data_cli.main(["fetch", "mnist", "--cache-dir", str(not_a_folder)]) == 2
    err = capsys.readouterr().err
    assert str(not_a_folder) in err and "not a folder" in err and "What to do:" in err
    assert not_a_folder.read_text(encoding="utf-8") == "mine"


def test_a_bad_offline_switch_is_an_error_for_both_commands(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_OFFLINE", "maybe")
    for command in (["status"], ["fetch", "mnist"]):
        assert data_cli.main(command) == 2
        err = capsys.readouterr().err
        assert "COURSE_OFFLINE" in err and "'maybe'" in err and "What to do:" in err
