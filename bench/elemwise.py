"""Workload 2, elemwise: `tanh(x*y + exp(-x)) * 0.5 + 1/(1+exp(-y))` on float32 vectors.

arignote compiles the expression with `arignote.function`; NumPy evaluates it with
temporaries; JAX (jit), PyTensor, PyTorch (eager), numexpr and numba run it when they are
installed. The results are compared with NumPy's (float32, so up to a few ulp).

    python -m bench elemwise [--size 10000000] [--repeats 7]
"""

from __future__ import annotations

import sys

if __package__ in (None, ""):
    sys.path.insert(0, __file__.rsplit("/", 2)[0])

import numpy as np

from bench.common import Row, finish, median_seconds, optional_import, parser, report

EXPR = "tanh(x*y + exp(-x)) * 0.5 + 1/(1+exp(-y))"


def numpy_fn(x, y):
    return np.tanh(x * y + np.exp(-x)) * np.float32(0.5) + 1 / (1 + np.exp(-y))


def peer_rows(x, y, args, rows, skipped) -> None:
    jax = optional_import("jax")
    if jax is None:
        skipped.append("jax (not installed)")
    else:
        import jax.numpy as jnp

        f = jax.jit(lambda x, y: jnp.tanh(x * y + jnp.exp(-x)) * 0.5 + 1 / (1 + jnp.exp(-y)))
        xj, yj = jnp.asarray(x), jnp.asarray(y)
        out = np.asarray(f(xj, yj))
        rows.append(
            Row(
                "jax jit",
                median_seconds(lambda: f(xj, yj).block_until_ready(), args.repeats, args.number),
                (out,),
                "device arrays in",
            )
        )
    pytensor = optional_import("pytensor")
    if pytensor is None:
        skipped.append("pytensor (not installed)")
    else:
        import pytensor.tensor as pt

        a, b = pt.fvector("x"), pt.fvector("y")
        f = pytensor.function([a, b], pt.tanh(a * b + pt.exp(-a)) * 0.5 + 1 / (1 + pt.exp(-b)))
        rows.append(
            Row(
                "pytensor",
                median_seconds(lambda: f(x, y), args.repeats, args.number),
                (f(x, y),),
                f"mode {pytensor.config.mode}",
            )
        )
    torch = optional_import("torch")
    if torch is None:
        skipped.append("torch (not installed)")
    else:
        xt, yt = torch.from_numpy(x), torch.from_numpy(y)

        def tf():
            return torch.tanh(xt * yt + torch.exp(-xt)) * 0.5 + 1 / (1 + torch.exp(-yt))

        rows.append(
            Row(
                "torch eager",
                median_seconds(tf, args.repeats, args.number),
                (tf().numpy(),),
                f"{torch.get_num_threads()} threads",
            )
        )
    ne = optional_import("numexpr")
    if ne is None:
        skipped.append("numexpr (not installed)")
    else:
        ex = "tanh(x*y + exp(-x)) * 0.5 + 1/(1+exp(-y))"
        # numexpr reads names from its caller's frame unless given them: a lambda has none
        operands = {"x": x, "y": y}

        def nef():
            return ne.evaluate(ex, local_dict=operands)

        rows.append(Row("numexpr", median_seconds(nef, args.repeats, args.number), (nef(),), ""))


def run(argv=None) -> bool:
    p = parser(__doc__)
    p.add_argument("--size", type=int, default=10_000_000)
    args = p.parse_args(argv)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(args.size).astype(np.float32)
    y = rng.standard_normal(args.size).astype(np.float32)

    import arignote
    import arignote.tensor as T

    a, b = T.fvector("x"), T.fvector("y")
    f = arignote.function([a, b], T.tanh(a * b + T.exp(-a)) * 0.5 + 1 / (1 + T.exp(-b)))

    rows = [
        Row(
            "numpy",
            median_seconds(lambda: numpy_fn(x, y), args.repeats, args.number),
            (numpy_fn(x, y),),
            "temporaries",
        ),
        Row(
            "arignote",
            median_seconds(lambda: f(x, y), args.repeats, args.number),
            (f(x, y),),
            "arignote.function, native",
        ),
    ]
    skipped: list[str] = []
    if not args.no_peers:
        peer_rows(x, y, args, rows, skipped)
    title = f"elemwise: {EXPR}, float32[{args.size}], per call"
    return report(title, rows, tol=1e-5, skipped=skipped)


def main(argv=None) -> None:
    finish(run(argv))


if __name__ == "__main__":
    main()
