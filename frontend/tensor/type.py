"""`TensorType`: Theano's tensor type (a dtype and a broadcastable pattern).

A `TensorType` maps one-to-one onto a builtin `tensor` type of the `ag` dialect: a
broadcastable dimension is the static length 1, every other dimension is dynamic (`?`).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import builtin

from arignote.dialects.ag import DYNAMIC
from arignote.runtime.dtypes import element_type, numpy_dtype

if TYPE_CHECKING:
    from arignote.graph import Variable

SUPPORTED_DTYPES = (
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "complex64",
    "complex128",
)
"""The dtypes arignote compiles (Theano's, less `float16`)."""
_SUPPORTED = frozenset(SUPPORTED_DTYPES)


def check_dtype(dtype: Any, what: str = "dtype") -> str:
    """The canonical name of `dtype`; a `TypeError` naming `what` if unsupported."""
    if type(dtype) is str and dtype in _SUPPORTED:  # the common case, checked first
        return dtype
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

_FROM_IR_OBJECT: dict[int, tuple[builtin.Attribute, TensorType]] = {}
"""`from_ir`'s answers by the `id` of the IR type object, which each entry keeps alive:
ops share their result types (`arignote.dialects.ag.tensor_of`), and a lookup by value
hashes the type's parameters, recursively, each time."""

_FROM_IR_OBJECTS = 4096
"""The most IR type objects `_FROM_IR_OBJECT` keeps."""


_NAMED_PATTERNS = {
    (): "scalar",
    (False,): "vector",
    (False, True): "col",
    (True, False): "row",
    (False, False): "matrix",
}


@functools.lru_cache(maxsize=1024)
def _ir_type(dtype: str, broadcastable: tuple[bool, ...]) -> builtin.TensorType:
    """The builtin tensor type of a `TensorType`'s dtype and pattern, made once per pair
    (attributes are immutable; a network's shared variables have a few types)."""
    shape = [1 if b else DYNAMIC for b in broadcastable]
    return builtin.TensorType(element_type(np.dtype(dtype)), shape)


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
        return _ir_type(self.dtype, self.broadcastable)

    @staticmethod
    def from_ir(t: builtin.Attribute) -> TensorType:
        """The Theano type of a builtin tensor type (a static 1 is broadcastable)."""
        seen = _FROM_IR_OBJECT.get(id(t))
        if seen is not None and seen[0] is t:
            return seen[1]
        known = _FROM_IR.get(t)
        if known is None:
            assert isinstance(t, builtin.TensorType)
            dtype = numpy_dtype(t.element_type).name
            known = _FROM_IR[t] = TensorType(dtype, tuple(d == 1 for d in t.get_shape()))
        if len(_FROM_IR_OBJECT) < _FROM_IR_OBJECTS:
            _FROM_IR_OBJECT[id(t)] = (t, known)
        return known  # one object per type, as Theano's: `x.type is T.dscalar`

    def register(self) -> TensorType:
        """Make this (unnamed) type the one `from_ir` gives for its IR type, so that the
        constructors' types are the variables' types (`T.dmatrix("x").type is
        T.dmatrix`, as in Theano). Returns `self`."""
        if self.name is None:
            _FROM_IR.setdefault(self.to_ir(), self)
        return self

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
        """Theano's text: `TensorType(float64, matrix)`; `scalar`, `vector`, `row`, `col`,
        `matrix` by name, `3D`... for other patterns without broadcastable dimensions,
        else the pattern (`(True, False, False)`)."""
        if self.name:
            return self.name
        b = self.broadcastable
        named = _NAMED_PATTERNS.get(b)
        if named is None:
            named = str(b) if any(b) else f"{len(b)}D"
        return f"TensorType({self.dtype}, {named})"

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
    if array.dtype.kind not in "biufc":
        raise TypeError(f"expected numbers convertible to {dtype}, got {value!r}")
    if array.dtype.kind == "c" and dtype.kind != "c" and not allow_downcast:
        raise TypeError(
            f"the value {value!r} is complex and cannot be stored in a {dtype} input; take "
            "its real part or pass allow_input_downcast=True to function()"
        )
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        converted = array.astype(dtype)
    if allow_downcast or np.array_equal(converted, array, equal_nan=array.dtype.kind in "fc"):
        return converted
    raise TypeError(
        f"the value {value!r} cannot be converted to {dtype} exactly; cast it or "
        "pass allow_input_downcast=True to function()"
    )


# --- Theano's upcast table (issue 13 item 2) --------------------------------------------
#
# Theano's `scalar.upcast` adds zero-d NumPy arrays of the dtypes, so its table is NumPy's
# array promotion (not the value-based rules for Python scalars; those are
# `arignote.tensor.basic._python_scalar_dtype`). Transcribed as rules on (kind, size):
# bool < unsigned < signed < float < complex.

_KIND_ORDER = {"b": 0, "u": 1, "i": 2, "f": 3, "c": 4}


def _float_holding(dtype: np.dtype) -> int:
    """The size in bytes of the smallest float that holds every value of `dtype` (an
    integer of 8 or 16 bits fits float32; wider integers need float64)."""
    if dtype.kind in "ui":
        return 4 if dtype.itemsize <= 2 else 8
    if dtype.kind == "c":
        return dtype.itemsize // 2
    return dtype.itemsize


def _upcast_pair(a: np.dtype, b: np.dtype) -> np.dtype:
    if _KIND_ORDER[a.kind] > _KIND_ORDER[b.kind]:
        a, b = b, a
    if a == b or a.kind == "b":
        return b
    if a.kind == b.kind:
        return a if a.itemsize > b.itemsize else b
    if (a.kind, b.kind) == ("u", "i"):
        if b.itemsize > a.itemsize:
            return b
        return np.dtype(f"i{2 * a.itemsize}") if a.itemsize < 8 else np.dtype("float64")
    size = max(_float_holding(a), _float_holding(b))
    return np.dtype(f"c{2 * size}") if b.kind == "c" else np.dtype(f"f{size}")


def upcast_dtypes(dtype: Any, *dtypes: Any) -> str:
    """The dtype of an elementwise operation on tensors of these dtypes: Theano's
    `upcast` table (`uint8` with `int8` gives `int16`, `uint64` with any signed integer
    `float64`, `int32` with `float32` `float64`, `complex64` with `float64`
    `complex128`)."""
    return _upcast_names(check_dtype(dtype, "upcast"), *(check_dtype(d, "upcast") for d in dtypes))


@functools.cache
def _upcast_names(*names: str) -> str:
    result = np.dtype(names[0])
    for other in names[1:]:
        result = _upcast_pair(result, np.dtype(other))
    return result.name
