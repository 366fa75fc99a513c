"""Theano's `extra_ops` and `sort` (`arignote.tensor.extra_ops`, `arignote.tensor.sort`,
and their `T.` exports) against NumPy on both linkers, their gradients with
`verify_grad`, and their errors.

One compiled function covers several functions (a native compile costs a fraction of a
second).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.gradient import verify_grad
from arignote.tensor import basic, extra_ops

BACKENDS = ["py", "cvm"]


def mode(backend: str) -> arignote.Mode:
    return arignote.Mode(linker=backend)


def check(name: str, got: Any, expected: Any) -> None:
    expected = np.asarray(expected)
    assert isinstance(got, np.ndarray), (name, type(got))
    assert got.dtype == expected.dtype, (name, got.dtype, expected.dtype)
    assert got.shape == expected.shape, (name, got.shape, expected.shape)
    if got.dtype.kind == "f":
        tol = 2e-6 if got.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol, err_msg=name)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=name)


def check_all(results: list[Any], expected: dict[str, Any]) -> None:
    assert len(results) == len(expected)
    for got, (name, value) in zip(results, expected.items(), strict=True):
        check(name, got, value)


RNG = np.random.RandomState(42)
MATRIX = RNG.randn(5, 7)
MATRIX[1, 3] = MATRIX[4, 0] = np.nan
TIES = RNG.randint(-3, 4, size=(4, 9)).astype(np.int32)


@pytest.mark.parametrize("backend", BACKENDS)
def test_cumsum_cumprod_diff(backend: str) -> None:
    x, i = T.dmatrix("x"), T.ivector("i")
    b = T.bvector("b")
    outs = {
        "cumsum axis=None": T.cumsum(x),
        "cumsum axis=1": T.cumsum(x, 1),
        "cumsum axis=-2": T.cumsum(x, -2),
        "cumprod axis=0": T.cumprod(x, 0),
        "cumprod axis=None": T.cumprod(x),
        "cumsum int32": T.cumsum(i),
        "cumprod int32": T.cumprod(i, 0),
        "cumsum bool": extra_ops.cumsum(T.neq(b, 0)),
        "diff": extra_ops.diff(x),
        "diff n=2 axis=0": extra_ops.diff(x, n=2, axis=0),
        "diff n=0": extra_ops.diff(x, n=0),
        "diff int": extra_ops.diff(i, 3),
        "diff bool": extra_ops.diff(T.neq(b, 0)),
    }
    f = arignote.function([x, i, b], list(outs.values()), mode=mode(backend))
    xv = RNG.rand(4, 6) + 0.5
    iv = np.array([3, -1, 4, 1, -5, 9, 2, 6], dtype=np.int32)
    bv = np.array([0, 1, 1, 0, 0, 1], dtype=np.int8)
    expected = {
        "cumsum axis=None": np.cumsum(xv),
        "cumsum axis=1": np.cumsum(xv, 1),
        "cumsum axis=-2": np.cumsum(xv, -2),
        "cumprod axis=0": np.cumprod(xv, 0),
        "cumprod axis=None": np.cumprod(xv),
        "cumsum int32": np.cumsum(iv, dtype=np.int32),
        "cumprod int32": np.cumprod(iv, dtype=np.int32),
        "cumsum bool": np.cumsum(bv != 0),
        "diff": np.diff(xv),
        "diff n=2 axis=0": np.diff(xv, 2, 0),
        "diff n=0": xv,
        "diff int": np.diff(iv, 3),
        "diff bool": np.diff(bv != 0),
    }
    check_all(f(xv, iv, bv), expected)
    # empty and one-element axes
    empty = f(np.zeros((0, 3)), np.zeros(0, np.int32), np.zeros(0, np.int8))
    assert empty[0].shape == (0,) and empty[5].shape == (0,)


@pytest.mark.parametrize("backend", BACKENDS)
def test_sort_argsort(backend: str) -> None:
    x, i, t = T.dmatrix("x"), T.imatrix("i"), T.ftensor3("t")
    outs = {
        "sort": T.sort(x),
        "sort axis=0": T.sort(x, 0),
        "sort axis=None": T.sort(x, None),
        "argsort": T.argsort(x),
        "argsort axis=0": T.argsort(x, axis=0),
        "argsort ties (stable)": T.argsort(i, kind="quicksort"),
        "argsort ties axis=0": T.argsort(i, 0),
        "sort int": T.sort(i),
        "sort f32 axis=1": T.sort(t, 1),
        "argsort f32 axis=None": T.argsort(t, None),
        "sort bool": T.sort(T.gt(i, 0)),
    }
    f = arignote.function([x, i, t], list(outs.values()), mode=mode(backend))
    tv = RNG.randn(3, 17, 2).astype(np.float32)
    tv[0, 5, 1] = np.nan
    expected = {
        "sort": np.sort(MATRIX),
        "sort axis=0": np.sort(MATRIX, 0),
        "sort axis=None": np.sort(MATRIX, None),
        "argsort": np.argsort(MATRIX, kind="stable"),
        "argsort axis=0": np.argsort(MATRIX, 0, kind="stable"),
        "argsort ties (stable)": np.argsort(TIES, kind="stable"),
        "argsort ties axis=0": np.argsort(TIES, 0, kind="stable"),
        "sort int": np.sort(TIES),
        "sort f32 axis=1": np.sort(tv, 1),
        "argsort f32 axis=None": np.argsort(tv, None, kind="stable"),
        "sort bool": np.sort(TIES > 0),
    }
    check_all(f(MATRIX, TIES, tv), expected)
    # NaN last, -inf/inf in place, lengths that are not powers of two, empty rows
    for n in (0, 1, 2, 3, 33):
        values = RNG.randn(2, n)
        values[:, ::4] = np.nan
        values[:, 1::5] = np.inf
        values[:, 2::7] = -np.inf
        got = f(values, np.zeros((1, n), np.int32), np.zeros((1, n, 1), np.float32))
        check(f"sort n={n}", got[0], np.sort(values))
        check(f"argsort n={n}", got[3], np.argsort(values, kind="stable"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_searchsorted(backend: str) -> None:
    a, v, m = T.dvector("a"), T.dvector("v"), T.dmatrix("m")
    perm, ia, iv2 = T.lvector("perm"), T.ivector("ia"), T.ivector("iv2")
    outs = {
        "left": extra_ops.searchsorted(a, v),
        "right": extra_ops.searchsorted(a, v, side="right"),
        "matrix values": extra_ops.searchsorted(a, m, "right"),
        "sorter": extra_ops.searchsorted(a[perm], v, sorter=T.argsort(a[perm])),
        "int": extra_ops.searchsorted(ia, iv2),
        "promoted": extra_ops.searchsorted(ia, v),
    }
    f = arignote.function([a, v, m, perm, ia, iv2], list(outs.values()), mode=mode(backend))
    for n in (0, 1, 2, 7, 64):
        av = np.sort(np.round(RNG.randn(n) * 2, 1))
        av[n // 2 :] = av[n // 2] if n else av[n // 2 :]
        if n > 3:
            av[-1] = np.nan
        vv = np.concatenate([np.round(RNG.randn(9) * 2, 1), av[:3], [np.nan, np.inf, -np.inf]])
        mv = vv[:12].reshape(3, 4)
        pv = RNG.permutation(n).astype(np.int64)
        iv = np.sort(RNG.randint(-3, 4, size=n)).astype(np.int32)
        iv2v = RNG.randint(-4, 5, size=7).astype(np.int32)
        expected = {
            "left": np.searchsorted(av, vv),
            "right": np.searchsorted(av, vv, "right"),
            "matrix values": np.searchsorted(av, mv, "right"),
            "sorter": np.searchsorted(av[pv], vv, sorter=np.argsort(av[pv], kind="stable")),
            "int": np.searchsorted(iv, iv2v),
            "promoted": np.searchsorted(iv.astype(np.float64), vv),
        }
        got = f(av, vv, mv, pv, iv, iv2v)
        check_all(got, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_topk(backend: str) -> None:
    x, k = T.dmatrix("x"), T.lscalar("k")
    outs = {
        "topk 3": T.topk(x, 3),
        "argtopk 3": T.argtopk(x, 3),
        "topk -2 axis=0": T.topk(x, -2, axis=0),
        "argtopk -2 axis=0 int32": T.argtopk(x, -2, axis=0, idx_dtype="int32"),
        "topk axis=None": T.topk(x, 4, axis=None),
        "topk symbolic k": T.topk(x, k),
        "argtopk symbolic k": T.argtopk(x, k),
    }
    values, indices = T.topk_and_argtopk(x, 2)
    f = arignote.function([x, k], [*outs.values(), values, indices], mode=mode(backend))
    xv = RNG.permutation(35).reshape(5, 7).astype(np.float64)
    order = np.argsort(xv, axis=1, kind="stable")
    order0 = np.argsort(xv, axis=0, kind="stable")
    for kv in (2, -3):
        top = order[:, ::-1][:, :kv] if kv > 0 else order[:, :-kv]
        expected = {
            "topk 3": np.take_along_axis(xv, order[:, ::-1][:, :3], 1),
            "argtopk 3": order[:, ::-1][:, :3],
            "topk -2 axis=0": np.take_along_axis(xv, order0[:2], 0),
            "argtopk -2 axis=0 int32": order0[:2].astype(np.int32),
            "topk axis=None": np.sort(xv, None)[::-1][:4],
            "topk symbolic k": np.take_along_axis(xv, top, 1),
            "argtopk symbolic k": top,
            "topk_and_argtopk values": np.take_along_axis(xv, order[:, ::-1][:, :2], 1),
            "topk_and_argtopk indices": order[:, ::-1][:, :2],
        }
        check_all(f(xv, kv), expected)
    # kth outside 1..n (dynamic length): the bounds check's IndexError, a ValueError
    for bad in (8, -8, 0):
        with pytest.raises(ValueError, match="out of bounds"):
            f(xv, bad)
    # NaN is the largest value (numpy.partition's order)
    nan = xv.copy()
    nan[2, 4] = np.nan
    assert np.isnan(f(nan, 1)[0][2, 0]) and f(nan, 1)[1][2, 0] == 4


@pytest.mark.parametrize("backend", BACKENDS)
def test_unique_bincount_compress_repeat(backend: str) -> None:
    x, i, c = T.dvector("x"), T.ivector("i"), T.bvector("c")
    m, r = T.dmatrix("m"), T.lvector("r")
    values, index, inverse, counts = extra_ops.unique(x, True, True, True)
    outs = {
        "unique": extra_ops.Unique()(m),
        "unique values": values,
        "unique index": index,
        "unique inverse": inverse,
        "unique counts": counts,
        "unique int": extra_ops.unique(i),
        "bincount": T.bincount(i),
        "bincount weights minlength": T.bincount(i, weights=x[: i.shape[0]], minlength=12),
        "compress": extra_ops.compress(c, m, axis=1),
        "compress flat": extra_ops.compress(c, m),
        "repeat vector": T.repeat(m, r, axis=0),
        "repeat scalar": T.repeat(m, 2, axis=1),
        "repeat flat": T.repeat(x, 3),
    }
    f = arignote.function([x, i, c, m, r], list(outs.values()), mode=mode(backend))
    xv = np.array([3.0, 1.0, np.nan, 2.0, 1.0, np.nan, 3.0, -0.5, 2.0])
    iv = np.array([4, 0, 2, 2, 7, 0, 0], dtype=np.int32)
    cv = np.array([1, 0, 0, 3, 1], dtype=np.int8)
    mv = np.round(RNG.randn(3, 6), 0)
    rv = np.array([2, 0, 3])
    uv, ui, uinv, uc = np.unique(xv, True, True, True)
    expected = {
        "unique": np.unique(mv),
        "unique values": uv,
        "unique index": ui,
        "unique inverse": uinv.ravel(),
        "unique counts": uc,
        "unique int": np.unique(iv),
        "bincount": np.bincount(iv).astype(np.int32),
        "bincount weights minlength": np.bincount(iv, xv[:7], minlength=12),
        "compress": np.compress(cv, mv, axis=1),
        "compress flat": np.compress(cv, mv),
        "repeat vector": np.repeat(mv, rv, axis=0),
        "repeat scalar": np.repeat(mv, 2, axis=1),
        "repeat flat": np.repeat(xv, 3),
    }
    check_all(f(xv, iv, cv, mv, rv), expected)
    empty = f(np.zeros(0), np.zeros(0, np.int32), np.zeros(0, np.int8), mv, rv)
    assert empty[1].shape == (0,) and empty[6].shape == (0,) and empty[9].shape == (0,)


@pytest.mark.parametrize("backend", BACKENDS)
def test_diagonals_one_hot_bartlett(backend: str) -> None:
    a, y, n = T.dmatrix("a"), T.ivector("y"), T.iscalar("n")
    t3, k, v = T.dtensor3("t3"), T.iscalar("k"), T.dscalar("v")
    outs = {
        "fill_diagonal": T.fill_diagonal(a, v),
        "fill_diagonal 3-d": T.fill_diagonal(t3, 7.0),
        "fill_diagonal_offset": T.fill_diagonal_offset(a, v, k),
        "to_one_hot": extra_ops.to_one_hot(y, 5),
        "to_one_hot int8": extra_ops.to_one_hot(y, 4, dtype="int8"),
        "bartlett": T.bartlett(n),
    }
    f = arignote.function([a, y, n, t3, k, v], list(outs.values()), mode=mode(backend))
    yv = np.array([0, 3, 1, 1], dtype=np.int32)
    t3v = RNG.randn(3, 3, 3)
    for shape, kv, nv in (((3, 5), 2, 5), ((5, 3), -1, 1), ((4, 4), -5, 0), ((2, 6), 4, -2)):
        av = RNG.randn(*shape)
        diag, off, t3e = av.copy(), av.copy(), t3v.copy()
        np.fill_diagonal(diag, 0.5)
        np.fill_diagonal(t3e, 7.0)
        rows = np.arange(max(0, min(min(shape), shape[1] - kv if kv >= 0 else shape[0] + kv)))
        off[rows + max(-kv, 0), rows + max(kv, 0)] = 0.5
        expected = {
            "fill_diagonal": diag,
            "fill_diagonal 3-d": t3e,
            "fill_diagonal_offset": off,
            "to_one_hot": np.eye(5)[yv],
            "to_one_hot int8": np.eye(4, dtype=np.int8)[yv],
            "bartlett": np.bartlett(nv),
        }
        check_all(f(av, yv, nv, t3v, kv, 0.5), expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_ravel_unravel_index(backend: str) -> None:
    i, j, flat = T.lvector("i"), T.ivector("j"), T.lmatrix("flat")
    dims = T.lvector("dims")
    outs = {
        "ravel C": T.ravel_multi_index((i, j), (4, 5)),
        "ravel F": T.ravel_multi_index([i, j], (4, 5), order="F"),
        "ravel wrap": T.ravel_multi_index((i - 6, j + 7), (4, 5), mode="wrap"),
        "ravel clip": T.ravel_multi_index((i - 2, j + 3), (4, 5), mode="clip"),
        "ravel symbolic dims": T.ravel_multi_index((i, j), dims),
        **{f"unravel C {a}": u for a, u in enumerate(T.unravel_index(flat, (3, 4, 5)))},
        **{f"unravel F {a}": u for a, u in enumerate(T.unravel_index(flat, dims, "F", ndim=2))},
    }
    f = arignote.function([i, j, flat, dims], list(outs.values()), mode=mode(backend))
    iv, jv = np.array([0, 3, 2, 1]), np.array([4, 0, 2, 3], dtype=np.int32)
    fv = np.array([[0, 59, 17], [33, 20, 41]])
    expected = {
        "ravel C": np.ravel_multi_index((iv, jv), (4, 5)),
        "ravel F": np.ravel_multi_index((iv, jv), (4, 5), order="F"),
        "ravel wrap": np.ravel_multi_index((iv - 6, jv + 7), (4, 5), mode="wrap"),
        "ravel clip": np.ravel_multi_index((iv - 2, jv + 3), (4, 5), mode="clip"),
        "ravel symbolic dims": np.ravel_multi_index((iv, jv), (6, 10)),
        **{f"unravel C {a}": u for a, u in enumerate(np.unravel_index(fv, (3, 4, 5)))},
        **{f"unravel F {a}": u for a, u in enumerate(np.unravel_index(fv, (6, 10), "F"))},
    }
    check_all(f(iv, jv, fv, np.array([6, 10])), expected)
    with pytest.raises(IndexError):
        f(iv + 1, jv, fv, np.array([6, 10]))  # 4 is out of bounds for axis 0 (raise mode)
    with pytest.raises(IndexError):
        f(iv - 1, jv, fv, np.array([6, 10]))  # -1 is out of bounds (raise mode)
    with pytest.raises(IndexError):
        f(iv, jv, fv + 1, np.array([6, 10]))  # 60 is out of bounds for the 3x4x5 array


@pytest.mark.parametrize("backend", BACKENDS)
def test_permutations_squeeze_contiguous(backend: str) -> None:
    p, m, pm = T.lvector("p"), T.dmatrix("m"), T.imatrix("pm")
    row = T.TensorType("float64", (True, False, True))("row")
    outs = {
        "inverse_permutation": T.inverse_permutation(p),
        "inverse_permutation rows": T.inverse_permutation(pm),
        "permute_row_elements": T.permute_row_elements(m, pm),
        "permute_row_elements inverse": T.permute_row_elements(m, pm, inverse=1),
        "permute_row_elements one perm": T.permute_row_elements(m, p[:4]),
        "squeeze": T.squeeze(row),
        "cpu_contiguous": extra_ops.cpu_contiguous(m.T),
        "CpuContiguous": extra_ops.CpuContiguous()(m),
        "PermuteRowElements": basic.PermuteRowElements()(m, pm),
        "basic.inverse_permutation": basic.inverse_permutation(p),
        "m.sort(0)": m.sort(0),
        "m.argsort()": m.argsort(),
        "m.repeat(2, axis=0)": m.repeat(2, axis=0),
    }
    f = arignote.function([p, m, pm, row], list(outs.values()), mode=mode(backend))
    pv = RNG.permutation(6)
    mv = RNG.randn(3, 4)
    pmv = np.array([RNG.permutation(4) for _ in range(3)], dtype=np.int32)
    rowv = RNG.randn(1, 5, 1)
    inverse_rows = np.argsort(pmv, axis=1).astype(np.int32)
    expected = {
        "inverse_permutation": np.argsort(pv),
        "inverse_permutation rows": inverse_rows,
        "permute_row_elements": np.take_along_axis(mv, pmv, 1),
        "permute_row_elements inverse": np.take_along_axis(mv, inverse_rows, 1),
        "permute_row_elements one perm": mv[:, pv[:4]] if pv[:4].max() < 4 else None,
        "squeeze": rowv.reshape(5),
        "cpu_contiguous": mv.T,
        "CpuContiguous": mv,
        "PermuteRowElements": np.take_along_axis(mv, pmv, 1),
        "basic.inverse_permutation": None,
        "m.sort(0)": np.sort(mv, 0),
        "m.argsort()": np.argsort(mv, kind="stable"),
        "m.repeat(2, axis=0)": np.repeat(mv, 2, axis=0),
    }
    pv = np.array([2, 0, 3, 1, 5, 4])
    expected["inverse_permutation"] = expected["basic.inverse_permutation"] = np.argsort(pv)
    expected["permute_row_elements one perm"] = mv[:, pv[:4]]
    check_all(f(pv, mv, pmv, rowv), expected)


GRAD_CASES = {
    "cumsum axis=0": (lambda x: T.cumsum(x, 0), [(3, 4)]),
    "cumsum axis=None": (lambda x: T.cumsum(x), [(3, 4)]),
    "cumprod axis=1": (lambda x: T.cumprod(x, 1), [(3, 4)]),
    "diff n=2": (lambda x: extra_ops.diff(x, 2, axis=0), [(5, 3)]),
    "sort": (lambda x: T.sort(x, 0), [(4, 3)]),
    "topk": (lambda x: T.topk(x, 2), [(3, 5)]),
    "fill_diagonal": (lambda a, v: T.fill_diagonal(a, v), [(3, 4), ()]),
    "fill_diagonal_offset": (lambda a, v: T.fill_diagonal_offset(a, v, -1), [(4, 3), ()]),
    "repeat": (lambda x: T.repeat(x, np.array([1, 0, 3]), axis=0), [(3, 2)]),
    "repeat scalar": (lambda x: T.repeat(x, 2), [(3, 2)]),
    "permute_row_elements": (
        lambda x: T.permute_row_elements(x, np.array([[2, 0, 1], [1, 2, 0]])),
        [(2, 3)],
    ),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(GRAD_CASES))
def test_verify_grad(case: str, backend: str) -> None:
    fun, shapes = GRAD_CASES[case]
    rng = np.random.RandomState(3)
    point = [rng.rand(*s) + 0.5 if s else np.asarray(rng.rand() + 0.5) for s in shapes]
    verify_grad(fun, point, n_tests=1, rng=rng, mode=mode(backend))


def test_errors() -> None:
    x, v, i = T.dmatrix("x"), T.dvector("v"), T.ivector("i")
    with pytest.raises(ValueError, match=r"axis\(=2\) out of bounds"):
        T.cumsum(x, 2)
    with pytest.raises(ValueError, match="invalid value for keyword 'side'"):
        extra_ops.searchsorted(v, v, side="middle")
    with pytest.raises(TypeError, match="sorter must be an integer vector"):
        extra_ops.searchsorted(v, v, sorter=v)
    with pytest.raises(TypeError, match="expected a tensor of 1 dimensions"):
        extra_ops.searchsorted(x, v)
    with pytest.raises(TypeError, match="Inputs must be of dimension 1"):
        T.bincount(T.imatrix())
    with pytest.raises(TypeError, match="cannot be interpreted as an index"):
        T.bincount(v)
    with pytest.raises(ValueError, match="The dimension of repeats should not exceed 1"):
        T.repeat(v, T.imatrix())
    with pytest.raises(ValueError, match="Axis should not exceed x.ndim-1"):
        T.repeat(v, 2, axis=1)
    with pytest.raises(TypeError, match="first parameter must have at least two dimensions"):
        T.fill_diagonal(v, 1.0)
    with pytest.raises(TypeError, match="second parameter must be a scalar"):
        T.fill_diagonal(x, v)
    with pytest.raises(TypeError, match="must be the same as the first's"):
        T.fill_diagonal(T.imatrix(), 1.5)
    with pytest.raises(TypeError, match="third parameter must be as integer"):
        T.fill_diagonal_offset(x, 1.0, 1.5)
    with pytest.raises(TypeError, match="Bartlett only works on scalar input"):
        T.bartlett(i)
    with pytest.raises(TypeError, match="multi_index must be a tuple or a list"):
        T.ravel_multi_index(i, (3, 4))
    with pytest.raises(ValueError, match="provide the 'ndim' keyword"):
        T.unravel_index(i, T.lvector())
    with pytest.raises(ValueError, match="topk: kth cannot be zero"):
        T.topk(x, 0)
    with pytest.raises(ValueError, match="order must be non-negative"):
        extra_ops.diff(v, -1)
    with pytest.raises(ValueError, match="kind must be one of"):
        T.sort(v, kind="bogo")
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        T.argsort(x, 2)
    with pytest.raises(NotImplementedError, match="axis"):
        extra_ops.unique(x, axis=0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bincount_assert_nonneg(backend: str) -> None:
    i = T.ivector("i")
    f = arignote.function([i], T.bincount(i, assert_nonneg=True), mode=mode(backend))
    check("bincount", f(np.array([1, 1, 3], np.int32)), np.array([0, 2, 0, 1], np.int32))
    with pytest.raises(IndexError, match="index -2 is out of bounds"):
        f(np.array([1, -2, 3, -1], np.int32))


def test_theano_module_paths() -> None:
    from arignote.tensor.extra_ops import (  # noqa: F401 - Theano's names are there
        Bartlett,
        CpuContiguous,
        CumOp,
        DiffOp,
        FillDiagonal,
        FillDiagonalOffset,
        RepeatOp,
        SearchsortedOp,
        Unique,
        bartlett,
        bincount,
        compress,
        cpu_contiguous,
        cumprod,
        cumsum,
        diff,
        fill_diagonal,
        fill_diagonal_offset,
        ravel_multi_index,
        repeat,
        searchsorted,
        squeeze,
        to_one_hot,
        unravel_index,
    )
    from arignote.tensor.sort import (  # noqa: F401
        ArgSortOp,
        SortOp,
        TopKOp,
        argsort,
        argtopk,
        sort,
        topk,
        topk_and_argtopk,
    )

    for name in (
        "sort argsort topk argtopk topk_and_argtopk DiffOp bincount squeeze repeat bartlett "
        "fill_diagonal fill_diagonal_offset cumsum cumprod unravel_index ravel_multi_index "
        "inverse_permutation permute_row_elements"
    ).split():
        assert callable(getattr(T, name)), name
    assert T.sort is sort
    x = T.dvector("x")
    f = arignote.function(
        [x],
        [
            CumOp(mode="mul")(x),
            DiffOp(n=2)(x),
            SearchsortedOp("right")(x, x),
            SortOp("mergesort")(x),
            ArgSortOp("quicksort")(x),
            *TopKOp(axis=0)(x, 2),
            RepeatOp(axis=0)(x, 2),
            FillDiagonal()(T.dmatrix("m"), 1.0) if False else x,
        ],
        mode=mode("py"),
    )
    xv = np.array([1.0, 3.0, 2.0])
    got = f(xv)
    check("CumOp", got[0], np.cumprod(xv))
    check("DiffOp", got[1], np.diff(xv, 2))
    check("SearchsortedOp", got[2], np.searchsorted(xv, xv, "right"))
    check("SortOp", got[3], np.sort(xv))
    check("ArgSortOp", got[4], np.argsort(xv))
    check("TopKOp values", got[5], np.array([3.0, 2.0]))
    check("TopKOp indices", got[6], np.array([1, 2]))
    check("RepeatOp", got[7], np.repeat(xv, 2))
