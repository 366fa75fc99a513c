"""`arignote.scalar`: Theano's `theano.scalar` basics, on 0-d tensors.

Theano has a separate scalar type system (`Scalar`, used inside `Elemwise` and
`Composite`); arignote's elementwise ops work on tensors of any rank, so a scalar is a 0-d
tensor: `scalar.float64("x")` is `tensor.dscalar("x")`, and everything that takes a
tensor takes it.

    import arignote
    from arignote import scalar

    x, y = scalar.float64("x"), scalar.float64("y")
    f = arignote.function([x, y], scalar.add(x, scalar.mul(y, 2)))
    assert f(1.0, 3.0) == 7.0
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph import TensorConstant, Variable
from arignote.tensor import basic
from arignote.tensor.basic import (
    abs_,
    add,
    ceil,
    eq,
    exp,
    floor,
    ge,
    gt,
    int_div,
    le,
    log,
    lt,
    maximum,
    minimum,
    mod,
    mul,
    neg,
    neq,
    pow,
    sgn,
    sqr,
    sqrt,
    sub,
    switch,
    tanh,
    true_div,
)
from arignote.tensor.type import TensorType, check_dtype, upcast_dtypes

ScalarVariable = Variable
ScalarConstant = TensorConstant


class Scalar(TensorType):
    """Theano's scalar type of one dtype: the type of 0-d tensors of that dtype. Calling
    it makes a new input variable (`Scalar("int32")("i")`)."""

    def __init__(self, dtype: str):
        super().__init__(check_dtype(dtype, "Scalar"), ())

    def __str__(self) -> str:
        return self.dtype

    def __repr__(self) -> str:
        return f"Scalar({self.dtype})"


_TYPES: dict[str, Scalar] = {}


def get_scalar_type(dtype: Any) -> Scalar:
    """The `Scalar` of `dtype` (one instance per dtype, Theano's `get_scalar_type`)."""
    name = check_dtype(dtype, "get_scalar_type")
    if name not in _TYPES:
        _TYPES[name] = Scalar(name)
    return _TYPES[name]


bool = get_scalar_type("bool")  # noqa: A001 - Theano's name
int8 = get_scalar_type("int8")
int16 = get_scalar_type("int16")
int32 = get_scalar_type("int32")
int64 = get_scalar_type("int64")
float32 = get_scalar_type("float32")
float64 = get_scalar_type("float64")
uint8 = get_scalar_type("uint8")
uint16 = get_scalar_type("uint16")
uint32 = get_scalar_type("uint32")
uint64 = get_scalar_type("uint64")
complex64 = get_scalar_type("complex64")
complex128 = get_scalar_type("complex128")

int_types = (int8, int16, int32, int64)
uint_types = (uint8, uint16, uint32, uint64)
float_types = (float32, float64)
complex_types = (complex64, complex128)
integer_types = int_types + uint_types
discrete_types = (bool, *integer_types)
continuous_types = float_types + complex_types
all_types = discrete_types + continuous_types


def upcast(dtype: Any, *dtypes: Any) -> str:
    """The dtype of an operation on values of these dtypes (Theano's `upcast` table, as
    NumPy's array promotion; `'floatX'` stands for `config.floatX`)."""
    return upcast_dtypes(dtype, *dtypes)


def constant(x: Any, name: str | None = None, dtype: str | None = None) -> TensorConstant:
    """A scalar constant (Theano's `scalar.constant`): Python floats have dtype
    `config.floatX`, Python ints the smallest integer dtype holding them (int8 and up)."""
    if np.ndim(x) != 0:
        raise TypeError(f"scalar.constant: expected a single number, got shape {np.shape(x)}")
    return basic.constant(x, name=name, ndim=0, dtype=dtype)


def as_scalar(x: Any, name: str | None = None) -> Variable:
    """`x` as a scalar variable: a 0-d variable passes through, a number becomes a
    constant; anything with dimensions is a TypeError."""
    if isinstance(x, Variable):
        if x.ndim != 0:
            raise TypeError(f"as_scalar: expected a scalar, got {x} with {x.ndim} dimensions")
        return x
    return constant(x, name=name)


__all__ = [
    "Scalar",
    "ScalarConstant",
    "ScalarVariable",
    "abs_",
    "add",
    "all_types",
    "as_scalar",
    "bool",
    "ceil",
    "constant",
    "continuous_types",
    "discrete_types",
    "eq",
    "exp",
    "float32",
    "float64",
    "float_types",
    "floor",
    "ge",
    "get_scalar_type",
    "gt",
    "int16",
    "int32",
    "int64",
    "int8",
    "int_div",
    "int_types",
    "le",
    "log",
    "lt",
    "maximum",
    "minimum",
    "mod",
    "mul",
    "neg",
    "neq",
    "pow",
    "sgn",
    "sqr",
    "sqrt",
    "sub",
    "switch",
    "tanh",
    "true_div",
    "upcast",
    # dtypes (issue 13 item 2)
    "complex128",
    "complex64",
    "complex_types",
    "integer_types",
    "uint16",
    "uint32",
    "uint64",
    "uint8",
    "uint_types",
]
