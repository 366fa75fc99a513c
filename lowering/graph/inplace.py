"""`inplace`: let elementwise ops write their result over a dead operand's buffer.

Accepts and leaves `ag` on tensors; it only adds a `destroy_map` to ops (Theano's name):
the `ag.destroy_map` attribute, an `i64` array of pairs `[r, k, ...]` meaning "result
`r` is computed into the buffer of operand `k`, which the op destroys". `ag-to-loops`
honours it (no allocation for the result); the reference interpreter ignores it (the
operand is dead, so nobody can tell). An op gets the pair `(r, k)` when

- it is elementwise (`ag.fused` in the elementwise form, or an unfused binary, unary,
  `select` or `cast`) or an `ag.allreduce`, and reads operand `k` at the index it
  writes (the operand has the result's type; in a fused region, no `dimshuffle` reads
  it or a value computed from it: a transposed read would see elements the op already
  overwrote);
- operand `k` is computed by an op of the same function body (never a function
  argument: the caller's arrays are never written) and this op is its last user (no
  later op, nested region or `func.return` reads it, nor any of its views: a value
  with a `view_map` (`ag.view_map`, a basic `ag.subtensor`) shares its source's buffer,
  so its uses count as uses of the source);
- operand `k` is no view (its buffer belongs to its source, maybe an argument) and
  no other operand of the op is a view of it or the same value (Theano's inplace
  optimizer refuses an input aliased by another input of the node);
- result `r` is not returned (a returned result is computed straight into the caller's
  output buffer anyway).

```mlir
// before
%e = ag.exp %x : tensor<?xf32>
%t = ag.tanh %e : tensor<?xf32>
%s = ag.reduce_sum %t {axes = array<i64: 0>} : tensor<?xf32> -> tensor<f32>
// after: tanh overwrites exp's buffer
%t = ag.tanh %e {ag.destroy_map = array<i64: 0, 0>} : tensor<?xf32>
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass

from arignote.dialects import ag

ELEMENTWISE: tuple[type[Operation], ...] = (
    ag.BinaryElementwiseOp,
    ag.UnaryElementwiseOp,
    ag.SelectOp,
    ag.CastOp,
)

POINTWISE: tuple[type[Operation], ...] = (*ELEMENTWISE, ag.AllreduceOp)
"""The unfused ops that may write over an operand they read at the index they write:
the elementwise ones and `ag.allreduce` (which reduces its result buffer in place)."""


def _top_level(op: Operation, block: Block) -> Operation | None:
    """The op of `block` that is `op` or holds it in a region."""
    current: Operation | None = op
    while current is not None and current.parent_block() is not block:
        current = current.parent_op()
    return current


def last_users(block: Block) -> dict[SSAValue, Operation]:
    """For each value used in `block`, the last op of `block` that uses it (directly or
    in a nested region) or uses a view of it (`ag.view_map`)."""
    position = {op: i for i, op in enumerate(block.ops)}
    last: dict[SSAValue, Operation] = {}
    for op in block.ops:
        for value in op.results:
            for use in value.uses:
                user = _top_level(use.operation, block)
                if user is None:
                    continue
                if value not in last or position[user] > position[last[value]]:
                    last[value] = user
    for op in reversed(list(block.ops)):  # a view's views extend it before it extends its source
        for r, k in ag.view_map(op).items():
            view, source = op.results[r], op.operands[k]
            if view not in last:
                continue
            if source not in last or position[last[view]] > position[last[source]]:
                last[source] = last[view]
    return last


def view_roots(block: Block) -> dict[SSAValue, SSAValue]:
    """Each view (`ag.view_map`) defined in `block` → the value whose buffer it shares."""
    roots: dict[SSAValue, SSAValue] = {}
    for op in block.ops:
        for r, k in ag.view_map(op).items():
            source = op.operands[k]
            roots[op.results[r]] = roots.get(source, source)
    return roots


def _reads_pointwise(op: Operation, k: int) -> bool:
    """Whether `op` reads operand `k` only at the index it writes (given the types match)."""
    if isinstance(op, POINTWISE):
        return True
    assert isinstance(op, ag.FusedOp)
    # every value of the region computed from the operand: a dimshuffle of any of them
    # reads the operand at other indices than the op writes
    pending: list[SSAValue] = [op.block.args[k]]
    seen: set[SSAValue] = set()
    while pending:
        for use in pending.pop().uses:
            if isinstance(use.operation, ag.DimShuffleOp):
                return False
            fresh = [r for r in use.operation.results if r not in seen]
            seen.update(fresh)
            pending += fresh
    return True


def _destroyable(
    op: Operation, k: int, last: dict[SSAValue, Operation], roots: dict[SSAValue, SSAValue]
) -> bool:
    value = op.operands[k]
    if isinstance(value, BlockArgument) or not isinstance(value, OpResult) or value in roots:
        return False
    others = (o for j, o in enumerate(op.operands) if j != k)
    return last.get(value) is op and all(roots.get(o, o) is not value for o in others)


def destroy_pairs(
    op: Operation, last: dict[SSAValue, Operation], roots: dict[SSAValue, SSAValue] | None = None
) -> list[int]:
    """The `[r, k, ...]` pairs `op` may take (see the module doc); `roots` maps the
    views of the block to their sources (`view_roots`)."""
    roots = {} if roots is None else roots
    if isinstance(op, ag.FusedOp):
        if op.reduction is not None:
            return []
    elif not isinstance(op, POINTWISE):
        return []
    existing = ag.destroy_map(op)  # e.g. the `inplace-update` pass's
    pairs: list[int] = [v for r in sorted(existing) for v in (r, existing[r])]
    taken: set[SSAValue] = {op.operands[k] for k in existing.values()}
    for r, result in enumerate(op.results):
        if r in existing or any(isinstance(use.operation, func.ReturnOp) for use in result.uses):
            continue
        for k, operand in enumerate(op.operands):
            if operand in taken or operand.type != result.type:
                continue
            if _destroyable(op, k, last, roots) and _reads_pointwise(op, k):
                pairs += [r, k]
                taken.add(operand)
                break
    return pairs


def mark_block(block: Block) -> None:
    """Adds `ag.destroy_map` to the ops of `block` that can write in place."""
    last = last_users(block)
    roots = view_roots(block)
    for op in block.ops:
        pairs = destroy_pairs(op, last, roots)
        if pairs:
            ag.set_destroy_map(op, pairs)


@dataclass(frozen=True)
class InplacePass(ModulePass):
    """Marks elementwise ops that may overwrite a dead operand (`ag.destroy_map`)."""

    name = "inplace"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.ops:
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                for block in f.body.blocks:
                    mark_block(block)
