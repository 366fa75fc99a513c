"""Workloads 3 and 3b, mlp: one SGD step of an MLP 784-500-10 (tanh, softmax cross-entropy).

`mlp` is batch 128 in float32 (time per step); `mlp-2010` is the Theano paper's setup,
batch 60 in float64 on one thread (examples per second; `python -m bench mlp-2010` or
`python bench/mlp.py --2010` sets OPENBLAS_NUM_THREADS=1 before NumPy loads). arignote
runs a Theano-style `train` function (loss output, `arignote.grad`, updates of the four
shared parameters); NumPy runs backprop written by hand; JAX (jit), PyTensor and PyTorch
(eager autograd) run when installed. The updated parameters after one step from the same
start are compared with NumPy's.

    python -m bench mlp [--batch 128] [--dtype float32] [--repeats 7]
"""

from __future__ import annotations

import os
import sys

if "--2010" in sys.argv[1:]:
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
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

LR = 0.1
SIZES = (784, 500, 10)


def init(batch: int, dtype):
    rng = np.random.default_rng(0)
    n_in, n_hid, n_out = SIZES
    x = rng.standard_normal((batch, n_in)).astype(dtype)
    labels = rng.integers(0, n_out, size=batch)
    y = np.eye(n_out, dtype=dtype)[labels]
    params = [
        (rng.standard_normal((n_in, n_hid)) * np.sqrt(1.0 / n_in)).astype(dtype),
        np.zeros(n_hid, dtype),
        (rng.standard_normal((n_hid, n_out)) * np.sqrt(1.0 / n_hid)).astype(dtype),
        np.zeros(n_out, dtype),
    ]
    return x, y, params


def numpy_step(x, y, w1, b1, w2, b2):
    lr = x.dtype.type(LR)
    h = np.tanh(x @ w1 + b1)
    z = h @ w2 + b2
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    s = e.sum(axis=1, keepdims=True)
    loss = -(y * (z - np.log(s))).sum(axis=1).mean()
    dz = (e / s - y) / x.dtype.type(len(x))
    gw2, gb2 = h.T @ dz, dz.sum(axis=0)
    dh = (dz @ w2.T) * (1 - h * h)
    gw1, gb1 = x.T @ dh, dh.sum(axis=0)
    return [w1 - lr * gw1, b1 - lr * gb1, w2 - lr * gw2, b2 - lr * gb2], loss


def arignote_row(x, y, params, args) -> Row:
    import arignote
    import arignote.tensor as T

    xs, ys = T.matrix("x", dtype=str(x.dtype)), T.matrix("y", dtype=str(x.dtype))
    shared = [
        arignote.shared(p.copy(), name=n)
        for p, n in zip(params, ["w1", "b1", "w2", "b2"], strict=True)
    ]
    w1, b1, w2, b2 = shared
    h = T.tanh(T.dot(xs, w1) + b1)
    logits = T.dot(h, w2) + b2
    loss = -(ys * T.nnet.logsoftmax(logits)).sum(axis=1).mean()
    grads = arignote.grad(loss, shared)
    train = arignote.function(
        [xs, ys],
        loss,
        name="train",
        updates=[(p, p - LR * g) for p, g in zip(shared, grads, strict=True)],
    )
    train(x, y)
    result = [s.get_value() for s in shared]
    return Row(
        "arignote",
        median_seconds(lambda: train(x, y), args.repeats, args.number),
        result,
        "train(x, y): grad + updates",
    )


def jax_row(x, y, params, args) -> Row | None:
    jax = optional_import("jax")
    if jax is None:
        return None
    import jax.numpy as jnp

    if x.dtype == np.float64:
        jax.config.update("jax_enable_x64", True)

    def loss(ps, x, y):
        w1, b1, w2, b2 = ps
        h = jnp.tanh(x @ w1 + b1)
        return -(y * jax.nn.log_softmax(h @ w2 + b2)).sum(axis=1).mean()

    @jax.jit
    def step(ps, x, y):
        val, gs = jax.value_and_grad(loss)(ps, x, y)
        return [p - LR * g for p, g in zip(ps, gs, strict=True)], val

    xj, yj = jnp.asarray(x), jnp.asarray(y)
    start = [jnp.asarray(p) for p in params]
    result = [np.asarray(p) for p in step(start, xj, yj)[0]]
    state = [start]

    def call():
        state[0], val = step(state[0], xj, yj)
        val.block_until_ready()

    return Row("jax jit", median_seconds(call, args.repeats, args.number), result, "value_and_grad")


def pytensor_row(x, y, params, args) -> Row | None:
    pytensor = optional_import("pytensor")
    if pytensor is None:
        return None
    import pytensor.tensor as pt

    xs, ys = pt.matrix("x", dtype=str(x.dtype)), pt.matrix("y", dtype=str(x.dtype))
    shared = [pytensor.shared(p.copy()) for p in params]
    w1, b1, w2, b2 = shared
    h = pt.tanh(pt.dot(xs, w1) + b1)
    loss = -(ys * pt.special.log_softmax(pt.dot(h, w2) + b2, axis=1)).sum(axis=1).mean()
    grads = pytensor.grad(loss, shared)
    lr = x.dtype.type(LR)
    train = pytensor.function(
        [xs, ys], loss, updates=[(p, p - lr * g) for p, g in zip(shared, grads, strict=True)]
    )
    train(x, y)
    result = [s.get_value() for s in shared]
    return Row(
        "pytensor",
        median_seconds(lambda: train(x, y), args.repeats, args.number),
        result,
        f"mode {pytensor.config.mode}",
    )


def torch_row(x, y, params, args) -> Row | None:
    torch = optional_import("torch")
    if torch is None:
        return None
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    state = [[torch.from_numpy(p.copy()) for p in params]]

    def step():
        ps = [p.requires_grad_(True) for p in state[0]]
        w1, b1, w2, b2 = ps
        h = torch.tanh(xt @ w1 + b1)
        loss = -(yt * torch.log_softmax(h @ w2 + b2, dim=1)).sum(dim=1).mean()
        gs = torch.autograd.grad(loss, ps)
        with torch.no_grad():
            state[0] = [p.detach() - LR * g for p, g in zip(ps, gs, strict=True)]
        return loss

    step()
    result = [p.numpy().copy() for p in state[0]]
    state[0] = [torch.from_numpy(p.copy()) for p in params]
    return Row(
        "torch eager",
        median_seconds(step, args.repeats, args.number),
        result,
        f"autograd, {torch.get_num_threads()} threads",
    )


def run(argv=None, paper: bool = False) -> bool:
    p = parser(__doc__)
    p.add_argument("--batch", type=int, default=60 if paper else 128)
    p.add_argument("--dtype", default="float64" if paper else "float32")
    p.add_argument(
        "--2010",
        dest="paper",
        action="store_true",
        help="the Theano paper's setup: batch 60, float64, one thread",
    )
    args = p.parse_args(argv)
    if args.paper and not paper:
        return run([a for a in (argv or sys.argv[1:]) if a != "--2010"], paper=True)
    x, y, params = init(args.batch, np.dtype(args.dtype))
    new, _ = numpy_step(x, y, *params)
    state = [params]

    def np_call():
        state[0], _ = numpy_step(x, y, *state[0])

    rows = [
        Row(
            "numpy",
            median_seconds(np_call, args.repeats, args.number),
            new,
            "hand-written backprop",
        )
    ]
    rows.append(arignote_row(x, y, params, args))
    skipped = []
    if not args.no_peers:
        for name, fn in [("jax", jax_row), ("pytensor", pytensor_row), ("torch", torch_row)]:
            if paper and name == "torch":
                optional_import("torch") and __import__("torch").set_num_threads(1)
            try:
                row = fn(x, y, params, args)
            except Exception as exc:  # noqa: BLE001 - a broken peer is skipped, not fatal
                skipped.append(f"{name} (failed: {type(exc).__name__}: {str(exc)[:80]})")
                continue
            if row is None:
                skipped.append(f"{name} (not installed)")
            else:
                rows.append(row)
    tol = 1e-4 if args.dtype == "float32" else 1e-9
    if paper:
        title = (
            f"mlp-2010: SGD step 784-500-10, batch {args.batch} {args.dtype}, "
            f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}; "
            "examples/s (ratio column: time ratio, <1 is faster)"
        )
        return report(title, rows, tol, skipped, value=lambda s: f"{args.batch / s:9.0f} ex/s")
    title = f"mlp: SGD step 784-500-10, batch {args.batch} {args.dtype}, per step"
    return report(title, rows, tol, skipped)


def main(argv=None) -> None:
    finish(run(argv))


def main_2010(argv=None) -> None:
    finish(run(argv, paper=True))


if __name__ == "__main__":
    main()
