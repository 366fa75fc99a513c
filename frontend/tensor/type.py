"""`TensorType`: Theano's tensor type (a dtype and a broadcastable pattern).

A `TensorType` maps one-to-one onto a builtin `tensor` type of the `ag` dialect: a
broadcastable dimension is the static length 1, every other dimension is dynamic (`?`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import builtin

from arignote.dialects.ag import DYNAMIC
from arignote.runtime.dtypes import element_type, numpy_dtype

if TYPE_CHECKING:
    from arignote.graph import Variable

SUPPORTED_DTYPES = ("bool", "int8", "int16", "int32", "int64", "float32", "float64")
"""The dtypes arignote compiles."""


def check_dtype(dtype: Any, what: str = "dtype") -> str:
    """The canonical name of `dtype`; a `TypeError` naming `what` if unsupported."""
    if dtype == "floatX":
        from arignote.configuration import config

        dtype = config.floatX
    try:
        name = np.dtype(dtype).name
    except TypeError as e:
        raise TypeError(
            f"{what}: {dtype!r} is not a dtype; expected one of {', '.join(SUPPORTED_DTYPES)}"
        ) from e
    if name not in SUPPORTED_DTYPES:
        raise TypeError(
            f"{what}: dtype {name!r} is not supported; expected one of "
            f"{', '.join(SUPPORTED_DTYPES)}"
        )
    return name


_FROM_IR: dict[builtin.Attribute, TensorType] = {}
"""`TensorType.from_ir`'s answers (the checks of `TensorType()` run once per IR type)."""


class TensorType:
    """The type of a symbolic tensor: a dtype and one bool per dimension, `True` where
    the dimension has length 1 and broadcasts.

    Calling a type makes a new input variable of that type:

    >>> mytype = TensorType("float64", broadcastable=())
    >>> v = mytype("v")
    """

    def __init__(
        self,
        dtype: Any,
        broadcastable: Sequence[bool] = (),
        name: str | None = None,
        shape: Sequence[int | None] | None = None,
    ):
        self.dtype = check_dtype(dtype)
        if shape is not None:
            broadcastable = tuple(s == 1 for s in shape)
        if isinstance(broadcastable, str | bytes) or not all(
            isinstance(b, bool | np.bool_) for b in broadcastable
        ):
            raise TypeError(f"broadcastable: expected a tuple of bools, got {broadcastable!r}")
        self.broadcastable = tuple(bool(b) for b in broadcastable)
        self.name = name

    @property
    def ndim(self) -> int:
        return len(self.broadcastable)

    @property
    def numpy_dtype(self) -> np.dtype:
        return np.dtype(self.dtype)

    def to_ir(self) -> builtin.TensorType:
        """The builtin tensor type of this type."""
        shape = [1 if b else DYNAMIC for b in self.broadcastable]
        return builtin.TensorType(element_type(self.numpy_dtype), shape)

    @staticmethod
    def from_ir(t: builtin.Attribute) -> TensorType:
        """The Theano type of a builtin tensor type (a static 1 is broadcastable)."""
        known = _FROM_IR.get(t)
        if known is None:
            assert isinstance(t, builtin.TensorType)
            dtype = numpy_dtype(t.element_type).name
            known = _FROM_IR[t] = TensorType(dtype, tuple(d == 1 for d in t.get_shape()))
        new = TensorType.__new__(TensorType)  # a fresh object: a type's name may be set
        new.__dict__.update(known.__dict__)
        return new

    def __call__(self, name: str | None = None) -> Variable:
        from arignote.graph import make_input

        return make_input(self, name)

    def make_variable(self, name: str | None = None) -> Variable:
        return self(name)

    def filter(self, value: Any, allow_downcast: bool | None = None) -> np.ndarray:
        """`value` as an ndarray of this type, or a `TypeError` saying what is wrong.

        An ndarray of another dtype is accepted when the conversion is a safe upcast;
        a Python number or list when it converts exactly; anything else only with
        `allow_downcast=True`.
        """
        # Fast path: an ndarray of exactly this dtype and rank (checked once per type,
        # keyed on the identity of `dtype` and `broadcastable`).
        fast = self.__dict__.get("_filter_fast")
        if fast is None or fast[0] is not self.dtype or fast[1] is not self.broadcastable:
            axes = tuple(a for a, b in enumerate(self.broadcastable) if b)
            fast = (self.dtype, self.broadcastable, np.dtype(self.dtype), self.ndim, axes)
            self.__dict__["_filter_fast"] = fast
        if type(value) is np.ndarray and value.dtype == fast[2] and value.ndim == fast[3]:
            shape = value.shape
            for axis in fast[4]:
                if shape[axis] != 1:
                    break
            else:
                return value
        array = _convert_dtype(value, fast[2], allow_downcast)
        if array.ndim != self.ndim:
            raise TypeError(
                f"wrong number of dimensions: expected {self.ndim}, got "
                f"{array.ndim} with shape {array.shape}"
            )
        for axis, b in enumerate(self.broadcastable):
            if b and array.shape[axis] != 1:
                raise TypeError(
                    f"the broadcastable pattern of the input is incorrect: "
                    f"expected {self.broadcastable}, got shape {array.shape} "
                    f"(dimension {axis} must have length 1)"
                )
        return array

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, TensorType)
            and self.dtype == other.dtype
            and self.broadcastable == other.broadcastable
        )

    def __hash__(self) -> int:
        return hash((self.dtype, self.broadcastable))

    def __str__(self) -> str:
        if self.name:
            return self.name
        pattern = ", ".join("1" if b else "?" for b in self.broadcastable)
        return f"TensorType({self.dtype}, ({pattern}{',' if self.ndim == 1 else ''}))"

    __repr__ = __str__


def _convert_dtype(value: Any, dtype: np.dtype, allow_downcast: bool | None) -> np.ndarray:
    if isinstance(value, np.ndarray) and value.dtype == dtype:
        return value
    if isinstance(value, np.ndarray | np.generic):
        array = np.asarray(value)
        if allow_downcast or np.can_cast(array.dtype, dtype, "safe"):
            return array.astype(dtype)
        raise TypeError(
            f"cannot store a value of dtype {array.dtype} in a {dtype} input "
            "without risking loss of precision; cast the data or pass "
            "allow_input_downcast=True to function()"
        )
    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as e:
        raise TypeError(
            f"expected an array-like of {dtype}, got {type(value).__name__}: {e}"
        ) from e
    if array.dtype.kind not in "biuf":
        raise TypeError(f"expected numbers convertible to {dtype}, got {value!r}")
    with np.errstate(all="ignore"):
        converted = array.astype(dtype)
    if allow_downcast or np.array_equal(converted, array, equal_nan=array.dtype.kind == "f"):
        return converted
    raise TypeError(
        f"the value {value!r} cannot be converted to {dtype} exactly; cast it or "
        "pass allow_input_downcast=True to function()"
    )
