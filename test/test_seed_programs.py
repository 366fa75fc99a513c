"""The user's seed programs (examples/theano_tutorial/) print what they must, natively
and with the reference interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SEEDS = Path(__file__).resolve().parents[1] / "examples" / "theano_tutorial"

EXPECTED = {
    "01_scalar_affine.py": ["net_input: 6.500000"],
    "02_broadcast_row.py": ["[array([[2., 4.],", "[4., 6.],", "[6., 8.]])]", "rejected:"],
    "03_multiple_outputs.py": ["[array(5., dtype=float32), array(6., dtype=float32)]"],
    "04_grad_sigmoid.py": ["0.0451766"],
    "05_shared_updates.py": ["1\n4\n0\n1\n"],
    # 10,000 training steps; the program asserts accuracy >= 0.99, float32 weights and a
    # finite cross-entropy itself. "Used the cpu" needs the Gemv specialization (not yet).
    "06_logreg_train.py": ["target values for D", "prediction on D"],
    "08_scan_polynomial.py": ["terms: [    2    30   400  6000 50000]", "sum: 56432"],
    # DebugMode: every graph pass checked, native code compared with the interpreter.
    "09_debugmode.py": ["[50.] [0.] [70.]"],
    # The full rc-file/flag precedence run of 11 is in test/frontend/test_config.py.
    "11_config.py": [
        "floatX ('float64', 'float32')",
        "Value:  ",
        "rejected: config.floatX: invalid value 'float16x'; valid choices: 'float64', 'float32'",
    ],
}


@pytest.mark.parametrize("linker", ["cvm", "py"])
@pytest.mark.parametrize("program", list(EXPECTED))
def test_seed_program(program: str, linker: str) -> None:
    env = dict(os.environ, ARIGNOTE_FLAGS=f"linker={linker}")
    result = subprocess.run(
        [sys.executable, str(SEEDS / program)], capture_output=True, text=True, env=env, timeout=300
    )
    assert result.returncode == 0, result.stderr
    for line in EXPECTED[program]:
        assert line in result.stdout, result.stdout


@pytest.mark.parametrize("linker", ["vm", "py"])
def test_switch_vs_ifelse(linker: str, tmp_path: Path) -> None:
    """07 compiles with an explicit `Mode(linker="vm")` (native code), so the flag does
    not reach it; the interpreter run uses a copy naming `linker="py"`. Both give 1.0
    (the program asserts it) and the lazy form, which skips `mean(y)`, is faster."""
    source = (SEEDS / "07_switch_vs_ifelse.py").read_text()
    program = tmp_path / "07_switch_vs_ifelse.py"
    program.write_text(source.replace('linker="vm"', f'linker="{linker}"'))
    assert source.count('linker="vm"') == 2
    result = subprocess.run(
        [sys.executable, str(program)], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    times = {}
    for line in result.stdout.splitlines():
        words = line.split()
        times[words[3]] = float(words[-2])  # "time spent evaluating <both|one> ..."
    assert set(times) == {"both", "one"}, result.stdout
    assert times["one"] < times["both"], result.stdout
