"""`merge-identical-functions`: each distinct outlined kernel once per module."""

from __future__ import annotations

from deep_graphs import mlp_training_module
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from arignote.configuration import change_flags
from arignote.lowering.driver import apply_pipeline, lower_to_llvm, make_context
from arignote.lowering.llvm.merge_functions import merge_identical_functions
from arignote.lowering.pipelines import loops_lowering

TASKS = """
llvm.func internal @t0__body(%a: i64) -> i64 {
  %b = llvm.add %a, %a : i64
  llvm.return %b : i64
}
llvm.func internal @t0(%a: i64) -> i64 {
  %r = llvm.call @t0__body(%a) : (i64) -> i64
  llvm.return %r : i64
}
llvm.func internal @t1__body(%a: i64) -> i64 {
  %b = llvm.add %a, %a : i64
  llvm.return %b : i64
}
llvm.func internal @t1(%a: i64) -> i64 {
  %r = llvm.call @t1__body(%a) : (i64) -> i64
  llvm.return %r : i64
}
llvm.func internal @t2(%a: i64) -> i64 {
  %b = llvm.mul %a, %a : i64
  llvm.return %b : i64
}
llvm.func @public0(%a: i64) -> i64 {
  llvm.return %a : i64
}
llvm.func @public1(%a: i64) -> i64 {
  llvm.return %a : i64
}
llvm.func @f(%a: i64) -> !llvm.ptr {
  %x = llvm.call @t0(%a) : (i64) -> i64
  %y = llvm.call @t1(%x) : (i64) -> i64
  %z = llvm.call @t2(%y) : (i64) -> i64
  %p = llvm.mlir.addressof @t1 : !llvm.ptr
  llvm.return %p : !llvm.ptr
}
"""


def _names(module: ModuleOp) -> list[str]:
    return [op.sym_name.data for op in module.ops if isinstance(op, llvm.FuncOp)]


def test_identical_tasks_and_bodies_merge_and_references_follow():
    module = Parser(make_context(), TASKS).parse_module()
    assert merge_identical_functions(module) == 2
    assert _names(module) == ["t0__body", "t0", "t2", "public0", "public1", "f"]
    text = str(module)
    assert "@t1" not in text
    assert text.count("llvm.call @t0(") == 2 and "llvm.mlir.addressof @t0 " in text
    module.verify()


def test_pass_runs_from_a_pipeline():
    module = Parser(make_context(), TASKS).parse_module()
    apply_pipeline(make_context(), module, "merge-identical-functions")
    assert len(_names(module)) == 6


def test_kernels_of_a_deeper_net_are_no_more():
    """The parallel loops of each layer are the same kernels over other buffers: a
    5-layer MLP's training step has as many distinct task functions as a 3-layer one
    (before the pass: one per loop, 2 more per layer)."""
    counts = {}
    with change_flags(openmp=True, openmp_elemwise_minsize=1):
        for layers in (3, 5):
            lowered = lower_to_llvm(mlp_training_module(layers).clone(), "", loops_lowering(1))
            apply_pipeline(make_context(), lowered.module, "merge-identical-functions")
            counts[layers] = sum("__par" in name for name in _names(lowered.module))
    assert counts[3] > 0
    assert counts[5] == counts[3], counts
