"""A native function whose glue is large is compiled as two objects
(`arignote.runtime.cpu.split_ir_texts`): its kernels at O3, its glue (shape arithmetic,
allocations, kernel calls) unoptimised. `config.glue_o0_minsize` sets the size. With
two cores, the kernels of a large enough module are also split into two halves, one
compiled in a forked child (`arignote.runtime.cpu.ir_parts`)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.compile import two_processes
from arignote.configuration import change_flags
from arignote.runtime import cpu

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def mlp_step(layers: int, seed: int = 0) -> tuple[arignote.Function, list]:
    """An MLP training step (`layers` tanh layers of 16 units, softmax, cross-entropy,
    SGD updates), compiled with the flags in force, and its parameters."""
    rng = np.random.default_rng(seed)
    x, y = T.matrix("x"), T.ivector("y")
    h, params = x, []
    for i in range(layers):
        params += [
            arignote.shared(rng.standard_normal((16, 16)) * 0.3, name=f"W{i}"),
            arignote.shared(rng.standard_normal(16) * 0.1, name=f"b{i}"),
        ]
        h = T.tanh(T.dot(h, params[-2]) + params[-1])
    cost = -T.mean(T.log(T.nnet.softmax(h))[T.arange(y.shape[0]), y])
    grads = T.grad(cost, params)
    updates = [(p, p - 0.1 * g) for p, g in zip(params, grads, strict=True)]
    return arignote.function([x, y], cost, updates=updates), params


@pytest.fixture(autouse=True)
def one_process_lowering(monkeypatch):
    """These tests are of a module lowered whole in one process (its LLVM maybe split
    in halves): not split from the loops on (`arignote.compile.two_processes`, which
    takes large functions on two cores; test_two_processes.py)."""
    monkeypatch.setattr(two_processes, "ENABLED", False)


def native_module(f: arignote.Function) -> cpu.NativeModule:
    return f._compiled.run.native.native_module


def train(f: arignote.Function, params: list, steps: int = 3) -> list[np.ndarray]:
    """The costs of `steps` steps on one batch, then the parameters."""
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((7, 16)), rng.integers(0, 16, 7).astype("int32")
    costs = [np.asarray(f(x, y)) for _ in range(steps)]
    return costs + [p.get_value() for p in params]


@pytest.fixture
def no_halves(monkeypatch):
    """Kernels not split into halves, whatever the cores (`PARALLEL_MIN_INSTRUCTIONS`)."""
    monkeypatch.setattr(cpu, "PARALLEL_MIN_INSTRUCTIONS", 10**9)


def test_split_and_whole_compute_the_same(monkeypatch):
    """The glue holds no floating-point arithmetic that optimisation could change (the
    reductions are kernels, `outline-kernels`), so the split module's costs and updated
    parameters are those of the whole module, bit for bit."""
    with change_flags(glue_o0_minsize=0, compile_cache=False):
        split = mlp_step(4)
    monkeypatch.setattr(cpu, "PARALLEL_MIN_INSTRUCTIONS", 10**9)
    with change_flags(glue_o0_minsize=10**9, compile_cache=False):
        whole = mlp_step(4)
    assert native_module(split[0]).object_code.startswith(cpu.OBJECTS_MAGIC)
    assert native_module(whole[0]).object_code.startswith(b"\x7fELF")
    for a, b in zip(train(*split), train(*whole), strict=True):
        np.testing.assert_array_equal(a, b)


def test_only_a_large_glue_is_split():
    """The default sizes keep small functions whole (their glue at O3 too); a deep
    network's glue is compiled apart, and its kernels' objects (one, or two halves with
    two cores) define what the glue's declares. (In one process: with two cores, such a
    function is split earlier, from the loops on, test_two_processes.py.)"""
    x = T.dvector("x")
    small = arignote.function([x], T.tanh(x) * 2)
    assert small(np.ones(2)).shape == (2,)
    assert native_module(small).object_code.startswith(b"\x7fELF")
    with change_flags(compile_cache=False):
        deep, _ = mlp_step(48)
    module = native_module(deep)
    objects = cpu.unpack_objects(module.object_code)
    assert len(objects) == (3 if cpu._fork_parts() else 2)
    assert all(o.startswith(b"\x7fELF") for o in objects)
    texts = module.llvm_ir.split("; ModuleID")[1:]  # the kernels' modules, the glue's
    kernel_defs = [cpu._defined_names(t) for t in texts[:-1]]
    glue_defs = cpu._defined_names(texts[-1])
    assert "fn_main" in glue_defs and "fn_main__shape" in glue_defs
    assert not set().union(*kernel_defs) & glue_defs
    if len(kernel_defs) == 2:
        assert kernel_defs[0] and kernel_defs[1] and not kernel_defs[0] & kernel_defs[1]
    declared = set(re.findall(r'^declare [^@]*@"?([^"(]+)"?\(', texts[-1], re.MULTILINE))
    for defs in kernel_defs:
        assert declared & defs  # the glue calls kernels of each
    assert not any(name.startswith("fn_main") for name in module.imports)  # linked


def _back_edges(llvm_ir: str) -> dict[str, list[list[str]]]:
    """Per function of an LLVM IR text, the lines of each loop (a branch to a block
    defined earlier, from there to the branch)."""
    loops: dict[str, list[list[str]]] = {}
    name, lines, labels = "", [], {}
    for line in llvm_ir.splitlines():
        if m := re.match(r'define [^@]*@"?([^"(]+)"?\(', line):
            name, lines, labels = m.group(1), [], {}
            continue
        lines.append(line)
        if m := re.match(r'^"?([\w.$]+)"?:', line):
            labels[m.group(1)] = len(lines) - 1
        for target in re.findall(r'label %"?([\w.$]+)"?', line):
            if target in labels:
                loops.setdefault(name, []).append(lines[labels[target] :])
    return loops


@pytest.mark.parametrize("which", ["mlp", "lstm"])
def test_the_glue_has_no_loops_but_the_failure_path(which):
    """Compiled unoptimised, the glue must not hold the work: every loop of a deep MLP's
    and of the LSTM example's glue (a scan's loop of steps aside, whose body calls the
    kernels) is the one freeing the buffers after a failed allocation."""
    with change_flags(glue_o0_minsize=0, compile_cache=False):
        if which == "mlp":
            f, _ = mlp_step(6)
        else:
            sys.path.insert(0, str(EXAMPLES))
            import lstm

            f, _ = lstm.build(np.random.default_rng(0), "cvm")
    texts = native_module(f).llvm_ir.split("; ModuleID")
    assert len(texts) >= 3  # "", the kernels' module(s), the glue's
    for function, loops in _back_edges(texts[-1]).items():
        for loop in loops:
            body = "\n".join(loop)
            frees = 'call ccc void @"free"' in body
            calls_kernels = re.search(r'call ccc \S+ @"fn_main__[kr]\d+"', body)
            assert frees or (which == "lstm" and calls_kernels), (function, body[:3000])


def test_a_split_function_is_cached_and_loaded(tmp_path):
    """The compile cache stores both objects (`pack_objects`); a new compile of the same
    graph loads them and runs."""
    with change_flags(glue_o0_minsize=0, compile_cache=True, compiledir=str(tmp_path)):
        first, params = mlp_step(3)
        expected = train(first, params, 1)
        again, params = mlp_step(3)
        assert again._compiled.run.native.native_module.llvm_ir is None  # from the cache
        assert native_module(again).object_code.startswith(cpu.OBJECTS_MAGIC)
        for a, b in zip(train(again, params, 1), expected, strict=True):
            np.testing.assert_array_equal(a, b)


def test_packed_objects_round_trip():
    parts = [b"\x7fELF one", b"\x7fELF two, longer"]
    packed = cpu.pack_objects(parts)
    assert cpu.unpack_objects(packed) == parts
    assert cpu.pack_objects(parts[:1]) == parts[0]
    assert cpu.unpack_objects(parts[0]) == parts[:1]
    with pytest.raises(ValueError, match="not whole"):
        cpu.unpack_objects(packed[:-1])


def test_the_kernels_compile_in_a_child_process_with_the_same_code(monkeypatch):
    """With more than one core (Linux), half the kernels' object is compiled in a forked
    child while the rest is compiled here (`_ForkedCompile`): the objects are byte for
    byte those of compiling them all here."""
    import os

    if not cpu._fork_parts():
        pytest.skip("no fork, no memfd_create, or one core")
    pids = []
    original = cpu._ForkedCompile.__init__

    def recorded(self, llvm_ir):
        original(self, llvm_ir)
        pids.append(self.pid)

    monkeypatch.setattr(cpu._ForkedCompile, "__init__", recorded)
    with change_flags(glue_o0_minsize=0, compile_cache=False):
        forked, _ = mlp_step(3)
    assert len(pids) == 1 and pids[0] != os.getpid()
    monkeypatch.setattr(cpu._ForkedCompile, "start", classmethod(lambda cls, llvm_ir: None))
    with change_flags(glue_o0_minsize=0, compile_cache=False):
        here, _ = mlp_step(3)
    assert len(pids) == 1
    assert native_module(forked).object_code == native_module(here).object_code


def _child_trouble_leaves_the_work_here(monkeypatch, in_the_child) -> None:
    """Compile a split MLP step whose forked child runs `in_the_child()` before its
    compile, then the same step whole without it: the first must work, and its costs and
    parameters are those of the second, bit for bit."""
    import os

    parent = os.getpid()
    compile_ = cpu._compile

    def compile_with_trouble(*args, **kwargs):
        if os.getpid() != parent:
            in_the_child()
        return compile_(*args, **kwargs)

    monkeypatch.setattr(cpu, "_compile", compile_with_trouble)
    with change_flags(glue_o0_minsize=0, compile_cache=False):
        f, params = mlp_step(3)
    monkeypatch.setattr(cpu, "_compile", compile_)
    with change_flags(glue_o0_minsize=10**9, compile_cache=False):
        g, params_g = mlp_step(3)
    for a, b in zip(train(f, params), train(g, params_g), strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_failed_child_compile_is_done_here(monkeypatch):
    """A child that fails (here: its compile raises) exits non-zero; the kernels are then
    compiled in this process and the function works."""
    if not cpu._fork_parts():
        pytest.skip("no fork, no memfd_create, or one core")

    def fails() -> None:
        raise RuntimeError("the child's compile fails")

    _child_trouble_leaves_the_work_here(monkeypatch, fails)


def test_a_stuck_child_is_killed_and_its_part_compiled_here(monkeypatch):
    """A child that does not finish (here: its compile sleeps) is killed once the parent
    has waited `CHILD_PATIENCE` times its own part's time (at least `CHILD_MIN_WAIT`);
    the parent then compiles the part itself, and the function works."""
    import time

    if not cpu._fork_parts():
        pytest.skip("no fork, no memfd_create, or one core")
    monkeypatch.setattr(cpu, "CHILD_MIN_WAIT", 0.5)
    monkeypatch.setattr(cpu, "CHILD_PATIENCE", 1.0)
    start = time.monotonic()
    _child_trouble_leaves_the_work_here(monkeypatch, lambda: time.sleep(3600))
    assert time.monotonic() - start < 600  # (a hang guard: the test's point is no hang)


def test_exits_within_waits_without_reaping():
    import os
    import subprocess

    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert not cpu._exits_within(sleeper.pid, 0.2)
    finally:
        sleeper.kill()
    assert cpu._exits_within(sleeper.pid, 30)
    assert sleeper.wait(timeout=30) != 0  # not reaped by the check: its status is here
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os._exit(0)
    assert cpu._exits_within(pid, 30)
    assert os.waitpid(pid, 0)[1] == 0


def test_no_fork_beside_mpi(monkeypatch):
    """A process that imported `mpi4py.MPI` compiles both parts itself."""
    import types

    monkeypatch.setattr(cpu, "FORK_PARTS", True)
    monkeypatch.setitem(sys.modules, "mpi4py.MPI", types.ModuleType("mpi4py.MPI"))
    assert not cpu._fork_parts()


def test_children_reaped_elsewhere_leave_the_work_here():
    """With SIGCHLD ignored the system reaps children itself and `waitpid` fails: the
    child's result cannot be trusted, so the kernels are compiled here; in a new
    process (the signal disposition is the process's)."""
    import subprocess

    script = f"""
import signal, sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
from test_split_glue import mlp_step, train, native_module, change_flags, cpu
with change_flags(glue_o0_minsize=0, compile_cache=False):
    f, params = mlp_step(2)
print(native_module(f).object_code.startswith(cpu.OBJECTS_MAGIC), train(f, params, 1)[0])
"""
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split()[0] == "True"


def test_fork_hooks_warnings_do_not_reach_the_user():
    """A library's fork hook that warns (JAX's warns that the child must not use JAX)
    says nothing during the forked compile: the child runs LLVM only. In a new process:
    the hook stays registered for the process's life."""
    import subprocess

    if not cpu._fork_parts():
        pytest.skip("no fork, no memfd_create, or one core")
    script = f"""
import os, sys, warnings
sys.path.insert(0, {str(Path(__file__).parent)!r})
warnings.simplefilter("error")
def hook():
    warnings.warn("os.fork() was called: a library's hook", RuntimeWarning, stacklevel=2)
os.register_at_fork(before=hook)
from test_split_glue import mlp_step, train, change_flags
with change_flags(glue_o0_minsize=0, compile_cache=False):
    f, params = mlp_step(2)
print(train(f, params, 1)[0])
"""
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "a library's hook" not in out.stderr, out.stderr[-3000:]


@pytest.mark.parametrize("value", [-1, "lots", 1.5])
def test_a_bad_glue_size_is_refused(value):
    with pytest.raises(ValueError, match=r"glue_o0_minsize: invalid value .* an integer >= 0"):
        with change_flags(glue_o0_minsize=value):
            pass


def test_the_glue_size_is_in_the_cache_key(tmp_path):
    """The flag changes the code, so a function compiled with another size is not
    taken from the cache."""
    from arignote.compile import Mode, codecache

    x = T.dvector("x")
    module = arignote.function([x], T.tanh(x), mode=Mode(linker="py"))._compiled.module
    with change_flags(compile_cache=True, compiledir=str(tmp_path)):
        base = codecache.cache_key(Mode(), module, Mode().graph_pipeline())
        with change_flags(glue_o0_minsize=0):
            assert codecache.cache_key(Mode(), module, Mode().graph_pipeline()) != base


def test_a_large_module_compiles_in_halves_with_the_same_results(monkeypatch):
    """A module with enough to compile at O3 and a small glue is compiled as two objects
    when a child can compile one: the glue with half the kernels here, the other half
    there; its results are those of the whole module, bit for bit."""
    if not cpu._fork_parts():
        pytest.skip("no fork, no memfd_create, or one core")
    with change_flags(compile_cache=False):
        halves, params = mlp_step(4)
    module = native_module(halves)
    assert len(cpu.unpack_objects(module.object_code)) == 2
    forked, here = (cpu._defined_names(t) for t in module.llvm_ir.split("; ModuleID")[1:])
    assert "fn_main" in here and not forked & here
    assert any(name.startswith("fn_main__") for name in forked)
    monkeypatch.setattr(cpu, "PARALLEL_MIN_INSTRUCTIONS", 10**9)
    with change_flags(compile_cache=False):
        whole, params_whole = mlp_step(4)
    assert native_module(whole).object_code.startswith(b"\x7fELF")
    for a, b in zip(train(halves, params), train(whole, params_whole), strict=True):
        np.testing.assert_array_equal(a, b)


def test_halves_keep_groups_whole_and_balance_the_work():
    """`_halves` moves whole groups of functions that call each other (a kernel and its
    `__noalias` body), the largest first, to the half with less work."""
    references = {
        "f": {"k0", "k1", "k2", "t3"},  # the glue
        "k0": {"k0__noalias"},
        "k0__noalias": set(),
        "k1": {"k1__noalias"},
        "k1__noalias": set(),
        "k2": set(),
        "t3": {"t3__body"},
        "t3__body": set(),
    }
    sizes = {"f": 10, "k0": 5, "k0__noalias": 95, "k1": 5, "k1__noalias": 55}
    sizes |= {"k2": 40, "t3": 5, "t3__body": 5}
    kernels = frozenset(references) - {"f"}
    forked = cpu._halves(references, kernels, sizes, 10)
    # k0 (100) there, k1 (60) and k2 (40) here beside the glue (10), t3 (10) there
    assert forked == {"k0", "k0__noalias", "t3", "t3__body"}
    assert cpu._halves(references, kernels, sizes, 300) == kernels  # a costly glue
    assert cpu._called_from_outside(references, forked) == {"k0", "t3"}


def test_helper_calls_count_for_the_instructions_they_replace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`module_layout` weighs a glue's calls of the allocation helpers by the instructions
    they replace (`ALLOC_CALL_INSTRUCTIONS`), so the glue goes apart from the size it did
    with its allocations written out: a 16-allocation glue's size with the helpers is
    within a tenth of its size without them (set by `HELPER_MIN_ALLOCATIONS`)."""
    from xdsl.parser import Parser

    from arignote.lowering.driver import apply_pipeline, make_context
    from arignote.lowering.llvm import checked_alloc
    from arignote.lowering.pipelines import LLVM_LOWERING
    from arignote.runtime.cpu import module_layout

    lines = ["func.func @f(%n: index) -> i64 attributes {arignote.alloc_status} {"]
    lines += [f"  %m{i} = memref.alloc(%n) : memref<?xf32>" for i in range(16)]
    lines += [f"  memref.dealloc %m{i} : memref<?xf32>" for i in range(16)]
    lines += ["  %c0 = arith.constant 0 : i64", "  return %c0 : i64", "}"]
    text = "\n".join(lines)
    sizes = {}
    for minimum in (16, 17):
        ctx = make_context()
        module = Parser(ctx, text).parse_module()
        monkeypatch.setattr(checked_alloc, "HELPER_MIN_ALLOCATIONS", minimum)
        apply_pipeline(ctx, module, LLVM_LOWERING)
        calls = str(module).count("llvm.call @arignote_alloc")
        assert calls == (16 if minimum == 16 else 0)
        layout = module_layout(module, exported=())
        sizes[minimum] = layout.glue_size
    assert abs(sizes[16] - sizes[17]) <= sizes[17] / 10, sizes
