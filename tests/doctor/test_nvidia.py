"""The nvidia-smi / nvcc parsers over real captured outputs (tests/fixtures/nvidia/SOURCES.md)."""

from __future__ import annotations

import pytest

from course_utils.doctor.nvidia import parse_nvcc, parse_nvidia_smi, parse_query_gpu

from ..conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "nvidia"
STATUSES = {"ok", "no-devices", "no-driver", "missing", "unreadable", "empty"}

def gpus(count: int, name: str, memory_mib: int, driver_model: str | None = None) -> list[tuple]:
    """``count`` identical GPUs, as the SMI table below lists them."""
    return [(index, name, memory_mib, driver_model) for index in range(count)]


# One capture per way the parser reads a table (tests/fixtures/nvidia/SOURCES.md; the others: test_doctor.py's sweep)
# file -> (status, driver_version, driver_cuda, [(index, name, memory_mib, driver_model), ...], problem substring)
SMI = {
    "smi_qa_post_windows_512.77_wddm.txt": ("ok", "512.77", "11.6", [(0, "NVIDIA GeForce ...", 6144, "WDDM")], None),
    "smi_linux_346.46_grid_k520.txt": ("ok", "346.46", None, [(0, "GRID K520", 4095, None)], "no 'CUDA Version'"),
    "smi_linux_515.48.07_3x_a100.txt": ("ok", "515.48.07", "11.7", gpus(3, "NVIDIA A100-SXM...", 81920), None),
    "smi_575.64.03_cuda_na.txt": (
        "ok", "575.64.03", None, [(0, "NVIDIA GeForce RTX 5070", 12227, None)], "'CUDA Version: N/A'"),
    "smi_linux_610.43.02_kmd_2x_b200.txt": ("ok", "610.43.02", "13.3", gpus(2, "NVIDIA B200", 183359), None),
    "smi_wsl2_546.80_cuda_err.txt": (
        "ok", "546.80", None, [(0, "NVIDIA GeForce RTX 3060 ...", 6144, None)], "'CUDA Version: ERR!'"),
    "smi_windows_538.15_tcc_cut.txt": ("ok", "538.15", "12.2", [(0, "Tesla P4", None, "TCC")], "GPU 0: its memory"),
    "smi_q_wsl2_510.06.txt": (
        "ok", "510.06", "11.6", [(0, "NVIDIA GeForce GTX 1650 Ti with Max-Q Design", None, "WDDM")],
        "GPU 0: its memory"),
    # constructed (SOURCES.md): the 517.48 capture as Windows PowerShell 5.1's `>` saves it, UTF-16 LE with a BOM
    "smi_windows_517.48_2x_wddm_utf16le.txt": (
        "ok", "517.48", "11.7", gpus(2, "NVIDIA GeForce ...", 11264, "WDDM"), None),
    # constructed: a paste cut inside "535.113.01" - not driver 53
    "smi_linux_535.113.01_cut_in_driver_version.txt": (
        "ok", None, None, [], "the capture looks cut: it ends at 'Driver Version: 53'"),
    "smi_no_devices.txt": ("no-devices", None, None, [], None),
    "smi_no_driver.txt": ("no-driver", None, None, [], None),
    "smi_missing_command_not_found.txt": ("missing", None, None, [], None),
}

NVCC = {
    "nvcc_qa_post_windows_11.7.txt": ("ok", "11.7", "11.7.64"),
    "nvcc_linux_12.6.txt": ("ok", "12.6", "12.6.77"),
    "nvcc_missing_ubuntu.txt": ("missing", None, None),
}


def text_of(name: str) -> str:
    data = (FIXTURES / name).read_bytes()
    return data.decode("utf-16") if data.startswith(b"\xff\xfe") else data.decode("utf-8")


@pytest.mark.parametrize("name", sorted(SMI))
def test_nvidia_smi_fixture(name):
    status, driver, cuda, gpus, problem = SMI[name]
    report = parse_nvidia_smi((FIXTURES / name).read_bytes())  # as `course doctor --nvidia-smi FILE` reads it
    assert report.status == status
    assert (report.driver_version, report.driver_cuda) == (driver, cuda)
    assert [(g.index, g.name, g.memory_mib, g.driver_model) for g in report.gpus] == gpus
    if problem is None:
        assert report.problems == []
    else:
        assert any(problem in p for p in report.problems), report.problems


def test_failures_keep_the_tools_own_words():  # a shell's "not found": test_command_not_found_is_recognised_...
    assert parse_nvidia_smi((FIXTURES / "smi_no_driver.txt").read_text()).message.startswith(
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"
    )


def test_tool_version_is_not_the_driver_version():
    report = parse_nvidia_smi((FIXTURES / "smi_wsl2_555.99_rtx4070.txt").read_text())
    assert (report.tool_version, report.driver_version) == ("555.52.01", "555.99")
    assert report.gpus[0].name.endswith("...")  # the table cuts long names


@pytest.mark.parametrize("name", sorted(NVCC))
def test_nvcc_fixture(name):
    status, release, build = NVCC[name]
    report = parse_nvcc((FIXTURES / name).read_text())
    assert (report.status, report.release, report.build) == (status, release, build)


@pytest.mark.parametrize(
    "raw, status",
    [
        (None, "empty"),
        (b"\x00\xff\xfe garbage \x89PNG", "unreadable"),
        ("Hello, this is not nvidia-smi output\nat all", "unreadable"),
    ],
)
def test_unreadable_text_is_a_status_not_a_crash(raw, status):
    report = parse_nvidia_smi(raw)
    assert report.status == status and report.problems and report.driver_version is None


def test_header_without_readable_values_says_so():
    report = parse_nvidia_smi("| NVIDIA-SMI 999 Driver Version: ???  CUDA Version: ???")
    assert report.driver_version is None and report.driver_cuda is None
    assert any("Driver Version" in p for p in report.problems)
    assert any("no GPU rows" in p for p in report.problems)


@pytest.mark.parametrize("name", sorted(SMI))
def test_any_cut_of_a_real_output_parses_without_error(name):
    lines = text_of(name).splitlines(keepends=True)
    for n in range(len(lines) + 1):
        for text in ("".join(lines[:n]), "".join(lines[n:]), "".join(lines[:n])[:-7]):
            report = parse_nvidia_smi(text)
            assert report.status in STATUSES
            assert all(g.memory_mib is None or g.memory_mib > 0 for g in report.gpus)


@pytest.mark.parametrize("raw", [None, "", b"\xff\xfe", "nvcc: NVIDIA (R) Cuda compiler driver\n(cut here)"])
def test_nvcc_unreadable_is_a_status(raw):
    assert parse_nvcc(raw).status in {"empty", "unreadable"}


def test_query_gpu_not_available_values_become_none():
    fields = ("memory.total", "memory.free", "memory.used", "temperature.gpu", "fan.speed", "utilization.gpu",
              "utilization.memory")
    rows, problems = parse_query_gpu((FIXTURES / "query_i3pystatus_na.csv").read_text(), fields)
    assert problems == [] and rows[0]["fan.speed"] is None and rows[0]["memory.total"] == "2004"


def test_query_gpu_header_units_and_bad_rows():
    # The header/units form (--format=csv) as nvidia-smi prints it; a wrong field count is a problem, not a crash.
    text = "index, name, memory.total [MiB]\n0, NVIDIA H200, 143771 MiB\n1, NVIDIA H200\n"
    rows, problems = parse_query_gpu(text, ("index", "name", "memory.total"))
    assert rows == [{"index": "0", "name": "NVIDIA H200", "memory.total": "143771"}]
    assert len(problems) == 1 and "expected 3 values, got 2" in problems[0]
    assert parse_query_gpu(None, ("name",)) == ([], ["no text to read"])


# The command the doctor asks for when a GPU's name does not tell its generation, given as the whole nvidia-smi text.
# Captured: a Quadro P620 on driver 580.173.02 - https://github.com/PeterSuh-Q3/syno_nvidia_driver (README.md).
P620_QUERY = "name, compute_cap, driver_version\nQuadro P620, 6.1, 580.173.02\n"


@pytest.mark.parametrize("text, status, driver, gpus, problem", [
    (P620_QUERY, "ok", "580.173.02", [(0, "6.1", None)], None),
    # constructed in nvidia-smi's format: --format=csv with a unit column, then --format=csv,noheader
    ("name, compute_cap, driver_version, memory.total [MiB]\n" + "NVIDIA H100 80GB HBM3, 9.0, 570.86.15, 81559 MiB\n"
     * 2, "ok", "570.86.15", [(0, "9.0", 81559), (1, "9.0", 81559)], None),
    ("NVIDIA GeForce RTX 5090, 12.0, 575.57.08\n", "ok", "575.57.08", [(0, "12.0", None)], None),
    ("name, compute_cap\nTesla T4, 7.5\n", "ok", None, [(0, "7.5", None)], "driver_version"),
    ("name, compute_cap, driver_version\n", "ok", None, [], "no GPU rows"),
    *((text, "unreadable", None, [], "") for text in ("a, b, c\nd, e, f\n", "name, colour\nkiwi, green\n")),
])
def test_query_csv_as_nvidia_smi_text(text, status, driver, gpus, problem):
    report = parse_nvidia_smi(text)
    assert (report.status, report.driver_version, report.driver_cuda) == (status, driver, None)
    assert [(g.index, g.compute_capability, g.memory_mib) for g in report.gpus] == gpus
    assert any(problem in p for p in report.problems) if problem is not None else report.problems == []


# --- captures as people really save and paste them (issue 17) ------------------------------------------------------


def test_a_utf16_capture_without_its_byte_order_mark_is_read_too():
    # with its mark (PowerShell 5.1's `nvidia-smi > smi.txt`): the SMI table, the same values as the UTF-8 capture
    no_bom = (FIXTURES / "smi_windows_517.48_2x_wddm_utf16le.txt").read_bytes()[2:]
    assert parse_nvidia_smi(no_bom) == parse_nvidia_smi((FIXTURES / "smi_windows_517.48_2x_wddm.txt").read_bytes())


CUT = "| NVIDIA-SMI 535.113.01             Driver Version: "


@pytest.mark.parametrize("text, driver, cuda, quoted", [
    *((CUT + value, None, None, f"'Driver Version: {value}".rstrip() + "'") for value in ("53", "")),
    ("| NVIDIA-SMI 535  Driver Version: 535   CUDA Version: 12.2 |\n", None, "12.2", "'Driver Version: 535'"),
    ("| NVIDIA-SMI 535.113.01    Driver Version: 535.113.01    CUDA Version: 12", "535.113.01", None,
     "'CUDA Version: 12'"),
    ("==============NVSMI LOG==============\n\nDriver Version                : 51", None, None, "'Driver Version: 51'"),
])
def test_a_version_cut_short_is_not_read_and_its_problem_quotes_the_cut(text, driver, cuda, quoted):
    report = parse_nvidia_smi(text)
    assert (report.driver_version, report.driver_cuda) == (driver, cuda)
    assert quoted in report.problems[0], report.problems  # the cut first, not "no 'CUDA Version'" (an old driver)


@pytest.mark.parametrize(
    "text",
    [
        "'nvidia-smi' 不是内部或外部命令，也不是可运行的程序\n或批处理文件。",  # cmd, Chinese
        'Der Befehl "nvidia-smi" ist entweder falsch geschrieben oder\nkonnte nicht gefunden werden.',  # cmd, German
        "nvidia-smi : Die Benennung \"nvidia-smi\" wurde nicht als Name eines Cmdlet erkannt.",  # PowerShell 5.1
        "-bash: line 1: nvidia-smi: any language",  # bash names a command without a path only when it is not found
    ],
)
def test_command_not_found_is_recognised_by_its_shape_in_any_language(text):
    report = parse_nvidia_smi(text)
    assert report.status == "missing" and report.message == text.splitlines()[0]


def test_bash_naming_a_path_is_not_taken_for_a_missing_command():
    assert parse_nvidia_smi("bash: /usr/bin/nvidia-smi: Permission denied").status != "missing"

