"""`ag-to-loops` for `ag.fused`: one loop nest, the region's ops emitted in its body.

The shape rule replays the shape rules of the region's ops on the dimensions of the
fused op's operands, so `@f__shape` performs the same checks, with the same messages
naming the original ops, as before fusion.

The kernel runs one `loop_nest` over the domain (the results, or in the reduction form
the kept axes around a `reduction_nest` over the reduced ones). In the body, each value
of the region is produced as one scalar at an index tuple by `ag_scalar`'s emitters:
a block argument is a `memref.load` of the operand, an elementwise op reads its
operands at its own index mapped by NumPy broadcasting (right-aligned, static 1s at 0),
a `dimshuffle` reads its operand at the permuted index, a splat constant is a scalar
constant. Values are memoized per (value, index), so each element of each region value
is computed once per iteration; they are emitted operands first by `graph_walk.evaluate`
(no recursion: a fused chain may hold thousands of ops).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue

from arignote.dialects import ag
from arignote.lowering.graph_walk import evaluate
from arignote.lowering.loops import ag_scalar, parallel_loops
from arignote.lowering.loops.ag_kernels import MULTI_KERNELS, reduction_total
from arignote.lowering.loops.ag_shapes import MULTI_RESULT_SHAPE_RULES, Check, result_dims
from arignote.lowering.loops.loop_utils import (
    Buffer,
    Dim,
    as_index,
    index_constant,
    load,
    loop_nest,
    store,
)

Index = tuple[SSAValue | int, ...]
"""An index tuple; the int 0 stands for the `index` constant 0, made when a load needs it."""


def region_dims(
    op: ag.FusedOp, operand_dims: Sequence[Sequence[Dim]]
) -> tuple[dict[SSAValue, list[Dim]], list[Check]]:
    """The dimensions of every value of `op`'s region and the checks of its ops."""
    env: dict[SSAValue, list[Dim]] = {
        a: list(d) for a, d in zip(op.block.args, operand_dims, strict=True)
    }
    checks: list[Check] = []
    for inner in op.computing_ops:
        dims, inner_checks = result_dims(inner, [env[o] for o in inner.operands])
        env[inner.results[0]] = dims
        checks += inner_checks
    return env, checks


def fused_rule(
    op: Operation, operand_dims: Sequence[Sequence[Dim]]
) -> tuple[list[list[Dim]], list[Check]]:
    """The dimensions of each result of an `ag.fused` and its ops' checks."""
    assert isinstance(op, ag.FusedOp)
    env, checks = region_dims(op, operand_dims)
    return [env[v] for v in op.terminator.values], checks


class PointEvaluator:
    """Emits the region's values as scalars at index tuples (see the module doc)."""

    def __init__(self, b: Builder, op: ag.FusedOp, ins: Sequence[Buffer]):
        self.b = b
        self.ins = ins
        self.memo: dict[tuple[SSAValue, Index], SSAValue] = {}
        self._zero: SSAValue | None = None

    @property
    def zero(self) -> SSAValue:
        if self._zero is None:
            self._zero = index_constant(self.b, 0)
        return self._zero

    def broadcast(self, operand: SSAValue, index: Index) -> Index:
        """`operand`'s index for its user's `index` (right-aligned, static 1s at 0)."""
        shape = ag.value_shape(operand)
        offset = len(index) - len(shape)
        return tuple(0 if d == 1 else index[offset + i] for i, d in enumerate(shape))

    def at(self, value: SSAValue, index: Index) -> SSAValue:
        """The scalar of `value` at `index`, emitting what is not emitted yet (operands
        first, without recursion: a fused chain may be deeper than Python's limit)."""
        return evaluate((value, index), self.memo, self._operand_keys, self._emit)

    def _operand_keys(self, key: tuple[SSAValue, Index]) -> list[tuple[SSAValue, Index]]:
        """The (value, index) pairs that `value` at `index` (the `key`) is computed from."""
        value, index = key
        if not isinstance(value, OpResult):
            return []
        op = value.op
        if isinstance(op, ag.ConstantOp):
            return []
        if isinstance(op, ag.DimShuffleOp):
            return [(op.input, self._dimshuffled(op, index))]
        return [(o, self.broadcast(o, index)) for o in op.operands]

    def _emit(self, key: tuple[SSAValue, Index], args: list[SSAValue]) -> SSAValue:
        """The scalar of `value` at `index` (the `key`), given its operands' scalars."""
        value, index = key
        if isinstance(value, BlockArgument):
            indices = [self.zero if isinstance(i, int) else i for i in index]
            return load(self.b, self.ins[value.index], indices)
        assert isinstance(value, OpResult)
        op = value.op
        if isinstance(op, ag.ConstantOp):
            return self._constant(op)
        if isinstance(op, ag.DimShuffleOp):
            return args[0]
        return self._scalar(op, args)

    def _constant(self, op: ag.ConstantOp) -> SSAValue:
        attr = op.value
        assert isinstance(attr, DenseIntOrFPElementsAttr)
        t = attr.get_type().get_element_type()
        return ag_scalar.constant(self.b, list(attr.get_values())[0], t)

    def _dimshuffled(self, op: ag.DimShuffleOp, index: Index) -> Index:
        """The index of `op`'s input read at `index` of its result."""
        pattern = op.pattern_list
        rank = len(ag.value_shape(op.input))
        return tuple(index[pattern.index(a)] if a in pattern else 0 for a in range(rank))

    def _scalar(self, op: Operation, args: list[SSAValue]) -> SSAValue:
        b = self.b
        if isinstance(op, ag.BinaryElementwiseOp):
            return ag_scalar.BINARY[type(op)](b, args[0], args[1])
        if isinstance(op, ag.UnaryElementwiseOp):
            return ag_scalar.UNARY[type(op)](b, args[0])
        if isinstance(op, ag.SelectOp):
            return b.insert(arith.SelectOp(*args)).result
        if isinstance(op, ag.CastOp):
            t = op.result.type
            assert isinstance(t, TensorType)
            return ag_scalar.cast(b, args[0], t.element_type)
        raise NotImplementedError(f"ag-to-loops: {op.name} cannot be evaluated in ag.fused")


def _elementwise(b: Builder, op: ag.FusedOp, dests: Sequence[Buffer], ins: Sequence[Buffer]):
    values = list(op.terminator.values)

    def body(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        evaluator = PointEvaluator(inner, op, ins)
        # every load before any store: a result may overwrite an operand (`inplace`)
        scalars = [evaluator.at(value, tuple(ivs)) for value in values]
        for dest, scalar in zip(dests, scalars, strict=True):
            store(inner, scalar, dest, ivs)

    bounds = [as_index(b, d) for d in dests[0].dims]
    if bounds and parallel_loops.enabled():
        parallel_loops.parallel_nest(b, bounds, body, elementwise_cost(op))
    else:
        loop_nest(b, bounds, body)


def elementwise_cost(op: ag.FusedOp) -> int:
    """Work units per element of an elementwise `ag.fused`: its computing ops, except
    the free ones (casts, dimshuffles, constants), at least 1."""
    free = (ag.ConstantOp, ag.DimShuffleOp, ag.CastOp)
    return max(1, sum(1 for inner in op.computing_ops if not isinstance(inner, free)))


def _reduction(b: Builder, op: ag.FusedOp, dests: Sequence[Buffer], ins: Sequence[Buffer]):
    """The kept axes around a nest over the reduced ones; each domain element is visited
    once, where the other results (domain-shaped) are stored."""
    reduction = op.reduction
    assert reduction is not None
    dest, *others = dests
    other_values = list(op.terminator.values)[1:]
    env, _ = region_dims(op, [x.dims for x in ins])
    domain = env[reduction.input]
    axes = reduction.axes_list
    combine = ag_scalar.REDUCTION_COMBINER[type(reduction)]
    reduced_bounds = [as_index(b, domain[a]) for a in axes]
    compensated = isinstance(reduction, ag.ReduceSumOp) and ag.is_float(dest.element_type)

    def element(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        def step(
            red: Builder, rivs: Sequence[SSAValue], acc: Sequence[SSAValue]
        ) -> Sequence[SSAValue]:
            kept, reduced = iter(ivs), iter(rivs)
            index = tuple(next(reduced) if a in axes else next(kept) for a in range(len(domain)))
            evaluator = PointEvaluator(red, op, ins)
            value = evaluator.at(reduction.input, index)
            for other, v in zip(others, other_values, strict=True):
                store(red, evaluator.at(v, index), other, index)
            return [combine(red, acc[0], value)]

        total = reduction_total(  # compensated: blocked, vectorised, as accurate as NumPy's
            inner, type(reduction), dest.element_type, reduced_bounds, step, not ivs, compensated
        )
        store(inner, total, dest, ivs)

    bounds = [as_index(b, d) for d in dest.dims]
    if not parallel_loops.reduction_domain(b, bounds, element):
        loop_nest(b, bounds, element)


def emit_fused(b: Builder, op: Operation, dests: Sequence[Buffer], ins: Sequence[Buffer]) -> None:
    """Computes an `ag.fused` into `dests` in one loop nest (see the module doc)."""
    assert isinstance(op, ag.FusedOp)
    if op.reduction is not None:
        _reduction(b, op, dests, ins)
    else:
        _elementwise(b, op, dests, ins)


MULTI_RESULT_SHAPE_RULES[ag.FusedOp] = fused_rule
MULTI_KERNELS[ag.FusedOp] = emit_fused
