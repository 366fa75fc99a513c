"""Loops LLVM vectorises: the contiguous fast path of `loop_nest` with its strided
fallback, `noalias` arguments, and float reductions with vector partial sums (blocked,
compensated) against NumPy's pairwise summation."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote import Mode
from arignote.configuration import change_flags
from arignote.lowering.loops import loop_utils
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


F32_UNIT_ROUNDOFF = 2.0**-24


def _gamma(chain: int) -> float:
    """Higham's `gamma_k = k u / (1 - k u)` for float32: a sum whose every sequential
    chain of additions has at most `k` terms is within `gamma_k * sum(|terms|)` of the
    exact sum, whatever the order of the chains (Accuracy and Stability of Numerical
    Algorithms, 2nd ed., section 4.2)."""
    ku = chain * F32_UNIT_ROUNDOFF
    return ku / (1 - ku)


def _chain(linker: str, n: int, contiguous: bool) -> int:
    """The longest chain of additions in a float32 sum of `n` terms.

    Native code sums blocks of `REDUCTION_BLOCK` terms (in vector lanes: chains no
    longer than the block) and folds the block sums by Neumaier's compensated
    summation, which adds at most 2 more roundings. The interpreter is NumPy: over a
    contiguous axis its pairwise sum (leaves of at most 128 terms in 8 accumulators,
    then a binary tree); over a strided axis a plain sequential loop.
    """
    if linker != "py":
        return min(n, loop_utils.REDUCTION_BLOCK) + 2
    if not contiguous or n <= 8:
        return n
    return 16 + 3 + max(0, math.ceil(math.log2(n / 128))) + 1


def _assert_sum_within_bound(got: np.ndarray | float, terms: np.ndarray, chain: int) -> None:
    """`got` (sums along the last axis of `terms`, whose dot products are exact in
    float64) is within the bound of a float32 sum with chains of `chain` terms; a
    product adds one rounding of its own."""
    exact = terms.astype(np.float64).sum(axis=-1)
    bound = _gamma(chain + 1) * np.abs(terms.astype(np.float64)).sum(axis=-1)
    error = np.abs(np.asarray(got, np.float64) - exact)
    assert np.all(error <= bound), (error, bound)


@pytest.mark.parametrize("linker", LINKERS)
def test_float32_sums_agree_with_numpy_pairwise(linker: str) -> None:
    x, m = T.fvector("x"), T.fmatrix("m")
    f = arignote.function(
        [x, m], [x.sum(), T.dot(x, x), m.sum(axis=0), m.sum(axis=1)], mode=Mode(linker=linker)
    )
    rng = np.random.default_rng(1)
    v = (rng.standard_normal(1_000_003) + 1).astype(np.float32)
    mat = rng.standard_normal((3000, 7)).astype(np.float32)
    for vec, mt in ((v, mat), (v[::3], mat[::2, ::3])):
        total, dot, cols, rows = f(vec, mt)
        _assert_sum_within_bound(total, vec, _chain(linker, vec.size, contiguous=True))
        _assert_sum_within_bound(cols, mt.T, _chain(linker, mt.shape[0], contiguous=False))
        _assert_sum_within_bound(rows, mt, _chain(linker, mt.shape[1], contiguous=True))
        if linker == "py":
            # NumPy's dot is BLAS `sdot`, whose order of additions depends on the CPU
            # kernel: the interpreter must give what NumPy gives, to a rounding or two.
            np.testing.assert_allclose(dot, np.dot(vec, vec), rtol=4 * F32_UNIT_ROUNDOFF)
        else:
            products = vec.astype(np.float64) ** 2
            _assert_sum_within_bound(dot, products, _chain(linker, vec.size, contiguous=True))


@pytest.mark.parametrize("linker", LINKERS)
def test_float32_sums_do_not_stagnate(linker: str) -> None:
    """A plain float32 loop adding 2**20 ones to 2**24 stays at 2**24 (each `+ 1` rounds
    back to it), a 6% error; a blocked or pairwise sum loses at most the ones of the
    one chain that holds 2**24, well within the bound."""
    x = T.fvector("x")
    f = arignote.function([x], [x.sum(), T.dot(x, x)], mode=Mode(linker=linker))
    v = np.ones(2**20, np.float32)
    v[0] = 2.0**24
    root = np.ones(2**20, np.float32)
    root[0] = 2.0**12  # its square is 2**24
    total, _ = f(v)
    _, dot = f(root)
    chain = _chain(linker, v.size, contiguous=True)
    _assert_sum_within_bound(total, v, chain)
    if linker != "py":  # NumPy's dot is BLAS, whose summation order is its own
        _assert_sum_within_bound(dot, root.astype(np.float64) ** 2, chain)


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
    assert re.search(r"fmul <\d+ x float>", ir)
    # the sum's reassociating add, vectorised into lanes of partial sums
    assert re.search(r"fadd reassoc <\d+ x float>", ir)
