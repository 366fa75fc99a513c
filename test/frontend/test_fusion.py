"""The `fusion` and `canonicalize` graph passes, seen from the frontend: the optimized
graph (`f.maker.fgraph`), results equal bit for bit to the unoptimized graph's on both
linkers, shape errors naming the original op, DebugMode."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.compile.debugmode import DebugMode
from arignote.compile.mode import Mode

LINKERS = ["py", "cvm"]


def _names(f: arignote.Function) -> list[str]:
    return [str(n.op) for n in f.maker.fgraph.toposort()]


def _ir(f: arignote.Function) -> str:
    return str(f.maker.fgraph.func)


def test_seed_profiling_graph_has_one_fused_node() -> None:
    # ../shared/seed_programs/10_profiling.py
    x, y, z = T.dvectors("x", "y", "z")
    f = arignote.function([x, y, z], [(x + y + z) * 2])
    nodes = f.maker.fgraph.toposort()
    assert _names(f) == ["Elemwise{Composite{add,mul}}"]
    assert type(nodes[0].op).__name__ == "Elemwise"
    assert str(nodes[0].op.scalar_op) == "Composite{add,mul}"
    assert [v.name for v in nodes[0].inputs] == ["x", "y", "z"]
    with arignote.change_flags(optimizer_excluding="fusion:inplace"):
        g = arignote.function([x, y, z], [(x + y + z) * 2])
    assert sorted(_names(g)) == ["Elemwise{add}", "Elemwise{add}", "Elemwise{mul}"]
    v = np.random.default_rng(0).random(1000)
    np.testing.assert_array_equal(f(v, v, v)[0], g(v, v, v)[0])


@pytest.mark.parametrize("linker", LINKERS)
def test_fused_results_equal_the_unfused_graph(linker: str) -> None:
    """Broadcasting, a dimshuffled row, a cast, a switch, a value used by two clusters
    (a second result of the first), and reductions with a fused body."""
    m, v = T.fmatrix("m"), T.fvector("v")
    e = T.exp(m)
    row = T.tanh(v).dimshuffle("x", 0)
    a = T.switch(T.gt(e, 1.5), e * row + 1, -e)
    b = T.cast(T.sqrt(e) * 3 - row, "float64")
    s0 = (e * m + row).sum(axis=0)
    s1 = T.max(T.abs(m - row), axis=1)
    total = (T.log(e + 1) * m).sum()
    outs = [a, b, s0, s1, total, e]
    fused = arignote.function([m, v], outs, mode=Mode(linker=linker))
    plain = arignote.function([m, v], outs, mode=Mode(linker=linker).excluding("fusion"))
    names = _names(fused)
    assert any("Composite" in n and n.startswith("Elemwise") for n in names)
    assert "Sum{axis=(0,),Composite{mul,add}}" in names and "Sum{axis=(0, 1)," in str(names)
    assert "Max{axis=(1,),Composite{sub,abs}}" in names
    assert _ir(fused).count("ag.exp") == 1  # computed once, read by every cluster
    rng = np.random.default_rng(1)
    mv = rng.standard_normal((5, 7)).astype(np.float32)
    vv = rng.standard_normal(7).astype(np.float32)
    for got, want in zip(fused(mv, vv), plain(mv, vv), strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape
        if got.ndim and linker == "py":
            np.testing.assert_array_equal(got, want)  # the interpreter: bit for bit
        else:  # native reductions may sum in another order
            np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
    if linker == "cvm":  # elementwise native results are bit for bit
        for got, want in zip(fused(mv, vv)[:2], plain(mv, vv)[:2], strict=True):
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("linker", LINKERS)
def test_integer_clusters(linker: str) -> None:
    i, j = T.lvectors("i", "j")
    out = (i * 3 + j) // (j - 2) % 5
    f = arignote.function([i, j], out, mode=Mode(linker=linker))
    assert _names(f) == ["Elemwise{Composite{mul,add,sub,floordiv,mod}}"]
    iv = np.arange(-6, 6, dtype=np.int64)
    jv = np.tile(np.array([2, 3, -1], dtype=np.int64), 4)
    with np.errstate(all="ignore"):
        q = np.where(jv - 2 == 0, 0, (iv * 3 + jv) // np.where(jv - 2 == 0, 1, jv - 2))
    np.testing.assert_array_equal(f(iv, jv), q % 5)


@pytest.mark.parametrize("linker", LINKERS)
def test_fused_shape_error_names_the_original_op(linker: str) -> None:
    x, y = T.dvectors("x", "y")
    f = arignote.function([x, y], T.exp(x) * y + 1, mode=Mode(linker=linker))
    assert _names(f) == ["Elemwise{Composite{exp,mul,add}}"]
    with pytest.raises(ValueError, match=r"ag\.mul \[Elemwise\{mul\} at test_fusion\.py:\d+\]"):
        f(np.ones(3), np.ones(4))


def test_debugmode_checks_fusion_and_canonicalize() -> None:
    x, y = T.dmatrices("x", "y")
    out = [((x * 1 + 0) * T.exp(y) - x).sum(axis=1), T.tanh(x + y) * 2]
    f = arignote.function([x, y], out, mode=DebugMode())
    assert any("Composite" in n for n in _names(f))
    rng = np.random.default_rng(2)
    xv, yv = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    r0, r1 = f(xv, yv)
    np.testing.assert_allclose(r0, ((xv * np.exp(yv)) - xv).sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(r1, np.tanh(xv + yv) * 2, rtol=1e-12)


@pytest.mark.parametrize("linker", LINKERS)
def test_canonicalize_in_function(linker: str) -> None:
    x = T.dvector("x")
    k = T.constant(np.array([1.0, 2.0, 3.0]))
    out = [(x * 1 + 0) / 1, T.exp(k).sum() * x, x.shape[0] * 2]
    f = arignote.function([x], out, mode=Mode(linker=linker, optimizer="fast_compile"))
    ir = _ir(f)
    assert "func.return %x, " in ir and "ag.add" not in ir and "ag.div" not in ir  # x*1+0 /1
    assert "ag.reduce_sum" not in ir and "ag.exp" not in ir  # folded
    xv = np.array([0.5, -1.0, 2.0])
    a, b, n = f(xv)
    np.testing.assert_array_equal(a, xv)
    np.testing.assert_array_equal(b, np.exp([1.0, 2.0, 3.0]).sum() * xv)
    assert int(n) == 6


@pytest.mark.parametrize("linker", LINKERS)
def test_inplace_overwrites_only_dead_intermediates(linker: str) -> None:
    x, y = T.dvectors("x", "y")
    e = T.exp(x * y)
    outs = [T.tanh(e).sum(), (e + 1) * 2, T.neg(T.sqrt(T.abs(x - y)))]
    mode = Mode(linker=linker).excluding("fusion")
    f = arignote.function([x, y], outs, mode=mode)
    plain = arignote.function([x, y], outs, mode=mode.excluding("inplace"))
    nodes = f.maker.fgraph.toposort()
    names = [str(n.op) for n in nodes]
    assert "Elemwise{exp}[(0, 0)]" in names and "Elemwise{add}[(0, 0)]" in names
    assert "Elemwise{tanh}" in names  # exp is still read by add: not overwritten
    assert nodes[names.index("Elemwise{add}[(0, 0)]")].op.destroy_map == {0: [0]}
    assert "Elemwise{sub}" in names  # reads the arguments: never in place
    assert not any("[" in n for n in _names(plain))
    xv, yv = np.linspace(-1, 1, 9), np.linspace(0, 3, 9)
    xs, ys = xv.copy(), yv.copy()
    for got, want in zip(f(xv, yv), plain(xv, yv), strict=True):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(xv, xs)
    np.testing.assert_array_equal(yv, ys)


def test_debugmode_checks_inplace() -> None:
    x = T.dmatrix("x")
    h = T.tanh(T.dot(x, x) + 1)
    f = arignote.function([x], [(h * h).sum(axis=1), -h.T], mode=DebugMode().excluding("fusion"))
    assert "Elemwise{tanh}[(0, 0)]" in _names(f)
    xv = np.random.default_rng(3).standard_normal((3, 3))
    hv = np.tanh(xv @ xv + 1)
    s, t = f(xv)
    np.testing.assert_allclose(s, (hv * hv).sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(t, -hv.T, rtol=1e-12)


def test_fused_loop_is_vectorized_by_llvm() -> None:
    """One loop nest, no temporaries, and LLVM's O3 vectorizes it (contiguous inputs):
    `@fn_main` calls the nest's kernel (`outline-kernels`), whose loop has vectors."""
    import re

    from arignote.lowering.driver import lower_to_llvm
    from arignote.runtime.cpu import NativeModule

    a, b = T.fvectors("a", "b")
    f = arignote.function([a, b], (a * b + a) * 2)
    assert _names(f) == ["Elemwise{Composite{mul,add}}"]
    module = f.maker.fgraph.func.parent_op()
    assert module is not None
    ir = NativeModule(lower_to_llvm(module.clone()).module).optimized_llvm_ir

    def body(name: str) -> str:
        text = ir[re.search(rf'^define .*@"?{name}"?\(', ir, re.M).start() :]
        return text[: text.index("\n}\n")]

    main = body("fn_main")
    assert "malloc" not in main  # no temporary
    (kernel,) = set(re.findall(r'call \w* ?void @"?(fn_main__k\d+)"?\(', main))
    assert re.search(r"<\d+ x float>", body(kernel)), "the fused loop was not vectorized"


def _random_graph(seed: int) -> tuple[list, list]:
    """A random elementwise/reduction/broadcast graph over a matrix, a vector and a scalar."""
    import random

    rng = random.Random(seed)
    x, y, z = T.dmatrix("x"), T.dvector("y"), T.dscalar("z")
    pool = [x, y, z, x.T]
    unary = [T.exp, T.tanh, T.neg, T.abs, T.sqr, lambda t: T.log(T.abs(t) + 1)]
    binary = [lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a - b, T.maximum]
    outs = []
    for _ in range(rng.randint(3, 9)):
        a, b, k = rng.choice(pool), rng.choice(pool), rng.random()
        if k < 0.4:
            v = rng.choice(binary)(a, b)
        elif k < 0.65:
            v = rng.choice(unary)(a)
        elif k < 0.75:
            v = T.switch(T.gt(a, 0), a, b)
        elif k < 0.85 and a.ndim == 2:
            v = a.sum(axis=rng.choice([0, 1]))
        elif k < 0.9 and a.ndim == 1:
            v = a.dimshuffle("x", 0) if rng.random() < 0.5 else a.dimshuffle(0, "x")
        else:
            v = a * 2 + 1
        pool.append(v)
        if rng.random() < 0.4:
            outs.append(v)
    return [x, y, z], [*outs, pool[-1]]


@pytest.mark.parametrize("seed", range(6))
def test_random_graphs_fused_equal_unfused(seed: int) -> None:
    """Interpreter: bit for bit; native code (fusion, inplace, buffer reuse): to 1e-12."""
    ins, outs = _random_graph(seed)
    rng = np.random.default_rng(seed)
    args = (rng.standard_normal((4, 4)), rng.standard_normal(4), np.float64(0.7))
    plain = Mode(linker="py", optimizer=None)
    want = arignote.function(ins, outs, mode=plain, on_unused_input="ignore")(*args)
    fused = arignote.function(ins, outs, mode=Mode(linker="py"), on_unused_input="ignore")
    assert any("Composite" in n for n in _names(fused))
    for got, expected in zip(fused(*args), want, strict=True):
        np.testing.assert_array_equal(got, expected)
    native = arignote.function(ins, outs, on_unused_input="ignore")
    for got, expected in zip(native(*args), want, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_inplace_fused_op_never_overwrites_an_operand_read_transposed() -> None:
    """Regression (found by the linear algebra tests): a fused op read an operand through
    an elementwise op and then a transposing `dimshuffle` (`switch(c, b, z).T` with `z`
    computed by an earlier op), and the `inplace` pass let it write its result over `z`,
    so later elements read already-overwritten ones (native results differed from the
    interpreter's)."""
    b = T.dmatrix("b")
    z = T.zeros_like(b)
    e = T.switch(T.gt(b, 0.5), b, z) + T.switch(T.gt(b, 0.3), b, z).T
    value = np.random.default_rng(0).uniform(size=(3, 3))
    low, high = np.where(value > 0.5, value, 0), np.where(value > 0.3, value, 0).T
    expected = (low + high) @ (low + high)
    for linker in ("py", "cvm"):
        got = arignote.function([b], T.dot(e, e), mode=Mode(linker=linker))(value)
        np.testing.assert_allclose(got, expected, rtol=1e-12)
