"""Smoke test of the benchmark suite: each workload at a tiny size, one repeat.

Each must print a line for NumPy and for arignote, and arignote's numbers must match
NumPy's (the workload exits non-zero on a mismatch; the row would say MISMATCH).
"""

from __future__ import annotations

import re

import pytest

from bench import elemwise, logreg, mlp, overhead, rnn, trig, vecmath

CASES = {
    "logreg": (logreg.run, ["--n", "16", "--feats", "8"]),
    "elemwise": (elemwise.run, ["--size", "1000"]),
    "mlp": (mlp.run, ["--batch", "4"]),
    "overhead": (overhead.run, []),
    "rnn": (rnn.run, ["--steps", "3", "--batch", "2", "--n-in", "3", "--hidden", "4"]),
    "vecmath": (vecmath.run, ["--size", "1000"]),
    "trig": (trig.run, ["--size", "1000", "--functions", "sin"]),
}


def _check(out: str) -> None:
    lines = out.splitlines()
    for name in ("numpy", "arignote"):
        row = [ln for ln in lines if ln.startswith(name + " ")]
        assert row, out
        assert "MISMATCH" not in row[0], row[0]
    arignote_row = next(ln for ln in lines if ln.startswith("arignote "))
    diff = re.split(r"\s{2,}", arignote_row)[3]
    assert float(diff) >= 0.0


@pytest.mark.parametrize("name", sorted(CASES))
def test_workload_smoke(name, capsys):
    fn, argv = CASES[name]
    assert fn([*argv, "--repeats", "1", "--number", "1", "--no-peers"])
    _check(capsys.readouterr().out)


def test_mlp_2010_smoke(capsys):
    assert mlp.run(["--batch", "4", "--repeats", "1", "--number", "1", "--no-peers"], paper=True)
    out = capsys.readouterr().out
    _check(out)
    assert "ex/s" in out


def test_main_lists_workloads(capsys):
    import sys

    from bench import __main__ as bench_main

    argv = sys.argv
    sys.argv = ["bench"]
    try:
        with pytest.raises(SystemExit):
            bench_main.main()
    finally:
        sys.argv = argv
    assert "logreg" in capsys.readouterr().out


def test_compile_smoke(capsys):
    from bench import compile as bench_compile

    assert bench_compile.run(["--repeats", "1", "--no-peers"])
    assert any(ln.startswith("arignote ") for ln in capsys.readouterr().out.splitlines())


def test_memory_smoke(capsys):
    from bench import memory

    assert memory.run(["--workloads", "logreg", "--steps", "2", "--no-peers"])
    out = capsys.readouterr().out
    rows = [ln for ln in out.splitlines() if ln.startswith(("numpy ", "arignote "))]
    assert len(rows) == 2, out
    assert all("MiB" in ln for ln in rows), out


def test_compile_scaling_smoke(capsys):
    """`python -m bench compile-scaling` at tiny sizes: a row per case, cold and warm
    times of arignote (the warm processes must hit the cache). The LSTM example's row
    too: its child runs `examples/lstm.py`'s own `build` (a change to it broke the row
    once, unseen while this test left it out)."""
    from bench import compile_scaling

    argv = ["--mlp", "1", "--rnn", "1", "--repeats", "1", "--no-peers"]
    assert compile_scaling.run(argv)
    lines = capsys.readouterr().out.splitlines()
    rows = [ln.split() for ln in lines if ln[:4] in ("mlp-", "rnn-", "lstm")]
    assert [row[0] for row in rows] == ["mlp-1", "rnn-1", "lstm"]
    for row in rows:
        assert float(row[1].rstrip("s")) > 0 and float(row[2].rstrip("s")) > 0


def test_competing_load_option():
    """`--load N` is taken out of the arguments, starts N busy processes for the run and
    stops them after; a bad N is refused with a message naming the option."""
    from bench.__main__ import competing_load, take_load

    assert take_load(["--repeats", "1", "--load", "2", "--no-peers"]) == (
        2,
        ["--repeats", "1", "--no-peers"],
    )
    assert take_load(["--no-peers"]) == (0, ["--no-peers"])
    for bad in (["--load"], ["--load", "two"], ["--load", "-1"]):
        with pytest.raises(ValueError, match="--load needs a number"):
            take_load(bad)
    with competing_load(2) as busy:
        assert len(busy) == 2 and all(p.poll() is None for p in busy)
    assert all(p.returncode is not None for p in busy)
    with competing_load(0) as busy:
        assert busy == []
