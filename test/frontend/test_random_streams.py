"""`arignote.tensor.shared_randomstreams` and `arignote.tensor.raw_random` (issue 14):
Theano's random streams. The draws are numpy's: each stream's generator is
`RandomState(RandomState(seed).randint(2**30))` (the k-th stream taking the k-th seed),
and a draw calls the `RandomState` method Theano calls with the same arguments, so the
expected values below are computed with numpy directly. Each test runs on both linkers
(the reference interpreter and native code, which calls back into Python for the draw).
"""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.compile.mode import InterpreterFallbackWarning
from arignote.gradient import NullTypeGradError
from arignote.tensor import raw_random
from arignote.tensor.raw_random import random_state_type
from arignote.tensor.shared_randomstreams import RandomStateSharedVariable, RandomStreams

MODES = [arignote.Mode(linker="py"), arignote.Mode(linker="cvm")]
LINKERS = pytest.mark.parametrize("mode", MODES, ids=["py", "cvm"])


def stream_rngs(seed: int, count: int) -> list[np.random.RandomState]:
    """The generators of the first `count` streams of `RandomStreams(seed)`, by numpy."""
    master = np.random.RandomState(seed)
    return [np.random.RandomState(int(master.randint(2**30))) for _ in range(count)]


# --- values: every distribution is numpy's --------------------------------------------------

DRAWS = [
    ("uniform", dict(size=(2, 3), low=-1.0, high=2.0), lambda r: r.uniform(-1.0, 2.0, (2, 3))),
    (
        "uniform",
        dict(size=(4,), dtype="float32"),
        lambda r: r.uniform(0.0, 1.0, (4,)).astype("float32"),
    ),
    ("normal", dict(size=(4,), avg=1.0, std=2.0), lambda r: r.normal(1.0, 2.0, (4,))),
    ("binomial", dict(size=(5,), n=10, p=0.3), lambda r: r.binomial(10, 0.3, (5,))),
    (
        "random_integers",
        dict(size=(2, 2), low=-3, high=3),
        lambda r: np.array([r.randint(-3, 4) for _ in range(4)]).reshape(2, 2),
    ),
    ("choice", dict(size=(3,), a=10, replace=False), lambda r: r.choice(10, (3,), False)),
    (
        "choice",
        dict(size=(4,), a=[5, 6, 7], p=[0.1, 0.2, 0.7]),
        lambda r: r.choice(np.array([5, 6, 7]), (4,), True, [0.1, 0.2, 0.7]),
    ),
    ("poisson", dict(size=(4,), lam=3.0), lambda r: r.poisson(3.0, (4,))),
    ("permutation", dict(size=(2,), n=5), lambda r: np.stack([r.permutation(5) for _ in "ab"])),
    ("permutation", dict(n=4), lambda r: r.permutation(4)),
    (
        "multinomial",
        dict(size=(2,), n=7, pvals=[0.2, 0.3, 0.5]),
        lambda r: np.stack([r.multinomial(7, [0.2, 0.3, 0.5]) for _ in "ab"]),
    ),
]


@LINKERS
def test_every_distribution_draws_numpys_values(mode: arignote.Mode) -> None:
    srng = RandomStreams(seed=2024)
    outs = [getattr(srng, name)(**kwargs) for name, kwargs, _ in DRAWS]
    f = arignote.function([], outs, mode=mode)
    rngs = stream_rngs(2024, len(DRAWS))
    for _call in range(2):  # the second call draws from the advanced generators
        for got, (name, kwargs, expect), r in zip(f(), DRAWS, rngs, strict=True):
            want = expect(r)
            assert got.dtype == np.dtype(kwargs.get("dtype", want.dtype)), (name, kwargs)
            np.testing.assert_array_equal(got, want, err_msg=f"{name} {kwargs}")


@LINKERS
def test_raw_random_functions_with_an_updated_input(mode: arignote.Mode) -> None:
    # Theano's test_raw_random style: the generator is a function input with an update
    rng_r = random_state_type()
    post_r, out = raw_random.normal(rng_r, (3,), 0.5, 2.0)
    f = arignote.function(
        [arignote.In(rng_r, value=np.random.RandomState(7), update=post_r, mutable=True)],
        out,
        mode=mode,
    )
    ref = np.random.RandomState(7)
    np.testing.assert_array_equal(f(), ref.normal(0.5, 2.0, (3,)))
    np.testing.assert_array_equal(f(), ref.normal(0.5, 2.0, (3,)))
    # the new state is an output that a later call can take as its input
    g = arignote.function([rng_r], [post_r, out], mode=mode)
    state, first = g(np.random.RandomState(9))
    _, second = g(state)
    ref = np.random.RandomState(9)
    np.testing.assert_array_equal(first, ref.normal(0.5, 2.0, (3,)))
    np.testing.assert_array_equal(second, ref.normal(0.5, 2.0, (3,)))


@LINKERS
def test_symbolic_size_and_parameter_shapes(mode: arignote.Mode) -> None:
    srng = RandomStreams(seed=5)
    n = T.lscalar("n")
    shape = T.lvector("shape")
    low = T.dvector("low")
    a = srng.uniform(size=(n, 3))
    b = srng.normal(size=shape, ndim=2)
    c = srng.uniform(low=low, high=low + 1)  # size None: the parameters' shape
    d = srng.uniform(size=(2, -1), low=low)  # -1: the parameter's dimension
    f = arignote.function([n, shape, low], [a, b, c, d], mode=mode)
    lows = np.array([0.0, 10.0, 20.0, 30.0])
    got = f(2, [3, 1], lows)
    ra, rb, rc, rd = stream_rngs(5, 4)
    np.testing.assert_array_equal(got[0], ra.uniform(0.0, 1.0, (2, 3)))
    np.testing.assert_array_equal(got[1], rb.normal(0.0, 1.0, (3, 1)))
    np.testing.assert_array_equal(got[2], rc.uniform(lows, lows + 1))
    np.testing.assert_array_equal(got[3], rd.uniform(lows, 1.0, (2, 4)))
    assert a.ndim == 2 and b.ndim == 2 and c.ndim == 1 and d.ndim == 2


def test_types_and_broadcastable_patterns() -> None:
    srng = RandomStreams(seed=1)
    u = srng.uniform(size=(1, 3))
    assert u.broadcastable == (True, False)
    assert u.dtype == arignote.config.floatX
    assert srng.uniform(size=(2,), low=np.float32(0), high=np.float32(1)).dtype == (
        arignote.config.floatX
    )
    assert srng.binomial(size=(2,)).dtype == "int64"
    assert srng.permutation(size=(2, 3), n=4).ndim == 3
    assert isinstance(u.rng, RandomStateSharedVariable)
    assert u.rng.type is random_state_type and str(u.rng.type) == "RandomStateType"
    assert u.update[0] is u.rng and u.update[1].type is random_state_type
    assert u.rng.default_update is u.update[1] and u.rng.tag.is_rng
    assert srng.state_updates[0] is u.update and len(srng.updates()) == 4
    assert str(u.owner.op) == "RandomFunction{uniform}"


# --- statistics: the parameters reach numpy as documented -----------------------------------

ALPHA = 1e-6
"""The significance level of every statistical check (the draws are deterministic: the
level says how unlikely a failure of a correct implementation is over seeds)."""
Z = 4.89  # two-sided standard normal quantile at ALPHA
KS = math.sqrt(-math.log(ALPHA / 2) / 2)  # Kolmogorov's asymptotic critical value


def ks_statistic(sample: np.ndarray, cdf: np.ndarray) -> float:
    """max |F_n - F| for a continuous `cdf` evaluated at the sorted sample."""
    n = len(sample)
    upper = np.arange(1, n + 1) / n - cdf
    lower = cdf - np.arange(n) / n
    return float(max(upper.max(), lower.max()))


def normal_cdf(x: np.ndarray, mu: float, sigma: float) -> np.ndarray:
    erf = np.frompyfunc(math.erf, 1, 1)
    return 0.5 * (1 + erf((x - mu) / (sigma * math.sqrt(2))).astype(float))


def check_mean(sample: np.ndarray, mean: float, var: float) -> None:
    n = sample.size
    assert abs(sample.mean() - mean) < Z * math.sqrt(var / n), (sample.mean(), mean)


@pytest.mark.parametrize("mode", MODES[1:], ids=["cvm"])
def test_distributions_statistics(mode: arignote.Mode) -> None:
    n = 20000
    srng = RandomStreams(seed=99)
    outs = [
        srng.uniform(size=(n,), low=-2.0, high=3.0),
        srng.normal(size=(n,), avg=1.5, std=0.5),
        srng.binomial(size=(n,), n=8, p=0.25),
        srng.poisson(size=(n,), lam=4.0),
        srng.random_integers(size=(n,), low=2, high=7),
    ]
    u, g, b, p, k = arignote.function([], outs, mode=mode)()
    bound = KS / math.sqrt(n)
    su = np.sort(u)
    assert ks_statistic(su, (su + 2.0) / 5.0) < bound
    sg = np.sort(g)
    assert ks_statistic(sg, normal_cdf(sg, 1.5, 0.5)) < bound
    check_mean(u, 0.5, 25 / 12)
    check_mean(g, 1.5, 0.25)
    # the sample variance of a normal sample: variance 2 sigma^4 / (n - 1)
    assert abs(g.var(ddof=1) - 0.25) < Z * math.sqrt(2 * 0.5**4 / (n - 1))
    check_mean(b, 2.0, 8 * 0.25 * 0.75)
    check_mean(p, 4.0, 4.0)
    check_mean(k, 4.5, (6**2 - 1) / 12)
    assert b.min() >= 0 and b.max() <= 8 and k.min() >= 2 and k.max() <= 7
    assert set(np.unique(k)) == {2, 3, 4, 5, 6, 7}


# --- updates ---------------------------------------------------------------------------------


@LINKERS
def test_default_updates_and_no_default_updates(mode: arignote.Mode) -> None:
    srng = RandomStreams(seed=234)
    rv_u = srng.uniform((2, 2))
    rv_n = srng.normal((2, 2))
    f = arignote.function([], rv_u, mode=mode)
    g = arignote.function([], rv_n, no_default_updates=True, mode=mode)
    h = arignote.function([], rv_n, no_default_updates=[rv_n.rng], mode=mode)
    nearly_zeros = arignote.function([], rv_u + rv_u - 2 * rv_u, mode=mode)
    ru, rn = stream_rngs(234, 2)
    np.testing.assert_array_equal(f(), ru.uniform(size=(2, 2)))
    np.testing.assert_array_equal(f(), ru.uniform(size=(2, 2)))
    first = rn.normal(size=(2, 2))
    np.testing.assert_array_equal(g(), first)
    np.testing.assert_array_equal(g(), first)  # not updated: the same numbers
    np.testing.assert_array_equal(h(), first)
    # one draw per call, however often the graph uses the variable
    np.testing.assert_array_equal(nearly_zeros(), np.zeros((2, 2)))
    ru.uniform(size=(2, 2))  # what nearly_zeros drew
    np.testing.assert_array_equal(f(), ru.uniform(size=(2, 2)))
    # explicit updates (Theano's `updates=srng.updates()`) are the default ones
    k = arignote.function([], rv_u, updates=srng.updates(), mode=mode)
    np.testing.assert_array_equal(k(), ru.uniform(size=(2, 2)))
    # k's updates advanced rv_n's generator too: g draws the generator's second value
    np.testing.assert_array_equal(g(), rn.normal(size=(2, 2)))


def test_seed_reseeds_every_stream_in_creation_order() -> None:
    srng = RandomStreams(seed=234)
    rv_u = srng.uniform((2, 2))
    rv_n = srng.normal((2, 2))
    f = arignote.function([], [rv_u, rv_n])
    f()
    srng.seed(902340)
    ru, rn = stream_rngs(902340, 2)
    u, n = f()
    np.testing.assert_array_equal(u, ru.uniform(size=(2, 2)))
    np.testing.assert_array_equal(n, rn.normal(size=(2, 2)))
    srng.seed()  # None: the constructor's seed again
    ru, rn = stream_rngs(234, 2)
    np.testing.assert_array_equal(f()[0], ru.uniform(size=(2, 2)))


def test_get_value_and_set_value_round_trip() -> None:
    srng = RandomStreams(seed=11)
    rv = srng.uniform((3,))
    f = arignote.function([], rv)
    (ref,) = stream_rngs(11, 1)
    assert isinstance(rv.rng.get_value(), np.random.RandomState)
    f()
    ref.uniform(size=(3,))
    # get_value: a RandomState in the generator's current state
    state = rv.rng.get_value(borrow=True)
    assert raw_random.random_state_type.values_eq(state, ref)
    np.testing.assert_array_equal(state.uniform(size=(3,)), f())
    # changing the returned object changes the generator once it is set back
    state = rv.rng.get_value(borrow=True)
    state.seed(89234)
    before = rv.rng.get_value()
    assert raw_random.random_state_type.values_eq(before, rv.rng.get_value())
    rv.rng.set_value(state, borrow=True)
    np.testing.assert_array_equal(f(), np.random.RandomState(89234).uniform(size=(3,)))
    # srng[item] and srng[item] = value (Theano's compatibility syntax)
    srng[rv.rng] = np.random.RandomState(3)
    np.testing.assert_array_equal(f(), np.random.RandomState(3).uniform(size=(3,)))
    assert isinstance(srng[rv.rng], np.random.RandomState)
    packed = rv.rng.get_value(return_internal_type=True)
    assert packed.dtype == np.uint32 and packed.shape == (raw_random.STATE_WORDS,)
    # a RandomState with a cached Gaussian keeps it
    gauss = np.random.RandomState(4)
    gauss.standard_normal()
    rv.rng.set_value(gauss)
    assert rv.rng.get_value().standard_normal() == gauss.standard_normal()


def test_shared_of_a_random_state_and_its_errors() -> None:
    source = np.random.RandomState(42)
    r = arignote.shared(source, name="r")
    assert isinstance(r, RandomStateSharedVariable) and r.type is random_state_type
    source.uniform()  # the shared value is a copy
    assert r.get_value().uniform() == np.random.RandomState(42).uniform()
    with pytest.raises(TypeError, match="expected a numpy.random.RandomState, got ndarray"):
        r.set_value(np.zeros(3))
    with pytest.raises(TypeError, match="random state has no zero"):
        r.zero()
    clone = r.clone()
    assert isinstance(clone, RandomStateSharedVariable)
    clone.set_value(np.random.RandomState(1))
    assert random_state_type.values_eq(r.get_value(), np.random.RandomState(1))
    with pytest.raises(TypeError, match="RandomStateType: expected a numpy.random.RandomState"):
        random_state_type.filter(np.zeros(628))
    assert random_state_type.is_valid_value(np.random.RandomState(0))
    assert not random_state_type.is_valid_value(np.zeros(628, np.uint32))


@LINKERS
def test_pickled_function_and_shared_generator_keep_the_state(mode: arignote.Mode) -> None:
    srng = RandomStreams(seed=8)
    rv = srng.normal((2,))
    f = arignote.function([], rv, mode=mode)
    f()
    g = pickle.loads(pickle.dumps(f))
    np.testing.assert_array_equal(g(), f())  # the same state, continued
    r = pickle.loads(pickle.dumps(rv.rng))
    assert isinstance(r, RandomStateSharedVariable)
    assert random_state_type.values_eq(r.get_value(), rv.rng.get_value())


# --- scan --------------------------------------------------------------------------------


def _scan_function(mode: arignote.Mode) -> tuple[arignote.Function, RandomStateSharedVariable]:
    # Theano's loop tutorial: a random variable built outside the step and used in it
    # is drawn at every step, and scan's updates advance its generator
    x_sym, w_sym, b_sym = T.matrix("X"), T.matrix("W"), T.vector("b_sym")
    trng = T.shared_randomstreams.RandomStreams(1234)
    d = trng.binomial(size=w_sym[1].shape)
    results, updates = arignote.scan(lambda v: T.tanh(T.dot(v, w_sym) + b_sym) * d, sequences=x_sym)
    assert list(updates) == [d.rng]
    with warnings.catch_warnings():
        # native code calls back into Python for the draw, but not in a scan's body:
        # such a function runs with the reference interpreter
        warnings.simplefilter("ignore", InterpreterFallbackWarning)
        f = arignote.function([x_sym, w_sym, b_sym], results, updates=updates, mode=mode)
    return f, d.rng


@LINKERS
def test_scan_draws_at_every_step_and_updates_the_generator(mode: arignote.Mode) -> None:
    f, rng = _scan_function(mode)
    x = np.eye(10, 2, dtype=arignote.config.floatX)
    w = np.ones((2, 2), dtype=arignote.config.floatX)
    b = np.ones(2, dtype=arignote.config.floatX)
    (ref,) = stream_rngs(1234, 1)
    masks = np.array([ref.binomial(1, 0.5, (2,)) for _ in range(10)])
    # the tutorial's documented output: rows masked by the ten draws
    assert masks[:4].tolist() == [[1, 0], [0, 1], [0, 0], [1, 1]]
    np.testing.assert_allclose(f(x, w, b), np.tanh(x @ w + b) * masks, rtol=1e-6)
    masks = np.array([ref.binomial(1, 0.5, (2,)) for _ in range(10)])
    np.testing.assert_allclose(f(x, w, b), np.tanh(x @ w + b) * masks, rtol=1e-6)
    assert random_state_type.values_eq(rng.get_value(), ref)


def test_scan_step_drawing_from_a_stream() -> None:
    # a stream drawn inside the step, with the step's updates returned by scan
    srng = RandomStreams(seed=3)

    def step(acc: arignote.Variable) -> arignote.Variable:
        return acc + srng.uniform(size=(2,))

    out, updates = arignote.scan(step, outputs_info=T.zeros((2,)), n_steps=4)
    f = arignote.function([], out, updates=updates, mode=arignote.Mode(linker="py"))
    (ref,) = stream_rngs(3, 1)
    np.testing.assert_allclose(f(), np.cumsum([ref.uniform(size=(2,)) for _ in range(4)], 0))
    np.testing.assert_allclose(f()[0], ref.uniform(size=(2,)))


def test_tutorial_copying_random_state_between_graphs() -> None:
    # Theano's tutorial "Copying Random State Between Theano Graphs" (the RandomStreams
    # part), with its documented outputs
    class Graph:
        def __init__(self, seed: int = 123):
            self.rng = RandomStreams(seed)
            self.y = self.rng.uniform(size=(1,))

    g1, g2 = Graph(seed=123), Graph(seed=987)
    f1, f2 = arignote.function([], g1.y), arignote.function([], g2.y)
    np.testing.assert_allclose(f1(), [0.72803009], rtol=1e-7)
    np.testing.assert_allclose(f2(), [0.55056769], rtol=1e-7)
    for su1, su2 in zip(g1.rng.state_updates, g2.rng.state_updates, strict=True):
        su2[0].set_value(su1[0].get_value())
    np.testing.assert_allclose(f1(), [0.59044123], rtol=1e-7)
    np.testing.assert_allclose(f2(), [0.59044123], rtol=1e-7)


@LINKERS
def test_shuffle_row_elements(mode: arignote.Mode) -> None:
    srng = RandomStreams(seed=6)
    x = T.matrix("x")
    shuffled = srng.shuffle_row_elements(x)
    f = arignote.function([x], [shuffled, shuffled.permutation], mode=mode)
    data = np.arange(12.0, dtype=x.dtype).reshape(3, 4)
    got, perm = f(data)
    (ref,) = stream_rngs(6, 1)
    want = np.stack([ref.permutation(4) for _ in range(3)])
    np.testing.assert_array_equal(perm, want)
    np.testing.assert_array_equal(got, np.take_along_axis(data, want, axis=1))


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(size=(2, "a")), TypeError, "size: each entry must be an integer"),
        (dict(size=(2.5,)), TypeError, "size: each entry must be an integer"),
        (dict(size=(-3,)), ValueError, "size: negative shape -3"),
        (dict(size=(2,), ndim=3), ValueError, "ndim should be equal to len\\(shape\\)"),
        (dict(size=(2,), ndim="x"), TypeError, "ndim must be None or an integer"),
        (dict(size=(2,), dtype="foo"), TypeError, "dtype: 'foo' is not a dtype"),
        (dict(size=T.dvector()), TypeError, "shape must be an integer vector"),
        (dict(size=T.lvector()), ValueError, "known only at run time: give ndim"),
        (dict(size=T.lmatrix()), TypeError, "shape must be a vector"),
        (dict(size=(T.dscalar(),)), TypeError, "size: each entry must be an integer"),
        (dict(size=(2,), low=np.zeros((2, 2))), ValueError, "ndim should be at least"),
    ],
)
def test_bad_arguments_raise_naming_them(kwargs: dict, error: type, match: str) -> None:
    srng = RandomStreams(seed=0)
    with pytest.raises(error, match=match):
        srng.uniform(**kwargs)


@LINKERS
def test_bad_run_time_sizes_raise(mode: arignote.Mode) -> None:
    srng = RandomStreams(seed=0)
    n = T.lscalar("n")
    f = arignote.function([n], srng.normal(size=(n, 2)), mode=mode)
    with pytest.raises(
        ValueError,
        match=r"RandomFunction\{normal\}: size \(-1, 2\) has a "
        "negative dimension",
    ):
        f(-1)
    shape = T.lvector("shape")
    g = arignote.function([shape], srng.uniform(size=shape, ndim=2), mode=mode)
    with pytest.raises(ValueError, match="Shape mismatch"):
        g([2, 3, 4])


def test_draw_needs_a_random_state_and_an_integer_size() -> None:
    with pytest.raises(TypeError, match="first input must be a variable of RandomStateType"):
        raw_random.uniform(arignote.shared(np.zeros(3)), size=(2,))
    op = raw_random.RandomFunction("uniform", T.TensorType("float64", (False,)))
    with pytest.raises(TypeError, match="shape must be an int64 or int32 vector"):
        op(arignote.shared(np.random.RandomState(0)), T.dvector(), 0.0, 1.0)
    with pytest.raises(TypeError, match="You asked for just one permutation"):
        RandomStreams(0).permutation(n=3, ndim=2)


def test_no_gradient_through_a_draw() -> None:
    srng = RandomStreams(seed=0)
    low = T.dscalar("low")
    with pytest.raises(NullTypeGradError, match="No gradient defined through raw random numbers"):
        arignote.grad(srng.uniform(size=(2,), low=low).sum(), low)
