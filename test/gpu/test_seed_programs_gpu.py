"""The seed programs with `ARIGNOTE_FLAGS=device=cuda` print what they must: the same
results as on the CPU, and the logistic-regression exercise says "Used the gpu" (its
dot products are `GpuGemv` nodes). On the emulated device everywhere, on a real GPU where
there is one. No function falls back to the CPU."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from arignote.runtime import cuda

REAL_GPU = not cuda.emulating() and cuda.available()


def _cpu_expectations() -> dict[str, list[str]]:
    """`test/test_seed_programs.py`'s table (loaded from its path, whatever pytest's
    import mode)."""
    path = Path(__file__).resolve().parents[1] / "test_seed_programs.py"
    spec = importlib.util.spec_from_file_location("arignote_test_seed_programs", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.EXPECTED


EXPECTED = {
    **_cpu_expectations(),
    # the dot products are GpuGemv nodes
    "06_logreg_train.py": ["Used the gpu", "target values for D", "prediction on D"],
    # the CPU test runs it with linker="vm" and "py" (test_switch_vs_ifelse)
    "07_switch_vs_ifelse.py": ["time spent evaluating both values", "evaluating one value"],
}


def _device_env(device: str) -> dict[str, str]:
    """The variables of a run on `device` (the emulated one, or a real GPU: skipped
    without one)."""
    if device == "cuda" and not REAL_GPU:
        pytest.skip("no CUDA GPU here")
    return {"ARIGNOTE_CUDA_EMULATE": "1"} if device == "emulated" else {}


@pytest.mark.parametrize("device", ["emulated", "cuda"])
@pytest.mark.parametrize("program", list(EXPECTED))
def test_seed_program_on_the_gpu(program: str, device: str, run_seed) -> None:
    result = run_seed(program, "device=cuda", timeout=600, **_device_env(device))
    assert "DeviceFallbackWarning" not in result.stderr, result.stderr
    for line in EXPECTED[program]:
        assert line in result.stdout, result.stdout


@pytest.mark.parametrize("device", ["emulated", "cuda"])
def test_seed_10_profiles_the_gpu_kernels(device: str, run_seed) -> None:
    """Seed 10 as SPEC §6 runs it (fusion excluded, profile=True), on the GPU: the report
    printed at exit has the GPU kernels section, the add and mul kernels 100 launches each."""
    flags = "device=cuda,optimizer_excluding=fusion:inplace,profile=True"
    report = run_seed("10_profiling.py", flags, timeout=600, **_device_env(device)).stderr
    assert "Function profiling" in report and "Time in 100 calls" in report, report
    section = report.split("GPU kernels\n", 1)[1].split("\n\n", 1)[0]
    rows = [line for line in section.splitlines() if "__par" in line]
    assert f"in {100 * len(rows)} launches" in section, section  # each kernel once a call
    assert all(row.split()[4] == "100" for row in rows), section
    ops = [row for row in rows if "one thread" not in row]
    assert sum("ag.add" in row for row in ops) == 2 and sum("ag.mul" in row for row in ops) == 1
