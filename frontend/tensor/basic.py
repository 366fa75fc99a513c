"""Tensor operations: each builds one or a few `ag` operations and returns a variable.

Dtypes follow Theano's rules: NumPy promotion between variables; a Python number mixed
with a variable adopts the variable's kind (`fvector * 2.0` stays float32, `ivector * 2`
stays int32), and a Python float mixed with integers gives `floatX`; true division of
integers gives `floatX`; exp, log, ... of integers give float32 (8 and 16 bits) or
float64 (32 and 64 bits).
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.ir import Operation

from arignote.configuration import config
from arignote.dialects import ag
from arignote.graph import TensorConstant, Variable, apply_op, make_constant
from arignote.runtime.dtypes import element_type
from arignote.tensor.type import upcast_dtypes

_FLOAT_OF_INT = {
    "bool": "float32",
    "int8": "float32",
    "int16": "float32",
    "int32": "float64",
    "int64": "float64",
    "uint8": "float32",
    "uint16": "float32",
    "uint32": "float64",
    "uint64": "float64",
}
"""The float dtype math on an integer tensor computes in (Theano's `upgrade_to_float`)."""


# --- conversion of Python values -------------------------------------------------------


def _python_scalar_dtype(value: Any, partner: str | None) -> str:
    """The dtype of a Python number used beside a tensor of dtype `partner`."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return _python_int_dtype(value, partner)
    if isinstance(value, float):
        return _python_float_dtype(partner)
    if isinstance(value, builtins.complex):
        # Theano: `numpy.asarray(1j)` (complex128) unless the partner is complex.
        return partner if partner is not None and partner.startswith("complex") else "complex128"
    raise TypeError(f"expected a tensor or a number, got {type(value).__name__}")


def _python_int_dtype(value: int, partner: str | None) -> str:
    """A Python int beside a float, complex or signed tensor takes the tensor's dtype when
    it fits; otherwise (and beside an unsigned tensor, as Theano's `autocast_int`) the
    smallest signed dtype holding it, then uint64."""
    if partner is not None and partner != "bool" and not partner.startswith("uint"):
        kind = np.dtype(partner).kind
        if kind in "fc" or np.can_cast(np.min_scalar_type(value), partner):
            return partner
    for dtype in ("int8", "int16", "int32", "int64", "uint64"):
        if np.iinfo(dtype).min <= value <= np.iinfo(dtype).max:
            return dtype
    raise TypeError(f"the integer {value} does not fit in int64 or uint64")


def _python_float_dtype(partner: str | None) -> str:
    """A Python float beside a float tensor takes its dtype, beside a complex tensor the
    dtype of its parts (`cvector * 2.5` stays complex64); otherwise floatX."""
    if partner is not None and partner.startswith("float"):
        return partner
    if partner == "complex64":
        return "float32"
    if partner == "complex128":
        return "float64"
    return config.floatX


def as_tensor_variable(
    x: Any, name: str | None = None, ndim: int | None = None, dtype: str | None = None
) -> Variable:
    """`x` as a symbolic variable: variables pass through, other values become constants."""
    if isinstance(x, Variable):
        var = x
    elif hasattr(x, "_as_TensorVariable"):  # Theano's protocol, e.g. `x.shape`
        return as_tensor_variable(x._as_TensorVariable(), name, ndim, dtype)
    elif isinstance(x, bool | int | float | builtins.complex) and dtype is None:
        var = constant(x, dtype=_python_scalar_dtype(x, None), name=name)
    else:
        var = constant(x, dtype=dtype, name=name)
    if ndim is not None and var.ndim != ndim:
        raise TypeError(f"expected a tensor of {ndim} dimensions, got {var.ndim}: {var}")
    return var


def constant(
    x: Any, name: str | None = None, ndim: int | None = None, dtype: str | None = None
) -> TensorConstant:
    """A constant tensor holding `x` (Theano's `tensor.constant`)."""
    from arignote.tensor.type import _SUPPORTED, check_dtype

    kind = type(x)
    if (kind is float or kind is int) and type(dtype) is str and dtype in _SUPPORTED:
        if ndim is None or ndim == 0:
            # a Python number of a supported dtype (each `0.01 * g` brings one): the
            # array below is already of a supported dtype, numbers are numbers
            return make_constant(np.asarray(x, dtype=dtype), name)
    if dtype is None and isinstance(x, float):
        dtype = config.floatX
    elif dtype is None and isinstance(x, int) and not isinstance(x, bool):
        dtype = _python_scalar_dtype(x, None)
    array = np.asarray(x, dtype=None if dtype is None else check_dtype(dtype, "dtype"))
    if array.dtype.kind not in "biufc":
        raise TypeError(f"constant: expected numbers, got {x!r}")
    array = array.astype(check_dtype(array.dtype, "constant"))
    if ndim is not None and array.ndim != ndim:
        raise ValueError(f"constant: expected {ndim} dimensions, got {array.ndim}")
    return make_constant(array, name)


def _operands(*values: Any) -> list[Variable]:
    """Variables for the operands of an elementwise op, Python numbers typed weakly."""
    partners = [v.dtype for v in values if isinstance(v, Variable)]
    partner = upcast_dtypes(*partners) if partners else None
    result = []
    for v in values:
        if isinstance(v, Variable):
            result.append(v)
        elif isinstance(v, bool | int | float | builtins.complex):
            result.append(constant(v, dtype=_python_scalar_dtype(v, partner)))
        else:
            result.append(as_tensor_variable(v))
    return result


def _promoted(values: Sequence[Variable], minimum: str | None = None) -> list[Variable]:
    """`values` cast to their common dtype (Theano's `upcast`; at least `minimum`)."""
    dtypes = [v.dtype for v in values] + ([minimum] if minimum else [])
    common = upcast_dtypes(*dtypes)
    return [cast(v, common) for v in values]


# --- elementwise -------------------------------------------------------------------------


def _binary(
    op_class: type[ag.BinaryElementwiseOp], a: Any, b: Any, no_bool: bool = False
) -> Variable:
    x, y = _promoted(_operands(a, b))
    if no_bool and x.dtype == "bool":
        x, y = cast(x, "int8"), cast(y, "int8")
    return _build(op_class, x, y)


_COMPLEX_CATEGORIES = ("arith", "inexact", "any")
"""The `CATEGORY`s of the elementwise ops that take complex operands."""


def _build(op_class: type[Operation], *operands: Variable) -> Variable:
    category = getattr(op_class, "CATEGORY", "any")
    if category not in _COMPLEX_CATEGORIES and any(v.dtype.startswith("complex") for v in operands):
        name = op_class.name.removeprefix("ag.")  # pyright: ignore[reportAttributeAccessIssue]
        dtypes = ", ".join(v.dtype for v in operands)
        raise TypeError(
            f"{name}: not defined for complex inputs (got {dtypes}); take T.real, T.imag, "
            "T.abs_ or T.angle first"
        )
    try:
        op = op_class(*(v.value for v in operands))
    except ValueError as e:
        raise ValueError(f"{e} (operands: {', '.join(map(str, operands))})") from None
    return apply_op(op)


def add(a: Any, *other_terms: Any) -> Variable:
    """Elementwise `a + b + ...` (any number of terms, summed left to right, as Theano's)."""
    if not other_terms:
        return as_tensor_variable(a)
    total = _binary(ag.AddOp, a, other_terms[0], no_bool=True)
    for term in other_terms[1:]:
        total = _binary(ag.AddOp, total, term, no_bool=True)
    return total


def sub(a: Any, b: Any) -> Variable:
    """Elementwise `a - b`."""
    return _binary(ag.SubOp, a, b, no_bool=True)


def mul(a: Any, *other_terms: Any) -> Variable:
    """Elementwise `a * b * ...` (any number of factors, left to right, as Theano's)."""
    if not other_terms:
        return as_tensor_variable(a)
    product = _binary(ag.MulOp, a, other_terms[0], no_bool=True)
    for factor in other_terms[1:]:
        product = _binary(ag.MulOp, product, factor, no_bool=True)
    return product


def true_div(a: Any, b: Any) -> Variable:
    """Elementwise `a / b`; integers are divided in `floatX`."""
    x, y = _promoted(_operands(a, b))
    if x.dtype not in ("float32", "float64", "complex64", "complex128"):
        x, y = cast(x, config.floatX), cast(y, config.floatX)
    return _build(ag.DivOp, x, y)


def floor_div(a: Any, b: Any) -> Variable:
    """Elementwise `a // b` (rounds toward minus infinity)."""
    return _binary(ag.FloorDivOp, a, b, no_bool=True)


int_div = floor_div


def mod(a: Any, b: Any) -> Variable:
    """Elementwise `a % b` with the sign of `b`."""
    return _binary(ag.ModOp, a, b, no_bool=True)


def pow(a: Any, b: Any) -> Variable:  # noqa: A001 - Theano's name
    """Elementwise `a ** b`."""
    return _binary(ag.PowOp, a, b, no_bool=True)


def maximum(a: Any, b: Any) -> Variable:
    """Elementwise maximum (NaN if either is NaN)."""
    return _binary(ag.MaximumOp, a, b)


def minimum(a: Any, b: Any) -> Variable:
    """Elementwise minimum (NaN if either is NaN)."""
    return _binary(ag.MinimumOp, a, b)


def lt(a: Any, b: Any) -> Variable:
    """Elementwise `a < b` (a bool tensor)."""
    return _binary(ag.LtOp, a, b)


def le(a: Any, b: Any) -> Variable:
    """Elementwise `a <= b`."""
    return _binary(ag.LeOp, a, b)


def gt(a: Any, b: Any) -> Variable:
    """Elementwise `a > b`."""
    return _binary(ag.GtOp, a, b)


def ge(a: Any, b: Any) -> Variable:
    """Elementwise `a >= b`."""
    return _binary(ag.GeOp, a, b)


def eq(a: Any, b: Any) -> Variable:
    """Elementwise `a == b`."""
    return _binary(ag.EqOp, a, b)


def neq(a: Any, b: Any) -> Variable:
    """Elementwise `a != b`."""
    return _binary(ag.NeOp, a, b)


def _unary_float(op_class: type[ag.UnaryElementwiseOp], x: Any) -> Variable:
    v = as_tensor_variable(x)
    if v.dtype in _FLOAT_OF_INT:
        v = cast(v, _FLOAT_OF_INT[v.dtype])
    return _build(op_class, v)


# --- the table-driven elementwise ops (`ag.TABLE`) ---------------------------------------


def _check_not_float(name: str, args: Sequence[Any]) -> None:
    """Theano's and NumPy's bitwise ops reject floats (a Python float too)."""
    for position, arg in enumerate(args):
        dtype = arg.dtype if isinstance(arg, Variable) else np.asarray(arg).dtype.name
        if dtype.startswith(("float", "complex")):
            raise TypeError(
                f"{name}: expected integer or bool inputs, got {dtype} for argument "
                f"{position} (bitwise ops are not defined on floats, as in Theano and NumPy)"
            )


def _table_operands(entry: ag.Elementwise, args: Sequence[Any]) -> list[Variable]:
    """The operands of `entry`'s op: promoted to one dtype, then integers upcast to float
    (Theano's `upgrade_to_float`) for a "float" op, or bools cast to int8 otherwise."""
    if entry.category == "integer":
        _check_not_float(entry.name, args)
    values = _promoted(_operands(*args)) if len(args) > 1 else [as_tensor_variable(args[0])]
    dtype = values[0].dtype
    if entry.category in ("any", "integer"):
        return values
    if entry.category in ("float", "inexact") and dtype in _FLOAT_OF_INT:
        return [cast(v, _FLOAT_OF_INT[dtype]) for v in values]
    if dtype == "bool":
        return [cast(v, "int8") for v in values]
    return values


_DTYPE_RULE = {
    "float": "integer inputs upcast to float",
    "inexact": "integer inputs upcast to float; complex inputs kept",
    "numeric": "integer inputs kept",
    "integer": "integer or bool inputs; floats are a TypeError",
    "any": "inputs of any dtype",
}


def _table_function(entry: ag.Elementwise) -> Any:
    op_class = ag.OPS[entry.name]

    def unary(x: Any) -> Variable:
        return _build(op_class, *_table_operands(entry, [x]))

    def binary(a: Any, b: Any) -> Variable:
        return _build(op_class, *_table_operands(entry, [a, b]))

    fn = unary if entry.arity == 1 else binary
    fn.__name__ = fn.__qualname__ = entry.name
    fn.__doc__ = f"Elementwise {entry.summary} (`ag.{entry.name}`; {_DTYPE_RULE[entry.category]})."
    return fn


TABLE_FUNCTIONS: dict[str, Any] = {
    name: _table_function(entry) for entry in ag.TABLE for name in (entry.name, *entry.aliases)
}
"""The frontend function of each table op, by its Theano name and aliases (`T.sin`,
`T.sqr`, `T.square`, ...)."""
globals().update(TABLE_FUNCTIONS)
sqr, sqrt = TABLE_FUNCTIONS["sqr"], TABLE_FUNCTIONS["sqrt"]  # used below (var, std)


def _as_float_pair(a: Any, b: Any) -> list[Variable]:
    """`a` and `b` promoted to one dtype, integers and bools then cast to float64 (NumPy's
    `isclose` computes in `result_type(y, 1.0)`)."""
    values = _promoted(_operands(a, b))
    if values[0].dtype.startswith("float"):
        return values
    return [cast(v, "float64") for v in values]


def isclose(
    a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Variable:
    """Elementwise `|a - b| <= atol + rtol * |b|` for finite values, else `a == b` (equal
    infinities are close); NaNs are close to each other only with `equal_nan`. Bool
    result, as `numpy.isclose` (a composition of `ag` ops; no gradient)."""
    x, y = _as_float_pair(a, b)
    x_nan, y_nan = TABLE_FUNCTIONS["isnan"](x), TABLE_FUNCTIONS["isnan"](y)
    or_, and_ = TABLE_FUNCTIONS["or_"], TABLE_FUNCTIONS["and_"]
    non_finite = or_(
        or_(x_nan, TABLE_FUNCTIONS["isinf"](x)), or_(y_nan, TABLE_FUNCTIONS["isinf"](y))
    )
    within = le(abs(x - y), atol + rtol * abs(y))
    close = or_(and_(TABLE_FUNCTIONS["invert"](non_finite), within), eq(x, y))
    return or_(close, and_(x_nan, y_nan)) if equal_nan else close


def allclose(
    a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Variable:
    """Whether every element pair is `isclose` (a 0-d bool; true for empty inputs, as
    `numpy.allclose`)."""
    far = TABLE_FUNCTIONS["invert"](isclose(a, b, rtol, atol, equal_nan))
    return eq(sum(far), 0)


def neg(x: Any) -> Variable:
    """Elementwise `-x`."""
    v = as_tensor_variable(x)
    return _build(ag.NegOp, cast(v, "int8") if v.dtype == "bool" else v)


def abs(x: Any) -> Variable:  # noqa: A001 - Theano's name
    """Elementwise `|x|`; the modulus (a float) of a complex `x`."""
    v = as_tensor_variable(x)
    if _is_complex(v):
        return TABLE_FUNCTIONS["hypot"](real(v), imag(v))
    return _build(ag.AbsOp, cast(v, "int8") if v.dtype == "bool" else v)


# --- complex numbers (issue 13 item 2, dtypes) ---------------------------------------------


def _is_complex(v: Variable) -> bool:
    return v.dtype.startswith("complex")


def real(z: Any) -> Variable:
    """The real part of each element of `z` (Theano's `real`): float32 for complex64,
    float64 for complex128; a real `z` is returned as it is."""
    v = as_tensor_variable(z)
    return apply_op(ag.RealOp(v.value)) if _is_complex(v) else v


def imag(z: Any) -> Variable:
    """The imaginary part of each element of `z` (Theano's `imag`); zeros of `z`'s dtype
    (floatX for integers, as Theano's gradient) for a real `z`."""
    v = as_tensor_variable(z)
    if _is_complex(v):
        return apply_op(ag.ImagOp(v.value))
    return zeros_like(v, dtype=None if v.dtype.startswith("float") else config.floatX)


def conj(z: Any) -> Variable:
    """The complex conjugate of each element (Theano's `conj`); a real `z` as it is."""
    v = as_tensor_variable(z)
    if not _is_complex(v):
        return v
    return complex(real(v), neg(imag(v)))


def angle(z: Any) -> Variable:
    """The argument of each element in radians, in (-pi, pi] (`numpy.angle`); float64 for
    every input dtype, as Theano's `angle` (`specific_out(float64)`)."""
    v = as_tensor_variable(z)
    if not _is_complex(v):
        v = cast(v, "complex128")
    theta = TABLE_FUNCTIONS["arctan2"](imag(v), real(v))
    return cast(theta, "float64")


def _complex_part_dtype(dtype: str) -> str:
    """Theano's `Complex.output_types_preference`, as the parts' float dtype: complex128
    (float64 parts) when the upcast is float64 or an integer of 32 bits or more."""
    wide = ("float64", "int64", "uint64", "int32", "uint32")
    return "float64" if dtype in wide else "float32"


def complex(real: Any, imag: Any) -> Variable:  # noqa: A001 - Theano's name
    """`real + 1j * imag` elementwise (Theano's `complex`): complex128 when the upcast
    dtype of the parts is float64 or an integer of 32 bits or more, else complex64.
    Complex parts are a TypeError, as in Theano."""
    x, y = _operands(real, imag)
    for what, v in (("real", x), ("imag", y)):
        if _is_complex(v):
            raise TypeError(f"complex: the {what} part must be real, got {v} of dtype {v.dtype}")
    part = _complex_part_dtype(upcast_dtypes(x.dtype, y.dtype))
    return _build(ag.ComplexOp, cast(x, part), cast(y, part))


def complex_from_polar(abs: Any, angle: Any) -> Variable:  # noqa: A002 - Theano's names
    """`abs * (cos(angle) + 1j * sin(angle))` elementwise (Theano's `complex_from_polar`;
    the dtype rule of `complex`)."""
    r, theta = _operands(abs, angle)
    part = _complex_part_dtype(upcast_dtypes(r.dtype, theta.dtype))
    r, theta = cast(r, part), cast(theta, part)
    return complex(mul(r, TABLE_FUNCTIONS["cos"](theta)), mul(r, TABLE_FUNCTIONS["sin"](theta)))


# --- end complex numbers -------------------------------------------------------------------


abs_ = abs


def switch(cond: Any, ift: Any, iff: Any) -> Variable:
    """Elementwise `ift` where `cond` is true (nonzero), else `iff`; evaluates both."""
    c = as_tensor_variable(cond)
    if c.dtype != "bool":
        c = neq(c, 0)
    a, b = _promoted(_operands(ift, iff))
    return _build(ag.SelectOp, c, a, b)


where = switch


def cast(x: Any, dtype: str) -> Variable:
    """`x` converted to `dtype` (the same variable if it already has it)."""
    from arignote.tensor.type import check_dtype

    v = as_tensor_variable(x)
    if v.dtype == dtype:  # (the common case: a valid name, the same dtype)
        return v
    target = check_dtype(dtype, "cast")
    if v.dtype == target:
        return v
    if _is_complex(v) and not target.startswith("complex"):
        raise TypeError(
            f"cast: casting {v} from {v.dtype} to {target} is ambiguous: consider "
            "T.real, T.imag, T.angle or T.abs_ (Theano's rule)"
        )
    return apply_op(ag.CastOp(v.value, element_type(np.dtype(target))))


# --- layout ------------------------------------------------------------------------------


def dimshuffle(x: Any, *pattern: Any) -> Variable:
    """Reorder axes; `'x'` inserts a broadcastable axis; broadcastable axes not listed are
    dropped (Theano's `DimShuffle`)."""
    v = as_tensor_variable(x)
    if len(pattern) == 1 and isinstance(pattern[0], list | tuple):
        pattern = tuple(pattern[0])
    ints = []
    for p in pattern:
        if p == "x":
            ints.append(ag.NEWAXIS)
        elif isinstance(p, int | np.integer) and not isinstance(p, bool):
            ints.append(int(p))
        else:
            raise ValueError(f"dimshuffle: pattern entries must be axes or 'x', got {p!r}")
    if list(ints) == list(range(v.ndim)):
        return v
    try:
        return apply_op(ag.DimShuffleOp(v.value, ints))
    except ValueError as e:
        raise ValueError(f"{e} (input {v} of type {v.type})") from None


def transpose(x: Any, axes: Sequence[int] | None = None) -> Variable:
    """Reverse (or permute by `axes`) the axes of `x`."""
    v = as_tensor_variable(x)
    return dimshuffle(v, *(reversed(range(v.ndim)) if axes is None else axes))


# --- reductions ------------------------------------------------------------------------


def _normalize_axes(axis: Any, ndim: int) -> list[int]:
    if axis is None:
        return list(range(ndim))
    axes = [axis] if isinstance(axis, int | np.integer) else list(axis)
    result = []
    for a in axes:
        if not isinstance(a, int | np.integer) or not -ndim <= a < ndim:
            raise ValueError(f"axis {a!r} is out of range for a tensor of {ndim} dimensions")
        result.append(int(a) % ndim)
    if len(set(result)) != len(result):
        raise ValueError(f"axis {axis!r} repeats an axis")
    return sorted(result)


def _reduce(
    op_class: type[ag.ReduceOp], x: Any, axis: Any, keepdims: bool, dtype: str | None
) -> Variable:
    v = as_tensor_variable(x)
    axes = _normalize_axes(axis, v.ndim)
    if dtype is not None:
        v = cast(v, dtype)
    out = apply_op(op_class(v.value, axes)) if axes else v
    if not keepdims:
        return out
    pattern: list[Any] = []
    kept = iter(range(out.ndim))
    for i in range(v.ndim):
        pattern.append("x" if i in axes else next(kept))
    return dimshuffle(out, *pattern)


def _accumulator_dtype(dtype: str) -> str:
    """Theano's `Sum`/`Prod` dtype: signed integers and bools as int64, unsigned ones as
    uint64, floats and complex as they are."""
    if dtype in ("uint8", "uint16", "uint32"):
        return "uint64"
    return "int64" if dtype in ("bool", "int8", "int16", "int32") else dtype


def sum(  # noqa: A001 - Theano's name
    x: Any,
    axis: Any = None,
    dtype: str | None = None,
    keepdims: bool = False,
    acc_dtype: str | None = None,
) -> Variable:
    """Sum over `axis` (all axes by default); integers and bools sum as int64, unsigned
    integers as uint64. Theano's signature: `acc_dtype` is the dtype the sum accumulates
    in, `dtype` the result's."""
    v = as_tensor_variable(x)
    out_dtype = dtype or _accumulator_dtype(v.dtype)
    out = _reduce(ag.ReduceSumOp, v, axis, keepdims, acc_dtype or out_dtype)
    return cast(out, out_dtype)


def prod(
    x: Any,
    axis: Any = None,
    dtype: str | None = None,
    keepdims: bool = False,
    acc_dtype: str | None = None,
    no_zeros_in_input: bool = False,
) -> Variable:
    """Product over `axis` (all axes by default); integers and bools multiply as int64,
    unsigned integers as uint64 (Theano's signature, as `sum`; `no_zeros_in_input` is
    Theano's promise that lets it use a simpler gradient, which changes nothing here)."""
    v = as_tensor_variable(x)
    out_dtype = dtype or _accumulator_dtype(v.dtype)
    out = _reduce(ag.ReduceProdOp, v, axis, keepdims, acc_dtype or out_dtype)
    return cast(out, out_dtype)


def max(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:  # noqa: A001
    """Maximum over `axis` (all axes by default)."""
    return _reduce(ag.ReduceMaxOp, x, axis, keepdims, None)


def min(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:  # noqa: A001
    """Minimum over `axis` (all axes by default)."""
    return _reduce(ag.ReduceMinOp, x, axis, keepdims, None)


# --- linear algebra --------------------------------------------------------------------


def dot(a: Any, b: Any) -> Variable:
    """The dot product of vectors and matrices; a scalar operand multiplies. With more
    than two dimensions it is NumPy's `dot` (Theano's rule): the sum of products over
    the last axis of `a` and the second-to-last of `b` (its only axis for a vector)."""
    x, y = _operands(a, b)
    if x.ndim == 0 or y.ndim == 0:
        return mul(x, y)
    if x.ndim > 2 or y.ndim > 2:
        from arignote.tensor.subtensor import tensordot  # (it imports this module)

        return tensordot(x, y, [[x.ndim - 1], [y.ndim - 2 if y.ndim > 1 else 0]])
    x, y = _promoted([x, y])
    if x.dtype == "bool":
        x, y = cast(x, "int8"), cast(y, "int8")
    return _build(ag.DotOp, x, y)


# --- filling and helpers used by the gradient rules ------------------------------------
#
# There is no `ag` op that allocates a tensor of a run-time shape, so the helpers below
# take their shape from an existing tensor through a broadcasting `ag.select` whose
# condition is a constant: `select(true, value, model)` has the broadcast shape of
# `value` and `model` and the values of `value`. The branch not taken is never read,
# so a NaN or an infinity in it does not leak into the result.


def fill(model: Any, value: Any) -> Variable:
    """A tensor of the broadcast shape of `model` and `value`, with the values of `value`
    (Theano's `fill`, also called `second`); the dtype is `value`'s."""
    m = as_tensor_variable(model)
    v = value if isinstance(value, Variable) else _operands(m, value)[1]
    m = cast(m, v.dtype)
    return _build(ag.SelectOp, constant(True), v, m)


second = fill


def zeros_like(model: Any, dtype: str | None = None, opt: bool = False) -> Variable:
    """Zeros of `model`'s shape (and dtype unless `dtype` is given; `opt`, Theano's
    constant-folding hint, changes nothing here)."""
    m = as_tensor_variable(model)
    if dtype is not None:
        m = cast(m, dtype)
    return fill(m, constant(0, dtype=m.dtype))


def ones_like(model: Any, dtype: str | None = None, opt: bool = False) -> Variable:
    """Ones of `model`'s shape (and dtype unless `dtype` is given; `opt` as `zeros_like`)."""
    m = as_tensor_variable(model)
    if dtype is not None:
        m = cast(m, dtype)
    return fill(m, constant(1, dtype=m.dtype))


def mean(
    x: Any,
    axis: Any = None,
    dtype: str | None = None,
    op: bool = False,
    keepdims: bool = False,
    acc_dtype: str | None = None,
) -> Variable:
    """The mean over `axis` (all axes by default), Theano's dtype rule: float32 stays
    float32, integers and bools give float64. Theano's signature (`op` chose Theano's
    implementation; both give these values).

    The sum is divided by the number of reduced elements, the int64 product of the
    reduced lengths (`shape_i`), cast to the sum's float dtype."""
    v = as_tensor_variable(x)
    s = sum(v, axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)
    count_dtype = "float32" if s.dtype in ("float32", "complex64") else "float64"
    out = true_div(s, cast(_count(v, _normalize_axes(axis, v.ndim)), count_dtype))
    return cast(out, dtype) if dtype is not None else out


# --- op library A: more elementwise math, argmax/argmin, shapes, statistics ------------


def round_half_to_even(x: Any) -> Variable:
    """Elementwise rounding to the nearest integer, halves to the even one (`numpy.round`)."""
    return _unary_float(ag.RoundEvenOp, x)


def round_half_away_from_zero(x: Any) -> Variable:
    """Elementwise rounding to the nearest integer, halves away from zero (C's `round`)."""
    return _unary_float(ag.RoundOp, x)


def round(x: Any, mode: str | None = None) -> Variable:  # noqa: A001 - Theano's name
    """Elementwise rounding; `mode` is "half_to_even" (the default, as Theano >= 0.9 and
    NumPy) or "half_away_from_zero". Without a mode it warns of that default, as Theano
    does, unless `config.warn.round` is False."""
    if mode is None and config.warn.round:
        warnings.warn(
            "arignote.tensor.round() rounds halves to even (NumPy's default; Theano's "
            "round changed its default from `half_away_from_zero` to `half_to_even`). "
            "Pass the mode, or set the flag `warn.round=False` to disable this warning.",
            stacklevel=2,
        )
    if mode is None or mode == "half_to_even":
        return round_half_to_even(x)
    if mode == "half_away_from_zero":
        return round_half_away_from_zero(x)
    raise ValueError(f"round: mode must be 'half_to_even' or 'half_away_from_zero', got {mode!r}")


def iround(x: Any, mode: str | None = None) -> Variable:
    """`round(x, mode)` cast to int64."""
    return cast(round(x, mode), "int64")


def _arg_reduce(op_class: type[ag.ArgReduceOp], x: Any, axis: Any, keepdims: bool) -> Variable:
    v = as_tensor_variable(x)
    axes = _normalize_axes(axis, v.ndim)
    if not axes:  # a 0-d tensor: its only element is at 0
        return zeros_like(v, dtype="int64")
    out = apply_op(op_class(v.value, axes))
    if not keepdims:
        return out
    kept = iter(range(out.ndim))
    return dimshuffle(out, *["x" if i in axes else next(kept) for i in range(v.ndim)])


def argmax(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """The int64 position of the first maximum over `axis` (all axes, flattened in
    row-major order, by default); a NaN is the maximum (the first NaN wins, as NumPy).
    Several axes count positions in the row-major flattening of those axes."""
    return _arg_reduce(ag.ArgMaxOp, x, axis, keepdims)


def argmin(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """The int64 position of the first minimum over `axis` (see `argmax`)."""
    return _arg_reduce(ag.ArgMinOp, x, axis, keepdims)


def max_and_argmax(a: Any, axis: Any = None, keepdims: bool = False) -> list[Variable]:
    """`[max(a, axis), argmax(a, axis)]` (Theano's `max_and_argmax`)."""
    return [max(a, axis, keepdims), argmax(a, axis, keepdims)]


def shape_i(x: Any, i: int) -> Variable:
    """The run-time length of axis `i` of `x` (negative counts from the end), a 0-d
    int64 variable (Theano's `Shape_i`)."""
    v = as_tensor_variable(x)
    if not isinstance(i, int | np.integer) or not -v.ndim <= i < v.ndim:
        raise IndexError(f"shape_i: axis {i!r} out of range for a tensor of {v.ndim} dimensions")
    return apply_op(ag.DimOp(v.value, int(i) % v.ndim))


class SymbolicShape:
    """`x.shape` (Theano's symbolic int64 vector): `shape[i]` is `shape_i(x, i)`; it has a
    `len`, iterates over the lengths, and `as_tensor_variable` stacks it into an int64
    vector (with `stack`). Arithmetic on the whole shape goes through that vector."""

    ndim = 1
    dtype = "int64"

    def __init__(self, variable: Variable):
        self.variable = variable

    def __len__(self) -> int:
        return self.variable.ndim

    def __iter__(self) -> Any:
        return (shape_i(self.variable, i) for i in range(self.variable.ndim))

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, int | np.integer) and not isinstance(key, bool):
            return shape_i(self.variable, int(key))
        if isinstance(key, slice):
            return tuple(shape_i(self.variable, i) for i in range(self.variable.ndim)[key])
        return self._as_TensorVariable()[key]

    def _as_TensorVariable(self) -> Variable:  # noqa: N802 - Theano's protocol name
        from arignote.tensor import subtensor

        if self.variable.ndim == 0:
            return constant(np.zeros(0, dtype="int64"))
        return subtensor.stack(list(self))

    def __repr__(self) -> str:
        return f"Shape({self.variable})"

    def __add__(self, other: Any) -> Variable:
        return add(self._as_TensorVariable(), other)

    def __radd__(self, other: Any) -> Variable:
        return add(other, self._as_TensorVariable())

    def __sub__(self, other: Any) -> Variable:
        return sub(self._as_TensorVariable(), other)

    def __rsub__(self, other: Any) -> Variable:
        return sub(other, self._as_TensorVariable())

    def __mul__(self, other: Any) -> Variable:
        return mul(self._as_TensorVariable(), other)

    def __rmul__(self, other: Any) -> Variable:
        return mul(other, self._as_TensorVariable())

    def __floordiv__(self, other: Any) -> Variable:
        return floor_div(self._as_TensorVariable(), other)


def shape(x: Any) -> SymbolicShape:
    """The symbolic shape of `x` (see `SymbolicShape`)."""
    return SymbolicShape(as_tensor_variable(x))


def _count(v: Variable, axes: Sequence[int]) -> Variable:
    """The number of elements over `axes` of `v`: the int64 product of their lengths."""
    count: Variable = constant(1, dtype="int64")
    for a in axes:
        count = mul(count, shape_i(v, a))
    return count


def var(
    x: Any,
    axis: Any = None,
    ddof: int = 0,
    keepdims: bool = False,
    corrected: bool = False,
) -> Variable:
    """The variance over `axis` (all axes by default), `sum((x - mean)**2) / (n - ddof)`.
    `corrected=True` uses the corrected two-pass formula
    `(sum(c**2) - sum(c)**2 / n) / (n - ddof)` with `c = x - mean` (Theano's option)."""
    v = as_tensor_variable(x)
    axes = _normalize_axes(axis, v.ndim)
    centered = sub(v, mean(v, axes, keepdims=True))
    total = sum(sqr(centered), axes, keepdims=keepdims)
    n = cast(_count(v, axes), centered.dtype)
    if corrected:
        total = sub(total, true_div(sqr(sum(centered, axes, keepdims=keepdims)), n))
    return true_div(total, sub(n, ddof) if ddof else n)


def std(
    x: Any,
    axis: Any = None,
    ddof: int = 0,
    keepdims: bool = False,
    corrected: bool = False,
) -> Variable:
    """The standard deviation, `sqrt(var(...))`."""
    return sqrt(var(x, axis, ddof, keepdims, corrected))


def clip(x: Any, min: Any, max: Any) -> Variable:  # noqa: A002 - Theano's names
    """Elementwise `min` where `x < min`, `max` where `x > max`, else `x` (NaN stays NaN);
    the gradient reaches `x` where it is inside the bounds, as Theano's `Clip`."""
    v, lo, hi = _operands(x, min, max)
    return switch(lt(v, lo), lo, switch(gt(v, hi), hi, v))


def outer(x: Any, y: Any) -> Variable:
    """The outer product of two vectors (other tensors are flattened first)."""
    a, b = _operands(x, y)
    if a.ndim != 1:
        a = a.flatten()
    if b.ndim != 1:
        b = b.flatten()
    return mul(dimshuffle(a, 0, "x"), dimshuffle(b, "x", 0))


# Theano's `theano.tensor.basic` also holds the helpers that read graphs: they live in
# `basic_utils` and are attributes of this module through `__getattr__` below.

# --- shapes, creation and selection (issue 13 item 3) ------------------------------------
# Theano's `theano.tensor.basic.eye`, `.tile`, ... live in `arignote.tensor.shape_ops`
# (it imports this module); they are attributes of this module too, looked up lazily so
# that `any`/`all` never shadow the builtins inside it.

_SHAPE_OPS_NAMES = frozenset(
    """addbroadcast all any batched_dot batched_tensordot choose diag diagonal eye
    flatnonzero horizontal_stack identity_like largest mgrid nonzero nonzero_values ogrid
    patternbroadcast ptp roll shape_padaxis shape_padleft shape_padright smallest
    specify_shape split stacklists swapaxes tile tri tril triu unbroadcast
    vertical_stack""".split()
)


def __getattr__(name: str) -> Any:
    """`theano.tensor.basic.<name>`: the functions of `shape_ops`, and the public names
    the `arignote.tensor` package defines (`dmatrix`, `zeros`, `join`, `tensordot`, ...:
    Theano's `theano.tensor` is mostly `from theano.tensor.basic import *`)."""
    if not name.startswith("_") and name not in _SHAPE_OPS_NAMES:
        import arignote.tensor as package

        value = package.__dict__.get(name)
        if value is not None and not isinstance(value, type(package)):
            return value
    if name in _SHAPE_OPS_NAMES:
        from arignote.tensor import shape_ops

        return getattr(shape_ops, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --- issue 13 item 1: the rest of the elementwise math (power, divmod, nan_to_num, ...) --


def power(x: Any, y: Any) -> Variable:
    """`x ** y` (Theano's `power`, an alias of `pow`)."""
    return pow(x, y)


def mod_check(x: Any, y: Any) -> Variable:
    """`mod(x, y)` (Theano's check against complex operands, which arignote lacks)."""
    return mod(x, y)


def divmod(x: Any, y: Any) -> tuple[Variable, Variable]:  # noqa: A001 - Theano's name
    """`(floor_div(x, y), mod(x, y))`, as Python's and Theano's `divmod`."""
    return floor_div(x, y), mod_check(x, y)


def ceil_intdiv(a: Any, b: Any) -> Variable:
    """`ceil(a / b)` without going through floats: `a // b + (a % b != 0)` (Theano's
    formula; exact for every integer dtype)."""
    div = floor_div(a, b)
    return add(cast(neq(mod(a, b), 0), div.dtype), div)


def nan_to_num(
    x: Any, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None
) -> Variable:
    """`numpy.nan_to_num`: NaN becomes `nan`, +inf `posinf` and -inf `neginf` (by default
    the largest and the most negative finite value of the dtype); integers and bools are
    returned as they are. (Not in Theano 1.0; NumPy's signature.)"""
    v = as_tensor_variable(x)
    if not v.dtype.startswith("float"):
        return v
    info = np.finfo(v.dtype)
    high = constant(info.max if posinf is None else posinf, dtype=v.dtype)
    low = constant(info.min if neginf is None else neginf, dtype=v.dtype)
    out = switch(TABLE_FUNCTIONS["isnan"](v), constant(nan, dtype=v.dtype), v)
    out = switch(eq(v, constant(np.inf, dtype=v.dtype)), high, out)
    return switch(eq(v, constant(-np.inf, dtype=v.dtype)), low, out)


def chi2sf(x: Any, k: Any) -> Variable:
    """The survival function of the chi-squared distribution with `k` degrees of freedom,
    `gammaincc(k / 2, x / 2)` (`scipy.stats.chi2.sf`); float64 as Theano's
    `upgrade_to_float64`. No gradient, as Theano."""
    v, n = (cast(a, "float64") for a in _operands(x, k))
    return TABLE_FUNCTIONS["gammaincc"](mul(n, 0.5), mul(v, 0.5))


# --- extra_ops and sort (issue 13 item 4): Theano's tensor.basic names among them -----


def inverse_permutation(perm: Any) -> Variable:
    """`arignote.tensor.extra_ops.inverse_permutation` (Theano has it in `tensor.basic`)."""
    from arignote.tensor.extra_ops import inverse_permutation as inverse

    return inverse(perm)


def permute_row_elements(x: Any, y: Any, inverse: Any = 0) -> Variable:
    """`arignote.tensor.extra_ops.permute_row_elements` (Theano: `tensor.basic`)."""
    from arignote.tensor.extra_ops import permute_row_elements as permute

    return permute(x, y, inverse)


class PermuteRowElements:
    """Theano's op class: `PermuteRowElements()(x, y, inverse)` is
    `permute_row_elements(x, y, inverse)`."""

    def __call__(self, x: Any, y: Any, inverse: Any = 0) -> Variable:
        return permute_row_elements(x, y, inverse)
