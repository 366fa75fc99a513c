"""Profiling (SPEC §6): `function(..., profile=True)`, `f.profile`, its report, the
per-node timers that the lowering puts in native code, the memory and optimizer
profiles, on both linkers."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.compile.profiling import ProfileStats
from arignote.configuration import change_flags

LINKERS = ["cvm", "py"]


def _profiled(linker: str, **flags) -> tuple[arignote.Function, np.ndarray]:
    """Seed 10's function with fusion excluded: three nodes, two adds and a mul."""
    x, y, z = T.dvectors("x", "y", "z")
    mode = arignote.Mode(linker=linker).excluding("fusion", "inplace")
    with change_flags(**flags):
        stats = ProfileStats(atexit_print=False, message="seed 10")
        f = arignote.function([x, y, z], [(x + y + z) * 2], mode=mode, profile=stats)
    value = np.arange(1000.0)
    for _ in range(3):
        [result] = f(value, value, value)
    np.testing.assert_allclose(result, 6 * value)
    return f, value


def _report(f: arignote.Function, **kwargs) -> str:
    out = io.StringIO()
    f.profile.summary(file=out, **kwargs)
    return out.getvalue()


@pytest.mark.parametrize("linker", LINKERS)
def test_report_sections_and_counts(linker: str) -> None:
    f, _ = _profiled(linker)
    report = _report(f)
    kind = "C" if linker == "cvm" else "Py"
    assert report.startswith("Function profiling\n==================\n  Message: seed 10\n")
    assert "Time in 3 calls to Function.__call__: " in report
    assert "Time in Function.fn.__call__: " in report
    assert "Number of Apply nodes: 3" in report
    for line in ("Optimizer time: ", "Validate time: ", "Linker time (includes lowering"):
        assert line in report
    header = "<% time> <sum %> <apply time> <time per call> <type> <#call> <#apply>"
    assert f"{header} <Class name>" in report and f"{header} <Op name>" in report
    rows = re.findall(r"^ +[\d.]+% +[\d.]+% .*$", report, re.M)
    ops = {r.split()[-1]: r.split()[-4:-1] for r in rows if "(" not in r.split()[-1]}
    assert ops["Elemwise{add}"] == [kind, "6", "2"]
    assert ops["Elemwise{mul}"] == [kind, "3", "1"]
    assert ops["arignote.graph.Elemwise"] == [kind, "9", "3"]
    applies = [r for r in rows if "Elemwise{add}(x, y)" in r or "(Elemwise{add}.0, z)" in r]
    assert len(applies) == 2
    assert "... (remaining 0 Apply instances account for 0.00%" in report


@pytest.mark.parametrize("linker", LINKERS)
def test_node_times_come_from_the_timers(linker: str) -> None:
    f, _ = _profiled(linker)
    stats = f.profile
    times, calls, _ = stats.node_counters()
    assert list(calls) == [3, 3, 3]
    assert (times > 0).all()
    # nodes run inside the compiled code, which runs inside Function.__call__
    assert times.sum() <= stats.vm_call_time <= stats.fct_call_time
    assert stats.fct_callcount == 3
    assert stats.compile_time >= stats.optimizer_time + stats.linker_time
    assert set(stats.apply_callcount.values()) == {3}


def test_native_timers_only_in_profiled_code() -> None:
    x = T.dvector("x")
    plain = arignote.function([x], x + 1)
    assert plain.profile is None
    profiled = arignote.function([x], x + 1, profile=ProfileStats(atexit_print=False))
    assert "clock_gettime" not in plain.dump_ir("llvm")
    native = profiled.profile._source
    assert type(native).__name__ == "NodeCounters" and native.n_nodes == 1
    profiled(np.ones(5))
    assert native.calls.tolist() == [1] and native.bytes.tolist() == [40]


def test_cut_by_n_ops_and_n_apply() -> None:
    f, _ = _profiled("cvm")
    report = _report(f, n_ops_to_print=1, n_apply_to_print=1)
    assert "... (remaining 1 Ops account for" in report
    assert "... (remaining 2 Apply instances account for" in report
    with change_flags(profiling__n_apply=2, profiling__n_ops=5):
        report = _report(f)
    assert "... (remaining 1 Apply instances account for" in report
    assert "... (remaining 0 Ops account for" in report


@pytest.mark.parametrize("linker", LINKERS)
def test_profile_memory(linker: str) -> None:
    f, value = _profiled(linker)
    with change_flags(profile_memory=True):
        report = _report(f)
    size = value.nbytes
    assert f.profile.node_counters()[2].tolist() == [size, size, size]
    # x + y is freed after (x + y) + z has been computed; the output stays
    assert f.profile.peak_memory() == 2 * size
    assert "Memory Profile" in report
    assert f"CPU: {2 * size}B ({2 * size / 1024:.1f}KB)" in report
    assert f"{size}B  tensor<?xf64>  Elemwise{{mul}}" in report


def test_profile_optimizer() -> None:
    f, _ = _profiled("cvm", profile_optimizer=True)
    report = _report(f)
    assert "Optimizer Profile" in report
    names = [r.name for r in f.profile.optimizer_profile]
    assert names == f.mode.graph_pipeline().split(",")
    assert all(
        r.time >= 0 and r.created >= 0 and r.erased >= 0 for r in f.profile.optimizer_profile
    )
    # cse merges nothing here, specialize/stabilize rewrite nothing
    assert sum(r.created + r.erased for r in f.profile.optimizer_profile) == 0


def test_profile_optimizer_counts_rewrites() -> None:
    x = T.dvector("x")
    with change_flags(profile_optimizer=True):
        f = arignote.function([x], (x + 1) * (x + 1), profile=ProfileStats(atexit_print=False))
    cse = next(r for r in f.profile.optimizer_profile if r.name == "cse")
    assert cse.erased >= 1  # the second x + 1 (and its constant) merged away


def test_profile_argument_forms() -> None:
    x = T.dvector("x")
    f = arignote.function([x], x * 2, profile="my profile")
    assert isinstance(f.profile, ProfileStats) and f.profile.message == "my profile"
    f.profile.atexit_print = False
    g = arignote.function([x], x * 2, profile=True, name="g")
    assert g.profile.message == "g"
    g.profile.atexit_print = False
    assert arignote.function([x], x * 2, profile=False).profile is None
    with pytest.raises(TypeError, match="profile must be True, False, a name or a ProfileStats"):
        arignote.function([x], x * 2, profile=3)
    stats = ProfileStats(atexit_print=False)
    arignote.function([x], x * 2, profile=stats)
    arignote.function([x], x * 3, profile=stats)  # Theano: one profile for both
    assert len(stats.nodes) == 2


def test_config_profile_profiles_every_function() -> None:
    x = T.dvector("x")
    with change_flags(profile=True):
        f = arignote.function([x], x - 1)
    f.profile.atexit_print = False
    assert isinstance(f.profile, ProfileStats)
    assert f(np.ones(2)).tolist() == [0.0, 0.0]
    assert f.profile.fct_callcount == 1


def test_debug_mode_profile_has_no_node_times() -> None:
    x = T.dvector("x")
    f = arignote.function([x], 10 * x, mode="DebugMode", profile=ProfileStats(atexit_print=False))
    assert f(np.array([5.0])).tolist() == [50.0]
    report = _report(f)
    assert "(no per-node times: DebugMode runs the nodes itself)" in report
    assert "Time in 1 calls to Function.__call__" in report


def test_copy_of_a_profiled_function_keeps_its_profile() -> None:
    x = T.dvector("x")
    s = arignote.shared(np.zeros(2), name="s")
    stats = ProfileStats(atexit_print=False)
    f = arignote.function([x], x * 2, updates={s: s + x}, profile=stats)
    g = f.copy(delete_updates=True)
    assert g.profile is None
    g(np.ones(2))
    f(np.ones(2))
    assert f.profile is stats and len(stats.nodes) == 2 and stats.fct_callcount == 1


@pytest.mark.parametrize("linker", LINKERS)
def test_an_ifelse_is_one_timed_node(linker: str) -> None:
    from arignote.ifelse import ifelse

    c, x = T.dscalar("c"), T.dvector("x")
    z = ifelse(c, T.exp(x) * 2, x - 1) + 1
    stats = ProfileStats(atexit_print=False)
    f = arignote.function([c, x], z, mode=arignote.Mode(linker=linker), profile=stats)
    np.testing.assert_allclose(f(1.0, np.zeros(3)), [3.0] * 3)
    np.testing.assert_allclose(f(0.0, np.zeros(3)), [0.0] * 3)
    assert [n.op for n in stats.nodes] == ["if{}", "Elemwise{add}"]
    assert stats.node_counters()[1].tolist() == [2, 2]


def test_profiled_softmax_step_verifies() -> None:
    """Profiling verifies the optimized module: fusion's `log(m.dimshuffle(0, 'x'))` region
    (a vector read only through a dimshuffle into a ?x1 domain) must pass the verifier."""
    rng = np.random.default_rng(0)
    x, y = T.dmatrix("x"), T.dmatrix("y")
    w = arignote.shared(rng.standard_normal((6, 4)), name="w")
    loss = -(y * T.nnet.logsoftmax(T.dot(x, w))).sum(axis=1).mean()
    f = arignote.function(
        [x, y], loss, updates=[(w, w - 0.1 * arignote.grad(loss, w))], profile=True
    )
    xv, yv = rng.standard_normal((5, 6)), np.eye(4)[rng.integers(0, 4, 5)]
    logits = xv @ w.get_value()
    logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(f(xv, yv), -(yv * logp).sum(axis=1).mean(), rtol=1e-12)
    assert "Elemwise{Composite{" in _report(f)


@pytest.mark.parametrize("linker", ["cvm", "py"])
def test_one_profile_shared_by_two_functions_adds_them_up(linker: str) -> None:
    x = T.dvector("x")
    stats = ProfileStats(atexit_print=False, message="both")
    mode = arignote.Mode(linker=linker)
    f = arignote.function([x], T.exp(x), profile=stats, mode=mode)
    g = arignote.function([x], [T.log(x), x * 2], profile=stats, mode=mode)
    assert f.profile is stats and g.profile is stats
    f(np.ones(3))
    g(np.ones(3))
    g(np.ones(3))
    assert stats.fct_callcount == 3
    assert [n.index for n in stats.nodes] == list(range(len(stats.nodes)))
    ops = [n.op for n in stats.nodes]
    assert any("exp" in op for op in ops) and any("log" in op for op in ops)
    times, calls, sizes = stats.node_counters()
    assert len(times) == len(calls) == len(sizes) == len(stats.nodes)
    n_f = len(f.maker.fgraph.toposort())
    assert calls[:n_f].tolist() == [1] * n_f
    assert calls[n_f:].tolist() == [2] * (len(stats.nodes) - n_f)
    assert stats.peak_memory() == 2 * 3 * 8  # g's two outputs, alive together
    out = io.StringIO()
    stats.summary(file=out)
    assert "Time in 3 calls to Function.__call__" in out.getvalue()
