"""Workload lenet: one SGD training step of a LeNet-style convolutional net.

conv 5x5 (20 maps) -> 2x2 max pool -> tanh -> conv 5x5 (50 maps) -> 2x2 max pool -> tanh
-> dense 800-500 tanh -> dense 500-10 -> softmax cross-entropy (mean over the batch), batch
64, float32, 28x28 single-channel inputs (the Theano tutorial's LeNet on MNIST-sized
images: 28 -> 24 -> 12 -> 8 -> 4); SGD with learning rate 0.1 on all eight parameters.
The convolutions are cross-correlations (PyTorch's and JAX's convention; arignote's
`conv2d` is called with `filter_flip=False`), so every system starts from the same weights.

arignote runs a Theano-style `train(x, y)` (`arignote.tensor.nnet.conv2d`,
`arignote.tensor.signal.pool.pool_2d`, `arignote.grad`, `updates`); the peers: PyTorch
eager (autograd, in-place SGD), `torch.compile` of the forward pass (its backward compiled
by AOTAutograd), JAX (`jit` of `value_and_grad` and the update) and PyTensor (when
importable). NumPy computes the reference loss (forward only). See `bench/nn.py` for the
columns.

    python -m bench lenet [--batch 64] [--repeats 5] [--peers torch,torch.compile,jax,pytensor]
"""

from __future__ import annotations

import sys

if __package__ in (None, ""):
    sys.path.insert(0, __file__.rsplit("/", 2)[0])

import numpy as np  # noqa: E402

from bench import nn  # noqa: E402
from bench.common import optional_import  # noqa: E402

LR = 0.1
SIDE = 28
KERNELS = (20, 50)
HIDDEN = 500
CLASSES = 10


def _glorot(rng, shape, fan_in, fan_out):
    bound = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-bound, bound, shape).astype(np.float32)


def init(batch: int, side: int = SIDE, kernels=KERNELS, hidden: int = HIDDEN):
    """Inputs in [0, 1), integer labels and the eight parameters (the tutorial's init)."""
    rng = np.random.default_rng(0)
    k0, k1 = kernels
    side2 = ((side - 4) // 2 - 4) // 2  # after conv, pool, conv, pool
    flat = k1 * side2 * side2
    x = rng.random((batch, 1, side, side), dtype=np.float32)
    labels = rng.integers(0, CLASSES, size=batch).astype(np.int32)
    params = [
        _glorot(rng, (k0, 1, 5, 5), 25, k0 * 25 / 4),
        np.zeros(k0, np.float32),
        _glorot(rng, (k1, k0, 5, 5), k0 * 25, k1 * 25 / 4),
        np.zeros(k1, np.float32),
        _glorot(rng, (flat, hidden), flat, hidden),
        np.zeros(hidden, np.float32),
        _glorot(rng, (hidden, CLASSES), hidden, CLASSES),
        np.zeros(CLASSES, np.float32),
    ]
    return x, labels, params


def _np_conv_pool_tanh(h, w, b):
    from numpy.lib.stride_tricks import sliding_window_view

    win = sliding_window_view(h, w.shape[2:], axis=(2, 3))  # B C OH OW kh kw
    c = np.tensordot(win, w, axes=([1, 4, 5], [1, 2, 3])).transpose(0, 3, 1, 2)
    n, m, oh, ow = c.shape
    p = c.reshape(n, m, oh // 2, 2, ow // 2, 2).max(axis=(3, 5))
    return np.tanh(p + b[None, :, None, None])


def numpy_loss(x, labels, params) -> float:
    """The mean cross-entropy of the network at `params` (float64 from float32 inputs)."""
    ps = [np.asarray(p, np.float64) for p in params]
    h = _np_conv_pool_tanh(np.asarray(x, np.float64), ps[0], ps[1])
    h = _np_conv_pool_tanh(h, ps[2], ps[3])
    h = np.tanh(h.reshape(len(x), -1) @ ps[4] + ps[5])
    z = h @ ps[6] + ps[7]
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return float(-logp[np.arange(len(x)), labels].mean())


def arignote_build(x, labels, params):
    import arignote
    import arignote.tensor as T
    from arignote.tensor.nnet import conv2d
    from arignote.tensor.signal import pool

    batch, _, side, _ = x.shape
    shared = [arignote.shared(p.copy()) for p in params]
    w0, b0, w1, b1, w2, b2, w3, b3 = shared
    xs, ys = T.tensor4("x", dtype="float32"), T.ivector("y")
    k0, k1 = w0.get_value().shape[0], w1.get_value().shape[0]
    s1 = (side - 4) // 2

    def conv_pool_tanh(h, w, b, image_shape, filter_shape):
        c = conv2d(h, w, input_shape=image_shape, filter_shape=filter_shape, filter_flip=False)
        pooled = pool.pool_2d(c, ws=(2, 2), ignore_border=True)
        return T.tanh(pooled + b.dimshuffle("x", 0, "x", "x"))

    h = conv_pool_tanh(xs, w0, b0, (batch, 1, side, side), (k0, 1, 5, 5))
    h = conv_pool_tanh(h, w1, b1, (batch, k0, s1, s1), (k1, k0, 5, 5))
    h = T.tanh(T.dot(h.flatten(2), w2) + b2)
    logp = T.nnet.logsoftmax(T.dot(h, w3) + b3)
    loss = -T.mean(logp[T.arange(ys.shape[0]), ys])
    grads = arignote.grad(loss, shared)
    train = arignote.function(
        [xs, ys],
        loss,
        name="train",
        updates=[(p, p - LR * g) for p, g in zip(shared, grads, strict=True)],
    )
    first = float(train(x, labels))
    return (lambda: train(x, labels)), first


def _torch_forward(torch, ps, x, y):
    import torch.nn.functional as F

    w0, b0, w1, b1, w2, b2, w3, b3 = ps
    h = torch.tanh(F.max_pool2d(F.conv2d(x, w0, b0), 2))
    h = torch.tanh(F.max_pool2d(F.conv2d(h, w1, b1), 2))
    h = torch.tanh(h.flatten(1) @ w2 + b2)
    return F.cross_entropy(h @ w3 + b3, y)


def torch_build(x, labels, params, compiled: bool):
    torch = optional_import("torch")
    if torch is None:
        return None
    forward = _torch_forward
    if compiled:
        forward = torch.compile(_torch_forward)
    xt, yt = torch.from_numpy(x), torch.from_numpy(labels.astype(np.int64))
    ps = [torch.from_numpy(p.copy()).requires_grad_(True) for p in params]

    def step():
        loss = forward(torch, ps, xt, yt)
        loss.backward()
        with torch.no_grad():
            for p in ps:
                p -= LR * p.grad
                p.grad = None
        return loss.detach()

    return step, float(step())


def jax_build(x, labels, params):
    jax = optional_import("jax")
    if jax is None:
        return None
    import jax.numpy as jnp
    from jax import lax

    def conv_pool_tanh(h, w, b):
        c = lax.conv_general_dilated(
            h, w, (1, 1), "VALID", dimension_numbers=("NCHW", "OIHW", "NCHW")
        )
        p = lax.reduce_window(c, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
        return jnp.tanh(p + b[None, :, None, None])

    def loss_fn(ps, x, y):
        w0, b0, w1, b1, w2, b2, w3, b3 = ps
        h = conv_pool_tanh(conv_pool_tanh(x, w0, b0), w1, b1)
        h = jnp.tanh(h.reshape(h.shape[0], -1) @ w2 + b2)
        logp = jax.nn.log_softmax(h @ w3 + b3)
        return -jnp.mean(logp[jnp.arange(y.shape[0]), y])

    @jax.jit
    def train(ps, x, y):
        val, gs = jax.value_and_grad(loss_fn)(ps, x, y)
        return [p - LR * g for p, g in zip(ps, gs, strict=True)], val

    xj, yj = jnp.asarray(x), jnp.asarray(labels)
    state = [[jnp.asarray(p) for p in params]]

    def step():
        state[0], val = train(state[0], xj, yj)
        return val.block_until_ready()

    return step, float(step())


def _pytensor_conv2d(pt):
    """PyTensor's cross-correlation of (B, C, H, W) images with (O, C, kh, kw) filters:
    Theano's `conv2d(..., filter_flip=False)` where PyTensor still has it (2.x), else
    (PyTensor 3, which dropped `abstract_conv`) its batched `signal.convolve2d` over
    broadcast (B, 1, C) x (1, O, C) planes, summed over C, with flipped filters."""
    try:
        from pytensor.tensor.conv.abstract_conv import conv2d
    except ImportError:
        from pytensor.tensor.signal import convolve2d

        def conv2d(h, w):
            planes = convolve2d(
                h.dimshuffle(0, "x", 1, 2, 3),
                w[:, :, ::-1, ::-1].dimshuffle("x", 0, 1, 2, 3),
                mode="valid",
            )
            return planes.sum(axis=2)

        return conv2d
    return lambda h, w: conv2d(h, w, filter_flip=False)


def pytensor_build(x, labels, params):
    pytensor = optional_import("pytensor")
    if pytensor is None:
        return None
    import pytensor.tensor as pt

    batch, _, side, _ = x.shape
    shared = [pytensor.shared(p.copy()) for p in params]
    w0, b0, w1, b1, w2, b2, w3, b3 = shared
    conv2d = _pytensor_conv2d(pt)

    def conv_pool_tanh(h, w, b, n):
        c = conv2d(h, w)
        m = w.get_value().shape[0]
        pooled = c.reshape((batch, m, n // 2, 2, n // 2, 2)).max(axis=(3, 5))
        return pt.tanh(pooled + b.dimshuffle("x", 0, "x", "x"))

    xs, ys = pt.tensor4("x", dtype="float32"), pt.ivector("y")
    h = conv_pool_tanh(conv_pool_tanh(xs, w0, b0, side - 4), w1, b1, (side - 4) // 2 - 4)
    h = pt.tanh(pt.dot(h.flatten(2), w2) + b2)
    logp = pt.special.log_softmax(pt.dot(h, w3) + b3, axis=1)
    loss = -pt.mean(logp[pt.arange(ys.shape[0]), ys])
    grads = pytensor.grad(loss, shared)
    lr = np.float32(LR)
    train = pytensor.function(
        [xs, ys], loss, updates=[(p, p - lr * g) for p, g in zip(shared, grads, strict=True)]
    )
    first = float(train(x, labels))
    return (lambda: train(x, labels)), first


def run(argv=None) -> bool:
    p = nn.parser(__doc__)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--side", type=int, default=SIDE, help="image side (>= 16, a multiple of 4)")
    p.add_argument("--kernels", type=int, nargs=2, default=list(KERNELS))
    p.add_argument("--hidden", type=int, default=HIDDEN)
    args = p.parse_args(argv)
    if args.side < 16 or args.side % 4:
        raise SystemExit(f"--side: expected a multiple of 4 of at least 16, got {args.side}")
    nn.setup(args)
    x, labels, params = init(args.batch, args.side, args.kernels, args.hidden)
    ref = numpy_loss(x, labels, params)
    data = (x, labels, params)

    def checked(build):
        """The builder's step, and a check of its first call's loss against NumPy's."""

        def wrapped():
            built = build()
            if built is None:
                return None
            step, first = built
            return step, lambda: (first, ref)

        return wrapped

    builders = {
        "arignote": lambda: nn.measure(
            "arignote",
            checked(lambda: arignote_build(*data)),
            args,
            "conv2d + pool_2d, grad, updates",
        ),
        "torch": lambda: nn.measure(
            "torch eager",
            checked(lambda: torch_build(*data, False)),
            args,
            "autograd, in-place SGD" + nn.torch_threads_note(),
        ),
        "torch.compile": lambda: nn.measure(
            "torch.compile",
            checked(lambda: torch_build(*data, True)),
            args,
            "compiled forward, AOTAutograd backward" + nn.torch_threads_note(),
        ),
        "jax": lambda: nn.measure(
            "jax jit", checked(lambda: jax_build(*data)), args, "value_and_grad + update in one jit"
        ),
        "pytensor": lambda: nn.measure("pytensor", checked(lambda: pytensor_build(*data)), args),
    }
    rows, skipped = nn.run_systems(builders, args)
    k0, k1 = args.kernels
    title = (
        f"lenet: SGD step conv5x5({k0})-pool-conv5x5({k1})-pool-{args.hidden}-10, "
        f"batch {args.batch}, {args.side}x{args.side}, float32, per step"
    )
    return nn.report(title, rows, 1e-4, skipped)


def main(argv=None) -> None:
    nn.finish(run(argv))


if __name__ == "__main__":
    main()
