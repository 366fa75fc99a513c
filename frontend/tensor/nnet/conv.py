"""Theano's older `theano.tensor.nnet.conv`: `conv2d(input, filters, image_shape,
filter_shape, border_mode, subsample)`, a true convolution (the filters flipped) with
`border_mode` `'valid'` or `'full'`, as `abstract_conv.conv2d`."""

from __future__ import annotations

from typing import Any

from arignote.graph import Variable
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
    """The convolution of `input` `(batch, channels, rows, columns)` with `filters`
    `(output channels, channels, rows, columns)`; `image_shape` and `filter_shape` are
    checked at run time."""
    if border_mode not in ("valid", "full"):
        raise ValueError(f"conv2d: border_mode must be 'valid' or 'full', got {border_mode!r}")
    return abstract_conv.conv2d(
        input, filters, image_shape, filter_shape, border_mode, tuple(subsample)
    )
