"""Loop nests computing one `ag` op from operand buffers into a result buffer.

A kernel receives a `Builder`, the `ag` op, the destination `Buffer` (a memref of the
result's shape, allocated by the caller) and the operand `Buffer`s, and emits `scf.for`
nests over `memref.load`/`memref.store` with the scalar code of `ag_scalar`. Operands
may have any layout; an operand dimension that is a static 1 is read at index 0 and
operands of lower rank are right-aligned (NumPy broadcasting). The shape checks were
done by `@f__shape` before any kernel runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType, i64
from xdsl.ir import Attribute, Operation, SSAValue

from arignote.dialects import ag
from arignote.lowering.loops import ag_scalar, parallel_loops
from arignote.lowering.loops.ag_shapes import contracted_dim
from arignote.lowering.loops.loop_utils import (
    Buffer,
    ReductionBody,
    as_index,
    blocked_reduction_nest,
    index_constant,
    load,
    loop_nest,
    reduction_nest,
    store,
)

Kernel = Callable[[Builder, Operation, Buffer, Sequence[Buffer]], None]
ScalarBody = Callable[[Builder, Sequence[SSAValue]], SSAValue]


def _bounds(b: Builder, buffer: Buffer) -> list[SSAValue]:
    return [as_index(b, d) for d in buffer.dims]


def broadcast_indices(
    operand: Buffer, ivs: Sequence[SSAValue], zero: SSAValue | None
) -> list[SSAValue]:
    """Indices into `operand` for result indices `ivs`: right-aligned, static 1s at
    `zero` (which may be None when `operand` has no static 1)."""
    offset = len(ivs) - len(operand.shape)
    indices = [ivs[offset + i] if d != 1 else zero for i, d in enumerate(operand.shape)]
    assert None not in indices
    return indices  # pyright: ignore[reportReturnType]


def elementwise(
    b: Builder, out: Buffer, ins: Sequence[Buffer], scalar: ScalarBody, parallel: bool = False
) -> None:
    """`out[i] = scalar(ins[0][i'], ins[1][i'], ...)` with broadcast indices `i'`; with
    `parallel`, the outer loop is an `ag.parallel_for` when parallel loops are on (one
    unit of work an element, see `parallel_loops`)."""
    broadcasts = any(d == 1 for x in ins for d in x.shape)
    zero = index_constant(b, 0) if broadcasts else None

    def body(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        values = [load(inner, x, broadcast_indices(x, ivs, zero)) for x in ins]
        store(inner, scalar(inner, values), out, ivs)

    bounds = _bounds(b, out)
    if (parallel or parallel_loops.every_loop()) and bounds and parallel_loops.enabled():
        parallel_loops.parallel_nest(b, bounds, body, 1)
    else:
        loop_nest(b, bounds, body, [out, *ins])


def copy(b: Builder, source: Buffer, dest: Buffer) -> None:
    """`dest[...] = source[...]` (same shape, any layouts)."""
    elementwise(b, dest, [source], lambda _, values: values[0])


def emit_binary(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    emit = ag_scalar.BINARY[type(op)]
    elementwise(b, out, ins, lambda inner, v: emit(inner, v[0], v[1]), parallel=True)


def emit_unary(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    emit = ag_scalar.UNARY[type(op)]
    elementwise(b, out, ins, lambda inner, v: emit(inner, v[0]), parallel=True)


def _select_scalar(b: Builder, values: Sequence[SSAValue]) -> SSAValue:
    return b.insert(arith.SelectOp(*values)).result


def emit_select(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    elementwise(b, out, ins, _select_scalar, parallel=True)


def emit_cast(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    to = out.element_type
    elementwise(b, out, ins, lambda inner, v: ag_scalar.cast(inner, v[0], to), parallel=True)


def emit_dimshuffle(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """A copy with permuted indices; dropped (length-1) input axes are read at 0."""
    assert isinstance(op, ag.DimShuffleOp)
    pattern, (x,) = op.pattern_list, ins
    zero = index_constant(b, 0)

    def body(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        indices = [ivs[pattern.index(a)] if a in pattern else zero for a in range(len(x.dims))]
        store(inner, load(inner, x, indices), out, ivs)

    parallel_loops.independent_nest(b, _bounds(b, out), body)


def _magnitude(b: Builder, x: SSAValue) -> SSAValue:
    """`|x|` as `maximumf(x, -x)` (`math.absf` of f32 and f64 in one module trips xDSL's
    translation to LLVM IR, which declares one `@llvm.fabs` for both)."""
    negated = b.insert(arith.NegfOp(x)).result
    return b.insert(arith.MaximumfOp(x, negated)).result


def _neumaier_fold(
    b: Builder, totals: Sequence[SSAValue], partials: Sequence[SSAValue]
) -> Sequence[SSAValue]:
    """`(sum, compensation) += partial` by Neumaier's compensated summation (plain
    IEEE ops: no `fastmath`, which would let LLVM cancel the compensation)."""
    total, compensation = totals
    (partial,) = partials
    new_total = b.insert(arith.AddfOp(total, partial)).result
    magnitudes = (_magnitude(b, total), _magnitude(b, partial))
    total_bigger = b.insert(arith.CmpfOp(*magnitudes, "oge")).result
    big = b.insert(arith.SelectOp(total_bigger, total, partial)).result
    small = b.insert(arith.SelectOp(total_bigger, partial, total)).result
    lost = b.insert(arith.AddfOp(b.insert(arith.SubfOp(big, new_total)).result, small)).result
    return [new_total, b.insert(arith.AddfOp(compensation, lost)).result]


def compensated_sum(
    b: Builder, bounds: Sequence[SSAValue], zero: SSAValue, step: ReductionBody
) -> SSAValue:
    """A float sum over the nest `bounds` whose `step` adds one element (with
    `fastmath<reassoc>`, so LLVM vectorises it): blocks of `REDUCTION_BLOCK` elements
    summed in vector lanes, the block sums combined with Neumaier's compensation. The
    error stays close to NumPy's pairwise summation.

    A non-finite running sum is the result itself: once it is +-inf (an infinity or an
    overflow) or nan, the compensation holds `inf - inf` = nan, and the sum alone is
    what NumPy gives (the infinity; nan when both infinities or a nan were added)."""
    total, compensation = blocked_reduction_nest(
        b, bounds, [zero], step, _neumaier_fold, [zero, zero]
    )
    compensated = b.insert(arith.AddfOp(total, compensation)).result
    infinity = ag_scalar.constant(b, float("inf"), total.type)
    finite = b.insert(arith.CmpfOp(_magnitude(b, total), infinity, "olt")).result
    return b.insert(arith.SelectOp(finite, compensated, total)).result


def reduction_total(
    b: Builder,
    kind: type[Operation],
    element_type: Attribute,
    bounds: Sequence[SSAValue],
    step: ReductionBody,
    full: bool,
    compensated: bool,
) -> SSAValue:
    """The reduction of kind `kind` (`ag.reduce_sum`, ...) over the nest `bounds`, whose
    `step` combines one element: a `full` reduction in parallel parts on the GPU
    (`parallel_loops.split_reduction`), else a compensated sum (`compensated`) or a
    plain nest."""
    combine = ag_scalar.REDUCTION_COMBINER[kind]
    if full:

        def init(at: Builder) -> SSAValue:
            return ag_scalar.reduction_init(at, kind, element_type)

        split = parallel_loops.split_reduction(b, bounds, init, step, combine)
        if split is not None:
            return split
    first = ag_scalar.reduction_init(b, kind, element_type)
    if compensated:
        return compensated_sum(b, bounds, first, step)
    (total,) = reduction_nest(b, bounds, [first], step)
    return total


def emit_reduce(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """For each result element, an inner nest over the reduced axes with an accumulator."""
    assert isinstance(op, ag.ReduceOp)
    (x,), axes = ins, op.axes_list
    combine = ag_scalar.REDUCTION_COMBINER[type(op)]
    reduced_bounds = [as_index(b, x.dims[a]) for a in axes]
    blocked = ag.is_float(x.element_type) and isinstance(op, ag.ReduceSumOp)

    def element(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        def step(
            red: Builder, rivs: Sequence[SSAValue], acc: Sequence[SSAValue]
        ) -> Sequence[SSAValue]:
            kept, reduced = iter(ivs), iter(rivs)
            indices = [next(reduced) if a in axes else next(kept) for a in range(len(x.dims))]
            return [combine(red, acc[0], load(red, x, indices))]

        total = reduction_total(
            inner, type(op), x.element_type, reduced_bounds, step, not ivs, blocked
        )
        store(inner, total, out, ivs)

    bounds = _bounds(b, out)
    if not parallel_loops.reduction_domain(b, bounds, element):
        loop_nest(b, bounds, element)


def emit_dot(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """`out[i, j] = sum_k lhs[i, k] * rhs[k, j]` (i, j present as the ranks say), the
    sum carried in registers through `scf.for` `iter_args`."""
    lhs, rhs = ins
    k = as_index(b, contracted_dim(lhs.dims, rhs.dims))
    add, mul = ag_scalar.ACCUMULATE_ADD, ag_scalar.BINARY[ag.MulOp]
    split = len(lhs.dims) - 1

    def element(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        def step(
            red: Builder, kiv: Sequence[SSAValue], acc: Sequence[SSAValue]
        ) -> Sequence[SSAValue]:
            a = load(red, lhs, [*ivs[:split], *kiv])
            c = load(red, rhs, [*kiv, *ivs[split:]])
            return [add(red, acc[0], mul(red, a, c))]

        init = ag_scalar.constant(inner, 0, out.element_type)
        if ag.is_float(out.element_type):
            total = compensated_sum(inner, [k], init, step)
        else:
            (total,) = reduction_nest(inner, [k], [init], step)
        store(inner, total, out, ivs)

    parallel_loops.independent_nest(b, _bounds(b, out), element)


def emit_constant(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """A splat becomes a fill loop; other constants one `memref.store` per element."""
    assert isinstance(op, ag.ConstantOp)
    value = op.value
    assert isinstance(value, DenseIntOrFPElementsAttr)
    values = list(value.get_values())
    t = out.element_type
    if len({repr(v) for v in values}) <= 1 and values:
        scalar = ag_scalar.constant(b, values[0], t)
        elementwise(b, out, [], lambda _, __: scalar)
        return
    shape = out.shape
    for flat, v in enumerate(values):
        indices, rest = [], flat
        for length in reversed(shape):
            indices.insert(0, index_constant(b, rest % length))
            rest //= length
        store(b, ag_scalar.constant(b, v, t), out, indices)


KERNELS: dict[type[Operation], Kernel] = {
    ag.ConstantOp: emit_constant,
    **{cls: emit_binary for cls in ag.BINARY_OPS},
    **{cls: emit_unary for cls in ag.UNARY_OPS},
    ag.SelectOp: emit_select,
    ag.CastOp: emit_cast,
    ag.DimShuffleOp: emit_dimshuffle,
    **{cls: emit_reduce for cls in ag.REDUCE_OPS},
    ag.DotOp: emit_dot,
}
"""`ag` op class → the kernel computing it into a destination buffer."""


# --- op library A: argmax/argmin, dim ----------------------------------------------------


def _arg_better(b: Builder, op: Operation, x: SSAValue, best: SSAValue) -> SSAValue:
    """Whether element `x` replaces the extremum `best` so far: strictly better, or a
    NaN while `best` is not yet NaN (so the first NaN wins, as NumPy)."""
    is_max = isinstance(op, ag.ArgMaxOp)
    t = x.type
    if ag.is_float(t):
        better = b.insert(arith.CmpfOp(x, best, "ugt" if is_max else "ult")).result
        settled = b.insert(arith.CmpfOp(best, best, "ord")).result
        return b.insert(arith.AndIOp(better, settled)).result
    if ag.is_bool(t) or ag.is_unsigned(t):
        return b.insert(arith.CmpiOp(x, best, "ugt" if is_max else "ult")).result
    return b.insert(arith.CmpiOp(x, best, "sgt" if is_max else "slt")).result


def emit_arg_reduce(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """For each result element, a nest over the reduced axes carrying the extremum so far
    and its row-major position among the reduced axes (an i64)."""
    assert isinstance(op, ag.ArgReduceOp)
    (x,), axes = ins, op.axes_list
    reduced_bounds = [as_index(b, x.dims[a]) for a in axes]
    init_class = ag.ReduceMaxOp if isinstance(op, ag.ArgMaxOp) else ag.ReduceMinOp

    def element(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        def step(
            red: Builder, rivs: Sequence[SSAValue], acc: Sequence[SSAValue]
        ) -> Sequence[SSAValue]:
            kept, reduced = iter(ivs), iter(rivs)
            indices = [next(reduced) if a in axes else next(kept) for a in range(len(x.dims))]
            value = load(red, x, indices)
            flat = rivs[0]
            for iv, bound in zip(rivs[1:], reduced_bounds[1:], strict=True):
                flat = red.insert(arith.AddiOp(red.insert(arith.MuliOp(flat, bound)), iv)).result
            position = red.insert(arith.IndexCastOp(flat, i64)).result
            better = _arg_better(red, op, value, acc[0])
            return [
                red.insert(arith.SelectOp(better, value, acc[0])).result,
                red.insert(arith.SelectOp(better, position, acc[1])).result,
            ]

        init = ag_scalar.reduction_init(inner, init_class, x.element_type)
        start = ag_scalar.constant(inner, 0, i64)
        _, index = reduction_nest(inner, reduced_bounds, [init, start], step)
        store(inner, index, out, ivs)

    parallel_loops.independent_nest(b, _bounds(b, out), element)


def emit_dim(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """Stores the operand's length along `axis` into the 0-d result."""
    assert isinstance(op, ag.DimOp)
    length = as_index(b, ins[0].dims[op.axis_value])
    store(b, b.insert(arith.IndexCastOp(length, i64)).result, out, [])


KERNELS.update(
    {
        ag.ArgMaxOp: emit_arg_reduce,
        ag.ArgMinOp: emit_arg_reduce,
        ag.DimOp: emit_dim,
    }
)


MultiKernel = Callable[[Builder, Operation, Sequence[Buffer], Sequence[Buffer]], None]

MULTI_KERNELS: dict[type[Operation], MultiKernel] = {}
"""`ag` op class → the kernel computing its results into one destination buffer each
(ops that may have several results, such as `ag.fused`; filled by
`lowering/loops/ag_fused.py`)."""


def emit_op(b: Builder, op: Operation, dests: Sequence[Buffer], ins: Sequence[Buffer]) -> None:
    """Computes `op` into `dests` (one per result) by its kernel."""
    multi = MULTI_KERNELS.get(type(op))
    with parallel_loops.emitting(op):
        if multi is not None:
            multi(b, op, dests, ins)
        else:
            KERNELS[type(op)](b, op, dests[0], ins)


def has_kernel(op: Operation) -> bool:
    """Whether `ag-to-loops` can lower `op` (no op on complex tensors: those run on the
    reference interpreter, see docs/dtypes.md)."""
    if touches_complex(op):
        return False
    return type(op) in KERNELS or type(op) in MULTI_KERNELS


def touches_complex(op: Operation) -> bool:
    """Whether an operand or a result of `op` is a tensor of complex numbers."""
    for value in (*op.operands, *op.results):
        t = value.type
        if isinstance(t, TensorType) and ag.is_complex(t.element_type):
            return True
    return False
