"""`convert-scf-to-cf`: xDSL's pass of that name, each `scf` op visited once.

The patterns are xDSL's (`xdsl.transforms.convert_scf_to_cf`: `scf.if`, `scf.for` and
`scf.index_switch` to `cf` branches between blocks), and so is the result, trivially
dead ops erased included (see `docs/passes.md`). xDSL's pass applies them with a
`PatternRewriteWalker`, which visits every op of the module twice (the second walk
confirms the fixed point) and every op a rewrite inserts; here only the `scf` ops are
visited, each once, outer before inner (a rewrite inlines the regions of its op into the
parent region, where the ops of the regions keep their turn), and the trivially dead ops
are erased in one sweep at the end (`arignote.lowering.rewriting.apply_once`).

The ops of each block are visited last to first, which keeps the pass linear in the
size of a function. Each rewrite splits its op's block before the op
(`Block.split_before`), which moves every op after it into a new block and finds the
block's position by counting the blocks before it. First to last, each of a function's
`n` top-level loop nests moved all the ops after it, and the blocks already made by
the loops before it were counted over and over: quadratic (22 s of a 64-layer MLP's
compile). Last to first, the ops after a loop are only those up to the next one,
already split off, and the block split is still among the region's first few. The
result is the same IR, block order included.
"""

from __future__ import annotations

from functools import cache

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from arignote.lowering.rewriting import DispatchingApplier, apply_once


@cache
def _applier() -> DispatchingApplier:
    from xdsl.transforms.convert_scf_to_cf import ForLowering, IfLowering, SwitchLowering

    return DispatchingApplier([SwitchLowering(), IfLowering(), ForLowering()])


class ConvertScfToCfPass(ModulePass):
    """`scf.if`/`scf.for`/`scf.index_switch` → `cf` branches (xDSL's patterns)."""

    name = "convert-scf-to-cf"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_once(_applier(), op, visit=(scf.IfOp, scf.ForOp, scf.IndexSwitchOp), reverse=True)
