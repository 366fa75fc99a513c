"""`scan-history`: a fed-back scan output joined after its initial rows becomes the
scan's own history buffer.

Backpropagation through time reads, at each step, the state the step started from:
`concatenate(h0[:L], hs)` (`frontend/scan_grad.py`), the initial rows then the stacked
outputs. The scan's loop already keeps exactly that buffer (`ag_scan`: `L` history
rows, then one row per step) and used to copy its step rows out into the result; the
join then copied everything again. This pass marks such an output `with_initial` (the
result is the whole history buffer, `L + n` rows: no copy in the loop's epilogue), the
join becomes that result, and the other uses of the output read the view
`full[L:]` (a basic subtensor: a strided view in `ag-to-loops`, no copy):

```mlir
// before
%hs = ag.scan sequences(%x : ...) initials(%h0 : tensor<1x?x?xf32>) ... -> tensor<?x?x?xf32>
%p = ag.subtensor %h0[] {... stops = array<i64: 1, ...>} : tensor<1x?x?xf32> -> tensor<1x?x?xf32>
%j = ag.concatenate %p, %hs {axis = 0 : i64} : ... -> tensor<?x?x?xf32>
// after
%full = ag.scan ... attributes {with_initial = array<i64: 0>, ...} -> tensor<?x?x?xf32>
%hs = ag.subtensor %full[] {... starts = array<i64: 1, ...>} : ... -> tensor<?x?x?xf32>
// %j's uses read %full
```

The pattern: `ag.concatenate` on axis 0 of two operands, the first the `L` leading
rows of the output's initial value (that value when its leading length is a static
`L`, or `init[:L]`), the second the fed-back output (not `last_only`). Runs in
`fast_run` after `scan-last-step` (tags `scan`, `fast_run`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, TensorType, i64
from xdsl.ir import OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from arignote.dialects import ag

_FULL = (ag.SLICE, ag.SLICE_NONE, ag.SLICE_NONE, ag.SLICE_NONE)


def is_leading_rows(value: SSAValue, init: SSAValue, depth: int) -> bool:
    """Whether `value` is the first `depth` rows of `init`: `init` itself when its
    leading length is a static `depth`, or `init[:depth]` (other axes whole)."""
    if value is init:
        return ag.value_shape(init)[:1] == (depth,)
    op = value.owner
    if not isinstance(op, ag.SubtensorOp) or op.operands[0] is not init or op.dynamic:
        return False
    (kind, start, stop, step), *rest = op.entries()
    return (
        kind == ag.SLICE
        and start in (ag.SLICE_NONE, 0)
        and stop == depth
        and step in (ag.SLICE_NONE, 1)
        and all(e == _FULL for e in rest)
    )


def _depth(scan: ag.ScanOp, i: int) -> int:
    return max(-k for k in scan.output_tap_lists[i])


def _rebuilt(scan: ag.ScanOp, i: int, full_type: TensorType) -> ag.ScanOp:
    """`scan` with output `i` `with_initial` (of type `full_type`); takes its body."""
    types = [full_type if k == i else r.type for k, r in enumerate(scan.outputs)]
    body = scan.body.detach_block(scan.body.block)
    new = ag.ScanOp(
        scan.n_steps,
        list(scan.sequences),
        list(scan.initials),
        list(scan.non_sequences),
        scan.sequence_tap_lists,
        scan.output_tap_lists,
        types,
        body,
    )
    if scan.last_only is not None:
        new.last_only = scan.last_only
    new.with_initial = DenseArrayBase.from_list(i64, sorted(scan.with_initial_outputs | {i}))
    new.attributes.update(scan.attributes)
    return new


def _steps_view(full: SSAValue, depth: int, rank: int) -> ag.SubtensorOp:
    """`full[depth:]`: the stacked steps."""
    none = [ag.SLICE_NONE] * rank
    starts = [depth, *none[1:]]
    return ag.SubtensorOp(full, [ag.SLICE] * rank, starts, none, none)


class JoinIntoHistory(RewritePattern):
    """`concatenate(init[:L], scan.out_i)` → `scan.out_i` `with_initial` (module doc)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.ConcatenateOp, rewriter: PatternRewriter, /):
        if op.axis_value != 0 or len(op.operands) != 2:
            return
        prefix, stacked = op.operands
        scan = stacked.owner
        if not isinstance(scan, ag.ScanOp) or not isinstance(stacked, OpResult):
            return
        if scan.has_until:  # a repeat-until loop is left whole
            return
        i = stacked.index
        if i not in scan.recurrent_outputs or i in scan.last_only_outputs:
            return
        if i in scan.with_initial_outputs:
            return
        init = scan.initials[scan.recurrent_outputs.index(i)]
        depth = _depth(scan, i)
        if not is_leading_rows(prefix, init, depth):
            return
        full_type = op.result.type
        new = _rebuilt(scan, i, full_type)
        view = _steps_view(new.outputs[i], depth, ag.tensor_type(stacked).get_num_dims())
        if view.result.type != stacked.type:
            scan.body.add_block(new.body.detach_block(new.body.block))  # give it back
            return
        results = [view.result if k == i else r for k, r in enumerate(new.outputs)]
        rewriter.replace(scan, [new, view], results)
        rewriter.replace(op, [], [new.outputs[i]])


@dataclass(frozen=True)
class ScanHistoryPass(ModulePass):
    """Turns `concatenate(init[:L], scan.out)` into the scan's history buffer."""

    name = "scan-history"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(JoinIntoHistory()).rewrite_module(op)
