"""Unsigned and complex dtypes (issue 13 item 2): Theano's upcast table, the constructor
table, type equality, unsigned arithmetic on both linkers, complex numbers (the
interpreter on every linker: complex tensors have no native lowering yet, and a native
linker says so with an `InterpreterFallbackWarning`) and their gradients.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote import scalar
from arignote.compile.mode import InterpreterFallbackWarning
from arignote.gradient import grad, verify_grad

BACKENDS = ["py", "cvm"]

# --- Theano's upcast table, transcribed ---------------------------------------------------
#
# `theano.scalar.upcast(a, b)` is the dtype of `numpy.zeros((), a) + numpy.zeros((), b)`.
# Row and column order: b u1 u2 u4 u8 i1 i2 i4 i8 f4 f8 c8 c16 (bool, uint8..uint64,
# int8..int64, float32, float64, complex64, complex128); each row lists the result for
# the columns from the diagonal on (the table is symmetric).

_CODES = "b u1 u2 u4 u8 i1 i2 i4 i8 f4 f8 c8 c16".split()
_NAMES = dict(
    zip(
        _CODES,
        "bool uint8 uint16 uint32 uint64 int8 int16 int32 int64 float32 float64 "
        "complex64 complex128".split(),
        strict=True,
    )
)
_UPPER = [
    "b u1 u2 u4 u8 i1 i2 i4 i8 f4 f8 c8 c16",
    "u1 u2 u4 u8 i2 i2 i4 i8 f4 f8 c8 c16",
    "u2 u4 u8 i4 i4 i4 i8 f4 f8 c8 c16",
    "u4 u8 i8 i8 i8 i8 f8 f8 c16 c16",
    "u8 f8 f8 f8 f8 f8 f8 c16 c16",
    "i1 i2 i4 i8 f4 f8 c8 c16",
    "i2 i4 i8 f4 f8 c8 c16",
    "i4 i8 f8 f8 c16 c16",
    "i8 f8 f8 c16 c16",
    "f4 f8 c8 c16",
    "f8 c16 c16",
    "c8 c16",
    "c16",
]


def theano_upcast_table() -> dict[tuple[str, str], str]:
    table = {}
    for i, row in enumerate(_UPPER):
        for j, code in enumerate(row.split(), start=i):
            a, b = _NAMES[_CODES[i]], _NAMES[_CODES[j]]
            table[a, b] = table[b, a] = _NAMES[code]
    return table


UPCAST = theano_upcast_table()
DTYPES = list(_NAMES.values())
REAL_DTYPES = [d for d in DTYPES if not d.startswith("complex")]


def sample(dtype: str, n: int = 4) -> np.ndarray:
    """Small values every dtype holds (so that sums are exact in every result dtype)."""
    if dtype == "bool":
        return np.array([True, False, True, True][:n])
    values = np.array([1, 2, 5, 7][:n], dtype=dtype)
    if dtype.startswith("complex"):
        values = values + np.array([0.5j, -1j, 2j, 0j][:n]).astype(dtype)
    return values


def test_the_transcribed_table_agrees_with_numpy() -> None:
    # Theano's table is NumPy's array promotion for these dtypes: every entry agrees.
    assert len(UPCAST) == len(DTYPES) ** 2
    for (a, b), expected in UPCAST.items():
        assert np.result_type(a, b).name == expected, (a, b)
        assert scalar.upcast(a, b) == expected, (a, b)
    assert scalar.upcast("uint8", "int8", "float32") == "float32"
    assert scalar.upcast("uint64", "int8") == "float64"


def _sum_dtype(a: str, b: str) -> str:
    # One deviation from Theano's `add`: two bools add as int8 (1 + 1 == 2), not as
    # Theano's bool (a logical or).
    return "int8" if a == b == "bool" else UPCAST[a, b]


def _pairwise_sums(pairs: list[tuple[str, str]], backend: str) -> None:
    dtypes = sorted({d for pair in pairs for d in pair}, key=DTYPES.index)
    xs = {d: T.vector(f"x_{d}", dtype=d) for d in dtypes}
    outs = [xs[a] + xs[b] for a, b in pairs]
    for out, (a, b) in zip(outs, pairs, strict=True):
        assert out.dtype == _sum_dtype(a, b), (a, b, out.dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InterpreterFallbackWarning)
        f = arignote.function(list(xs.values()), outs, mode=arignote.Mode(linker=backend))
    values = {d: sample(d) for d in dtypes}
    for out, (a, b) in zip(f(*values.values()), pairs, strict=True):
        assert out.dtype == _sum_dtype(a, b), (a, b)
        want = values[a].astype(out.dtype) + values[b].astype(out.dtype)
        np.testing.assert_array_equal(out, want, err_msg=f"{a} + {b}")


def test_every_dtype_pair_adds_in_the_upcast_dtype() -> None:
    # Every ordered pair on the interpreter (the native kernels of the casts and adds are
    # checked by test/lowering/test_ag_to_loops.py and the tests below).
    _pairwise_sums([(a, b) for a in DTYPES for b in DTYPES], "py")


def test_unsigned_pairs_add_natively_in_the_upcast_dtype() -> None:
    pairs = [(u, d) for u in ("uint8", "uint64") for d in REAL_DTYPES]
    _pairwise_sums(pairs, "cvm")


def test_python_scalars_follow_theano() -> None:
    u8, u16, u64 = T.vector(dtype="uint8"), T.vector(dtype="uint16"), T.vector(dtype="uint64")
    # Theano's autocast_int: a Python int is int8, int16, ... beside an unsigned tensor.
    assert (u8 + 1).dtype == "int16"
    assert (u16 * 2).dtype == "int32"
    assert (u8 + 300).dtype == "int16"
    assert (u64 + 1).dtype == "float64"
    assert (T.bvector() + 1).dtype == "int8"
    assert T.constant(2**63).dtype == "uint64"
    with pytest.raises(TypeError, match="does not fit in int64 or uint64"):
        T.constant(2**64)
    # Floats take a float tensor's dtype, the part dtype of a complex one.
    assert (T.cvector() * 2.5).dtype == "complex64"
    assert (T.zvector() * 2.5).dtype == "complex128"
    assert (u8 * 2.5).dtype == arignote.config.floatX
    # Python complex numbers are complex128 (numpy.asarray(1j)) beside a real tensor.
    assert (T.fvector() * 1j).dtype == "complex128"
    assert (T.cvector() * 1j).dtype == "complex64"
    assert T.as_tensor_variable(1 + 2j).dtype == "complex128"
    assert (u8 / u8).dtype == arignote.config.floatX
    assert (T.cvector() / T.cvector()).dtype == "complex64"


# --- the constructor table and type equality -------------------------------------------------

PATTERNS = {
    "scalar": (),
    "vector": (False,),
    "row": (True, False),
    "col": (False, True),
    "matrix": (False, False),
    "tensor3": (False,) * 3,
    "tensor4": (False,) * 4,
    "tensor5": (False,) * 5,
    "tensor6": (False,) * 6,
    "tensor7": (False,) * 7,
}
PREFIXES = dict(b="int8", w="int16", i="int32", l="int64", f="float32", d="float64")
PREFIXES.update(c="complex64", z="complex128")


def test_every_prefixed_constructor_is_a_tensor_type() -> None:
    for kind, pattern in PATTERNS.items():
        plural = kind[:-1] + "ces" if kind == "matrix" else kind + "s"
        for prefix, dtype in PREFIXES.items():
            constructor = getattr(T, prefix + kind)
            assert constructor == T.TensorType(dtype, pattern)
            x = constructor("x")
            assert x.type == constructor and x.name == "x" and x.dtype == dtype
            a, b = getattr(T, prefix + plural)("a", "b")
            assert (a.name, b.name, a.type, b.type) == ("a", "b", constructor, constructor)
            assert len(getattr(T, prefix + plural)(3)) == 3
        generic = getattr(T, kind)
        assert generic().type == T.TensorType(arignote.config.floatX, pattern)
        assert generic("g", dtype="uint16").type == T.TensorType("uint16", pattern)
        assert getattr(T, plural)("p", dtype="complex64").dtype == "complex64"


def test_type_equality_as_in_theano() -> None:
    x = T.dscalar("x")
    assert x.type == T.dscalar
    assert T.dscalar().type == T.TensorType("float64", ())
    assert T.dscalar != T.fscalar and T.dvector != T.drow
    assert T.zmatrix("m").type == T.TensorType("complex128", (False, False))
    assert T.int_types == (T.bscalar, T.wscalar, T.iscalar, T.lscalar)
    assert T.complex_types == (T.cscalar, T.zscalar)
    assert T.uint_dtypes == ["uint8", "uint16", "uint32", "uint64"]
    assert set(T.all_dtypes) == set(DTYPES)
    with pytest.raises(TypeError, match="dtype 'float16' is not supported"):
        T.TensorType("float16", ())
    assert scalar.uint8("u").type == T.TensorType("uint8", ()) == T.scalar(dtype="uint8").type
    assert scalar.complex_types == (scalar.complex64, scalar.complex128)
    assert len(scalar.all_types) == len(DTYPES)


# --- unsigned integers on both linkers ------------------------------------------------------


def _unsigned_outputs(x: Any, y: Any) -> list[Any]:
    return [
        x + y,
        x - y,
        x * y,
        x // y,
        x % y,
        x / y,
        x < y,
        x >= y,
        T.eq(x, y),
        T.maximum(x, y),
        T.minimum(x, y),
        T.sum(x),
        T.prod(x),
        T.max(x),
        T.min(x),
        T.argmax(x),
        T.argmin(x),
        T.cast(x, "float64"),
        T.cast(x, "int8"),
        T.cast(x, "int64"),
        T.cast(x, "bool"),
        abs(x),
        -x,
        x**y,
        x & y,
        ~x,
        T.sgn(x),
    ]


def _unsigned_expected(a: np.ndarray, b: np.ndarray, dt: str) -> list[Any]:
    safe = np.where(b == 0, 1, b)
    return [
        a + b,
        a - b,
        a * b,
        np.where(b == 0, 0, a // safe).astype(dt),
        np.where(b == 0, 0, a % safe).astype(dt),
        a / b,
        a < b,
        a >= b,
        a == b,
        np.maximum(a, b),
        np.minimum(a, b),
        a.sum(dtype="uint64"),
        a.prod(dtype="uint64"),
        a.max(),
        a.min(),
        a.argmax(),
        a.argmin(),
        a.astype("float64"),
        a.astype("int8"),
        a.astype("int64"),
        a.astype(bool),
        a,
        -a,
        a**b,
        a & b,
        ~a,
        np.sign(a),
    ]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dt", ["uint8", "uint16", "uint32", "uint64"])
def test_unsigned_arithmetic_matches_numpy(dt: str, backend: str) -> None:
    x, y = T.vector("x", dtype=dt), T.vector("y", dtype=dt)
    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)  # all of it is native
        f = arignote.function([x, y], _unsigned_outputs(x, y), mode=arignote.Mode(linker=backend))
    top = np.iinfo(dt).max
    # Values with the top bit set: a signed op (divsi, cmpi slt, sitofp) would be wrong.
    a = np.array([0, 1, 7, top, top - 3, 200, top // 2 + 1], dtype=dt)
    b = np.array([3, 0, 2, 5, top, 7, 3], dtype=dt)
    with np.errstate(all="ignore"):
        expected = _unsigned_expected(a, b, dt)
    for i, (got, want) in enumerate(zip(f(a, b), expected, strict=True)):
        want = np.asarray(want)
        assert got.dtype == want.dtype, (i, got.dtype, want.dtype)
        np.testing.assert_array_equal(got, want, err_msg=f"output {i}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_unsigned_indices_casts_and_scalars(backend: str) -> None:
    x, i, c = T.vector("x", dtype="uint8"), T.vector("i", dtype="uint16"), T.bvector("c")
    outs = [
        x + 1,
        x + c,
        x[i],
        T.cast(T.cast(c, "uint8"), "int16"),  # not folded into cast(c, int16): 255, not -1
        T.cast(T.cast(x, "int8"), "int16"),
        T.cast(T.cast(x, "float32"), "uint8"),
        T.sum(x, dtype="uint8"),
        (x - 3) // 2,
    ]
    f = arignote.function([x, i, c], outs, mode=arignote.Mode(linker=backend))
    a = np.array([0, 250, 7], "uint8")
    ix = np.array([2, 0], "uint16")
    cc = np.array([-1, 5, -128], "int8")
    expected = [
        a.astype("int16") + 1,
        a.astype("int16") + cc,
        a[ix],
        cc.astype("uint8").astype("int16"),
        a.astype("int8").astype("int16"),
        a,
        np.uint8(a.sum()),
        (a.astype("int16") - 3) // 2,
    ]
    for k, (got, want) in enumerate(zip(f(a, ix, cc), expected, strict=True)):
        assert got.dtype == np.asarray(want).dtype, k
        np.testing.assert_array_equal(got, want, err_msg=f"output {k}")


def test_unsigned_inputs_are_filtered() -> None:
    x = T.vector("x", dtype="uint8")
    f = arignote.function([x], x * 2)
    assert f([1, 2]).dtype == "int16"
    with pytest.raises(TypeError, match="cannot be converted to uint8 exactly"):
        f([-1])
    with pytest.raises(TypeError, match="int8 in a uint8 input"):
        f(np.array([1], "int8"))


# --- complex numbers --------------------------------------------------------------------------


def _complex_outputs(z: Any, w: Any, x: Any) -> list[Any]:
    return [
        z + w,
        z - w,
        z * w,
        z / w,
        -z,
        T.exp(z),
        T.log(z),
        T.sqrt(z),
        abs(z),
        T.conj(z),
        z.conj(),
        T.real(z),
        T.imag(z),
        z.real,
        z.imag,
        T.angle(z),
        T.complex(x, x + 1),
        T.complex_from_polar(x, x),
        T.sum(z),
        T.sum(z, axis=0),
        T.prod(z),
        T.mean(z),
        T.dot(z, w),
        z * x,
        z**2,
        T.eq(z, w),
        T.switch(T.gt(x, 1), z, w),
    ]


def _complex_expected(a: np.ndarray, b: np.ndarray, r: np.ndarray) -> list[Any]:
    return [
        a + b,
        a - b,
        a * b,
        a / b,
        -a,
        np.exp(a),
        np.log(a),
        np.sqrt(a),
        np.abs(a),
        np.conj(a),
        np.conj(a),
        a.real,
        a.imag,
        a.real,
        a.imag,
        np.angle(a).astype("float64"),  # Theano's angle is float64 for every input
        (r + 1j * (r + 1)).astype(a.dtype),
        (r * np.cos(r) + 1j * r * np.sin(r)).astype(a.dtype),
        a.sum(),
        a.sum(axis=0),
        a.prod(),
        a.mean(),
        np.dot(a, b),
        a * r,
        a**2,
        a == b,
        np.where(r > 1, a, b),
    ]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_complex_ops_match_numpy(dt: str, backend: str) -> None:
    part = "float32" if dt == "complex64" else "float64"
    z, w, x = T.vector("z", dtype=dt), T.vector("w", dtype=dt), T.vector("x", dtype=part)
    outs = _complex_outputs(z, w, x)
    if backend == "py":
        f = arignote.function([z, w, x], outs, mode=arignote.Mode(linker="py"))
    else:
        with pytest.warns(InterpreterFallbackWarning, match=r"ag\.real.*on complex tensors"):
            f = arignote.function([z, w, x], outs, mode=arignote.Mode(linker=backend))
    a = np.array([1 + 2j, -0.5 + 0.25j, 3 - 1j, -2 - 2j], dtype=dt)
    b = np.array([0.5 - 1j, 2 + 0j, -1 + 4j, 1j], dtype=dt)
    r = np.array([0.5, 1.5, 2.0, 3.0], dtype=part)
    rtol = 1e-5 if dt == "complex64" else 1e-12
    for k, (got, want) in enumerate(zip(f(a, b, r), _complex_expected(a, b, r), strict=True)):
        want = np.asarray(want)
        assert got.dtype == want.dtype, (k, got.dtype, want.dtype)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=0, err_msg=f"output {k}")


def test_complex_dtype_rules_and_errors() -> None:
    z, x = T.zvector("z"), T.dvector("x")
    assert T.complex(T.fvector(), T.fvector()).dtype == "complex64"
    assert T.complex(T.ivector(), T.ivector()).dtype == "complex128"  # Theano's rule
    assert T.complex(T.wvector(), T.fvector()).dtype == "complex64"
    assert abs(T.cvector()).dtype == "float32" and T.real(T.cvector()).dtype == "float32"
    assert T.angle(T.cvector()).dtype == "float64"
    assert T.real(x) is x and T.conj(x) is x and T.imag(x).dtype == "float64"
    assert T.imag(T.ivector()).dtype == arignote.config.floatX
    for bad in (lambda: z < z, lambda: T.maximum(z, z), lambda: T.sin(z), lambda: z // z):
        with pytest.raises(TypeError, match="not defined for complex inputs"):
            bad()
    with pytest.raises(TypeError, match="casting z from complex128 to float64 is ambiguous"):
        T.cast(z, "float64")
    with pytest.raises(TypeError, match="complex: the real part must be real"):
        T.complex(z, x)
    with pytest.raises(TypeError, match="bitwise ops"):
        T.and_(z, z)
    f = arignote.function([z], z * 2, mode=arignote.Mode(linker="py"))
    np.testing.assert_array_equal(f([1.0, 2.0]), [2.0, 4.0])  # reals fit a complex input
    g = arignote.function([x], x * 2, mode=arignote.Mode(linker="py"))
    with pytest.raises(TypeError, match="is complex and cannot be stored in a float64 input"):
        g([1j])


def test_linker_c_refuses_complex_tensors() -> None:
    from arignote.compile.mode import MissingNativeLoweringError

    z = T.zvector("z")
    with pytest.raises(MissingNativeLoweringError, match=r"complex tensors.*ag\.mul"):
        arignote.function([z], z * z, mode=arignote.Mode(linker="c"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_complex_gradient_is_theanos(backend: str) -> None:
    # Theano's convention: the gradient of a real cost C with respect to z = x + iy is
    # dC/dx + i dC/dy; checked against central differences in both directions.
    z = T.zvector("z")
    cost = T.sum(
        T.real(z * z * T.exp(z)) + abs(z) + T.imag(T.log(z) / (z + 2j)) + T.real(T.sqrt(z))
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InterpreterFallbackWarning)
        f = arignote.function([z], [cost, grad(cost, z)], mode=arignote.Mode(linker=backend))
    a = np.array([1 + 2j, -0.5 + 0.3j])
    g = f(a)[1]
    eps = 1e-6
    numeric = np.zeros_like(a)
    for k in range(a.size):
        for direction in (1, 1j):
            step = np.zeros_like(a)
            step[k] = eps * direction
            numeric[k] += direction * (f(a + step)[0] - f(a - step)[0]) / (2 * eps)
    np.testing.assert_allclose(g, numeric, rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_verify_grad_through_complex_ops(backend: str) -> None:
    rng = np.random.RandomState(0)
    mode = arignote.Mode(linker=backend)

    def polar(x: Any, y: Any) -> Any:
        c = T.complex(x, y)
        return T.sum(abs(c**2 * T.complex_from_polar(x, y))) + T.sum(T.angle(c))

    def dot(x: Any, y: Any) -> Any:
        z, w = T.complex(x, y), T.complex(y, x)
        return T.real(T.dot(z, T.conj(w))) + T.imag(T.sum(z / (w + 1)))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InterpreterFallbackWarning)
        for fun in (polar, dot):
            verify_grad(fun, [rng.rand(3) + 0.5, rng.rand(3) + 0.5], rng=rng, mode=mode)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unsigned_arange_bounds_past_the_signed_range(backend: str) -> None:
    # 140 is negative as int8: the length must zero-extend the bounds (extui), not
    # sign-extend them (the native length was 0).
    start, stop = T.scalar("start", dtype="uint8"), T.scalar("stop", dtype="uint8")
    outs = [T.arange(start, stop, dtype="uint8"), T.arange(start, stop, 3, dtype="uint8")]
    f = arignote.function([start, stop], outs, mode=arignote.Mode(linker=backend))
    got = f(np.uint8(100), np.uint8(140))
    np.testing.assert_array_equal(got[0], np.arange(100, 140, dtype="uint8"))
    np.testing.assert_array_equal(got[1], np.arange(100, 140, 3, dtype="uint8"))
    assert got[0].dtype == got[1].dtype == "uint8"
