"""Profiling compiled functions (Theano's `theano.compile.profiling`).

`function(..., profile=True)` (or `config.profile=True`) compiles a function whose
`f.profile` is a `ProfileStats`: calls and the time in `Function.__call__`, in the
compiled code and in each node, plus the compile time split into optimizer, validate
and linker time. `f.profile.summary()` prints the report (SPEC §6); every profile is
printed to stderr when the process exits.

Per-node times of native code come from timers the lowering inserts: the graph pass
`profile-timers` brackets each node with `ag.profile_begin/end`, which `ag-to-loops`
lowers into monotonic-clock reads accumulating into a global of the compiled module
(`arignote.lowering.loops.profile_timers`, read by `arignote.runtime.profiler`). Nothing runs
node by node in Python, and a function compiled without profiling has none of this code.
With the reference interpreter (`linker="py"`) the nodes are timed by an interpreter
listener. `config.profile_memory` adds the bytes each node's results take and the peak
of the intermediates; `config.profile_optimizer` times each graph pass.
"""

from __future__ import annotations

import atexit
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from arignote.compile.function import Function
from arignote.configuration import config

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.ir import Operation

    from arignote.compile.mode import Mode, Run

PROFILE_PIPELINE = "profile-timers"
"""The graph pass that brackets each node with timers (run after the mode's passes)."""


@dataclass
class NodeInfo:
    """One profiled node: its position in the toposort and how the report names it."""

    index: int
    apply: str
    """The node as `Apply` shows it: `Elemwise{add}(x, y)`."""
    op: str
    """Its op: `Elemwise{add}`."""
    op_class: str
    """The op's class: `arignote.graph.Elemwise`."""
    shape: str
    """Its results' static types."""


@dataclass
class PassRecord:
    """One graph pass run under `profile_optimizer`."""

    name: str
    time: float
    created: int
    erased: int


class _PyNodeTimer:
    """An interpreter listener timing the top-level nodes of a function."""

    def __init__(self, nodes: dict[Operation, int]):
        self.nodes = nodes
        n = len(nodes)
        self.times = np.zeros(n)
        self.calls = np.zeros(n, np.int64)
        self.bytes = np.zeros(n, np.int64)
        self._start = 0.0

    def will_interpret_op(self, op: Operation, args: Any) -> None:
        if op in self.nodes:
            self._start = time.perf_counter()

    def did_interpret_op(self, op: Operation, results: Any) -> None:
        index = self.nodes.get(op)
        if index is None:
            return
        self.times[index] += time.perf_counter() - self._start
        self.calls[index] += 1
        size = sum(np.asarray(r).nbytes for r in results)
        self.bytes[index] = max(self.bytes[index], size)


@dataclass
class ProfileStats:
    """The profile of one function, or of several (Theano's `ProfileStats`);
    `summary()` prints it.

    Times are in seconds. `atexit_print`: print the summary when the process exits.
    One `ProfileStats` passed as `profile=` to several functions adds them up, as
    Theano's does: calls, call and compile times are sums, and `nodes` lists the nodes
    of each function in turn (the first function's from index 0, the second's after
    them, ...).
    """

    atexit_print: bool = True
    message: str | None = None
    fct_callcount: int = 0
    """Calls of `Function.__call__`."""
    fct_call_time: float = 0.0
    """Time in `Function.__call__` (argument checks, the compiled code, updates)."""
    compile_time: float = 0.0
    optimizer_time: float = 0.0
    validate_time: float = 0.0
    linker_time: float = 0.0
    linker: str = ""
    """"C" (native code with timers) or "Py" (the interpreter)."""
    nodes: list[NodeInfo] = field(default_factory=list)
    optimizer_profile: list[PassRecord] = field(default_factory=list)
    last_use: list[int] = field(default_factory=list)
    """For each node, the index of the node that last reads its result (its own index
    if none; `len(nodes)` for a function output)."""
    no_node_times: str = ""
    """Why the nodes are not timed (a mode that runs them itself), or ''."""
    gpu: Any = None
    """On the GPU (`config.device=cuda`): the kernels' times (`arignote.runtime.cuda.
    KernelProfile`)."""
    _source: Any = None
    _native: Any = None
    _more: list[ProfileStats] = field(default_factory=list)
    """The profiles of the functions after the first one."""

    def __post_init__(self) -> None:
        _AT_EXIT.append(self)  # printed at exit if `atexit_print` is still on then

    # --- what the counters say ---------------------------------------------------------

    def _parts(self) -> list[ProfileStats]:
        return [self, *self._more]

    @property
    def vm_call_time(self) -> float:
        """Time in the compiled code (Theano's `Function.fn.__call__`)."""
        return sum(p._native.time for p in self._parts() if p._native is not None)

    def _own_counters(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._source is None:
            return np.zeros(n), np.zeros(n, np.int64), np.zeros(n, np.int64)
        source = self._source
        return (
            np.asarray(source.times, float),
            np.asarray(source.calls, np.int64),
            np.asarray(source.bytes, np.int64),
        )

    def node_counters(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per node, in toposort order (function after function): seconds spent in it,
        its runs and the largest total size in bytes of its results."""
        first = self._own_counters(len(self.nodes) - sum(len(m.nodes) for m in self._more))
        if not self._more:
            return first
        parts = [first] + [m._own_counters(len(m.nodes)) for m in self._more]
        return tuple(np.concatenate(column) for column in zip(*parts, strict=True))  # type: ignore[return-value]

    def absorb(self, other: ProfileStats) -> None:
        """Add the profile of another function, compiled into `other`, to this one."""
        offset = len(self.nodes)
        self.nodes += [replace(n, index=n.index + offset) for n in other.nodes]
        self.last_use += [u + offset for u in other.last_use]
        self.optimizer_profile += other.optimizer_profile
        for name in ("compile_time", "optimizer_time", "validate_time", "linker_time"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        if other.linker and other.linker not in self.linker.split("+"):
            self.linker = f"{self.linker}+{other.linker}" if self.linker else other.linker
        self.no_node_times = self.no_node_times or other.no_node_times
        self._more.append(other)

    @property
    def apply_time(self) -> dict[str, float]:
        """Seconds spent in each node (keyed by its `Apply` text and index)."""
        times = self.node_counters()[0]
        return {f"{n.index}:{n.apply}": float(t) for n, t in zip(self.nodes, times, strict=True)}

    @property
    def apply_callcount(self) -> dict[str, int]:
        calls = self.node_counters()[1]
        return {f"{n.index}:{n.apply}": int(c) for n, c in zip(self.nodes, calls, strict=True)}

    def peak_memory(self) -> int:
        """The largest total size of the results alive at once during a call (each node's
        largest results, freed after their last use; outputs stay)."""
        sizes = self.node_counters()[2]
        peak, start = 0, 0
        for length in self._lengths():
            live = 0
            freed: dict[int, int] = {}
            for index in range(start, start + length):
                live += int(sizes[index])
                peak = max(peak, live)
                last = self.last_use[index]
                freed[last] = freed.get(last, 0) + int(sizes[index])
                live -= freed.pop(index, 0)
            start += length
        return peak

    def _lengths(self) -> list[int]:
        """The number of nodes of each function profiled, in order."""
        more = [len(m.nodes) for m in self._more]
        return [len(self.nodes) - sum(more), *more]

    def summary(
        self, file: TextIO | None = None, n_ops_to_print: int = -1, n_apply_to_print: int = -1
    ) -> None:
        """Print the report (to stderr by default); `n_ops_to_print` /
        `n_apply_to_print` (default `config.profiling.n_ops` / `n_apply`) cut the lists."""
        from arignote.compile.profile_report import write_summary

        out = sys.stderr if file is None else file
        n_ops = config.profiling.n_ops if n_ops_to_print < 0 else n_ops_to_print
        n_apply = config.profiling.n_apply if n_apply_to_print < 0 else n_apply_to_print
        write_summary(self, out, n_ops, n_apply)


_AT_EXIT: list[ProfileStats] = []
IMPORTED_TIME = time.time()
"""When arignote's profiler was imported (Theano's `theano_imported_time`)."""


def print_global_stats(file: Any = None) -> None:
    """Prints, for every profile made in this process: the time since arignote was
    imported, the time spent in profiled functions' calls, and their compile time split
    into graph optimization and linking (Theano's `print_global_stats`), to `file`
    (standard error by default, Theano's default destination)."""
    parts = [part for stats in _AT_EXIT for part in stats._parts()]
    lines = [
        "=" * 50,
        "Global stats: "
        f"Time elasped since arignote import = {time.time() - IMPORTED_TIME:6.3f}s, "
        f"Time spent in arignote functions = {sum(p.fct_call_time for p in parts):6.3f}s, "
        "Time spent compiling arignote functions: "
        f"optimization = {sum(p.optimizer_time for p in parts):6.3f}s, "
        f"linker = {sum(p.linker_time for p in parts):6.3f}s ",
        "=" * 50,
    ]
    print("\n".join(lines), file=sys.stderr if file is None else file)


def _print_at_exit() -> None:
    for stats in _AT_EXIT:
        if stats.atexit_print:
            stats.summary()


atexit.register(_print_at_exit)


def profile_for(profile: Any, name: str | None) -> ProfileStats | None:
    """The `ProfileStats` that `function(profile=...)` asks for: True, a name or a
    `ProfileStats`; None/False gives `config.profile`'s choice."""
    if profile is None:
        profile = config.profile
    if profile is False:
        return None
    if profile is True:
        return ProfileStats(message=name)
    if isinstance(profile, str):
        return ProfileStats(message=profile)
    if isinstance(profile, ProfileStats):
        return profile
    raise TypeError(
        f"function: profile must be True, False, a name or a ProfileStats, got {profile!r}"
    )


# --- compiling a profiled function ----------------------------------------------------------


def _nodes(module: ModuleOp) -> list[Operation]:
    from xdsl.dialects.func import FuncOp

    from arignote.lowering.loops.profile_timers import profiled_nodes

    func = module.ops.first
    assert isinstance(func, FuncOp)
    return profiled_nodes(func)


def _node_info(index: int, op: Operation) -> NodeInfo:
    from arignote.graph import Apply

    apply = Apply(op)
    view = type(apply.op)
    shape = ", ".join(str(r.type) for r in op.results)
    try:
        text = repr(apply)
    except Exception:  # a view is a courtesy: the op name always works
        text = op.name
    return NodeInfo(index, text, str(apply.op), f"{view.__module__}.{view.__qualname__}", shape)


def _last_uses(ops: list[Operation]) -> list[int]:
    """For each node, the index of the last node reading its results (`len(ops)` when
    the function returns one; its own index when nothing reads them)."""
    from xdsl.dialects.func import ReturnOp

    index = {op: k for k, op in enumerate(ops)}
    last = list(range(len(ops)))
    for k, op in enumerate(ops):
        for use in (use for r in op.results for use in r.uses):
            user: Operation | None = use.operation
            while user is not None and user not in index and not isinstance(user, ReturnOp):
                user = user.parent_op()  # a use inside a region of a later node
            if isinstance(user, ReturnOp):
                last[k] = len(ops)
            elif user is not None:
                last[k] = max(last[k], index[user])
    return last


def _optimize(mode: Mode, module: ModuleOp, stats: ProfileStats) -> ModuleOp:
    """The mode's graph pipeline on a copy of `module`, pass by pass when
    `profile_optimizer` is on (for modes that optimize as `Mode` does)."""
    from arignote.compile.mode import Mode

    pipeline = mode.graph_pipeline()
    if not config.profile_optimizer or not pipeline or type(mode).optimize is not Mode.optimize:
        return mode.optimize(module)
    from arignote.lowering.driver import apply_pipeline_profiled, make_context

    optimized = module.clone()
    records = apply_pipeline_profiled(make_context(), optimized, pipeline)
    stats.optimizer_profile = [PassRecord(*r) for r in records]
    return optimized


def _link(mode: Mode, module: ModuleOp, optimized: ModuleOp, symbol: str, stats: ProfileStats):
    """The callable running `optimized`, instrumented per node when the mode links as
    `Mode` does; else the mode's own callable, timed as a whole."""
    from arignote.compile.mode import Mode, _on_gpu, interpret, ops_without_native_lowering

    nodes = {op: k for k, op in enumerate(_nodes(optimized))}
    if type(mode).link is not Mode.link:
        stats.no_node_times = f"{type(mode).__name__} runs the nodes itself"
        stats._native = _TimedRun(mode.link(module, optimized, symbol))
        return stats._native
    if not mode.uses_interpreter and _on_gpu() and not ops_without_native_lowering(optimized):
        gpu = mode.link_gpu(optimized, symbol)
        if gpu is not None:
            return _timed_gpu(gpu, stats)
    if mode.uses_interpreter or ops_without_native_lowering(optimized):
        if not mode.uses_interpreter:
            mode.link(module, optimized, symbol)  # linker 'c' raises here
        timer = _PyNodeTimer(nodes)
        stats.linker, stats._source = "Py", timer
        stats._native = _TimedRun(interpret(optimized, symbol, (timer,)))
        return stats._native
    return _link_native(optimized, symbol, len(nodes), stats)


def _timed_gpu(run: Run, stats: ProfileStats) -> Run:
    """A GPU function's run, its kernels timed with CUDA events into `stats.gpu`."""
    from arignote.runtime.cuda import KernelProfile

    fn = run.gpu  # type: ignore[attr-defined]
    fn.profile = stats.gpu = KernelProfile()
    stats.linker = "GPU"
    stats.no_node_times = "the function runs on the GPU: see the GPU kernels section"
    timed = stats._native = _TimedRun(run)
    timed.on_device = True  # type: ignore[attr-defined]
    timed.gpu = fn  # type: ignore[attr-defined]
    return timed


class _TimedRun:
    """A compiled function's callable, adding up the time spent in it."""

    def __init__(self, run: Run):
        self.run = run
        self.time = 0.0
        self.native: Any = None

    def __call__(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        start = time.perf_counter()
        try:
            return self.run(arrays)
        finally:
            self.time += time.perf_counter() - start


def _link_native(optimized: ModuleOp, symbol: str, n_nodes: int, stats: ProfileStats) -> Run:
    from arignote.compile.mode import native_function
    from arignote.runtime.profiler import NodeCounters

    fn = native_function(optimized, symbol, PROFILE_PIPELINE)
    stats.linker, stats._source = "C", NodeCounters(fn.native_module, symbol, n_nodes)
    timed = stats._native = _TimedRun(lambda arrays: fn(*arrays))
    if fn.fast_entry is not None:
        timed.native = _TimedNative(timed, fn.fast_entry.call)
        timed.native.release_kept = fn.release_kept  # what `Function.free` calls
    return timed


class _TimedNative:
    """What `Function` looks for on a run to call the native entry point directly
    (`run.native.fast_entry.call`): the entry point, timed into `timer`."""

    def __init__(self, timer: _TimedRun, call: Callable[..., Any]):
        def timed_call(*args: Any) -> Any:
            start = time.perf_counter()
            try:
                return call(*args)
            finally:
                timer.time += time.perf_counter() - start

        self.fast_entry = self
        self.call = timed_call


def compile_profiled(
    mode: Mode, module: ModuleOp, symbol: str, stats: ProfileStats
) -> tuple[ModuleOp, Run]:
    """Verify, optimize and link `module` as `mode` does, recording the times in
    `stats` (added to those of the functions `stats` already profiles); the optimized
    module and the instrumented callable."""
    if stats.nodes or stats._native is not None:
        part = ProfileStats(atexit_print=False)
        _AT_EXIT[:] = [s for s in _AT_EXIT if s is not part]  # `stats` prints it
        result = compile_profiled(mode, module, symbol, part)
        stats.absorb(part)
        return result
    start = time.perf_counter()
    module.verify()
    verified = time.perf_counter()
    optimized = _optimize(mode, module, stats)
    optimized_at = time.perf_counter()
    optimized.verify()
    validated = time.perf_counter()
    ops = _nodes(optimized)
    stats.nodes = [_node_info(k, op) for k, op in enumerate(ops)]
    stats.last_use = _last_uses(ops)
    described = time.perf_counter()
    run = _link(mode, module, optimized, symbol, stats)
    linked = time.perf_counter()
    stats.validate_time += (verified - start) + (validated - optimized_at)
    stats.optimizer_time += optimized_at - verified
    stats.linker_time += linked - described
    stats.compile_time += linked - start
    return optimized, run


class ProfiledFunction(Function):
    """A `Function` that counts its calls and the time they take (`f.profile`)."""

    profile: ProfileStats

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return super().__call__(*args, **kwargs)
        finally:
            self.profile.fct_call_time += time.perf_counter() - start
            self.profile.fct_callcount += 1
