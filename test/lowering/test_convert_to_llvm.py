"""`convert-to-llvm` (the five `convert-*-to-llvm` passes in one walk) and the
`DispatchingApplier` it runs on."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import arith, func, math, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

import arignote
import arignote.tensor as T
from arignote.lowering.driver import apply_pipeline, make_context
from arignote.lowering.llvm.convert_arith_to_llvm import ARITH_PATTERNS, CastLowering
from arignote.lowering.llvm.convert_memref_to_llvm import LoadLowering
from arignote.lowering.pipelines import LLVM_LOWERING
from arignote.lowering.rewriting import ANY_OP, DispatchingApplier, pattern_op_types
from arignote.runtime.cpu import llvm_ir_text

FIVE_PASSES = (
    "convert-scf-to-cf,convert-arith-to-llvm,convert-math-to-llvm,convert-memref-to-llvm,"
    "convert-cf-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts"
)


# --- DispatchingApplier --------------------------------------------------------------------


class _Either(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.AddiOp | arith.SubiOp, rewriter: PatternRewriter, /):
        pass


class _Anything(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        pass


def test_pattern_op_types():
    assert pattern_op_types(LoadLowering()) == (memref.LoadOp,)  # @op_type_rewrite_pattern
    assert pattern_op_types(_Either()) == (arith.AddiOp, arith.SubiOp)  # a union
    assert arith.ExtSIOp in pattern_op_types(CastLowering())  # declared `op_types`
    assert pattern_op_types(_Anything()) is ANY_OP


def test_dispatch_keeps_the_order_and_the_untyped_patterns():
    either, anything = _Either(), _Anything()
    applier = DispatchingApplier([anything, LoadLowering(), either])
    assert applier.patterns_for(arith.AddiOp) == (anything, either)
    assert applier.patterns_for(memref.LoadOp) == (anything, applier.patterns[1])
    assert applier.patterns_for(func.ReturnOp) == (anything,)


def test_dispatch_tries_only_the_patterns_of_the_class():
    """The arith patterns tried on an `arith.constant` and a `math.exp`."""
    applier = DispatchingApplier(ARITH_PATTERNS)
    tried = applier.patterns_for(arith.ConstantOp)
    assert tried and len(tried) < len(ARITH_PATTERNS)
    assert applier.patterns_for(math.ExpOp) == ()


def test_dispatching_applier_erases_dead_ops_first():
    text = """
    func.func @f(%x: i64) -> i64 {
      %dead = arith.addi %x, %x : i64
      func.return %x : i64
    }
    """
    module = Parser(make_context(), text).parse_module()
    PatternRewriteWalker(DispatchingApplier([])).rewrite_module(module)
    assert not any(isinstance(op, arith.AddiOp) for op in module.walk())


# --- convert-to-llvm -------------------------------------------------------------------------


def _loops_module(build) -> ModuleOp:
    """The loops (`ag-to-loops` output) of the function that `build()` -> (inputs,
    outputs, updates) describes, captured from a native compile."""
    import arignote.compile.mode as mode

    captured = []
    real = mode.native_function

    def capture(module, symbol, graph_pipeline=""):
        captured.append(module.clone())
        return real(module, symbol, graph_pipeline)

    inputs, outputs, updates = build()
    try:
        mode.native_function = capture
        arignote.function(inputs, outputs, updates=updates, mode=arignote.Mode(linker="c"))
    finally:
        mode.native_function = real
    from arignote.printing import register_prints

    module = register_prints(captured[0])
    apply_pipeline(make_context(), module, "ag-to-loops")
    return module


def _logreg():
    x, y = T.fmatrix("x"), T.fvector("y")
    w = arignote.shared(np.zeros(5, np.float32), name="w")
    b = arignote.shared(np.float32(0.0), name="b")
    p = 1 / (1 + T.exp(-T.dot(x, w) - b))
    xent = -y * T.log(p) - (1 - y) * T.log(1 - p)
    gw, gb = arignote.grad(xent.mean() + 0.01 * (w**2).sum(), [w, b])
    return [x, y], [p > 0.5, xent], [(w, w - 0.1 * gw), (b, b - 0.1 * gb)]


def _math_and_indexing():
    x = T.dmatrix("x")
    i = T.lscalar("i")
    row = x[i]
    out = T.tanh(row) + T.log1p(T.abs(row)) + T.cast(row > 0, "int32") // 3
    return [x, i], [out, T.argmax(x, axis=1), x.T[::2].sum()], []


@pytest.mark.parametrize("build", [_logreg, _math_and_indexing], ids=["logreg", "math"])
def test_convert_to_llvm_gives_the_five_passes_llvm_ir(build):
    module = _loops_module(build)
    one_walk, five_passes = module.clone(), module.clone()
    apply_pipeline(make_context(), one_walk, LLVM_LOWERING)
    apply_pipeline(make_context(), five_passes, FIVE_PASSES)
    one_walk.verify()
    assert llvm_ir_text(one_walk) == llvm_ir_text(five_passes)


def test_convert_to_llvm_libm_option():
    text = """
    func.func @f(%x: f64) -> f64 {
      %y = math.tanh %x : f64
      func.return %y : f64
    }
    """
    for option, has_call in (("", False), ("{libm=true}", True)):
        module = Parser(make_context(), text).parse_module()
        apply_pipeline(
            make_context(), module, f"convert-to-llvm{option},reconcile-unrealized-casts"
        )
        assert ('@"tanh"(double' in llvm_ir_text(module)) == has_call


# --- lookup_function -----------------------------------------------------------------------


def test_lookup_function_remembers_only_what_is_still_there() -> None:
    """`lookup_function` answers as `SymbolTable.lookup_symbol` does after the function it
    found was erased, renamed or replaced by another of the same name."""
    from xdsl.dialects import llvm
    from xdsl.dialects.builtin import StringAttr, i64
    from xdsl.rewriter import Rewriter

    from arignote.lowering.llvm.llvm_utils import lookup_function

    def declaration(name: str) -> llvm.FuncOp:
        return llvm.FuncOp(name, llvm.LLVMFunctionType([i64]), llvm.LinkageAttr("external"))

    first, other = declaration("malloc"), declaration("free")
    module = ModuleOp([first, other])
    assert lookup_function(module, "malloc") is first
    assert lookup_function(module, "calloc") is None
    Rewriter.erase_op(first)
    assert lookup_function(module, "malloc") is None
    second = declaration("malloc")
    module.body.block.add_op(second)
    assert lookup_function(module, "malloc") is second
    second.properties["sym_name"] = StringAttr("renamed")
    assert lookup_function(module, "malloc") is None
    assert lookup_function(module, "renamed") is second
    assert lookup_function(ModuleOp([]), "free") is None
    assert lookup_function(module, "free") is other


def test_lookup_function_keeps_no_module_alive() -> None:
    """A module `lookup_function` searched is collected once dropped: what it remembers
    does not hold the module (its functions lead to it through their parents)."""
    import gc
    import weakref

    from xdsl.dialects import llvm
    from xdsl.dialects.builtin import i64

    from arignote.lowering.llvm.llvm_utils import lookup_function

    found = llvm.FuncOp("malloc", llvm.LLVMFunctionType([i64]), llvm.LinkageAttr("external"))
    module = ModuleOp([found])
    assert lookup_function(module, "malloc") is found
    dropped = weakref.ref(module)
    del module, found
    gc.collect()
    assert dropped() is None
