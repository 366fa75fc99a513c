#!/usr/bin/env python
"""Train an LSTM written with `arignote.scan` on a synthetic sequence task.

The task: read a sequence of random numbers and output, at every step, the input seen
`DELAY` steps earlier (a delayed copy: the network must remember the last few inputs).
The LSTM's step is an ordinary Python function traced once by `scan`; the loss is the
mean squared error over all steps; `arignote.grad` backpropagates through time (a
reverse scan) and each call of `train` takes one Adam step on the shared parameters
through `updates`. The training stops once the loss has fallen by 10x.

    python examples/lstm.py [--iterations 400] [--linker cvm|py]
"""

from __future__ import annotations

import argparse

import numpy as np

import arignote
import arignote.tensor as T

DELAY = 2
HIDDEN = 16
STEPS = 12
BATCH = 32


def _param(rng: np.random.Generator, shape: tuple[int, ...], name: str, scale: float = 0.3):
    return arignote.shared((rng.standard_normal(shape) * scale).astype("float64"), name=name)


def build(rng: np.random.Generator, linker: str, lr: float = 0.02):
    """The compiled `train(x, y) -> loss` function (an Adam step per call)."""
    gates = 4 * HIDDEN
    w = _param(rng, (1, gates), "W")  # input -> gates (i, f, o, g)
    u = _param(rng, (HIDDEN, gates), "U")  # hidden -> gates
    b = arignote.shared(np.zeros(gates), name="b")
    v = _param(rng, (HIDDEN, 1), "V")  # hidden -> prediction
    params = [w, u, b, v]

    x = T.tensor3("x")  # steps x batch x 1
    y = T.tensor3("y")
    h0 = T.zeros((x.shape[1], HIDDEN))
    c0 = T.zeros((x.shape[1], HIDDEN))

    def step(x_t, h, c, w, u, b, v):
        z = T.dot(x_t, w) + T.dot(h, u) + b
        i = T.nnet.sigmoid(z[:, :HIDDEN])
        f = T.nnet.sigmoid(z[:, HIDDEN : 2 * HIDDEN])
        o = T.nnet.sigmoid(z[:, 2 * HIDDEN : 3 * HIDDEN])
        g = T.tanh(z[:, 3 * HIDDEN :])
        c_new = f * c + i * g
        h_new = o * T.tanh(c_new)
        return [h_new, c_new, T.dot(h_new, v)]  # the prediction is not fed back

    (_, _, prediction), _ = arignote.scan(
        step, sequences=x, outputs_info=[h0, c0, None], non_sequences=[w, u, b, v]
    )
    loss = T.mean((prediction - y) ** 2)
    grads = arignote.grad(loss, params)
    updates = _adam(params, grads, lr)
    mode = arignote.Mode(linker=linker)
    return arignote.function([x, y], loss, updates=updates, mode=mode)


def _adam(params, grads, lr: float, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8):
    t = arignote.shared(np.array(0.0), name="t")
    t_new = t + 1
    updates = [(t, t_new)]
    scale = lr * T.sqrt(1 - b2**t_new) / (1 - b1**t_new)
    for p, g in zip(params, grads, strict=True):
        m = arignote.shared(np.zeros_like(p.get_value()))
        s = arignote.shared(np.zeros_like(p.get_value()))
        m_new = b1 * m + (1 - b1) * g
        s_new = b2 * s + (1 - b2) * g * g
        updates += [(m, m_new), (s, s_new), (p, p - scale * m_new / (T.sqrt(s_new) + eps))]
    return updates


def batch(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    x = rng.uniform(-1, 1, (STEPS, BATCH, 1))
    y = np.zeros_like(x)
    y[DELAY:] = x[:-DELAY]
    return x, y


def train(iterations: int, linker: str, seed: int = 0, verbose: bool = True) -> list[float]:
    """Train until the loss has fallen 10x (or `iterations` runs); the losses."""
    rng = np.random.default_rng(seed)
    step = build(rng, linker)
    losses: list[float] = []
    for it in range(iterations):
        losses.append(float(step(*batch(rng))))
        if verbose and (it % 10 == 0 or losses[-1] <= losses[0] / 10):
            print(f"iteration {it:4d}  loss {losses[-1]:.5f}")
        if losses[-1] <= losses[0] / 10:
            break
    return losses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=400)
    parser.add_argument("--linker", default="cvm")
    args = parser.parse_args()
    losses = train(args.iterations, args.linker)
    ratio = losses[0] / losses[-1]
    print(f"loss {losses[0]:.5f} -> {losses[-1]:.5f} ({ratio:.1f}x lower) in {len(losses)} steps")
    if ratio < 10:
        raise SystemExit("the loss did not fall by 10x")


if __name__ == "__main__":
    main()
