"""The user's seed programs (examples/theano_tutorial/) print what they must, natively
and with the reference interpreter."""

from __future__ import annotations

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
    # finite cross-entropy itself. "Used the cpu": the fused forward and backward
    # products (`ag.gemv_pair`, made by row-fusion) show as a node of class Gemv.
    "06_logreg_train.py": ["Used the cpu", "target values for D", "prediction on D"],
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


@pytest.mark.parametrize(
    "linker",
    ["cvm", pytest.param("py", marks=pytest.mark.slow)],  # the interpreter trains 06
)
@pytest.mark.parametrize("program", list(EXPECTED))
def test_seed_program(program: str, linker: str, run_seed) -> None:
    result = run_seed(program, f"linker={linker}")
    for line in EXPECTED[program]:
        assert line in result.stdout, result.stdout


@pytest.mark.parametrize("linker", ["vm", "py"])
def test_switch_vs_ifelse(linker: str, tmp_path: Path, run_seed) -> None:
    """07 compiles with an explicit `Mode(linker="vm")` (native code), so the flag does
    not reach it; the interpreter run uses a copy naming `linker="py"`. Both give 1.0
    (the program asserts it) and the lazy form, which skips `mean(y)`, is faster."""
    source = (SEEDS / "07_switch_vs_ifelse.py").read_text()
    program = tmp_path / "07_switch_vs_ifelse.py"
    program.write_text(source.replace('linker="vm"', f'linker="{linker}"'))
    assert source.count('linker="vm"') == 2
    result = run_seed(program)
    times = {}
    for line in result.stdout.splitlines():
        words = line.split()
        times[words[3]] = float(words[-2])  # "time spent evaluating <both|one> ..."
    assert set(times) == {"both", "one"}, result.stdout
    assert times["one"] < times["both"], result.stdout


def _apply_rows(report: str) -> list[str]:
    """The node rows of a profile's Apply section."""
    section = report.split("\nApply\n", 1)[1].split("\n\n", 1)[0]
    return [line for line in section.splitlines()[2:] if "%" in line and "..." not in line]


@pytest.mark.parametrize("linker", ["cvm", "py"])
def test_seed_10_profiling_without_fusion(linker: str, run_seed) -> None:
    """SPEC §6: with fusion excluded, the profile printed at exit shows two add nodes
    and one mul node, each run 100 times."""
    flags = f"linker={linker},optimizer_excluding=fusion:inplace,profile=True"
    report = run_seed("10_profiling.py", flags).stderr
    assert "Function profiling" in report
    assert "Time in 100 calls to Function.__call__" in report
    for section in ("\nClass\n---\n", "\nOps\n---\n", "\nApply\n------\n"):
        assert section in report
    rows = _apply_rows(report)
    assert len(rows) == 3, report
    assert sum("Elemwise{add}(" in row for row in rows) == 2
    assert sum("Elemwise{mul}(" in row for row in rows) == 1
    kind = "C" if linker == "cvm" else "Py"
    assert any(
        row.split()[-4:-1] == [kind, "200", "2"]
        for row in report.splitlines()
        if row.endswith("Elemwise{add}")
    ), report
    assert all(row.split()[4] == "100" for row in rows)


def test_seed_10_profiling_default_optimizer(run_seed) -> None:
    """Without the exclusion the report has the same structure, for whatever nodes the
    optimizer leaves (one fused node once fusion runs in fast_run)."""
    result = run_seed("10_profiling.py", "profile=True")
    rows = _apply_rows(result.stderr)
    assert 1 <= len(rows) <= 3, result.stderr
    assert all(row.split()[4] == "100" for row in rows)
    assert "... (remaining 0 Apply instances account for 0.00%" in result.stderr
