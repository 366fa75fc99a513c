#!/usr/bin/env python
"""Draw the pictures of docs/: `python docs/make_images.py` (needs pydot and graphviz's
`dot`, see docs/printing.md).

`docs/images/logreg_train.png`: `pydotprint` of the training function of the
logistic-regression seed program (examples/theano_tutorial/06_logreg_train.py), its
optimized graph as `train.maker.fgraph` holds it.
"""

from __future__ import annotations

from pathlib import Path

import numpy

import arignote
import arignote.tensor as tt
from arignote.printing import pydotprint

IMAGES = Path(__file__).resolve().parent / "images"


def logreg_train() -> arignote.Function:
    """The training function of seed 06 (float32, 784 features)."""
    arignote.config.floatX = "float32"
    rng = numpy.random.default_rng(0)
    feats = 784
    x = tt.matrix("x")
    y = tt.vector("y")
    w = arignote.shared(rng.standard_normal(feats).astype("float32"), name="w")
    b = arignote.shared(numpy.asarray(0.0, dtype="float32"), name="b")
    p_1 = 1 / (1 + tt.exp(-tt.dot(x, w) - b))
    prediction = p_1 > 0.5
    xent = -y * tt.log(p_1) - (1 - y) * tt.log(1 - p_1)
    cost = tt.cast(xent.mean(), "float32") + 0.01 * (w**2).sum()
    gw, gb = tt.grad(cost, [w, b])
    return arignote.function(
        inputs=[x, y],
        outputs=[prediction, xent],
        updates={w: w - 0.01 * gw, b: b - 0.01 * gb},
        name="train",
    )


def main() -> None:
    IMAGES.mkdir(exist_ok=True)
    pydotprint(logreg_train(), outfile=str(IMAGES / "logreg_train.png"), var_with_name_simple=True)


if __name__ == "__main__":
    main()
