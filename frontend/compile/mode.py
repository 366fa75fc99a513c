"""Compile modes: an optimizer (a graph pass pipeline, filtered by tags) and a linker
(how the optimized code runs).

A `Mode` does two things for `arignote.function`: `optimize(module)` runs its graph
pipeline on the emitted `func.func` and `link(module, optimized, symbol)` turns the
result into a callable `list[ndarray] -> list[ndarray]`. `DebugMode`
(`arignote.compile.debugmode`), `NanGuardMode` and `MonitorMode`
(`arignote.compile.monitoring`) are modes that override one or both. See docs/modes.md.

Linkers (SPEC §5): 'py' runs the reference interpreter; 'c' natively compiled code and
refuses a graph with an op that has no native lowering; 'cvm', 'vm', 'c|py' (and their
'_nogc' forms) native code, falling back to the interpreter for the whole function when
an op has no native lowering. Compiled functions allocate their intermediates per call
and keep nothing between calls, so '_nogc' behaves like the linker without it.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from arignote.configuration import FLAGS, config

if TYPE_CHECKING:
    import numpy as np
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.ir import Operation

    from arignote.runtime.native import NativeFunction

    Run = Callable[[list[np.ndarray]], list[np.ndarray]]

PY_LINKERS = ("py",)
"""Linkers that run the reference interpreter; every other linker runs native code."""

NATIVE_ONLY_LINKERS = ("c",)
"""Linkers that refuse a graph with an op that has no native lowering; the other native
linkers fall back to the interpreter for the whole function."""

_GRAPH_PIPELINES = {
    "fast_run": "fast_run",
    "fast_compile": "fast_compile",
    "None": None,
    None: None,
}


class InterpreterFallbackWarning(UserWarning):
    """A native linker runs a function with the reference interpreter: an op of it (a
    scan, say) has no native lowering."""


class MissingNativeLoweringError(NotImplementedError):
    """Linker 'c' was asked to compile a graph with an op that has no native lowering."""


def _split_tags(tags: Iterable[str]) -> tuple[str, ...]:
    out: list[str] = []
    for tag in tags:
        if not isinstance(tag, str):
            raise TypeError(f"optimizer tags must be strings, got {tag!r}")
        out.extend(t for t in tag.split(":") if t)
    return tuple(out)


def _pass_name(item: str) -> str:
    return item.split("{", 1)[0].strip()


def select_graph_passes(
    base: str, including: Iterable[str] = (), excluding: Iterable[str] = ()
) -> str:
    """The pass-spec string of graph pipeline `base` (a spec string) after tag filtering.

    A pass is named by its tags in `lowering.pipelines.PASS_TAGS` and by its own name.
    A pass of `base` stays unless one of its tags is excluded; a registered graph pass
    not in `base` is added (after the passes of `base`, in PASS_TAGS order) when one of
    its tags is included and none is excluded. Tags no pass carries are ignored, as in
    Theano; so is a tagged pass that is not registered (yet).
    """
    from arignote.lowering.pipelines import PASS_TAGS, split_pass_spec

    including, excluding = set(including), set(excluding)

    def tags(item: str) -> set[str]:
        name = _pass_name(item)
        return {name, *PASS_TAGS.get(name, ())}

    items = split_pass_spec(base)
    names = {_pass_name(i) for i in items}
    if including:
        from arignote.lowering.registry import get_all_passes

        registered = get_all_passes()
        items += [
            name
            for name in PASS_TAGS
            if name not in names and name in registered and tags(name) & including
        ]
    return ",".join(item for item in items if not tags(item) & excluding)


class Mode:
    """How `arignote.function` compiles: `Mode(linker="py")` runs the reference
    interpreter, `Mode(linker="cvm")` (the default) native code; `optimizer` is
    "fast_run", "fast_compile" or None. `including(*tags)` / `excluding(*tags)` return a
    new mode whose graph pipeline adds / drops the passes carrying those tags;
    `config.optimizer_including` / `optimizer_excluding` apply on top at compile time."""

    def __init__(self, linker: str | None = None, optimizer: Any = "default"):
        linker = config.linker if linker is None else linker
        self.linker = FLAGS["linker"].validate(linker)
        if optimizer == "default":
            optimizer = config.optimizer
        if optimizer not in _GRAPH_PIPELINES:
            raise ValueError(
                f"Mode: invalid optimizer {optimizer!r}; valid choices: "
                "'fast_run', 'fast_compile', None"
            )
        self.optimizer = _GRAPH_PIPELINES[optimizer]
        self.included: tuple[str, ...] = ()
        self.excluded: tuple[str, ...] = ()

    # --- tags ----------------------------------------------------------------------------

    def including(self, *tags: str) -> Mode:
        """A copy of this mode whose graph pipeline also runs the passes tagged `tags`."""
        new = copy.copy(self)
        new.included = self.included + _split_tags(tags)
        new.excluded = tuple(t for t in self.excluded if t not in new.included)
        return new

    def excluding(self, *tags: str) -> Mode:
        """A copy of this mode whose graph pipeline drops the passes tagged `tags`."""
        new = copy.copy(self)
        new.excluded = self.excluded + _split_tags(tags)
        new.included = tuple(t for t in self.included if t not in new.excluded)
        return new

    def graph_pipeline(self) -> str:
        """The graph pass-spec string this mode runs now: the optimizer's pipeline
        filtered by this mode's tags and `config.optimizer_including/excluding`."""
        from arignote.lowering.pipelines import GRAPH_PIPELINES

        base = GRAPH_PIPELINES.get(self.optimizer, "") if self.optimizer else ""
        including = self.included + _split_tags([config.optimizer_including])
        excluding = self.excluded + _split_tags([config.optimizer_excluding])
        spec = select_graph_passes(base, including, excluding)
        if not self.uses_interpreter and _on_gpu():
            from arignote.lowering.pipelines import gpu_graph_pipeline

            spec = gpu_graph_pipeline(spec)
        return spec

    # --- what function() asks of a mode --------------------------------------------------

    @property
    def uses_interpreter(self) -> bool:
        return self.linker in PY_LINKERS

    def optimize(self, module: ModuleOp) -> ModuleOp:
        """A copy of `module` after the graph pipeline (`module` itself if there is none)."""
        return _optimized(module, self.graph_pipeline())

    def compile(
        self,
        module: ModuleOp | Callable[[], ModuleOp],
        symbol: str,
        graph: str | None = None,
    ) -> tuple[Run, ModuleOp | Callable[[], ModuleOp]]:
        """What `arignote.function` does with the emitted `module`: verify it, `optimize`
        it and `link` the result. Returns the run and the optimized module, or, when the
        native code came from the compile cache (`arignote.compile.codecache`), a
        function computing the optimized module (only views of the graph need it).

        With `graph`, the `codecache.graph_text` of the frontend graph that emits the
        module, that text keys the compile cache and `module` may be a function emitting
        it, called on a miss only."""
        from arignote.compile import codecache

        if not self.uses_interpreter and config.malloc_tuning:
            from arignote.runtime.malloc_tuning import tune_malloc

            tune_malloc()
        emit = module if callable(module) else lambda: module
        pipeline = self.graph_pipeline()
        key = codecache.cache_key(self, None if graph is not None else emit(), pipeline, graph)
        if key is not None:
            run = codecache.load(key)
            if run is not None:  # the same IR was verified when it was stored
                gpu = getattr(run, "on_device", False)
                return run, lambda: _optimized(emit(), pipeline, symbol if gpu else None)
        module = emit()
        if not self.uses_interpreter and config.openmp and not _on_gpu():
            _prefetch_pool()
        module.verify()
        optimized = self.optimize(module)
        if config.check_ir and optimized is not module:
            optimized.verify()
        run = self.link(module, optimized, symbol)
        if key is not None:
            codecache.save(key, run)
        return run, optimized

    def link(self, module: ModuleOp, optimized: ModuleOp, symbol: str) -> Run:
        """The callable running `optimized` (`module` is the unoptimized original)."""
        if self.uses_interpreter:
            return interpret(optimized, symbol)
        missing = ops_without_native_lowering(optimized)
        if missing:
            names = ", ".join(sorted({op.name for op in missing}))
            what = f"no native lowering for {names}{_complex_note(missing)}"
            if self.linker in NATIVE_ONLY_LINKERS:
                raise MissingNativeLoweringError(
                    f"linker 'c': {what} (first: {_node(missing[0])}); "
                    "use linker 'c|py' to run such a graph with the reference interpreter"
                )
            self._warn_fallback(f"{what} (first: {_node(missing[0])})")
            return interpret(optimized, symbol)
        from arignote.lowering.loops.ag_scan import NoNativeScanError

        if _on_gpu():
            run = self.link_gpu(optimized, symbol)
            if run is not None:
                return run
        try:
            return compile_native(optimized, symbol)
        except NoNativeScanError as e:
            if self.linker in NATIVE_ONLY_LINKERS:
                raise MissingNativeLoweringError(f"linker 'c': {e}") from e
            where = "ag.scan" if e.scan is None else _node(e.scan)
            self._warn_fallback(f"{where} cannot be lowered natively: {e}")
            return interpret(optimized, symbol)

    def link_gpu(self, optimized: ModuleOp, symbol: str) -> Run | None:
        """The run of `optimized` on the GPU (`config.device`), marking its function
        (`GpuGemv`/`GpuGemm` in `f.maker.fgraph`); None, after a `DeviceFallbackWarning`
        naming why, when it has something the GPU target cannot run."""
        from arignote.compile.device import gpu_fallback
        from arignote.lowering.gpu.kernels import GpuLoweringError

        try:
            fn = gpu_function(optimized, symbol)
        except GpuLoweringError as e:
            gpu_fallback(f"function {symbol}", str(e))
            return None
        _mark_gpu(optimized, symbol)
        return gpu_run(fn)

    def _warn_fallback(self, why: str) -> None:
        """Says that a function runs on the interpreter instead of native code, and why."""
        from arignote.testvalue import user_frame

        _, level = user_frame()
        warnings.warn(
            f"linker {self.linker!r}: {why}; the whole function runs with the reference "
            "interpreter (slower). Linker 'c' makes this an error.",
            InterpreterFallbackWarning,
            stacklevel=level,
        )

    def __repr__(self) -> str:
        tags = ""
        if self.included:
            tags += f", including={self.included!r}"
        if self.excluded:
            tags += f", excluding={self.excluded!r}"
        return f"{type(self).__name__}(linker={self.linker!r}, optimizer={self.optimizer!r}{tags})"


def _optimized(module: ModuleOp, pipeline: str, gpu_symbol: str | None = None) -> ModuleOp:
    """A copy of `module` after the graph pass-spec `pipeline` (`module` if it is empty);
    with `gpu_symbol`, that function marked as compiled for the GPU (its views show
    `GpuGemv`, ...)."""
    if pipeline:
        from arignote.lowering.driver import optimize

        module = optimize(module.clone(), pipeline)
    if gpu_symbol is not None:
        _mark_gpu(module, gpu_symbol)
    return module


def _mark_gpu(module: ModuleOp, symbol: str) -> None:
    from xdsl.dialects.builtin import StringAttr
    from xdsl.dialects.func import FuncOp

    from arignote.graph import GPU_TARGET_ATTRIBUTE

    for op in module.ops:
        if isinstance(op, FuncOp) and op.sym_name.data == symbol:
            op.attributes[GPU_TARGET_ATTRIBUTE] = StringAttr(config.device)


# --- linking helpers (shared by every mode) -------------------------------------------------


def interpret(module: ModuleOp, symbol: str, listeners: Iterable[Any] = ()) -> Run:
    """`module`'s `@symbol` run by the reference interpreter."""
    from arignote.runtime.interpreter import InterpretedFunction

    interpreted = InterpretedFunction(module, symbol, tuple(listeners))
    return lambda arrays: interpreted(*arrays)


def compile_native(module: ModuleOp, symbol: str) -> Run:
    """`module`'s `@symbol` lowered to LLVM and compiled to native code. The callable's
    `native` attribute is the `NativeFunction` (whose `fast_entry` `Function` calls)."""
    return native_run(native_function(module, symbol))


def _prefetch_pool() -> None:
    """Start making the thread pool's code in the background
    (`arignote.runtime.threadpool.prefetch`) as a native compile begins, before the
    graph pipeline: started with the lowering instead, its Python half (the pool's IR)
    shared the GIL with the lowering and the README's training function waited 17-21 ms
    for it at its fork (`arignote.runtime.cpu.ForkedWork`)."""
    from arignote.runtime.threadpool import prefetch

    prefetch()


def parallel_min_work() -> int:
    """The work from which native loops run on several threads: `openmp_elemwise_minsize`
    with `config.openmp` (and a thread pool on this platform), else 0 (serial code).
    `openmp=True` where there is no thread pool warns that the loops run serially."""
    from arignote.runtime.threadpool import ThreadSettingWarning, available

    if not config.openmp:
        return 0
    if not available():
        warnings.warn(
            f"config.openmp=True (set in {config.source('openmp')}): this platform has no "
            "thread pool (it needs Linux on x86_64 or aarch64); loops run on one thread",
            ThreadSettingWarning,
            stacklevel=2,
        )
        return 0
    return config.openmp_elemwise_minsize


def loops_pipeline() -> str:
    """The loop lowering the flags ask for (`openmp`, `openmp_elemwise_minsize`)."""
    from arignote.lowering.pipelines import loops_lowering

    return loops_lowering(parallel_min_work())


def native_function(module: ModuleOp, symbol: str, graph_pipeline: str = "") -> NativeFunction:
    """`module`'s `@symbol` after `graph_pipeline`, lowered to LLVM and compiled (on a
    copy of `module`, whose prints first get their callback ids). With parallel loops
    on, the thread pool's code is made in the background meanwhile
    (`arignote.runtime.threadpool.prefetch`)."""
    from xdsl.dialects.func import FuncOp

    from arignote.compile import two_processes
    from arignote.compile.codecache import kernel_cache_directory
    from arignote.compile.progress import compile_progress
    from arignote.lowering.driver import loops_to_llvm, lower_to_loops
    from arignote.printing import register_prints
    from arignote.runtime.native import compile_function

    func = module.ops.first
    assert isinstance(func, FuncOp)
    if parallel_min_work():  # its loops may call the pool: compile it meanwhile
        _prefetch_pool()
    in_types = list(func.function_type.inputs.data)
    out_types = list(func.function_type.outputs.data)
    with compile_progress(["lowering", "LLVM"]) as progress:
        progress.stage("lowering")
        copy = register_prints(module.clone())
        lowered = lower_to_loops(copy, graph_pipeline, loops_pipeline())
        checks = lowered.checks.get(f"{symbol}__shape", [])
        aliases = _inplace_results(module, symbol)  # (`graph_pipeline` keeps the attribute)
        kernel_cache = kernel_cache_directory()
        parts = two_processes.split(lowered.module, symbol, config.glue_o0_minsize)
        if parts is None:
            code: Any = loops_to_llvm(lowered.module)
        else:  # lowered and compiled by two processes, once the entry points are made
            code = two_processes.compiler(lowered.module, parts, kernel_cache)
        progress.stage("LLVM")
        return compile_function(
            code,
            symbol,
            in_types,
            out_types,
            checks,
            aliases,
            glue_o0_minsize=config.glue_o0_minsize,
            kernel_cache=kernel_cache,
        )


def gpu_run(fn: Any) -> Run:
    """The `Run` of a `GpuFunction`: device arrays in and out (`on_device`)."""

    def run(arrays: list[Any]) -> list[Any]:
        return fn(*arrays)

    run.gpu = fn  # type: ignore[attr-defined]
    run.on_device = True  # type: ignore[attr-defined]
    return run


def _on_gpu() -> bool:
    """Whether functions compile for the GPU `config.device` names (one that works)."""
    if config.device == "cpu":
        return False
    from arignote.compile.device import use_gpu

    return use_gpu()


def gpu_function(module: ModuleOp, symbol: str) -> Any:
    """`module`'s optimized `@symbol` compiled for the GPU: host code for the CPU, PTX
    for the device's architecture (`arignote.runtime.cuda.GpuFunction`). Raises
    `GpuLoweringError` for what the GPU target cannot run."""
    from xdsl.dialects.func import FuncOp

    from arignote.lowering.driver import lower_to_gpu
    from arignote.lowering.gpu.split import SPECIAL_REGISTERS, entry_ir
    from arignote.runtime import cuda, ptx

    device = cuda.require(config.device)
    func = module.ops.first
    assert isinstance(func, FuncOp)
    in_types = list(func.function_type.inputs.data)
    out_types = list(func.function_type.outputs.data)
    lowered = lower_to_gpu(module.clone(), symbol)
    parts = lowered.parts
    source = ptx.device_ir(parts.device, [entry_ir(k) for k in parts.kernels], SPECIAL_REGISTERS)
    text = ptx.ptx(source, ptx.arch_of(device.capability))
    emulated = ptx.device_ir(parts.device, internal=False) if device.emulated else ""
    return cuda.GpuFunction.compile(
        parts.host,
        parts.launcher_ir(),
        parts.table,
        symbol,
        in_types,
        out_types,
        lowered.checks.get(f"{symbol}__shape", []),
        _inplace_results(module, symbol),
        [k.entry for k in parts.kernels],
        text,
        lowered.shape_reads.get(f"{symbol}__shape", ()),
        emulated,
        uses_blas=parts.uses_blas,
        sources=[k.source for k in parts.kernels],
        strided=[k.strided for k in parts.kernels],
    )


def _inplace_results(module: ModuleOp, symbol: str) -> dict[int, int]:
    """The `ag.inplace_results` of `@symbol` in the optimized `module` (the results the
    native runtime may compute in an input's buffer)."""
    from xdsl.dialects.func import FuncOp

    from arignote.dialects import ag

    for op in module.ops:
        if isinstance(op, FuncOp) and op.sym_name.data == symbol:
            return ag.result_pairs(op, ag.INPLACE_RESULTS_ATTRIBUTE)
    return {}


def native_run(fn: Any) -> Run:
    """The `Run` of a `NativeFunction` (with the function as its `native` attribute)."""

    def run(arrays: list[np.ndarray]) -> list[np.ndarray]:
        return fn(*arrays)

    run.native = fn  # type: ignore[attr-defined]
    return run


def ops_without_native_lowering(module: ModuleOp) -> list[Operation]:
    """The ops of `module`'s functions that `ag-to-loops` has no kernel for (`KERNELS`
    of `lowering/loops/ag_kernels.py`, with the indexing kernels of `ag_indexing.py`)."""
    from xdsl.dialects.func import FuncOp, ReturnOp

    from arignote.dialects import ag
    from arignote.lowering.loops.ag_kernels import has_kernel, touches_complex
    from arignote.lowering.loops.ag_to_loops import CONTROL_FLOW

    missing = []
    for func in module.ops:
        if not isinstance(func, FuncOp):
            continue
        for op in func.walk():
            if isinstance(op, ReturnOp) and touches_complex(op):
                missing.append(op)  # a complex input returned as it is
                continue
            if op is func or isinstance(op, ReturnOp | ag.YieldOp) or type(op) in CONTROL_FLOW:
                continue  # (the ops of a fused region must have kernels: it uses theirs)
            if op.dialect_name() != ag.Ag.name or not has_kernel(op):
                missing.append(op)
    return missing


def _complex_note(missing: list[Operation]) -> str:
    """Why ops with kernels are missing: they compute on complex tensors."""
    from arignote.lowering.loops.ag_kernels import touches_complex

    if any(touches_complex(op) for op in missing):
        return " on complex tensors (which run on the interpreter, see docs/dtypes.md)"
    return ""


def _node(op: Operation) -> str:
    from arignote.graph import Apply

    try:
        return f"{op.name} {Apply(op)!r}"
    except Exception:  # a view is a courtesy: never hide the real error behind it
        return op.name


# --- named modes ---------------------------------------------------------------------------


def _debug_mode() -> Mode:
    from arignote.compile.debugmode import DebugMode

    return DebugMode()


def _nan_guard_mode() -> Mode:
    from arignote.compile.monitoring import NanGuardMode

    return NanGuardMode()


def _monitor_mode() -> Mode:
    from arignote.compile.monitoring import MonitorMode

    return MonitorMode()


_NAMED: dict[str, Callable[[], Mode]] = {
    "FAST_RUN": lambda: Mode(optimizer="fast_run"),
    "FAST_COMPILE": lambda: Mode(optimizer="fast_compile"),
    "Mode": lambda: Mode(),
    "DebugMode": _debug_mode,
    "DEBUG_MODE": _debug_mode,
    "NanGuardMode": _nan_guard_mode,
    "MonitorMode": _monitor_mode,
}


def get_mode(mode: Any) -> Mode:
    """The `Mode` for `mode`: a Mode, a mode name, or None for `config.mode`."""
    if mode is None:
        mode = config.mode
    if isinstance(mode, Mode):
        return mode
    if isinstance(mode, str) and mode in _NAMED:
        return _NAMED[mode]()
    raise ValueError(
        f"mode: invalid value {mode!r}; expected a Mode or one of {', '.join(map(repr, _NAMED))}"
    )


def register_mode(name: str, mode: Mode) -> None:
    """Make `mode` available by `name` to `function(mode=name)` and `config.mode`
    (Theano's `register_mode`); a name already taken is a `ValueError`."""
    if name in _NAMED:
        raise ValueError(f"Mode name already taken: {name}")
    if not isinstance(mode, Mode):
        raise TypeError(f"register_mode: mode must be a Mode, got {mode!r}")
    _NAMED[name] = lambda: mode


FAST_COMPILE = Mode(optimizer="fast_compile")
"""Theano's predefined `FAST_COMPILE` mode object (`mode="FAST_COMPILE"`)."""
FAST_RUN = Mode(linker="cvm", optimizer="fast_run")
"""Theano's predefined `FAST_RUN` mode object (`mode="FAST_RUN"`)."""


def get_default_mode() -> Mode:
    """The `Mode` that `config.mode` names (Theano's `get_default_mode`)."""
    return get_mode(None)
