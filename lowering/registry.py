"""Lazy registries of the dialects and passes that `arignote-opt` and `function()` use.

Each entry maps a name to a factory that imports its module only when called, so that
`import arignote` and `arignote-opt --help` stay cheap.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Dialect
from xdsl.passes import ModulePass


def _ag() -> Dialect:
    from arignote.dialects.ag import Ag

    return Ag


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    """xDSL's dialects plus `ag`."""
    from xdsl.dialects import get_all_dialects as xdsl_dialects

    dialects = dict(xdsl_dialects())
    dialects["ag"] = _ag
    return dialects


# --- passes written for arignote ------------------------------------------------------


def _ag_to_loops() -> type[ModulePass]:
    from arignote.lowering.loops.ag_to_loops import ConvertAgToLoopsPass

    return ConvertAgToLoopsPass


def _arith_to_llvm() -> type[ModulePass]:
    from arignote.lowering.llvm.convert_arith_to_llvm import ConvertArithToLLVMPass

    return ConvertArithToLLVMPass


def _math_to_llvm() -> type[ModulePass]:
    from arignote.lowering.llvm.convert_math_to_llvm import ConvertMathToLLVMPass

    return ConvertMathToLLVMPass


def _memref_to_llvm() -> type[ModulePass]:
    from arignote.lowering.llvm.convert_memref_to_llvm import ConvertMemRefToLLVMPass

    return ConvertMemRefToLLVMPass


def _cf_to_llvm() -> type[ModulePass]:
    from arignote.lowering.llvm.convert_cf_to_llvm import ConvertCfToLLVMPass

    return ConvertCfToLLVMPass


def _func_to_llvm() -> type[ModulePass]:
    from arignote.lowering.llvm.convert_func_to_llvm import ConvertFuncToLLVMPass

    return ConvertFuncToLLVMPass


def _to_llvm() -> type[ModulePass]:
    from arignote.lowering.llvm.convert_to_llvm import ConvertToLLVMPass

    return ConvertToLLVMPass


def _stabilize() -> type[ModulePass]:
    from arignote.lowering.graph.stabilize import StabilizePass

    return StabilizePass


def _specialize() -> type[ModulePass]:
    from arignote.lowering.graph.specialize import SpecializePass

    return SpecializePass


def _softmax_xent_pair() -> type[ModulePass]:  # nnet functions (issue 14)
    from arignote.lowering.graph.softmax_xent_pair import SoftmaxXentPairPass

    return SoftmaxXentPairPass


def _row_fusion() -> type[ModulePass]:
    from arignote.lowering.graph.row_fusion import RowFusionPass

    return RowFusionPass


def _scan_prune() -> type[ModulePass]:
    from arignote.lowering.graph.scan_prune import ScanPrunePass

    return ScanPrunePass


def _scan_last_step() -> type[ModulePass]:
    from arignote.lowering.graph.scan_last_step import ScanLastStepPass

    return ScanLastStepPass


def _scan_history() -> type[ModulePass]:
    from arignote.lowering.graph.scan_history import ScanHistoryPass

    return ScanHistoryPass


def _scan_pushout() -> type[ModulePass]:
    from arignote.lowering.graph.scan_pushout import ScanPushoutPass

    return ScanPushoutPass


def _canonicalize() -> type[ModulePass]:
    from arignote.lowering.graph.canonicalize import CanonicalizePass

    return CanonicalizePass


def _fusion() -> type[ModulePass]:
    from arignote.lowering.graph.fusion import FusionPass

    return FusionPass


def _inplace() -> type[ModulePass]:
    from arignote.lowering.graph.inplace import InplacePass

    return InplacePass


def _inplace_update() -> type[ModulePass]:
    from arignote.lowering.graph.inplace_update import InplaceUpdatePass

    return InplaceUpdatePass


def _profile_timers() -> type[ModulePass]:
    from arignote.lowering.loops.profile_timers import ProfileTimersPass

    return ProfileTimersPass


def _parallelize() -> type[ModulePass]:
    from arignote.lowering.llvm.parallelize import ParallelizePass

    return ParallelizePass


def _gpu_kernels() -> type[ModulePass]:
    from arignote.lowering.gpu.kernels import GpuKernelsPass

    return GpuKernelsPass


def _scf_to_cf() -> type[ModulePass]:
    from arignote.lowering.llvm.scf_to_cf import ConvertScfToCfPass

    return ConvertScfToCfPass


def _outline_kernels() -> type[ModulePass]:
    from arignote.lowering.llvm.outline_kernels import OutlineKernelsPass

    return OutlineKernelsPass


def _merge_functions() -> type[ModulePass]:
    from arignote.lowering.llvm.merge_functions import MergeIdenticalFunctionsPass

    return MergeIdenticalFunctionsPass


def _reconcile_casts() -> type[ModulePass]:
    from arignote.lowering.llvm.reconcile_casts import ReconcileUnrealizedCastsPass

    return ReconcileUnrealizedCastsPass


ARIGNOTE_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "canonicalize": _canonicalize,
    "stabilize": _stabilize,
    "specialize": _specialize,
    "row-fusion": _row_fusion,
    "softmax-xent-pair": _softmax_xent_pair,  # nnet functions (issue 14)
    "scan-prune": _scan_prune,
    "scan-last-step": _scan_last_step,
    "scan-history": _scan_history,
    "scan-pushout": _scan_pushout,
    "fusion": _fusion,
    "inplace-update": _inplace_update,
    "inplace": _inplace,
    "profile-timers": _profile_timers,
    "ag-to-loops": _ag_to_loops,
    "parallelize": _parallelize,
    "gpu-kernels": _gpu_kernels,  # the GPU target (issue 16)
    "convert-arith-to-llvm": _arith_to_llvm,
    "convert-math-to-llvm": _math_to_llvm,
    "convert-memref-to-llvm": _memref_to_llvm,
    "convert-cf-to-llvm": _cf_to_llvm,
    "convert-func-to-llvm": _func_to_llvm,
    "convert-to-llvm": _to_llvm,
    # xDSL's passes of these names, on the same patterns, without the walker's rounds
    "convert-scf-to-cf": _scf_to_cf,
    "reconcile-unrealized-casts": _reconcile_casts,
    "merge-identical-functions": _merge_functions,
    "outline-kernels": _outline_kernels,
}

# xDSL passes that arignote's pipelines use, re-exported under their own names.
_XDSL_PASSES_USED = (
    "cse",
    "dce",
)


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every pass `arignote-opt` knows: xDSL's own plus arignote's."""
    from xdsl.transforms import get_all_passes as xdsl_passes

    passes = dict(xdsl_passes())
    passes.update(ARIGNOTE_PASSES)
    return passes
