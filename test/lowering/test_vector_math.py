"""The inline exp/log/log1p/expm1/tanh of `convert-math-to-llvm` (`lowering/loops/vector_math.py`):
accuracy against NumPy over dense sweeps and special values, and vectorisation.

One native function per dtype computes every function on one input vector of about a
million points (dense sweeps of each function's interesting range, the overflow and
underflow thresholds, subnormals, huge values, and the special values), so the whole
module costs two compilations.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.configuration import change_flags
from arignote.tensor import nnet

FUNCTIONS = ["exp", "log", "log1p", "expm1", "tanh", "sigmoid", "softplus"]
MAX_ULP = 2


def _reference(name: str, x: np.ndarray) -> np.ndarray:
    """NumPy in float64 rounded to x's dtype (for f32: close to correctly rounded)."""
    wide = x.astype(np.float64)
    with np.errstate(all="ignore"):
        if name == "sigmoid":
            # 1 / (1 + exp(-x)) without overflow, as the op computes it
            e = np.exp(-np.abs(wide))
            y = np.where(wide >= 0, 1 / (1 + e), e / (1 + e))
        elif name == "softplus":
            y = np.log1p(np.exp(-np.abs(wide))) + np.maximum(wide, 0)
        else:
            y = getattr(np, name)(wide)
        return y.astype(x.dtype)


def _sweep(dtype: type) -> np.ndarray:
    f32 = dtype == np.float32
    tiny = np.finfo(dtype).smallest_subnormal
    big = float(np.log(np.finfo(dtype).max))  # 88.72 / 709.78
    lowest = -104.0 if f32 else -746.0
    rng = np.random.default_rng(1)
    with np.errstate(over="ignore"):
        parts = _parts(dtype, big, lowest, tiny, rng)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, -2.0, 1000.0, tiny, -tiny]
    return np.concatenate([p.astype(dtype) for p in parts] + [np.array(special, dtype)])


def _parts(dtype: type, big: float, lowest: float, tiny: float, rng) -> list[np.ndarray]:
    return [
        np.linspace(-1.05 * big, 1.05 * big, 200_000),  # whole exp range, both ends
        np.linspace(lowest, lowest + 20, 50_000),  # subnormal exp results
        np.linspace(big - 0.5, big + 0.5, 20_000),  # exp/expm1 overflow threshold
        rng.uniform(-3, 3, 200_000),  # the reduction's small k, tanh's two formulas
        np.linspace(-1, 1, 100_000),  # log1p near -1, log near 0..1
        np.geomspace(tiny, np.finfo(dtype).max, 200_000),  # every binade, positive
        -np.geomspace(tiny, 1e3, 100_000),  # and negative
        rng.uniform(0.5, 2.0, 100_000),  # log around 1
    ]


def _ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Units in the last place between same-dtype arrays; NaN matches NaN only."""
    ints = np.int32 if a.dtype == np.float32 else np.int64

    def ordered(v: np.ndarray) -> np.ndarray:
        i = v.view(ints).astype(np.int64)
        return np.where(i < 0, np.iinfo(ints).min - i, i)

    with np.errstate(over="ignore"):
        distance = np.abs(ordered(a) - ordered(b))
    distance = np.where(a == b, 0, distance)  # +0.0 == -0.0 is checked separately
    both_nan = np.isnan(a) & np.isnan(b)
    distance = np.where(both_nan, 0, distance)
    return np.where(np.isnan(a) != np.isnan(b), np.iinfo(np.int64).max, distance)


@pytest.fixture(scope="module", params=[np.float32, np.float64], ids=["f32", "f64"])
def computed(request) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    dtype = request.param
    x = T.fvector("x") if dtype == np.float32 else T.dvector("x")
    outputs = [
        getattr(nnet if name in ("sigmoid", "softplus") else T, name)(x) for name in FUNCTIONS
    ]
    f = arignote.function([x], outputs)
    values = _sweep(dtype)
    return values, dict(zip(FUNCTIONS, f(values), strict=True))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_within_two_ulp_of_numpy(computed, name: str) -> None:
    x, results = computed
    got, want = results[name], _reference(name, x)
    distance = _ulp_distance(got, want)
    worst = int(np.argmax(distance))
    assert distance[worst] <= MAX_ULP, (
        f"{name}({x[worst]!r}) = {got[worst]!r}, NumPy {want[worst]!r}: {distance[worst]} ulp"
    )


@pytest.mark.parametrize("name", ["exp", "log", "log1p", "expm1", "tanh"])
def test_same_dtype_numpy_agrees_where_it_is_accurate(computed, name: str) -> None:
    """Against NumPy in the same dtype: at most 2 ulp beyond NumPy's own error (its
    float32 SIMD exp/log are 2-4 ulp from the correctly rounded result)."""
    x, results = computed
    with np.errstate(all="ignore"):
        same = getattr(np, name)(x)
    own_error = _ulp_distance(same, _reference(name, x))
    distance = _ulp_distance(results[name], same)
    assert np.all(distance <= MAX_ULP + own_error)


def test_special_values(computed) -> None:
    x, results = computed
    t = x.dtype.type
    inf, nan, tiny = t(np.inf), t(np.nan), np.finfo(x.dtype).smallest_subnormal
    cases = {
        "exp": [(inf, inf), (-inf, 0.0), (nan, nan), (-0.0, 1.0), (t(1000), inf)],
        "log": [(0.0, -inf), (-0.0, -inf), (-1.0, nan), (inf, inf), (nan, nan), (1.0, 0.0)],
        "log1p": [(-1.0, -inf), (-2.0, nan), (inf, inf), (nan, nan), (-0.0, -0.0), (tiny, tiny)],
        "expm1": [(-inf, -1.0), (inf, inf), (nan, nan), (-0.0, -0.0), (-tiny, -tiny)],
        "tanh": [(inf, 1.0), (-inf, -1.0), (nan, nan), (-0.0, -0.0), (tiny, tiny)],
    }
    index = {v.tobytes(): i for i, v in enumerate(x)}
    for name, pairs in cases.items():
        for arg, want in pairs:
            arg = np.asarray(arg, x.dtype)
            got = results[name][index[arg.tobytes()]]
            want = np.asarray(want, x.dtype)
            assert got.tobytes() == want.tobytes() or (np.isnan(got) and np.isnan(want)), (
                f"{name}({arg!r}) = {got!r}, expected {want!r}"
            )


def _has_avx2() -> bool:
    try:
        import llvmlite.binding as llvm

        features = llvm.get_host_cpu_features()
    except Exception:  # not x86, or features unknown
        return False
    return bool(features.get("avx2"))


@pytest.mark.skipif(not _has_avx2(), reason="needs an x86 host with AVX2")
def test_loops_with_exp_and_tanh_are_vectorized() -> None:
    from arignote.runtime import cpu

    built: list[cpu.NativeModule] = []
    original = cpu.NativeModule.__init__

    def record(self, *args, **kwargs) -> None:
        original(self, *args, **kwargs)
        built.append(self)

    x = T.fvector("x")
    with pytest.MonkeyPatch.context() as patch, change_flags(compile_cache=False):
        patch.setattr(cpu.NativeModule, "__init__", record)
        f = arignote.function([x], T.tanh(T.exp(x)) + T.log1p(x * x))
    (native,) = built
    ir = native.optimized_llvm_ir
    assert re.search(r"fmul <\d+ x float>", ir), "no vector multiply in the optimized IR"
    assert not re.search(r"call .*@(expf|tanhf|log1pf|llvm\.exp\.)", ir)
    values = np.linspace(-3, 3, 101, dtype=np.float32)
    want = np.tanh(np.exp(values)) + np.log1p(values * values)
    np.testing.assert_allclose(f(values), want, rtol=3e-7)


# --- the trigonometric, hyperbolic and base-2/base-10 functions ----------------------------

TRIG_FUNCTIONS = [
    "sin",
    "cos",
    "tan",
    "arctan",
    "arcsin",
    "arccos",
    "sinh",
    "cosh",
    "arcsinh",
    "arccosh",
    "arctanh",
    "exp2",
    "log2",
    "log10",
]
"""Unary; `arctan2` and `hypot` are checked on (permuted sweep, sweep) in the same
function."""
BINARY = ["arctan2", "hypot"]
TRIG_MAX_ULP = {np.float32: 1, np.float64: 2}
"""f32 is computed in f64 and rounded once: within 1 ulp of the correctly rounded value
(and of the float64 reference rounded to f32). f64: the fdlibm-style algorithms' bound."""


def _extended_reference() -> bool:
    """Whether NumPy's long double is wider than float64 (x87 80-bit on x86-64 Linux)."""
    return np.finfo(np.longdouble).nmant > 60


def _trig_reference(name: str, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
    """NumPy in a wider type rounded to x's dtype: float64 for f32, long double for f64
    (within 1 ulp of the correctly rounded value either way, but in rare near-ties)."""
    wide = np.float64 if x.dtype == np.float32 else np.longdouble
    with np.errstate(all="ignore"):
        if name in BINARY:
            return getattr(np, name)(y.astype(wide), x.astype(wide)).astype(x.dtype)
        return getattr(np, name)(x.astype(wide)).astype(x.dtype)


def _trig_sweep(dtype: type) -> np.ndarray:
    from arignote.lowering.loops.vector_math import TRIG_BOUND

    info = np.finfo(dtype)
    bound = TRIG_BOUND[info.bits]
    rng = np.random.default_rng(2)
    big = float(np.log(info.max))
    with np.errstate(over="ignore"):
        parts = _trig_parts(dtype, bound, big, rng)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, 0.5, -0.5, 10.0, 100.0]
    return np.concatenate(parts + [np.array(special, dtype)])


def _trig_parts(dtype: type, bound: float, big: float, rng) -> list[np.ndarray]:
    info = np.finfo(dtype)
    k = np.concatenate([np.arange(1, 40_000), rng.integers(1, 2**27 - 1, 20_000)])
    half_pi = k * (np.pi / 2)  # the reduction's worst cancellations, up to the bound
    near_one = 1 - np.geomspace(info.eps / 4, 0.5, 20_000)
    parts = [
        np.linspace(-20, 20, 120_000),  # trig periods, hyperbolic middle range
        rng.uniform(-bound, bound, 40_000),
        np.concatenate([half_pi, -half_pi]),
        np.linspace(-1.05, 1.05, 60_000),  # inverse sine/cosine/tanh, their domain edges
        np.concatenate([near_one, -near_one, 2 - near_one]),  # ±1 from inside, 1 from above
        np.geomspace(info.smallest_subnormal, info.max, 60_000),  # every binade
        -np.geomspace(info.smallest_subnormal, info.max, 30_000),
        np.linspace(big - 2, big + 2, 20_000),  # sinh/cosh/exp2 overflow thresholds
        np.linspace(-1100, 1100, 40_000) if dtype == np.float64 else np.linspace(-160, 160, 40_000),
    ]
    return [p.astype(dtype) for p in parts]


@pytest.fixture(scope="module", params=[np.float32, np.float64], ids=["f32", "f64"])
def trig_computed(request) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    dtype = request.param
    make = T.fvector if dtype == np.float32 else T.dvector
    x, y = make("x"), make("y")
    outputs = [getattr(T, name)(x) for name in TRIG_FUNCTIONS]
    outputs += [getattr(T, name)(y, x) for name in BINARY]
    f = arignote.function([x, y], outputs)
    values = _trig_sweep(dtype)
    others = np.random.default_rng(3).permutation(values)
    results = dict(zip([*TRIG_FUNCTIONS, *BINARY], f(values, others), strict=True))
    return values, others, results


@pytest.mark.parametrize("name", [*TRIG_FUNCTIONS, *BINARY])
def test_trig_within_ulp_of_reference(trig_computed, name: str) -> None:
    from arignote.lowering.loops.vector_math import TRIG_BOUND

    x, y, results = trig_computed
    got, want = results[name], _trig_reference(name, x, y)
    allowed = TRIG_MAX_ULP[x.dtype.type]
    if x.dtype == np.float64 and not _extended_reference():
        allowed += 1  # the reference is libm's float64 itself (within 1 ulp)
    distance = _ulp_distance(got, want)
    if name in ("sin", "cos", "tan"):  # beyond the bound: test_trig_beyond_the_bound
        distance = np.where(np.abs(x) <= TRIG_BOUND[x.dtype.itemsize * 8], distance, 0)
    worst = int(np.argmax(distance))
    assert distance[worst] <= allowed, (
        f"{name}({f'{y[worst]!r}, ' if name in BINARY else ''}{x[worst]!r}) = "
        f"{got[worst]!r}, reference {want[worst]!r}: {distance[worst]} ulp"
    )


def test_trig_special_values(trig_computed) -> None:
    x, _, results = trig_computed
    t = x.dtype.type
    inf, nan, tiny = t(np.inf), t(np.nan), np.finfo(x.dtype).smallest_subnormal
    odd_identity = [(-0.0, -0.0), (0.0, 0.0), (tiny, tiny), (-tiny, -tiny), (nan, nan)]
    cases = {
        "sin": [*odd_identity, (inf, nan), (-inf, nan)],
        "tan": [*odd_identity, (inf, nan), (-inf, nan)],
        "cos": [(0.0, 1.0), (-0.0, 1.0), (inf, nan), (-inf, nan), (nan, nan)],
        "arctan": [*odd_identity, (inf, np.pi / 2), (-inf, -np.pi / 2), (1.0, np.pi / 4)],
        "arcsin": [*odd_identity, (1.0, np.pi / 2), (-1.0, -np.pi / 2), (2.0, nan), (inf, nan)],
        "arccos": [(1.0, 0.0), (-1.0, np.pi), (0.0, np.pi / 2), (2.0, nan), (nan, nan)],
        "sinh": [*odd_identity, (inf, inf), (-inf, -inf)],
        "cosh": [(0.0, 1.0), (-0.0, 1.0), (inf, inf), (-inf, inf), (nan, nan)],
        "arcsinh": [*odd_identity, (inf, inf), (-inf, -inf)],
        "arccosh": [(1.0, 0.0), (0.5, nan), (-1.0, nan), (inf, inf), (nan, nan)],
        "arctanh": [*odd_identity, (1.0, inf), (-1.0, -inf), (2.0, nan), (-inf, nan)],
        "exp2": [(0.0, 1.0), (-0.0, 1.0), (10.0, 1024.0), (inf, inf), (-inf, 0.0), (nan, nan)],
        "log2": [
            (1.0, 0.0),
            (2.0, 1.0),
            (0.5, -1.0),
            (0.0, -inf),
            (-0.0, -inf),
            (-1.0, nan),
            (inf, inf),
            (nan, nan),
        ],
        "log10": [(1.0, 0.0), (10.0, 1.0), (100.0, 2.0), (0.0, -inf), (-1.0, nan), (inf, inf)],
    }
    index = {v.tobytes(): i for i, v in enumerate(x)}
    for name, pairs in cases.items():
        for arg, want in pairs:
            arg = np.asarray(arg, x.dtype)
            got = results[name][index[arg.tobytes()]]
            want = np.asarray(want, x.dtype)
            assert got.tobytes() == want.tobytes() or (np.isnan(got) and np.isnan(want)), (
                f"{name}({arg!r}) = {got!r}, expected {want!r}"
            )


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", BINARY)
def test_binary_special_values(dtype, name: str) -> None:
    """C99's atan2 and hypot tables: signed zeros, infinities and NaN exactly, the
    other values within the sweep's bound."""
    make = T.fvector if dtype == np.float32 else T.dvector
    x, y = make("x"), make("y")
    f = arignote.function([y, x], getattr(T, name)(y, x))
    specials = np.array([0.0, -0.0, 1.0, -1.0, 3.0, 4.0, np.inf, -np.inf, np.nan, 5e-324], dtype)
    ys, xs = (a.ravel() for a in np.meshgrid(specials, specials))
    got = f(ys, xs)
    want = _trig_reference(name, xs, ys)  # NumPy's f32 atan2(1, 1) is 1 ulp off
    same = (got.view(np.uint8) == want.view(np.uint8)).reshape(len(got), -1).all(axis=1)
    exact = (want == 0) | np.isinf(want) | np.isnan(want)  # sign of zero included
    close = ~exact & (_ulp_distance(got, want) <= TRIG_MAX_ULP[dtype])
    bad = ~(same | close | (np.isnan(got) & np.isnan(want)))
    assert not bad.any(), list(zip(ys[bad], xs[bad], got[bad], want[bad], strict=True))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_trig_beyond_the_bound(dtype) -> None:
    """Past `TRIG_BOUND` the reduction is inexact, with the documented bound: absolute
    error of order |x| 2**-52 (tested: 2**-50), and sin and cos stay within [-1, 1]."""
    from arignote.lowering.loops.vector_math import TRIG_BOUND

    make = T.fvector if dtype == np.float32 else T.dvector
    x = make("x")
    f = arignote.function([x], [T.sin(x), T.cos(x), T.tan(x)])
    bound = TRIG_BOUND[np.finfo(dtype).bits]
    moderate = np.geomspace(bound, 2.0**45, 5_000).astype(dtype)
    s, c, _ = f(moderate)
    wide = moderate.astype(np.longdouble)
    for got, want in ((s, np.sin(wide)), (c, np.cos(wide))):
        error = np.abs(got.astype(np.float64) - want.astype(np.float64))
        assert np.all(error <= moderate.astype(np.float64) * 2.0**-50 + np.finfo(dtype).eps)
    with np.errstate(over="ignore"):
        huge = np.geomspace(2.0**45, np.finfo(dtype).max, 5_000).astype(dtype)
    huge = np.concatenate([huge, -huge])
    s, c, t = f(huge)
    assert np.all(np.abs(s) <= 1) and np.all(np.abs(c) <= 1) and np.all(np.isfinite(t))


@pytest.mark.skipif(not _has_avx2(), reason="needs an x86 host with AVX2")
def test_loops_with_sin_arctan2_and_hypot_are_vectorized() -> None:
    from arignote.runtime import cpu

    built: list[cpu.NativeModule] = []
    original = cpu.NativeModule.__init__

    def record(self, *args, **kwargs) -> None:
        original(self, *args, **kwargs)
        built.append(self)

    x, y = T.fvector("x"), T.fvector("y")
    with pytest.MonkeyPatch.context() as patch, change_flags(compile_cache=False):
        patch.setattr(cpu.NativeModule, "__init__", record)
        f = arignote.function(
            [x, y], T.sin(x) * T.arctan2(y, x) + T.log2(T.cosh(y)) + T.hypot(x, y)
        )
    (native,) = built
    ir = native.optimized_llvm_ir
    # the vector width is the target's cost model's choice: 8 or 16 floats on Intel
    # cores, 4 (widened to <4 x double>) on AMD Zen 3; any vector is vectorized
    assert re.search(r"fpext <\d+ x float>", ir), "no vector widening in the optimized IR"
    assert not re.search(r"call .*@(sinf?|atan2f?|log2f?|coshf?|hypotf?|llvm\.(sin|log2)\.)", ir)
    values = np.linspace(-3, 3, 101, dtype=np.float32)
    others = values[::-1].copy()
    a, b = values.astype(np.float64), others.astype(np.float64)
    want = np.sin(a) * np.arctan2(b, a) + np.log2(np.cosh(b)) + np.hypot(a, b)
    # four f32 results of magnitude <= 8 summed in f32: a few ulp of 8
    np.testing.assert_allclose(f(values, others), want, rtol=0, atol=8 * 2.0**-20)
