"""Shapes, creation and selection (issue 13 item 3) against NumPy, on both backends.

One compiled function per (dtype, backend) covers most functions (a native compile
costs about half a second); the error cases compile small functions of their own.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.gradient import verify_grad

BACKENDS = ["py", "cvm"]


def mode(backend: str) -> Any:
    return arignote.Mode(linker=backend)


def check(name: str, got: Any, expected: Any) -> None:
    expected = np.asarray(expected)
    assert isinstance(got, np.ndarray), (name, type(got))
    assert got.dtype == expected.dtype, (name, got.dtype, expected.dtype)
    assert got.shape == expected.shape, (name, got.shape, expected.shape)
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6, err_msg=name)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=name)


def sample(dtype: str) -> np.ndarray:
    """A 3x4 matrix with zeros (for nonzero) and distinct values."""
    a = np.array([[0, 1.5, 0, 2], [3, 0, -4, -1], [0, 0, 7, 0.5]])
    return (a if dtype.startswith("float") else np.round(a * 2)).astype(dtype)


# name: (expression of x (a 3x4 matrix) and v (a vector of 3); NumPy reference of a, w)
CASES: dict[str, tuple[Any, Any]] = {
    "specify_shape": (lambda x, v: T.specify_shape(x, (3, 4)), lambda a, w: a),
    "specify_shape(x.shape)": (lambda x, v: T.specify_shape(x, x.shape), lambda a, w: a),
    "shape_padleft": (lambda x, v: T.shape_padleft(x, 2), lambda a, w: a[None, None]),
    "shape_padright": (lambda x, v: T.shape_padright(v), lambda a, w: w[:, None]),
    "shape_padaxis": (lambda x, v: T.shape_padaxis(x, -2), lambda a, w: a[:, None]),
    "squeeze": (lambda x, v: T.squeeze(T.shape_padaxis(x, 1)), lambda a, w: a),
    "addbroadcast": (
        lambda x, v: T.addbroadcast(x[:1], 0) + x,
        lambda a, w: a[:1] + a,
    ),
    "unbroadcast": (lambda x, v: T.unbroadcast(x[None], 0), lambda a, w: a[None]),
    "patternbroadcast": (
        lambda x, v: T.patternbroadcast(T.shape_padleft(x[0]), (False, False)),
        lambda a, w: a[:1],
    ),
    "swapaxes": (lambda x, v: T.swapaxes(x, 0, -1), lambda a, w: a.T),
    "stack(*)": (lambda x, v: T.stack(x[0], x[1]), lambda a, w: np.stack([a[0], a[1]])),
    "stack(list, 1)": (lambda x, v: T.stack([x, x], 1), lambda a, w: np.stack([a, a], 1)),
    "stacklists": (
        lambda x, v: T.stacklists([[v, v], [v, v]]),
        lambda a, w: np.array([[w, w], [w, w]]),
    ),
    "horizontal_stack": (
        lambda x, v: T.horizontal_stack(x, x[:, :1]),
        lambda a, w: np.hstack([a, a[:, :1]]),
    ),
    "vertical_stack": (lambda x, v: T.vertical_stack(x, x[:1]), lambda a, w: np.vstack([a, a[:1]])),
    "split": (
        lambda x, v: T.concatenate(T.split(x, [1, 0, 3], 3, axis=1)[::-1], axis=1),
        lambda a, w: np.concatenate(np.split(a, [1, 1], axis=1)[::-1], axis=1),
    ),
    "split(symbolic)": (
        lambda x, v: T.split(x, T.stack([x.shape[0] - 1, 1]), 2)[0],
        lambda a, w: a[:2],
    ),
    "tile(int)": (lambda x, v: T.tile(v, 3), lambda a, w: np.tile(w, 3)),
    "tile(list)": (lambda x, v: T.tile(x, (2, 1, 3)), lambda a, w: np.tile(a, (2, 1, 3))),
    "tile(symbolic)": (lambda x, v: T.tile(x, [x.shape[0], 2]), lambda a, w: np.tile(a, (3, 2))),
    "tile(vector)": (
        lambda x, v: T.tile(x, T.stack([x.shape[0] - 1]), ndim=3),
        lambda a, w: np.tile(a, (1, 1, 2)),
    ),
    "repeat(int)": (lambda x, v: T.repeat(x, 2, axis=1), lambda a, w: np.repeat(a, 2, axis=1)),
    "repeat(None)": (lambda x, v: T.repeat(x, 2), lambda a, w: np.repeat(a, 2)),
    "repeat(vector)": (
        lambda x, v: x.repeat(np.array([2, 0, 1], dtype="int32"), axis=0),
        lambda a, w: np.repeat(a, [2, 0, 1], axis=0),
    ),
    "roll(None)": (lambda x, v: T.roll(x, 5), lambda a, w: np.roll(a, 5)),
    "roll(axis)": (lambda x, v: T.roll(x, -1, 1), lambda a, w: np.roll(a, -1, 1)),
    "roll(symbolic)": (lambda x, v: T.roll(x, x.shape[1] + 1, 1), lambda a, w: np.roll(a, 5, 1)),
    "tril": (lambda x, v: T.tril(x), lambda a, w: np.tril(a)),
    "tril(k)": (lambda x, v: T.tril(x, -1), lambda a, w: np.tril(a, -1)),
    "triu": (lambda x, v: T.triu(x, 1), lambda a, w: np.triu(a, 1)),
    "diagonal": (lambda x, v: T.diagonal(x), lambda a, w: np.diagonal(a)),
    "diagonal(offset)": (lambda x, v: x.diagonal(2), lambda a, w: np.diagonal(a, 2)),
    "diagonal(-offset, axes)": (
        lambda x, v: T.diagonal(x, -1, 1, 0),
        lambda a, w: np.diagonal(a, -1, 1, 0),
    ),
    "diagonal(empty)": (lambda x, v: T.diagonal(x, 5), lambda a, w: np.diagonal(a, 5)),
    "diag(matrix)": (lambda x, v: T.diag(x, 1), lambda a, w: np.diag(a, 1)),
    "diag(vector)": (lambda x, v: T.diag(v), lambda a, w: np.diag(w)),
    "diag(vector, k)": (lambda x, v: T.diag(v, -2), lambda a, w: np.diag(w, -2)),
    "trace": (lambda x, v: T.trace(x), lambda a, w: np.trace(a)),
    "flatnonzero": (lambda x, v: T.flatnonzero(x), lambda a, w: np.flatnonzero(a)),
    "nonzero[0]": (lambda x, v: T.nonzero(x)[0], lambda a, w: np.nonzero(a)[0]),
    "nonzero[1]": (lambda x, v: x.nonzero()[1], lambda a, w: np.nonzero(a)[1]),
    "nonzero(matrix)": (lambda x, v: T.nonzero(x, True), lambda a, w: np.array(np.nonzero(a))),
    "nonzero_values": (lambda x, v: x.nonzero_values(), lambda a, w: a[a != 0]),
    "choose(list)": (
        lambda x, v: T.choose(T.cast(x > 0, "int8") + T.cast(x > 1, "int8"), [x, -x, x[0]]),
        lambda a, w: np.choose((a > 0).astype("int8") + (a > 1), [a, -a, a[0]]),
    ),
    "choose(tensor, wrap)": (
        lambda x, v: T.choose(T.arange(4) + 1, T.stack([x, 2 * x]), mode="wrap"),
        lambda a, w: np.choose(np.arange(4) + 1, np.stack([a, 2 * a]), mode="wrap"),
    ),
    "choose(broadcast tensor)": (
        lambda x, v: T.choose(T.cast(x > 0, "int8"), T.stack([x[0], x[1]])),
        lambda a, w: np.choose((a > 0).astype("int8"), np.stack([a[0], a[1]])),
    ),
    "choose(broadcast choices)": (
        lambda x, v: T.choose(
            T.cast(x > 0, "int8"), T.shape_padleft(T.stack([x[0], x[1]]), 1).dimshuffle(1, 0, 2)
        ),
        lambda a, w: np.choose((a > 0).astype("int8"), np.stack([a[0], a[1]])[:, None]),
    ),
    "choose(clip)": (
        lambda x, v: T.choose(T.arange(-1, 3), [x[0], x[1]], mode="clip"),
        lambda a, w: np.choose(np.arange(-1, 3), [a[0], a[1]], mode="clip"),
    ),
    "any": (lambda x, v: T.any(x, 0), lambda a, w: np.any(a, 0)),
    "all": (lambda x, v: x.all(1), lambda a, w: np.all(a, 1)),
    "all(keepdims)": (lambda x, v: T.all(x, keepdims=True), lambda a, w: np.all(a, keepdims=True)),
    "any(empty)": (lambda x, v: T.any(x[:0]), lambda a, w: np.any(a[:0])),
    "ptp": (lambda x, v: T.ptp(x, 1), lambda a, w: np.ptp(a, 1)),
    "ptp(None)": (lambda x, v: x.ptp(), lambda a, w: np.ptp(a)),
    "largest": (lambda x, v: T.largest(x, x[0] * 2), lambda a, w: np.maximum(a, a[0] * 2)),
    "largest(3)": (lambda x, v: T.largest(x, 1, -x), lambda a, w: np.maximum(np.maximum(a, 1), -a)),
    "smallest": (lambda x, v: T.smallest(x, -x), lambda a, w: np.minimum(a, -a)),
    "smallest(3)": (
        lambda x, v: T.smallest(x, 1, -x),
        lambda a, w: np.minimum(np.minimum(a, 1), -a),
    ),
    "batched_dot(3, 3)": (
        lambda x, v: T.batched_dot(T.stack([x, x + 1]), T.stack([x.T, x.T])),
        lambda a, w: np.stack([a @ a.T, (a + 1) @ a.T]),
    ),
    "batched_dot(2, 3)": (
        lambda x, v: T.batched_dot(x, T.stack([x.T, x.T, x.T])),
        lambda a, w: np.einsum("bm,mk->bk", a, a.T),
    ),
    "batched_dot(3, 2)": (
        lambda x, v: T.batched_dot(T.stack([x] * 3), x),
        lambda a, w: np.einsum("nm,bm->bn", a, a),
    ),
    "batched_dot(2, 2)": (lambda x, v: T.batched_dot(x, x), lambda a, w: (a * a).sum(1)),
    "batched_dot(1, 2)": (lambda x, v: T.batched_dot(v, x), lambda a, w: w[:, None] * a),
    "batched_tensordot": (
        lambda x, v: T.batched_tensordot(T.stack([x, x]), T.stack([x, -x]), [[2], [2]]),
        lambda a, w: np.stack([a @ a.T, -a @ a.T]),
    ),
    "batched_tensordot(int)": (
        lambda x, v: T.batched_tensordot(T.stack([x, x]), T.stack([x.T, x.T]), 1),
        lambda a, w: np.stack([a @ a.T, a @ a.T]),
    ),
}


CHUNKS = 6
"""The cases compile in this many functions (a native compile of all of them at once
takes long on a loaded machine)."""


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["float64", "int32"])
@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_functions_as_numpy(chunk: int, dtype: str, backend: str) -> None:
    x, v = T.matrix("x", dtype=dtype), T.vector("v", dtype=dtype)
    names = list(CASES)[chunk::CHUNKS]
    outs = [CASES[n][0](x, v) for n in names]
    f = arignote.function([x, v], outs, mode=mode(backend), on_unused_input="ignore")
    a, w = sample(dtype), sample(dtype)[:, 2].copy()
    for name, got in zip(names, f(a, w), strict=True):
        expected = CASES[name][1](a, w)
        if name.startswith(("flatnonzero", "nonzero[", "nonzero(")):
            expected = np.asarray(expected).astype("int64")
        elif name in ("trace",) and dtype == "int32":
            expected = np.asarray(expected).astype("int64")  # sum's int64 accumulator
        elif np.asarray(expected).dtype != np.bool_:
            expected = np.asarray(expected).astype(
                got.dtype if name.startswith("batched") else dtype
            )
        check(name, got, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_creation_as_numpy(backend: str) -> None:
    n, k = T.lscalar("n"), T.iscalar("k")
    outs = [
        T.eye(3),
        T.eye(n, 4, k),
        T.eye(2, dtype="int32"),
        T.tri(3, 4, 1),
        T.tri(n, dtype="int8"),
        T.identity_like(T.zeros((n, 2), dtype="float32")),
        *T.mgrid[0:n, 1:7:2],
        *T.ogrid[0:3, 0:n],
        T.arange(n),
    ]
    f = arignote.function([n, k], outs, mode=mode(backend), on_unused_input="ignore")
    floatx = arignote.config.floatX
    expected = [
        np.eye(3, dtype=floatx),
        np.eye(3, 4, -1, dtype=floatx),
        np.eye(2, dtype="int32"),
        np.tri(3, 4, 1, dtype=floatx),
        np.tri(3, dtype="int8"),
        np.eye(3, 2, dtype="float32"),
        *np.mgrid[0:3, 1:7:2],
        *np.ogrid[0:3, 0:3],
        np.arange(3),
    ]
    for i, (got, want) in enumerate(zip(f(3, -1), expected, strict=True)):
        check(f"output {i}", got, np.asarray(want).astype(want.dtype if i < 6 else "int64"))


# --- indexing: boolean masks, index arrays with slices; get, set and inc ---------------

INDEX_KEYS: dict[str, tuple[Any, Any]] = {
    # name: (symbolic key of x (3x4x3), i (lvector), m (bool matrix 3x4); NumPy key)
    "x[x > 0]": (lambda x, i, m: x > 0, lambda a, i, m: a > 0),
    "x[m]": (lambda x, i, m: m, lambda a, i, m: m),
    "x[:, :, mask]": (
        lambda x, i, m: (slice(None), slice(None), x[0, 0] > 0),
        lambda a, i, m: (slice(None), slice(None), a[0, 0] > 0),
    ),
    "x[numpy mask]": (
        lambda x, i, m: np.array([True, False, True]),
        lambda a, i, m: np.array([True, False, True]),
    ),
    "x[i, 1:3]": (lambda x, i, m: (i, slice(1, 3)), lambda a, i, m: (i, slice(1, 3))),
    "x[:, i]": (lambda x, i, m: (slice(None), i), lambda a, i, m: (slice(None), i)),
    "x[1:, :, i]": (
        lambda x, i, m: (slice(1, None), slice(None), i),
        lambda a, i, m: (slice(1, None), slice(None), i),
    ),
    "x[i, :, i]": (lambda x, i, m: (i, slice(None), i), lambda a, i, m: (i, slice(None), i)),
    "x[i, 1, ::-1]": (
        lambda x, i, m: (i, 1, slice(None, None, -1)),
        lambda a, i, m: (i, 1, slice(None, None, -1)),
    ),
    "x[m, ::2]": (
        lambda x, i, m: (m, slice(None, None, 2)),
        lambda a, i, m: (m, slice(None, None, 2)),
    ),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("chunk", range(3))
def test_advanced_indexing_get_set_inc(chunk: int, backend: str) -> None:
    x, i, m = T.dtensor3("x"), T.lvector("i"), T.bmatrix("m")
    mask = T.neq(m, 0)
    keys = dict(list(INDEX_KEYS.items())[chunk::3])
    outs = []
    for build, _ in keys.values():
        sub = x[build(x, i, mask)]
        outs += [sub, T.set_subtensor(sub, -1.0), T.inc_subtensor(sub, sub * 2 + 1)]
    f = arignote.function([x, i, m], outs, mode=mode(backend), on_unused_input="ignore")
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 4, 3))
    iv, mv = np.array([2, 0, -1, 2]), (rng.normal(size=(3, 4)) > 0).astype("int8")
    got = iter(f(a, iv, mv))
    for name, (_, numpy_key) in keys.items():
        key = numpy_key(a, iv, mv.astype(bool))
        check(name, next(got), a[key])
        expected_set = a.copy()
        expected_set[key] = -1
        check(f"set {name}", next(got), expected_set)
        expected_inc = a.copy()
        np.add.at(expected_inc, key, a[key] * 2 + 1)  # repeated indices accumulate
        check(f"inc {name}", next(got), expected_inc)


@pytest.mark.parametrize("backend", BACKENDS)
def test_set_subtensor_broadcasts_the_value(backend: str) -> None:
    x, i = T.dmatrix("x"), T.lvector("i")
    outs = [T.set_subtensor(x[:, i], T.addbroadcast(x[:, 0:1], 1)), T.inc_subtensor(x[x > 0], 10.0)]
    f = arignote.function([x, i], outs, mode=mode(backend))
    a = np.arange(12.0).reshape(3, 4) - 5
    b = a.copy()
    b[:, [1, 3]] = a[:, 0:1]
    c = a.copy()
    c[a > 0] += 10
    got = f(a, np.array([1, 3]))
    check("set x[:, i]", got[0], b)
    check("inc x[x > 0]", got[1], c)


# --- gradients -------------------------------------------------------------------------

GRAD_CASES: dict[str, tuple[Any, list[tuple[int, ...]]]] = {
    "specify_shape": (lambda x: T.specify_shape(x, (3, 4)) ** 2, [(3, 4)]),
    "addbroadcast": (lambda x: T.addbroadcast(x, 0) * 2, [(1, 4)]),
    "unbroadcast": (lambda x: T.unbroadcast(x[None], 0) * 2, [(3, 4)]),
    "split": (lambda x: T.split(x, [1, 3], 2, axis=1)[1] ** 2, [(3, 4)]),
    "tile": (lambda x: T.tile(x, (2, 3)), [(3, 4)]),
    "repeat(int)": (lambda x: T.repeat(x, 2, axis=0), [(3, 4)]),
    "repeat(vector)": (lambda x: T.repeat(x, np.array([2, 0, 1, 3]), axis=1), [(3, 4)]),
    "roll": (lambda x: T.roll(x, 2, 1) * T.arange(4), [(3, 4)]),
    "tril": (lambda x: T.tril(x, 1), [(3, 4)]),
    "triu": (lambda x: T.triu(x), [(3, 4)]),
    "diagonal": (lambda x: T.diagonal(x, 1), [(3, 4)]),
    "diag(vector)": (lambda x: T.diag(x, 1), [(3,)]),
    "trace": (lambda x: T.trace(x), [(3, 4)]),
    "choose": (lambda x, y: T.choose(T.arange(4) % 2, [x, y]), [(3, 4), (4,)]),
    "nonzero_values": (lambda x: T.nonzero_values(T.switch(x > 0, x, 0)), [(3, 4)]),
    "x[x > 0]": (lambda x: x[x > 0] ** 2, [(3, 4)]),
    "x[i, 1:3]": (lambda x: x[np.array([2, 0, 2]), 1:3] ** 2, [(3, 4)]),
    "x[:, i]": (lambda x: x[:, np.array([3, 0])] ** 2, [(3, 4)]),
    "set x[:, i]": (lambda x, y: T.set_subtensor(x[:, np.array([3, 0])], y) ** 2, [(3, 4), (2,)]),
    "inc x[i, 1:3]": (
        lambda x, y: T.inc_subtensor(x[np.array([2, 0, 2]), 1:3], y) ** 2,
        [(3, 4), (3, 2)],
    ),
    "set x[x > 0]": (lambda x: T.set_subtensor(x[x > 0], 0.5) ** 2, [(3, 4)]),
    "ptp": (lambda x: T.ptp(x, 0), [(3, 4)]),
    "largest": (lambda x, y: T.largest(x, y, 0.25), [(3, 4), (4,)]),
    "swapaxes": (lambda x: T.swapaxes(x, 0, 1) * T.arange(3), [(3, 4)]),
    "stacklists": (lambda x, y: T.stacklists([[x, y], [y, x]]), [(4,), (4,)]),
    "batched_dot": (lambda x, y: T.batched_dot(x, y), [(2, 3, 4), (2, 4, 2)]),
    "batched_tensordot": (
        lambda x, y: T.batched_tensordot(x, y, [[1], [2]]),
        [(2, 3, 4), (2, 5, 3)],
    ),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", list(GRAD_CASES))
def test_verify_grad(case: str, backend: str) -> None:
    fun, shapes = GRAD_CASES[case]
    rng = np.random.RandomState(0)
    point = [rng.uniform(-2, 2, size=s) for s in shapes]
    verify_grad(fun, point, n_tests=1, rng=rng, mode=mode(backend))


# --- types, dtypes and module paths ----------------------------------------------------


def test_broadcast_patterns_and_dtypes() -> None:
    x = T.dmatrix("x")
    assert T.addbroadcast(x, 0).broadcastable == (True, False)
    assert T.addbroadcast(x, [0, 1]).broadcastable == (True, True)
    assert T.unbroadcast(T.addbroadcast(x, 0), 0).broadcastable == (False, False)
    assert T.patternbroadcast(x, (False, True)).broadcastable == (False, True)
    assert T.shape_padleft(x).broadcastable == (True, False, False)
    assert T.shape_padright(x, 2).broadcastable == (False, False, True, True)
    assert T.shape_padaxis(x, 1).broadcastable == (False, True, False)
    assert T.squeeze(T.shape_padaxis(T.shape_padleft(x), 3)).broadcastable == (False, False)
    assert T.specify_shape(x, (1, 5)).broadcastable == (True, False)
    assert T.eye(3).dtype == arignote.config.floatX
    assert T.any(x).dtype == T.all(x).dtype == "bool"
    assert T.flatnonzero(x).dtype == "int64"
    assert all(i.dtype == "int64" for i in x.nonzero())
    assert T.choose(T.ivector(), [T.fvector(), T.dvector()]).dtype == "float64"
    assert T.batched_dot(T.ftensor3(), T.ftensor3()).dtype == "float32"


def test_theano_module_paths() -> None:
    from arignote.tensor import shape_ops

    for name in [
        "specify_shape",
        "addbroadcast",
        "unbroadcast",
        "patternbroadcast",
        "shape_padleft",
        "shape_padright",
        "shape_padaxis",
        "squeeze",
        "stack",
        "stacklists",
        "horizontal_stack",
        "vertical_stack",
        "split",
        "tile",
        "repeat",
        "roll",
        "swapaxes",
        "eye",
        "identity_like",
        "tri",
        "tril",
        "triu",
        "diag",
        "diagonal",
        "trace",
        "mgrid",
        "ogrid",
        "choose",
        "nonzero",
        "flatnonzero",
        "nonzero_values",
        "take",
        "batched_dot",
        "batched_tensordot",
        "any",
        "all",
        "ptp",
        "largest",
        "smallest",
    ]:
        assert hasattr(T, name), name
    assert T.eye is shape_ops.eye
    from arignote.tensor import basic

    assert basic.tile is shape_ops.tile and basic.any is shape_ops.any  # Theano's paths
    with pytest.raises(AttributeError):
        basic.no_such_function  # noqa: B018


# --- errors ----------------------------------------------------------------------------


def test_bad_arguments_raise_at_build_time() -> None:
    x, v = T.dmatrix("x"), T.dvector("v")
    with pytest.raises(IndexError, match="swapaxes: axis 2 is out of range"):
        T.swapaxes(x, 0, 2)
    with pytest.raises(IndexError, match="shape_padaxis: axis 4 is out of range"):
        T.shape_padaxis(x, 4)
    with pytest.raises(IndexError, match="addbroadcast: axis -3"):
        T.addbroadcast(x, -3)
    with pytest.raises(ValueError, match="specify_shape: the shape has 1 entries"):
        T.specify_shape(x, (3,))
    with pytest.raises(ValueError, match="cannot have length 2"):
        T.specify_shape(T.specify_shape(x, (3, 4)), (2, 4))
    with pytest.raises(ValueError, match="split: 2 sizes given for n_splits=3"):
        T.split(x, [1, 2], 3)
    with pytest.raises(ValueError, match="tile: negative repetition count"):
        T.tile(x, (2, -1))
    with pytest.raises(ValueError, match="tile: if reps is a symbolic vector, ndim"):
        T.tile(x, T.lvector())
    with pytest.raises(ValueError, match="repeat: negative repetition count"):
        T.repeat(x, -1)
    with pytest.raises(TypeError, match="repeat: repeats must be an integer"):
        T.repeat(x, v)
    with pytest.raises(ValueError, match="diagonal: axis1 and axis2 cannot be the same"):
        T.diagonal(x, 0, 1, 1)
    with pytest.raises(ValueError, match="flatnonzero: Nonzero only supports non-scalar"):
        T.flatnonzero(T.dscalar())
    with pytest.raises(ValueError, match="choose: mode must be"):
        T.choose(T.ivector(), [v, v], mode="bad")
    with pytest.raises(TypeError, match="choose: a must hold integers"):
        T.choose(v, [v, v])
    with pytest.raises(TypeError, match="batched_dot: each operand must have a batch axis"):
        T.batched_dot(T.dscalar(), v)
    with pytest.raises(IndexError, match="boolean index did not match indexed array"):
        T.specify_shape(x, (3, 4))[np.array([True, False])]
    with pytest.raises(ValueError, match="specify_shape: the operand of shape 3 cannot"):
        T.split(x, T.stack([1, 1, 2]), 2)
    with pytest.raises(IndexError, match="too many indices"):
        x[T.btensor3() > 0]


RUNTIME_ERRORS: dict[str, tuple[Any, str]] = {
    # name: (output of x (a 3x4 matrix), n (an lscalar, 2 at run time) and s (an lvector,
    # [1, 1, 2] at run time), message)
    "specify_shape": (lambda x, n: T.specify_shape(x, (n, 4)), "differs from the specified shape"),
    "addbroadcast": (lambda x, n: T.addbroadcast(x, 0), "differs from the specified shape"),
    "split sum": (lambda x, n: T.split(x, T.stack([n, n]), 2, 0)[0], "sum to the length"),
    "split negative": (
        lambda x, n: T.split(x, T.stack([n + 3, -n + 1]), 2, 1)[0],
        "must be non-negative",
    ),
    "split count": (lambda x, n, s: T.split(x, s, 2, 1)[0], "specified shape"),
    "tile(vector)": (lambda x, n, s: T.tile(x, s, 2), "tile: reps has more than ndim entries"),
    "repeat counts": (lambda x, n: T.repeat(x, T.stack([n, n]), 0), "specified shape"),
    "repeat negative": (lambda x, n: T.repeat(x, T.stack([n, -n, n]), 0), "must not be negative"),
    "repeat scalar": (lambda x, n: T.repeat(x, -n, 0), "must not be negative"),
    "choose": (lambda x, n: T.choose(T.arange(4) - n, [x, x]), "invalid entry in choice array"),
    "mask shape": (
        lambda x, n: x[T.ones((n, 4), dtype="bool")],
        "differs from the specified shape",
    ),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", list(RUNTIME_ERRORS))
def test_run_time_errors_are_value_errors(case: str, backend: str) -> None:
    build, message = RUNTIME_ERRORS[case]
    x, n, s = T.dmatrix("x"), T.lscalar("n"), T.lvector("s")
    out = build(x, n, s) if build.__code__.co_argcount == 3 else build(x, n)
    f = arignote.function([x, n, s], out, mode=mode(backend), on_unused_input="ignore")
    with pytest.raises(ValueError, match=message):
        f(np.zeros((3, 4)), 2, np.array([1, 1, 2]))


# --- Theano's signatures of the existing reductions and take ---------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_reductions_take_theano_positional_arguments(backend: str) -> None:
    # Theano's order: sum(input, axis, dtype, keepdims, acc_dtype); mean(input, axis,
    # dtype, op, keepdims, acc_dtype); take(a, indices, axis, mode)
    x, i = T.imatrix("x"), T.lvector("i")
    outs = [
        T.sum(x, 0, "float32"),
        x.sum(1, "int32", True),
        T.prod(x, None, "float64"),
        T.mean(x, 1, "float32", False, True),
        T.sum(x, 0, "int32", False, "float64"),
        T.take(x, i, 1, "wrap"),
        x.ravel(),
        x.take(i, 0, "clip"),
    ]
    f = arignote.function([x, i], outs, mode=mode(backend))
    a, iv = np.arange(12, dtype="int32").reshape(3, 4) - 4, np.array([-5, 1, 7])
    expected = [
        a.sum(0, dtype="float32"),
        a.sum(1, dtype="int32", keepdims=True),
        a.prod(dtype="float64"),
        a.mean(1, dtype="float32", keepdims=True),
        a.sum(0, dtype="float64").astype("int32"),
        np.take(a, iv, 1, mode="wrap"),
        a.ravel(),
        np.take(a, iv, 0, mode="clip"),
    ]
    for k, (got, want) in enumerate(zip(f(a, iv), expected, strict=True)):
        check(f"output {k}", got, want)
    with pytest.raises(ValueError, match="take: mode must be"):
        T.take(x, i, 0, "bad")
