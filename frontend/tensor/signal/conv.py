"""Theano's `theano.tensor.signal.conv.conv2d`: convolution of single images or stacks
of images (2-d or 3-d inputs) with one filter or a stack of filters (2-d or 3-d)."""

from __future__ import annotations

from typing import Any

from arignote.graph import Variable
from arignote.tensor import basic
from arignote.tensor.nnet import abstract_conv

__all__ = ["conv2d"]


def conv2d(
    input: Any,
    filters: Any,
    image_shape: Any = None,
    filter_shape: Any = None,
    border_mode: str = "valid",
    subsample: Any = (1, 1),
    **kargs: Any,
) -> Variable:
    """`input` `(rows, columns)` or `(images, rows, columns)` convolved with `filters`
    `(rows, columns)` or `(filters, rows, columns)` (flipped: a true convolution):
    `([images,] [filters,] output rows, output columns)`, the axes of absent stacks
    dropped. `border_mode` is `'valid'` or `'full'`."""
    x, w = basic.as_tensor_variable(input), basic.as_tensor_variable(filters)
    if x.ndim not in (2, 3):
        raise TypeError(f"signal.conv2d: input must be a 2-D or 3-D tensor, got {x.ndim}-D")
    if w.ndim not in (2, 3):
        raise TypeError(f"signal.conv2d: filters must be a 2-D or 3-D tensor, got {w.ndim}-D")
    if border_mode not in ("valid", "full"):
        raise ValueError(
            f"signal.conv2d: border_mode must be 'valid' or 'full', got {border_mode!r}"
        )
    x4 = basic.dimshuffle(x, ("x", "x", 0, 1) if x.ndim == 2 else (0, "x", 1, 2))
    w4 = basic.dimshuffle(w, ("x", "x", 0, 1) if w.ndim == 2 else (0, "x", 1, 2))
    out = abstract_conv.conv2d(x4, w4, border_mode=border_mode, subsample=tuple(subsample))
    keep = [0] if x.ndim == 3 else []
    keep += [1] if w.ndim == 3 else []
    return basic.dimshuffle(out, (*keep, 2, 3))
