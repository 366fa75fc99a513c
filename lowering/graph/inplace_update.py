"""`inplace-update`: compute the new value of a shared variable over its old value.

Accepts and leaves `ag` on tensors. It acts on a `func.func` whose `ag.updates`
attribute (set by `arignote.function`, see `dialects/ag/updates.py`) pairs result `r`
with argument `a`: `r` is the new value of the shared variable passed as `a`. For each
pair, when the op producing `r` (its *producer*) can overwrite `a`, the pass

- moves the producer after the last other op that reads `a` (Theano's destroy handler
  orders the destroyer after every other client of the destroyed value), when it can:
  an op that uses a result of the producer must stay after it;
- adds `ag.destroy_map` to the producer: its result over operand `a` (shown as
  `Gemm{inplace}`... in `f.maker.fgraph`, Theano's name);
- adds `(r, a)` to the function's `ag.inplace_results`: the caller may pass `a`'s array
  as the buffer of `r` (the native runtime does when the shapes match and the array is
  contiguous, writable and aliases no other argument; otherwise `r` gets a fresh
  buffer, and the same code computes it there).

The producer can overwrite `a` when it is in the function body and

- it reads `a` only where it writes the same element: an elementwise op (or
  elementwise `ag.fused`, no `dimshuffle` of `a` in its region) with `a` of the
  result's type; or the accumulated operand of `ag.gemm`/`ag.gemv` (`C` of
  `alpha·A·B + beta·C`: BLAS scales and accumulates in place) or of `ag.gemv_pair`'s
  third result;
- none of its other operands is `a` or a value that may share `a`'s memory (a
  `dimshuffle`, `subtensor` or `reshape` of it, transitively);
- `r` is the first result returning the value (a value returned twice is computed into
  the first buffer), and no such view of `a` is returned (a returned value is copied into
  its output buffer at the end of the function; `a` itself is copied first).

Run before `inplace`, whose last-user analysis sees the moved producers.

```mlir
// before: W's new value is computed into a fresh buffer
func.func @f(%x: tensor<?x?xf64>, %d: tensor<?x?xf64>, %w: tensor<?x?xf64>)
    -> tensor<?x?xf64> attributes {ag.updates = array<i64: 0, 2>} {
  %lr = ag.constant dense<-1.0e-01> : tensor<f64>
  %one = ag.constant dense<1.0> : tensor<f64>
  %n = ag.gemm %lr, %x, %d, %one, %w {transpose_a} : ...
  func.return %n : tensor<?x?xf64>
}
// after: BLAS accumulates into W's buffer
func.func @f(...) -> tensor<?x?xf64>
    attributes {ag.inplace_results = array<i64: 0, 2>, ag.updates = array<i64: 0, 2>} {
  %n = ag.gemm %lr, %x, %d, %one, %w {ag.destroy_map = array<i64: 0, 4>, transpose_a} : ...
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
from arignote.lowering.graph.inplace import ELEMENTWISE

VIEW_OPS: tuple[type[Operation], ...] = (ag.DimShuffleOp, ag.SubtensorOp, ag.ReshapeOp)
"""Ops whose result may share its operand's memory (in `ag-to-loops` or a later one)."""


def _top_level(op: Operation, block: Block) -> Operation | None:
    """The op of `block` that is `op` or holds it in a region."""
    current: Operation | None = op
    while current is not None and current.parent_block() is not block:
        current = current.parent_op()
    return current


def aliases_of(arg: SSAValue) -> set[SSAValue]:
    """`arg` and the values that may share its memory (views of it, transitively)."""
    found = {arg}
    pending = [arg]
    while pending:
        value = pending.pop()
        for use in value.uses:
            if isinstance(use.operation, VIEW_OPS):
                for result in use.operation.results:
                    if result not in found:
                        found.add(result)
                        pending.append(result)
    return found


def _accumulated_operand(op: Operation, r: int) -> int | None:
    """The operand that BLAS-shaped `op` accumulates result `r` onto, if any."""
    if isinstance(op, ag.GemmOp | ag.GemvOp) and op.acc and r == 0:
        return ag.INITIAL_OPERAND
    if isinstance(op, ag.GemvPairOp) and op.acc and r == 2:
        return ag.INITIAL_OPERAND
    return None


def _pointwise(op: Operation, k: int) -> bool:
    """Whether elementwise `op` reads operand `k` only at the index it writes."""
    if isinstance(op, ELEMENTWISE):
        return True
    if isinstance(op, ag.FusedOp) and op.reduction is None:
        arg = op.block.args[k]
        return all(not isinstance(use.operation, ag.DimShuffleOp) for use in arg.uses)
    return False


def destroyed_operand(op: Operation, r: int, arg: SSAValue, aliases: set[SSAValue]) -> int | None:
    """The operand index over which `op` can compute result `r` in `arg`'s buffer (see
    the module doc), or None."""
    result = op.results[r]
    positions = [k for k, o in enumerate(op.operands) if o in aliases]
    if not positions or any(op.operands[k] is not arg for k in positions):
        return None
    accumulated = _accumulated_operand(op, r)
    if accumulated is not None:
        return accumulated if positions == [accumulated] else None
    if arg.type != result.type or not all(_pointwise(op, k) for k in positions):
        return None
    return positions[0]


def _readers(aliases: set[SSAValue], block: Block) -> set[Operation]:
    """The ops of `block` that read any of `aliases` (directly or in a region)."""
    readers: set[Operation] = set()
    for value in aliases:
        for use in value.uses:
            top = _top_level(use.operation, block)
            if top is not None:
                readers.add(top)
    return readers


def _order_after(producer: Operation, others: set[Operation], block: Block) -> bool:
    """Moves `producer` right after the last of `others` that follows it, unless a user
    of its results comes before that op; whether `producer` now follows all `others`."""
    position = {op: i for i, op in enumerate(block.ops)}
    last = max((op for op in others if op is not producer), key=position.get, default=None)
    if last is None or position[last] < position[producer]:
        return True
    for result in producer.results:
        for use in result.uses:
            user = _top_level(use.operation, block)
            if user is not None and position[user] <= position[last]:
                return False
    producer.detach()
    block.insert_op_after(producer, last)
    return True


def _try_pair(f: func.FuncOp, r: int, a: int) -> bool:
    """Make result `r` of `f` computed over argument `a` when it can be (module doc)."""
    block = f.body.block
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    value, arg = ret.arguments[r], block.args[a]
    if not isinstance(value, OpResult) or list(ret.arguments).index(value) != r:
        return False
    producer = value.op
    if producer.parent_block() is not block:
        return False
    aliases = aliases_of(arg)
    if any(v in aliases for v in ret.arguments if not isinstance(v, BlockArgument)):
        return False
    k = destroyed_operand(producer, value.index, arg, aliases)
    pairs = ag.destroy_map(producer)
    if k is None or value.index in pairs or k in pairs.values():
        return False
    if not _order_after(producer, _readers(aliases, block) - {ret}, block):
        return False
    pairs[value.index] = k
    ag.set_destroy_map(producer, [v for r in sorted(pairs) for v in (r, pairs[r])])
    return True


def mark_function(f: func.FuncOp) -> None:
    """Sets `ag.inplace_results` (and the producers' destroy maps) of `f`."""
    updates = ag.result_pairs(f, ag.UPDATES_ATTRIBUTE)
    if not updates or f.is_declaration or len(f.body.blocks) != 1:
        return
    done = ag.result_pairs(f, ag.INPLACE_RESULTS_ATTRIBUTE)
    for r, a in updates.items():
        if r not in done and _try_pair(f, r, a):
            done[r] = a
    ag.set_result_pairs(f, ag.INPLACE_RESULTS_ATTRIBUTE, done)


@dataclass(frozen=True)
class InplaceUpdatePass(ModulePass):
    """Computes updates of shared variables over their old values (`ag.inplace_results`)."""

    name = "inplace-update"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.ops:
            if isinstance(f, func.FuncOp):
                mark_function(f)
