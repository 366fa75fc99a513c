"""Loops LLVM vectorises: the contiguous fast path of `loop_nest` with its strided
fallback, `noalias` arguments, and float reductions with vector partial sums (blocked,
compensated) against NumPy's pairwise summation."""

from __future__ import annotations

import re

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote import Mode
from arignote.configuration import change_flags
from arignote.runtime import cpu

LINKERS = ["py", "cvm"]
"""The reference interpreter and the default native linker."""


def _layouts() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Pairs of (x, y) float32 matrices of one shape in different memory layouts."""
    rng = np.random.default_rng(0)
    base = rng.standard_normal((12, 34)).astype(np.float32)
    other = rng.standard_normal((12, 34)).astype(np.float32)
    wide = rng.standard_normal((12, 68)).astype(np.float32)
    tall = rng.standard_normal((34, 12)).astype(np.float32)
    return {
        "contiguous": (base, other),
        "transposed": (tall.T, other),
        "every-other-column": (wide[:, ::2], other),
        "reversed-rows": (base[::-1], other[::-1]),
        "one-row": (base[:1], other[:1]),
        "one-column": (wide[:, :1], np.ascontiguousarray(other[:, :1])),
        "empty": (base[:0], other[:0]),
        "both-strided": (wide[:, 1::2], tall.T),
    }


@pytest.mark.parametrize("linker", LINKERS)
def test_elementwise_matrix_in_every_layout(linker: str) -> None:
    x, y = T.fmatrix("x"), T.fmatrix("y")
    f = arignote.function([x, y], T.exp(x * y) - y, mode=Mode(linker=linker))
    for name, (a, b) in _layouts().items():
        want = np.exp(a * b) - b
        np.testing.assert_allclose(f(a, b), want, rtol=2e-6, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("linker", LINKERS)
def test_float32_sums_agree_with_numpy_pairwise(linker: str) -> None:
    x, m = T.fvector("x"), T.fmatrix("m")
    f = arignote.function(
        [x, m], [x.sum(), T.dot(x, x), m.sum(axis=0), m.sum(axis=1)], mode=Mode(linker=linker)
    )
    rng = np.random.default_rng(1)
    v = (rng.standard_normal(1_000_003) + 1).astype(np.float32)
    mat = rng.standard_normal((3000, 7)).astype(np.float32)
    total, dot, cols, rows = f(v, mat)
    exact = v.astype(np.float64)
    # NumPy's pairwise float32 sum is within ~1e-7 of the exact sum here; a naive
    # sequential float32 loop is ~1e-4 off.
    assert abs(float(total) - exact.sum()) <= 1e-6 * abs(exact.sum())
    assert abs(float(dot) - exact @ exact) <= 1e-6 * (exact @ exact)
    np.testing.assert_allclose(cols, mat.astype(np.float64).sum(axis=0), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(rows, mat.sum(axis=1), rtol=1e-5, atol=1e-5)
    strided = mat[::2, ::3]
    _, _, cols, rows = f(v[::3], strided)
    np.testing.assert_allclose(cols, strided.astype(np.float64).sum(axis=0), rtol=1e-5)
    np.testing.assert_allclose(rows, strided.sum(axis=1), rtol=1e-5, atol=1e-5)


def _nonfinite_cases(dtype: type, n: int) -> list[np.ndarray]:
    """Vectors of length `n` whose sum is not finite whatever the order of the
    additions: an inf (first, middle or last), both infinities, a nan, and same-sign
    values that overflow."""
    big = np.finfo(dtype).max / 2
    cases = []
    for where in sorted({0, n // 2, n - 1}):
        for value in (np.inf, -np.inf, np.nan):
            x = np.linspace(-1, 1, n).astype(dtype)
            x[where] = value
            cases.append(x)
    both = np.ones(n, dtype)
    both[0], both[-1] = np.inf, -np.inf
    cases += [both, np.full(n, big, dtype), np.full(n, -big, dtype)]
    return cases


def _assert_sums_match(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Non-finite results exactly as NumPy's (same infinity, nan where NumPy has nan);
    finite ones close (NumPy sums pairwise, arignote in compensated blocks)."""
    got, want = np.asarray(got), np.asarray(want)
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite], want[~finite], err_msg=what)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-4, atol=1e-3, err_msg=what)


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sums_of_infinities_and_overflow_match_numpy(linker: str, dtype: type) -> None:
    """Regression: the compensated native sums gave nan for `sum`, `mean` and `dot` of
    +-inf or of values that overflow (the compensation term took `inf - inf`)."""
    t = T.TensorType(np.dtype(dtype).name, (False,))
    x = t("x")
    outs = [x.sum(), x.mean(), T.dot(x, T.ones_like(x)), (x * 2).sum(), (x * 2).mean()]
    f = arignote.function([x], outs, mode=Mode(linker=linker))
    with np.errstate(all="ignore"):
        for n in (1, 3, 37, 5000):  # shorter than a vector, several vectors, blocks
            for v in _nonfinite_cases(dtype, n):
                want = [v.sum(), v.mean(), v.dot(np.ones_like(v)), (v * 2).sum(), (v * 2).mean()]
                for k, (got, expected) in enumerate(zip(f(v), want, strict=True)):
                    _assert_sums_match(got, expected, f"output {k}, n={n}, {v[:3]}...")


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_axis_sums_of_infinities_match_numpy(linker: str, dtype: type) -> None:
    """The same for sums and means along either axis of a matrix whose rows and
    columns mix finite and non-finite sums."""
    t = T.TensorType(np.dtype(dtype).name, (False, False))
    m = t("m")
    outs = [m.sum(axis=0), m.sum(axis=1), m.mean(axis=0), (m * 2).sum(axis=1)]
    f = arignote.function([m], outs, mode=Mode(linker=linker))
    big = np.finfo(dtype).max / 2
    with np.errstate(all="ignore"):
        for rows, cols in ((5, 3), (7, 2100)):
            v = np.linspace(-1, 1, rows * cols).astype(dtype).reshape(rows, cols)
            v[0, 0], v[1, -1], v[2, 1] = np.inf, -np.inf, np.nan
            v[3, :] = big
            v[4, 0], v[4, -1] = np.inf, -np.inf
            want = [v.sum(axis=0), v.sum(axis=1), v.mean(axis=0), (v * 2).sum(axis=1)]
            for k, (got, expected) in enumerate(zip(f(v), want, strict=True)):
                _assert_sums_match(got, expected, f"output {k}, {rows}x{cols}")


def _optimized_ir(build) -> str:
    built: list[cpu.NativeModule] = []
    original = cpu.NativeModule.__init__

    def record(self, *args, **kwargs) -> None:
        original(self, *args, **kwargs)
        built.append(self)

    with pytest.MonkeyPatch.context() as patch, change_flags(compile_cache=False):
        patch.setattr(cpu.NativeModule, "__init__", record)
        build()
    (native,) = built
    return native.optimized_llvm_ir


def _has_avx2() -> bool:
    import llvmlite.binding as llvm

    try:
        return bool(llvm.get_host_cpu_features().get("avx2"))
    except Exception:  # not x86, or the features are unknown
        return False


@pytest.mark.skipif(not _has_avx2(), reason="needs an x86 host with AVX2")
def test_noalias_elementwise_and_reductions_are_vectorized() -> None:
    x, y, z = T.fvector("x"), T.fvector("y"), T.fvector("z")
    ir = _optimized_ir(lambda: arignote.function([x, y, z], [x * y + z, (x * y).sum()]))
    # noalias arguments: no run-time overlap checks, and the split-off body is gone.
    assert "vector.memcheck" not in ir
    assert not re.search(r"define .*__noalias", ir)
    assert re.search(r"fmul <(8|16) x float>", ir)
    # the sum's reassociating add, vectorised into lanes of partial sums
    assert re.search(r"fadd reassoc <(8|16) x float>", ir)
