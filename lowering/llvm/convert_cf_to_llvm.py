"""`convert-cf-to-llvm`: `cf.br` / `cf.cond_br` to `llvm.br` / `llvm.cond_br`.

Accepts the unstructured control flow `convert-scf-to-cf` leaves. Block arguments of the
branch targets get converted types (`index` → `i64`, memref → descriptor struct), with
`builtin.unrealized_conversion_cast`s back to the old types for users not converted yet;
branch operands are cast to the new types. Entry blocks are left to
`convert-func-to-llvm`. `cf.switch` (from `scf.index_switch`) is not supported: xDSL's
`llvm` dialect has no `llvm.switch`.
"""

from __future__ import annotations

from functools import cache

from xdsl.context import Context
from xdsl.dialects import cf, llvm
from xdsl.dialects.builtin import UNKNOWN_LOC, DenseArrayBase, ModuleOp, i32
from xdsl.ir import Operation
from xdsl.irdl import AttrSizedOperandSegments
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from arignote.lowering.llvm.llvm_utils import legalize_block_arguments, replace_op, to_llvm_all
from arignote.lowering.rewriting import DispatchingApplier


@cache
def _segments(then_count: int, else_count: int) -> DenseArrayBase:
    """The operand segment sizes of an `llvm.cond_br`."""
    return DenseArrayBase.from_list(i32, (1, then_count, else_count))


class BranchLowering(RewritePattern):
    """`cf.br` → `llvm.br`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cf.BranchOp, rewriter: PatternRewriter, /):
        legalize_block_arguments(rewriter, op.successor)
        ops: list[Operation] = []
        arguments = to_llvm_all(op.arguments, ops)
        branch = llvm.BrOp.create(
            operands=arguments, successors=(op.successor,), location=UNKNOWN_LOC
        )
        ops.append(branch)
        replace_op(rewriter, op, ops, None)


class ConditionalBranchLowering(RewritePattern):
    """`cf.cond_br` → `llvm.cond_br`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cf.ConditionalBranchOp, rewriter: PatternRewriter, /):
        legalize_block_arguments(rewriter, op.then_block)
        legalize_block_arguments(rewriter, op.else_block)
        ops: list[Operation] = []
        then_arguments = to_llvm_all(op.then_arguments, ops)
        else_arguments = to_llvm_all(op.else_arguments, ops)
        branch = llvm.CondBrOp.create(  # as llvm.CondBrOp(...), without its generic builder
            operands=(op.cond, *then_arguments, *else_arguments),
            successors=(op.then_block, op.else_block),
            location=UNKNOWN_LOC,
            properties={
                AttrSizedOperandSegments.attribute_name: _segments(
                    len(then_arguments), len(else_arguments)
                )
            },
        )
        ops.append(branch)
        replace_op(rewriter, op, ops, None)


CF_PATTERNS: tuple[RewritePattern, ...] = (BranchLowering(), ConditionalBranchLowering())
"""The patterns of `convert-cf-to-llvm` (stateless)."""


class ConvertCfToLLVMPass(ModulePass):
    """Rewrite `cf` branches into `llvm` branches with converted block arguments."""

    name = "convert-cf-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(DispatchingApplier(CF_PATTERNS)).rewrite_module(op)
