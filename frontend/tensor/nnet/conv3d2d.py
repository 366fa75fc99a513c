"""Theano's `theano.tensor.nnet.conv3d2d.conv3d`: a 3-d convolution in its
`(batch, time, channels, rows, columns)` layout, as `abstract_conv.conv3d` (a true
convolution in all three axes)."""

from __future__ import annotations

from typing import Any

from arignote.graph import Variable
from arignote.tensor import basic
from arignote.tensor.nnet import abstract_conv

__all__ = ["conv3d"]

_LAYOUT = (0, 2, 1, 3, 4)  # (batch, time, channels, ...) <-> (batch, channels, time, ...)


def _hint(shape: Any) -> Any:
    return None if shape is None else tuple(shape[i] for i in _LAYOUT)


def conv3d(
    signals: Any,
    filters: Any,
    signals_shape: Any = None,
    filters_shape: Any = None,
    border_mode: Any = "valid",
) -> Variable:
    """`signals` `(batch, time, channels, rows, columns)` convolved with `filters`
    `(output channels, time, channels, rows, columns)`: `(batch, output time, output
    channels, output rows, output columns)`. `border_mode` is `'valid'` (or a tuple of
    three `'valid'`, Theano's form)."""
    if isinstance(border_mode, tuple):
        if any(m != "valid" for m in border_mode):
            raise NotImplementedError(f"conv3d2d.conv3d: border_mode {border_mode!r}")
        border_mode = "valid"
    if border_mode != "valid":
        raise NotImplementedError(f"conv3d2d.conv3d: border_mode {border_mode!r}")
    x = basic.dimshuffle(basic.as_tensor_variable(signals), _LAYOUT)
    w = basic.dimshuffle(basic.as_tensor_variable(filters), _LAYOUT)
    out = abstract_conv.conv3d(x, w, _hint(signals_shape), _hint(filters_shape))
    return basic.dimshuffle(out, _LAYOUT)
