#!/usr/bin/env python
"""Train the Theano tutorial's denoising autoencoder on scikit-learn's digits.

The model of the deep-learning tutorial's `dA.py`: tied weights (`W` encodes with a
sigmoid, `W.T` decodes with a sigmoid), weights drawn uniformly in
+-4 sqrt(6 / (n_hidden + n_visible)); each input is corrupted by zeroing every pixel with
probability `corruption_level`, a mask drawn by `MRG_RandomStreams.binomial` inside the
compiled function (a fresh mask at every call: the random stream's state is a shared
variable that the function updates); the cost is the mean cross-entropy between the clean
input and the reconstruction of the corrupted one; `train_da(index)` takes one SGD step
on the minibatch its `givens` slice out of the shared data set. The digits (scaled to
[0, 1]) are 1000 images for training, 297 left unused (the validation part of the MLP's
split) and 500 for the test.

What it reaches, on the 500 test images with 30 % of their pixels zeroed (by NumPy):
the mean squared error of the reconstruction to the clean image, against that of the
corrupted image itself, and the fraction of the clean images' ink pixels (> 0.5) that
come out above 0.5. The defaults (`--epochs 30 --hidden 100 --corruption 0.3 --batch 20
--lr 0.1`) take the squared error from 0.069 to about 0.027 (2.6x lower) and the ink
pixels right from 70.6 % to about 84 %; the training cost (cross-entropy per image of 64
pixels) falls from about 25 to about 19. The tests' small run (`--epochs 5 --hidden 50`)
brings the squared error below 0.6 of the corrupted image's (about 0.032 against 0.069)
and at least 5 points more ink pixels right (about 12 more). An untrained autoencoder
gives 0.27 (four times worse than the corrupted image).

    python examples/dae.py [--epochs 30] [--hidden 100] [--corruption 0.3] [--batch 20]
                           [--lr 0.1] [--plot dae_loss.png] [--quiet]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from example_utils import common_parser, load_digits_split, plot_curves, progress  # noqa: E402

import arignote  # noqa: E402
import arignote.tensor as T  # noqa: E402
from arignote.sandbox.rng_mrg import MRG_RandomStreams as RandomStreams  # noqa: E402

FLOATX = arignote.config.floatX


class dA:  # noqa: N801 - the tutorial's name
    """A denoising autoencoder with tied weights."""

    def __init__(
        self,
        numpy_rng: np.random.RandomState,
        theano_rng=None,
        input=None,
        n_visible: int = 64,
        n_hidden: int = 100,
    ):
        self.n_visible, self.n_hidden = n_visible, n_hidden
        if theano_rng is None:
            theano_rng = RandomStreams(numpy_rng.randint(2**30))
        bound = 4 * np.sqrt(6.0 / (n_hidden + n_visible))
        initial_w = np.asarray(
            numpy_rng.uniform(-bound, bound, (n_visible, n_hidden)), dtype=FLOATX
        )
        self.W = arignote.shared(initial_w, name="W", borrow=True)
        self.b = arignote.shared(np.zeros(n_hidden, dtype=FLOATX), name="b", borrow=True)
        self.b_prime = arignote.shared(np.zeros(n_visible, dtype=FLOATX), name="b'", borrow=True)
        self.W_prime = self.W.T
        self.theano_rng = theano_rng
        self.x = T.matrix("input") if input is None else input
        self.params = [self.W, self.b, self.b_prime]

    def get_corrupted_input(self, input, corruption_level: float):
        """Each entry kept with probability 1 - corruption_level, else zeroed."""
        return (
            self.theano_rng.binomial(size=input.shape, n=1, p=1 - corruption_level, dtype=FLOATX)
            * input
        )

    def get_hidden_values(self, input):
        return T.nnet.sigmoid(T.dot(input, self.W) + self.b)

    def get_reconstructed_input(self, hidden):
        return T.nnet.sigmoid(T.dot(hidden, self.W_prime) + self.b_prime)

    def get_cost_updates(self, corruption_level: float, learning_rate: float):
        tilde_x = self.get_corrupted_input(self.x, corruption_level)
        y = self.get_hidden_values(tilde_x)
        z = self.get_reconstructed_input(y)
        cross_entropy = -T.sum(self.x * T.log(z) + (1 - self.x) * T.log(1 - z), axis=1)
        cost = T.mean(cross_entropy)
        gparams = T.grad(cost, self.params)
        updates = [(p, p - learning_rate * g) for p, g in zip(self.params, gparams, strict=True)]
        return cost, updates


def denoising_scores(
    reconstruct, clean: np.ndarray, corruption: float, seed: int
) -> dict[str, float]:
    """How well the reconstruction of a corrupted copy of `clean` restores it.

    The copy is corrupted as in training (each pixel zeroed with probability
    `corruption`, here by NumPy). `mse_*`: the mean squared error to the clean images of
    the corrupted copy and of its reconstruction; `ink_*`: the fraction of the clean
    images' ink pixels (value > 0.5) that the corrupted copy and the reconstruction have
    above 0.5 (the corruption erases about `corruption` of them).
    """
    keep = np.random.default_rng(seed).random(clean.shape) >= corruption
    corrupted = clean * keep
    z = reconstruct(np.asarray(corrupted, dtype=FLOATX))
    ink = clean > 0.5
    return {
        "mse_corrupted": float(np.mean((corrupted - clean) ** 2)),
        "mse_reconstructed": float(np.mean((z - clean) ** 2)),
        "ink_corrupted": float(np.mean(corrupted[ink] > 0.5)),
        "ink_reconstructed": float(np.mean(z[ink] > 0.5)),
    }


def train(args) -> dict:
    """Train; the per-epoch costs and the linear-probe test accuracy of the codes."""
    split = load_digits_split(seed=0)
    train_x = arignote.shared(np.asarray(split.train_x, dtype=FLOATX), borrow=True)
    index = T.lscalar("index")
    x = T.matrix("x")
    rng = np.random.RandomState(args.seed)
    da = dA(rng, RandomStreams(rng.randint(2**30)), input=x, n_visible=64, n_hidden=args.hidden)
    cost, updates = da.get_cost_updates(args.corruption, args.lr)
    bs = args.batch
    train_da = arignote.function(
        [index], cost, updates=updates, givens={x: train_x[index * bs : (index + 1) * bs]}
    )
    reconstruct = arignote.function([x], da.get_reconstructed_input(da.get_hidden_values(x)))
    n_batches = len(split.train_y) // bs
    history: dict = {"cost": []}
    bar = progress(args.epochs, args.quiet)
    for epoch in range(1, args.epochs + 1):
        history["cost"].append(float(np.mean([train_da(i) for i in range(n_batches)])))
        bar.update(1)
        bar.set_postfix(cost=f"{history['cost'][-1]:.3f}")
        if not args.quiet:
            bar.write(f"epoch {epoch:3d}  cost {history['cost'][-1]:.4f}")
    bar.close()
    history.update(denoising_scores(reconstruct, split.test_x, args.corruption, args.seed))
    return history


def main(argv=None) -> dict:
    p = common_parser(__doc__, epochs=30, plot="dae_loss.png")
    p.add_argument("--hidden", type=int, default=100, help="hidden units")
    p.add_argument(
        "--corruption", type=float, default=0.3, help="probability that a pixel is zeroed"
    )
    p.add_argument("--batch", type=int, default=20, help="minibatch size")
    p.add_argument("--lr", type=float, default=0.1, help="SGD learning rate")
    args = p.parse_args(argv)
    history = train(args)
    plot_curves(
        args.plot,
        {"cross-entropy": history["cost"]},
        title=f"denoising autoencoder 64-{args.hidden}-64, "
        f"{args.corruption:.0%} corruption (arignote)",
        ylabel="mean reconstruction cross-entropy",
    )
    costs = history["cost"] or [float("nan")]
    print(
        f"cost {costs[0]:.3f} -> {costs[-1]:.3f}; test images with "
        f"{args.corruption:.0%} of their pixels zeroed: squared error "
        f"{history['mse_corrupted']:.4f} -> {history['mse_reconstructed']:.4f} "
        f"reconstructed, ink pixels right {100 * history['ink_corrupted']:.1f} % -> "
        f"{100 * history['ink_reconstructed']:.1f} %; loss curve: {args.plot}"
    )
    return history


if __name__ == "__main__":
    main()
