"""`outline-kernels`: each distinct loop nest compiled once, whatever the depth.

The compile time of a deep network was superlinear because every layer's loops were
inlined into one function. These tests count work, not seconds: the kernels of a deeper
network are no more, the code of `@f` grows by a constant per layer, LLVM never inlines
a kernel, and kernels over memory another argument may share are not `noalias`.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from deep_graphs import mlp_training_module
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import MemRefType, ModuleOp

import arignote
import arignote.tensor as T
from arignote.configuration import change_flags
from arignote.lowering.driver import apply_pipeline, lower_to_llvm, make_context
from arignote.lowering.llvm.convert_func_to_llvm import KERNEL_ATTRIBUTE
from arignote.lowering.llvm.outline_kernels import outline_kernels
from arignote.lowering.pipelines import loops_lowering
from arignote.runtime.cpu import kernel_functions, llvm_ir_text


def _loops(layers: int, openmp: bool) -> ModuleOp:
    module = mlp_training_module(layers).clone()
    with change_flags(openmp=openmp, openmp_elemwise_minsize=1):
        spec = loops_lowering(1 if openmp else 0)
    apply_pipeline(make_context(), module, spec)
    return module


def _kernels(module: ModuleOp) -> list[func.FuncOp]:
    return [
        op for op in module.ops if isinstance(op, func.FuncOp) and KERNEL_ATTRIBUTE in op.attributes
    ]


def _function(module: ModuleOp, name: str) -> func.FuncOp:
    (f,) = [op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name]
    return f


def _ops_of(module: ModuleOp, name: str) -> int:
    return sum(1 for _ in _function(module, name).walk())


def _loops_in(module: ModuleOp, name: str) -> int:
    return sum(1 for op in _function(module, name).walk() if isinstance(op, scf.ForOp))


@pytest.mark.parametrize("openmp", [False, True])
def test_a_deeper_net_has_no_more_kernels(openmp: bool):
    """3, 5 and 9 layers: the same kernels; `@f`'s own code grows by the same number of
    ops per layer (linear: each layer's loops are calls)."""
    modules = {n: _loops(n, openmp) for n in (3, 5, 9)}
    counts = {n: len(_kernels(m)) for n, m in modules.items()}
    assert counts[3] > 5, counts
    assert counts[3] == counts[5] == counts[9], counts
    sizes = {n: _ops_of(m, "fn_main") for n, m in modules.items()}
    assert sizes[9] - sizes[5] == 2 * (sizes[5] - sizes[3]), sizes
    # the nests left in `@f` (those that allocate) do not grow with the depth either
    assert _loops_in(modules[9], "fn_main") == _loops_in(modules[3], "fn_main")


def test_outlining_twice_changes_nothing():
    module = _loops(3, False)
    before = str(module)
    assert outline_kernels(module) == 0
    assert str(module) == before


def test_kernels_are_never_inlined():
    """In the LLVM IR each kernel is `noinline`, and `@f` calls it."""
    lowered = lower_to_llvm(mlp_training_module(3).clone(), "", loops_lowering(0))
    kernels = kernel_functions(lowered.module)
    assert kernels
    text = llvm_ir_text(lowered.module)
    defines = {
        line.split("@", 1)[1].split("(", 1)[0].strip('"'): line
        for line in text.splitlines()
        if line.startswith("define")
    }
    for name in kernels:
        assert defines[name].endswith(" noinline"), defines[name]
        assert re.search(rf'call ccc (void|i64|double|{{.*}}) @"{name}"\(', text), name


def test_results_through_kernels_match_numpy():
    """A chain of layers and an in-place update, compiled with the kernels: the results
    are NumPy's (each layer calls the same kernels over other buffers)."""
    rng = np.random.default_rng(1)
    x = T.matrix("x")
    ws = [arignote.shared(rng.standard_normal((5, 5)), name=f"w{i}") for i in range(4)]
    h = x
    for w in ws:
        h = T.tanh(T.dot(h, w) + 1.0)
    step = arignote.function([x], h.sum(), updates=[(ws[0], ws[0] * 0.5 + 1.0)])
    xv = rng.standard_normal((3, 5))
    expected = xv
    values = [w.get_value() for w in ws]
    for v in values:
        expected = np.tanh(expected @ v + 1.0)
    np.testing.assert_allclose(step(xv), expected.sum(), rtol=1e-12)
    np.testing.assert_allclose(ws[0].get_value(), values[0] * 0.5 + 1.0, rtol=0)


def _lowered_loops(f: object) -> ModuleOp:
    module = f.maker.fgraph.func.parent_op().clone()  # type: ignore[attr-defined]
    apply_pipeline(make_context(), module, loops_lowering(0))
    return module


def test_each_kind_of_op_is_emitted_once():
    """`ag-to-loops{kernel_regions=true}` emits the kernel of the first op of a kind and
    calls it for the others (`kernel_reuse`): 9 layers emit as many kernels as 3."""
    counts = {}
    for layers in (3, 9):
        module = mlp_training_module(layers).clone()
        apply_pipeline(make_context(), module, "ag-to-loops{kernel_regions=true}")
        reused = [k for k in _kernels(module) if "__r" in k.sym_name.data]
        regions = sum(1 for op in module.walk() if isinstance(op, scf.ExecuteRegionOp))
        calls = sum(
            1
            for op in module.walk()
            if isinstance(op, func.CallOp) and "__r" in op.callee.string_value()
        )
        counts[layers] = (len(reused), regions, calls)
    assert counts[3][0] > 3 and counts[9][0] == counts[3][0], counts
    assert counts[9][1] == counts[3][1], counts  # the regions left: ops of their own kind
    assert counts[9][2] > counts[3][2], counts  # more layers, more calls


def test_a_reused_kernel_is_noalias_only_where_every_call_is():
    """`y * 2` over an input of its own, then the same op (on the same line: one
    `ag.node`) over `x[1:]`, a view of another input: one kernel, whose input argument
    is not `noalias` (a view), as the second call needs; the output stays `noalias`.
    The results are NumPy's."""
    x, y = T.dvectors("x", "y")
    f = arignote.function([x, y], [y * 2.0, x[1:] * 2.0])
    g = arignote.function([x, y], [y * 2.0, x * 2.0])  # two inputs: noalias at both calls
    for function, input_noalias in ((f, False), (g, True)):
        module = _lowered_loops(function)
        (kernel,) = [k for k in _kernels(module) if "__r" in k.sym_name.data]
        calls = [
            op
            for op in module.walk()
            if isinstance(op, func.CallOp) and op.callee.string_value() == kernel.sym_name.data
        ]
        assert len(calls) == 2
        noalias = ["llvm.noalias" in str(a) for a in kernel.arg_attrs.data]
        memrefs = [
            k for k, t in enumerate(kernel.function_type.inputs.data) if isinstance(t, MemRefType)
        ]
        assert noalias[memrefs[0]] == input_noalias, kernel.arg_attrs  # x[1:] or x
        assert noalias[memrefs[-1]], kernel.arg_attrs  # the output, a new buffer
    first, second = f(np.arange(3.0), np.arange(4.0))
    np.testing.assert_array_equal(first, np.arange(4.0) * 2)
    np.testing.assert_array_equal(second, np.arange(1.0, 3.0) * 2)


def test_a_condition_already_checked_is_not_checked_again():
    """`x + y` then `x * y`: the second op's shape checks test what the first one's
    did (the same dimensions of `x` and `y`), so the shape function checks them once;
    a mismatch names the first op. Deeper nets check less per layer than before (a
    layer's backward ops check what its forward ops checked)."""
    x, y = T.dmatrices("x", "y")
    f = arignote.function([x, y], [x + y, x * y])
    checks = lower_to_llvm(f.maker.fgraph.func.parent_op().clone()).checks["fn_main__shape"]
    assert len(checks) == 2 and all(c.startswith("ag.add") for c in checks), checks
    with pytest.raises(ValueError, match=r"ag\.add .*do not match at dimension 1"):
        f(np.ones((2, 3)), np.ones((2, 4)))
    np.testing.assert_array_equal(f(np.ones((2, 3)), np.ones((2, 3)))[1], np.ones((2, 3)))
    per_layer = {}
    for layers in (3, 5):
        lowered = lower_to_llvm(mlp_training_module(layers).clone())
        per_layer[layers] = len(lowered.checks["fn_main__shape"])
    # each layer adds the checks of its own shapes once
    assert 0 < per_layer[5] - per_layer[3] <= 2 * 6, per_layer


def test_a_status_call_outside_a_status_function_is_an_error():
    """A call marked `arignote.alloc_status` can only report its callee's failed
    allocation from a function that returns a status: elsewhere the LLVM lowering
    refuses it, naming the callee, rather than dropping the status."""
    from xdsl.parser import Parser
    from xdsl.utils.exceptions import PassFailedException

    text = """
    func.func private @k() -> i64 attributes {arignote.alloc_status} {
      %c = arith.constant 0 : i64
      func.return %c : i64
    }
    func.func @f() {
      %s = func.call @k() {arignote.alloc_status} : () -> i64
      func.return
    }
    """
    module = Parser(make_context(), text).parse_module()
    with pytest.raises(PassFailedException, match=r"a call of @k with arignote\.alloc_status"):
        apply_pipeline(make_context(), module, "convert-to-llvm")
