"""The mapping between `ag` element types and NumPy dtypes.

`ag` tensors hold `f32`, `f64`, `i1` (bool), signed `i8`..`i64`, unsigned `ui8`..`ui64`
or `complex<f32>`/`complex<f64>` elements (see `arignote.dialects.ag`); at run time they
are NumPy arrays of the matching dtype. The interpreter, the native runtime and the
frontend all convert through this one table.
"""

from __future__ import annotations

from functools import lru_cache
from math import prod

import numpy as np
from numpy.typing import DTypeLike
from xdsl.dialects.builtin import (
    BytesAttr,
    ComplexType,
    DenseIntOrFPElementsAttr,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute

from arignote.dialects.ag.base import tensor_of

_PAIRS: tuple[tuple[Attribute, np.dtype], ...] = (
    (Float32Type(), np.dtype(np.float32)),
    (Float64Type(), np.dtype(np.float64)),
    (IntegerType(1), np.dtype(np.bool_)),
    (IntegerType(8), np.dtype(np.int8)),
    (IntegerType(16), np.dtype(np.int16)),
    (IntegerType(32), np.dtype(np.int32)),
    (IntegerType(64), np.dtype(np.int64)),
    (IntegerType(8, Signedness.UNSIGNED), np.dtype(np.uint8)),
    (IntegerType(16, Signedness.UNSIGNED), np.dtype(np.uint16)),
    (IntegerType(32, Signedness.UNSIGNED), np.dtype(np.uint32)),
    (IntegerType(64, Signedness.UNSIGNED), np.dtype(np.uint64)),
    (ComplexType(Float32Type()), np.dtype(np.complex64)),
    (ComplexType(Float64Type()), np.dtype(np.complex128)),
)
_TO_NUMPY: dict[Attribute, np.dtype] = dict(_PAIRS)
_TO_ELEMENT: dict[np.dtype, Attribute] = {d: t for t, d in _PAIRS}

SUPPORTED_DTYPES: tuple[np.dtype, ...] = tuple(d for _, d in _PAIRS)
"""The NumPy dtypes an `ag` tensor can have, in the order f32, f64, i1, i8..i64, ui8..ui64,
complex<f32>, complex<f64>."""


def numpy_dtype(element_type: Attribute) -> np.dtype:
    """The NumPy dtype of a tensor with `element_type` (TypeError if unsupported)."""
    dtype = _TO_NUMPY.get(element_type)
    if dtype is None:
        raise TypeError(
            f"element type {element_type} has no NumPy dtype in arignote; "
            "expected one of f32, f64, i1, i8, i16, i32, i64, ui8, ui16, ui32, ui64, "
            "complex<f32>, complex<f64>"
        )
    return dtype


def element_type(dtype: DTypeLike) -> Attribute:
    """The `ag` element type of NumPy arrays of `dtype` (TypeError if unsupported)."""
    # The element type does not depend on byte order; the array's memory does, and
    # callers convert arrays to native order before they reach the runtime.
    key = np.dtype(dtype).newbyteorder("=")
    t = _TO_ELEMENT.get(key)
    if t is None:
        names = ", ".join(str(d) for d in SUPPORTED_DTYPES)
        raise TypeError(f"dtype {key} has no ag element type; expected one of {names}")
    return t


def constant_array(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """The values of a dense elements attribute as an array of its tensor type."""
    t = attr.type
    assert isinstance(t, TensorType)
    dtype = numpy_dtype(t.element_type)
    shape = t.get_shape()
    # xDSL stores elements little-endian, i1 as one byte each (0 or 0xff).
    raw = np.dtype(np.uint8) if dtype == np.bool_ else dtype.newbyteorder("<")
    flat = np.frombuffer(attr.data.data, dtype=raw)
    values = flat != 0 if dtype == np.bool_ else flat.astype(dtype)
    if values.size == 1 and prod(shape) != 1:
        values = np.full(shape, values[0], dtype=dtype)
    return values.reshape(shape)


def dense_attr(array: np.ndarray) -> DenseIntOrFPElementsAttr:
    """A dense elements attribute of a static tensor type holding `array`'s values (one
    attribute per distinct scalar among the last few thousand asked for: attributes are
    immutable, and graphs bring the same few scalar constants many times)."""
    if array.ndim == 0:
        return _scalar_attr(array.dtype.str, array.tobytes())
    return _dense_attr(array)


@lru_cache(maxsize=4096)
def _scalar_attr(dtype: str, data: bytes) -> DenseIntOrFPElementsAttr:
    return _dense_attr(np.frombuffer(data, dtype=dtype).reshape(()))


def _dense_attr(array: np.ndarray) -> DenseIntOrFPElementsAttr:
    t = tensor_of(element_type(array.dtype), array.shape)
    if array.dtype == np.bool_:
        data = np.where(array, np.uint8(0xFF), np.uint8(0)).tobytes()
    else:
        data = np.asarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()
    return DenseIntOrFPElementsAttr(t, BytesAttr(data))


class IndexOutOfBoundsError(IndexError, ValueError):
    """A run-time index out of range (`ag.subtensor`, `ag.advanced_subtensor`, ...): an
    IndexError as in NumPy, and a ValueError like every other run-time shape error."""
