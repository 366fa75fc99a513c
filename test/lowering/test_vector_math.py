"""The inline exp/log/log1p/expm1/tanh of `convert-math-to-llvm` (`lowering/vector_math.py`):
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
    assert re.search(r"fmul <(8|16) x float>", ir), "no vector multiply in the optimized IR"
    assert not re.search(r"call .*@(expf|tanhf|log1pf|llvm\.exp\.)", ir)
    values = np.linspace(-3, 3, 101, dtype=np.float32)
    want = np.tanh(np.exp(values)) + np.log1p(values * values)
    np.testing.assert_allclose(f(values), want, rtol=3e-7)
