"""Modes and linkers: tags, named modes, the 'c' / 'c|py' linkers, DebugMode (with
planted bugs), NanGuardMode and MonitorMode."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType, i64
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import VerifyException

import arignote
import arignote.tensor as T
from arignote.compile import mode as mode_module
from arignote.compile.debugmode import (
    BadDestroyMap,
    BadOptimization,
    BadThunkOutput,
    DebugMode,
    InvalidValueError,
    values_match,
)
from arignote.compile.mode import MissingNativeLoweringError, Mode, get_mode
from arignote.compile.monitoring import MonitorMode, NanGuardError, NanGuardMode
from arignote.dialects import ag
from arignote.lowering import pipelines, registry

# --- modes, tags and linkers ------------------------------------------------------------------


def test_named_modes() -> None:
    assert type(get_mode("FAST_RUN")) is Mode and get_mode("FAST_RUN").optimizer == "fast_run"
    assert get_mode("FAST_COMPILE").optimizer == "fast_compile"
    assert isinstance(get_mode("DebugMode"), DebugMode)
    assert isinstance(get_mode("DEBUG_MODE"), DebugMode)
    assert isinstance(get_mode("NanGuardMode"), NanGuardMode)
    assert isinstance(get_mode("MonitorMode"), MonitorMode)
    with pytest.raises(ValueError, match="mode"):
        get_mode("NO_SUCH_MODE")
    x = T.dvector("x")
    with arignote.change_flags(mode="DebugMode"):
        f = arignote.function([x], 2 * x)
    assert isinstance(f.mode, DebugMode)
    np.testing.assert_array_equal(f([1.0, 2.0]), [2.0, 4.0])


def _passes(mode: Mode) -> list[str]:
    return [p for p in mode.graph_pipeline().split(",") if p]


def test_including_excluding_return_new_modes() -> None:
    base = Mode(linker="py")
    full = pipelines.GRAPH_PIPELINES["fast_run"].split(",")
    assert _passes(base) == full and {"stabilize", "cse"} <= set(full)
    no_merge = base.excluding("merge")
    assert no_merge is not base and _passes(base) == full
    assert _passes(no_merge) == [p for p in full if p != "cse"]
    assert no_merge.linker == "py"
    assert _passes(base.excluding("fast_run")) == []
    assert "cse" not in _passes(base.excluding("cse"))  # a pass's name is a tag
    no_fusion = [p for p in full if p not in ("fusion", "inplace-update", "inplace")]
    assert _passes(base.excluding("fusion", "inplace")) == no_fusion
    assert _passes(base.excluding("no_such_tag")) == full  # unknown tags: ignored
    kept = [p for p in full if p not in ("fusion", "stabilize")]  # inplace stays
    assert _passes(base.excluding("fusion:stabilize")) == kept
    fast_compile = Mode(optimizer="fast_compile")
    assert _passes(fast_compile) == ["canonicalize"]  # cheap rewrites, as Theano's
    assert _passes(fast_compile.including("merge")) == ["canonicalize", "cse"]
    assert _passes(fast_compile.including("merge").excluding("merge")) == ["canonicalize"]
    assert _passes(fast_compile.excluding("canonicalize")) == []
    assert _passes(fast_compile.including("stabilize", "merge")) == [
        "canonicalize",
        "stabilize",
        "cse",
    ]
    assert isinstance(DebugMode().excluding("merge"), DebugMode)


def test_config_optimizer_including_excluding() -> None:
    with arignote.change_flags(optimizer_excluding="fusion:stabilize"):
        assert "stabilize" not in _passes(Mode()) and "cse" in _passes(Mode())
    with arignote.change_flags(optimizer="fast_compile", optimizer_including="merge"):
        assert _passes(Mode()) == ["canonicalize", "cse"]
    # the flags apply when a function is compiled: stabilize off keeps log(1 + x)
    x = T.dvector("x")
    with arignote.change_flags(optimizer_excluding="stabilize"):
        f = arignote.function([x], T.log(1 + x), mode=Mode(linker="py"))
    assert "log1p" not in str(f.maker.fgraph.func)
    g = arignote.function([x], T.log(1 + x), mode=Mode(linker="py"))
    assert "log1p" in str(g.maker.fgraph.func)


@pytest.mark.parametrize("linker", ["c", "c|py", "cvm", "vm", "cvm_nogc", "c|py_nogc", "py"])
def test_every_linker_runs(linker: str) -> None:
    x = T.dmatrix("x")
    f = arignote.function([x], T.exp(x).sum(axis=0), mode=Mode(linker=linker))
    np.testing.assert_allclose(f(np.ones((2, 3))), 2 * np.e * np.ones(3))


def test_linker_c_refuses_an_op_without_native_lowering(monkeypatch: pytest.MonkeyPatch) -> None:
    from arignote.lowering.loops.ag_kernels import KERNELS

    monkeypatch.delitem(KERNELS, ag.TanhOp)
    x = T.dvector("x")
    with pytest.raises(MissingNativeLoweringError, match=r"ag\.tanh"):
        arignote.function([x], T.tanh(x) + 1, mode=Mode(linker="c"))
    # c|py (and cvm) run the whole function on the interpreter instead
    for linker in ("c|py", "cvm"):
        f = arignote.function([x], T.tanh(x) + 1, mode=Mode(linker=linker))
        np.testing.assert_allclose(f([0.5]), np.tanh([0.5]) + 1)
    assert mode_module.ops_without_native_lowering(f.module)[0].name == "ag.tanh"


# --- DebugMode -------------------------------------------------------------------------------


def test_debugmode_seed() -> None:
    x = T.dvector("x")
    f = arignote.function([x], 10 * x, mode="DebugMode")
    np.testing.assert_array_equal(f([5]), [50.0])
    np.testing.assert_array_equal(f([0]), [0.0])


def test_debugmode_checks_the_real_pipeline() -> None:
    # stabilize and cse both run (and are checked) on a graph they rewrite
    x, y = T.fvector("x"), T.fvector("y")
    p = 1 / (1 + T.exp(-x))
    out = [T.log(1 - p) + T.exp(y) - 1, (T.exp(y) - 1) * 2, T.log(1 + T.exp(x)).sum()]
    f = arignote.function([x, y], out, mode=DebugMode())
    xs = np.array([-0.5, 0.25, 2.0], np.float32)
    got = f(xs, xs)
    ref = arignote.function([x, y], out, mode=Mode(linker="py", optimizer=None))(xs, xs)
    for a, b in zip(got, ref, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5)
    ops = {op.name for op in f.maker.fgraph.func.walk()}
    assert "ag.softplus" in ops and "ag.expm1" in ops


def test_debugmode_integers_and_shared_updates() -> None:
    a = T.lvector("a")
    s = arignote.shared(np.int64(0), name="s")
    f = arignote.function([a], a.sum(), updates={s: s + a.sum()}, mode="DebugMode")
    assert f([1, 2, 3]) == 6 and s.get_value() == 6


def test_values_match_tolerances() -> None:
    assert values_match(np.float32(1.0), np.float32(1.00005))
    assert not values_match(np.float32(1.0), np.float32(1.001))
    assert values_match(np.float64(1.0), np.float64(1.0 + 1e-12))
    assert not values_match(np.float64(1.0), np.float64(1.0 + 1e-8))
    assert not values_match(np.int64(1), np.int64(2))
    assert not values_match(np.zeros(2), np.zeros(3))
    assert not values_match(np.zeros(2), np.zeros(2, np.float32))
    assert values_match(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))
    assert not values_match(np.array([np.nan, 1.0]), np.array([1.0, 1.0]))


class _AddToSub(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.AddOp, rewriter: PatternRewriter) -> None:
        sub = ag.SubOp(op.lhs, op.rhs)
        rewriter.replace(op, [sub], [sub.result])


class _BadPass(ModulePass):
    name = "bad-add-to-sub"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(_AddToSub()).rewrite_module(op)


@pytest.fixture
def bad_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.ARIGNOTE_PASSES, "bad-add-to-sub", lambda: _BadPass)
    monkeypatch.setitem(pipelines.PASS_TAGS, "bad-add-to-sub", ("planted",))


def test_planted_bad_rewrite_raises_bad_optimization(bad_pass: None) -> None:
    x, y = T.dvectors("x", "y")
    # the pass really breaks the function in an ordinary mode...
    f = arignote.function([x, y], x + y, mode=Mode(linker="py").including("planted"))
    assert f([1.0], [2.0])[0] == -1.0
    # ...and DebugMode names it
    with pytest.raises(BadOptimization, match="bad-add-to-sub") as info:
        arignote.function([x, y], x + y, mode=DebugMode().including("planted"))
    err = info.value
    assert err.reason == "bad-add-to-sub" and err.r == 0
    assert "ag.add" in err.old_graph and "ag.sub" in err.new_graph
    assert "ag.sub" not in err.old_graph
    np.testing.assert_allclose(err.old_r_val, err.inputs[0] + err.inputs[1])
    np.testing.assert_allclose(err.new_r_val, err.inputs[0] - err.inputs[1])
    assert "IR before bad-add-to-sub" in str(err)
    # through the config flag too
    with arignote.change_flags(optimizer_including="planted"), pytest.raises(BadOptimization):
        arignote.function([x, y], x + y, mode="DebugMode")


class _Untyped(RewritePattern):
    """Planted: an add whose result type no longer matches its operands (invalid IR)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.AddOp, rewriter: PatternRewriter) -> None:
        if op.result.type != op.lhs.type:
            return
        bad = ag.AddOp.create(operands=[op.lhs, op.rhs], result_types=[TensorType(i64, [7])])
        rewriter.replace(op, [bad], bad.results)


class _InvalidPass(ModulePass):
    name = "bad-add-type"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(_Untyped(), apply_recursively=False).rewrite_module(op)


def test_check_ir_catches_a_pass_leaving_invalid_ir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.ARIGNOTE_PASSES, "bad-add-type", lambda: _InvalidPass)
    monkeypatch.setitem(pipelines.PASS_TAGS, "bad-add-type", ("planted",))
    x, y = T.dvectors("x", "y")
    mode = Mode(linker="py").including("planted")
    with arignote.change_flags(check_ir=True), pytest.raises(VerifyException, match="ag.add"):
        arignote.function([x, y], x + y, mode=mode)


def test_planted_bad_lowering_raises_bad_thunk_output(monkeypatch: pytest.MonkeyPatch) -> None:
    from arignote.lowering.loops import ag_scalar

    x, y = T.dvectors("x", "y")
    out = T.exp(x * y) + 1
    monkeypatch.setitem(ag_scalar.BINARY, ag.MulOp, ag_scalar.BINARY[ag.AddOp])
    f = arignote.function([x, y], out, mode="DebugMode")
    with pytest.raises(BadThunkOutput, match=r"ag\.mul") as info:
        f([1.0, 2.0], [3.0, 4.0])
    err = info.value
    assert err.r == 0 and "output #0" in err.r_name
    assert str(err.node.op) == "Elemwise{mul}"
    np.testing.assert_allclose(err.val1, np.exp([3.0, 8.0]) + 1)
    np.testing.assert_allclose(err.val2, np.exp([4.0, 6.0]) + 1)


class _Overwrites:
    def __init__(self, run):  # type: ignore[no-untyped-def]
        self.run = run

    def __call__(self, arrays):  # type: ignore[no-untyped-def]
        results = self.run(arrays)
        arrays[0][...] = 0
        return results


def test_native_code_writing_its_input_raises_bad_destroy_map(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from arignote.compile import debugmode

    real = debugmode.compile_native
    monkeypatch.setattr(debugmode, "compile_native", lambda m, s: _Overwrites(real(m, s)))
    x = T.dvector("x")
    f = arignote.function([x], 2 * x, mode="DebugMode")
    arg = np.array([1.0, 2.0])
    with pytest.raises(BadDestroyMap, match=r"input #0 \(x\)") as info:
        f(arg)
    assert info.value.idx == 0
    np.testing.assert_array_equal(info.value.old_val, [1.0, 2.0])
    np.testing.assert_array_equal(info.value.new_val, [0.0, 0.0])


def test_debugmode_check_isfinite() -> None:
    x = T.dvector("x")
    f = arignote.function([x], T.log(x) * 2, mode="DebugMode")
    with pytest.raises(InvalidValueError, match=r"ag\.log"):
        f([-1.0])
    g = arignote.function([x], T.log(x) * 2, mode=DebugMode(check_isfinite=False))
    assert np.isnan(g([-1.0])[0])


# --- NanGuardMode -------------------------------------------------------------------------------


def test_nan_guard_names_the_first_node() -> None:
    x = T.dvector("x")
    fused = arignote.function([x], T.sqrt(T.log(x)) * 2, mode=NanGuardMode())
    with pytest.raises(NanGuardError, match=r"NaN detected") as fused_info:
        fused([0.5])  # fusion makes one node of the three (as in Theano)
    assert str(fused_info.value.node.op) == "Elemwise{Composite{log,sqrt,mul}}"
    one_node_per_op = NanGuardMode().excluding("fusion", "inplace")
    f = arignote.function([x], T.sqrt(T.log(x)) * 2, mode=one_node_per_op)
    np.testing.assert_allclose(f([np.e]), [2.0])
    with pytest.raises(AssertionError, match=r"NaN detected") as info:
        f([0.5])  # log(0.5) < 0 is fine, its sqrt is NaN
    err = info.value
    assert isinstance(err, NanGuardError) and err.problems == ["NaN"]
    assert str(err.node.op) == "Elemwise{sqrt}" and "ag.sqrt" in str(err)
    with pytest.raises(NanGuardError, match=r"Inf detected[\s\S]*ag\.log"):
        f([0.0])
    np.testing.assert_allclose(f([np.e]), [2.0])  # still usable after an error


def test_nan_guard_inputs_big_values_and_switches() -> None:
    x = T.dvector("x")
    f = arignote.function([x], x * 1e6, mode="NanGuardMode")
    with pytest.raises(NanGuardError, match=r"input #0 \(x\)"):
        f([np.nan])
    with pytest.raises(NanGuardError, match="Big value"):
        f([1e5])
    lenient = NanGuardMode(nan_is_error=False, big_is_error=False)
    g = arignote.function([x], x * 1e6, mode=lenient)
    assert np.isnan(g([np.nan])[0]) and g([1e5])[0] == 1e11
    with pytest.raises(NanGuardError, match="Inf"):
        g([1e305])


# --- MonitorMode ---------------------------------------------------------------------------------


def test_monitor_mode_callbacks() -> None:
    x = T.dscalar("x")
    seen: list[tuple] = []

    def pre(i, node, fn):  # type: ignore[no-untyped-def]
        seen.append(("pre", i, str(node), [inp[0] for inp in fn.inputs], fn.outputs[0][0]))

    def post(i, node, fn):  # type: ignore[no-untyped-def]
        seen.append(("post", i, str(node), [out[0] for out in fn.outputs]))

    mode = MonitorMode(pre_func=pre, post_func=post).excluding("fusion:inplace")  # two nodes
    f = arignote.function([x], [5 * x + 1], mode=mode)
    assert f(3)[0] == 16.0
    nodes = f.maker.fgraph.toposort()
    assert [s[:3] for s in seen] == [
        ("pre", 0, str(nodes[0])),
        ("post", 0, str(nodes[0])),
        ("pre", 1, str(nodes[1])),
        ("post", 1, str(nodes[1])),
    ]
    assert seen[0][2] == "Elemwise{mul}(TensorConstant{5.0}, x)"
    assert seen[0][3] == [5.0, 3.0] and seen[0][4] is None
    assert seen[1][3] == [15.0] and seen[3][3] == [16.0]


def test_monitor_mode_detects_nan_like_the_theano_recipe() -> None:
    found = []

    def detect_nan(i, node, fn):  # type: ignore[no-untyped-def]
        for output in fn.outputs:
            if np.isnan(output[0]).any():
                found.append(str(node.op))
                break

    x = T.dscalar("x")
    f = arignote.function([x], [T.log(x) * x], mode=MonitorMode(post_func=detect_nan))
    f(0)  # log(0) * 0 = -inf * 0 = nan
    assert found == ["Elemwise{Composite{log,mul}}"]  # the fused node, as in Theano's docs


def test_a_scan_run_by_the_interpreter_says_so() -> None:
    """A scan whose body's shapes change from step to step has no native lowering: the
    native linkers run the function with the interpreter, and now warn naming the scan
    and the reason (they once did it silently)."""
    from arignote.compile.mode import InterpreterFallbackWarning

    v, n = T.dvector("v"), T.lscalar("n")
    out, _ = arignote.scan(lambda i, v: v[:i].sum(), sequences=[T.arange(n)], non_sequences=[v])
    with pytest.warns(InterpreterFallbackWarning, match=r"ag\.scan .*step to step") as record:
        f = arignote.function([v, n], out, mode=Mode(linker="cvm"))
    assert record[0].filename == __file__
    np.testing.assert_array_equal(f(np.arange(5.0), 4), [0.0, 0.0, 1.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the interpreter itself has nothing to say
        arignote.function([v, n], out, mode=Mode(linker="py"))
    with pytest.raises(MissingNativeLoweringError, match="step to step"):
        arignote.function([v, n], out, mode=Mode(linker="c"))


def test_an_op_without_a_kernel_run_by_the_interpreter_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from arignote.compile.mode import InterpreterFallbackWarning
    from arignote.lowering.loops.ag_kernels import KERNELS

    monkeypatch.delitem(KERNELS, ag.TanhOp)
    x = T.dvector("x")
    with pytest.warns(InterpreterFallbackWarning, match=r"linker 'c\|py': .*ag\.tanh"):
        arignote.function([x], T.tanh(x) + 1, mode=Mode(linker="c|py"))
