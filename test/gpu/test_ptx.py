"""PTX generation on any machine: the seed logistic-regression step lowered for the GPU,
made into PTX by llvmlite's NVPTX target, and assembled by `ptxas` (skipped only where
ptxas is not installed)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.configuration import config
from arignote.lowering.driver import lower_to_gpu, optimize
from arignote.lowering.gpu.kernels import GpuLoweringError, gpu_kernels
from arignote.lowering.gpu.split import SPECIAL_REGISTERS, entry_ir
from arignote.lowering.pipelines import GRAPH_PIPELINES, gpu_graph_pipeline
from arignote.runtime import ptx

needs_ptxas = pytest.mark.skipif(ptx.ptxas() is None, reason="ptxas is not on the PATH")


def _logreg_step() -> object:
    """The seed program's training function (float32), compiled for the CPU."""
    with config.change_flags(floatX="float32"):
        x, y = T.matrix("x"), T.vector("y")
        w = arignote.shared(np.zeros(784, "float32"), name="w")
        b = arignote.shared(np.float32(0.0), name="b")
        p_1 = 1 / (1 + T.exp(-T.dot(x, w) - b))
        xent = -y * T.log(p_1) - (1 - y) * T.log(1 - p_1)
        cost = T.cast(xent.mean(), "float32") + 0.01 * (w**2).sum()
        gw, gb = T.grad(cost, [w, b])
        return arignote.function(
            [x, y], [p_1 > 0.5, xent], updates={w: w - 0.01 * gw, b: b - 0.01 * gb}
        )


def _gpu_ptx(arch: str) -> tuple[str, int]:
    train = _logreg_step()
    module = optimize(
        train._compiled.module.clone(), gpu_graph_pipeline(GRAPH_PIPELINES["fast_run"])
    )
    lowered = lower_to_gpu(module)
    kernels = lowered.parts.kernels
    source = ptx.device_ir(lowered.parts.device, [entry_ir(k) for k in kernels], SPECIAL_REGISTERS)
    return ptx.ptx(source, arch), len(kernels)


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
def test_logreg_step_ptx_assembles(arch: str) -> None:
    text, n_kernels = _gpu_ptx(arch)
    assert f".target {arch}" in text
    entries = re.findall(r"\.visible \.entry (\w+)\(", text)
    assert len(entries) == n_kernels >= 5
    assert all(e.endswith("__kernel") for e in entries)
    cubin = ptx.validate(text, arch)
    assert cubin[:4] == b"\x7fELF"


def test_ptx_without_ptxas_is_still_made() -> None:
    text, n_kernels = _gpu_ptx("sm_90")
    assert text.count(".entry") == n_kernels
    assert "%tid.x" in text and "%ctaid.x" in text


@needs_ptxas
def test_ptxas_rejects_bad_ptx_with_its_message() -> None:
    with pytest.raises(ptx.PtxError, match="ptxas -arch=sm_90 rejects"):
        ptx.validate(".version 8.0\n.target sm_90\n.address_size 64\nnot ptx", "sm_90")


def test_host_code_that_would_touch_device_memory_is_refused() -> None:
    """What the host would have to run on device memory (a Print's callback) is a
    GpuLoweringError naming the op (the frontend then runs the function on the CPU)."""
    from arignote.lowering.driver import apply_pipeline, make_context

    x = T.vector("x")
    f = arignote.function([x], arignote.printing.Print("v")(x) + 1)
    module = f._compiled.module.clone()
    apply_pipeline(make_context(), module, "ag-to-loops{parallel_min_work=1}")
    with pytest.raises(GpuLoweringError, match="arignote_print"):
        gpu_kernels(module)


def test_host_code_touching_device_memory_is_caught() -> None:
    """The split's check: with the CPU target's allocation tracking kept (a list of live
    buffers in their first bytes, which the host would write), lowering for the GPU is
    refused instead of faulting on the device."""
    from xdsl.dialects.builtin import UnitAttr
    from xdsl.dialects.func import FuncOp

    from arignote.lowering.driver import apply_pipeline, make_context
    from arignote.lowering.gpu.split import split
    from arignote.lowering.llvm.checked_alloc import ALLOC_STATUS
    from arignote.lowering.pipelines import GPU_LOOPS_LOWERING, LLVM_LOWERING

    x = T.matrix("x")
    f = arignote.function([x], T.exp(x).sum(axis=0) * 2)
    module = f._compiled.optimized.clone()
    ctx = make_context()
    apply_pipeline(ctx, module, GPU_LOOPS_LOWERING)
    for op in module.ops:
        if isinstance(op, FuncOp) and op.body.blocks and not op.sym_name.data.endswith("__shape"):
            op.attributes[ALLOC_STATUS] = UnitAttr()
    apply_pipeline(ctx, module, LLVM_LOWERING)
    with pytest.raises(GpuLoweringError, match="the host code (reads|writes) device memory"):
        split(module)
