"""The seed programs with `ARIGNOTE_FLAGS=device=cuda` print what they must: the same
results as on the CPU, and the logistic-regression exercise says "Used the gpu" (its
dot products are `GpuGemv` nodes). On the emulated device everywhere, on a real GPU where
there is one. No function falls back to the CPU."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from arignote.runtime import cuda

REAL_GPU = not cuda.emulating() and cuda.available()

SEEDS = Path(__file__).resolve().parents[2] / "examples" / "theano_tutorial"

EXPECTED = {
    "01_scalar_affine.py": ["net_input: 6.500000"],
    "02_broadcast_row.py": ["[array([[2., 4.],", "[4., 6.],", "[6., 8.]])]", "rejected:"],
    "03_multiple_outputs.py": ["[array(5., dtype=float32), array(6., dtype=float32)]"],
    "04_grad_sigmoid.py": ["0.0451766"],
    "05_shared_updates.py": ["1\n4\n0\n1\n"],
    # 10,000 steps; the program itself asserts accuracy >= 0.99, float32 weights and a
    # finite cross-entropy
    "06_logreg_train.py": ["Used the gpu", "target values for D", "prediction on D"],
    "07_switch_vs_ifelse.py": ["time spent evaluating both values", "evaluating one value"],
    "08_scan_polynomial.py": ["terms: [    2    30   400  6000 50000]", "sum: 56432"],
    "09_debugmode.py": ["[50.] [0.] [70.]"],
    "11_config.py": [
        "floatX ('float64', 'float32')",
        "Value:  ",
        "rejected: config.floatX: invalid value 'float16x'; valid choices: 'float64', 'float32'",
    ],
}


@pytest.mark.parametrize("device", ["emulated", "cuda"])
@pytest.mark.parametrize("program", list(EXPECTED))
def test_seed_program_on_the_gpu(program: str, device: str) -> None:
    if device == "cuda" and not REAL_GPU:
        pytest.skip("no CUDA GPU here")
    env = dict(os.environ, ARIGNOTE_FLAGS="device=cuda")
    if device == "emulated":
        env["ARIGNOTE_CUDA_EMULATE"] = "1"
    result = subprocess.run(
        [sys.executable, str(SEEDS / program)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert "DeviceFallbackWarning" not in result.stderr, result.stderr
    for line in EXPECTED[program]:
        assert line in result.stdout, result.stdout


@pytest.mark.parametrize("device", ["emulated", "cuda"])
def test_seed_10_profiles_the_gpu_kernels(device: str) -> None:
    """Seed 10 as SPEC §6 runs it (fusion excluded, profile=True), on the GPU: the report
    printed at exit has the GPU kernels section, the add and mul kernels 100 launches each."""
    if device == "cuda" and not REAL_GPU:
        pytest.skip("no CUDA GPU here")
    flags = "device=cuda,optimizer_excluding=fusion:inplace,profile=True"
    env = dict(os.environ, ARIGNOTE_FLAGS=flags)
    if device == "emulated":
        env["ARIGNOTE_CUDA_EMULATE"] = "1"
    result = subprocess.run(
        [sys.executable, str(SEEDS / "10_profiling.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    report = result.stderr
    assert "Function profiling" in report and "Time in 100 calls" in report, report
    section = report.split("GPU kernels\n", 1)[1].split("\n\n", 1)[0]
    rows = [line for line in section.splitlines() if "__par" in line]
    assert f"in {100 * len(rows)} launches" in section, section  # each kernel once a call
    assert all(row.split()[4] == "100" for row in rows), section
    ops = [row for row in rows if "one thread" not in row]
    assert sum("ag.add" in row for row in ops) == 2 and sum("ag.mul" in row for row in ops) == 1
