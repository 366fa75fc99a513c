"""Programs that `test_distributed.py` runs under `mpiexec -n 2`: `python
mpi_scenarios.py <scenario>`; each rank prints `rank <r>: ...` lines the test checks."""

from __future__ import annotations

import os
import sys
import time

import numpy as np

import arignote
import arignote.tensor as T
from arignote import distributed


def say(text: str) -> None:
    """One line in one write (an unbuffered `print` writes the newline apart, and the
    launcher may put another rank's output between them)."""
    os.write(1, (text + "\n").encode())


def values() -> None:
    """allreduce sum/mean of several dtypes and layouts, native and interpreted."""
    distributed.init(timeout=60)
    r = distributed.rank()
    x, m, i = T.vector("x"), T.fmatrix("m"), T.lvector("i")
    outs = [
        distributed.allreduce(x, "sum"),
        distributed.allreduce(x[::2], "mean"),
        distributed.allreduce(m.T, "mean"),
        distributed.allreduce(i, "sum"),
        distributed.allreduce(T.sum(x), "sum"),
    ]
    args = (np.arange(5.0) * (r + 1), np.full((2, 3), r, np.float32), np.arange(3) + r)
    for mode in ("FAST_RUN", "FAST_COMPILE", arignote.Mode(linker="py")):
        f = arignote.function([x, m, i], outs, mode=mode)
        got = f(*args)
        say(f"rank {r}: {[a.tolist() for a in got]}")
    g = arignote.grad(T.sum(distributed.allreduce(x, "sum") ** 2), x)
    say(f"rank {r}: grad {arignote.function([x], g)(args[0]).tolist()}")
    # bucketed: float64 vector, float32 matrix, float64 0-d and another float64 matrix
    grads = [x * 1.0, m * 2, T.sum(x), T.outer(x, x)]
    bucketed = arignote.function([x, m], distributed.average_gradients(grads, bucket=True))
    single = arignote.function([x, m], distributed.average_gradients(grads))
    same = all(
        np.array_equal(a, b) and a.dtype == b.dtype
        for a, b in zip(bucketed(*args[:2]), single(*args[:2]), strict=True)
    )
    say(f"rank {r}: bucketed {same} {bucketed(*args[:2])[2].tolist()}")


def _step(shift: float = 0.0, timeout: float | None = None):
    """A step whose allreduce waits `timeout` s; the processes leave together (a
    barrier: compiling takes longer on a loaded machine than a short timeout)."""
    w = arignote.shared(np.zeros(3), name="w")
    x = T.vector("x")
    cost = T.sum((w - x + shift) ** 2)
    (g,) = distributed.average_gradients(arignote.grad(cost, [w]), timeout=timeout)
    step = arignote.function([x], cost, updates=[(w, w - 0.1 * g)], name="step")
    from mpi4py import MPI

    MPI.COMM_WORLD.Barrier()
    return step


def mismatch() -> None:
    """rank 1 compiles another graph: every rank raises at the first call."""
    distributed.init(timeout=60)
    step = _step(1.0 if distributed.rank() == 1 else 0.0)
    try:
        step(np.ones(3))
    except distributed.DistributedError as e:
        say(f"rank {distributed.rank()}: DistributedError {e}")
        return
    say(f"rank {distributed.rank()}: no error")


def hang() -> None:
    """rank 1 stops joining after the first step: rank 0's allreduce times out."""
    distributed.init(timeout=120)  # the first call's graph comparison
    step = _step(timeout=5)
    step(np.ones(3))
    if distributed.rank() == 1:
        time.sleep(60)
    start = time.monotonic()
    try:
        step(np.ones(3))
    except distributed.DistributedError as e:
        say(f"rank 0: after {time.monotonic() - start:.1f} s: {e}")
        raise  # uncaught: the abort hook ends the job (rank 1 too)


def death() -> None:
    """rank 1 dies after the first step: rank 0 must not wait forever."""
    distributed.init(timeout=120)
    step = _step(timeout=5)
    step(np.ones(3))
    if distributed.rank() == 1:
        os._exit(3)
    for _ in range(100):
        step(np.ones(3))
    say("rank 0: survived")


def shares() -> None:
    """broadcast and scatter."""
    distributed.init(timeout=60)
    r = distributed.rank()
    v = arignote.shared(np.full(4, float(r)), name="v")
    distributed.broadcast([v], root=1)
    data = (np.arange(10.0).reshape(5, 2), np.arange(5)) if r == 0 else None
    xs, ys = distributed.scatter(data)
    one = distributed.scatter(np.arange(7) if r == 0 else None)
    say(f"rank {r}: {v.get_value().tolist()} {xs.tolist()} {ys.tolist()} {one.tolist()}")


if __name__ == "__main__":
    {"values": values, "mismatch": mismatch, "hang": hang, "death": death, "shares": shares}[
        sys.argv[1]
    ]()
