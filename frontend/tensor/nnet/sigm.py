"""`arignote.tensor.nnet.sigm`: Theano's sigmoid family (issue 14).

`sigmoid` and `softplus` are `ag` ops computed without overflow (`ag.sigmoid`,
`ag.softplus`); `ultra_fast_sigmoid` and `hard_sigmoid` are Theano's piecewise
approximations, written as elementwise compositions (the `fusion` pass makes each one
loop), with the same values as Theano's.
"""

from __future__ import annotations

from typing import Any

from arignote.dialects import ag
from arignote.graph import Variable
from arignote.tensor import basic


def sigmoid(x: Any) -> Variable:
    """Elementwise `1 / (1 + exp(-x))` (integers compute in float, as `exp`)."""
    return basic._unary_float(ag.SigmoidOp, x)


def softplus(x: Any) -> Variable:
    """Elementwise `log(1 + exp(x))` (integers compute in float, as `exp`)."""
    return basic._unary_float(ag.SoftplusOp, x)


scalar_sigmoid = sigmoid
"""Theano's scalar op; here the same function (a scalar is a 0-d tensor)."""
sigmoid_inplace = sigmoid
"""Theano's in-place `Elemwise`; here `sigmoid` (the `inplace` pass reuses buffers)."""
scalar_softplus = softplus

_FLOATS = ("float16", "float32", "float64")


def _as_float(x: Any) -> Variable:
    """`x` in Theano's `upgrade_to_float` dtype (int8/int16 -> float32, others ->
    float64), floats as they are."""
    v = basic.as_tensor_variable(x)
    if v.dtype in _FLOATS:
        return v
    small = v.dtype in ("bool", "int8", "uint8", "int16", "uint16")
    return basic.cast(v, "float32" if small else "float64")


def _tanh_approximation(a: Variable) -> Variable:
    """Theano's approximation of `tanh(a)` for `a >= 0`, piecewise: `1.5 a / (1 + a)`
    below 1.7, a line to 3, then the constant 0.99505475368673."""
    rational = basic.true_div(basic.mul(1.5, a), basic.add(1.0, a))
    line = basic.add(0.935409070603099, basic.mul(0.0458812946797165, basic.sub(a, 1.7)))
    far = basic.switch(basic.lt(a, 3.0), line, 0.99505475368673)
    return basic.switch(basic.lt(a, 1.7), rational, far)


def ultra_fast_sigmoid(x: Any) -> Variable:
    """Theano's fast approximation of `sigmoid` (absolute error below 0.028): `0.5 * (t +
    1)` with `t` a piecewise approximation of `tanh(x / 2)`."""
    v = _as_float(x)
    half = basic.mul(0.5, v)
    t = _tanh_approximation(basic.abs(half))
    signed = basic.switch(basic.ge(half, 0), t, basic.neg(t))
    return basic.mul(0.5, basic.add(signed, 1.0))


ultra_fast_sigmoid_inplace = ultra_fast_sigmoid
ultra_fast_scalar_sigmoid = ultra_fast_sigmoid
"""Theano's scalar op; here the same function (a scalar is a 0-d tensor)."""


def hard_sigmoid(x: Any) -> Variable:
    """Theano's coarsest approximation of `sigmoid`: `clip(0.2 * x + 0.5, 0, 1)`."""
    v = _as_float(x)
    return basic.clip(basic.add(basic.mul(v, 0.2), 0.5), 0, 1)
