"""The max pools of the LeNet step (`python -m bench.pool`): forward and backward.

LeNet on 28x28 float32 images, batch 64: conv 5x5 (20 maps) -> 2x2 max pool -> conv 5x5
(50 maps) -> 2x2 max pool -> dense. The pools see (64, 20, 24, 24) and (64, 50, 8, 8).
One step here is both pools forward and their gradients for given output gradients
(`pool_2d(..., ignore_border=True)`, `arignote.grad`), against NumPy (a reshape and a
maximum, the gradient through a mask of the maxima) and PyTorch (`max_pool2d` and
`backward`) when installed. The gradients differ on ties (arignote and Theano give the
gradient to every tied maximum, PyTorch to one): random inputs have none.
"""

from __future__ import annotations

import numpy as np

from bench.common import Row, finish, median_seconds, optional_import, parser, report

SHAPES = ((64, 20, 24, 24), (64, 50, 8, 8))


def numpy_step(xs: list[np.ndarray], gs: list[np.ndarray]) -> list[np.ndarray]:
    out = []
    for x, g in zip(xs, gs, strict=True):
        n, c, h, w = x.shape
        windows = x.reshape(n, c, h // 2, 2, w // 2, 2)
        y = windows.max(axis=(3, 5))
        hit = windows == y[:, :, :, None, :, None]
        gx = (hit * g[:, :, :, None, :, None]).reshape(x.shape)
        out += [y, gx]
    return out


def arignote_step():
    import arignote
    import arignote.tensor as T
    from arignote.tensor.signal.pool import pool_2d

    inputs, outputs = [], []
    for k in range(len(SHAPES)):
        x, g = T.tensor4(f"x{k}", dtype="float32"), T.tensor4(f"g{k}", dtype="float32")
        y = pool_2d(x, (2, 2), ignore_border=True)
        inputs += [x, g]
        outputs += [y, arignote.grad(T.sum(y * g), x)]
    return arignote.function(inputs, outputs)


def torch_step(torch):
    functional = torch.nn.functional

    def step(xs: list[np.ndarray], gs: list[np.ndarray]) -> list[np.ndarray]:
        out = []
        for x, g in zip(xs, gs, strict=True):
            tx = torch.from_numpy(x).requires_grad_(True)
            y = functional.max_pool2d(tx, 2)
            y.backward(torch.from_numpy(g))
            out += [y.detach().numpy(), tx.grad.numpy()]
        return out

    return step


def main(argv: list[str] | None = None) -> None:
    args = parser(__doc__).parse_args(argv)
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(s, dtype=np.float32) for s in SHAPES]
    gs = [rng.standard_normal((n, c, h // 2, w // 2), dtype=np.float32) for n, c, h, w in SHAPES]
    f = arignote_step()
    flat = [v for pair in zip(xs, gs, strict=True) for v in pair]

    def seconds(fn) -> float:
        return median_seconds(fn, args.repeats, args.number)

    rows = [Row("numpy", seconds(lambda: numpy_step(xs, gs)), numpy_step(xs, gs))]
    rows.append(Row("arignote", seconds(lambda: f(*flat)), f(*flat)))
    torch = None if args.no_peers else optional_import("torch")
    skipped = [] if torch is not None else ["torch (not installed)"]
    if torch is not None:
        step = torch_step(torch)
        rows.append(Row("pytorch", seconds(lambda: step(xs, gs)), step(xs, gs)))
    finish(report("LeNet max pools, forward + backward, float32", rows, 1e-6, skipped))


if __name__ == "__main__":
    main()
