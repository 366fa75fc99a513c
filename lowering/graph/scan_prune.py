"""`scan-prune`: remove what an `ag.scan` computes for nobody.

- A result with no use whose output is not fed back is dropped, with its `ag.yield`
  operand (a reverse scan built by `grad` computes the gradient of every sequence;
  usually only some are wanted). So is a fed-back output with no use when no other
  remaining output depends on its earlier values (with its initial value and the body
  arguments of its taps): the accumulator of a gradient nobody asked for.
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

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, SSAValue
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


def _depending_on(block: Block, sources: Sequence[SSAValue]) -> set[SSAValue]:
    """The values of `block` computed from `sources` (those included)."""
    found = set(sources)
    for body_op in block.ops:
        if any(o in found for o in body_op.operands):
            found.update(body_op.results)
    return found


def _dead_outputs(op: ag.ScanOp) -> list[int]:
    """Unused outputs that are not fed back, and unused fed-back outputs whose earlier
    values no other remaining output depends on."""
    taps = op.output_tap_lists
    dead = {i for i, r in enumerate(op.outputs) if not r.uses and not taps[i]}
    tap_args = op.output_tap_arguments()
    yielded = op.yield_op.values
    changed = True
    while changed:
        changed = False
        for i, args in tap_args.items():
            if i in dead or op.outputs[i].uses:
                continue
            reached = _depending_on(op.body.block, args)
            others = [v for j, v in enumerate(yielded) if j != i and j not in dead]
            if not any(v in reached for v in others):
                dead.add(i)
                changed = True
    return sorted(dead)


def _dead_non_sequences(op: ag.ScanOp) -> list[int]:
    args = op.body.block.args
    first = len(args) - len(op.non_sequences)
    return [k for k in range(len(op.non_sequences)) if not args[first + k].uses]


class PruneScan(RewritePattern):
    """Drops unused outputs (not fed back), dead body ops and unread non-sequences."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.ScanOp, rewriter: PatternRewriter, /):
        if op.has_until:  # a repeat-until loop is left whole
            return
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
    dropped_taps = [a for i, args in op.output_tap_arguments().items() if i in dead for a in args]
    for arg in [*(block.args[first + k] for k in unread), *dropped_taps]:
        block.erase_arg(arg)
    body = op.body.detach_block(block)
    kept = [i for i in range(len(op.outputs)) if i not in dead]
    recurrent = op.recurrent_outputs
    new = ag.ScanOp(
        op.n_steps,
        list(op.sequences),
        [v for j, v in enumerate(op.initials) if recurrent[j] not in dead],
        [v for k, v in enumerate(op.non_sequences) if k not in unread],
        op.sequence_tap_lists,
        [op.output_tap_lists[i] for i in kept],
        [op.outputs[i].type for i in kept],
        body,
    )
    new.take_output_marks(op, kept)
    return new


@dataclass(frozen=True)
class ScanPrunePass(ModulePass):
    """Removes the unused outputs, dead body ops and unread non-sequences of scans."""

    name = "scan-prune"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(PruneScan()).rewrite_module(op)
