"""Named pass pipelines, as pass-spec strings.

The same strings serve `arignote-opt -p <name>` and `arignote.function()`; a pipeline
is data, parsed with `PassPipeline.parse_spec`.
"""

from __future__ import annotations

LOOPS_LOWERING = "ag-to-loops"
"""`ag` on tensors → `scf` loops over `memref` with `arith`/`math` (the native ABI)."""

OUTLINE_KERNELS = "outline-kernels"
"""Each distinct loop nest a kernel function of its own, compiled once
(`arignote.lowering.llvm.outline_kernels`): part of every native compile
(`loops_lowering`, `to-llvm`), not of `to-loops`, which shows the loops in place."""

PARALLELIZE = "parallelize"
"""Outlines the `ag.parallel_for` loops onto the thread pool (a no-op without them)."""


def loops_lowering(parallel_min_work: int = 0) -> str:
    """The loop lowering of a native compile: `ag-to-loops{kernel_regions=true},
    outline-kernels` (each op's kernel a function, once per distinct kernel), or with
    `parallel_min_work > 0` the lowering whose loops of at least that much work run on
    several threads (see `arignote.lowering.loops.parallel_loops`):
    `ag-to-loops{kernel_regions=true parallel_min_work=N},outline-kernels,parallelize`."""
    if parallel_min_work <= 0:
        return f"ag-to-loops{{kernel_regions=true}},{OUTLINE_KERNELS}"
    return (
        f"ag-to-loops{{kernel_regions=true parallel_min_work={parallel_min_work}}},"
        f"{OUTLINE_KERNELS},{PARALLELIZE}"
    )


GPU_LOOPS_LOWERING = "ag-to-loops{parallel_min_work=1 parallel_all=true},gpu-kernels"
"""The loops lowering of the GPU target: every loop the kernels can split is parallel,
then `gpu-kernels` makes kernels of the loops and leaves host code around them."""

GPU_EXCLUDED = ("row-fusion",)
"""Graph passes the GPU target leaves out: `ag.gemv_pair` is a CPU row kernel (one pass
over the matrix for two products, with per-thread accumulators); on the GPU the two
products are cuBLAS calls."""


def gpu_graph_pipeline(spec: str) -> str:
    """`spec` without the passes of `GPU_EXCLUDED`."""
    return ",".join(p for p in split_pass_spec(spec) if p not in GPU_EXCLUDED)


LLVM_LOWERING = "convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts"
"""Loops over memrefs → the `llvm` dialect, ready for `xdsl.backend.llvm`.

`merge-identical-functions` (each distinct outlined kernel once) is not in it yet: a
64-layer MLP compiled with it crashed in a garbage collection at the end of the process
(SIGSEGV, 2 runs of 3; none of 1 without it, nor on main), not understood yet.

`convert-to-llvm` applies the patterns of `convert-arith-to-llvm, convert-math-to-llvm,
convert-memref-to-llvm, convert-cf-to-llvm, convert-func-to-llvm` in one walk: the same
result as those five passes in a row, in 60% of the time, and with fewer casts left for
`reconcile-unrealized-casts`."""

TO_LLVM = loops_lowering() + "," + LLVM_LOWERING
"""`ag` on tensors all the way down to the `llvm` dialect."""

GRAPH_PIPELINES: dict[str, str] = {
    "fast_run": (
        "stabilize,specialize,canonicalize,cse,scan-prune,dce,scan-last-step,scan-history,"
        "softmax-xent-pair,row-fusion,fusion,inplace-update,inplace"
    ),
    "fast_compile": "canonicalize",
}
"""The graph-level (ag on tensors) part of each optimizer, run before LOOPS_LOWERING."""

PASS_TAGS: dict[str, tuple[str, ...]] = {
    "canonicalize": ("canonicalize", "fast_run", "fast_compile"),
    "stabilize": ("stabilize", "fast_run"),
    "cse": ("merge", "fast_run"),
    "specialize": ("specialize", "fast_run"),
    "scan-prune": ("scan", "fast_run"),
    "dce": ("scan", "fast_run"),
    "scan-pushout": ("scan", "scan_pushout"),  # opt-in: not in fast_run (docs/passes.md)
    "scan-last-step": ("scan", "fast_run"),
    "scan-history": ("scan", "fast_run"),
    "softmax-xent-pair": ("softmax_xent_pair", "fast_run"),  # nnet functions (issue 14)
    "row-fusion": ("row_fusion", "fast_run"),
    "fusion": ("fusion", "fast_run"),
    "inplace-update": ("inplace", "fast_run"),
    "inplace": ("inplace", "fast_run"),
}
"""Graph pass name → its tags (Theano's optimizer tags), for `Mode.including/excluding`
and `config.optimizer_including/excluding`. A pass is also named by its own name. A
graph pass not in a mode's pipeline runs when one of its tags is included; a tag no
pass carries (`gpu`, ...) is accepted and ignored, as Theano does."""


def _with_lowering(graph: str) -> str:
    return f"{graph},{TO_LLVM}" if graph else TO_LLVM


PIPELINES: dict[str, tuple[str, str]] = {
    "to-loops": (LOOPS_LOWERING, "ag on tensors to scf loops over memrefs"),
    "to-llvm": (
        TO_LLVM,
        "ag on tensors to the llvm dialect (to-loops, outline-kernels, the LLVM lowering)",
    ),
    "to-gpu": (
        GPU_LOOPS_LOWERING + "," + "convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts",
        "ag on tensors to host code and kernels in the llvm dialect (--emit=ptx prints PTX)",
    ),
    "fast_compile": (
        _with_lowering(GRAPH_PIPELINES["fast_compile"]),
        "Theano's FAST_COMPILE mode: canonicalize (cheap), then to-llvm",
    ),
    "fast_run": (
        _with_lowering(GRAPH_PIPELINES["fast_run"]),
        "Theano's FAST_RUN mode: graph rewrites (stabilize ... inplace), then to-llvm",
    ),
}
"""Named pipelines: name → (pass-spec string, one-line description).

A spec names passes only, never another pipeline, so that `PassPipeline.parse_spec`
takes it as is; `expand_pipeline_names` turns a spec that mixes pipeline and pass names
(`cse,to-llvm`) into such a string.
"""


def split_pass_spec(spec: str) -> list[str]:
    """The top-level comma-separated items of a pass-spec string.

    Commas inside `{...}` options or quoted strings do not split:
    `a{x=1,2},b` → `["a{x=1,2}", "b"]`.
    """
    items: list[str] = []
    depth = 0
    quote = False
    start = 0
    for i, ch in enumerate(spec):
        if quote:
            quote = ch != '"'
        elif ch == '"':
            quote = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(spec[start:i])
            start = i + 1
    items.append(spec[start:])
    return [item.strip() for item in items if item.strip()]


def expand_pipeline_names(spec: str, pipelines: dict[str, tuple[str, str]] | None = None) -> str:
    """`spec` with every item that names a pipeline replaced by that pipeline's passes.

    `expand_pipeline_names("cse,to-loops")` → `"cse,ag-to-loops"`. Items with options
    (`name{...}`) are passes, never pipelines. A name is looked up as a pipeline first.
    """
    table = PIPELINES if pipelines is None else pipelines
    expanded: list[str] = []
    for item in split_pass_spec(spec):
        if item in table:
            expanded.extend(split_pass_spec(table[item][0]))
        else:
            expanded.append(item)
    return ",".join(expanded)
