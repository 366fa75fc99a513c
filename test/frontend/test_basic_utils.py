"""Theano's graph-reading helpers and small compositions of `theano.tensor.basic`
(`get_scalar_constant_value`, `extract_constant`, `get_vector_length`,
`tensor_from_scalar`/`scalar_from_tensor`, `tensor_copy`, `transfer`, `cov`)."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as T
import arignote.tensor.basic as B

BACKENDS = ["py", "cvm"]


def test_get_scalar_constant_value_and_extract_constant() -> None:
    assert B.get_scalar_constant_value(T.constant(3.5)) == 3.5
    assert B.get_scalar_constant_value(np.array([[7]])) == 7
    x = T.dscalar("x")
    with pytest.raises(B.NotScalarConstantError, match="not a constant scalar"):
        B.get_scalar_constant_value(x)
    with pytest.raises(TypeError):  # Theano's error is a TypeError
        B.get_scalar_constant_value(T.constant([1.0, 2.0]))
    assert B.extract_constant(x) is x
    assert B.extract_constant(T.constant(2)) == 2
    assert B.extract_constant(np.ones(3)).ndim == 1


def test_get_vector_length() -> None:
    assert B.get_vector_length(T.constant([1, 2, 3])) == 3
    assert B.get_vector_length(T.tensor3().shape) == 3
    with pytest.raises(ValueError, match="length not known"):
        B.get_vector_length(T.dvector("v"))
    with pytest.raises(TypeError, match="must be a vector"):
        B.get_vector_length(T.dmatrix("m"))


def test_scalar_tensor_conversions_and_transfer() -> None:
    s = T.dscalar("s")
    assert B.tensor_from_scalar(s) is s and B.scalar_from_tensor(s) is s
    with pytest.raises(TypeError, match="0-d"):
        B.scalar_from_tensor(T.dvector())
    assert B.transfer(s, "cpu") is s
    on_gpu = B.transfer(s, "gpu")
    assert on_gpu.value is s.value and on_gpu.transfer_target == "gpu"
    assert s.transfer("dev0").transfer_target == "gpu"
    with pytest.raises(ValueError, match="known targets: 'cpu', 'gpu'"):
        B.transfer(s, "tpu")


@pytest.mark.parametrize("backend", BACKENDS)
def test_tensor_copy_and_cov_as_numpy(backend: str) -> None:
    m, y = T.dmatrices("m", "y")
    fw, aw = T.lvector("fw"), T.dvector("aw")
    outputs = [
        B.tensor_copy(m),
        T.cov(m),
        T.cov(m, rowvar=False),
        T.cov(m, y, bias=True),
        T.cov(m, ddof=0),
        T.cov(m, fweights=fw, aweights=aw),
    ]
    f = arignote.function([m, y, fw, aw], outputs, mode=arignote.Mode(linker=backend))
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 5)), rng.standard_normal((2, 5))
    weights, obs = np.array([1, 2, 1, 3, 1]), rng.uniform(0.5, 2, 5)
    got = f(a, b, weights, obs)
    expected = [
        a,
        np.cov(a),
        np.cov(a, rowvar=False),
        np.cov(a, b, bias=True),
        np.cov(a, ddof=0),
        np.cov(a, fweights=weights, aweights=obs),
    ]
    for g, e in zip(got, expected, strict=True):
        # sums of a few products of O(1) values: a few ulps of the largest term
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="m must be 2-d"):
        T.cov(T.dvector())
