"""The table-driven elementwise ops (`ag.TABLE`: exp ... hypot) on both backends.

Values are compared with NumPy in ulps of the result dtype: float32 results against the
float64 reference rounded to float32 (libm's float functions are within about 1 ulp,
so 4 ulps leaves room for any x86-64 libm), float64 results against NumPy's float64
(which may itself use a 4-ulp vector library). Special values (NaN, infinities, signed
zeros, domain edges) must match exactly. One compiled function per dtype and backend
covers every op.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.dialects import ag
from arignote.gradient import grad, verify_grad

BACKENDS = ["py", "cvm"]
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan]
ARITH = [e for e in ag.TABLE if e.differentiable_type]  # float/numeric ops of one result type
UNARY = [e for e in ARITH if e.arity == 1]
BINARY = [e for e in ARITH if e.arity == 2]
PREDICATES = [e for e in ag.TABLE if e.result == "bool"]  # isnan, isinf
BITWISE = [e for e in ag.TABLE if e.category == "integer"]  # and_, or_, xor, invert


def mode(backend: str) -> arignote.Mode:
    return arignote.Mode(linker=backend)


def unary_points(name: str) -> list[float]:
    """24 inputs for `name`: its domain's edges and outside, specials, random inside."""
    rng = np.random.default_rng(sum(map(ord, name)))
    if name in ("arcsin", "arccos", "arctanh"):
        edges = [1.0, -1.0, 1.5, -1.5, 0.999, -0.5]
        inside = rng.uniform(-1, 1, 24)
    elif name == "arccosh":
        edges = [1.0, 0.5, -1.0, 1e10, 1.001]
        inside = rng.uniform(1, 10, 24)
    elif name in ("log", "log2", "log10", "sqrt"):
        edges = [1.0, -1.0, 8.0, 1000.0, 1e-30, 1e30]
        inside = rng.uniform(0.01, 100, 24)
    else:
        edges = [100.0, -100.0, 1000.0, -1000.0, 0.5, -2.5, 1e-30, 3.0]
        inside = rng.uniform(-5, 5, 24)
    points = SPECIAL + edges
    return points + list(inside[: 24 - len(points)])


def binary_points(name: str) -> tuple[list[float], list[float]]:
    inf, nan = np.inf, np.nan
    a = [0.0, -0.0, 0.0, -0.0, 1.0, -1.0, inf, -inf, inf, nan, 1e30, 3.0]
    b = [0.0, 0.0, -0.0, -0.0, 0.0, -0.0, inf, inf, nan, inf, 1e30, -4.0]
    rng = np.random.default_rng(sum(map(ord, name)))
    a += list(rng.uniform(-5, 5, 12))
    b += list(rng.uniform(-5, 5, 12))
    return a, b


def assert_ulp(name: str, got: np.ndarray, expected: np.ndarray, maxulp: int) -> None:
    """`got` equals `expected` (same dtype) within `maxulp` ulps; NaN, infinities and
    zeros (with their sign) exactly."""
    assert got.dtype == expected.dtype, (name, got.dtype, expected.dtype)
    assert got.shape == expected.shape, (name, got.shape, expected.shape)
    if got.dtype.kind != "f":
        np.testing.assert_array_equal(got, expected, err_msg=name)
        return
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected), err_msg=name)
    exact = np.isinf(expected) | (expected == 0)  # NaN's sign bit is not specified
    np.testing.assert_array_equal(got[exact], expected[exact], err_msg=name)
    np.testing.assert_array_equal(np.signbit(got[exact]), np.signbit(expected[exact]), name)
    finite = np.isfinite(expected) & (expected != 0)
    spacing = np.spacing(np.abs(expected[finite]))
    error = np.abs(got[finite].astype(np.float64) - expected[finite].astype(np.float64))
    worst = np.max(error / spacing, initial=0.0)
    assert worst <= maxulp, f"{name}: {worst:.1f} ulps (allowed {maxulp})"


def reference(entry: ag.Elementwise, args: list[np.ndarray], out_dtype: np.dtype) -> np.ndarray:
    """NumPy's value: computed in float64 and rounded for a float32 result."""
    with np.errstate(all="ignore"):
        if out_dtype == np.float32:
            return np.asarray(entry.numpy(*(a.astype(np.float64) for a in args)), np.float32)
        return np.asarray(entry.numpy(*args))


def max_ulp(dtype: np.dtype) -> int:
    return 4 if dtype == np.float32 else 8


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_values_and_special_values(dtype: str, backend: str) -> None:
    unary_inputs = [T.vector(e.name, dtype=dtype) for e in UNARY]
    binary_inputs = [(T.vector(dtype=dtype), T.vector(dtype=dtype)) for _ in BINARY]
    outputs = [getattr(T, e.name)(x) for e, x in zip(UNARY, unary_inputs, strict=True)]
    outputs += [getattr(T, e.name)(a, b) for e, (a, b) in zip(BINARY, binary_inputs, strict=True)]
    variables = unary_inputs + [v for pair in binary_inputs for v in pair]
    f = arignote.function(variables, outputs, mode=mode(backend))
    values = [np.array(unary_points(e.name), dtype=dtype) for e in UNARY]
    pairs = [[np.array(p, dtype=dtype) for p in binary_points(e.name)] for e in BINARY]
    results = f(*values, *(v for pair in pairs for v in pair))
    cases = [[v] for v in values] + pairs
    for entry, args, got in zip(UNARY + BINARY, cases, results, strict=True):
        expected = reference(entry, args, np.dtype(dtype))
        assert_ulp(entry.name, got, expected, max_ulp(np.dtype(dtype)))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["int8", "int32", "bool"])
def test_integer_inputs_follow_theano_dtype_rules(dtype: str, backend: str) -> None:
    x = T.vector("x", dtype=dtype)
    y = T.vector("y", dtype=dtype)
    outputs = [getattr(T, e.name)(x) for e in UNARY] + [getattr(T, e.name)(x, y) for e in BINARY]
    f = arignote.function([x, y], outputs, mode=mode(backend))
    if dtype == "bool":
        a, b = np.array([True, False, True]), np.array([False, False, True])
    else:
        a = np.array([0, 1, -1, 7, -20, 100, 3], dtype=dtype)
        b = np.array([2, 0, -3, 7, 5, -100, 1], dtype=dtype)
    as_float = "float32" if dtype in ("int8", "bool") else "float64"
    for entry, got in zip(UNARY + BINARY, f(a, b), strict=True):
        args = [a] if entry.arity == 1 else [a, b]
        if entry.category in ("float", "inexact"):  # Theano's upgrade_to_float
            out = np.dtype(as_float)
            expected = reference(entry, [v.astype(out) for v in args], out)
            assert_ulp(entry.name, got, expected, max_ulp(out))
        else:  # sqr, sgn: integers stay integers, bools compute in int8
            operand = a.astype("int8") if dtype == "bool" else a
            with np.errstate(all="ignore"):
                assert_ulp(entry.name, got, entry.numpy(operand), 0)


def test_frontend_names_and_aliases() -> None:
    x = T.dvector("x")
    for alias, name in [("square", "sqr"), ("reciprocal", "inv"), ("sign", "sgn")]:
        assert getattr(T, alias) is not None and alias in T.__all__
        assert str(getattr(T, alias)(x).owner.op) == f"Elemwise{{{name}}}"
    assert str(T.sin(x).owner.op) == "Elemwise{sin}"
    assert str(T.arctan2(x, x).owner.op) == "Elemwise{arctan2}"
    with pytest.raises(ValueError, match="broadcast"):
        T.hypot(T.dvector(), T.constant(np.zeros(3)) + T.constant(np.zeros((2, 2))))


def test_python_number_mixes_as_in_theano() -> None:
    f = T.fvector()
    assert T.arctan2(f, 2.0).dtype == "float32"
    assert T.hypot(f, 2).dtype == "float32"
    assert T.arctan2(T.ivector(), 1).dtype == "float64"


GRAD_POINTS: dict[str, list[np.ndarray]] = {
    "arcsin": [np.array([-0.7, -0.2, 0.3, 0.8])],
    "arccos": [np.array([-0.7, -0.2, 0.3, 0.8])],
    "arctanh": [np.array([-0.7, -0.2, 0.3, 0.8])],
    "arccosh": [np.array([1.3, 2.0, 4.5, 7.0])],
    "log": [np.array([0.3, 1.0, 2.5, 7.0])],
    "sqrt": [np.array([0.3, 1.0, 2.5, 7.0])],
    "log1p": [np.array([-0.6, 0.1, 2.5, 7.0])],
    "log2": [np.array([0.3, 1.0, 2.5, 7.0])],
    "log10": [np.array([0.3, 1.0, 2.5, 7.0])],
    "inv": [np.array([-2.0, -0.6, 0.5, 1.7])],
    "tan": [np.array([-1.2, -0.4, 0.3, 1.1])],
    "arctan2": [np.array([-1.2, 0.4, 0.3, 2.1]), np.array([0.9, -1.4, 0.6, -0.2])],
    "hypot": [np.array([-1.2, 0.4, 0.3, 2.1]), np.array([0.9, -1.4, 0.6, -0.2])],
    "erfinv": [np.array([-0.7, -0.2, 0.3, 0.8])],
    "erfcinv": [np.array([0.3, 0.8, 1.2, 1.7])],
}
DIFFERENTIABLE = [e.name for e in ag.TABLE if e.grad is not None]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_verify_grad(name: str, backend: str) -> None:
    point = GRAD_POINTS.get(name, [np.array([-1.7, -0.6, 0.4, 1.3])])
    fun: Any = getattr(T, name)
    verify_grad(fun, point, n_tests=1, rng=np.random.RandomState(0), mode=mode(backend))


@pytest.mark.parametrize("backend", BACKENDS)
def test_piecewise_constant_ops_have_zero_gradient(backend: str) -> None:
    x = T.dvector("x")
    for name in [e.name for e in ARITH if e.grad is None and e.grad_defined]:
        g = grad(T.sum(getattr(T, name)(x) * x), x)
        f = arignote.function([x], g, mode=mode(backend))
        point = np.array([-1.5, 0.0, 2.5])
        # d/dx (op(x) * x) = op(x) where op is constant almost everywhere
        np.testing.assert_array_equal(f(point), ag.OPS[name].ENTRY.numpy(point))


# --- the dialect ---------------------------------------------------------------------


def _context() -> Any:
    from xdsl.context import Context
    from xdsl.dialects.builtin import Builtin
    from xdsl.dialects.func import Func

    ctx = Context()
    for dialect in (Builtin, Func, ag.Ag):
        ctx.load_dialect(dialect)
    return ctx


def _same_type_op(entry: ag.Elementwise, t: str) -> str:
    """The op of `entry` applied to `%x` (twice for a binary op), all of type `t`."""
    if entry.arity == 2:
        return f"%r = ag.{entry.name} %x, %x : {t}, {t} -> {t}"
    return f"%r = ag.{entry.name} %x : {t}"


def _parse(body: str, args: str) -> Any:
    from xdsl.parser import Parser

    src = f"func.func @f({args}) {{\n  {body}\n  func.return\n}}"
    module = Parser(_context(), src).parse_module()
    module.verify()
    return module


@pytest.mark.parametrize("entry", ag.TABLE, ids=lambda e: e.name)
def test_dialect_example_verifies_and_round_trips(entry: ag.Elementwise) -> None:
    assert entry.mlir in (ag.OPS[entry.name].__doc__ or "")
    e = "i32" if entry.category == "integer" else "f32" if entry.arity == 1 else "f64"
    args = f"%x: tensor<?x{e}>" if entry.arity == 1 else f"%y: tensor<?x3x{e}>, %x: tensor<3x{e}>"
    module = _parse(entry.mlir, args)
    printed = str(module)
    assert f"ag.{entry.name}" in printed
    from xdsl.parser import Parser

    assert str(Parser(_context(), printed).parse_module()) == printed


@pytest.mark.parametrize("entry", ARITH, ids=lambda e: e.name)
def test_dialect_checks_the_element_type(entry: ag.Elementwise) -> None:
    from xdsl.utils.exceptions import VerifyException

    t = "tensor<4xi32>"
    line = _same_type_op(entry, t)
    if entry.category == "numeric":
        _parse(line, f"%x: {t}")
        return
    with pytest.raises(VerifyException, match=f"ag.{entry.name}.*(float|f32|f64)"):
        _parse(line, f"%x: {t}")


# --- bool results and bitwise ops (isnan, isinf, and_, or_, xor, invert) --------------

PREDICATE_INPUTS = {
    "float32": [0.0, -0.0, 1.5, np.nan, -np.nan, np.inf, -np.inf, 3.4e38, 1e-45],
    "float64": [0.0, -0.0, 1.5, np.nan, -np.nan, np.inf, -np.inf, 1.7e308, 5e-324],
    "int8": [0, 1, -1, 127, -128],
    "int32": [0, 7, -(2**31), 2**31 - 1],
    "int64": [0, -5, 2**63 - 1, -(2**63)],
    "bool": [True, False],
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", sorted(PREDICATE_INPUTS))
def test_predicates_give_bools_as_numpy(dtype: str, backend: str) -> None:
    x = T.vector("x", dtype=dtype)
    outputs = [getattr(T, e.name)(x) for e in PREDICATES]
    assert all(o.dtype == "bool" for o in outputs)
    f = arignote.function([x], outputs, mode=mode(backend))
    a = np.array(PREDICATE_INPUTS[dtype], dtype=dtype)
    for entry, got in zip(PREDICATES, f(a), strict=True):
        np.testing.assert_array_equal(got, entry.numpy(a), err_msg=entry.name)
        assert got.dtype == np.bool_, entry.name


BITWISE_INPUTS = {
    "int8": ([0, 1, -1, 127, -128, 85, -86], [-1, 3, 0, -128, 127, 51, 15]),
    "int32": ([0, 7, -(2**31), 2**31 - 1, -6, 12345], [-1, 5, -1, 2**31 - 1, 3, -999]),
    "int64": ([0, -5, 2**63 - 1, -(2**63), 1 << 40], [-1, 12, 1, -1, (1 << 40) | 3]),
    "bool": ([True, True, False, False], [True, False, True, False]),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", sorted(BITWISE_INPUTS))
def test_bitwise_ops_and_operators_as_numpy(dtype: str, backend: str) -> None:
    x, y = T.vector("x", dtype=dtype), T.vector("y", dtype=dtype)
    outputs = [T.and_(x, y), T.or_(x, y), T.xor(x, y), T.invert(x), x & y, x | y, x ^ y, ~x]
    assert all(o.dtype == dtype for o in outputs)
    f = arignote.function([x, y], outputs, mode=mode(backend))
    a, b = (np.array(v, dtype=dtype) for v in BITWISE_INPUTS[dtype])
    expected = [a & b, a | b, a ^ b, ~a] * 2
    for got, want in zip(f(a, b), expected, strict=True):
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype


@pytest.mark.parametrize("backend", BACKENDS)
def test_bitwise_ops_promote_and_broadcast(backend: str) -> None:
    b, i = T.vector("b", dtype="bool"), T.imatrix("i")
    outputs = [b & i, 3 | i, i ^ 1, T.and_(b, True)]
    assert [o.dtype for o in outputs] == ["int32", "int32", "int32", "bool"]
    f = arignote.function([b, i], outputs, mode=mode(backend))
    bv, iv = np.array([True, False, True]), np.arange(-3, 3, dtype="int32").reshape(2, 3)
    expected = [bv & iv, 3 | iv, iv ^ 1, bv & True]
    for got, want in zip(f(bv, iv), expected, strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["and_", "or_", "xor", "invert"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bitwise_ops_reject_floats(name: str, dtype: str) -> None:
    x = T.vector("x", dtype=dtype)
    args = [x] if name == "invert" else [x, T.ivector()]
    with pytest.raises(TypeError, match=f"{name}: expected integer or bool inputs, got {dtype}"):
        getattr(T, name)(*args)
    with pytest.raises(TypeError, match="expected integer or bool"):
        _ = ~x if name == "invert" else x & 1


@pytest.mark.parametrize("entry", BITWISE, ids=lambda e: e.name)
def test_dialect_bitwise_ops_reject_floats(entry: ag.Elementwise) -> None:
    from xdsl.utils.exceptions import VerifyException

    t = "tensor<4xf32>"
    line = _same_type_op(entry, t)
    _parse(line.replace("f32", "i1"), "%x: tensor<4xi1>")
    with pytest.raises(VerifyException, match=f"ag.{entry.name}.*integer or bool element type"):
        _parse(line, f"%x: {t}")


@pytest.mark.parametrize("entry", PREDICATES, ids=lambda e: e.name)
def test_dialect_predicates_have_bool_results(entry: ag.Elementwise) -> None:
    from xdsl.utils.exceptions import VerifyException

    _parse(f"%r = ag.{entry.name} %x : tensor<4xi8> -> tensor<4xi1>", "%x: tensor<4xi8>")
    with pytest.raises(VerifyException, match="does not match the inferred type"):
        _parse(f"%r = ag.{entry.name} %x : tensor<4xf32> -> tensor<4xf32>", "%x: tensor<4xf32>")


@pytest.mark.parametrize("backend", BACKENDS)
def test_bool_and_integer_results_carry_no_gradient(backend: str) -> None:
    # As the comparisons: no gradient flows through isnan/isinf/and_ (Theano: disconnected).
    x = T.dvector("x")
    i = T.cast(x, "int32")
    cost = T.sum(x * T.switch(T.isnan(x) | T.isinf(x), 0.0, 1.0)) + T.sum(T.cast(i & 3, "float64"))
    g = grad(cost, x)
    f = arignote.function([x], g, mode=mode(backend))
    point = np.array([1.5, -2.0, 7.0])
    np.testing.assert_array_equal(f(point), np.ones(3))


# --- isclose, allclose (compositions of the ops above) ---------------------------------

CLOSE_INPUTS = {
    # pairs well inside or outside the tolerance (none on its boundary), specials
    "float32": (
        [1.0, np.nan, np.nan, np.inf, -np.inf, np.inf, 1e-9, 1.0, 0.0, 100.0, 5.0, -3.0],
        [1.000001, np.nan, 1.0, np.inf, np.inf, 1.0, 0.0, 1.1, 1e-8, 100.0005, 5.1, -3.0],
    ),
    "float64": (
        [1.0, np.nan, np.nan, np.inf, -np.inf, -np.inf, 1e-9, 1.0, 0.0, 1e10, 5.0, -3.0],
        [1.000001, np.nan, 1.0, np.inf, -np.inf, 2.0, 0.0, 1.1, 1e-7, 1e10 + 1, 5.1, -3.0],
    ),
    "int8": ([1, -128, 127, 0, 5], [1, 127, -128, 0, 6]),
    "int32": ([1, 7, -(2**31), 2**31 - 1], [1, 8, -(2**31), 2**31 - 1]),
    "int64": ([1, 10**12, -5, 0], [1, 10**12 + 1, -5, 1]),
    "bool": ([True, False, True], [True, False, False]),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", sorted(CLOSE_INPUTS))
def test_isclose_and_allclose_as_numpy(dtype: str, backend: str) -> None:
    x, y = T.vector("x", dtype=dtype), T.vector("y", dtype=dtype)
    outputs = [
        T.isclose(x, y),
        T.isclose(x, y, equal_nan=True),
        T.isclose(x, y, rtol=0.05, atol=0.5),
        T.allclose(x, y),
        T.allclose(x, x),
        T.allclose(x[:0], y[:0]),
    ]
    assert all(o.dtype == "bool" for o in outputs)
    f = arignote.function([x, y], outputs, mode=mode(backend))
    a, b = (np.array(v, dtype=dtype) for v in CLOSE_INPUTS[dtype])
    expected = [
        np.isclose(a, b),
        np.isclose(a, b, equal_nan=True),
        np.isclose(a, b, rtol=0.05, atol=0.5),
        np.allclose(a, b),
        np.allclose(a, a),
        np.allclose(a[:0], b[:0]),
    ]
    for i, (got, want) in enumerate(zip(f(a, b), expected, strict=True)):
        np.testing.assert_array_equal(got, want, err_msg=str(i))
        assert np.asarray(got).dtype == np.bool_
