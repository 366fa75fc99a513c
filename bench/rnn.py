"""Workload 4, rnn: a tanh RNN through `scan`, forward and the gradient of sum(h_T).

`h_t = tanh(x_t W + h_{t-1} U + b)` over T=100 steps, batch 32, input 64, hidden 128,
float32; one call returns `h_T` and the gradients of `sum(h_T)` with respect to W, U
and b. arignote runs `arignote.scan` + `arignote.grad` (one native loop forward, one
reverse loop for backpropagation through time); NumPy runs BPTT written by hand; JAX
(`lax.scan` under `jit`), PyTensor (`scan`) and PyTorch (a Python loop, autograd) run
when installed. Every system's `h_T` and gradients are compared with NumPy's.

    python -m bench rnn [--steps 100] [--batch 32] [--n-in 64] [--hidden 128] [--repeats 7]
"""

from __future__ import annotations

import sys

if __package__ in (None, ""):
    sys.path.insert(0, __file__.rsplit("/", 2)[0])

import numpy as np  # noqa: E402

from bench.common import (  # noqa: E402
    Row,
    finish,
    median_seconds,
    optional_import,
    parser,
    report,
)


def init(steps: int, batch: int, n_in: int, hidden: int, dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((steps, batch, n_in)).astype(dtype)
    h0 = np.zeros((batch, hidden), dtype)
    w = (rng.standard_normal((n_in, hidden)) / np.sqrt(n_in)).astype(dtype)
    u = (rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)).astype(dtype)
    b = np.zeros(hidden, dtype)
    return x, h0, w, u, b


def numpy_call(x, h0, w, u, b):
    """Forward, then backpropagation through time by hand."""
    hs = np.empty((len(x) + 1, *h0.shape), h0.dtype)
    hs[0] = h0
    for t in range(len(x)):
        hs[t + 1] = np.tanh(x[t] @ w + hs[t] @ u + b)
    gw, gu, gb = np.zeros_like(w), np.zeros_like(u), np.zeros_like(b)
    gh = np.ones_like(h0)
    for t in range(len(x) - 1, -1, -1):
        gz = gh * (1 - hs[t + 1] * hs[t + 1])
        gw += x[t].T @ gz
        gu += hs[t].T @ gz
        gb += gz.sum(axis=0)
        gh = gz @ u.T
    return [hs[-1], gw, gu, gb]


def arignote_graph(dtype: str | None = None):
    """The workload's RNN in arignote: its inputs `[x, h0, W, U, b]` (of `dtype`,
    `floatX` when None) and the states `hs` of `scan` (the tests build on it too)."""
    import arignote
    import arignote.tensor as T

    X, H0 = T.tensor3("x", dtype=dtype), T.matrix("h0", dtype=dtype)
    W, U, B = T.matrix("W", dtype=dtype), T.matrix("U", dtype=dtype), T.vector("b", dtype=dtype)
    hs, _ = arignote.scan(
        lambda xt, h, W, U, B: T.tanh(T.dot(xt, W) + T.dot(h, U) + B),
        sequences=X,
        outputs_info=H0,
        non_sequences=[W, U, B],
    )
    return [X, H0, W, U, B], hs


def arignote_row(data, args) -> Row:
    import arignote

    x, h0, w, u, b = data
    inputs, hs = arignote_graph(str(x.dtype))
    h_last = hs[-1]
    grads = arignote.grad(h_last.sum(), inputs[2:])
    f = arignote.function(inputs, [h_last, *grads], name="rnn")
    result = f(x, h0, w, u, b)
    seconds = median_seconds(lambda: f(x, h0, w, u, b), args.repeats, args.number)
    return Row("arignote", seconds, result, "scan + grad (reverse scan), native")


def jax_row(data, args) -> Row | None:
    jax = optional_import("jax")
    if jax is None:
        return None
    import jax.numpy as jnp

    def loss(params, x, h0):
        w, u, b = params

        def step(h, xt):
            h = jnp.tanh(xt @ w + h @ u + b)
            return h, None

        h, _ = jax.lax.scan(step, h0, x)
        return h.sum(), h

    fn = jax.jit(jax.value_and_grad(loss, has_aux=True))
    x, h0, w, u, b = (jnp.asarray(a) for a in data)

    def call():
        (_, h), g = fn((w, u, b), x, h0)
        h.block_until_ready()
        return [h, *g]

    result = [np.asarray(r) for r in call()]
    return Row("jax jit", median_seconds(call, args.repeats, args.number), result, "lax.scan")


def pytensor_row(data, args) -> Row | None:
    pytensor = optional_import("pytensor")
    if pytensor is None:
        return None
    import pytensor.tensor as pt

    x, h0, w, u, b = data
    dtype = str(x.dtype)
    X, H0 = pt.tensor3("x", dtype=dtype), pt.matrix("h0", dtype=dtype)
    W, U, B = pt.matrix("W", dtype=dtype), pt.matrix("U", dtype=dtype), pt.vector("b", dtype=dtype)
    hs, _ = pytensor.scan(
        lambda xt, h, W, U, B: pt.tanh(pt.dot(xt, W) + pt.dot(h, U) + B),
        sequences=X,
        outputs_info=H0,
        non_sequences=[W, U, B],
    )
    grads = pytensor.grad(hs[-1].sum(), [W, U, B])
    f = pytensor.function([X, H0, W, U, B], [hs[-1], *grads])
    result = f(x, h0, w, u, b)
    seconds = median_seconds(lambda: f(x, h0, w, u, b), args.repeats, args.number)
    return Row("pytensor", seconds, result, f"scan, mode {pytensor.config.mode}")


def torch_row(data, args) -> Row | None:
    torch = optional_import("torch")
    if torch is None:
        return None
    x, h0, w, u, b = (torch.from_numpy(a) for a in data)

    def call():
        params = [p.clone().requires_grad_(True) for p in (w, u, b)]
        h = h0
        for t in range(x.shape[0]):
            h = torch.tanh(x[t] @ params[0] + h @ params[1] + params[2])
        grads = torch.autograd.grad(h.sum(), params)
        return [h.detach(), *grads]

    result = [r.numpy() for r in call()]
    return Row(
        "torch loop",
        median_seconds(call, args.repeats, args.number),
        result,
        f"autograd, {torch.get_num_threads()} threads",
    )


def run(argv=None) -> bool:
    p = parser(__doc__)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--n-in", type=int, default=64)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--dtype", default="float32")
    args = p.parse_args(argv)
    data = init(args.steps, args.batch, args.n_in, args.hidden, np.dtype(args.dtype))
    expected = numpy_call(*data)
    rows = [
        Row(
            "numpy",
            median_seconds(lambda: numpy_call(*data), args.repeats, args.number),
            expected,
            "hand-written BPTT",
        )
    ]
    rows.append(arignote_row(data, args))
    skipped = []
    if not args.no_peers:
        for name, fn in [("jax", jax_row), ("pytensor", pytensor_row), ("torch", torch_row)]:
            try:
                row = fn(data, args)
            except Exception as exc:  # noqa: BLE001 - a broken peer is skipped, not fatal
                skipped.append(f"{name} (failed: {type(exc).__name__}: {str(exc)[:80]})")
                continue
            if row is None:
                skipped.append(f"{name} (not installed)")
            else:
                rows.append(row)
    tol = 1e-3 if args.dtype == "float32" else 1e-9
    title = (
        f"rnn: T={args.steps}, batch {args.batch}, in {args.n_in}, hidden {args.hidden}, "
        f"{args.dtype}; h_T and grad of sum(h_T) wrt W, U, b"
    )
    return report(title, rows, tol, skipped)


def main(argv=None) -> None:
    finish(run(argv))


if __name__ == "__main__":
    main()
