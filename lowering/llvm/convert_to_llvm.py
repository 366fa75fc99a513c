"""`convert-to-llvm`: `arith`, `math`, `memref`, `cf` and `func` to the `llvm` dialect in
one walk.

The same rewrites as `convert-arith-to-llvm,convert-math-to-llvm,convert-memref-to-llvm,
convert-cf-to-llvm,convert-func-to-llvm` (the patterns of those passes, in that order,
`libm` as in `convert-math-to-llvm`), applied by one `PatternRewriteWalker`: each op is
visited once (plus the walker's confirming walk) instead of once per pass, and only the
patterns of its class are tried (`arignote.lowering.rewriting.DispatchingApplier`).

Every pattern is local and bridges operands and results of unconverted producers and
users with `builtin.unrealized_conversion_cast`, so the order in which ops are met does
not matter: after `reconcile-unrealized-casts` the module is the one the five passes
give (`test/lowering/test_convert_to_llvm.py` compares the LLVM IR of both). Run
`convert-scf-to-cf` first (the cf patterns lower the branches it makes).

```mlir
// before                                  // after (and reconcile-unrealized-casts)
func.func @f(%m: memref<?xf64>) {          llvm.func @f(%p: !llvm.ptr) {
  %c0 = arith.constant 0 : index             %d = llvm.load %p : ... -> !llvm.struct<...>
  %x = memref.load %m[%c0] : memref<?xf64>   %c0 = llvm.mlir.constant(0 : i64) : i64
  ...                                        %a = llvm.extractvalue %d[1] ...
                                             %e = llvm.getelementptr %a[%c0] ...
                                             %x = llvm.load %e : !llvm.ptr -> f64
```
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from xdsl.context import Context
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from arignote.lowering.llvm.checked_alloc import split_at_exits
from arignote.lowering.llvm.llvm_utils import ConstantPool, constant_pool, converting
from arignote.lowering.rewriting import DispatchingApplier, apply_once


@cache
def _applier(libm: bool) -> DispatchingApplier:
    """One applier per option, kept for the process: its per-class pattern lists are
    computed once."""
    from arignote.lowering.llvm.convert_arith_to_llvm import ARITH_PATTERNS
    from arignote.lowering.llvm.convert_cf_to_llvm import CF_PATTERNS
    from arignote.lowering.llvm.convert_func_to_llvm import FUNC_PATTERNS
    from arignote.lowering.llvm.convert_math_to_llvm import math_patterns
    from arignote.lowering.llvm.convert_memref_to_llvm import MEMREF_PATTERNS

    return DispatchingApplier(
        [*ARITH_PATTERNS, *math_patterns(libm), *MEMREF_PATTERNS, *CF_PATTERNS, *FUNC_PATTERNS]
    )


@dataclass(frozen=True)
class ConvertToLLVMPass(ModulePass):
    """The five `convert-*-to-llvm` passes in one walk (see the module docstring)."""

    name = "convert-to-llvm"

    libm: bool = False
    """As `convert-math-to-llvm{libm=true}`: exp/log/... as libm calls, not inline."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        applier = _applier(self.libm)
        with constant_pool() as pool, converting(applier.converts):
            apply_once(_PooledApplier(applier, pool), op)
        split_at_exits(op)


class _PooledApplier(RewritePattern):
    """`applier`, with `pool.entry` set to the entry block of the function of each op
    before its rewrite."""

    def __init__(self, applier: RewritePattern, pool: ConstantPool) -> None:
        self.applier = applier
        self.pool = pool
        self._entries: dict[Block, Block | None] = {}

    def _entry(self, block: Block | None) -> Block | None:
        if block is None:
            return None
        entry = self._entries.get(block, False)
        if entry is False:
            region = block.parent
            owner = region.parent if region is not None else None
            if isinstance(owner, func.FuncOp | llvm.FuncOp):
                entry = region.first_block  # pyright: ignore[reportOptionalMemberAccess]
            else:
                entry = self._entry(owner.parent if owner is not None else None)
            self._entries[block] = entry
        return entry

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        self.pool.entry = self._entry(op.parent)
        self.applier.match_and_rewrite(op, rewriter)
