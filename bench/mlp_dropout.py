"""Workload mlp-dropout: one SGD step of an MLP 784-500-500-10 with dropout.

Two tanh hidden layers of 500 units, each followed by dropout with drop probability 0.5
(inverted dropout: the kept units are scaled by 1 / 0.5 during training, PyTorch's
`F.dropout`), a softmax cross-entropy output (mean over the batch), batch 128, float32,
SGD with learning rate 0.1 on the six parameters. Every step draws fresh masks from the
system's own generator: arignote `MRG_RandomStreams.binomial` (Theano's dropout idiom),
PyTorch `F.dropout`, JAX `jax.random.bernoulli` with the key split inside the jitted
step, PyTensor its `RandomStream.binomial`.

Since the masks differ between systems, the check before timing takes, for each system,
a loss it computed together with the masks it drew, and compares that loss with NumPy's
forward pass using those very masks (the masks must also keep about half the units).
See `bench/nn.py` for the columns.

    python -m bench mlp-dropout [--batch 128] [--repeats 5] [--peers torch,torch.compile,jax]
"""

from __future__ import annotations

import sys

if __package__ in (None, ""):
    sys.path.insert(0, __file__.rsplit("/", 2)[0])

import numpy as np  # noqa: E402

from bench import nn  # noqa: E402
from bench.common import optional_import  # noqa: E402

LR = 0.1
SIZES = (784, 500, 500, 10)
DROP = 0.5
KEEP = 1.0 - DROP


def init(batch: int, sizes=SIZES):
    """Inputs, integer labels and the six parameters (scaled normal weights, zero biases)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    labels = rng.integers(0, sizes[-1], size=batch).astype(np.int32)
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:], strict=True):
        params.append((rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(np.float32))
        params.append(np.zeros(n_out, np.float32))
    return x, labels, params


def numpy_loss(x, labels, params, masks) -> float:
    """The mean cross-entropy with the given 0/1 dropout masks (float64)."""
    w1, b1, w2, b2, w3, b3 = (np.asarray(p, np.float64) for p in params)
    m1, m2 = (np.asarray(m, np.float64) for m in masks)
    h = np.tanh(np.asarray(x, np.float64) @ w1 + b1) * m1 / KEEP
    h = np.tanh(h @ w2 + b2) * m2 / KEEP
    z = h @ w3 + b3
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return float(-logp[np.arange(len(x)), labels].mean())


def _checked(x, labels, loss, masks, params) -> tuple[float, float]:
    """(the system's loss, NumPy's loss with its masks); the masks must be 0/1 and keep
    KEEP of the units within 6 binomial standard deviations (a generator stuck at 0 or 1
    would pass the loss check)."""
    for m in masks:
        m = np.asarray(m)
        if not np.all((m == 0) | (m == 1)):
            raise AssertionError("dropout mask has values other than 0 and 1")
        if abs(m.mean() - KEEP) > 6 * np.sqrt(KEEP * DROP / m.size):
            raise AssertionError(f"dropout mask keeps {m.mean():.3f} of the units, not {KEEP}")
    return float(loss), numpy_loss(x, labels, params, masks)


def _theano_style_graph(T, xs, shared, draw):
    """The Theano idiom: `h * srng.binomial(h.shape, p=keep) / keep` after each layer
    (`draw(shape)` is the float32 binomial draw)."""
    w1, b1, w2, b2, w3, b3 = shared
    masks = []

    def dropout(h):
        mask = draw(h.shape)
        masks.append(mask)
        return h * mask / np.float32(KEEP)

    h = dropout(T.tanh(T.dot(xs, w1) + b1))
    h = dropout(T.tanh(T.dot(h, w2) + b2))
    return masks, h, w3, b3


def arignote_build(x, labels, params):
    import arignote
    import arignote.tensor as T
    from arignote.sandbox.rng_mrg import MRG_RandomStreams

    shared = [arignote.shared(p.copy()) for p in params]
    xs, ys = T.matrix("x", dtype="float32"), T.ivector("y")
    srng = MRG_RandomStreams(seed=1234)
    masks, h, w3, b3 = _theano_style_graph(
        T, xs, shared, lambda shape: srng.binomial(size=shape, n=1, p=KEEP, dtype="float32")
    )
    logp = T.nnet.logsoftmax(T.dot(h, w3) + b3)
    loss = -T.mean(logp[T.arange(ys.shape[0]), ys])
    grads = arignote.grad(loss, shared)
    train = arignote.function(
        [xs, ys],
        loss,
        name="train",
        updates=[(p, p - LR * g) for p, g in zip(shared, grads, strict=True)],
    )
    train(x, labels)

    def check():
        probe = arignote.function([xs, ys], [loss, *masks])  # same graph, no updates
        at = [s.get_value() for s in shared]
        value, *drawn = probe(x, labels)
        return _checked(x, labels, value, drawn, at)

    return (lambda: train(x, labels)), check


def _torch_forward(torch, ps, x, y):
    import torch.nn.functional as F

    w1, b1, w2, b2, w3, b3 = ps
    d1 = F.dropout(torch.tanh(x @ w1 + b1), DROP, training=True)
    d2 = F.dropout(torch.tanh(d1 @ w2 + b2), DROP, training=True)
    return F.cross_entropy(d2 @ w3 + b3, y), d1, d2


def torch_build(x, labels, params, compiled: bool):
    torch = optional_import("torch")
    if torch is None:
        return None
    forward = torch.compile(_torch_forward) if compiled else _torch_forward
    xt, yt = torch.from_numpy(x), torch.from_numpy(labels.astype(np.int64))
    ps = [torch.from_numpy(p.copy()).requires_grad_(True) for p in params]

    def step():
        loss = forward(torch, ps, xt, yt)[0]
        loss.backward()
        with torch.no_grad():
            for p in ps:
                p -= LR * p.grad
                p.grad = None
        return loss.detach()

    step()

    def check():
        at = [p.detach().numpy().copy() for p in ps]
        with torch.no_grad():
            loss, d1, d2 = forward(torch, ps, xt, yt)
        # a dropped unit is exactly 0; a kept one is tanh(...) / 0.5, 0 only by accident
        masks = [(d != 0).numpy().astype(np.float32) for d in (d1, d2)]
        return _checked(x, labels, float(loss), masks, at)

    return step, check


def jax_build(x, labels, params):
    jax = optional_import("jax")
    if jax is None:
        return None
    import jax.numpy as jnp

    def loss_fn(ps, key, x, y):
        w1, b1, w2, b2, w3, b3 = ps
        k1, k2 = jax.random.split(key)
        h = jnp.tanh(x @ w1 + b1)
        m1 = jax.random.bernoulli(k1, KEEP, h.shape)
        h = jnp.where(m1, h / KEEP, 0)
        h = jnp.tanh(h @ w2 + b2)
        m2 = jax.random.bernoulli(k2, KEEP, h.shape)
        h = jnp.where(m2, h / KEEP, 0)
        logp = jax.nn.log_softmax(h @ w3 + b3)
        return -jnp.mean(logp[jnp.arange(y.shape[0]), y]), (m1, m2)

    @jax.jit
    def train(ps, key, x, y):
        key, sub = jax.random.split(key)
        (val, masks), gs = jax.value_and_grad(loss_fn, has_aux=True)(ps, sub, x, y)
        return [p - LR * g for p, g in zip(ps, gs, strict=True)], key, val, masks

    xj, yj = jnp.asarray(x), jnp.asarray(labels)
    state = [[jnp.asarray(p) for p in params], jax.random.key(1234)]

    def step():
        state[0], state[1], val, masks = train(state[0], state[1], xj, yj)
        val.block_until_ready()
        return val, masks

    step()

    def check():
        at = [np.asarray(p) for p in state[0]]
        val, masks = step()
        return _checked(x, labels, float(val), [np.asarray(m, np.float32) for m in masks], at)

    return step, check


def pytensor_build(x, labels, params):
    pytensor = optional_import("pytensor")
    if pytensor is None:
        return None
    import pytensor.tensor as pt
    from pytensor.tensor.random.utils import RandomStream

    shared = [pytensor.shared(p.copy()) for p in params]
    xs, ys = pt.matrix("x", dtype="float32"), pt.ivector("y")
    srng = RandomStream(seed=1234)  # its binomial is integer-valued: cast the mask
    masks, h, w3, b3 = _theano_style_graph(
        pt, xs, shared, lambda shape: pt.cast(srng.binomial(n=1, p=KEEP, size=shape), "float32")
    )
    logp = pt.special.log_softmax(pt.dot(h, w3) + b3, axis=1)
    loss = -pt.mean(logp[pt.arange(ys.shape[0]), ys])
    grads = pytensor.grad(loss, shared)
    lr = np.float32(LR)
    train = pytensor.function(
        [xs, ys], loss, updates=[(p, p - lr * g) for p, g in zip(shared, grads, strict=True)]
    )
    train(x, labels)

    def check():
        probe = pytensor.function([xs, ys], [loss, *masks])
        at = [s.get_value() for s in shared]
        value, *drawn = probe(x, labels)
        return _checked(x, labels, value, drawn, at)

    return (lambda: train(x, labels)), check


def run(argv=None) -> bool:
    p = nn.parser(__doc__)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--hidden", type=int, default=SIZES[1], help="units of each hidden layer")
    args = p.parse_args(argv)
    nn.setup(args)
    sizes = (SIZES[0], args.hidden, args.hidden, SIZES[-1])
    data = init(args.batch, sizes)
    builders = {
        "arignote": lambda: nn.measure(
            "arignote",
            lambda: arignote_build(*data),
            args,
            "MRG_RandomStreams.binomial masks, grad, updates",
        ),
        "torch": lambda: nn.measure(
            "torch eager",
            lambda: torch_build(*data, False),
            args,
            "F.dropout, autograd, in-place SGD" + nn.torch_threads_note(),
        ),
        "torch.compile": lambda: nn.measure(
            "torch.compile",
            lambda: torch_build(*data, True),
            args,
            "compiled forward, AOTAutograd backward" + nn.torch_threads_note(),
        ),
        "jax": lambda: nn.measure(
            "jax jit",
            lambda: jax_build(*data),
            args,
            "bernoulli masks, value_and_grad + update in one jit",
        ),
        "pytensor": lambda: nn.measure(
            "pytensor", lambda: pytensor_build(*data), args, "RandomStream.binomial masks"
        ),
    }
    rows, skipped = nn.run_systems(builders, args)
    title = (
        f"mlp-dropout: SGD step 784-{args.hidden}-{args.hidden}-10 tanh, dropout "
        f"{DROP} after each hidden layer, batch {args.batch}, float32, per step"
    )
    return nn.report(title, rows, 1e-4, skipped)


def main(argv=None) -> None:
    nn.finish(run(argv))


if __name__ == "__main__":
    main()
