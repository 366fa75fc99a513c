"""`scan-last-step`: keep only the last step of `ag.scan` outputs that only it is read of.

An output whose every use (if any) is an `ag.subtensor` reading its last row — first
entry the index `-1` or the slice `-1:` — is marked in the op's `last_only` property. Its result
then holds `min(n_steps, 1)` rows instead of `n_steps`, so the uses compute the same
values unchanged, and `ag-to-loops` keeps a ring of `L + 1` rows for it instead of a
buffer over all the steps (an RNN's `h[-1]`, the gradient accumulators of a reverse
scan).

```mlir
// before
%hs = ag.scan ... attributes {sequence_taps = ..., output_taps = [array<i64: -1>]} -> ...
%last = ag.subtensor %hs {kinds = array<i64: 1, 0>, starts = array<i64: -1, ...>, ...}
// after
%hs = ag.scan ... attributes {last_only = array<i64: 0>, ...} -> ...
%last = ag.subtensor %hs {...}
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from arignote.dialects import ag


def _reads_last_row(user: Operation, value: SSAValue) -> bool:
    """Whether `user` is a subtensor of `value` whose first entry is `-1` or `-1:`."""
    if not isinstance(user, ag.SubtensorOp) or user.operands[0] is not value:
        return False
    kind, start, stop, step = user.entries()[0]
    if kind == ag.INDEX:
        return start == -1
    return start == -1 and stop == ag.SLICE_NONE and step in (ag.SLICE_NONE, 1)


def _last_only(result: SSAValue) -> bool:
    """Every use reads the last row only (true for an unused result: a fed-back output
    whose steps nobody reads still needs a ring for its taps, not one row per step)."""
    return all(_reads_last_row(u.operation, result) for u in result.uses)


class KeepLastStep(RewritePattern):
    """Marks the outputs of an `ag.scan` whose uses only read the last step."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.ScanOp, rewriter: PatternRewriter, /):
        if op.has_until:  # its outputs are read through the count of steps run
            return
        marked, skipped = op.last_only_outputs, op.with_initial_outputs
        new = {
            i
            for i, r in enumerate(op.outputs)
            if i not in marked and i not in skipped and _last_only(r)
        }
        if not new:
            return
        op.last_only = DenseArrayBase.from_list(i64, sorted(marked | new))
        rewriter.handle_operation_modification(op)


@dataclass(frozen=True)
class ScanLastStepPass(ModulePass):
    """Keeps only the last step of the scan outputs that only it is read of."""

    name = "scan-last-step"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(KeepLastStep()).rewrite_module(op)
