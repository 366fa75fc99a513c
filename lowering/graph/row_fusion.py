"""`row-fusion`: a forward `A·x` and a backward `Aᵀ·g` over the same matrix, where `g`
is an elementwise function of `A·x` row by row, → one `ag.gemv_pair` that reads `A` once.

Accepts any module with `ag` ops on tensors (after `specialize`, which makes the
`ag.gemv`s) and leaves `ag` ops on tensors. The gradient step of a linear model (logistic
regression, a linear layer's loss) computes `u = gemv(α, A, x)`, then `g` from `u` by
elementwise ops, then `gemv(β, A, g, γ, r0) {transpose_a}`: two passes over `A`, whose
size makes them the cost of the step. Since `g_i` depends only on row `i`, one pass
suffices; `ag.gemv_pair` carries the chain from `u` to `g` in its region, on 0-d tensors
(one row's values), and yields `u_i` and `g_i`:

```mlir
// before
%u = ag.gemv %one, %a, %w : tensor<f32>, tensor<?x?xf32>, tensor<?xf32> -> tensor<?xf32>
%e = ag.sub %u, %y : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
%r = ag.gemv %one, %a, %e {transpose_a} : tensor<f32>, tensor<?x?xf32>, tensor<?xf32>
       -> tensor<?xf32>
// after
%u, %e, %r = ag.gemv_pair %a, %w, %one rows(%y) : tensor<?x?xf32>, tensor<?xf32>,
    tensor<f32> rows(tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
^bb0(%d: tensor<f32>, %yi: tensor<f32>):
  %ei = ag.sub %d, %yi : tensor<f32>, tensor<f32> -> tensor<f32>
  ag.yield %d, %ei : tensor<f32>, tensor<f32>
}
```

The chain from `u` to `g` may hold the elementwise ops of `ag.ROW_OPS` on vectors of
`A`'s row count; its other inputs (values not computed from `u`) must be 0-d, vectors of
static length 1 or vectors of the row count, and become the op's `rows` (constants are
cloned into the region instead). Ops computing those inputs after `u` are moved before
the fused op (they do not depend on `u`); chain ops with other uses stay where they are,
the rest become dead and are erased. A `select` whose condition is a constant is read
as its chosen operand inside the region.

Two of canonicalize's folds run first (`SimplifySelect`, `FoldDim`), because a
gradient's graph hides the row-wise independence behind them: `select` with a constant
condition → the chosen operand, and `dim` of an elementwise op's result (or of a gemv's)
→ `dim` of the operand that carries that length (Theano's grad of `mean` divides by
`Shape_i` of the loss, which would otherwise make `g` depend on the whole of `u`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType
from xdsl.ir import Block, Operation, OpResult, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import is_side_effect_free

from arignote.dialects import ag
from arignote.lowering.graph.canonicalize import FoldDim, SimplifySelect
from arignote.lowering.graph.stable_forms import defining, is_one
from arignote.lowering.graph_walk import evaluate
from arignote.lowering.rewriting import DispatchingApplier

ELEMENTWISE = (ag.BinaryElementwiseOp, ag.UnaryElementwiseOp, ag.SelectOp, ag.CastOp)
"""The op families a row chain may hold (besides cloned constants)."""


# --- folds ---------------------------------------------------------------------------


def splat_value(value: SSAValue) -> int | float | None:
    """The single value of an `ag.constant` whose elements are all equal, else None."""
    op = defining(value, ag.ConstantOp)
    if not isinstance(op, ag.ConstantOp):
        return None
    attr = op.value
    assert isinstance(attr, DenseIntOrFPElementsAttr)
    values = list(attr.get_values())
    if not values or any(v != values[0] for v in values):
        return None
    return values[0]


# --- the chain from u to g -------------------------------------------------------------


def depends_on(value: SSAValue, source: OpResult, memo: dict[SSAValue, bool]) -> bool:
    """Whether `value` is computed from `source` by ops of `source`'s block (iterative:
    graphs may be deeper than Python's recursion limit)."""
    block = source.op.parent_block()
    stack: list[tuple[SSAValue, bool]] = [(value, False)]
    while stack:
        current, expanded = stack.pop()
        if current in memo:
            continue
        if current is source:
            memo[current] = True
            continue
        if not isinstance(current, OpResult) or current.op.parent_block() is not block:
            memo[current] = False
            continue
        operands = current.op.operands
        if expanded:
            memo[current] = any(memo[o] for o in operands)
            continue
        stack.append((current, True))
        stack.extend((o, False) for o in operands if o not in memo)
    return memo[value]


@dataclass
class _Chain:
    """The region under construction: the region value of each graph value, the row
    operands, and which values depend on `u` (the forward gemv's result)."""

    forward: ag.GemvOp
    block: Block
    rows: list[SSAValue]
    mapping: dict[SSAValue, SSAValue]
    depends: dict[SSAValue, bool]

    def depends_on_u(self, value: SSAValue) -> bool:
        return depends_on(value, self.forward.result, self.depends)


class _NotFusable(Exception):
    """The chain holds something `ag.gemv_pair` cannot compute row by row."""


def _scalar_type(value: SSAValue) -> TensorType:
    return TensorType(ag.tensor_type(value).element_type, [])


def _append(chain: _Chain, op: Operation) -> SSAValue:
    chain.block.add_op(op)
    return op.results[0]


def _constant(chain: _Chain, value: SSAValue) -> SSAValue | None:
    """A 0-d copy, in the region, of a constant `value` with equal elements."""
    splat = splat_value(value)
    if splat is None:
        return None
    attr = DenseIntOrFPElementsAttr.from_list(_scalar_type(value), [splat])
    return _append(chain, ag.ConstantOp(attr))


def _input(chain: _Chain, value: SSAValue, row_count: int) -> SSAValue:
    """The region value of an input not computed from `u`: a constant, or a row operand."""
    constant = _constant(chain, value)
    if constant is not None:
        return constant
    shape = ag.tensor_type(value).get_shape()
    if len(shape) > 1 or (len(shape) == 1 and shape[0] not in (1, row_count, ag.DYNAMIC)):
        raise _NotFusable(f"input of shape {shape} is not row-wise")
    chain.rows.append(value)
    return chain.block.insert_arg(_scalar_type(value), len(chain.block.args))


def _region_value(chain: _Chain, value: SSAValue, row_count: int) -> SSAValue:
    """The region value computing one row of `value` (cloning the chain ops up to `u`,
    operands first, by `graph_walk.evaluate`: a chain may hold thousands of ops)."""

    def needs(v: SSAValue) -> list[SSAValue]:
        return _row_operands(v) if chain.depends_on_u(v) else []

    def compute(v: SSAValue, operands: list[SSAValue]) -> SSAValue:
        if not chain.depends_on_u(v):
            return _input(chain, v, row_count)
        return _clone_row_op(chain, v, operands)

    return evaluate(value, chain.mapping, needs, compute)


def _row_operands(value: SSAValue) -> list[SSAValue]:
    """The values whose region values make `value`'s (a chain op's result)."""
    assert isinstance(value, OpResult)
    op = value.op
    if not isinstance(op, ELEMENTWISE) or ag.tensor_type(value).get_num_dims() != 1:
        raise _NotFusable(f"{op.name} is not a row-wise elementwise op")
    if isinstance(op, ag.SelectOp) and (cond := splat_value(op.cond)) is not None:
        return [op.true_value if cond else op.false_value]
    return list(op.operands)


def _clone_row_op(chain: _Chain, value: SSAValue, operands: list[SSAValue]) -> SSAValue:
    """`value`'s op on one row, given the region values of its `_row_operands`."""
    assert isinstance(value, OpResult)
    op = value.op
    if isinstance(op, ag.SelectOp) and splat_value(op.cond) is not None:
        return operands[0]  # the chosen operand
    clone = type(op).create(
        operands=operands,
        result_types=[_scalar_type(value)],
        properties=dict(op.properties),
        attributes=dict(op.attributes),
    )
    return _append(chain, clone)


def _forward_value(chain: _Chain, forward: ag.GemvOp, d: SSAValue, row_count: int) -> SSAValue:
    """`u_i = alpha * d_i [+ beta * u0_i]` in the region."""
    u = d
    if not is_one(forward.alpha):
        alpha = _region_value(chain, forward.alpha, row_count)
        u = _append(chain, ag.MulOp(alpha, u))
    if forward.acc:
        beta = _region_value(chain, forward.acc[0], row_count)
        initial = _region_value(chain, forward.acc[1], row_count)
        scaled = _append(chain, ag.MulOp(beta, initial))
        u = _append(chain, ag.AddOp(u, scaled))
    return u


def build_region(
    forward: ag.GemvOp, g: SSAValue, row_count: int
) -> tuple[Region, list[SSAValue]] | None:
    """The region of `ag.gemv_pair` computing `u_i` and `g_i` and its row operands, or
    None when `g` is not an elementwise function of `u` row by row."""
    element = ag.tensor_type(forward.result).element_type
    block = Block(arg_types=[TensorType(element, [])])
    block.args[0].name_hint = "d"
    chain = _Chain(forward, block, [], {}, {})
    if not chain.depends_on_u(g):
        return None
    try:
        chain.mapping[forward.result] = _forward_value(chain, forward, block.args[0], row_count)
        g_i = _region_value(chain, g, row_count)
    except _NotFusable:
        return None
    block.add_op(ag.YieldOp([chain.mapping[forward.result], g_i]))
    return Region(block), chain.rows


# --- the rewrite ---------------------------------------------------------------------


def _ancestors_after(values: Iterable[SSAValue], anchor: Operation) -> set[Operation]:
    """The ops of `anchor`'s block after `anchor` that `values` are computed from."""
    block = anchor.parent_block()
    found: set[Operation] = set()
    stack = list(values)
    while stack:
        value = stack.pop()
        if not isinstance(value, OpResult):
            continue
        op = value.op
        if op in found or op.parent_block() is not block or not anchor.is_before_in_block(op):
            continue
        found.add(op)
        stack.extend(op.operands)
    return found


def _hoist_before(anchor: Operation, operands: Sequence[SSAValue]) -> None:
    """Move the ops computing `operands` that come after `anchor` to just before it,
    keeping their order (none of them depends on `anchor`)."""
    moving = _ancestors_after(operands, anchor)
    block = anchor.parent_block()
    assert block is not None
    for op in [op for op in block.ops if op in moving]:
        op.detach()
        block.insert_op_before(op, anchor)


def _erase_dead(block: Block) -> None:
    """Erase the side-effect-free ops without uses (the chain ops only `g` needed);
    going backwards, an op's operands become dead after the op."""
    for op in reversed(list(block.ops)):
        if op.results and all(not r.uses for r in op.results) and is_side_effect_free(op):
            Rewriter.erase_op(op)


def _forward_candidates(backward: ag.GemvOp) -> list[ag.GemvOp]:
    """The untransposed gemvs of the backward gemv's matrix in its block, before it."""
    candidates: list[ag.GemvOp] = []
    for use in backward.a.uses:
        op = use.operation
        if (
            isinstance(op, ag.GemvOp)
            and op is not backward
            and op.transpose_a is None
            and use.index == 1
            and op.parent_block() is backward.parent_block()
            and op.is_before_in_block(backward)
        ):
            candidates.append(op)
    return candidates


def fuse(forward: ag.GemvOp, backward: ag.GemvOp) -> ag.GemvPairOp | None:
    """Replace `forward` and `backward` by one `ag.gemv_pair`, if `backward`'s vector is
    an elementwise function of `forward`'s result row by row."""
    row_count = ag.tensor_type(forward.a).get_shape()[0]
    built = build_region(forward, backward.x, row_count)
    if built is None:
        return None
    region, rows = built
    others = [backward.alpha, *backward.acc]
    memo: dict[SSAValue, bool] = {}
    if any(depends_on(v, forward.result, memo) for v in others):
        return None
    beta, r0 = (backward.acc[0], backward.acc[1]) if backward.acc else (None, None)
    pair = ag.GemvPairOp(forward.a, forward.x, backward.alpha, rows, region, beta, r0)
    for name, attr in forward.attributes.items():
        pair.attributes.setdefault(name, attr)
    _hoist_before(forward, [*rows, *others])
    Rewriter.insert_op(pair, InsertPoint.before(forward))
    g = backward.x
    forward.result.replace_all_uses_with(pair.u)
    g.replace_uses_with_if(pair.g, lambda use: use.operation is not backward)
    backward.result.replace_all_uses_with(pair.r)
    block = forward.parent_block()
    Rewriter.erase_op(backward)
    Rewriter.erase_op(forward)
    assert block is not None
    _erase_dead(block)
    return pair


def fuse_in(module: ModuleOp) -> None:
    """Fuse each transposed float gemv with an untransposed one of the same matrix that
    computes its vector (the first that qualifies)."""
    backwards = [
        op
        for op in module.walk()
        if isinstance(op, ag.GemvOp)
        and op.transpose_a is not None
        and ag.is_float(ag.tensor_type(op.a).element_type)
    ]
    for backward in backwards:
        if backward.parent is None:  # erased as dead by an earlier fusion
            continue
        for forward in _forward_candidates(backward):
            if fuse(forward, backward) is not None:
                break


FOLD_PATTERNS: tuple[RewritePattern, ...] = (SimplifySelect(), FoldDim())
"""canonicalize's folds that row fusion needs even when canonicalize is excluded: the
gradient's `select(true, 1, s)` and `dim`s of u would otherwise make g depend on all of u."""


@dataclass(frozen=True)
class RowFusionPass(ModulePass):
    """Fuses gemv(A, x) and a transposed gemv(A, g(u)) into one pass (ag.gemv_pair).

    The elementwise chain from `u` to `g` moves into the `ag.gemv_pair`'s region."""

    name = "row-fusion"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(DispatchingApplier(FOLD_PATTERNS)).rewrite_module(op)
        fuse_in(op)
