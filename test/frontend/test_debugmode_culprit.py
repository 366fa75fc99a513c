"""DebugMode names the graph pass behind a call-time difference (issue 12, item 7).

A planted rewrite `minimum(x, 4) -> x` is right wherever x <= 4, so DebugMode's
compile-time check of each pass (random inputs in [-1, 1)) cannot see it. At a call
with some x > 4 the optimized function disagrees with the unoptimized graph; DebugMode
then replays the graph pipeline pass by pass on that call's arguments and raises
`BadOptimization` naming the pass, on native code and with `check_c_code=False`
(the optimized graph on the reference interpreter)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

import arignote
import arignote.tensor as T
from arignote.compile import debugmode
from arignote.compile.debugmode import BadOptimization, BadThunkOutput, DebugMode
from arignote.dialects import ag
from arignote.lowering import pipelines, registry
from arignote.runtime.dtypes import constant_array

PLANTED = "bad-minimum"


class _MinimumOfFourIsX(RewritePattern):
    """Planted: `minimum(x, 4) -> x`, wrong only where x > 4."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.MinimumOp, rewriter: PatternRewriter) -> None:
        four = op.rhs.owner
        if not isinstance(four, ag.ConstantOp) or op.lhs.type != op.result.type:
            return
        if not np.all(constant_array(four.value) == 4):
            return
        rewriter.replace(op, [], [op.lhs])


class _PlantedPass(ModulePass):
    name = PLANTED

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(_MinimumOfFourIsX()).rewrite_module(op)


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The planted pass, registered and tagged `planted` (`including("planted")` runs
    it after the passes of fast_run, inside the fused region)."""
    monkeypatch.setitem(registry.ARIGNOTE_PASSES, PLANTED, lambda: _PlantedPass)
    monkeypatch.setitem(pipelines.PASS_TAGS, PLANTED, ("planted",))


@pytest.fixture
def planted_mid_pipeline(planted: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The planted pass right after `canonicalize` in fast_run: cse, fusion, inplace...
    then run on the graph it broke, and must not be blamed."""
    passes = pipelines.split_pass_spec(pipelines.GRAPH_PIPELINES["fast_run"])
    passes.insert(passes.index("canonicalize") + 1, PLANTED)
    monkeypatch.setitem(pipelines.GRAPH_PIPELINES, "fast_run", ",".join(passes))


@pytest.fixture
def replays(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The graph passes DebugMode applied since the fixture started (or was cleared):
    each once at compile time, then again only for a call-time replay."""
    applied: list[str] = []
    real = debugmode.apply_pass

    def counting(module: ModuleOp, item: str) -> ModuleOp:
        applied.append(item)
        return real(module, item)

    monkeypatch.setattr(debugmode, "apply_pass", counting)
    return applied


LINKERS = [
    pytest.param(True, id="native"),
    pytest.param(False, id="interpreter"),
]


@pytest.mark.parametrize("check_c_code", LINKERS)
def test_planted_rewrite_is_named_at_call_time(planted: None, check_c_code: bool) -> None:
    x = T.dvector("x")
    # the pass-by-pass check at compile time passes: its random inputs are below 4
    mode = DebugMode(check_c_code=check_c_code).including("planted")
    assert mode.uses_interpreter is not check_c_code
    f = arignote.function([x], T.minimum(x, 4) * 2, mode=mode)
    np.testing.assert_array_equal(f([1.0, 4.0, -3.0]), [2.0, 8.0, -6.0])
    with pytest.raises(BadOptimization, match=PLANTED) as info:
        f([1.0, 7.0, 3.0])
    err = info.value
    assert err.reason == PLANTED and err.r == 0
    np.testing.assert_array_equal(err.inputs[0], [1.0, 7.0, 3.0])
    np.testing.assert_array_equal(err.old_r_val, [2.0, 8.0, 6.0])
    np.testing.assert_array_equal(err.new_r_val, [2.0, 14.0, 6.0])
    assert err.max_diff == 6.0 and err.max_diff_index == (1,)
    assert "ag.minimum" in err.old_graph and "ag.minimum" not in err.new_graph
    assert any("Elemwise{minimum}" in node for node in err.removed_nodes)
    message = str(err)
    assert "at call time" in message and "max |difference| 6.0 at index (1,)" in message
    assert "float64: rtol 1e-10, atol 1e-12" in message
    # the function stays usable
    np.testing.assert_array_equal(f([0.5]), [1.0])


def test_planted_rewrite_mid_pipeline_is_blamed_not_the_later_passes(
    planted_mid_pipeline: None,
) -> None:
    x = T.dmatrix("x")
    y = T.dvector("y")
    f = arignote.function([x, y], [x.sum() + y, T.minimum(x, 4) + y], mode="DebugMode")
    assert PLANTED in f.mode.graph_pipeline() and "fusion" in f.mode.graph_pipeline()
    ok_x, ok_y = np.arange(6.0).reshape(2, 3) - 2, np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(f(ok_x, ok_y)[1], ok_x + ok_y)
    with pytest.raises(BadOptimization) as info:
        f(ok_x + 3, ok_y)  # [[1 2 3] [4 5 6]]: 5 and 6 are above 4
    err = info.value
    assert err.reason == PLANTED and err.r == 1  # output #0 is right
    assert err.max_diff == 2.0 and err.max_diff_index == (1, 2)
    assert "output #1" in str(err)


def test_float32_output_is_compared_with_float32_tolerances(planted: None) -> None:
    x = T.fvector("x")
    f = arignote.function([x], T.minimum(x, 4) * 2, mode=DebugMode().including("planted"))
    # 8.0002 against 8: within float32's tolerance (1e-5 + 1e-4 * 8), not float64's
    np.testing.assert_array_equal(f(np.array([4.0001], np.float32)), np.float32(4.0001) * 2)
    with pytest.raises(BadOptimization) as info:
        f(np.array([4.01], np.float32))  # 8.02 against 8: beyond it
    err = info.value
    assert err.reason == PLANTED and err.new_r_val.dtype == np.float32
    assert "float32: rtol 0.0001, atol 1e-05" in str(err)


def test_correct_pipeline_raises_nothing_and_replays_nothing(replays: list[str]) -> None:
    x = T.dvector("x")
    f = arignote.function([x], T.minimum(x, 4) * 2, mode="DebugMode")
    # compile time: each pass once per run of the pipeline (a second run checks stability)
    assert replays == f.mode.graph_passes() * f.mode.stability_patience
    replays.clear()
    np.testing.assert_array_equal(f([1.0, 7.0, 3.0]), [2.0, 8.0, 6.0])
    np.testing.assert_array_equal(f([9.0]), [8.0])
    assert replays == []


def test_replay_runs_only_when_results_differ(planted: None, replays: list[str]) -> None:
    x = T.dvector("x")
    f = arignote.function([x], T.minimum(x, 4) * 2, mode=DebugMode().including("planted"))
    passes = f.mode.graph_passes()
    assert passes[-1] == PLANTED and replays == passes * f.mode.stability_patience
    replays.clear()
    f([1.0, 2.0])
    assert replays == []  # results agree: nothing replayed
    with pytest.raises(BadOptimization):
        f([5.0])
    assert replays == passes  # replayed once, up to the culprit


def test_lowering_bug_is_still_bad_thunk_output(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every graph pass keeps the result: the replay finds no pass, the lowering is
    blamed (the node whose native code differs)."""
    from arignote.lowering.loops import ag_scalar

    x, y = T.dvectors("x", "y")
    monkeypatch.setitem(ag_scalar.BINARY, ag.MulOp, ag_scalar.BINARY[ag.AddOp])
    f = arignote.function([x, y], T.exp(x * y) + 1, mode="DebugMode")
    with pytest.raises(BadThunkOutput, match="no graph pass changed") as info:
        f([1.0, 2.0], [3.0, 4.0])
    assert str(info.value.node.op) == "Elemwise{mul}"


def test_max_difference() -> None:
    assert debugmode.max_difference(np.array([1.0, 2.0]), np.array([1.0, 5.0])) == (3.0, (1,))
    nan, inf = np.nan, np.inf
    same = debugmode.max_difference(np.array([nan, inf, 1.0]), np.array([nan, inf, 1.0]))
    assert same == (0.0, (0,))
    assert debugmode.max_difference(np.array([nan, 1.0]), np.array([0.0, 1.0])) == (inf, (0,))
    assert debugmode.max_difference(np.array([inf]), np.array([-inf])) == (inf, (0,))
    assert debugmode.max_difference(np.int64(3), np.int64(-4)) == (7.0, ())
    assert debugmode.max_difference(np.zeros(2), np.zeros(3)) == (None, None)
    assert debugmode.max_difference(np.zeros(2), None) == (None, None)


def test_stochastic_order_when_passes_disagree_with_themselves(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A pass pipeline whose second run gives another graph raises StochasticOrder."""
    from xdsl.dialects.builtin import UnitAttr

    from arignote.compile import debugmode

    real = debugmode.apply_pass
    runs = {"n": 0}

    def unstable(module, item):  # the first pass's second run keeps one more constant
        after = real(module, item)
        if item == debugmode.DebugMode().graph_passes()[0]:
            runs["n"] += 1
            if runs["n"] == 2:
                after.ops.first.attributes["unstable"] = UnitAttr()
        return after

    monkeypatch.setattr(debugmode, "apply_pass", unstable)
    x = T.dvector("x")
    with pytest.raises(debugmode.StochasticOrder, match="run 2"):
        arignote.function([x], x * 2, mode="DebugMode")
    assert debugmode.DebugMode(stability_patience=1).stability_patience == 1


def test_bad_view_map_when_a_result_aliases_an_argument() -> None:
    from arignote.compile.debugmode import BadViewMap, DebugMode, _DebugRun

    x = T.dvector("x")
    f = arignote.function([x], x * 2, mode=DebugMode())
    run = f._compiled.run
    checker = run if isinstance(run, _DebugRun) else getattr(run, "__self__", None)
    assert isinstance(checker, _DebugRun)
    value = np.arange(3.0)
    checker.tested = lambda arrays: [arrays[0]]  # a "compiled" result that is its argument
    checker.reference = lambda arrays: [arrays[0]]
    with pytest.raises(BadViewMap, match="shares memory with argument 0"):
        checker([value])
    same = np.arange(3.0)
    checker.tested = lambda arrays: [same, same]
    checker.reference = lambda arrays: [same.copy(), same.copy()]
    with pytest.raises(BadViewMap, match="shares memory with result 0"):
        checker([value])
