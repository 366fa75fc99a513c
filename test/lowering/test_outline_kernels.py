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
from xdsl.dialects.builtin import ModuleOp

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
        assert re.search(rf'call ccc (void|i64) @"{name}"\(', text), name


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
