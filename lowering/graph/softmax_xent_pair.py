"""`softmax-xent-pair`: a softmax cross-entropy and its gradient over the same logits →
one `ag.softmax_xent_pair`, so that a training step reads each row of logits once and
computes each exponential once.

Accepts any module with `ag` ops on tensors (after `stabilize`, which makes the
`ag.softmax_xent`/`ag.softmax_xent_grad` of a cross-entropy, and `cse`, which merges
the copies of the logits the forward and backward graphs compute) and leaves `ag` ops on
tensors. An `ag.softmax_xent_grad %g, %x, %y` and an `ag.softmax_xent %x, %y` of the
same block become one `ag.softmax_xent_pair %g, %x, %y` at the forward op's place; the
ops computing `%g` that come after the forward op are moved before it, which needs
them not to depend on the forward result (the gradient of a mean or a sum does not: it
depends on the row count only). Otherwise the two ops stay apart.

```mlir
// before
%nll = ag.softmax_xent %x, %y : tensor<?x?xf32>, tensor<?xi64> -> tensor<?xf32>
%dx = ag.softmax_xent_grad %g, %x, %y : tensor<?xf32>, tensor<?x?xf32>, tensor<?xi64>
        -> tensor<?x?xf32>
// after
%nll, %dx = ag.softmax_xent_pair %g, %x, %y : tensor<?xf32>, tensor<?x?xf32>,
    tensor<?xi64> -> (tensor<?xf32>, tensor<?x?xf32>)
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, OpResult
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from arignote.dialects import ag


def _forward_of(grad: ag.SoftmaxXentGradOp) -> ag.SoftmaxXentOp | None:
    """An `ag.softmax_xent` of the same `x` and `y` in the same block, if any."""
    for use in grad.x.uses:
        op = use.operation
        if isinstance(op, ag.SoftmaxXentOp) and op.y == grad.y and op.parent is grad.parent:
            return op
    return None


def _ops_to_hoist(
    grad: ag.SoftmaxXentGradOp, forward: ag.SoftmaxXentOp, order: dict[Operation, int]
) -> list[Operation] | None:
    """The ops after `forward` that compute `grad`'s `dnll`, in block order; None when
    one of them needs `forward`'s result (or has regions, which are not moved)."""
    start = order[forward]
    needed: set[Operation] = set()
    stack = [grad.dnll]
    while stack:
        value = stack.pop()
        if not isinstance(value, OpResult):
            continue
        op = value.op
        if op is forward:
            return None
        if op in needed or order.get(op, -1) <= start:
            continue
        if op.regions:
            return None
        needed.add(op)
        stack.extend(op.operands)
    return sorted(needed, key=order.__getitem__)


def _pair_in_block(block: Block) -> None:
    for grad in [op for op in block.ops if isinstance(op, ag.SoftmaxXentGradOp)]:
        forward = _forward_of(grad)
        if forward is None:
            continue
        order = {op: k for k, op in enumerate(block.ops)}
        if order[grad] < order[forward]:
            continue
        hoisted = _ops_to_hoist(grad, forward, order)
        if hoisted is None:
            continue
        for op in hoisted:
            op.detach()
            Rewriter.insert_op(op, InsertPoint.before(forward))
        pair = ag.SoftmaxXentPairOp(grad.dnll, grad.x, grad.y)
        Rewriter.insert_op(pair, InsertPoint.before(forward))
        forward.result.replace_all_uses_with(pair.nll)
        grad.result.replace_all_uses_with(pair.dx)
        Rewriter.erase_op(forward)
        Rewriter.erase_op(grad)


@dataclass(frozen=True)
class SoftmaxXentPairPass(ModulePass):
    """Merges a softmax cross-entropy and its gradient into one `ag.softmax_xent_pair`."""

    name = "softmax-xent-pair"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        blocks = [
            block
            for inner in op.walk()
            for region in inner.regions
            for block in region.blocks
            if any(isinstance(o, ag.SoftmaxXentGradOp) for o in block.ops)
        ]
        for block in blocks:
            _pair_in_block(block)
