"""Per-call overhead of a compiled arignote function against NumPy (workload 6).

`python -m bench overhead` (or `python bench/overhead.py`) times `f(x) = x + 1` on a
float32[10] vector, compiled by arignote (native mode: full input checks, with
`trust_input`, and profiled with `profile=True`, timers around each node), against
NumPy's `x + 1` and `np.add(x, float32(1))` and the peers that are installed, and prints
the median time per call over several repeats in the BENCHMARKS.md format. A call of an
arignote function checks its arguments, allocates the output and runs the native code
in one generated C entry point (`arignote.runtime.entry`).
"""

from __future__ import annotations

import sys

if __package__ in (None, ""):
    sys.path.insert(0, __file__.rsplit("/", 2)[0])

import numpy as np

import arignote
import arignote.tensor as T
from bench.common import Row, median_seconds, optional_import, parser, report

NUMBER = 20000


def peer_rows(a, args, number, rows, skipped) -> None:
    jax = optional_import("jax")
    if jax is None:
        skipped.append("jax (not installed)")
    else:
        f = jax.jit(lambda x: x + 1)
        aj = jax.numpy.asarray(a)
        rows.append(
            Row(
                "jax jit",
                median_seconds(lambda: f(aj).block_until_ready(), args.repeats, number),
                (np.asarray(f(aj)),),
            )
        )
    pytensor = optional_import("pytensor")
    if pytensor is None:
        skipped.append("pytensor (not installed)")
    else:
        v = pytensor.tensor.fvector("x")
        f = pytensor.function([v], v + 1)
        rows.append(
            Row(
                "pytensor",
                median_seconds(lambda: f(a), args.repeats, number),
                (f(a),),
                f"mode {pytensor.config.mode}",
            )
        )
    torch = optional_import("torch")
    if torch is None:
        skipped.append("torch (not installed)")
    else:
        t = torch.from_numpy(a)
        rows.append(
            Row(
                "torch eager",
                median_seconds(lambda: t + 1, args.repeats, number),
                ((t + 1).numpy(),),
            )
        )


def run(argv=None) -> bool:
    args = parser(__doc__).parse_args(argv)
    number = args.number or NUMBER
    x = T.vector("x", dtype="float32")
    f = arignote.function([x], x + 1)
    f_trust = arignote.function([x], x + 1)
    f_trust.trust_input = True
    from arignote.compile.profiling import ProfileStats

    f_prof = arignote.function([x], x + 1, profile=ProfileStats(atexit_print=False))
    a = np.arange(10, dtype=np.float32)
    one = np.float32(1)
    rows = [
        Row("numpy", median_seconds(lambda: a + 1, args.repeats, number), (a + 1,), "ufunc"),
        Row(
            "numpy np.add",
            median_seconds(lambda: np.add(a, one), args.repeats, number),
            (np.add(a, one),),
            "np.add(a, float32(1))",
        ),
        Row(
            "arignote",
            median_seconds(lambda: f(a), args.repeats, number),
            (f(a),),
            "full input checks",
        ),
        Row(
            "arignote trust_input",
            median_seconds(lambda: f_trust(a), args.repeats, number),
            (f_trust(a),),
            "trust_input=True",
        ),
        Row(
            "arignote profile=True",
            median_seconds(lambda: f_prof(a), args.repeats, number),
            (f_prof(a),),
            "per-node timers, full input checks",
        ),
    ]
    skipped: list[str] = []
    if not args.no_peers:
        peer_rows(a, args, number, rows, skipped)
    return report("overhead: f(x) = x + 1, float32[10], per call", rows, tol=0.0, skipped=skipped)


def main(argv=None) -> None:
    if not run(argv):
        raise SystemExit("some system computed different numbers than NumPy")


if __name__ == "__main__":
    main()
