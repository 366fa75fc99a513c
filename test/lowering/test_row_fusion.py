"""`row-fusion` and `ag.gemv_pair`, natively and in the interpreter, checked against
NumPy: the logistic-regression step of the seed program, f32 and f64, matrix layouts
(the unit-stride views and the copied fallback), row counts around the 4-row blocks,
empty matrices, the shape checks, chains that must not fuse, and DebugMode."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as T

LINKERS = ["cvm", "py"]


def tol(dtype: str) -> dict[str, float]:
    return {"rtol": 2e-4, "atol": 2e-5} if dtype == "float32" else {"rtol": 1e-11, "atol": 1e-12}


# --- the logistic-regression step ------------------------------------------------------


def logreg_train(dtype: str, linker: str | None, w0: np.ndarray):
    """The seed program's training function (naive loss, stabilized by the optimizer)."""
    x = T.matrix("x", dtype=dtype)
    y = T.vector("y", dtype=dtype)
    w = arignote.shared(w0.copy(), name="w")
    b = arignote.shared(np.asarray(0.0, dtype=dtype), name="b")
    p_1 = 1 / (1 + T.exp(-T.dot(x, w) - b))
    xent = -y * T.log(p_1) - (1 - y) * T.log(1 - p_1)
    cost = xent.mean() + 0.01 * (w**2).sum()
    gw, gb = arignote.grad(cost, [w, b])
    mode = None if linker is None else arignote.Mode(linker=linker)
    train = arignote.function(
        [x, y], [p_1 > 0.5, xent], updates=[(w, w - 0.1 * gw), (b, b - 0.1 * gb)], mode=mode
    )
    return train, w, b


def numpy_step(x, y, w, b):
    z = x.dot(w) + b
    p = 1 / (1 + np.exp(-z))
    xent = y * np.logaddexp(0, -z) + (1 - y) * np.logaddexp(0, z)
    gw = ((p - y) / len(y)).dot(x) + 0.02 * w
    gb = ((p - y) / len(y)).sum()
    return w - 0.1 * gw, b - 0.1 * gb, p > 0.5, xent


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_logreg_step(linker: str, dtype: str):
    rng = np.random.default_rng(1)
    n, feats = 23, 37  # 5 blocks of 4 rows and 3 single rows
    x = rng.standard_normal((n, feats)).astype(dtype)
    y = rng.integers(0, 2, size=n).astype(dtype)
    w0 = (rng.standard_normal(feats) * 0.1).astype(dtype)
    train, w, b = logreg_train(dtype, linker, w0)
    assert "ag.gemv_pair" in train.dump_ir("optimized")
    ref_w, ref_b = w0.astype(np.float64), 0.0
    for _ in range(3):
        prediction, xent = train(x, y)
        ref_w, ref_b, ref_prediction, ref_xent = numpy_step(x, y, ref_w, ref_b)
        np.testing.assert_allclose(w.get_value(), ref_w, **tol(dtype))
        np.testing.assert_allclose(b.get_value(), ref_b, **tol(dtype))
        np.testing.assert_allclose(xent, ref_xent, **tol(dtype))
        np.testing.assert_array_equal(prediction, ref_prediction)
    assert w.get_value().dtype == np.dtype(dtype)


def test_logreg_debugmode():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((9, 5)).astype("float32")
    y = rng.integers(0, 2, size=9).astype("float32")
    w0 = (rng.standard_normal(5) * 0.1).astype("float32")
    xs, ys = T.fmatrix("x"), T.fvector("y")
    w = arignote.shared(w0.copy(), name="w")
    p = T.nnet.sigmoid(T.dot(xs, w))
    cost = T.nnet.binary_crossentropy(p, ys).mean()
    (gw,) = arignote.grad(cost, [w])
    train = arignote.function([xs, ys], cost, updates=[(w, w - 0.5 * gw)], mode="DebugMode")
    assert "ag.gemv_pair" in train.dump_ir("optimized")
    first = train(x, y)
    for _ in range(3):
        last = train(x, y)
    assert last < first


def test_fgraph_shows_a_gemv_node():
    """Theano's graph view: the pair is one node of class `Gemv` (what `Used the cpu`
    looks for) with three outputs; its region's scalar code is not a node."""
    train, _, _ = logreg_train("float32", None, np.zeros(3, np.float32))
    nodes = train.maker.fgraph.toposort()
    gemvs = [n for n in nodes if type(n.op).__name__ == "Gemv"]
    assert len(gemvs) == 1
    assert gemvs[0].op.props == "A,A.T" and len(gemvs[0].outputs) == 3
    assert [i.name for i in gemvs[0].inputs[:2]] == ["x", "w"]
    assert not any(n.ir_op.parent_op() is gemvs[0].ir_op for n in nodes)


def test_excluding_row_fusion():
    train, _, _ = logreg_train("float32", None, np.zeros(3, np.float32))
    assert "ag.gemv_pair" in train.dump_ir("optimized")
    x, y = T.fmatrix("x"), T.fvector("y")
    w = T.fvector("w")
    r = T.dot(x.T, T.tanh(T.dot(x, w)) - y)
    f = arignote.function([x, y, w], r, mode=arignote.Mode().excluding("row_fusion"))
    assert "ag.gemv_pair" not in f.dump_ir("optimized")


# --- one fused pair on its own: layouts, sizes, shape checks ---------------------------


def pair_function(linker: str, dtype: str = "float32"):
    """`[Xᵀ·(tanh(X·w) - y) + 0.5·v, X·w]` with X, w, y, v inputs."""
    x = T.matrix("x", dtype=dtype)
    w, y, v = (T.vector(n, dtype=dtype) for n in "wyv")
    u = T.dot(x, w)
    r = T.dot(x.T, T.tanh(u) - y) + 0.5 * v
    f = arignote.function([x, w, y, v], [r, u], mode=arignote.Mode(linker=linker))
    assert "ag.gemv_pair" in f.dump_ir("optimized")
    return f


def pair_reference(x, w, y, v):
    u = x.astype(np.float64) @ w
    return x.T.astype(np.float64) @ (np.tanh(u) - y) + 0.5 * v, u


def layouts(a: np.ndarray) -> list[np.ndarray]:
    """`a` contiguous, Fortran-ordered, column- and row-strided views, and rows reversed
    (a negative row stride, unit column stride)."""
    wide = np.zeros((a.shape[0] * 2, a.shape[1] * 3), a.dtype)
    wide[::2, ::3] = a
    tall = np.zeros((a.shape[0] * 2, a.shape[1]), a.dtype)
    tall[::2] = a
    flipped = np.ascontiguousarray(a[::-1])[::-1]
    return [a, np.asfortranarray(a), wide[::2, ::3], tall[::2], flipped]


@pytest.mark.parametrize("linker", LINKERS)
def test_layouts(linker: str):
    f = pair_function(linker)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((10, 6)).astype(np.float32)
    w, v = rng.standard_normal(6).astype(np.float32), rng.standard_normal(6).astype(np.float32)
    y = rng.standard_normal(10).astype(np.float32)
    ref_r, ref_u = pair_reference(x, w, y, v)
    strided_w = np.repeat(w, 2)[::2]
    for xi in layouts(x):
        for wi in (w, strided_w):
            r, u = f(xi, wi, y, v)
            np.testing.assert_allclose(r, ref_r, **tol("float32"))
            np.testing.assert_allclose(u, ref_u, **tol("float32"))


@pytest.mark.parametrize("linker", LINKERS)
def test_sizes(linker: str):
    f = pair_function(linker, "float64")
    rng = np.random.default_rng(4)
    for rows in (0, 1, 3, 4, 5, 9):
        for cols in (0, 1, 7):
            x = rng.standard_normal((rows, cols))
            w, v = rng.standard_normal(cols), rng.standard_normal(cols)
            y = rng.standard_normal(rows)
            r, u = f(x, w, y, v)
            ref_r, ref_u = pair_reference(x, w, y, v)
            assert r.shape == (cols,) and u.shape == (rows,)
            np.testing.assert_allclose(r, ref_r, **tol("float64"))
            np.testing.assert_allclose(u, ref_u, **tol("float64"))


@pytest.mark.parametrize("linker", LINKERS)
def test_shape_checks(linker: str):
    f = pair_function(linker)
    x = np.ones((4, 3), np.float32)
    w, v, y = np.ones(3, np.float32), np.ones(3, np.float32), np.ones(4, np.float32)
    with pytest.raises(ValueError, match="row"):
        f(x, w, np.ones(5, np.float32), v)
    with pytest.raises(ValueError):
        f(x, np.ones(2, np.float32), y, v)
    with pytest.raises(ValueError):
        f(x, w, y, np.ones(4, np.float32))


@pytest.mark.parametrize("linker", LINKERS)
def test_not_rowwise_is_left_alone(linker: str):
    x, w = T.dmatrix("x"), T.dvector("w")
    u = T.dot(x, w)
    e = T.exp(u - u.max())  # the max needs all of u before any g_i
    f = arignote.function([x, w], T.dot(x.T, e), mode=arignote.Mode(linker=linker))
    assert "ag.gemv_pair" not in f.dump_ir("optimized")
    a = np.arange(12.0).reshape(4, 3) / 10
    ww = np.array([0.5, -1.0, 2.0])
    uu = a @ ww
    np.testing.assert_allclose(f(a, ww), a.T @ np.exp(uu - uu.max()), rtol=1e-12)


def test_deep_chains_do_not_overflow_the_stack():
    """A chain longer than Python's recursion limit is analysed and cloned into the
    region without recursion: it is fused, like a short one in the same function (it
    was left unfused while the cloning was recursive)."""
    from xdsl.parser import Parser

    from arignote.lowering.driver import apply_pipeline, make_context

    t = "tensor<?xf32>"
    lines = [
        f"func.func @deep(%a: tensor<?x?xf32>, %w: {t}) -> ({t}, {t}) {{",
        "  %one = ag.constant dense<1.0> : tensor<f32>",
        f"  %u = ag.gemv %one, %a, %w : tensor<f32>, tensor<?x?xf32>, {t} -> {t}",
        f"  %v = ag.gemv %one, %a, %w : tensor<f32>, tensor<?x?xf32>, {t} -> {t}",
        f"  %e0 = ag.neg %u : {t}",
    ]
    depth = 1500
    lines += [f"  %e{k} = ag.neg %e{k - 1} : {t}" for k in range(1, depth)]
    lines += [
        f"  %s = ag.exp %v : {t}",
        f"  %r = ag.gemv %one, %a, %e{depth - 1} {{transpose_a}} : tensor<f32>, "
        f"tensor<?x?xf32>, {t} -> {t}",
        f"  %q = ag.gemv %one, %a, %s {{transpose_a}} : tensor<f32>, tensor<?x?xf32>, {t} -> {t}",
        f"  func.return %r, %q : {t}, {t}",
        "}",
    ]
    module = Parser(make_context(), "\n".join(lines)).parse_module()
    apply_pipeline(make_context(), module, "row-fusion")
    text = str(module)
    assert text.count("ag.gemv_pair") == 2  # the deep chain (neg ...) and the short (exp)
    assert text.count("ag.gemv ") == 0
    assert text.count("ag.neg") == depth  # in the region, the unfused chain erased
