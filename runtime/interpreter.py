"""The reference interpreter for the `ag` dialect: arignote's executable spec.

Each `ag` op has one `@impl` in `AgFunctions` that computes its result with NumPy (the
ops of `ag.TABLE` get theirs from the entry's `numpy` reference, in `_TableFunctions`);
DebugMode and the tests compare native code against it. A run-time value is a NumPy
array (0-d for a scalar tensor) whose dtype is the tensor's element type (see
`arignote.runtime.dtypes`), and every `ag` op checks its operands and its result
against their static types.

The semantics are NumPy's, with the rules of `arignote.dialects.ag`:

- broadcasting is right-aligned, but a dimension that is dynamic (`?`) in an operand's
  type never broadcasts at run time: it must equal the other operands' lengths there,
  except those whose static length is 1 (ValueError naming the op and the shapes);
- integer `floordiv` and `mod` by zero give 0; `floordiv` rounds toward minus
  infinity and `mod` has the divisor's sign; integer overflow wraps;
- integer `pow` with a negative exponent is the real power truncated toward zero
  (1 for a base of 1, +-1 for -1, otherwise 0, 0 also for a base of 0);
- `maximum`, `minimum`, `reduce_max` and `reduce_min` propagate NaN, and the
  reductions raise ValueError on an empty axis;
- `cast` truncates floats toward zero for integers and tests `!= 0` for `i1`;
- an array NumPy cannot allocate is a `MemoryError`, also where its byte size exceeds
  what a process addresses (`alloc`, `arange`; NumPy raises `ValueError` there), as in
  native code.

`run_function` and `InterpretedFunction` run a `func.func` of a module; they also
register xDSL's implementations of `func`, `arith`, `scf`, `cf` and `builtin`.
"""

from __future__ import annotations

import contextvars
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from math import prod
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Attribute, Operation
from xdsl.traits import SymbolTable

from arignote.dialects import ag
from arignote.runtime.dtypes import IndexOutOfBoundsError, constant_array, numpy_dtype
from arignote.runtime.printing import PrintSpec, show
from arignote.runtime.pyops import run as run_python_node

Array = np.ndarray[Any, np.dtype[Any]]
BinaryFn = Callable[[Array, Array], Any]
UnaryFn = Callable[[Array], Any]


# --- checking run-time values against static types -------------------------------------


def check_value(where: str, what: str, value: Any, t: Attribute) -> Array:
    """`value` as an array, after checking it is an ndarray of type `t`.

    TypeError when it is not an ndarray of `t`'s dtype, ValueError when its shape does
    not match `t`'s static shape; the message starts with `where` (an op name).
    """
    if not isinstance(t, TensorType):
        raise TypeError(f"{where}: {what} has type {t}, expected a tensor type")
    if not isinstance(value, np.ndarray):
        raise TypeError(
            f"{where}: {what} of type {t} must be a numpy.ndarray, got {type(value).__name__}"
        )
    expected = numpy_dtype(t.element_type)
    if value.dtype != expected:
        raise TypeError(
            f"{where}: {what} of type {t} must have dtype {expected}, got {value.dtype}"
        )
    shape = t.get_shape()
    if value.ndim != len(shape):
        raise ValueError(
            f"{where}: {what} of type {t} must have rank {len(shape)}, got shape {value.shape}"
        )
    for axis, (static, length) in enumerate(zip(shape, value.shape, strict=True)):
        if static not in (ag.DYNAMIC, length):
            raise ValueError(
                f"{where}: {what} of type {t} has shape {value.shape}: "
                f"dimension {axis} must be {static}"
            )
    return value


def _operands(op: Operation, args: PythonValues) -> tuple[Array, ...]:
    return tuple(
        check_value(_label(op), f"operand #{i}", value, operand.type)
        for i, (value, operand) in enumerate(zip(args, op.operands, strict=True))
    )


def _result(op: Operation, value: Any) -> PythonValues:
    # NumPy returns scalars for 0-d results; the runtime always passes ndarrays.
    array = np.asarray(value)
    return (check_value(_label(op), "result", array, op.results[0].type),)


def _check_size(op: Operation, shape: Sequence[int], dtype: np.dtype) -> None:
    """`MemoryError` when an array of `shape` and `dtype` needs more bytes than a process
    can address (NumPy would raise `ValueError`; native code raises `MemoryError`)."""
    size = prod(shape) * dtype.itemsize
    if size > sys.maxsize:
        raise MemoryError(
            f"{_label(op)}: out of memory: an array of shape {tuple(shape)} and dtype "
            f"{dtype} needs {size} bytes, more than a process can address"
        )


def _shapes_text(shapes: Sequence[tuple[int, ...]]) -> str:
    texts = [str(tuple(s)) for s in shapes]
    return ", ".join(texts[:-1]) + " and " + texts[-1]


def _axis_ok(static: Sequence[int | None], lengths: Sequence[int | None]) -> bool:
    """Whether one (right-aligned) axis broadcasts; None marks a missing dimension."""
    if ag.DYNAMIC not in static:
        return True  # static lengths were checked by the verifier and check_value
    stretching = {n for s, n in zip(static, lengths, strict=True) if s not in (None, 1)}
    return len(stretching) <= 1


def _label(op: Operation) -> str:
    """The op's name for messages, with its `ag.node` label (graph node and the user's
    source line) when it has one."""
    node = op.attributes.get("ag.node")
    return f"{op.name} [{node.data}]" if isinstance(node, StringAttr) else op.name


def check_broadcast(op: Operation, values: Sequence[Array]) -> None:
    """Raise ValueError unless `values` (the operands of `op`) broadcast by ag's rules."""
    static = [ag.tensor_type(v).get_shape() for v in op.operands]
    rank = max(len(s) for s in static)
    for axis in range(rank):
        back = rank - axis
        static_dims = [s[-back] if len(s) >= back else None for s in static]
        lengths = [v.shape[-back] if v.ndim >= back else None for v in values]
        if not _axis_ok(static_dims, lengths):
            shapes = _shapes_text([v.shape for v in values])
            raise ValueError(
                f"{_label(op)}: operand shapes {shapes} do not match at dimension {axis}"
            )


# --- elementwise semantics that differ from NumPy's defaults ---------------------------


def _is_int(x: Array) -> bool:
    return x.dtype.kind in "iu"


def _floordiv(x: Array, y: Array) -> Any:
    if not _is_int(x):
        return np.floor_divide(x, y)
    zero = y == 0
    return np.where(zero, 0, np.floor_divide(x, np.where(zero, 1, y))).astype(x.dtype)


def _mod(x: Array, y: Array) -> Any:
    if not _is_int(x):
        return np.mod(x, y)
    zero = y == 0
    return np.where(zero, 0, np.mod(x, np.where(zero, 1, y))).astype(x.dtype)


def _pow(x: Array, y: Array) -> Any:
    if x.dtype.kind != "i":  # floats, complex, and unsigned (no negative exponent)
        return np.power(x, y)
    negative = y < 0
    power = np.power(x, np.where(negative, 0, y))
    # x ** -n truncated toward zero: only bases 1 and -1 give a nonzero value.
    odd = (y & 1) == 1
    truncated = np.where(x == 1, 1, np.where(x == -1, np.where(odd, -1, 1), 0))
    return np.where(negative, truncated, power).astype(x.dtype)


def _binary(op: Operation, args: PythonValues, fn: BinaryFn) -> PythonValues:
    lhs, rhs = _operands(op, args)
    check_broadcast(op, (lhs, rhs))
    with np.errstate(all="ignore"):
        return _result(op, fn(lhs, rhs))


def _unary(op: Operation, args: PythonValues, fn: UnaryFn) -> PythonValues:
    (x,) = _operands(op, args)
    with np.errstate(all="ignore"):
        return _result(op, fn(x))


# --- other ops -------------------------------------------------------------------------


def _dimshuffle(x: Array, pattern: Sequence[int]) -> Array:
    kept = [p for p in pattern if p != ag.NEWAXIS]
    # The verifier allows dropping only static-1 axes, and check_value has checked them.
    dropped = [axis for axis in range(x.ndim) if axis not in kept]
    shape = tuple(1 if p == ag.NEWAXIS else x.shape[p] for p in pattern)
    # Adding or removing length-1 axes keeps the row-major order of the elements.
    return x.transpose(kept + dropped).reshape(shape)


def _reduce(
    op: ag.ReduceOp, args: PythonValues, fn: Callable[..., Any], needs_elements: bool = False
) -> PythonValues:
    (x,) = _operands(op, args)
    axes = op.axes_list
    if needs_elements and any(x.shape[a] == 0 for a in axes):
        raise ValueError(
            f"{_label(op)}: cannot reduce shape {x.shape} over axes {list(axes)}: an axis is empty"
        )
    with np.errstate(all="ignore"):
        if needs_elements:
            return _result(op, fn(x, axis=axes))
        return _result(op, fn(x, axis=axes, dtype=x.dtype))


def _dot(op: ag.DotOp, args: PythonValues) -> PythonValues:
    lhs, rhs = _operands(op, args)
    if lhs.shape[-1] != rhs.shape[0]:
        raise ValueError(
            f"{_label(op)}: contracted dimensions of operand shapes {lhs.shape} and "
            f"{rhs.shape} differ"
        )
    with np.errstate(all="ignore"):
        return _result(op, np.dot(lhs, rhs))


def _blas(op: ag.GemvOp | ag.GemmOp, args: PythonValues) -> PythonValues:
    """`alpha * op(A)·op(B) [+ beta * C0]`; ValueError naming the op on a shape mismatch."""
    alpha, a, b, *acc = _operands(op, args)
    a = a.T if op.transpose_a is not None else a
    if isinstance(op, ag.GemmOp) and op.transpose_b is not None:
        b = b.T
    if a.shape[1] != b.shape[0]:
        raise ValueError(
            f"{_label(op)}: contracted dimensions of operand shapes {a.shape} and {b.shape} differ"
        )
    with np.errstate(all="ignore"):
        product = alpha * np.dot(a, b)
        if acc:
            beta, initial = acc
            if initial.shape != product.shape:
                raise ValueError(
                    f"{_label(op)}: the accumulated operand has shape {initial.shape}, the "
                    f"product {product.shape}"
                )
            product = product + beta * initial
        return _result(op, np.asarray(product, dtype=a.dtype))


# --- indexing, reshaping, joining and allocation ---------------------------------------


def _subtensor_key(op: ag.SubtensorBase, shape: Sequence[int], dynamic: Sequence[Array]) -> tuple:
    """The NumPy index of `op`'s entries; IndexError (naming the op) for an integer index
    out of range, ValueError for a zero step."""
    values = iter(int(v) for v in dynamic)
    key: list[Any] = []
    for axis, (kind, *parts) in enumerate(op.entries()):
        start, stop, step = (
            next(values) if p == ag.DYNAMIC_VALUE else None if p == ag.SLICE_NONE else p
            for p in parts
        )
        if kind == ag.INDEX:
            n = shape[axis]
            if not -n <= start < n:
                raise IndexOutOfBoundsError(
                    f"{_label(op)}: index {start} is out of bounds for axis {axis} with size {n}"
                )
            key.append(start)
            continue
        if step == 0:
            raise ValueError(f"{_label(op)}: slice step of axis {axis} must not be zero")
        key.append(slice(start, stop, step))
    return tuple(key)


def _check_fits(
    op: Operation, value: Array, region: tuple[int, ...], static: Sequence[int]
) -> None:
    """ValueError unless `value` broadcasts into `region` by ag's rules (only static 1s
    stretch)."""
    offset = len(region) - value.ndim
    for k, (s, d) in enumerate(zip(static, value.shape, strict=True)):
        if s != 1 and d != region[offset + k]:
            raise ValueError(
                f"{_label(op)}: a value of shape {value.shape} does not fit the region of "
                f"shape {region} (dimension {k})"
            )


def _advanced_key(op: Operation, x: Array, indices: Sequence[Array]) -> tuple:
    static = [ag.tensor_type(v).get_shape() for v in op.operands[-len(indices) :]]
    rank = max(len(s) for s in static)
    for axis in range(rank):
        back = rank - axis
        lengths = {
            i.shape[-back]
            for i, s in zip(indices, static, strict=True)
            if i.ndim >= back and s[-back] != 1
        }
        if len(lengths) > 1:
            raise ValueError(
                f"{_label(op)}: index shapes {[i.shape for i in indices]} differ at "
                f"dimension {axis}"
            )
    for axis, i in enumerate(indices):
        n = x.shape[axis]
        bad = (i < -n) | (i >= n)
        if bad.any():
            raise IndexOutOfBoundsError(
                f"{_label(op)}: index {int(i[bad].flat[0])} is out of bounds for axis {axis} "
                f"with size {n}"
            )
    return tuple(i.astype(np.int64) for i in indices)


def _reshape_shape(op: ag.ReshapeOp, x: Array, dynamic: Sequence[Array]) -> list[int]:
    values = iter(int(v) for v in dynamic)
    shape = [next(values) if e == ag.DYNAMIC_VALUE else e for e in op.shape_list]
    if any(e < -1 for e in shape) or shape.count(-1) > 1:
        raise ValueError(f"{_label(op)}: invalid shape {shape}")
    known = int(np.prod([e for e in shape if e != -1], dtype=np.int64))
    if -1 in shape:
        if known == 0 or x.size % known:
            raise ValueError(f"{_label(op)}: cannot reshape {x.size} elements into shape {shape}")
        shape[shape.index(-1)] = x.size // known
    elif known != x.size:
        raise ValueError(f"{_label(op)}: cannot reshape {x.size} elements into shape {shape}")
    return shape


# --- op library A: sigmoid, softplus, argmax/argmin ------------------------------------


def _sigmoid(x: Array) -> Any:
    """The logistic function without overflow (the formula the native code uses)."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype)


def _softplus(x: Array) -> Any:
    """`log(1 + exp(x))` as `log1p(exp(-|x|)) + max(x, 0)`."""
    return (np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0)).astype(x.dtype)


def _arg_reduce(op: ag.ArgReduceOp, args: PythonValues, fn: Callable[..., Any]) -> PythonValues:
    """NumPy's argmax/argmin over `op.axes`, flattened in row-major order."""
    (x,) = _operands(op, args)
    axes = op.axes_list
    if any(x.shape[a] == 0 for a in axes):
        raise ValueError(
            f"{_label(op)}: cannot reduce shape {x.shape} over axes {list(axes)}: an axis is empty"
        )
    kept = [a for a in range(x.ndim) if a not in axes]
    moved = x.transpose(kept + list(axes))
    reduced = int(np.prod([x.shape[a] for a in axes]))
    flat = moved.reshape(moved.shape[: len(kept)] + (reduced,))
    return _result(op, fn(flat, axis=-1).astype(np.int64))


# --- the implementations ---------------------------------------------------------------


def _table_impl(entry: ag.Elementwise) -> Callable[..., PythonValues]:
    reference = entry.numpy

    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        if entry.arity == 1:
            return _unary(op, args, reference)
        return _binary(op, args, reference)

    run.__name__ = f"run_{entry.name}"
    return impl(ag.OPS[entry.name])(run)


_TableFunctions = type(
    "_TableFunctions",
    (InterpreterFunctions,),
    {f"run_{entry.name}": _table_impl(entry) for entry in ag.TABLE},
)
"""The NumPy reference of each table-driven op (`ag.TABLE`), inherited by `AgFunctions`."""


@register_impls
class AgFunctions(_TableFunctions):
    """NumPy implementations of the `ag` ops; values are ndarrays of the tensor dtype."""

    @impl(ag.ConstantOp)
    def run_constant(
        self, interpreter: Interpreter, op: ag.ConstantOp, args: PythonValues
    ) -> PythonValues:
        return _result(op, constant_array(op.value))

    @impl(ag.AddOp)
    def run_add(self, interpreter: Interpreter, op: ag.AddOp, args: PythonValues) -> PythonValues:
        return _binary(op, args, np.add)

    @impl(ag.SubOp)
    def run_sub(self, interpreter: Interpreter, op: ag.SubOp, args: PythonValues) -> PythonValues:
        return _binary(op, args, np.subtract)

    @impl(ag.MulOp)
    def run_mul(self, interpreter: Interpreter, op: ag.MulOp, args: PythonValues) -> PythonValues:
        return _binary(op, args, np.multiply)

    @impl(ag.DivOp)
    def run_div(self, interpreter: Interpreter, op: ag.DivOp, args: PythonValues) -> PythonValues:
        return _binary(op, args, np.true_divide)

    @impl(ag.FloorDivOp)
    def run_floordiv(
        self, interpreter: Interpreter, op: ag.FloorDivOp, args: PythonValues
    ) -> PythonValues:
        return _binary(op, args, _floordiv)

    @impl(ag.ModOp)
    def run_mod(self, interpreter: Interpreter, op: ag.ModOp, args: PythonValues) -> PythonValues:
        return _binary(op, args, _mod)

    @impl(ag.PowOp)
    def run_pow(self, interpreter: Interpreter, op: ag.PowOp, args: PythonValues) -> PythonValues:
        return _binary(op, args, _pow)

    @impl(ag.MaximumOp)
    def run_maximum(
        self, interpreter: Interpreter, op: ag.MaximumOp, args: PythonValues
    ) -> PythonValues:
        return _binary(op, args, np.maximum)

    @impl(ag.MinimumOp)
    def run_minimum(
        self, interpreter: Interpreter, op: ag.MinimumOp, args: PythonValues
    ) -> PythonValues:
        return _binary(op, args, np.minimum)

    @impl(ag.LtOp)
    def run_lt(self, interpreter: Interpreter, op: ag.LtOp, args: PythonValues) -> PythonValues:
        return _binary(op, args, np.less)

    @impl(ag.LeOp)
    def run_le(self, interpreter: Interpreter, op: ag.LeOp, args: PythonValues) -> PythonValues:
        return _binary(op, args, np.less_equal)

    @impl(ag.GtOp)
    def run_gt(self, interpreter: Interpreter, op: ag.GtOp, args: PythonValues) -> PythonValues:
        return _binary(op, args, np.greater)

    @impl(ag.GeOp)
    def run_ge(self, interpreter: Interpreter, op: ag.GeOp, args: PythonValues) -> PythonValues:
        return _binary(op, args, np.greater_equal)

    @impl(ag.EqOp)
    def run_eq(self, interpreter: Interpreter, op: ag.EqOp, args: PythonValues) -> PythonValues:
        return _binary(op, args, np.equal)

    @impl(ag.NeOp)
    def run_ne(self, interpreter: Interpreter, op: ag.NeOp, args: PythonValues) -> PythonValues:
        return _binary(op, args, np.not_equal)

    @impl(ag.NegOp)
    def run_neg(self, interpreter: Interpreter, op: ag.NegOp, args: PythonValues) -> PythonValues:
        return _unary(op, args, np.negative)

    @impl(ag.AbsOp)
    def run_abs(self, interpreter: Interpreter, op: ag.AbsOp, args: PythonValues) -> PythonValues:
        return _unary(op, args, np.abs)

    # --- op library A ---

    @impl(ag.RoundOp)
    def run_round(
        self, interpreter: Interpreter, op: ag.RoundOp, args: PythonValues
    ) -> PythonValues:
        # Halves away from zero: trunc(x + copysign(0.5, x)) is off for 0.49999999999999994,
        # so round |x| by floor and fix up the halves.
        def away(x: Array) -> Any:
            a = np.abs(x)
            f = np.floor(a)
            r = np.where(a - f >= 0.5, f + 1, f)
            return np.copysign(r, x).astype(x.dtype)

        return _unary(op, args, away)

    @impl(ag.RoundEvenOp)
    def run_roundeven(
        self, interpreter: Interpreter, op: ag.RoundEvenOp, args: PythonValues
    ) -> PythonValues:
        return _unary(op, args, np.round)

    @impl(ag.SigmoidOp)
    def run_sigmoid(
        self, interpreter: Interpreter, op: ag.SigmoidOp, args: PythonValues
    ) -> PythonValues:
        return _unary(op, args, _sigmoid)

    @impl(ag.SoftplusOp)
    def run_softplus(
        self, interpreter: Interpreter, op: ag.SoftplusOp, args: PythonValues
    ) -> PythonValues:
        return _unary(op, args, _softplus)

    @impl(ag.ArgMaxOp)
    def run_argmax(
        self, interpreter: Interpreter, op: ag.ArgMaxOp, args: PythonValues
    ) -> PythonValues:
        return _arg_reduce(op, args, np.argmax)

    @impl(ag.ArgMinOp)
    def run_argmin(
        self, interpreter: Interpreter, op: ag.ArgMinOp, args: PythonValues
    ) -> PythonValues:
        return _arg_reduce(op, args, np.argmin)

    @impl(ag.DimOp)
    def run_dim(self, interpreter: Interpreter, op: ag.DimOp, args: PythonValues) -> PythonValues:
        (x,) = _operands(op, args)
        return _result(op, np.int64(x.shape[op.axis_value]))

    @impl(ag.SelectOp)
    def run_select(
        self, interpreter: Interpreter, op: ag.SelectOp, args: PythonValues
    ) -> PythonValues:
        cond, a, b = _operands(op, args)
        check_broadcast(op, (cond, a, b))
        return _result(op, np.where(cond, a, b))

    @impl(ag.CastOp)
    def run_cast(self, interpreter: Interpreter, op: ag.CastOp, args: PythonValues) -> PythonValues:
        dtype = numpy_dtype(ag.tensor_type(op.result).element_type)
        # A float outside the integer range (or NaN) has no defined integer value;
        # NumPy's result is kept, without its warning.
        return _unary(op, args, lambda x: x.astype(dtype))

    @impl(ag.DimShuffleOp)
    def run_dimshuffle(
        self, interpreter: Interpreter, op: ag.DimShuffleOp, args: PythonValues
    ) -> PythonValues:
        (x,) = _operands(op, args)
        return _result(op, _dimshuffle(x, op.pattern_list))

    @impl(ag.ReduceSumOp)
    def run_reduce_sum(
        self, interpreter: Interpreter, op: ag.ReduceSumOp, args: PythonValues
    ) -> PythonValues:
        return _reduce(op, args, np.sum)

    @impl(ag.ReduceProdOp)
    def run_reduce_prod(
        self, interpreter: Interpreter, op: ag.ReduceProdOp, args: PythonValues
    ) -> PythonValues:
        return _reduce(op, args, np.prod)

    @impl(ag.ReduceMaxOp)
    def run_reduce_max(
        self, interpreter: Interpreter, op: ag.ReduceMaxOp, args: PythonValues
    ) -> PythonValues:
        return _reduce(op, args, np.max, needs_elements=True)

    @impl(ag.ReduceMinOp)
    def run_reduce_min(
        self, interpreter: Interpreter, op: ag.ReduceMinOp, args: PythonValues
    ) -> PythonValues:
        return _reduce(op, args, np.min, needs_elements=True)

    @impl(ag.DotOp)
    def run_dot(self, interpreter: Interpreter, op: ag.DotOp, args: PythonValues) -> PythonValues:
        return _dot(op, args)

    @impl(ag.GemvOp)
    def run_gemv(self, interpreter: Interpreter, op: ag.GemvOp, args: PythonValues) -> PythonValues:
        return _blas(op, args)

    @impl(ag.GemmOp)
    def run_gemm(self, interpreter: Interpreter, op: ag.GemmOp, args: PythonValues) -> PythonValues:
        return _blas(op, args)

    # --- indexing, reshaping, joining and allocation -------------------------------------

    @impl(ag.SubtensorOp)
    def run_subtensor(
        self, interpreter: Interpreter, op: ag.SubtensorOp, args: PythonValues
    ) -> PythonValues:
        x, *dynamic = _operands(op, args)
        return _result(op, x[_subtensor_key(op, x.shape, dynamic)].copy())

    @impl(ag.SetSubtensorOp)
    def run_set_subtensor(
        self, interpreter: Interpreter, op: ag.SetSubtensorOp, args: PythonValues
    ) -> PythonValues:
        return self._update(op, args)

    @impl(ag.IncSubtensorOp)
    def run_inc_subtensor(
        self, interpreter: Interpreter, op: ag.IncSubtensorOp, args: PythonValues
    ) -> PythonValues:
        return self._update(op, args)

    def _update(self, op: ag.SubtensorUpdateOp, args: PythonValues) -> PythonValues:
        x, value, *dynamic = _operands(op, args)
        key = _subtensor_key(op, x.shape, dynamic)
        out = x.copy()
        _check_fits(op, value, out[key].shape, ag.tensor_type(op.value).get_shape())
        with np.errstate(all="ignore"):
            if isinstance(op, ag.IncSubtensorOp):
                out[key] += value
            else:
                out[key] = value
        return _result(op, out)

    @impl(ag.AdvancedSubtensorOp)
    def run_advanced_subtensor(
        self, interpreter: Interpreter, op: ag.AdvancedSubtensorOp, args: PythonValues
    ) -> PythonValues:
        x, *indices = _operands(op, args)
        return _result(op, x[_advanced_key(op, x, indices)])

    @impl(ag.AdvancedSetSubtensorOp)
    def run_advanced_set_subtensor(
        self, interpreter: Interpreter, op: ag.AdvancedSetSubtensorOp, args: PythonValues
    ) -> PythonValues:
        return self._advanced_update(op, args)

    @impl(ag.AdvancedIncSubtensorOp)
    def run_advanced_inc_subtensor(
        self, interpreter: Interpreter, op: ag.AdvancedIncSubtensorOp, args: PythonValues
    ) -> PythonValues:
        return self._advanced_update(op, args)

    def _advanced_update(
        self, op: ag.AdvancedSubtensorUpdateOp, args: PythonValues
    ) -> PythonValues:
        x, value, *indices = _operands(op, args)
        key = _advanced_key(op, x, indices)
        out = x.copy()
        region = np.broadcast_shapes(*(i.shape for i in indices)) + x.shape[len(indices) :]
        _check_fits(op, value, region, ag.tensor_type(op.value).get_shape())
        with np.errstate(all="ignore"):
            if isinstance(op, ag.AdvancedIncSubtensorOp):
                np.add.at(out, key, value)  # repeated indices accumulate
            else:
                out[key] = value
        return _result(op, out)

    @impl(ag.ReshapeOp)
    def run_reshape(
        self, interpreter: Interpreter, op: ag.ReshapeOp, args: PythonValues
    ) -> PythonValues:
        x, *dynamic = _operands(op, args)
        return _result(op, x.reshape(_reshape_shape(op, x, dynamic)).copy())

    @impl(ag.ConcatenateOp)
    def run_concatenate(
        self, interpreter: Interpreter, op: ag.ConcatenateOp, args: PythonValues
    ) -> PythonValues:
        values = _operands(op, args)
        axis = op.axis_value
        for k, v in enumerate(values):
            for a in range(v.ndim):
                if a != axis and v.shape[a] != values[0].shape[a]:
                    raise ValueError(
                        f"{_label(op)}: dimension {a} of operand #{k} (shape {v.shape}) differs "
                        f"from operand #0 (shape {values[0].shape})"
                    )
        return _result(op, np.concatenate(values, axis=axis))

    @impl(ag.AllocOp)
    def run_alloc(
        self, interpreter: Interpreter, op: ag.AllocOp, args: PythonValues
    ) -> PythonValues:
        value, *dynamic = _operands(op, args)
        lengths = iter(int(v) for v in dynamic)
        shape = tuple(next(lengths) if e == ag.DYNAMIC_VALUE else e for e in op.shape_list)
        if any(d < 0 for d in shape):
            raise ValueError(f"{_label(op)}: shape {shape} has a negative length")
        _check_fits(op, value, shape, ag.tensor_type(op.value).get_shape())
        _check_size(op, shape, value.dtype)
        return _result(op, np.broadcast_to(value, shape).copy())

    @impl(ag.ArangeOp)
    def run_arange(
        self, interpreter: Interpreter, op: ag.ArangeOp, args: PythonValues
    ) -> PythonValues:
        start, stop, step = _operands(op, args)
        if step == 0:
            raise ValueError(f"{_label(op)}: the step must not be zero")
        t = numpy_dtype(ag.tensor_type(op.result).element_type)
        with np.errstate(all="ignore"):
            count = (
                max(0, int(np.ceil((stop - start) / step)))
                if t.kind == "f"
                else max(0, -((int(start) - int(stop)) // int(step)))
            )
            _check_size(op, (count,), t)
            return _result(op, (start + np.arange(count, dtype=t) * step).astype(t))

    # --- nnet functions (issue 14): row-wise softmax and its gradient ------------------

    @impl(ag.SoftmaxOp)
    def run_softmax(self, interpreter: Interpreter, op: ag.SoftmaxOp, args: PythonValues):
        (x,) = _operands(op, args)
        with np.errstate(all="ignore"):
            e = np.exp(x - np.max(x, axis=-1, keepdims=True)) if x.size else x.copy()
            return _result(op, (e / np.sum(e, axis=-1, keepdims=True)).astype(x.dtype))

    @impl(ag.LogSoftmaxOp)
    def run_logsoftmax(self, interpreter: Interpreter, op: ag.LogSoftmaxOp, args: PythonValues):
        (x,) = _operands(op, args)
        if x.size == 0:
            return _result(op, x.copy())
        with np.errstate(all="ignore"):
            shifted = x - np.max(x, axis=-1, keepdims=True)
            out = shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))
            return _result(op, out.astype(x.dtype))

    @impl(ag.SoftmaxGradOp)
    def run_softmax_grad(self, interpreter: Interpreter, op: ag.SoftmaxGradOp, args: PythonValues):
        dy, sm = _operands(op, args)
        if dy.shape != sm.shape:
            raise ValueError(
                f"{_label(op)}: dy and sm must have the same shape, got {dy.shape} and {sm.shape}"
            )
        with np.errstate(all="ignore"):
            dx = (dy - np.sum(dy * sm, axis=-1, keepdims=True)) * sm
            return _result(op, dx.astype(sm.dtype))

    @impl(ag.SoftmaxXentOp)
    def run_softmax_xent(self, interpreter: Interpreter, op: ag.SoftmaxXentOp, args: PythonValues):
        x, y = _operands(op, args)
        return _result(op, _xent_nll(op, x, y))

    @impl(ag.SoftmaxXentGradOp)
    def run_softmax_xent_grad(
        self, interpreter: Interpreter, op: ag.SoftmaxXentGradOp, args: PythonValues
    ):
        g, x, y = _operands(op, args)
        return _result(op, _xent_dx(op, g, x, y))

    @impl(ag.SoftmaxXentPairOp)
    def run_softmax_xent_pair(
        self, interpreter: Interpreter, op: ag.SoftmaxXentPairOp, args: PythonValues
    ):
        g, x, y = _operands(op, args)
        nll, dx = _xent_nll(op, x, y), _xent_dx(op, g, x, y)
        label = _label(op)
        return (
            check_value(label, "result #0", nll, op.nll.type),
            check_value(label, "result #1", dx, op.dx.type),
        )

    # --- extra_ops and sort (issue 13 item 4): scans, stable sorts, binary search -----

    @impl(ag.CumSumOp)
    def run_cumsum(self, interpreter: Interpreter, op: ag.CumSumOp, args: PythonValues):
        (x,) = _operands(op, args)
        with np.errstate(all="ignore"):
            return _result(op, np.cumsum(x, axis=op.axis_value, dtype=x.dtype))

    @impl(ag.CumProdOp)
    def run_cumprod(self, interpreter: Interpreter, op: ag.CumProdOp, args: PythonValues):
        (x,) = _operands(op, args)
        with np.errstate(all="ignore"):
            return _result(op, np.cumprod(x, axis=op.axis_value, dtype=x.dtype))

    @impl(ag.SortOp)
    def run_sort(self, interpreter: Interpreter, op: ag.SortOp, args: PythonValues):
        (x,) = _operands(op, args)
        return _result(op, np.sort(x, axis=op.axis_value, kind="stable"))

    @impl(ag.ArgSortOp)
    def run_argsort(self, interpreter: Interpreter, op: ag.ArgSortOp, args: PythonValues):
        (x,) = _operands(op, args)
        return _result(op, np.argsort(x, axis=op.axis_value, kind="stable").astype(np.int64))

    @impl(ag.SearchSortedOp)
    def run_searchsorted(
        self, interpreter: Interpreter, op: ag.SearchSortedOp, args: PythonValues
    ) -> PythonValues:
        a, v = _operands(op, args)
        side = "right" if op.right else "left"
        return _result(op, np.searchsorted(a, v, side=side).astype(np.int64))

    # --- debugging ops: ag.print shows its operand; the timers do nothing here ----------

    @impl(ag.PrintOp)
    def run_print(
        self, interpreter: Interpreter, op: ag.PrintOp, args: PythonValues
    ) -> PythonValues:
        (x,) = _operands(op, args)
        if not _QUIET.get():
            spec = PrintSpec(op.message.data, op.attrs_list, x.dtype, x.ndim, op.hook_id)
            show(spec, x if spec.hook == -1 else x.copy())  # a hook gets its own copy
        return _result(op, x.copy())

    @impl(ag.PythonOp)
    def run_python_op(
        self, interpreter: Interpreter, op: ag.PythonOp, args: PythonValues
    ) -> PythonValues:
        # custom ops (issue 13 item 8): the registered Python code (its own copies of
        # the operands: perform may keep or modify them)
        arrays = [x.copy() for x in _operands(op, args)]
        outputs = run_python_node(op.callback_id, arrays)
        return tuple(
            check_value(_label(op), f"result #{k}", value, result.type)
            for k, (value, result) in enumerate(zip(outputs, op.results, strict=True))
        )

    @impl(ag.ProfileBeginOp)
    def run_profile_begin(
        self, interpreter: Interpreter, op: ag.ProfileBeginOp, args: PythonValues
    ) -> PythonValues:
        return ()

    @impl(ag.ProfileEndOp)
    def run_profile_end(
        self, interpreter: Interpreter, op: ag.ProfileEndOp, args: PythonValues
    ) -> PythonValues:
        return ()


# --- running functions -----------------------------------------------------------------

_QUIET: contextvars.ContextVar[bool] = contextvars.ContextVar("ag_quiet", default=False)
"""True while ops run only for the shapes of their results (see `quietly`)."""


@contextmanager
def quietly(interpreter: Interpreter) -> Iterator[None]:
    """Run ops only for the shapes of their results (an `ag.scan` with no step learning
    its body's shapes): no `ag.print` shows anything and the interpreter's listeners
    (DebugMode's, NanGuardMode's) are not told."""
    listeners, interpreter.listeners = interpreter.listeners, ()
    token = _QUIET.set(True)
    try:
        yield
    finally:
        _QUIET.reset(token)
        interpreter.listeners = listeners


def make_interpreter(
    module: ModuleOp, listeners: Sequence[Interpreter.Listener] = ()
) -> Interpreter:
    """An interpreter for `module` with the `ag`, `func`, `arith`, `scf`, `cf` and
    `builtin` implementations registered."""
    # xDSL's implementations, imported here: their package imports every interpreter
    # xDSL has (RISC-V, linalg, ...: a third of a second), which constant folding, the
    # only user of this module in a native compile, does not need
    from xdsl.interpreters.arith import ArithFunctions
    from xdsl.interpreters.builtin import BuiltinFunctions
    from xdsl.interpreters.cf import CfFunctions
    from xdsl.interpreters.func import FuncFunctions
    from xdsl.interpreters.scf import ScfFunctions

    from arignote.runtime.control import AgControlFunctions  # its module imports this one
    from arignote.runtime.fused import FusedFunctions
    from arignote.runtime.interpreter_complex import AgComplexFunctions
    from arignote.runtime.interpreter_conv import ConvFunctions  # convolution (issue 14)
    from arignote.runtime.interpreter_data_shapes import DataShapeFunctions  # imports this
    from arignote.runtime.interpreter_distributed import DistributedFunctions
    from arignote.runtime.interpreter_lapack import LapackFunctions
    from arignote.runtime.interpreter_pool import PoolFunctions  # pooling (issue 14)
    from arignote.runtime.interpreter_random import RandomFunctions  # issue 14, mrg
    from arignote.runtime.interpreter_rowwise import RowwiseFunctions
    from arignote.runtime.interpreter_scan import AgScanFunctions  # imports this module

    interpreter = Interpreter(module, listeners=tuple(listeners))
    for functions in (
        AgScanFunctions(),
        AgFunctions(),
        DataShapeFunctions(),
        DistributedFunctions(),
        AgComplexFunctions(),
        RowwiseFunctions(),
        LapackFunctions(),
        RandomFunctions(),
        ConvFunctions(),  # convolution (issue 14, conv)
        PoolFunctions(),  # pooling (issue 14 item 2)
        AgControlFunctions(),
        FusedFunctions(),
        FuncFunctions(),
        ArithFunctions(),
        ScfFunctions(),
        CfFunctions(),
        BuiltinFunctions(),
    ):
        interpreter.register_implementations(functions)
    return interpreter


class InterpretedFunction:
    """A `func.func` of a module run by the reference interpreter, for repeated calls.

    Arguments are checked against the function's input types (TypeError for a wrong
    dtype, ValueError for a wrong shape); results are fresh arrays, never views of the
    arguments.

    An xDSL `Interpreter` keeps the values of the call it runs in its own environment,
    so two calls must not share one: a call uses `interpreter` (made once) unless
    another call is using it (another thread, or a re-entrant call from a print hook),
    and then a fresh one (about 50 µs more), as native calls do with their frames.
    """

    def __init__(self, module: ModuleOp, name: str, listeners: Sequence[Interpreter.Listener] = ()):
        self.module = module
        self.name = name
        self.listeners = tuple(listeners)
        self.interpreter = make_interpreter(module, self.listeners)
        self._lock = threading.Lock()
        function = SymbolTable.lookup_symbol(module, name)
        if not isinstance(function, func.FuncOp):
            raise KeyError(f"module has no func.func @{name}")
        self.function = function

    def __call__(self, *arrays: Any) -> list[Array]:
        inputs = self.function.function_type.inputs.data
        if len(arrays) != len(inputs):
            raise TypeError(f"@{self.name} takes {len(inputs)} arguments, got {len(arrays)}")
        args = tuple(
            check_value(f"@{self.name}", f"argument #{i}", np.asarray(a), t)
            for i, (a, t) in enumerate(zip(arrays, inputs, strict=True))
        )
        if not self._lock.acquire(False):  # in use: this call gets its own
            interpreter = make_interpreter(self.module, self.listeners)
            results = interpreter.call_op(self.function, args)
            return [np.array(r, copy=True) for r in results]
        try:
            results = self.interpreter.call_op(self.function, args)
        finally:
            self._lock.release()
        return [np.array(r, copy=True) for r in results]


def run_function(
    module: ModuleOp, name: str, args: Sequence[Any], listeners: Sequence[Interpreter.Listener] = ()
) -> list[Array]:
    """Run the `func.func` `@name` of `module` on `args` (NumPy arrays) and return its
    results as fresh NumPy arrays."""
    return InterpretedFunction(module, name, listeners)(*args)


def _xent_labels(op: Operation, x: Array, y: Array) -> Array:
    """`y` as row-wise column indices of `x` (negative ones count from the end), after
    the checks of the native code (nnet functions, issue 14)."""
    if y.shape[0] != x.shape[0]:
        raise ValueError(f"{_label(op)}: x has {x.shape[0]} rows but y has {y.shape[0]} labels")
    n = x.shape[1]
    bad = (y < -n) | (y >= n)
    if np.any(bad):
        raise IndexOutOfBoundsError(
            f"{_label(op)}: index {int(y[np.argmax(bad)])} is out of bounds for axis 1 "
            f"with size {n}"
        )
    return np.where(y < 0, y + n, y).astype(np.int64)


def _xent_nll(op: Operation, x: Array, y: Array) -> Array:
    labels = _xent_labels(op, x, y)
    with np.errstate(all="ignore"):
        m = np.max(x, axis=1) if x.size else np.zeros(x.shape[0], x.dtype)
        total = np.sum(np.exp(x - m[:, None]), axis=1)
        picked = x[np.arange(x.shape[0]), labels]
        return np.asarray(m + np.log(total) - picked).astype(x.dtype)


def _xent_dx(op: Operation, g: Array, x: Array, y: Array) -> Array:
    labels = _xent_labels(op, x, y)
    if g.shape[0] != x.shape[0] and ag.tensor_type(op.operands[0]).get_shape()[0] != 1:
        raise ValueError(
            f"{_label(op)}: dnll has {g.shape[0]} elements but x has {x.shape[0]} rows"
        )
    with np.errstate(all="ignore"):
        e = np.exp(x - np.max(x, axis=1, keepdims=True)) if x.size else x.copy()
        dx = e / np.sum(e, axis=1, keepdims=True) * g[:, None]
        np.subtract.at(dx, (np.arange(x.shape[0]), labels), np.broadcast_to(g, y.shape))
        return dx.astype(x.dtype)
