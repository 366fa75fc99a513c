"""`canonicalize`: constant folding, algebraic simplification and shape folding of `ag`.

xDSL's `canonicalize` (the canonicalization patterns that ops of other dialects declare,
folding, dead-code removal) extended with patterns for `ag` on tensors. Every rewrite
keeps the replaced value's type: where the simpler value has fewer (leading) axes, a
`dimshuffle` adds them; otherwise the rewrite does not apply. A rewrite never drops a
run-time shape check: an operand that another one would stretch blocks it.

| before                                         | after                              |
|------------------------------------------------|------------------------------------|
| an op whose operands are all `ag.constant`     | `ag.constant` (≤ 4096 elements)    |
| `x * 1`, `1 * x`, `x + 0`, `0 + x`, `x - 0`    | `x`                                |
| `x / 1`, `x ** 1`, `-(-x)`                     | `x`                                |
| `x * 0`, `0 * x`, `x - x` (integers)           | zeros of `x`'s shape (`ag.alloc`)  |
| `select(c, a, b)`, `c` constant all true/false | `a` / `b`                          |
| `x ** 2` (floats)                              | `x * x`                            |
| `cast(x)` to `x`'s own type                    | `x`                                |
| `cast(cast(x, T1), T2)`, `T1` exact for `x`    | `cast(x, T2)` (`x` if `T2` is its) |
| `dimshuffle(x)` with the identity pattern      | `x`                                |
| `dimshuffle(dimshuffle(x, p), q)`              | `dimshuffle(x, p∘q)`               |
| `dim(x, a)`, `x`'s axis `a` static             | `ag.constant`                      |
| `dim(f(x, ..), a)`, `f` elementwise, a reduction or a dimshuffle | `dim(x, a')` |

Constant folding runs the op's implementation in the reference interpreter, so the
folded value is bit for bit what the op computes. `x + 0` → `x` is exact but for the
sign of a zero (`-0.0 + 0.0` is `+0.0`), as in Theano. Ops inside an `ag.fused` region
are left alone.

```mlir
// before
%one = ag.constant dense<1.0> : tensor<f32>
%y = ag.mul %x, %one : tensor<?xf32>, tensor<f32> -> tensor<?xf32>
%n = ag.dim %y {axis = 0 : i64} : tensor<?xf32> -> tensor<i64>
// after
%n = ag.dim %x {axis = 0 : i64} : tensor<?xf32> -> tensor<i64>
```
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    ComplexType,
    DenseIntOrFPElementsAttr,
    Float32Type,
    Float64Type,
    IntegerType,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.transforms.canonicalize import CanonicalizationRewritePattern
from xdsl.transforms.dead_code_elimination import region_dce

from arignote.dialects import ag
from arignote.lowering.rewriting import DispatchingApplier

FOLD_LIMIT = 4096
"""Constant folding makes constants of at most this many elements (splats of any size)."""

FOLDABLE: tuple[type[Operation], ...] = (
    ag.BinaryElementwiseOp,
    ag.UnaryElementwiseOp,
    ag.SelectOp,
    ag.CastOp,
    ag.DimShuffleOp,
    ag.ReduceOp,
    ag.DimOp,
)
"""The op classes (and bases) that constant folding evaluates."""

ELEMENTWISE: tuple[type[Operation], ...] = (
    ag.BinaryElementwiseOp,
    ag.UnaryElementwiseOp,
    ag.SelectOp,
    ag.CastOp,
)


def _element(value: SSAValue) -> Attribute:
    t = value.type
    assert isinstance(t, TensorType)
    return t.element_type


def _constant(value: SSAValue) -> ag.ConstantOp | None:
    if isinstance(value, OpResult) and isinstance(value.op, ag.ConstantOp):
        return value.op
    return None


def _constant_array(value: SSAValue) -> np.ndarray | None:
    op = _constant(value)
    if op is None:
        return None
    from arignote.runtime.dtypes import constant_array

    attr = op.value
    assert isinstance(attr, DenseIntOrFPElementsAttr)
    return constant_array(attr)


def _all_equal(value: SSAValue, number: float) -> bool:
    """Whether `value` is a constant whose every element equals `number`."""
    array = _constant_array(value)
    return array is not None and bool(np.all(array == number))


def _in_fused_region(op: Operation) -> bool:
    return isinstance(op.parent_op(), ag.FusedOp)


def _replace(rewriter: PatternRewriter, op: Operation, new_ops: list[Operation], value: SSAValue):
    rewriter.replace(op, new_ops, [value])


def as_type(x: SSAValue, t: Attribute) -> tuple[list[Operation], SSAValue] | None:
    """`x` with type `t`: itself, or a dimshuffle adding `t`'s extra leading 1 axes; None
    when neither has type `t`."""
    if x.type == t:
        return [], x
    assert isinstance(t, TensorType)
    shape, target = ag.value_shape(x), t.get_shape()
    extra = len(target) - len(shape)
    if extra <= 0 or _element(x) != t.element_type or target != (1,) * extra + shape:
        return None
    op = ag.DimShuffleOp(x, [ag.NEWAXIS] * extra + list(range(len(shape))))
    return [op], op.result


def _stretches(x: SSAValue, by: SSAValue) -> bool:
    """Whether broadcasting with `by` changes `x`'s shape or checks it at run time."""
    shape, other = ag.value_shape(x), ag.value_shape(by)
    rank = max(len(shape), len(other))
    padded = (1,) * (rank - len(other)) + other
    return any(d != 1 for d in padded[: rank - len(shape)]) or any(
        o != 1 for o in padded[rank - len(shape) :]
    )


# --- constant folding -------------------------------------------------------------------


_SCALAR_BINARY: dict[type[Operation], Any] = {
    ag.AddOp: np.add,
    ag.SubOp: np.subtract,
    ag.MulOp: np.multiply,
    ag.DivOp: np.true_divide,
}
"""The binary ops `_scalar` folds with NumPy: on floating-point scalars of the result's
dtype, the reference interpreter computes each as this ufunc and nothing more."""


def _scalar(op: Operation, arrays: list[np.ndarray]) -> np.ndarray | None:
    """`op`'s result when it is a binary op of `_SCALAR_BINARY` on floating-point 0-d
    arrays of its result's dtype, or a dimshuffle of a 0-d array (only new axes), as the
    reference interpreter computes it; None for any other op or operands. These are the
    folds of most graphs (`2 * L2`, a learning rate broadcast), and the interpreter's
    import (xDSL's and arignote's, about 14 ms) is then not paid by the first compile."""
    if isinstance(op, ag.DimShuffleOp):
        (x,) = arrays
        pattern = op.pattern_list
        if x.ndim or any(p != ag.NEWAXIS for p in pattern):
            return None
        return x.reshape((1,) * len(pattern))
    fn = _SCALAR_BINARY.get(type(op))
    if fn is None:
        return None
    from arignote.runtime.dtypes import numpy_dtype

    dtype = numpy_dtype(ag.tensor_type(op.results[0]).element_type)
    if dtype.kind != "f" or any(a.ndim or a.dtype != dtype for a in arrays):
        return None
    with np.errstate(all="ignore"):
        return np.asarray(fn(*arrays))


def _evaluate(op: Operation, arrays: list[np.ndarray]) -> np.ndarray | None:
    """`op`'s result on constant operands by the reference interpreter (None if it
    raises: the error is left for run time); `_scalar`'s when it has one."""
    found = _scalar(op, arrays)
    if found is not None:
        return found
    return _interpreted(op, arrays)


def _interpreted(op: Operation, arrays: list[np.ndarray]) -> np.ndarray | None:
    """`op`'s result on constant operands by the reference interpreter (None if it
    raises)."""
    from xdsl.interpreter import Interpreter

    from arignote.runtime.interpreter import AgFunctions

    interpreter = Interpreter(ModuleOp([]))
    interpreter.register_implementations(AgFunctions())
    try:
        (result,) = interpreter.run_op(op, tuple(arrays))
    except Exception:
        return None
    return np.asarray(result)


def _dense(array: np.ndarray, t: Attribute) -> DenseIntOrFPElementsAttr:
    """A dense attribute of type `t` holding `array`, one element when all are equal."""
    from arignote.runtime.dtypes import dense_attr

    flat = array.reshape(-1)
    if flat.size > 1 and bool(np.all(flat == flat[0])) and not np.isnan(flat[:1]).any():
        splat = dense_attr(flat[:1].copy())
        return DenseIntOrFPElementsAttr(t, splat.data)  # pyright: ignore[reportArgumentType]
    return DenseIntOrFPElementsAttr(t, dense_attr(array).data)  # pyright: ignore[reportArgumentType]


class ConstantFold(RewritePattern):
    """An op of `FOLDABLE` whose operands are all constants → the constant it computes."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, FOLDABLE) or _in_fused_region(op) or not op.operands:
            return
        arrays = [_constant_array(v) for v in op.operands]
        if any(a is None for a in arrays):
            return
        t = op.results[0].type
        assert isinstance(t, TensorType)
        size = prod(t.get_shape())
        if ag.DYNAMIC in t.get_shape():
            return
        result = _evaluate(op, arrays)  # pyright: ignore[reportArgumentType]
        if result is None:
            return
        splat = result.size > 0 and bool(np.all(result == result.reshape(-1)[0]))
        if size > FOLD_LIMIT and not splat:
            return
        rewriter.replace(op, ag.ConstantOp(_dense(result, t)))


# --- algebraic simplification -------------------------------------------------------------


def _neutral(op: ag.BinaryElementwiseOp) -> SSAValue | None:
    """For `x op e` (or `e op x` where op commutes) with `e` op's neutral element, `x`."""
    lhs, rhs = op.lhs, op.rhs
    right = {ag.AddOp: 0, ag.SubOp: 0, ag.MulOp: 1, ag.DivOp: 1, ag.PowOp: 1}
    left = {ag.AddOp: 0, ag.MulOp: 1}
    kind = type(op)
    if kind in right and _all_equal(rhs, right[kind]) and not _stretches(lhs, rhs):
        return lhs
    if kind in left and _all_equal(lhs, left[kind]) and not _stretches(rhs, lhs):
        return rhs
    return None


def _zeros_like(x: SSAValue) -> tuple[list[Operation], SSAValue]:
    """Ops making zeros of `x`'s type: a constant when static, else an `ag.alloc`."""
    t = x.type
    assert isinstance(t, TensorType)
    dtype, shape = _numpy_dtype(t.element_type), t.get_shape()
    if ag.DYNAMIC not in shape:
        const = ag.ConstantOp(_dense(np.zeros(shape, dtype=dtype), t))
        return [const], const.result
    zero = ag.ConstantOp(_dense(np.zeros((), dtype=dtype), TensorType(t.element_type, [])))
    dims = [ag.DimOp(x, axis) for axis, d in enumerate(shape) if d == ag.DYNAMIC]
    entries = [ag.DYNAMIC_VALUE if d == ag.DYNAMIC else d for d in shape]
    alloc = ag.AllocOp(zero, entries, dims)
    return [zero, *dims, alloc], alloc.result


def _numpy_dtype(t: Attribute) -> Any:
    from arignote.runtime.dtypes import numpy_dtype

    return numpy_dtype(t)


def _is_int(value: SSAValue) -> bool:
    return ag.is_int(_element(value))


def _zero_product(op: ag.BinaryElementwiseOp) -> SSAValue | None:
    """For an integer `x * 0`, `0 * x` or `x - x`, the operand `x` whose zeros it is."""
    if not _is_int(op.lhs):
        return None
    if isinstance(op, ag.MulOp):
        if _all_equal(op.rhs, 0) and not _stretches(op.lhs, op.rhs):
            return op.lhs
        if _all_equal(op.lhs, 0) and not _stretches(op.rhs, op.lhs):
            return op.rhs
    if isinstance(op, ag.SubOp) and op.lhs is op.rhs:
        return op.lhs
    return None


class SimplifyBinary(RewritePattern):
    """Neutral elements (`x * 1`, `x + 0`, ...) and integer zero products."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.BinaryElementwiseOp, rewriter: PatternRewriter, /):
        if _in_fused_region(op):
            return
        x = _neutral(op)
        if x is not None:
            typed = as_type(x, op.result.type)
            if typed is not None:
                _replace(rewriter, op, *typed)
            return
        zeros_of = _zero_product(op)
        if zeros_of is not None and zeros_of.type == op.result.type:
            _replace(rewriter, op, *_zeros_like(zeros_of))


class SimplifySelect(RewritePattern):
    """`select(c, a, b)` with a constant `c` all true (all false) → `a` (`b`), when that
    branch has (or a dimshuffle gives it) the result type and `c` stretches nothing;
    otherwise, when the other branch stretches it, `ag.alloc` of it to the result's
    shape (`_broadcast_to`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.SelectOp, rewriter: PatternRewriter, /):
        cond = _constant_array(op.cond)
        if cond is None or _in_fused_region(op) or cond.size == 0:
            return
        if bool(np.all(cond)):
            chosen, other = op.true_value, op.false_value
        elif not bool(np.any(cond)):
            chosen, other = op.false_value, op.true_value
        else:
            return
        if _stretches(chosen, op.cond):
            return
        typed = None if _stretches(chosen, other) else as_type(chosen, op.result.type)
        if typed is None:
            typed = _broadcast_to(chosen, other, op.result.type)
            if typed is not None and "ag.node" in op.attributes:
                typed[0][-1].attributes["ag.node"] = op.attributes["ag.node"]
        if typed is not None:
            _replace(rewriter, op, *typed)


def _broadcast_to(
    x: SSAValue, model: SSAValue, t: Attribute
) -> tuple[list[Operation], SSAValue] | None:
    """`x` (of a static shape) broadcast against `model` as `ag.alloc(x, ...)` of type `t`
    (the broadcast type of the two), each dynamic length an `ag.dim` of `model`; None
    when `x`'s element type differs from `t`'s or `x` has a dynamic length (the select
    then keeps its run-time length check). The alloc reads `model`'s lengths only, not
    its data: `fill(model, 0)` (Theano's `zeros_like`) becomes a fill."""
    assert isinstance(t, TensorType)
    if _element(x) != t.element_type or ag.DYNAMIC in ag.value_shape(x):
        return None
    shape, rank = t.get_shape(), t.get_num_dims()
    m_shape = ag.value_shape(model)
    ops: list[Operation] = []
    dims: list[SSAValue] = []
    for axis, length in enumerate(shape):
        if length != ag.DYNAMIC:
            continue
        dim = ag.DimOp(model, axis - rank + len(m_shape))  # x's lengths are static
        ops.append(dim)
        dims.append(dim.result)
    entries = [ag.DYNAMIC_VALUE if d == ag.DYNAMIC else d for d in shape]
    alloc = ag.AllocOp(x, entries, dims)
    if alloc.result.type != t:
        return None
    return [*ops, alloc], alloc.result


class SquareFromPow(RewritePattern):
    """Float `x ** 2` → `x * x` (what NumPy's `power` computes for the exponent 2)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.PowOp, rewriter: PatternRewriter, /):
        if _in_fused_region(op) or not ag.is_float(_element(op.lhs)):
            return
        if _all_equal(op.rhs, 2) and not _stretches(op.lhs, op.rhs):
            square = ag.MulOp(op.lhs, op.lhs)
            typed = as_type(square.result, op.result.type)
            if typed is not None:
                _replace(rewriter, op, [square, *typed[0]], typed[1])


class DoubleNegation(RewritePattern):
    """`-(-x)` → `x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.NegOp, rewriter: PatternRewriter, /):
        inner = op.input
        if isinstance(inner, OpResult) and isinstance(inner.op, ag.NegOp):
            if not _in_fused_region(op):
                rewriter.replace(op, [], [inner.op.input])


# --- casts ------------------------------------------------------------------------------------


def _width(t: Attribute) -> int:
    """An integer's bits, or a float's significand bits."""
    if isinstance(t, IntegerType):
        return t.width.data
    return 24 if isinstance(t, Float32Type) else 53


def exact_cast(source: Attribute, to: Attribute) -> bool:
    """Whether casting from element type `source` to `to` keeps every value exactly."""
    if source == to or ag.is_bool(source):
        return True
    if ag.is_complex(source):
        return to == ComplexType(Float64Type())
    if ag.is_complex(to):  # a real value is the real part, exactly as in that float type
        assert isinstance(to, ComplexType)
        return exact_cast(source, to.element_type)
    if ag.is_float(source):
        return isinstance(to, Float64Type)
    if ag.is_bool(to):
        return False
    assert isinstance(source, IntegerType)
    bits, unsigned = source.width.data, ag.is_unsigned(source)
    if ag.is_int(to):
        if unsigned == ag.is_unsigned(to):
            return _width(to) >= bits
        return unsigned and _width(to) > bits  # a signed target needs one more bit
    # A float's significand holds the integer's magnitude (all its bits if unsigned).
    return _width(to) >= (bits if unsigned else bits - 1)


class SimplifyCast(RewritePattern):
    """Same-type casts disappear; `cast(cast(x, T1), T2)` → `cast(x, T2)` when `T1`
    holds every value of `x`'s type exactly."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.CastOp, rewriter: PatternRewriter, /):
        if _in_fused_region(op):
            return
        if op.input.type == op.result.type:
            rewriter.replace(op, [], [op.input])
            return
        inner = op.input
        if not (isinstance(inner, OpResult) and isinstance(inner.op, ag.CastOp)):
            return
        x = inner.op.input
        if not exact_cast(_element(x), _element(inner)):
            return
        if x.type == op.result.type:
            rewriter.replace(op, [], [x])
        else:
            rewriter.replace(op, ag.CastOp(x, _element(op.result)))


# --- dimshuffles ------------------------------------------------------------------------------


class SimplifyDimShuffle(RewritePattern):
    """Identity dimshuffles disappear; two dimshuffles in a row become one."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.DimShuffleOp, rewriter: PatternRewriter, /):
        if _in_fused_region(op):
            return
        pattern = op.pattern_list
        if pattern == tuple(range(len(ag.value_shape(op.input)))):
            rewriter.replace(op, [], [op.input])
            return
        inner = op.input
        if not (isinstance(inner, OpResult) and isinstance(inner.op, ag.DimShuffleOp)):
            return
        first = inner.op.pattern_list
        composed = [ag.NEWAXIS if p == ag.NEWAXIS else first[p] for p in pattern]
        try:
            new = ag.DimShuffleOp(inner.op.input, composed)
        except ValueError:
            return
        if new.result.type == op.result.type:
            rewriter.replace(op, new)


# --- shapes -----------------------------------------------------------------------------------


def _axis_source(value: SSAValue, axis: int) -> tuple[SSAValue, int] | None:
    """For axis `axis` of the result of an elementwise op, a reduction, a dimshuffle or
    a gemv, an operand and its axis of the same (dynamic, run-time checked) length."""
    if not isinstance(value, OpResult):
        return None
    op = value.op
    if isinstance(op, ag.ReduceOp):
        kept = [a for a in range(len(ag.value_shape(op.input))) if a not in op.axes_list]
        return op.input, kept[axis]
    if isinstance(op, ag.DimShuffleOp):
        return op.input, op.pattern_list[axis]  # a dynamic axis is never a new one
    if isinstance(op, ag.GemvOp):  # y = op(A)·x: y's length is a row count of op(A)
        return op.a, 1 if op.transpose_a is not None else 0
    if isinstance(op, ag.SOFTMAX_OPS):  # nnet functions (issue 14): shaped like their x
        return ag.softmax_shape_source(op), axis
    if not isinstance(op, ELEMENTWISE):
        return None
    rank = len(ag.value_shape(value))
    for operand in value.op.operands:
        shape = ag.value_shape(operand)
        own = axis - (rank - len(shape))
        if own >= 0 and shape[own] != 1:
            return operand, own
    return None


class FoldDim(RewritePattern):
    """`dim(x, a)` → a constant when `x`'s axis `a` is static; through elementwise ops,
    reductions, dimshuffles and gemvs to the operand that has the axis."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.DimOp, rewriter: PatternRewriter, /):
        if _in_fused_region(op):
            return
        axis = op.axis_value
        length = ag.value_shape(op.input)[axis]
        if length != ag.DYNAMIC:
            value = np.asarray(length, dtype=np.int64)
            rewriter.replace(op, ag.ConstantOp(_dense(value, op.result.type)))
            return
        source = _axis_source(op.input, axis)
        if source is not None:
            new = ag.DimOp(*source)
            new.attributes.update(op.attributes)  # keeps the node label for shape errors
            rewriter.replace(op, new)


CANONICALIZE_PATTERNS: tuple[RewritePattern, ...] = (
    ConstantFold(),
    SimplifyBinary(),
    SimplifySelect(),
    SquareFromPow(),
    DoubleNegation(),
    SimplifyCast(),
    SimplifyDimShuffle(),
    FoldDim(),
)


@dataclass(frozen=True)
class CanonicalizePass(ModulePass):
    """Folds constants and shapes, simplifies ag algebra (and runs xDSL's canonicalize).

    See the module doc."""

    name = "canonicalize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns: list[RewritePattern] = [*CANONICALIZE_PATTERNS, CanonicalizationRewritePattern()]
        applier = DispatchingApplier(patterns, ctx=ctx, folding_enabled=True)
        PatternRewriteWalker(applier, post_walk_func=region_dce).rewrite_module(op)
