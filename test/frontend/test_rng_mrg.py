"""`arignote.sandbox.rng_mrg` (MRG31k3p, issue 14) on both linkers: the streams
against a NumPy transcription of L'Ecuyer's algorithm written here, against the Java
reference samples of Theano's tests (`data/samples_MRG31k3p_12_7_5.txt`), statistical
checks, `seed()`, the state's advance, draws in `scan`, gradients and errors.

One compiled function covers several checks (a native compile costs a fraction of a
second).
"""

from __future__ import annotations

import math
import os
import warnings

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.dialects import ag
from arignote.gradient import NullTypeGradError
from arignote.sandbox import rng_mrg
from arignote.sandbox.rng_mrg import MRG_RandomStreams, guess_n_streams

BACKENDS = ["py", "cvm"]
M1, M2 = 2**31 - 1, 2**31 - 21069
JAVA = np.loadtxt(os.path.join(os.path.dirname(__file__), "data", "samples_MRG31k3p_12_7_5.txt"))


def mode(backend: str) -> arignote.Mode:
    return arignote.Mode(linker=backend)


# --- the transcription (L'Ecuyer & Touzin 2000; Theano's conversion to float) --------


def wrap(v: int) -> int:
    """`v` as a 32-bit two's-complement integer."""
    return (v + 2**31) % 2**32 - 2**31


def reduce(y: int, m: int) -> int:
    return wrap(y - m) if y < 0 or y >= m else y


def step(words: list[int]) -> tuple[list[int], int]:
    x11, x12, x13, x21, x22, x23 = words
    y1 = wrap(((x12 & 511) << 22) + (x12 >> 9) + ((x13 & 16777215) << 7) + (x13 >> 24))
    y1 = reduce(wrap(reduce(y1, M1) + x13), M1)
    z1 = reduce(wrap(((x21 & 65535) << 15) + 21069 * (x21 >> 16)), M2)
    z2 = reduce(wrap(((x23 & 65535) << 15) + 21069 * (x23 >> 16)), M2)
    z2 = reduce(wrap(reduce(wrap(z2 + x23), M2) + z1), M2)
    k = y1 - z2 + M1 if y1 <= z2 else y1 - z2
    return [y1, x11, x12, z2, x21, x22], k


def to_float(k: int, dtype: str) -> float:
    if dtype == "float32":
        return np.float32(k) * np.float32(4.6566126e-10)
    return k * 2.0**-31


def matrix_power_mod(a: list[list[int]], log2: int, m: int) -> list[list[int]]:
    """`a ** (2 ** log2) mod m` by squaring."""
    for _ in range(log2):
        a = [[sum(a[i][k] * a[k][j] for k in range(3)) % m for j in range(3)] for i in range(3)]
    return a


A1 = [[0, 4194304, 129], [1, 0, 0], [0, 1, 0]]  # x1,n = 2^22 x1,n-2 + (2^7 + 1) x1,n-3
A2 = [[32768, 0, 32769], [1, 0, 0], [0, 1, 0]]  # x2,n = 2^15 x2,n-1 + (2^15 + 1) x2,n-3


def jump(words: list[int], log2: int) -> list[int]:
    a1, a2 = matrix_power_mod(A1, log2, M1), matrix_power_mod(A2, log2, M2)
    first = [sum(a1[i][k] * words[k] for k in range(3)) % M1 for i in range(3)]
    second = [sum(a2[i][k] * words[3 + k] for k in range(3)) % M2 for i in range(3)]
    return first + second


def expected_draws(seed: int, n_streams: int, sizes: list[int], dtype: str) -> list[np.ndarray]:
    """The samples of successive draws of `sizes[i]` elements from the first `uniform`
    call's streams (stream `i mod n` gives sample `i`)."""
    states = [[seed] * 6]
    # only the streams that give a sample: the first max(sizes) of them (each jump is a
    # pure-Python matrix power; 15360 of them took half a minute)
    for _ in range(1, min(n_streams, max(sizes, default=0))):
        states.append(jump(states[-1], 72))
    draws = []
    for size in sizes:
        out = []
        for i in range(size):
            states[i % n_streams], k = step(states[i % n_streams])
            out.append(to_float(k, dtype))
        draws.append(np.asarray(out, dtype=dtype))
    return draws


# --- streams -----------------------------------------------------------------------------


def test_jump_matrices_are_powers_of_the_recurrences():
    assert np.array_equal(rng_mrg.A1p72, matrix_power_mod(A1, 72, M1))
    assert np.array_equal(rng_mrg.A2p72, matrix_power_mod(A2, 72, M2))
    assert np.array_equal(rng_mrg.A1p134, matrix_power_mod(A1, 134, M1))
    assert np.array_equal(rng_mrg.A2p134, matrix_power_mod(A2, 134, M2))
    v = np.array([12345, 23456, 34567, 45678, 56789, 67890], dtype=np.int32)
    assert rng_mrg.ff_2p72(v).tolist() == jump(v.tolist(), 72)
    assert rng_mrg.ff_2p134(v).tolist() == jump(v.tolist(), 134)
    assert rng_mrg.multMatVect(v, rng_mrg.A1p72, M1, rng_mrg.A2p72, M2).tolist() == jump(
        v.tolist(), 72
    )


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_stream_equals_transcription(backend, dtype):
    """Symbolic sizes 0, 1, 7 and 10 with 3 streams (7 and 10 not multiples), drawn one
    after the other, then a 2-d draw of a static size."""
    R = MRG_RandomStreams(4321)
    n = T.lscalar()
    u = R.uniform(size=T.stack([n]), ndim=1, nstreams=3, dtype=dtype)
    v = R.uniform(size=(2, 5), nstreams=4, dtype=dtype)
    f = arignote.function([n], [u, v], mode=mode(backend))
    sizes = [0, 1, 7, 10]
    got = [f(s)[0] for s in sizes]
    for g, e in zip(got, expected_draws(4321, 3, sizes, dtype), strict=True):
        assert g.dtype == dtype
        np.testing.assert_array_equal(g, e)
    # `v`'s streams start 2**134 steps after `u`'s (Theano's `inc_rstate`); it was
    # drawn once per call above
    states = [jump([4321] * 6, 134)]
    for _ in range(3):
        states.append(jump(states[-1], 72))
    expected_v = []
    for _ in range(len(sizes) + 1):
        row = []
        for i in range(10):
            states[i % 4], k = step(states[i % 4])
            row.append(to_float(k, dtype))
        expected_v.append(np.asarray(row, dtype=dtype).reshape(2, 5))
    np.testing.assert_array_equal(f(0)[1], expected_v[-1])


@pytest.mark.parametrize("backend", BACKENDS)
def test_java_reference_samples(backend):
    """Theano's `test_consistency_randomstreams`: 12 streams of 7 substreams, 5 samples
    each, against L'Ecuyer's Java implementation."""
    rng = MRG_RandomStreams(seed=12345)
    draws = [rng.uniform(size=(7,), nstreams=7, dtype="float64") for _ in range(12)]
    f = arignote.function([], draws, mode=mode(backend))
    samples = np.array([f() for _ in range(5)])  # (5, 12, 7)
    got = samples.transpose(1, 2, 0).reshape(-1)
    np.testing.assert_allclose(got, JAVA, rtol=0, atol=1e-15)
    assert got[:3].tolist() == pytest.approx(
        [0.7353244530968368, 0.6142074400559068, 0.11007806099951267], abs=1e-16
    )


def test_mrg_next_value_and_dotmodulo():
    state = np.array([12345] * 6, dtype=np.int32)
    new = np.zeros(6, dtype=np.int32)
    value = rng_mrg.mrg_next_value(state, new, NORM=rng_mrg.NORM, mask=0xFFFFFFFF, offset=0)
    assert value == JAVA[0]
    words, _ = step([12345] * 6)
    assert new.tolist() == words
    A, s, m = T.lmatrix(), T.ivector(), T.iscalar()
    A2, s2, m2 = T.lmatrix(), T.ivector(), T.iscalar()
    f = arignote.function([A, s, m, A2, s2, m2], rng_mrg.DotModulo()(A, s, m, A2, s2, m2))
    v = np.array([1, 2, 3, 4, 5, 6], dtype=np.int32)
    got = f(rng_mrg.A1p72, v[:3], M1, rng_mrg.A2p72, v[3:], M2)
    assert got.dtype == np.int32 and got.tolist() == jump(v.tolist(), 72)


def test_guess_n_streams():
    assert guess_n_streams((4, 5)) == 3
    assert guess_n_streams((2, 3)) == 6
    assert guess_n_streams((1000, 1000)) == 60 * 256
    with pytest.warns(UserWarning, match="guessing 60\\*256"):
        assert guess_n_streams(T.lvector(), warn=True) == 60 * 256
    R = MRG_RandomStreams()
    assert R.n_streams((12, 5)) == 10
    states = R.get_substream_rstates(3, "float32", inc_rstate=False)
    assert states.dtype == np.int32 and states.shape == (3, 6)
    assert states[1].tolist() == jump([12345] * 6, 72)
    assert R.rstate.tolist() == [12345] * 6


# --- state, seed, scan -----------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_state_advances_and_seed_reproduces(backend):
    R = MRG_RandomStreams(234)
    u = R.uniform(size=(5, 4))
    nv = R.normal(size=(3,))
    state, new_state, size, nstreams = R.updates()[0]
    assert state.default_update is new_state and size == (5, 4) and nstreams is None
    assert len(R.updates()) == 2
    f = arignote.function([], [u, nv], mode=mode(backend))
    first, second = f(), f()
    assert not np.allclose(first[0], second[0])
    R.seed()
    again = f()
    np.testing.assert_array_equal(again[0], first[0])
    np.testing.assert_array_equal(again[1], first[1])
    R.seed(99)
    other = f()
    assert not np.allclose(other[0], first[0])
    fresh = MRG_RandomStreams(99)
    g = arignote.function(
        [], [fresh.uniform(size=(5, 4)), fresh.normal(size=(3,))], mode=mode(backend)
    )
    np.testing.assert_array_equal(g()[0], other[0])
    np.testing.assert_array_equal(g()[1], f()[1])
    no_update = arignote.function([], u, no_default_updates=True, mode=mode(backend))
    np.testing.assert_array_equal(no_update(), no_update())


@pytest.mark.parametrize("backend", BACKENDS)
def test_draws_in_scan(backend):
    """The state is fed from step to step (Theano's scan takes the default update)."""
    R = MRG_RandomStreams(12345)
    x = T.vector()
    out, updates = arignote.scan(lambda xi: xi + R.uniform(size=(3,), nstreams=3), sequences=[x])
    f = arignote.function([x], out, updates=updates, mode=mode(backend))
    draws = expected_draws(12345, 3, [3] * 4, "float64")
    np.testing.assert_array_equal(f(np.zeros(2)), np.stack(draws[:2]))
    np.testing.assert_array_equal(f(np.ones(2)), 1 + np.stack(draws[2:]))


# --- distributions -----------------------------------------------------------------------


def ks_bound(n: int, alpha: float = 1e-6) -> float:
    """The Kolmogorov-Smirnov statistic's critical value at level `alpha` (asymptotic,
    the Dvoretzky-Kiefer-Wolfowitz bound)."""
    return math.sqrt(-math.log(alpha / 2) / (2 * n))


def ks_statistic(samples: np.ndarray, cdf) -> float:
    x = np.sort(samples.astype(np.float64).ravel())
    n = len(x)
    c = cdf(x)
    return float(max(np.max(np.arange(1, n + 1) / n - c), np.max(c - np.arange(n) / n)))


def normal_cdf(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_distributions_statistics(backend):
    """Moments within 6 standard errors and KS statistics below the 1e-6-level bound
    (fixed seeds: deterministic)."""
    n = 20000
    R = MRG_RandomStreams(1234)
    size = (100, 200)
    outs = [
        R.uniform(size=size, low=-1.0, high=3.0),
        R.normal(size=size, avg=2.0, std=3.0),
        R.normal(size=(n + 1,), truncate=True),
        R.truncated_normal(size=size, std=2.0, dtype="float32"),
        R.binomial(size=size, p=0.3, dtype="float32"),
    ]
    uni, nor, trunc, tn, bino = arignote.function([], outs, mode=mode(backend))()
    se = 6 / math.sqrt(n)
    assert uni.min() > -1 and uni.max() < 3
    assert abs(uni.mean() - 1.0) < 4 * se * 1.155 / 2 * 2
    assert ks_statistic((uni + 1) / 4, lambda x: x) < ks_bound(n)
    assert abs(nor.mean() - 2.0) < 3 * se and abs(nor.std() - 3.0) < 3 * se * 1.5
    assert ks_statistic((nor - 2.0) / 3.0, normal_cdf) < ks_bound(n)
    assert trunc.shape == (n + 1,) and np.all(np.abs(trunc) <= 2)
    z = normal_cdf(np.array([2.0]))[0]
    trunc_cdf = lambda x: (normal_cdf(x) - (1 - z)) / (2 * z - 1)  # noqa: E731
    assert ks_statistic(trunc, trunc_cdf) < ks_bound(n)
    assert tn.dtype == np.float32 and np.all(np.abs(tn) <= 2 * 2.0 / 0.87962566103423978 + 1e-5)
    assert abs(tn.std() - 2.0) < 2.0 * 3 * se * 1.5
    assert bino.dtype == np.float32 and set(np.unique(bino)) <= {0.0, 1.0}
    assert abs(bino.mean() - 0.3) < 6 * math.sqrt(0.21 / n)


@pytest.mark.parametrize("backend", BACKENDS)
def test_normal_odd_sizes_follow_box_muller(backend):
    """`normal` of an odd size: Box-Muller on the next even count of uniforms (15360
    streams, as Theano for a size it cannot count), the last value dropped."""
    R = MRG_RandomStreams(77)
    f = arignote.function([], R.normal(size=(3,), dtype="float64"), mode=mode(backend))
    u = expected_draws(77, 60 * 256, [4], "float64")[0]
    r = np.sqrt(-2 * np.log(u[:2]))
    z = np.concatenate([r * np.cos(2 * np.pi * u[2:]), r * np.sin(2 * np.pi * u[2:])])
    np.testing.assert_allclose(f(), z[:3], rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_multinomial_and_choice(backend):
    R = MRG_RandomStreams(5)
    pvals = np.array([[0.1, 0.2, 0.7], [0.5, 0.0, 0.5], [0.0, 1.0, 0.0]])
    n = T.lscalar()
    counts = R.multinomial(pvals=pvals, n=n, dtype="int32")
    one = R.multinomial(pvals=T.constant(pvals.astype("float32")), dtype="auto")
    picks = R.choice(size=n, p=pvals, replace=False)
    f = arignote.function([n], [counts, one, picks], mode=mode(backend))
    c, o, p = f(3)
    assert c.dtype == np.int32 and c.sum(axis=1).tolist() == [3, 3, 3] and c[2, 1] == 3
    assert c[1, 1] == 0
    assert o.dtype == np.float32 and o.sum(axis=1).tolist() == [1, 1, 1]
    assert p.dtype == np.int64 and p.shape == (3, 3)
    assert sorted(p[0].tolist()) == [0, 1, 2]  # without replacement: every outcome once
    big, _, _ = f(4000)
    np.testing.assert_allclose(big / 4000, pvals, atol=6 * math.sqrt(0.25 / 4000))


def test_multinomial_matches_cumsum_rule():
    """`MultinomialFromUniform`: the first outcome whose running sum exceeds the
    uniform (uniform `c * N + i` for row `i`, draw `c`)."""
    p, u = T.dmatrix(), T.dvector()
    f = arignote.function([p, u], rng_mrg.multinomial.MultinomialFromUniform("int64")(p, u, 2))
    pv = np.array([[0.25, 0.25, 0.5], [0.6, 0.4, 0.0]])
    got = f(pv, np.array([0.2, 0.7, 0.5, 0.59]))
    assert got.tolist() == [[1, 0, 1], [1, 1, 0]]


# --- gradients and errors ------------------------------------------------------------


def test_gradients_are_undefined():
    R = MRG_RandomStreams()
    low, high, p = T.dscalar(), T.dscalar(), T.dscalar()
    with pytest.raises(NullTypeGradError):
        arignote.grad(R.uniform(size=(2,), low=low, high=1.0).sum(), low)
    with pytest.raises(NullTypeGradError):
        arignote.grad(R.uniform(size=(2,), low=0.0, high=high).sum(), high)
    with pytest.raises(NullTypeGradError):
        arignote.grad(R.normal(size=(2,), avg=low).sum(), low)
    # binomial's `p` reaches the samples only through a comparison, which carries no
    # gradient here (Theano's comparisons pass zeros, which then meet undefined_grad)
    g = arignote.grad(R.binomial(size=(2,), p=p, dtype="float64").sum(), p)
    assert float(arignote.function([p], g)(0.5)) == 0.0


def test_bad_arguments():
    with pytest.raises(ValueError, match="seed should not be 0"):
        MRG_RandomStreams(0)
    with pytest.raises(ValueError, match="less than 2147462579"):
        MRG_RandomStreams(M2)
    with pytest.raises(ValueError, match="first 3 values of seed should not be all 0"):
        MRG_RandomStreams([0, 0, 0, 1, 1, 1])
    with pytest.raises(TypeError, match="1 integer or 6 integers"):
        MRG_RandomStreams([1, 2])
    R = MRG_RandomStreams()
    with pytest.raises(ValueError, match="value <= 0"):
        R.uniform(size=(3, 0))
    with pytest.raises(TypeError, match="size must be a tuple of int"):
        R.uniform(size=[3])
    with pytest.raises(TypeError, match="unexpected keyword"):
        R.uniform(size=(3,), colour=1)
    with pytest.raises(TypeError, match="'float32' or 'float64'"):
        R.uniform(size=(3,), dtype="int32")
    with pytest.raises(NotImplementedError, match="n > 1"):
        R.binomial(size=(3,), n=2)
    with pytest.raises(ValueError, match="does not use the size"):
        R.multinomial(size=(2,), pvals=[[0.5, 0.5]])
    with pytest.raises(NotImplementedError, match="without replacement"):
        R.choice(size=1, p=[[0.5, 0.5]])
    with pytest.raises(ValueError, match="Non-positive"):
        R.normal(size=(2, -1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="size must be None"):
            R.multinomial_wo_replacement(size=(1,), pvals=[[0.5, 0.5]])


@pytest.mark.parametrize("backend", BACKENDS)
def test_run_time_errors(backend):
    R = MRG_RandomStreams()
    n = T.lscalar()
    u = R.uniform(size=T.stack([n, 3]), ndim=2, nstreams=2)
    f = arignote.function([n], u, mode=mode(backend))
    assert f(2).shape == (2, 3)
    with pytest.raises(ValueError, match="negative length"):
        f(-1)
    with pytest.raises(ValueError, match=r"2\*\*31 - 1"):
        f(2**30)
    R.updates()[0][0].set_value(np.zeros((2, 5), dtype=np.int32))
    with pytest.raises(ValueError, match="6 columns"):
        f(1)


# --- the fused binomial (dropout masks) -------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("floatx", ["float32", "float64"])
def test_binomial_mask_fused_equals_uniform_below_p(backend, floatx):
    """`binomial` with a scalar `p` is one `ag.mrg_binomial` (no uniform array): the
    same mask and state as `cast(uniform < p)` from the same seed, for an `f32` and an
    `f64` `p`, odd symbolic sizes and a dropout layer `x * mask / keep`."""
    with arignote.configuration.change_flags(floatX=floatx):
        x = T.fmatrix()
        keep32, keep64 = T.fscalar(), T.dscalar()
        fused = MRG_RandomStreams(42)
        masks = [
            fused.binomial(size=x.shape, p=keep32, dtype="float32", nstreams=5),
            fused.binomial(size=(3, 7), p=keep64, nstreams=4),
        ]
        layer = x * fused.binomial(size=x.shape, p=0.7, dtype=x.dtype) / np.float32(0.7)
        plain = MRG_RandomStreams(42)
        references = [
            T.cast(T.lt(plain.uniform(size=x.shape, nstreams=5), keep32), "float32"),
            T.cast(T.lt(plain.uniform(size=(3, 7), nstreams=4), keep64), "int64"),
            x * T.cast(T.lt(plain.uniform(size=x.shape), 0.7), x.dtype) / np.float32(0.7),
        ]
    assert all(isinstance(m.value.owner, ag.MrgBinomialOp) for m in masks)
    assert [m.dtype for m in masks] == ["float32", "int64"]
    f = arignote.function([x, keep32, keep64], [*masks, layer], mode=mode(backend))
    g = arignote.function([x, keep32, keep64], references, mode=mode(backend))
    xv = np.random.default_rng(0).random((5, 9)).astype(np.float32)
    for _ in range(2):
        got, expected = f(xv, np.float32(0.3), 0.6), g(xv, np.float32(0.3), 0.6)
        for a, e in zip(got, expected, strict=True):
            assert a.dtype == e.dtype
            np.testing.assert_array_equal(a, e)
    assert 0 < got[0].sum() < got[0].size


@pytest.mark.parametrize("backend", BACKENDS)
def test_mrg_uniform_op_serial(backend):
    """Theano's `test_consistency_cpu_serial`, one substream: `mrg_uniform.new` on a
    one-stream state gives the stream's samples one after the other."""
    state = arignote.shared(np.array([[12345] * 6], dtype="int32"))
    new_state, sample = rng_mrg.mrg_uniform.new(state, None, "float64", (1,))
    state.default_update = new_state
    f = arignote.function([], sample, mode=mode(backend))
    np.testing.assert_array_equal(np.concatenate([f() for _ in range(5)]), JAVA[:5])
    op = rng_mrg.mrg_uniform(T.TensorType("float32", (False, False)))
    assert str(op) == "mrg_uniform{TensorType(float32, matrix),no_inplace}"
    _, s = op(state, (2, 1))
    assert s.dtype == "float32" and s.broadcastable == (False, True)
