"""What a GPU does that a CPU never shows, emulated on the CPU, against the lessons' own cells.

- TensorFloat-32: on compute capability 8.0+ GPUs, float32 matrix products round their inputs to 10 mantissa
  bits. Notebook 02's ``to_tf32`` emulates that; its check (relative error up to 2**-10) must accept such a
  product where ``np.allclose(rtol=1e-3, atol=1e-3)`` rejects it, and must still reject a real mistake.
- Asynchronous execution: a GPU op returns when the work is queued. Notebook 02's timing cell runs here
  against a stand-in GPU on a virtual clock: it must time the kernel (a sync, no copy) and the copy apart.
"""

from __future__ import annotations

import contextlib
import json
import time
from types import SimpleNamespace

import numpy as np
import pytest

from .conftest import ROOT

NOTEBOOK = ROOT / "notebooks" / "02_verify_gpu.ipynb"


def cell(cell_id: str) -> str:
    """The source of notebook 02's code cell ``cell_id``."""
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    (found,) = [c for c in cells if c["id"] == cell_id]
    return "".join(found["source"])


def functions_of_the_tf32_cell() -> dict:
    """``to_tf32`` and ``relative_error`` as the notebook defines them (the cell's definitions only)."""
    source = cell("tf32")
    definitions = source[: source.index("\nexact = ")]
    namespace: dict = {"np": np}
    exec(definitions, namespace)  # noqa: S102 - the notebook's own functions
    return namespace


# ----------------------------------------------------------------------------- TensorFloat-32


def test_to_tf32_keeps_ten_mantissa_bits_rounding_to_nearest():
    to_tf32 = functions_of_the_tf32_cell()["to_tf32"]
    one_ulp = 2.0**-10  # the spacing of TF32 numbers in [1, 2)
    values = np.array([1.0, 1.0 + one_ulp, 1.0 + 0.4 * one_ulp, 1.0 + 0.6 * one_ulp, -3.0 - 0.6 * 2 * one_ulp],
                      dtype=np.float32)
    assert to_tf32(values).tolist() == [1.0, 1.0 + one_ulp, 1.0, 1.0 + one_ulp, -3.0 - 2 * one_ulp]
    bits = to_tf32(np.random.default_rng(0).standard_normal(1000).astype(np.float32)).view(np.uint32)
    assert np.all(bits & 0x1FFF == 0), "the 13 lowest mantissa bits of every TF32 number are zero"


@pytest.mark.parametrize("n", [256, 1024, 2048])
def test_the_notebook_s_check_accepts_tf32_where_allclose_fails(n):
    f = functions_of_the_tf32_cell()
    rng = np.random.default_rng(n)
    a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    exact = a.astype(np.float64) @ b.astype(np.float64)
    on_ampere = f["to_tf32"](a) @ f["to_tf32"](b)
    outside = np.mean(~np.isclose(on_ampere, exact, rtol=1e-3, atol=1e-3))
    assert 0.10 < outside < 0.25, "the naive check fails for about one element in six"
    error = f["relative_error"](on_ampere, exact)
    assert 2e-4 < error < 2**-10 / 2, "TF32 passes with a margin of two"
    assert f["relative_error"](a @ b, exact) < 1e-6  # float32 itself


def test_the_notebook_s_check_rejects_what_is_not_the_product():
    f = functions_of_the_tf32_cell()
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((512, 512), dtype=np.float32) for _ in range(2))
    exact = a.astype(np.float64) @ b.astype(np.float64)
    bfloat16 = (a.view(np.uint32) & 0xFFFF0000).view(np.float32) @ (b.view(np.uint32) & 0xFFFF0000).view(np.float32)
    assert f["relative_error"](bfloat16, exact) > 2**-10, "7 mantissa bits are not TF32's 10"
    assert f["relative_error"](a @ b.T, exact) > 2**-10
    one_column_lost = exact.copy()
    one_column_lost[:, 7] = 0
    assert f["relative_error"](one_column_lost, exact) > 2**-10


# ----------------------------------------------------------------------------- asynchronous execution

KERNEL_S, COPY_S, LAUNCH_S = 0.004, 0.010, 0.00001


class StandInGPU:
    """A GPU on a virtual clock: matmul queues a kernel and returns at once; a sync waits for the queue;
    ``.numpy()`` waits for its kernel, then copies. ``time.perf_counter`` reads the clock."""

    def __init__(self) -> None:
        self.now = 0.0
        self.busy_until = 0.0
        self.syncs = 0

    def tensor(self, ready_at: float) -> SimpleNamespace:
        def numpy() -> np.ndarray:
            self.now = max(self.now, ready_at) + COPY_S
            return np.zeros((2, 2), np.float32)
        return SimpleNamespace(numpy=numpy, device="/job:localhost/replica:0/task:0/device:GPU:0")

    def matmul(self, x, y):
        self.busy_until = max(self.now, self.busy_until) + KERNEL_S
        self.now += LAUNCH_S
        return self.tensor(self.busy_until)

    def sync_devices(self) -> None:
        self.syncs += 1
        self.now = max(self.now, self.busy_until)

    def tf(self) -> SimpleNamespace:
        return SimpleNamespace(
            identity=lambda values: self.tensor(self.now),
            linalg=SimpleNamespace(matmul=self.matmul),
            device=lambda name: contextlib.nullcontext(),
            config=SimpleNamespace(list_logical_devices=lambda: [SimpleNamespace(name="/device:GPU:0")]),
            test=SimpleNamespace(experimental=SimpleNamespace(sync_devices=self.sync_devices)),
        )


def run_timing_cell(monkeypatch, source: str) -> tuple[StandInGPU, list]:
    gpu = StandInGPU()
    monkeypatch.setattr(time, "perf_counter", lambda: gpu.now)
    namespace = {"tf": gpu.tf(), "np": np, "SEED": 0, "MATMUL_SIZE": 8, "REPEATS": 5}
    exec(source, namespace)  # noqa: S102 - the notebook's own timing cell, against the stand-in GPU
    return gpu, namespace["rows"]


def test_the_timing_cell_times_the_kernel_and_the_copy_apart(monkeypatch, capsys):
    gpu, rows = run_timing_cell(monkeypatch, cell("timing"))
    ((asked, ran, ms, copy_ms, _),) = rows
    assert (asked, ran.endswith("GPU:0")) == ("/device:GPU:0", True)
    assert ms == pytest.approx(1e3 * KERNEL_S, rel=0.01), "the kernel's time, waited for with a sync"
    assert copy_ms == pytest.approx(1e3 * COPY_S, rel=0.01), "the copy, timed on its own"
    assert gpu.syncs >= 5 + 1  # each timed run, and after the warm-up
    assert "compute ms" in capsys.readouterr().out


def test_the_stand_in_shows_what_goes_wrong_without_the_sync(monkeypatch):
    """The emulation is faithful: the classmate's timing of exercise 2.2 measures only the queueing,
    and the course's old timing (``.numpy()`` inside the timed interval) adds the copy."""
    source = cell("timing")
    no_sync = source.replace("            tf.test.experimental.sync_devices()  #", "            pass  #", 1)
    assert no_sync != source
    _, rows = run_timing_cell(monkeypatch, no_sync)
    assert rows[0][2] == pytest.approx(1e3 * LAUNCH_S, rel=0.01)

    copy_inside = no_sync.replace("            pass  #", "            product.numpy()  #", 1)
    _, rows = run_timing_cell(monkeypatch, copy_inside)
    assert rows[0][2] == pytest.approx(1e3 * (KERNEL_S + COPY_S), rel=0.05)


# ----------------------------------------------------------------------------- one GPU, several replicas (notebook 07)

NOTEBOOK_07 = ROOT / "notebooks" / "07_beyond_one_gpu.ipynb"


class StandInDevices:
    """``tf.config`` and ``tf.distribute`` on a machine with ``gpus`` GPUs: records each split, refuses a second
    one as TensorFlow does once the runtime has started, and lists the logical devices a split made."""

    def __init__(self, gpus: int, started: bool = False) -> None:
        self.physical = {"GPU": [SimpleNamespace(name=f"/physical_device:GPU:{i}") for i in range(gpus)],
                         "CPU": [SimpleNamespace(name="/physical_device:CPU:0")]}
        self.splits: list[tuple[str, list]] = []
        self.started = started
        self.strategy_devices: list[str] = []

    def split(self, device, configs) -> None:
        if self.started:
            raise RuntimeError("Virtual devices cannot be modified after being initialized")
        self.splits.append((device.name, list(configs)))

    def logical(self, kind: str) -> list[SimpleNamespace]:
        split = dict(self.splits)
        count = sum(len(split.get(device.name, [None])) for device in self.physical[kind])
        return [SimpleNamespace(name=f"/device:{kind}:{i}") for i in range(count)]

    def mirrored(self, devices):
        self.strategy_devices = list(devices)
        return SimpleNamespace(num_replicas_in_sync=len(devices), extended=SimpleNamespace(worker_devices=devices))

    def tf(self) -> SimpleNamespace:
        config = SimpleNamespace(
            list_physical_devices=lambda kind: self.physical[kind],
            list_logical_devices=self.logical,
            set_logical_device_configuration=self.split,
            LogicalDeviceConfiguration=lambda memory_limit=None: SimpleNamespace(memory_limit=memory_limit),
        )
        return SimpleNamespace(config=config, distribute=SimpleNamespace(MirroredStrategy=self.mirrored))


def run_replica_cell(devices: StandInDevices, device: str = "auto") -> dict:
    cells = json.loads(NOTEBOOK_07.read_text(encoding="utf-8"))["cells"]
    (source,) = ["".join(c["source"]) for c in cells if c["id"] == "313ede3b"]
    namespace = {"tf": devices.tf(), "DEVICE": device, "CPU_REPLICAS": 2, "LOGICAL_GPU_MB": 1024}
    exec(source, namespace)  # noqa: S102 - notebook 07's own cell, against stand-in devices
    return namespace


def test_one_gpu_becomes_two_logical_gpus_with_a_memory_limit_each():
    devices = StandInDevices(gpus=1)
    cell = run_replica_cell(devices)
    ((split_device, configs),) = devices.splits
    assert split_device == "/physical_device:GPU:0" and [c.memory_limit for c in configs] == [1024, 1024]
    assert devices.strategy_devices == ["/device:GPU:0", "/device:GPU:1"] and cell["replicas"] == 2


def test_two_gpus_are_used_as_they_are_and_no_gpu_splits_the_cpu():
    two = StandInDevices(gpus=2)
    run_replica_cell(two)
    assert two.splits == [] and two.strategy_devices == ["/device:GPU:0", "/device:GPU:1"]
    none = StandInDevices(gpus=0)
    run_replica_cell(none)
    assert [name for name, _ in none.splits] == ["/physical_device:CPU:0"]
    assert none.strategy_devices == ["/device:CPU:0", "/device:CPU:1"]
    asked_cpu = StandInDevices(gpus=1)
    run_replica_cell(asked_cpu, device="cpu")
    assert [name for name, _ in asked_cpu.splits] == ["/physical_device:CPU:0"]


def test_a_second_run_keeps_the_first_split_and_says_so(capsys):
    devices = StandInDevices(gpus=1)
    run_replica_cell(devices)
    devices.started = True  # the runtime has started: TensorFlow refuses another split
    cell = run_replica_cell(devices)
    assert "The devices were split before" in capsys.readouterr().out and cell["replicas"] == 2
