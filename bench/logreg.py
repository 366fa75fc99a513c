"""Workload 1, logreg: one full-batch gradient step of Theano's logistic regression.

N=400 examples of 784 features, float32. arignote runs the seed's Theano-style `train`
function (outputs `[prediction, xent]`, updates of the shared `w` and `b`, the naive
`log(1 - p)` loss left to arignote's stabilize rewrites); NumPy runs the gradient written
by hand; JAX (jit), PyTensor and PyTorch (eager autograd) run the stable (softplus) form
when they are installed. Every system starts one step from the same weights and the new
weights are compared with NumPy's.

    python -m bench logreg [--repeats 7] [--n 400] [--feats 784] [--excluding row_fusion]
"""

from __future__ import annotations

import sys

if __package__ in (None, ""):
    sys.path.insert(0, __file__.rsplit("/", 2)[0])

import numpy as np

from bench.common import Row, finish, median_seconds, optional_import, parser, report

LEARNING_RATE = 0.1
L2 = 0.01


def init(n: int, feats: int):
    """The step's data: examples x, labels y, starting weights w0 and bias b0."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, feats)).astype(np.float32)
    y = rng.integers(0, 2, size=n).astype(np.float32)
    w0 = (rng.standard_normal(feats) * 0.01).astype(np.float32)
    return x, y, w0, np.float32(0.0)


def numpy_step(x, y, w, b):
    z = x.dot(w) + b
    p_1 = 1 / (1 + np.exp(-z))
    xent = y * np.logaddexp(0, -z) + (1 - y) * np.logaddexp(0, z)
    residual = (p_1 - y) / np.float32(len(y))
    gw = residual.dot(x) + np.float32(2 * L2) * w
    gb = residual.sum()
    lr = np.float32(LEARNING_RATE)
    return w - lr * gw, b - lr * gb, p_1 > 0.5, xent


def arignote_row(x, y, w0, b0, args, excluding: str = "") -> Row:
    import arignote
    import arignote.tensor as T

    xs, ys = T.fmatrix("x"), T.fvector("y")
    w = arignote.shared(w0.copy(), name="w")
    b = arignote.shared(np.float32(b0), name="b")
    p_1 = 1 / (1 + T.exp(-T.dot(xs, w) - b))
    xent = -ys * T.log(p_1) - (1 - ys) * T.log(1 - p_1)  # stabilized by the optimizer
    cost = xent.mean() + L2 * (w**2).sum()
    gw, gb = arignote.grad(cost, [w, b])
    mode = arignote.Mode().excluding(excluding) if excluding else None
    train = arignote.function(
        [xs, ys],
        [p_1 > 0.5, xent],
        updates=[(w, w - LEARNING_RATE * gw), (b, b - LEARNING_RATE * gb)],
        name="train",
        mode=mode,
    )
    train(x, y)
    result = (w.get_value(), np.asarray(b.get_value()))
    t = median_seconds(lambda: train(x, y), args.repeats, args.number)
    if excluding:
        notes = f"the same, Mode().excluding({excluding!r})"
        return Row(f"arignote -{excluding}", t, result, notes)
    return Row("arignote", t, result, "train(x, y) with updates (naive log(1-p) loss)")


def jax_row(x, y, w0, b0, args) -> Row | None:
    jax = optional_import("jax")
    if jax is None:
        return None
    import jax.numpy as jnp

    def loss(w, b, x, y):
        z = x @ w + b
        xent = y * jax.nn.softplus(-z) + (1 - y) * jax.nn.softplus(z)
        return xent.mean() + L2 * (w**2).sum(), (z > 0, xent)

    @jax.jit
    def step(w, b, x, y):
        (gw, gb), aux = jax.grad(loss, argnums=(0, 1), has_aux=True)(w, b, x, y)
        return w - LEARNING_RATE * gw, b - LEARNING_RATE * gb, aux

    xj, yj = jnp.asarray(x), jnp.asarray(y)
    w1, b1, _ = step(jnp.asarray(w0), jnp.float32(b0), xj, yj)
    result = (np.asarray(w1), np.asarray(b1))
    state = [jnp.asarray(w0), jnp.float32(b0)]

    def call():
        w, b, aux = step(state[0], state[1], xj, yj)
        jax.block_until_ready(aux)
        state[0], state[1] = w, b

    return Row(
        "jax jit",
        median_seconds(call, args.repeats, args.number),
        result,
        "softplus loss, jax.grad",
    )


def pytensor_row(x, y, w0, b0, args) -> Row | None:
    pytensor = optional_import("pytensor")
    if pytensor is None:
        return None
    import pytensor.tensor as pt

    xs, ys = pt.fmatrix("x"), pt.fvector("y")
    w = pytensor.shared(w0.copy(), name="w")
    b = pytensor.shared(np.float32(b0), name="b")
    z = pt.dot(xs, w) + b
    xent = ys * pt.softplus(-z) + (1 - ys) * pt.softplus(z)
    cost = xent.mean() + L2 * (w**2).sum()
    gw, gb = pytensor.grad(cost, [w, b])
    lr = np.float32(LEARNING_RATE)
    train = pytensor.function([xs, ys], [z > 0, xent], updates=[(w, w - lr * gw), (b, b - lr * gb)])
    train(x, y)
    result = (w.get_value(), np.asarray(b.get_value()))
    mode = pytensor.config.mode
    return Row(
        "pytensor",
        median_seconds(lambda: train(x, y), args.repeats, args.number),
        result,
        f"softplus loss, mode {mode}, linker {pytensor.config.linker}",
    )


def torch_row(x, y, w0, b0, args) -> Row | None:
    torch = optional_import("torch")
    if torch is None:
        return None
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    state = [torch.from_numpy(w0.copy()), torch.tensor(b0, dtype=torch.float32)]

    def step():
        w = state[0].requires_grad_(True)
        b = state[1].requires_grad_(True)
        z = xt @ w + b
        sp = torch.nn.functional.softplus
        xent = yt * sp(-z) + (1 - yt) * sp(z)
        cost = xent.mean() + L2 * (w**2).sum()
        gw, gb = torch.autograd.grad(cost, [w, b])
        with torch.no_grad():
            state[0] = w.detach() - LEARNING_RATE * gw
            state[1] = b.detach() - LEARNING_RATE * gb
        return (z > 0), xent.detach()

    step()
    result = (state[0].numpy().copy(), state[1].numpy().copy())
    state[:] = [torch.from_numpy(w0.copy()), torch.tensor(b0, dtype=torch.float32)]
    return Row(
        "torch eager",
        median_seconds(step, args.repeats, args.number),
        result,
        f"softplus loss, autograd, {torch.get_num_threads()} threads",
    )


def run(argv=None) -> bool:
    p = parser(__doc__)
    p.add_argument("--n", type=int, default=400)
    p.add_argument("--feats", type=int, default=784)
    p.add_argument(
        "--excluding",
        action="append",
        default=[],
        metavar="TAG",
        help="also time arignote with Mode().excluding(TAG) (e.g. row_fusion)",
    )
    args = p.parse_args(argv)
    x, y, w0, b0 = init(args.n, args.feats)

    w1, b1, _, _ = numpy_step(x, y, w0, b0)
    state = [w0, b0]

    def np_call():
        state[0], state[1], _, _ = numpy_step(x, y, state[0], state[1])

    rows = [
        Row(
            "numpy",
            median_seconds(np_call, args.repeats, args.number),
            (w1, np.asarray(b1)),
            "hand-written gradient",
        )
    ]
    rows.append(arignote_row(x, y, w0, b0, args))
    rows.extend(arignote_row(x, y, w0, b0, args, tag) for tag in args.excluding)
    skipped = []
    if not args.no_peers:
        for name, fn in [("jax", jax_row), ("pytensor", pytensor_row), ("torch", torch_row)]:
            try:
                row = fn(x, y, w0, b0, args)
            except Exception as exc:  # noqa: BLE001 - a broken peer is skipped, not fatal
                skipped.append(f"{name} (failed: {type(exc).__name__}: {str(exc)[:80]})")
                continue
            if row is None:
                skipped.append(f"{name} (not installed)")
            else:
                rows.append(row)
    title = f"logreg: one GD step, N={args.n} feats={args.feats} float32, per step"
    return report(title, rows, tol=1e-4, skipped=skipped)


def main(argv=None) -> None:
    finish(run(argv))


if __name__ == "__main__":
    main()
