"""`arignote.scalar` (Theano's `theano.scalar` basics: scalar types, constants, ops)."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as T


@pytest.mark.parametrize("linker", ["py", "cvm"])
def test_scalar_types_make_0d_variables(linker: str) -> None:
    from arignote import scalar

    x, y = scalar.float64("x"), scalar.float64("y")
    i = scalar.int32("i")
    assert x.ndim == 0 and x.dtype == "float64" and i.dtype == "int32"
    assert scalar.float64 == T.dscalar().type and x.type == scalar.get_scalar_type("float64")
    assert scalar.get_scalar_type("int32") is scalar.int32
    assert (str(scalar.int32), repr(scalar.float32)) == ("int32", "Scalar(float32)")
    assert scalar.Scalar("int64") == scalar.int64
    out = scalar.add(x, scalar.mul(y, scalar.constant(2.0)))
    f = arignote.function([x, y, i], [out, scalar.exp(x), i * 3], mode=arignote.Mode(linker=linker))
    total, e, k = f(1.0, 3.0, 4)
    assert total == 7.0 and k == 12
    np.testing.assert_allclose(e, np.exp(1.0), rtol=1e-15)


def test_constants_upcast_and_errors() -> None:
    from arignote import scalar

    assert scalar.constant(3).dtype == "int8"
    assert scalar.constant(2.5).dtype == arignote.config.floatX
    assert scalar.constant(2.5, dtype="float32").type == scalar.float32
    assert scalar.upcast("int8", "float32") == "float32"
    assert scalar.upcast("int32", "int64", "bool") == "int64"
    assert scalar.as_scalar(1.5).ndim == 0
    assert set(scalar.float_types) <= set(scalar.all_types)
    with pytest.raises(TypeError, match="scalar.constant: expected a single number"):
        scalar.constant([1.0, 2.0])
    with pytest.raises(TypeError, match="as_scalar: expected a scalar"):
        scalar.as_scalar(T.dvector("v"))
    with pytest.raises(TypeError, match="Scalar: dtype 'float16' is not supported"):
        scalar.Scalar("float16")
    assert arignote.scalar is scalar
