"""Elementwise trigonometry: `sin`, `cos`, `arctan` of one vector, float32 and float64.

Each function is one `arignote.function` (a single loop, vectorised: `sin` and friends
are expanded inline by `lowering/loops/vector_math.py`), timed against NumPy's ufunc on the
same array, with the default flags (`openmp`: the loop is split across the usable
threads) and with `openmp=False` (one thread, as NumPy). The first call, compilation
included (compile cache off, after one throwaway compile that pays the process's
first-use imports), is timed once and shown in the notes; the medians are of later
calls. Results are compared with NumPy's (within a few ulp).

    python -m bench trig [--size 1000000] [--repeats 7] [--functions sin,cos,arctan] [--libm]
"""

from __future__ import annotations

import sys
import time

if __package__ in (None, ""):
    sys.path.insert(0, __file__.rsplit("/", 2)[0])

import numpy as np

from bench.common import Row, finish, median_seconds, parser, report

FUNCTIONS = ("sin", "cos", "arctan")


def _compiled(name: str, dtype: type, openmp: bool, x: np.ndarray, libm: bool = False):
    """The compiled function, and the seconds of compiling it plus its first call.
    `libm`: lowered with `convert-to-llvm{libm=true}` (scalar libm calls, as before the
    inline expansions), for comparison."""
    from unittest import mock

    import arignote
    import arignote.tensor as T
    from arignote.configuration import change_flags
    from arignote.lowering import driver

    lowering = driver.LLVM_LOWERING
    if libm:
        lowering = lowering.replace("convert-to-llvm", "convert-to-llvm{libm=true}")
    with (
        change_flags(compile_cache=False, openmp=openmp),
        mock.patch.object(driver, "LLVM_LOWERING", lowering),
    ):
        start = time.perf_counter()
        v = T.fvector("x") if dtype == np.float32 else T.dvector("x")
        f = arignote.function([v], getattr(T, name)(v))
        f(x)
        first = time.perf_counter() - start
    return f, first


def _rows(name: str, x: np.ndarray, args) -> list[Row]:
    ufunc = getattr(np, name)
    rows = [
        Row(
            "numpy",
            median_seconds(lambda: ufunc(x), args.repeats, args.number),
            (ufunc(x),),
            f"np.{name}",
        )
    ]
    systems = [(True, False, "arignote"), (False, False, "arignote 1 thread")]
    if args.libm:
        systems += [(True, True, "arignote libm"), (False, True, "arignote libm 1 thread")]
    for openmp, libm, label in systems:
        f, first = _compiled(name, x.dtype.type, openmp, x, libm)
        seconds = median_seconds(lambda f=f: f(x), args.repeats, args.number)
        how = "scalar libm calls" if libm else "inline, vectorised"
        notes = f"{how}; first call incl. compile {first * 1e3:.0f} ms"
        rows.append(Row(label, seconds, (f(x),), notes))
    return rows


def run(argv=None) -> bool:
    p = parser(__doc__)
    p.add_argument("--size", type=int, default=1_000_000)
    p.add_argument("--functions", default=",".join(FUNCTIONS))
    p.add_argument("--low", type=float, default=-10.0, help="inputs uniform in [low, high)")
    p.add_argument("--high", type=float, default=10.0)
    p.add_argument(
        "--libm",
        action="store_true",
        help="also time the libm lowering (convert-to-llvm{libm=true}), as before inlining",
    )
    args = p.parse_args(argv)
    _compiled("exp", np.float32, False, np.zeros(1, np.float32))  # first-use imports
    ok = True
    for dtype in (np.float32, np.float64):
        x = np.random.default_rng(0).uniform(args.low, args.high, args.size).astype(dtype)
        for name in args.functions.split(","):
            title = f"trig: {name}(x), {np.dtype(dtype).name}[{args.size}], per call"
            tol = 4 * float(np.finfo(dtype).eps) * 2  # |result| <= pi/2: a few ulp
            ok = report(title, _rows(name, x, args), tol=tol) and ok
            print()
    return ok


def main(argv=None) -> None:
    finish(run(argv))


if __name__ == "__main__":
    main()
