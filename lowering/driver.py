"""Running pass pipelines on a module: what `arignote.function()` asks of the lowering."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.passes import PassPipeline

from arignote.lowering.pipelines import LLVM_LOWERING, loops_lowering

if TYPE_CHECKING:
    from arignote.lowering.gpu.split import GpuModules
from arignote.lowering.registry import get_all_dialects, get_all_passes

CHECKS_ATTR = "ag.checks"
"""The attribute of a `<name>__shape` function listing its run-time check messages."""


def make_context() -> Context:
    """A context where every dialect arignote knows loads on first use."""
    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx


def apply_pipeline(ctx: Context, module: ModuleOp, spec: str) -> None:
    """Run the pass-spec string `spec` on `module` in place; an empty spec does nothing."""
    if not spec:
        return
    pipeline = PassPipeline.parse_spec(get_all_passes(), spec)
    pipeline.apply(ctx, module)


def apply_pipeline_profiled(
    ctx: Context, module: ModuleOp, spec: str
) -> list[tuple[str, float, int, int]]:
    """`apply_pipeline`, pass by pass: for each pass its name, the seconds it took and
    how many ops it created and erased (what its rewrites changed)."""
    records = []
    for p in PassPipeline.parse_spec(get_all_passes(), spec).passes:
        before = {id(op): op for op in module.walk()}
        start = time.perf_counter()
        p.apply(ctx, module)
        elapsed = time.perf_counter() - start
        after = {id(op) for op in module.walk()}
        created = len(after - before.keys())
        records.append((p.name, elapsed, created, len(before.keys() - after)))
    return records


@dataclass
class LoweredModule:
    """A module lowered to the `llvm` dialect and what the runtime needs to call it."""

    module: ModuleOp
    checks: dict[str, list[str]]
    """For each shape function, the message of each run-time check (1-based codes)."""


def optimize(module: ModuleOp, graph_pipeline: str) -> ModuleOp:
    """Run the graph-level pipeline (ag on tensors) on `module` in place; return it."""
    apply_pipeline(make_context(), module, graph_pipeline)
    return module


def lower_to_llvm(
    module: ModuleOp, graph_pipeline: str = "", loops_pipeline: str | None = None
) -> LoweredModule:
    """Optimize `module` (ag on tensors) with `graph_pipeline`, then lower it to loops
    with `loops_pipeline` (`pipelines.loops_lowering(...)`) and to LLVM."""
    lowered = lower_to_loops(module, graph_pipeline, loops_pipeline)
    return LoweredModule(loops_to_llvm(lowered.module), lowered.checks)


def lower_to_loops(
    module: ModuleOp, graph_pipeline: str = "", loops_pipeline: str | None = None
) -> LoweredModule:
    """`lower_to_llvm` up to the loops (its `module` is still `scf`/`memref`, kernels
    outlined): `loops_to_llvm` finishes it, on the whole or on parts of it
    (`arignote.lowering.function_parts`)."""
    ctx = make_context()
    apply_pipeline(ctx, module, graph_pipeline)
    apply_pipeline(ctx, module, loops_lowering() if loops_pipeline is None else loops_pipeline)
    return LoweredModule(module, _checks(module))


def loops_to_llvm(module: ModuleOp) -> ModuleOp:
    """Lower the loops-level `module` (`lower_to_loops`) to the `llvm` dialect in place
    (`LLVM_LOWERING`); return it."""
    apply_pipeline(make_context(), module, LLVM_LOWERING)
    return module


def _checks(module: ModuleOp) -> dict[str, list[str]]:
    """For each shape function of `module` (loops), its run-time check messages."""
    checks = {}
    for op in module.ops:
        if isinstance(op, FuncOp) and CHECKS_ATTR in op.attributes:
            messages = op.attributes[CHECKS_ATTR]
            assert isinstance(messages, ArrayAttr)
            checks[op.sym_name.data] = [s.data for s in messages.data if isinstance(s, StringAttr)]
    return checks


@dataclass
class GpuLowered:
    """A module lowered for the GPU (see `arignote.lowering.gpu`)."""

    parts: GpuModules
    checks: dict[str, list[str]]
    shape_reads: dict[str, tuple[int, ...]]
    """For each shape function, the inputs whose contents (not only shape) it reads."""


def lower_to_gpu(module: ModuleOp, symbol: str = "module") -> GpuLowered:
    """Lower the optimized `module` (ag on tensors) for the GPU: loops, `gpu-kernels`,
    the LLVM lowering, then the host/device split (`symbol` names the host's kernel
    table and launcher). Raises `GpuLoweringError` for what the
    GPU target cannot run."""
    from arignote.lowering.gpu.kernels import shape_reads
    from arignote.lowering.gpu.split import split
    from arignote.lowering.pipelines import GPU_LOOPS_LOWERING

    ctx = make_context()
    apply_pipeline(ctx, module, GPU_LOOPS_LOWERING)
    checks = _checks(module)
    reads = shape_reads(module)
    apply_pipeline(ctx, module, LLVM_LOWERING)
    return GpuLowered(split(module, symbol), checks, reads)
