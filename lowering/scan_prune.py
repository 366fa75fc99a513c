"""`scan-prune`: remove what an `ag.scan` computes for nobody.

- A result with no use whose output is not fed back is dropped, with its `ag.yield`
  operand (a reverse scan built by `grad` computes the gradient of every sequence;
  usually only some are wanted).
- Body ops whose results nothing uses any more are erased (the body's ops are pure).
- A non-sequence the body no longer reads is dropped, with its block argument (and the
  outer expression computing it becomes dead code).

The op is rebuilt with the remaining results; the uses of those are redirected.

```mlir
// before: %g (output #1) is unused
%h, %g = ag.scan ... non_sequences(%w, %wt : ...) ... {
^bb0(%x: ..., %hp: ..., %ww: ..., %wwt: ...):
  %a = ag.dot %hp, %ww ...
  %b = ag.dot %a, %wwt ...
  ag.yield %a, %b : ...
}
// after
%h = ag.scan ... non_sequences(%w : ...) ... {
^bb0(%x: ..., %hp: ..., %ww: ...):
  %a = ag.dot %hp, %ww ...
  ag.yield %a : ...
}
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, i64
from xdsl.ir import Block
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from arignote.dialects import ag


def _erase_dead_body_ops(block: Block, rewriter: PatternRewriter) -> bool:
    """Erase the body's ops whose results have no use (last to first)."""
    changed = False
    for body_op in reversed(list(block.ops)):
        if isinstance(body_op, ag.YieldOp):
            continue
        if all(not r.uses for r in body_op.results):
            rewriter.erase(body_op)
            changed = True
    return changed


def _dead_outputs(op: ag.ScanOp) -> list[int]:
    taps = op.output_tap_lists
    return [i for i, r in enumerate(op.outputs) if not r.uses and not taps[i]]


def _dead_non_sequences(op: ag.ScanOp) -> list[int]:
    args = op.body.block.args
    first = len(args) - len(op.non_sequences)
    return [k for k in range(len(op.non_sequences)) if not args[first + k].uses]


class PruneScan(RewritePattern):
    """Drops unused outputs (not fed back), dead body ops and unread non-sequences."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.ScanOp, rewriter: PatternRewriter, /):
        dead = _dead_outputs(op)
        block = op.body.block
        if dead:
            kept_values = [v for i, v in enumerate(op.yield_op.values) if i not in dead]
            rewriter.replace(op.yield_op, ag.YieldOp(kept_values))
        changed = _erase_dead_body_ops(block, rewriter)
        unread = _dead_non_sequences(op)
        if not (dead or changed or unread):
            return
        rewriter.replace(op, [new := _rebuilt(op, dead, unread)], _results(op, new, dead))


def _results(old: ag.ScanOp, new: ag.ScanOp, dead: list[int]) -> list:
    kept = iter(new.results)
    return [None if i in dead else next(kept) for i in range(len(old.results))]


def _rebuilt(op: ag.ScanOp, dead: list[int], unread: list[int]) -> ag.ScanOp:
    """A copy of `op` without the outputs `dead` and the non-sequences `unread`, taking
    over its body."""
    block = op.body.block
    first = len(block.args) - len(op.non_sequences)
    for k in sorted(unread, reverse=True):
        block.erase_arg(block.args[first + k])
    body = op.body.detach_block(block)
    kept = [i for i in range(len(op.outputs)) if i not in dead]
    new = ag.ScanOp(
        op.n_steps,
        list(op.sequences),
        list(op.initials),
        [v for k, v in enumerate(op.non_sequences) if k not in unread],
        op.sequence_tap_lists,
        [op.output_tap_lists[i] for i in kept],
        [op.outputs[i].type for i in kept],
        body,
    )
    last = [kept.index(i) for i in sorted(op.last_only_outputs) if i in kept]
    if last:
        new.last_only = DenseArrayBase.from_list(i64, last)
    new.attributes.update(op.attributes)
    return new


@dataclass(frozen=True)
class ScanPrunePass(ModulePass):
    """Removes the unused outputs, dead body ops and unread non-sequences of scans."""

    name = "scan-prune"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(PruneScan()).rewrite_module(op)
