"""`reconcile-unrealized-casts`: xDSL's pass of that name, visiting the casts only.

xDSL's pass (`xdsl.transforms.reconcile_unrealized_casts`) removes the chains of
`builtin.unrealized_conversion_cast` that start and end at the same type with a
`PatternRewriteWalker`, which pushes every op of the module to its worklist and walks
the module again until nothing changes. Here the same pattern is applied to the casts
alone, in the order the module lists them, again while a round removes some: the same
result (and the same warning for a cast that cannot be removed) without the walks over
the thousands of other ops of an `llvm`-dialect module.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnrealizedConversionCastOp
from xdsl.passes import ModulePass
from xdsl.transforms.reconcile_unrealized_casts import ReconcileUnrealizedCastsPattern

from arignote.lowering.rewriting import apply_once


def reconcile_unrealized_casts(module: ModuleOp, *, warn_on_failure: bool = True) -> None:
    """Remove the cast chains of `module` that cancel out (xDSL's function of that name)."""
    pattern = ReconcileUnrealizedCastsPattern(warn_on_failure=warn_on_failure)
    while apply_once(pattern, module, visit=(UnrealizedConversionCastOp,), dce=False):
        pass


class ReconcileUnrealizedCastsPass(ModulePass):
    """Remove `builtin.unrealized_conversion_cast` chains that cancel out."""

    name = "reconcile-unrealized-casts"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        reconcile_unrealized_casts(op)
