#!/usr/bin/env python
"""Train an MLP (tanh hidden layer, softmax output) data-parallel on MPI processes.

    mpiexec -n 2 python examples/mpi_mlp.py [--epochs 8] [--batch 64] [--digest]
    python examples/mpi_mlp.py              # the same script on one process

Rank 0 generates a synthetic 10-class problem (points around class centres in 32
dimensions, labelled by the nearest centre) and `distributed.scatter` hands each process
its share of the training and test sets; rank 0's initial parameters reach every
process through `distributed.broadcast`. Each SGD step takes a global minibatch of
`--batch` examples, `batch / size` on each process; `distributed.average_gradients`
averages the gradients inside the compiled step (one `ag.allreduce` for all four, as
they are small: `bucket=True`), so every
process applies the same update and the parameters stay identical (`--digest` prints a
hash of them on each rank). The test accuracy is counted by a compiled function that
sums the correct predictions over the processes (`allreduce(..., "sum")`). The
accuracy is the same, up to the order of the examples, on 1, 2 or 4 processes.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time

import numpy as np

import arignote
import arignote.tensor as T
from arignote import distributed
from arignote.tensor.nnet import softmax

FEATURES, HIDDEN, CLASSES = 32, 64, 10


def make_data(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """`n` points around 10 class centres, labelled by the nearest centre."""
    centres = np.random.default_rng(1234).standard_normal((CLASSES, FEATURES)) * 0.35
    labels = rng.integers(0, CLASSES, size=n)
    x = centres[labels] + rng.standard_normal((n, FEATURES))
    distances = ((x[:, None, :] - centres[None]) ** 2).sum(axis=2)
    return x, distances.argmin(axis=1).astype(np.int64)


def build(lr: float):
    """The shared parameters and the compiled `train` and `correct` functions."""
    rng = np.random.default_rng(100 + distributed.rank())  # differs: broadcast fixes it
    w1 = arignote.shared(rng.standard_normal((FEATURES, HIDDEN)) / np.sqrt(FEATURES), "w1")
    b1 = arignote.shared(np.zeros(HIDDEN), "b1")
    w2 = arignote.shared(rng.standard_normal((HIDDEN, CLASSES)) / np.sqrt(HIDDEN), "w2")
    b2 = arignote.shared(np.zeros(CLASSES), "b2")
    params = [w1, b1, w2, b2]
    distributed.broadcast(params, root=0)

    x, y = T.matrix("x"), T.lvector("y")
    p = softmax(T.dot(T.tanh(T.dot(x, w1) + b1), w2) + b2)
    cost = -T.mean(T.log(p)[T.arange(y.shape[0]), y])
    # small gradients: one allreduce for the four (bucket) beats four latency-bound ones
    grads = distributed.average_gradients(arignote.grad(cost, params), bucket=True)
    updates = [(v, v - lr * g) for v, g in zip(params, grads, strict=True)]
    train = arignote.function([x, y], cost, updates=updates, name="train")
    hits = T.sum(T.eq(T.argmax(p, axis=1), y))
    correct = arignote.function([x, y], distributed.allreduce(hits, "sum"), name="correct")
    return params, train, correct


def digest(params) -> str:
    h = hashlib.sha256()
    for v in params:
        h.update(np.ascontiguousarray(v.get_value()).tobytes())
    return h.hexdigest()[:16]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--batch", type=int, default=64, help="global minibatch")
    parser.add_argument("--train", type=int, default=4096, help="training examples")
    parser.add_argument("--lr", type=float, default=0.2)
    parser.add_argument("--digest", action="store_true", help="print a parameter hash per rank")
    args = parser.parse_args()

    distributed.init(timeout=120)
    rank, size = distributed.rank(), distributed.size()
    if args.batch % size or args.train % args.batch:
        raise SystemExit("--batch must divide --train and be a multiple of the processes")
    data = None
    if rank == 0:
        rng = np.random.default_rng(0)
        data = (*make_data(args.train, rng), *make_data(2000, rng))
    x_train, y_train, x_test, y_test = distributed.scatter(data, root=0)
    params, train, correct = build(args.lr)

    local, steps = args.batch // size, args.train // args.batch
    start = time.perf_counter()
    for epoch in range(args.epochs):
        for i in range(steps):
            cost = train(x_train[i * local : (i + 1) * local], y_train[i * local : (i + 1) * local])
        accuracy = int(correct(x_test, y_test)) / 2000
        if rank == 0:
            print(f"epoch {epoch + 1}: last cost {float(cost):.4f}, test accuracy {accuracy:.4f}")
    seconds = time.perf_counter() - start
    if args.digest:
        # one write: an unbuffered print writes the newline apart, and another rank's
        # line could land between them
        sys.stdout.write(f"rank {rank}: parameters {digest(params)}\n")
        sys.stdout.flush()
    if rank == 0:
        print(
            f"processes={size} global batch={args.batch} steps={args.epochs * steps} "
            f"time={seconds:.2f} s test accuracy={accuracy:.4f}"
        )


if __name__ == "__main__":
    main()
