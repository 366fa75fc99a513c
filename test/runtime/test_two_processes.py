"""A large function is lowered and compiled from the loops on by two processes
(`arignote.compile.two_processes`, `arignote.lowering.function_parts`): a forked child
takes the shape function and some kernels, this process the function and the others,
and the objects are loaded into one engine. The results are those of a compile in one
process, bit for bit, with and without the kernel cache, and whatever the child does."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import ModuleOp

import arignote
import arignote.tensor as T
from arignote.compile import two_processes
from arignote.configuration import change_flags
from arignote.lowering import function_parts
from arignote.lowering.driver import lower_to_loops
from arignote.lowering.pipelines import GRAPH_PIPELINES, loops_lowering
from arignote.runtime import cache as compile_cache
from arignote.runtime import cpu, kernelcache

pytestmark = pytest.mark.skipif(not cpu._fork_parts(), reason="no fork, or one core")


def mlp_step(layers: int, width: int = 16) -> tuple[arignote.Function, list]:
    """An MLP training step (tanh layers, softmax, cross-entropy, SGD) and its
    parameters, compiled with the flags in force."""
    rng = np.random.default_rng(0)
    x, y = T.matrix("x"), T.ivector("y")
    h, params = x, []
    for i in range(layers):
        params += [
            arignote.shared(rng.standard_normal((width, width)) * 0.3, name=f"W{i}"),
            arignote.shared(rng.standard_normal(width) * 0.1, name=f"b{i}"),
        ]
        h = T.tanh(T.dot(h, params[-2]) + params[-1])
    cost = -T.mean(T.log(T.nnet.softmax(h))[T.arange(y.shape[0]), y])
    grads = T.grad(cost, params)
    updates = [(p, p - 0.1 * g) for p, g in zip(params, grads, strict=True)]
    return arignote.function([x, y], cost, updates=updates), params


def rnn_step(layers: int) -> tuple[arignote.Function, list]:
    """A scan RNN's training step (the loop in the glue, the step's kernels outlined)."""
    rng = np.random.default_rng(1)
    x = T.tensor3("x")
    params = [arignote.shared(rng.standard_normal((8, 8)) * 0.3) for _ in range(layers)]

    def step(x_t, h, *ws):
        for w in ws:
            h = T.tanh(T.dot(h, w) + x_t)
        return h

    hs, _ = arignote.scan(
        step, sequences=x, outputs_info=T.zeros((x.shape[1], 8)), non_sequences=params
    )
    cost = (hs[-1] ** 2).sum()
    grads = T.grad(cost, params)
    updates = [(p, p - 0.05 * g) for p, g in zip(params, grads, strict=True)]
    return arignote.function([x], cost, updates=updates), params


def mlp_data():
    rng = np.random.default_rng(5)
    return rng.standard_normal((7, 16)), rng.integers(0, 16, 7).astype("int32")


def run(f: arignote.Function, params: list, *inputs, steps: int = 3) -> list[np.ndarray]:
    costs = [np.asarray(f(*inputs)) for _ in range(steps)]
    return costs + [p.get_value() for p in params]


@pytest.fixture
def forks(monkeypatch):
    """Every function with a shape function is split (`MIN_COST` 0, the glue apart);
    the pids of the children that `compile_in_two` forks are recorded."""
    monkeypatch.setattr(function_parts, "MIN_COST", 0.0)
    pids: list[int] = []
    start = cpu.ForkedWork.start.__func__

    def recorded(cls, work):
        child = start(cls, work)
        if child is not None and cls is cpu.ForkedWork:
            pids.append(child.pid)
        return child

    monkeypatch.setattr(cpu.ForkedWork, "start", classmethod(recorded))
    return pids


def whole(build, *args):
    """`build(*args)` compiled in one process (the glue apart, as a split one's is)."""
    two_processes.ENABLED = False
    try:
        with change_flags(glue_o0_minsize=0, compile_cache=False):
            return build(*args)
    finally:
        two_processes.ENABLED = True


@pytest.mark.parametrize("glue", [0, 10**9], ids=["glue-apart", "glue-o3"])
@pytest.mark.parametrize("cache", [False, True], ids=["no-cache", "kernel-cache"])
def test_a_split_compile_computes_what_one_process_does(forks, cache, glue, tmp_path):
    """With its glue apart (large: each part's glue apart too, at O0) or not (each part's
    glue with its kernels, at O3), with the kernel cache or without."""
    with change_flags(glue_o0_minsize=glue, compile_cache=cache, compiledir=str(tmp_path)):
        f, params = mlp_step(3)
        r, rparams = rnn_step(3)
    assert len(forks) == 2 and os.getpid() not in forks
    g, gparams = whole(mlp_step, 3)
    s, sparams = whole(rnn_step, 3)
    for a, b in zip(run(f, params, *mlp_data()), run(g, gparams, *mlp_data()), strict=True):
        np.testing.assert_array_equal(a, b)
    x = np.random.default_rng(2).standard_normal((5, 4, 8))
    for a, b in zip(run(r, rparams, x), run(s, sparams, x), strict=True):
        np.testing.assert_array_equal(a, b)
    native = f._compiled.run.native.native_module
    assert len(cpu.unpack_objects(native.object_code)) >= 2  # (both parts' objects)
    assert "fn_main__shape" in native.llvm_ir and "@fn_main(" in native.llvm_ir.replace('"', "")
    # every symbol one part declares and the other defines is resolved between them: the
    # code is fit for the compile cache (a dangling declaration made it uncacheable)
    assert not [name for name in native.imports if name.startswith("fn_main")]
    assert compile_cache.portable(native.imports)


def test_the_kernel_cache_serves_both_parts(forks, monkeypatch, tmp_path):
    """A second function that shares kernels with a first takes them from the kernel
    cache (in either process: the one that loads a batch defines its groups for both);
    the compile cache then serves the function whole."""
    original = cpu.NativeModule.from_parts.__func__
    loaded = []

    def recorded(cls, parts):
        loaded.append([part.batches for part in parts])
        return original(cls, parts)

    monkeypatch.setattr(cpu.NativeModule, "from_parts", classmethod(recorded))
    with change_flags(glue_o0_minsize=0, compile_cache=True, compiledir=str(tmp_path)):
        mlp_step(3)
        f, params = mlp_step(4)
    assert len(forks) == 2 and len(loaded) == 2
    assert loaded[0] == [(), ()]  # (an empty kernel cache)
    assert any(loaded[1])  # the child's part or this one's: kernels of the first step
    g, gparams = whole(mlp_step, 4)
    for a, b in zip(run(f, params, *mlp_data()), run(g, gparams, *mlp_data()), strict=True):
        np.testing.assert_array_equal(a, b)
    from arignote.runtime import cachefile

    hits = cachefile.STATS["hit"]
    with change_flags(glue_o0_minsize=0, compile_cache=True, compiledir=str(tmp_path)):
        h, hparams = mlp_step(4)  # (a new process would load this entry)
    # the code that loaded kernels of the first step was cacheable: every kernel symbol
    # one part calls is defined by the other's objects (a batch's other groups included)
    assert cachefile.STATS["hit"] == hits + 1
    g, gparams = whole(mlp_step, 4)
    for a, b in zip(run(h, hparams, *mlp_data()), run(g, gparams, *mlp_data()), strict=True):
        np.testing.assert_array_equal(a, b)


def test_the_childs_cache_counts_are_added_here(forks, tmp_path):
    """The kernel cache's and the cache files' counts of a split compile (`_Counts`: the
    child's sent back with its part) are those of a compile in one process."""
    from arignote.runtime import cachefile

    def counts(directory) -> tuple[dict, dict]:
        kernels, files = dict(kernelcache.STATS), dict(cachefile.STATS)
        with change_flags(glue_o0_minsize=0, compile_cache=True, compiledir=str(directory)):
            mlp_step(3)
            mlp_step(4)  # (kernels of the first reused)
        return (
            {k: n - kernels.get(k, 0) for k, n in kernelcache.STATS.items()},
            {k: n - files.get(k, 0) for k, n in cachefile.STATS.items() if n - files.get(k, 0)},
        )

    split = counts(tmp_path / "split")
    assert len(forks) == 2
    two_processes.ENABLED = False
    try:
        single = counts(tmp_path / "single")
    finally:
        two_processes.ENABLED = True
    assert len(forks) == 2
    assert split[0]["reused"] > 0 and split[0]["compiled"] > 0
    assert split == single, (split, single)


@pytest.mark.parametrize("working", [True, False], ids=["child-working", "child-done"])
def test_the_young_garbage_is_collected_while_the_child_works(forks, monkeypatch, working):
    """The compile's garbage is collected while this process waits for a child still at
    work (`_collect_young`), not when the child is done (the wait is over: the
    collector's next run does it, as after any compile)."""
    monkeypatch.setattr(cpu.ForkedWork, "running", lambda self: working)
    collected = []
    young = two_processes._collect_young
    monkeypatch.setattr(two_processes, "_collect_young", lambda: collected.append(young()))
    with change_flags(compile_cache=False):
        f, params = mlp_step(2)
    assert len(forks) == 1 and len(collected) == (1 if working else 0)
    g, gparams = whole(mlp_step, 2)
    for a, b in zip(run(f, params, *mlp_data()), run(g, gparams, *mlp_data()), strict=True):
        np.testing.assert_array_equal(a, b)


def _trouble(monkeypatch, when: str, tmp_path) -> None:
    """Compile split MLP steps whose child fails or sleeps (`when`: before it names its
    kernels, or after), with the kernel cache; they must compute what one process does."""
    parent = os.getpid()
    original = cpu.compile_part

    def troubled(*args, **kwargs):
        send = kwargs.get("send") if "send" in kwargs else (args[5] if len(args) > 5 else None)
        if os.getpid() != parent and send is not None:
            if when == "stuck":
                time.sleep(3600)
            if when == "before":
                raise RuntimeError("the child fails before it names its kernels")

            def send_then_fail(value):
                send(value)
                raise RuntimeError("the child fails after it named its kernels")

            args = (*args[:5], send_then_fail, *args[6:])
        return original(*args, **kwargs)

    monkeypatch.setattr(cpu, "compile_part", troubled)
    here = []
    part_compile = two_processes._ChildPart.compile

    def recorded(self, kernel_cache, send=None):
        if os.getpid() == parent:
            here.append(kernel_cache)
        return part_compile(self, kernel_cache, send)

    monkeypatch.setattr(two_processes._ChildPart, "compile", recorded)
    with change_flags(glue_o0_minsize=0, compile_cache=True, compiledir=str(tmp_path)):
        f, params = mlp_step(3)
    assert len(here) == 1 and here[0] is not None  # (the child's part, done here)
    g, gparams = whole(mlp_step, 3)
    for a, b in zip(run(f, params, *mlp_data()), run(g, gparams, *mlp_data()), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_failed_child_leaves_its_part_here(forks, monkeypatch, when, tmp_path):
    _trouble(monkeypatch, when, tmp_path)
    assert len(forks) == 1


def test_a_stuck_child_is_killed_and_its_part_compiled_here(forks, monkeypatch, tmp_path):
    monkeypatch.setattr(cpu, "CHILD_MIN_WAIT", 0.5)
    monkeypatch.setattr(cpu, "CHILD_PATIENCE", 1.0)
    start = time.monotonic()
    _trouble(monkeypatch, "stuck", tmp_path)
    assert time.monotonic() - start < 600  # (a hang guard: the point is no hang)


def test_a_load_that_fails_with_the_kernel_cache_is_compiled_without_it(
    forks, monkeypatch, tmp_path
):
    """An engine that refuses the kernel cache's objects: the batches are deleted and
    the function compiled again without the kernel cache."""
    with change_flags(glue_o0_minsize=0, compile_cache=True, compiledir=str(tmp_path)):
        mlp_step(3)
    stored = len(list(tmp_path.rglob("*.agb")))
    assert stored
    original = cpu.NativeModule.from_parts.__func__
    refused = []

    def refuse(cls, parts):
        if any(p.batches for p in parts):
            refused.append(True)
            raise RuntimeError("an object LLVM refuses")
        return original(cls, parts)

    monkeypatch.setattr(cpu.NativeModule, "from_parts", classmethod(refuse))
    fallbacks = kernelcache.STATS["fallback"]
    with change_flags(glue_o0_minsize=0, compile_cache=True, compiledir=str(tmp_path)):
        f, params = mlp_step(4)
    assert refused and kernelcache.STATS["fallback"] == fallbacks + 1
    assert len(list(tmp_path.rglob("*.agb"))) < stored  # (the batches it refused: gone)
    g, gparams = whole(mlp_step, 4)
    for a, b in zip(run(f, params, *mlp_data()), run(g, gparams, *mlp_data()), strict=True):
        np.testing.assert_array_equal(a, b)


def loops_module(layers: int) -> ModuleOp:
    """The loops-level module of an MLP step (`lower_to_loops`)."""
    with change_flags(compile_cache=False):
        f, _ = mlp_step(layers)
    module = f._compiled.module.clone()
    return lower_to_loops(module, GRAPH_PIPELINES["fast_run"], loops_lowering()).module


def test_split_functions_parts_the_functions_in_whole_groups():
    module = loops_module(4)
    split = function_parts.split_functions(module, "fn_main", min_cost=0)
    assert split is not None
    defined = function_parts.defined_functions(module)
    assert split.child | split.parent == defined.keys() and not split.child & split.parent
    assert "fn_main__shape" in split.child and "fn_main" in split.parent
    names = frozenset(defined)
    for name, function in defined.items():
        refs, _ = function_parts.measure(function, names)
        side, other = (
            (split.child, split.parent) if name in split.child else (split.parent, split.child)
        )
        crossing = refs & other
        if name not in ("fn_main", "fn_main__shape"):
            assert not crossing, f"{name} (a kernel) calls {crossing} in the other part"
        exports = split.child_exports if other is split.child else split.parent_exports
        assert crossing <= exports
    assert split.child_exports  # (the child has kernels that @fn_main calls)
    weights = {name: function_parts.measure(f, names)[1] for name, f in defined.items()}
    assert weights["fn_main"] > 0 and split.glue_ops > 0
    assert function_parts.split_functions(module, "fn_main", min_cost=10**9) is None
    assert function_parts.split_functions(module, "no_such_function", min_cost=0) is None


def test_keep_only_declares_the_rest_and_part_module_takes_it():
    module = loops_module(2)
    split = function_parts.split_functions(module, "fn_main", min_cost=0)
    assert split is not None
    removed = function_parts.keep_only(module, split.parent, split.child_exports)
    assert {op.sym_name.data for op in removed} == split.child
    assert function_parts.defined_functions(module).keys() == split.parent
    spare = function_parts.part_module(module, removed, split.parent_exports)
    assert function_parts.defined_functions(spare).keys() == split.child

    def declared(m):
        return {
            op.sym_name.data
            for op in m.ops
            if isinstance(op, func.FuncOp | llvm.FuncOp) and not op.body.blocks
        }

    # only what the part calls of the other is declared
    assert declared(module) & split.child == split.child_exports
    assert declared(spare) & split.parent == split.parent_exports
    module.verify()
    spare.verify()


def test_forked_work_sends_a_message_and_a_result():
    def work(send):
        send({"a": 1})
        return [1, 2, 3]

    child = cpu.ForkedWork.start(work)
    assert child is not None
    assert child.message() == {"a": 1}
    assert child.result() == [1, 2, 3]
    assert not child.running()  # (reaped)

    release = os.pipe()

    def waits(send):
        os.read(release[0], 1)  # until this process writes
        return "done"

    child = cpu.ForkedWork.start(waits)
    assert child is not None
    try:
        assert child.running()
    finally:
        os.write(release[1], b"x")
    deadline = time.monotonic() + 60
    while child.running() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not child.running()  # exited, not reaped: its result is still there
    assert child.result() == "done"
    for descriptor in release:
        os.close(descriptor)

    def fails(send):
        raise RuntimeError("no")

    child = cpu.ForkedWork.start(fails)
    assert child is not None
    assert child.message() is None and child.result() is None

    def sends_twice(send):
        send(1)
        send(2)

    child = cpu.ForkedWork.start(sends_twice)
    assert child is not None
    assert child.message() == 1 and child.result() is None


def test_a_fork_while_the_pool_compiles_in_the_background_does_not_deadlock():
    """`ForkedWork` forks holding llvmlite's lock, and the fork hook waits for the thread
    pool's background compile (`threadpool.prefetch`), which takes that lock: the fork
    must wait for the compile first (it once deadlocked, silently, both threads waiting
    on a futex). In a new process, with a stand-in for the background compile that takes
    llvmlite's lock a moment after the fork starts."""
    import subprocess
    import sys

    code = """
import threading, time
from llvmlite.binding import ffi
from arignote.runtime import cpu, threadpool

def compile_in_background():
    time.sleep(0.3)
    with ffi.lib._lock:
        time.sleep(0.1)

class Job:
    thread = threading.Thread(target=compile_in_background)

threadpool._prefetch = Job()
threadpool._register_hooks()
Job.thread.start()
child = cpu.ForkedWork.start(lambda send: 42)
print(child.result())
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "42"
