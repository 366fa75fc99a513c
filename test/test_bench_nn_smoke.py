"""Smoke test of the training-step benchmarks (`python -m bench lenet`, `mlp-dropout`):
each at a tiny size, one repeat, peers absent.

arignote's row must be there, its loss must match NumPy's forward pass (for mlp-dropout,
with the masks arignote drew), and the workload must report success.
"""

from __future__ import annotations

import re

import pytest

from bench import lenet, mlp_dropout

TINY = ["--repeats", "1", "--number", "1", "--mem-steps", "1", "--no-peers"]
CASES = {
    "lenet": (lenet.run, ["--batch", "2", "--side", "16", "--kernels", "2", "3", "--hidden", "4"]),
    "mlp-dropout": (mlp_dropout.run, ["--batch", "16", "--hidden", "32"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_nn_workload_smoke(name, capsys):
    fn, argv = CASES[name]
    ok = fn([*argv, *TINY])
    out = capsys.readouterr().out
    assert ok, out
    row = next(ln for ln in out.splitlines() if ln.startswith("arignote "))
    assert "MISMATCH" not in row
    diff = float(re.split(r"\s{2,}", row)[5])
    assert diff <= 1e-4, row


def test_nn_workloads_are_listed():
    from bench import __main__ as bench_main

    assert {"lenet", "mlp-dropout"} <= set(bench_main.WORKLOADS)


def test_lenet_side_is_checked():
    with pytest.raises(SystemExit, match="--side: expected a multiple of 4"):
        lenet.run(["--side", "18", *TINY])


def test_unknown_peer_is_named():
    with pytest.raises(SystemExit, match="--peers: unknown peer 'tensorflow'"):
        mlp_dropout.run(
            [
                "--batch",
                "16",
                "--hidden",
                "32",
                "--peers",
                "tensorflow",
                "--repeats",
                "1",
                "--number",
                "1",
                "--mem-steps",
                "1",
            ]
        )
