"""Constant folding (`canonicalize`'s `ConstantFold`): the scalar folds of most graphs
are computed with NumPy directly (`_scalar`), as the reference interpreter computes them,
and a first compile that folds only such constants does not import the interpreter."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import arignote.tensor as T
from arignote.dialects import ag
from arignote.lowering.graph import canonicalize

VALUES = [0.0, -0.0, 1.5, -3.25, 1e-310, 3e38, -3e38, 1e308, np.inf, -np.inf, np.nan]


def _op(variable):
    return variable.value.owner


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["add", "sub", "mul", "truediv"])
def test_scalar_binary_folds_are_the_interpreters(dtype, name):
    for a in VALUES:
        for b in VALUES:
            with np.errstate(over="ignore"):  # (1e308 and 3e38 as float32: infinite)
                x, y = np.asarray(a, dtype), np.asarray(b, dtype)
            op = _op(getattr(T.constant(x), f"__{name}__")(T.constant(y)))
            assert type(op) in canonicalize._SCALAR_BINARY
            fast = canonicalize._scalar(op, [x, y])
            want = canonicalize._interpreted(op, [x, y])
            assert fast is not None and want is not None
            assert fast.dtype == want.dtype == np.dtype(dtype) and fast.shape == want.shape
            np.testing.assert_array_equal(fast, want)  # (NaN equals NaN here)


def test_scalar_dimshuffles_are_the_interpreters():
    x = np.asarray(2.5, "float32")
    for pattern in [("x",), ("x", "x"), ("x", "x", "x")]:
        op = _op(T.constant(x).dimshuffle(*pattern))
        assert isinstance(op, ag.DimShuffleOp)
        fast, want = canonicalize._scalar(op, [x]), canonicalize._interpreted(op, [x])
        assert fast is not None and want is not None
        assert fast.shape == want.shape and fast.dtype == want.dtype
        np.testing.assert_array_equal(fast, want)


def test_other_folds_go_to_the_interpreter():
    ints = np.asarray(7, "int32"), np.asarray(2, "int32")
    op = _op(T.constant(ints[0]) * T.constant(ints[1]))
    assert canonicalize._scalar(op, list(ints)) is None  # (integers: not `_scalar`'s)
    assert canonicalize._evaluate(op, list(ints)) == 14
    vector = np.arange(3.0)
    op = _op(T.constant(vector) + T.constant(vector))
    assert canonicalize._scalar(op, [vector, vector]) is None
    np.testing.assert_array_equal(canonicalize._evaluate(op, [vector, vector]), 2 * vector)
    op = _op(T.constant(vector).dimshuffle("x", 0))
    assert canonicalize._scalar(op, [vector]) is None


def test_a_compile_folding_scalars_imports_no_interpreter():
    """The README's kind of graph (`L2 * (w**2).sum()`, whose gradient folds `2 * L2`):
    folded, and computed as without the fold, in a new process that never imports the
    interpreter."""
    code = (
        "import sys, numpy as np, arignote, arignote.tensor as T\n"
        "x = T.fvector('x')\n"
        "w = arignote.shared(np.arange(3, dtype='float32'), name='w')\n"
        "cost = (x * w).sum() + np.float32(0.01) * (w ** 2).sum()\n"
        "g = arignote.grad(cost, w)\n"
        "f = arignote.function([x], g)\n"
        "print(f(np.ones(3, 'float32')).tolist())\n"
        "print('xdsl.interpreter' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    got, imported = out.stdout.split("\n")[:2]
    np.testing.assert_allclose(eval(got), 1 + 0.02 * np.arange(3), rtol=1e-6)
    assert imported == "False", out.stdout
