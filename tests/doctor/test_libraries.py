"""course_utils.doctor.libraries: the pip NVIDIA wheels' libraries load, and a system CUDA in their way is named."""

from __future__ import annotations

import importlib
import shutil
import sys
from pathlib import Path

import pytest

from course_utils.core.errors import ChildError
from course_utils.doctor import libraries as libraries_module
from course_utils.doctor.libraries import find_pip_libraries, load_libraries, loader_conf_dirs, nvidia_library_checks
from course_utils.doctor.model import check_findings

from .file_tree import codes, touch

ON_LINUX = sys.platform.startswith("linux")


def wheel(site: Path, folder: str, name: str, package: str | None = None, text: str = "not a shared library") -> Path:
    """A file named like a pip NVIDIA wheel's library (a fake one does not load), with its RECORD entry."""
    lib = touch(site / "nvidia" / folder / "lib" / name, text)
    if package:
        record = site / f"{package.replace('-', '_')}-1.0.dist-info" / "RECORD"
        touch(record, f"nvidia/{folder}/lib/{name},sha256=x,1\n")
    return lib


def loadable_shared_object() -> Path:
    """A real shared object that loads in any Python process: one of the interpreter's own extension modules."""
    for name in ("_ctypes", "_json", "zlib", "_struct"):
        path = getattr(importlib.import_module(name), "__file__", None)
        if path and ".so" in path:
            return Path(path)
    pytest.fail("no extension module of this Python is a shared object")


def test_a_library_that_does_not_load_is_named_with_its_package(tmp_path):
    site = tmp_path / "site-packages"
    wheel(site, "cudnn", "libcudnn.so.9", "nvidia-cudnn-cu12")
    wheel(site, "cublas", "libcublas.so.12")
    notes = nvidia_library_checks([site], ld_library_path="", ld_so_conf=None)
    assert codes(notes) == ["nvidia-lib-fails-to-load", "nvidia-lib-fails-to-load"]
    cublas, cudnn = notes  # load order: cuBLAS before cuDNN
    assert "libcudnn.so.9" in cudnn.text and "nvidia-cudnn-cu12" in cudnn.text  # the file and its package
    assert "libcublas.so.12" in cublas.text and "nvidia/cublas" in cublas.text  # no RECORD: its wheel folder
    [finding, _] = check_findings(notes)
    assert finding.severity == "error" and f"{sys.executable} -m pip install --force-reinstall" in finding.fix


@pytest.mark.skipif(not ON_LINUX, reason="the pip NVIDIA wheels and this check exist on Linux only")
def test_real_libraries_load(tmp_path):
    site = tmp_path / "site-packages"
    real = loadable_shared_object()
    shutil.copy(real, wheel(site, "cuda_runtime", "libcudart.so.12"))
    shutil.copy(real, wheel(site, "cublas", "libcublasLt.so.12"))
    (site / "nvidia" / "cublas" / "lib" / "libcublasLt.so").symlink_to("libcublasLt.so.12")  # the same file: once
    notes = nvidia_library_checks([site], ld_library_path="", ld_so_conf=None)
    assert codes(notes) == ["nvidia-libs-load"] and "cublas, cuda_runtime" in notes[0].text


def test_a_crash_while_loading_names_the_library_and_does_not_raise(monkeypatch):
    calls = []

    def fake_run_python(target, payload, **kwargs):
        calls.append(payload["paths"])
        if any("crash" in p for p in payload["paths"]):
            raise ChildError("the child died", "fix", ended="signal SIGSEGV", returncode=-11)
        return type("Run", (), {"value": [{"path": p, "ok": True, "error": None} for p in payload["paths"]]})()

    monkeypatch.setattr("course_utils.core.child.run_python", fake_run_python)  # imported when the check runs
    results = load_libraries(["/a/libcudart.so.12", "/b/libcrash.so.9"])
    assert calls == [["/a/libcudart.so.12", "/b/libcrash.so.9"], ["/a/libcudart.so.12"], ["/b/libcrash.so.9"]]
    assert [r["ok"] for r in results] == [True, False]
    assert results[1]["crashed"] and "signal SIGSEGV" in results[1]["error"]


def test_a_crashed_load_becomes_its_own_finding(tmp_path, monkeypatch):
    site = tmp_path / "site-packages"
    lib = wheel(site, "nccl", "libnccl.so.2", "nvidia-nccl-cu12")
    crashed = [{"path": str(lib), "ok": False, "error": "the process ended by signal SIGSEGV", "crashed": True}]
    monkeypatch.setattr(libraries_module, "load_libraries", lambda paths: crashed)
    [note] = nvidia_library_checks([site], ld_library_path="", ld_so_conf=None)
    assert note.code == "nvidia-lib-load-crashed" and "SIGSEGV" in note.text and "nvidia-nccl-cu12" in note.text
    assert check_findings([note])[0].severity == "error"


def test_pip_libraries_in_load_order_each_file_once(tmp_path):
    site = tmp_path / "site-packages"
    for folder, name in [
        ("cudnn", "libcudnn.so.9"),
        ("cuda_runtime", "libcudart.so.12"),
        ("nvjitlink", "libnvJitLink.so.12"),
    ]:
        wheel(site, folder, name)
    (site / "nvidia" / "cudnn" / "lib" / "libcudnn.so").symlink_to("libcudnn.so.9")
    touch(site / "nvidia" / "cudnn" / "lib" / "README.txt")
    touch(site / "nvidia" / "cudnn" / "include" / "cudnn.h")
    found = find_pip_libraries([site, site])
    assert [lib.path.name for lib in found] == ["libcudart.so.12", "libnvJitLink.so.12", "libcudnn.so"]
    assert find_pip_libraries([tmp_path / "empty"]) == []


def test_no_pip_libraries_matters_only_next_to_a_gpu(tmp_path):
    assert nvidia_library_checks([tmp_path], ld_library_path="", ld_so_conf=None, gpu=False) == []
    [note] = nvidia_library_checks([tmp_path], ld_library_path="", ld_so_conf=None, gpu=True)
    assert note.code == "nvidia-libs-not-installed"
    assert 'pip install "tensorflow[and-cuda]"' in check_findings([note])[0].fix


def test_a_system_cuda_on_ld_library_path_shadows_the_pip_wheels(tmp_path, monkeypatch):
    monkeypatch.setattr(
        libraries_module,
        "load_libraries",
        lambda paths: [{"path": p, "ok": True, "error": None, "crashed": False} for p in paths],
    )
    site = tmp_path / "site-packages"
    wheel(site, "cublas", "libcublas.so.12")
    wheel(site, "cuda_runtime", "libcudart.so.12")
    wheel(site, "cudnn", "libcudnn.so.9")
    system = tmp_path / "usr/local/cuda-12.2/lib64"
    touch(system / "libcublas.so.12.2.5.6")
    touch(system / "libcublas.so.12")  # the soname the loader looks for
    old = tmp_path / "usr/local/cuda-11.8/lib64"
    touch(old / "libcudart.so.11.0")
    conf_dir = tmp_path / "etc/ld.so.conf.d"
    cudnn_dir = tmp_path / "usr/lib/cudnn9"
    touch(cudnn_dir / "libcudnn.so.9")
    touch(conf_dir / "zz-cudnn.conf", f"# cuDNN from a .deb\n{cudnn_dir}\n")
    conf = touch(tmp_path / "etc/ld.so.conf", "include ld.so.conf.d/*.conf\n")
    ld_path = f"{system}:{old}:{site / 'nvidia/cublas/lib'}:{tmp_path / 'missing'}"
    notes = nvidia_library_checks([site], ld_library_path=ld_path, ld_so_conf=conf)
    assert codes(notes) == [
        "nvidia-libs-load",
        "system-cuda-shadows-pip",
        "system-cuda-on-library-path",
        "system-cuda-on-library-path",
    ]
    assert str(system) in notes[1].text and "libcublas.so.12" in notes[1].text
    assert str(old) in notes[2].text and "libcudart.so.11.0" in notes[2].text and "libcudart.so.12" in notes[2].text
    assert str(cudnn_dir) in notes[3].text and "libcudnn.so.9" in notes[3].text
    findings = {f.code: f for f in check_findings(notes)}
    assert findings["system-cuda-shadows-pip"].severity == "warning"
    assert "LD_LIBRARY_PATH" in findings["system-cuda-shadows-pip"].fix
    assert findings["system-cuda-on-library-path"].severity == "info"


def test_the_loader_configuration_follows_includes(tmp_path):
    touch(tmp_path / "conf.d/a.conf", "/opt/a\n# comment\n\n/opt/b  # trailing comment\n")
    touch(tmp_path / "abs/b.conf", "/opt/c\n")
    conf = touch(tmp_path / "ld.so.conf", f"include conf.d/*.conf\ninclude {tmp_path}/abs/*.conf\n/opt/a\nhwcap 0 x\n")
    assert loader_conf_dirs(conf) == [Path("/opt/a"), Path("/opt/b"), Path("/opt/c")]
    assert loader_conf_dirs(tmp_path / "absent.conf") == []
