"""`arignote.tensor.xlogx`: `x * log(x)` and `x * log(y)` taken as 0 where `x == 0`
(Theano's `theano.tensor.xlogx` module), the terms of an entropy.

Both are compositions: the logarithm reads 1 where `x == 0`, so no `-inf` is ever
computed (`0 * log(0)` would be NaN). Their gradients are Theano's wherever `x != 0`
(`1 + log(x)`; `log(y)` and `x / y`); at `x == 0` they are 0 (Theano's rule gives `-inf`
for `xlogx` and `log(y)` for `xlogy0`'s `x` there).
"""

from __future__ import annotations

from typing import Any

from arignote.graph import Variable
from arignote.tensor import basic

__all__ = ["xlogx", "xlogy0"]


def _where_zero_one(x: Variable, value: Variable) -> Variable:
    """`value` with 1 wherever `x == 0` (broadcast to both shapes)."""
    return basic.switch(basic.eq(x, 0), basic.constant(1, dtype="int8"), value)


def xlogx(x: Any) -> Variable:
    """Elementwise `x * log(x)`, 0 where `x == 0` (integers compute in float, as `log`)."""
    v = basic.as_tensor_variable(x)
    return v * basic.log(_where_zero_one(v, v))


def xlogy0(x: Any, y: Any) -> Variable:
    """Elementwise `x * log(y)`, 0 where `x == 0` whatever `y` (broadcasting)."""
    v, w = basic.as_tensor_variable(x), basic.as_tensor_variable(y)
    return v * basic.log(_where_zero_one(v, w))
