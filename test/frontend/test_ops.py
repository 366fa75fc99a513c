"""Every tensor operation against NumPy, through the interpreter and native code.

Each (operation, dtype, broadcast pattern, backend) compiles one function; hypothesis
then draws the run-time shapes and values.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import arignote
import arignote.tensor as T

BACKENDS = ["py", "cvm"]
DTYPES = ["float32", "float64", "int32", "int64", "bool"]
FLOATS = ["float32", "float64"]
NUMERIC = ["float32", "float64", "int32", "int64"]
SETTINGS = settings(max_examples=15, deadline=None)


def values(
    dtype: str, shape: tuple[int, ...], seed: int, *, positive: bool = False, small: bool = False
) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.startswith("int"):
        low = 0 if positive else -20
        return rng.integers(low, 4 if small else 20, size=shape).astype(dtype)
    data = rng.uniform(0.1 if positive else -3, 3, size=shape)
    return data.astype(dtype)


def assert_matches(got: np.ndarray, expected: np.ndarray) -> None:
    assert isinstance(got, np.ndarray), type(got)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    if got.dtype.kind == "f":
        rtol = 2e-6 if got.dtype == np.float32 else 1e-13
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(got, expected)


def _int8_if_bool(a: np.ndarray) -> np.ndarray:
    return a.astype(np.int8) if a.dtype == bool else a


def np_floordiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = _int8_if_bool(a), _int8_if_bool(b)
    with np.errstate(all="ignore"):
        r = np.floor_divide(a, b)
    return np.where(b == 0, 0, r).astype(r.dtype) if r.dtype.kind == "i" else r


def np_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = _int8_if_bool(a), _int8_if_bool(b)
    with np.errstate(all="ignore"):
        r = np.mod(a, b)
    return np.where(b == 0, 0, r).astype(r.dtype) if r.dtype.kind == "i" else r


def _arith(f: Callable[..., Any]) -> Callable[..., np.ndarray]:
    return lambda a, b: np.asarray(f(_int8_if_bool(a), _int8_if_bool(b)))


# name: (symbolic op, numpy reference, dtypes, value options)
BINARY: dict[str, tuple[Callable[..., Any], Callable[..., np.ndarray], list[str], dict]] = {
    "add": (lambda x, y: x + y, _arith(np.add), DTYPES, {}),
    "sub": (lambda x, y: x - y, _arith(np.subtract), DTYPES, {}),
    "mul": (lambda x, y: x * y, _arith(np.multiply), DTYPES, {}),
    "true_div": (lambda x, y: x / y, None, FLOATS, {"positive": True}),
    "floor_div": (lambda x, y: x // y, np_floordiv, NUMERIC, {}),
    "mod": (lambda x, y: x % y, np_mod, NUMERIC, {}),
    "pow": (lambda x, y: x**y, _arith(np.power), NUMERIC, {"positive": True, "small": True}),
    "maximum": (T.maximum, np.maximum, DTYPES, {}),
    "minimum": (T.minimum, np.minimum, DTYPES, {}),
    "lt": (lambda x, y: x < y, np.less, DTYPES, {}),
    "le": (lambda x, y: x <= y, np.less_equal, DTYPES, {}),
    "gt": (lambda x, y: x > y, np.greater, DTYPES, {}),
    "ge": (lambda x, y: x >= y, np.greater_equal, DTYPES, {}),
    "eq": (T.eq, np.equal, DTYPES, {}),
    "neq": (T.neq, np.not_equal, DTYPES, {}),
}

UNARY: dict[str, tuple[Callable[..., Any], Callable[..., np.ndarray], list[str], dict]] = {
    "neg": (lambda x: -x, lambda a: -_int8_if_bool(a), DTYPES, {}),
    "abs": (abs, lambda a: np.abs(_int8_if_bool(a)), DTYPES, {}),
    "exp": (T.exp, np.exp, FLOATS, {}),
    "log": (T.log, np.log, FLOATS, {"positive": True}),
    "tanh": (T.tanh, np.tanh, FLOATS, {}),
    "sqrt": (T.sqrt, np.sqrt, FLOATS, {"positive": True}),
}

# (x broadcastable, y broadcastable): matrix+matrix, row+matrix, col+matrix, scalar+matrix
PATTERNS = [
    ((False, False), (False, False)),
    ((True, False), (False, False)),
    ((False, True), (False, False)),
    ((), (False, False)),
]


def _names(table: dict[str, Any], dtype: str) -> list[str]:
    return [name for name, entry in table.items() if dtype in entry[2]]


@cache
def compiled_binary(dtype: str, pattern: Any, backend: str) -> Any:
    """One function computing every binary op defined on `dtype` (one compile, many
    outputs: a native compile costs a fraction of a second)."""
    x = T.TensorType(dtype, pattern[0])("x")
    y = T.TensorType(dtype, pattern[1])("y")
    outs = [BINARY[name][0](x, y) for name in _names(BINARY, dtype)]
    return arignote.function([x, y], outs, mode=arignote.Mode(linker=backend))


@cache
def compiled_unary(dtype: str, backend: str) -> Any:
    x = T.TensorType(dtype, (False, False))("x")
    outs = [UNARY[name][0](x) for name in _names(UNARY, dtype)]
    return arignote.function([x], outs, mode=arignote.Mode(linker=backend))


def shape_of(pattern: tuple[bool, ...], dims: tuple[int, ...]) -> tuple[int, ...]:
    full = dims[len(dims) - len(pattern) :]
    return tuple(1 if b else d for b, d in zip(pattern, full, strict=True))


def _check(name: str, got: np.ndarray, expected: np.ndarray) -> None:
    if expected.dtype.kind == got.dtype.kind:
        expected = expected.astype(got.dtype, copy=False)  # e.g. int8 results of bools
    try:
        assert_matches(got, expected)
    except AssertionError as e:
        raise AssertionError(f"{name}: {e}") from None


def _option_key(name: str) -> tuple[Any, ...]:
    return tuple(sorted(BINARY[name][3].items()))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("pattern", PATTERNS, ids=["mm", "rm", "cm", "sm"])
@pytest.mark.parametrize("dtype", DTYPES)
@SETTINGS
@given(dims=st.tuples(st.integers(1, 5), st.integers(1, 6)), seed=st.integers(0, 2**16))
def test_binary(dtype: str, pattern: Any, backend: str, dims: Any, seed: int) -> None:
    f = compiled_binary(dtype, pattern, backend)
    names = _names(BINARY, dtype)
    # Some ops need positive or small operands: one call per set of value options,
    # checking the outputs of the ops that asked for those options.
    for key in dict.fromkeys(_option_key(n) for n in names):
        options = dict(key)
        a = values(dtype, shape_of(pattern[0], dims), seed, **options)
        b = values(dtype, shape_of(pattern[1], dims), seed + 1, **options)
        for name, got in zip(names, f(a, b), strict=True):
            if _option_key(name) == key:
                ref = BINARY[name][1]
                _check(name, got, np.asarray(ref(a, b) if ref is not None else a / b))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
@SETTINGS
@given(dims=st.tuples(st.integers(1, 5), st.integers(1, 6)), seed=st.integers(0, 2**16))
def test_unary(dtype: str, backend: str, dims: Any, seed: int) -> None:
    f = compiled_unary(dtype, backend)
    names = _names(UNARY, dtype)
    # positive floats suit log and sqrt; integers keep their negative values for neg/abs
    a = values(dtype, dims, seed, positive=dtype in FLOATS)
    for name, got in zip(names, f(a), strict=True):
        _check(name, got, np.asarray(UNARY[name][1](a)))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_switch_broadcasts(dtype: str, backend: str) -> None:
    c = T.bmatrix("c")  # int8 condition: nonzero is true
    x = T.TensorType(dtype, (True, False))("x")
    y = T.TensorType(dtype, ())("y")
    f = arignote.function([c, x, y], T.switch(c, x, y), mode=arignote.Mode(linker=backend))
    cond = np.array([[0, 1, 2], [3, 0, -1]], dtype=np.int8)
    a = values(dtype, (1, 3), 1)
    b = values(dtype, (), 2)
    assert_matches(f(cond, a, b), np.where(cond != 0, a, b))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("src", DTYPES)
def test_cast(src: str, backend: str) -> None:
    x = T.TensorType(src, (False,))("x")
    f = arignote.function(
        [x], [T.cast(x, dst) for dst in DTYPES], mode=arignote.Mode(linker=backend)
    )
    a = values(src, (7,), 3)
    for dst, got in zip(DTYPES, f(a), strict=True):
        _check(f"cast {src} to {dst}", got, a.astype(dst))


REDUCTIONS = {
    "sum": (T.sum, np.sum),
    "prod": (T.prod, np.prod),
    "max": (T.max, np.max),
    "min": (T.min, np.min),
}
AXES = [None, 0, 1, -1, (0, 2)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions(dtype: str, backend: str) -> None:
    x = T.TensorType(dtype, (False, False, False))("x")
    cases = [(name, axis) for name in REDUCTIONS for axis in AXES]
    outs = [REDUCTIONS[name][0](x, axis=axis) for name, axis in cases]
    f = arignote.function([x], outs, mode=arignote.Mode(linker=backend))
    a = values(dtype, (2, 3, 4), 5, small=True)
    for (name, axis), got in zip(cases, f(a), strict=True):
        expected = np.asarray(REDUCTIONS[name][1](a, axis=axis))
        if name in ("sum", "prod") and dtype in ("int32", "bool"):
            expected = expected.astype(np.int64)  # Theano accumulates integers in int64
        if dtype == "float32" and name in ("sum", "prod"):
            np.testing.assert_allclose(got, expected, rtol=1e-5, err_msg=f"{name} {axis}")
            assert got.dtype == np.float32
        else:
            _check(f"{name} axis={axis}", got, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_reduction_keepdims(backend: str) -> None:
    x = T.dtensor3("x")
    f = arignote.function(
        [x], x.sum(axis=(0, 2), keepdims=True), mode=arignote.Mode(linker=backend)
    )
    a = values("float64", (2, 3, 4), 4)
    assert_matches(f(a), a.sum(axis=(0, 2), keepdims=True))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", NUMERIC)
def test_dot(dtype: str, backend: str) -> None:
    u, v = T.TensorType(dtype, (False,))("u"), T.TensorType(dtype, (False,))("v")
    a, b = (T.TensorType(dtype, (False, False))(n) for n in "ab")
    outs = [T.dot(u, v), T.dot(a, u), T.dot(u, b), T.dot(a, b)]
    f = arignote.function([u, v, a, b], outs, mode=arignote.Mode(linker=backend))
    xu, xv = values(dtype, (5,), 1), values(dtype, (5,), 2)
    xa, xb = values(dtype, (3, 5), 3), values(dtype, (5, 4), 4)
    expected = [np.dot(xu, xv), np.dot(xa, xu), np.dot(xu, xb), np.dot(xa, xb)]
    for kind, got, want in zip(["vv", "mv", "vm", "mm"], f(xu, xv, xa, xb), expected, strict=True):
        if dtype == "float32":
            np.testing.assert_allclose(got, want, rtol=1e-5, err_msg=kind)
            assert got.dtype == np.float32
        else:
            _check(kind, got, np.asarray(want))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("a_shape", "b_shape"),
    [((2, 3, 4), (4, 5)), ((4, 5), (2, 5, 3)), ((5,), (2, 5, 3)), ((2, 3, 4), (4,))],
    ids=["3d-matrix", "matrix-3d", "vector-3d", "3d-vector"],
)
def test_dot_of_more_than_two_dimensions(a_shape, b_shape, backend: str) -> None:
    """Theano's (and NumPy's) `dot`: the last axis of `a` with the second-to-last of `b`
    (it once raised NotImplementedError); the gradient by finite differences."""
    from arignote.gradient import verify_grad

    a = T.TensorType("float64", (False,) * len(a_shape))("a")
    b = T.TensorType("float64", (False,) * len(b_shape))("b")
    mode = arignote.Mode(linker=backend)
    f = arignote.function([a, b], T.dot(a, b), mode=mode)
    xa, xb = values("float64", a_shape, 1), values("float64", b_shape, 2)
    expected = np.dot(xa, xb)
    got = f(xa, xb)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12 * np.abs(xa).sum())
    verify_grad(T.dot, [xa, xb], mode=mode, n_tests=1)
    with pytest.raises(ValueError, match=r"ag\.(dot|gemv|gemm)"):
        f(xa, np.ones(_contracted_axis_longer(b_shape)))


def _contracted_axis_longer(shape: tuple[int, ...]) -> tuple[int, ...]:
    """`shape` with the axis `dot` contracts (its second-to-last, or only) one longer."""
    axis = max(0, len(shape) - 2)
    return shape[:axis] + (shape[axis] + 1,) + shape[axis + 1 :]


@pytest.mark.parametrize("backend", BACKENDS)
def test_dimshuffle_and_transpose(backend: str) -> None:
    x = T.dmatrix("x")
    r = T.drow("r")
    mode = arignote.Mode(linker=backend)
    f = arignote.function(
        [x, r],
        [x.T, x.dimshuffle(1, "x", 0), r.dimshuffle(1), x.dimshuffle("x", 0, 1) + r],
        mode=mode,
    )
    a = values("float64", (3, 4), 1)
    b = values("float64", (1, 4), 2)
    t, e, d, s = f(a, b)
    assert_matches(t, a.T.copy())
    assert_matches(e, a.T[:, None, :].copy())
    assert_matches(d, b[0].copy())
    assert_matches(s, (a + b)[None])


@pytest.mark.parametrize("backend", BACKENDS)
def test_strided_and_transposed_inputs(backend: str) -> None:
    x, y = T.fmatrices("x", "y")
    f = arignote.function([x, y], x * y + 1, mode=arignote.Mode(linker=backend))
    a = values("float32", (6, 4), 1)
    b = values("float32", (4, 3), 2)
    assert_matches(f(a[::2], b.T), a[::2] * b.T + 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_shape_mismatch_is_value_error(backend: str) -> None:
    x, y = T.dmatrices("x", "y")
    f = arignote.function([x, y], x + y, mode=arignote.Mode(linker=backend))
    with pytest.raises(ValueError, match="ag.add"):
        f(np.ones((2, 3)), np.ones((3, 3)))
    # a non-broadcastable dimension of length 1 does not broadcast (Theano's rule)
    with pytest.raises(ValueError, match="ag.add"):
        f(np.ones((1, 3)), np.ones((3, 3)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_dot_mismatch_is_value_error(backend: str) -> None:
    x, y = T.dmatrix("x"), T.dvector("y")
    f = arignote.function([x, y], T.dot(x, y), mode=arignote.Mode(linker=backend))
    with pytest.raises(ValueError, match=r"ag\.(dot|gemv)"):  # specialize: dot → gemv
        f(np.ones((2, 3)), np.ones(4))


@pytest.mark.parametrize("backend", BACKENDS)
def test_empty_max_is_value_error(backend: str) -> None:
    x = T.dvector("x")
    f = arignote.function([x], x.max(), mode=arignote.Mode(linker=backend))
    with pytest.raises(ValueError, match="reduce_max"):
        f(np.ones(0))
    assert_matches(f(np.array([1.0, np.nan])), np.asarray(np.nan))


@pytest.mark.parametrize("backend", BACKENDS)
def test_output_is_input_and_repeated_outputs(backend: str) -> None:
    x = T.dvector("x")
    y = x * 2
    f = arignote.function(
        [x], [x, y, y, T.constant(np.arange(3.0))], mode=arignote.Mode(linker=backend)
    )
    a = np.array([1.0, 2.0])
    outs = f(a)
    assert_matches(outs[0], a)
    assert outs[0] is not a
    assert_matches(outs[1], a * 2)
    assert_matches(outs[2], a * 2)
    assert outs[1] is not outs[2]
    assert_matches(outs[3], np.arange(3.0))
