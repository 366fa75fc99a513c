"""Graphs far deeper than Python's recursion limit compile and give NumPy's values: no
lowering step (nor the frontend walks of `function()`: fusion, gradient, clone,
printing) recurses over the depth of the graph.

Each deep case first runs at depth 2 (so that lazily imported modules are loaded), then
at `DEPTH` steps (two ops each) under a recursion limit of the current stack depth plus
`HEADROOM` frames: the pipeline itself needs about 60, and a recursion of even one frame
per op would need `2 * DEPTH`. Before the fix, `ag-to-loops` evaluated a fused region
recursively (`RecursionError` from 250 steps at Python's default limit), `parallelize`
followed chains of views recursively, and `row-fusion` left deep chains unfused.
"""

from __future__ import annotations

import numpy as np
import pytest
from deep_graphs import CASES, chain, numpy_chain, recursion_headroom, run_case
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

import arignote
import arignote.tensor as T
from arignote.compile.mode import Mode
from arignote.configuration import change_flags
from arignote.dialects import ag
from arignote.lowering.driver import apply_pipeline, make_context

DEPTH = 300
HEADROOM = 150
LINKERS = ("cvm", "py")

SLOW_NATIVE = {"ifelse_branches"}
"""Cases left out on the native linker: ops inside `ag.if` branches are not fused, so
300 steps compile 1200 loops (a minute); their lowering walks the branch's op list."""


@pytest.fixture(autouse=True)
def _parallel_loops():
    """Parallel loops on, whatever the machine: `parallelize` walks the views of the
    memrefs its outlined loops capture."""
    with change_flags(openmp=True):
        yield


def _deep(name: str, linker: str, optimizer: str | None = "fast_run") -> None:
    run_case(name, 2, linker, optimizer)
    with recursion_headroom(HEADROOM):
        run_case(name, DEPTH, linker, optimizer)


@pytest.mark.parametrize(
    ("name", "linker"),
    [(n, k) for n in CASES for k in LINKERS if not (k == "cvm" and n in SLOW_NATIVE)],
)
def test_deep_graph_needs_no_recursion(name: str, linker: str) -> None:
    _deep(name, linker)


@pytest.mark.parametrize("name", ["shape_arithmetic", "scan_shape"])
def test_deep_unfused_graph_needs_no_recursion(name: str) -> None:
    """Without the optimizer, shape functions compute unfused chains of integer ops."""
    _deep(name, "cvm", optimizer=None)


def test_frontend_walks_of_a_deep_graph() -> None:
    """clone, givens, the printers and the optimized graph's views at `function()` and
    after it."""
    x, z = T.dvector("x"), T.dvector("z")
    arignote.printing.debugprint(arignote.function([x], chain(x, 2)), file="str")
    with recursion_headroom(HEADROOM):
        y = chain(x, DEPTH)
        (cloned,) = arignote.clone([y], replace={x: z})
        f = arignote.function([z], cloned)
        g = arignote.function([z], y, givens={x: z * 1.0}, mode=Mode(linker="py"))
        texts = [
            arignote.printing.debugprint(f, file="str"),
            arignote.printing.debugprint(y, file="str"),
            arignote.printing.pp(y),
            arignote.printing.dot_source(y),
            str(f.maker.fgraph),
        ]
        nodes = f.maker.fgraph.toposort()
    value = np.linspace(-1.0, 1.0, 5)
    np.testing.assert_allclose(f(value), numpy_chain(value, DEPTH), rtol=1e-12, atol=0)
    np.testing.assert_allclose(g(value), numpy_chain(value, DEPTH), rtol=1e-12, atol=0)
    assert all(texts) and nodes


def test_deep_row_chain_is_fused() -> None:
    """The chain between the two gemvs goes into one `ag.gemv_pair` (before the fix a
    chain deeper than the stack was silently left unfused)."""
    a, w = T.dmatrix("A"), T.dvector("w")
    with recursion_headroom(HEADROOM):
        f = arignote.function([a, w], T.dot(a.T, chain(T.dot(a, w), DEPTH)))
    assert "ag.gemv_pair" in f.dump_ir()


def test_deep_float32_chain_is_vectorized() -> None:
    """The fused loop of a 300-step float32 chain (and its inline `exp`) is vectorized."""
    case = CASES["vectorized_f32"](2)
    arignote.function(case.inputs, case.outputs)
    with recursion_headroom(HEADROOM):
        case = CASES["vectorized_f32"](DEPTH)
        f = arignote.function(case.inputs, case.outputs)
    assert "x float>" in f._compiled.run.native.native_module.optimized_llvm_ir
    np.testing.assert_allclose(f(*case.args), case.expected, rtol=case.rtol, atol=0)


@pytest.mark.parametrize("make", [T.dvector, T.dmatrix])
def test_issue_250_step_chain_matches_interpreter_and_numpy(make) -> None:
    """The issue's program: 250 chained `y = y * 1.0001 + 1.0`, at Python's default
    recursion limit."""
    x = make("x")
    y = chain(x, 250)
    value = np.linspace(-1.0, 1.0, 6).reshape((6,) if make is T.dvector else (2, 3))
    native = arignote.function([x], y)(value)
    interpreted = arignote.function([x], y, mode=Mode(linker="py"))(value)
    expected = numpy_chain(value, 250)
    # 500 roundings (or 250 fused multiply-adds) of values below 300: relative error
    # below 500 * eps
    np.testing.assert_allclose(native, expected, rtol=1e-12, atol=0)
    np.testing.assert_allclose(interpreted, expected, rtol=1e-12, atol=0)


def test_chain_of_2000_ops_at_default_limit() -> None:
    x = T.dmatrix("x")
    value = np.arange(6.0).reshape(2, 3) / 5
    got = arignote.function([x], chain(x, 1000))(value)
    # the values grow (SCALE > 1, SHIFT > 0): nothing cancels, relative error < 2000 eps
    np.testing.assert_allclose(got, numpy_chain(value, 1000), rtol=1e-11, atol=0)


# --- passes on IR written out -----------------------------------------------------------


def _parse(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()


def _parallel_for(upper: str, memref: str, align: int = 1) -> str:
    return f"""
  %parts = ag.parallel_for %c0 to {upper} min_trips %c1 align {align} {{
  ^bb0(%begin: index, %end: index, %part: index):
    scf.for %i = %begin to %end step %c1 {{
      %a = memref.load {memref}[%i] : memref<?xf32>
      memref.store %a, {memref}[%i] : memref<?xf32>
    }}
    ag.yield
  }}"""


def _function(body: list[str], loop: str) -> str:
    head = [
        "func.func @f(%x: memref<?xf32>) {",
        "  %c0 = arith.constant 0 : index",
        "  %c1 = arith.constant 1 : index",
        "  %n = memref.dim %x, %c0 : memref<?xf32>",
    ]
    return "\n".join([*head, *body, loop, "  func.return", "}"])


def _symbols(module: ModuleOp) -> set[str]:
    return {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp | llvm.FuncOp)}


def _parallelize(text: str) -> ModuleOp:
    module = _parse(text)
    with recursion_headroom(HEADROOM):
        apply_pipeline(make_context(), module, "parallelize")
    module.verify()
    return module


def test_parallelize_views_of_views() -> None:
    """A loop capturing a view of a view of ... `%x`: `noalias` analysis finds `%x`."""
    depth = 2 * DEPTH
    cast = '"memref.cast"({}) : (memref<?xf32>) -> memref<?xf32>'
    body = [f"  %v{k} = " + cast.format(f"%v{k - 1}" if k else "%x") for k in range(depth)]
    module = _parallelize(_function(body, _parallel_for("%n", f"%v{depth - 1}")))
    assert not any(isinstance(op, ag.ParallelForOp) for op in module.walk())
    assert "f__par0" in _symbols(module)  # outlined


def test_parallelize_bound_of_nested_minima() -> None:
    """An upper bound `min(min(... min(n, 7) ..., n), n)`: the loop has at most 7 trips,
    one aligned chunk of 8, which the pool runs in one part, so it is inlined."""
    body = ["  %c7 = arith.constant 7 : index", "  %m0 = arith.minsi %n, %c7 : index"]
    depth = 2 * DEPTH
    body += [f"  %m{k} = arith.minsi %m{k - 1}, %n : index" for k in range(1, depth)]
    module = _parallelize(_function(body, _parallel_for(f"%m{depth - 1}", "%x", align=8)))
    assert not any(isinstance(op, ag.ParallelForOp) for op in module.walk())
    assert "f__par0" not in _symbols(module)  # inlined


def test_scan_pushout_hoists_a_deep_invariant_chain() -> None:
    """The product `x_t · chain(W)` of a scan body moves out of the loop with the
    invariant chain it needs (cloned before the loop, operands first)."""
    t = "tensor<?x?xf64>"
    chain_ops = [
        f"    %w{k + 1} = ag.add %w{k}, %one : {t}, tensor<f64> -> {t}" for k in range(2 * DEPTH)
    ]
    text = "\n".join(
        [
            f"func.func @f(%x: tensor<?x?x?xf64>, %h0: tensor<1x?x?xf64>, %w: {t}, %u: {t})"
            " -> tensor<?x?x?xf64> {",
            f"  %hs = ag.scan sequences(%x : tensor<?x?x?xf64>) initials(%h0 : "
            f"tensor<1x?x?xf64>) non_sequences(%w, %u : {t}, {t}) attributes "
            "{sequence_taps = [array<i64: 0>], output_taps = [array<i64: -1>]} -> "
            "tensor<?x?x?xf64> {",
            f"  ^bb0(%xt: {t}, %h: {t}, %w0: {t}, %uu: {t}):",
            "    %one = ag.constant dense<1.0> : tensor<f64>",
            *chain_ops,
            f"    %hu = ag.gemm %one, %h, %uu : tensor<f64>, {t}, {t} -> {t}",
            f"    %s = ag.gemm %one, %xt, %w{2 * DEPTH}, %one, %hu : tensor<f64>, {t}, {t}, "
            f"tensor<f64>, {t} -> {t}",
            f"    ag.yield %s : {t}",
            "  }",
            "  func.return %hs : tensor<?x?x?xf64>",
            "}",
        ]
    )
    module = _parse(text)
    with recursion_headroom(HEADROOM):
        apply_pipeline(make_context(), module, "scan-pushout")
    module.verify()
    (scan,) = [op for op in module.walk() if isinstance(op, ag.ScanOp)]
    assert not any(isinstance(op, ag.AddOp) for op in scan.body.block.ops)
    hoisted = [op for op in scan.parent_block().ops if isinstance(op, ag.AddOp)]
    assert len(hoisted) == 2 * DEPTH
