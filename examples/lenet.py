#!/usr/bin/env python
"""Train the Theano tutorial's LeNet convolutional network on scikit-learn's digits.

The model of the deep-learning tutorial's `convolutional_mlp.py`: two `LeNetConvPoolLayer`s
(a 5x5 convolution, `arignote.tensor.nnet.conv2d` with Theano's signature and its
`input_shape`/`filter_shape` hints, then 2x2 max pooling, `arignote.tensor.signal.pool.
pool_2d(..., ws=(2, 2), ignore_border=True)`, then tanh of the pooled maps plus a bias per
map), a tanh `HiddenLayer` and a softmax `LogisticRegression` layer, trained by SGD on the
mean negative log-likelihood; `train_model(index)` takes one step on the minibatch that its
`givens` slice out of the shared data set, as the tutorial does.

The digits are 8x8 images, too small for two 5x5 convolutions with pooling: each image is
upsampled 2x (every pixel repeated in a 2x2 block, 16x16) and padded with 2 zero pixels
on each side to 20x20, so the shapes run 20x20 -> conv 16x16 -> pool 8x8 -> conv 4x4 ->
pool 2x2 (the tutorial's 28x28 MNIST runs 28 -> 24 -> 12 -> 8 -> 4). The split: 1000
images for training, 297 for validation, 500 for the test; the test error reported is
the one at the epoch of the best validation error.

Accuracy reached (test set): the defaults (`--epochs 20 --nkerns 20 50 --hidden 500
--batch 20 --lr 0.1`) reach about 99 %; the tests' small run (`--epochs 4 --nkerns 6 16
--hidden 100`) reaches >= 85 % (about 95 %).

    python examples/lenet.py [--epochs 20] [--nkerns 20 50] [--hidden 500] [--batch 20]
                             [--lr 0.1] [--plot lenet_loss.png] [--quiet]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from example_utils import common_parser, load_digits_split, progress, report_classifier  # noqa: E402
from mlp import FLOATX, HiddenLayer, LogisticRegression, mean_error, shared_dataset  # noqa: E402

import arignote  # noqa: E402
import arignote.tensor as T  # noqa: E402
from arignote.tensor.nnet import conv2d  # noqa: E402
from arignote.tensor.signal import pool  # noqa: E402

SIDE = 20  # the images' side after the 2x upsampling and the 2-pixel zero border


def to_lenet_images(x: np.ndarray) -> np.ndarray:
    """Rows of 8x8 pixels -> rows of 20x20: each pixel repeated 2x2, a 2-pixel border."""
    images = x.reshape(-1, 8, 8).repeat(2, axis=1).repeat(2, axis=2)
    images = np.pad(images, ((0, 0), (2, 2), (2, 2)))
    return images.reshape(len(x), SIDE * SIDE)


class LeNetConvPoolLayer:
    """Convolution, max pooling, then tanh of the pooled maps plus a bias per map."""

    def __init__(
        self, rng: np.random.RandomState, input, filter_shape, image_shape, poolsize=(2, 2)
    ):
        assert image_shape[1] == filter_shape[1]
        fan_in = np.prod(filter_shape[1:])
        fan_out = filter_shape[0] * np.prod(filter_shape[2:]) // np.prod(poolsize)
        bound = np.sqrt(6.0 / (fan_in + fan_out))
        self.W = arignote.shared(
            np.asarray(rng.uniform(-bound, bound, filter_shape), dtype=FLOATX), borrow=True
        )
        self.b = arignote.shared(np.zeros(filter_shape[0], dtype=FLOATX), borrow=True)
        conv_out = conv2d(
            input=input, filters=self.W, filter_shape=filter_shape, input_shape=image_shape
        )
        pooled_out = pool.pool_2d(input=conv_out, ws=poolsize, ignore_border=True)
        self.output = T.tanh(pooled_out + self.b.dimshuffle("x", 0, "x", "x"))
        self.params = [self.W, self.b]


def build(data, args):
    """The compiled `train_model(index)`, `validate_model(index)`, `test_model(index)`."""
    (train_x, train_y), (valid_x, valid_y), (test_x, test_y) = data
    rng = np.random.RandomState(args.seed)
    bs, (k0, k1) = args.batch, args.nkerns
    index = T.lscalar()
    x = T.matrix("x")
    y = T.ivector("y")
    layer0_input = x.reshape((bs, 1, SIDE, SIDE))
    layer0 = LeNetConvPoolLayer(
        rng, layer0_input, image_shape=(bs, 1, SIDE, SIDE), filter_shape=(k0, 1, 5, 5)
    )
    side1 = (SIDE - 4) // 2  # 8
    layer1 = LeNetConvPoolLayer(
        rng, layer0.output, image_shape=(bs, k0, side1, side1), filter_shape=(k1, k0, 5, 5)
    )
    side2 = (side1 - 4) // 2  # 2
    layer2 = HiddenLayer(
        rng, layer1.output.flatten(2), n_in=k1 * side2 * side2, n_out=args.hidden, activation=T.tanh
    )
    layer3 = LogisticRegression(layer2.output, n_in=args.hidden, n_out=10)
    cost = layer3.negative_log_likelihood(y)
    params = layer3.params + layer2.params + layer1.params + layer0.params
    grads = T.grad(cost, params)
    updates = [(p, p - args.lr * g) for p, g in zip(params, grads, strict=True)]

    def batch_givens(set_x, set_y):
        return {x: set_x[index * bs : (index + 1) * bs], y: set_y[index * bs : (index + 1) * bs]}

    train_model = arignote.function(
        [index], cost, updates=updates, givens=batch_givens(train_x, train_y)
    )
    validate_model = arignote.function(
        [index], layer3.errors(y), givens=batch_givens(valid_x, valid_y)
    )
    test_model = arignote.function([index], layer3.errors(y), givens=batch_givens(test_x, test_y))
    return train_model, validate_model, test_model


def train(args) -> dict:
    """Train; the per-epoch curves and the test accuracy at the best validation error."""
    split = load_digits_split(seed=0)
    data = [
        shared_dataset(to_lenet_images(split.train_x), split.train_y),
        shared_dataset(to_lenet_images(split.valid_x), split.valid_y),
        shared_dataset(to_lenet_images(split.test_x), split.test_y),
    ]
    train_model, validate_model, test_model = build(data, args)
    n_batches = len(split.train_y) // args.batch
    history: dict = {"train cost": [], "validation error": [], "test error": []}
    best = (np.inf, np.inf)
    bar = progress(args.epochs * n_batches, args.quiet, desc="minibatches")
    for epoch in range(1, args.epochs + 1):
        costs = []
        for i in range(n_batches):
            costs.append(float(train_model(i)))
            bar.update(1)
        valid = mean_error(validate_model, len(split.valid_y), args.batch)
        test = mean_error(test_model, len(split.test_y), args.batch)
        for key, value in zip(history, (np.mean(costs), valid, test), strict=True):
            history[key].append(float(value))
        best = min(best, (valid, test))
        bar.set_postfix(cost=f"{np.mean(costs):.4f}", valid=f"{100 * valid:.1f}%")
        if not args.quiet:
            bar.write(
                f"epoch {epoch:3d}  cost {np.mean(costs):.4f}  validation error "
                f"{100 * valid:5.2f} %  test error {100 * test:5.2f} %"
            )
    bar.close()
    history["test accuracy"] = 1.0 - best[1]
    return history


def main(argv=None) -> dict:
    p = common_parser(__doc__, epochs=20, plot="lenet_loss.png")
    p.add_argument(
        "--nkerns", type=int, nargs=2, default=[20, 50], help="feature maps of the two convolutions"
    )
    p.add_argument("--hidden", type=int, default=500, help="hidden units")
    p.add_argument("--batch", type=int, default=20, help="minibatch size")
    p.add_argument("--lr", type=float, default=0.1, help="SGD learning rate")
    args = p.parse_args(argv)
    history = train(args)
    k0, k1 = args.nkerns
    return report_classifier(
        args,
        history,
        f"LeNet conv5x5({k0})-pool-conv5x5({k1})-pool-{args.hidden}-10 (arignote)",
        "mean NLL",
    )


if __name__ == "__main__":
    main()
