"""The reference interpreter's random-number op, `ag.mrg_uniform` (MRG31k3p, see
`dialects/ag/random.py`), with NumPy: the streams step together, one vectorised step
per round of `n` samples (sample `i` from stream `i mod n`, Theano's order), in `int32`
arithmetic that wraps as the native code's does.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import f32
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls

from arignote.dialects import ag
from arignote.dialects.ag import random
from arignote.runtime.dtypes import numpy_dtype
from arignote.runtime.interpreter import Array, _label, _operands, check_value


def _reduce(y: Array, modulus: int) -> Array:
    return np.where((y < 0) | (y >= modulus), y - np.int32(modulus), y)


def mrg_step(words: Array) -> tuple[Array, Array]:
    """One step of each stream of the `k x 6` `int32` state `words`: the new state and
    the `int32` in `1..M1` each sample is made of."""
    x11, x12, x13, x21, x22, x23 = (words[:, c] for c in range(6))
    with np.errstate(over="ignore"):
        y1 = ((x12 & 511) << 22) + (x12 >> 9) + ((x13 & 16777215) << 7) + (x13 >> 24)
        y1 = _reduce(_reduce(y1, random.M1) + x13, random.M1)
        z1 = _reduce(((x21 & 65535) << 15) + np.int32(21069) * (x21 >> 16), random.M2)
        z2 = _reduce(((x23 & 65535) << 15) + np.int32(21069) * (x23 >> 16), random.M2)
        z2 = _reduce(_reduce(z2 + x23, random.M2) + z1, random.M2)
        value = np.where(y1 <= z2, y1 - z2 + np.int32(random.M1), y1 - z2)
    new = np.stack([y1, x11, x12, z2, x21, x22], axis=1).astype(np.int32)
    return new, value.astype(np.int32)


def to_unit_float(value: Array, dtype: Any) -> Array:
    """Theano's conversion of `1..M1` to samples in (0, 1) (exact times `2**-31` for
    float64; rounded to float32, times the float32 `4.6566126e-10`, for float32)."""
    if np.dtype(dtype) == np.float32:
        return value.astype(np.float32) * np.float32(random.NORM_F32)
    return value.astype(np.float64) * random.NORM_F64


def mrg_draw(rstate: Array, count: int, dtype: Any) -> tuple[Array, Array]:
    """`count` samples of `dtype` from the streams of `rstate` (`n x 6` `int32`) in
    Theano's order, and the new state."""
    state = np.array(rstate, dtype=np.int32, copy=True).reshape(-1, 6)
    n = state.shape[0]
    out = np.empty(count, dtype=dtype)
    for first in range(0, count, max(n, 1)):
        k = min(n, count - first)
        state[:k], value = mrg_step(state[:k])
        out[first : first + k] = to_unit_float(value, dtype)
    return state, out


def check_draw(label: str, rstate: Array, shape: tuple[int, ...]) -> None:
    """The run-time checks of `ag.mrg_uniform` (the native shape rule's)."""
    if any(d < 0 for d in shape):
        raise ValueError(f"{label}: size {shape} has a negative length")
    if rstate.shape[1] != 6:
        raise ValueError(f"{label}: rstate must have 6 columns, got shape {rstate.shape}")
    if rstate.shape[0] == 0:
        raise ValueError(f"{label}: rstate has no stream (shape {rstate.shape})")
    if int(np.prod(shape, dtype=np.int64)) > random.M1:
        raise ValueError(
            f"{label}: rng_mrg does not support more than (2**31 - 1) samples (size {shape})"
        )


def _sample_shape(op: ag.MrgUniformOp | ag.MrgBinomialOp, dynamic: Any) -> tuple[int, ...]:
    lengths = iter(int(v) for v in dynamic)
    return tuple(next(lengths) if e == ag.DYNAMIC_VALUE else e for e in op.shape_list)


def _dtype(t: Any) -> Any:
    return np.float32 if t == f32 else np.float64


@register_impls
class RandomFunctions(InterpreterFunctions):
    """NumPy implementations of `ag.mrg_uniform` and `ag.mrg_binomial`."""

    @impl(ag.MrgBinomialOp)
    def run_mrg_binomial(
        self, interpreter: Interpreter, op: ag.MrgBinomialOp, args: PythonValues
    ) -> PythonValues:
        rstate, p, *dynamic = _operands(op, args)
        shape = _sample_shape(op, dynamic)
        label = _label(op)
        check_draw(label, rstate, shape)
        count = int(np.prod(shape, dtype=np.int64))
        state, flat = mrg_draw(rstate, count, _dtype(op.uniform_type))
        mask = flat.astype(p.dtype) < p
        out_type = ag.tensor_type(op.sample)
        return (
            check_value(label, "result #0", state, op.new_rstate.type),
            check_value(
                label,
                "result #1",
                mask.reshape(shape).astype(numpy_dtype(out_type.element_type)),
                out_type,
            ),
        )

    @impl(ag.MrgUniformOp)
    def run_mrg_uniform(
        self, interpreter: Interpreter, op: ag.MrgUniformOp, args: PythonValues
    ) -> PythonValues:
        rstate, *dynamic = _operands(op, args)
        shape = _sample_shape(op, dynamic)
        label = _label(op)
        check_draw(label, rstate, shape)
        dtype = np.float32 if ag.tensor_type(op.sample).element_type == f32 else np.float64
        state, flat = mrg_draw(rstate, int(np.prod(shape, dtype=np.int64)), dtype)
        return (
            check_value(label, "result #0", state, op.new_rstate.type),
            check_value(label, "result #1", flat.reshape(shape), op.sample.type),
        )
