"""Element-type categories, shape rules and verifier helpers shared by the `ag` ops."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    UNKNOWN_LOC,
    ComplexType,
    DenseArrayBase,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.core import BlockArgument, OpResult, SSAValues, Use
from xdsl.irdl import (
    AttrSizedSegments,
    IRDLOperation,
    OperandDef,
    ResultDef,
    SameVariadicSize,
)
from xdsl.utils.exceptions import VerifyException

DYNAMIC = DYNAMIC_INDEX
"""The value of a dynamic (`?`) dimension in a static shape."""

NEWAXIS = -1
"""In a `dimshuffle` pattern, a new broadcastable (length-1) dimension."""

Shape = tuple[int, ...]


# --- element-type categories -----------------------------------------------------------


def is_float(t: Attribute) -> bool:
    return isinstance(t, Float32Type | Float64Type)


def is_bool(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.width.data == 1


def is_int(t: Attribute) -> bool:
    """An integer type other than bool: signless (signed) `i8`..`i64` or unsigned
    `ui8`..`ui64` (see `is_unsigned`)."""
    return (
        isinstance(t, IntegerType)
        and t.width.data in (8, 16, 32, 64)
        and t.signedness.data != Signedness.SIGNED
    )


def is_unsigned(t: Attribute) -> bool:
    """An unsigned integer type `ui8`..`ui64` (NumPy's `uint8`..`uint64`)."""
    return is_int(t) and isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED


def is_complex(t: Attribute) -> bool:
    """`complex<f32>` or `complex<f64>` (NumPy's `complex64`, `complex128`)."""
    return isinstance(t, ComplexType) and is_float(t.element_type)


def is_supported_element(t: Attribute) -> bool:
    return is_float(t) or is_bool(t) or is_int(t) or is_complex(t)


_CATEGORY_TESTS = {
    "float": is_float,
    "numeric": lambda t: is_float(t) or is_int(t),
    "arith": lambda t: is_float(t) or is_int(t) or is_complex(t),
    "inexact": lambda t: is_float(t) or is_complex(t),
    "integer": lambda t: is_int(t) or is_bool(t),
    "real": lambda t: is_float(t) or is_int(t) or is_bool(t),
    "complex": is_complex,
}


def _category_ok(t: Attribute, category: str) -> bool:
    return _CATEGORY_TESTS.get(category, is_supported_element)(t)


_CATEGORY_NAMES = {
    "float": "a float element type (f32, f64)",
    "numeric": "a real numeric element type (f32, f64, i8..i64, ui8..ui64)",
    "arith": "a numeric element type (f32, f64, i8..i64, ui8..ui64, complex<f32>, complex<f64>)",
    "inexact": "a float or complex element type (f32, f64, complex<f32>, complex<f64>)",
    "integer": "an integer or bool element type (i1, i8..i64, ui8..ui64)",
    "real": "a non-complex element type (f32, f64, i1, i8..i64, ui8..ui64)",
    "complex": "a complex element type (complex<f32>, complex<f64>)",
    "any": "a supported element type (f32, f64, i1, i8..i64, ui8..ui64, complex<f32>, "
    "complex<f64>)",
}


# --- shape rules -----------------------------------------------------------------------


def _dim_str(d: int) -> str:
    return "?" if d == DYNAMIC else str(d)


def shape_str(shape: Sequence[int]) -> str:
    return "x".join(_dim_str(d) for d in shape) or "scalar"


def broadcast_dim(a: int, b: int) -> int | None:
    """The static result of broadcasting two dimensions; None when they conflict."""
    if a == 1:
        return b
    if b == 1 or a == b:
        return a
    if a == DYNAMIC:
        return b
    if b == DYNAMIC:
        return a
    return None


def broadcast_shapes(*shapes: Sequence[int]) -> Shape | None:
    """NumPy broadcasting of static shapes (right-aligned); None when incompatible."""
    rank = max((len(s) for s in shapes), default=0)
    result = [1] * rank
    for shape in shapes:
        padded = (1,) * (rank - len(shape)) + tuple(shape)
        for axis, dim in enumerate(padded):
            merged = broadcast_dim(result[axis], dim)
            if merged is None:
                return None
            result[axis] = merged
    return tuple(result)


def tensor_of(element: Attribute, shape: Iterable[int]) -> TensorType[Attribute]:
    """The tensor type of `element`s with the static `shape`: `TensorType(element, shape)`,
    built (and verified) once per distinct type among the last few thousand asked for.
    Attributes are immutable, so ops may share one; building graphs makes the same few
    types thousands of times."""
    return _tensor_of(element, tuple(shape))


@lru_cache(maxsize=4096)  # (bounded: constants bring a shape each)
def _tensor_of(element: Attribute, shape: Shape) -> TensorType[Attribute]:
    return TensorType(element, shape)


def i64_array(values: Iterable[int]) -> DenseArrayBase:
    """The `i64` dense array of `values` (axes, patterns, index entries), built once per
    distinct array among the last few thousand asked for (attributes are immutable)."""
    return _i64_array(tuple([int(v) for v in values]))


@lru_cache(maxsize=4096)
def _i64_array(values: tuple[int, ...]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


def tensor_type(value: SSAValue) -> TensorType[Attribute]:
    t = value.type
    if not isinstance(t, TensorType):
        raise VerifyException(f"expected a tensor type, got {t}")
    return t


def value_shape(value: SSAValue) -> Shape:
    """The static shape of the tensor `value` (`DYNAMIC` for a `?` dimension)."""
    return tuple(tensor_type(value).get_shape())


def _check_tensor(op: Operation, what: str, t: Attribute, category: str) -> TensorType:
    if not isinstance(t, TensorType):
        raise VerifyException(f"'{op.name}' op {what} must be a ranked tensor, got {t}")
    if any(d < 0 and d != DYNAMIC for d in t.get_shape()):
        raise VerifyException(f"'{op.name}' op {what} has a negative dimension: {t}")
    if not _category_ok(t.element_type, category):
        raise VerifyException(
            f"'{op.name}' op {what} must have {_CATEGORY_NAMES[category]}, got {t}"
        )
    return t


def _expect_result(op: Operation, expected: Attribute, got: Attribute) -> None:
    if expected != got:
        raise VerifyException(
            f"'{op.name}' op result type {got} does not match the inferred type {expected}"
        )


def _verify_with_value_error(op: Operation, fn: Callable[[], Shape]) -> Shape:
    try:
        return fn()
    except ValueError as e:
        raise VerifyException(f"'{op.name}' op {str(e).split(': ', 1)[1]}") from e


# --- building ops ---------------------------------------------------------------------


class AgOperation(IRDLOperation):
    """The base of the `ag` ops. An op whose definition has only single operands and
    results (none variadic or optional) and no regions, successors or segment options is
    built without `irdl_op_init`'s generic handling of the arguments, which took two
    thirds of building such an op (and building graphs builds thousands): the operands
    and result types are checked for their count only, as that handling checks them;
    any other call (a count that does not match, a nested list, regions) goes through
    it, with its errors."""

    def __init__(
        self,
        *,
        operands: Sequence[Any] | None = None,
        result_types: Sequence[Any] | None = None,
        properties: Mapping[str, Attribute | None] | None = None,
        attributes: Mapping[str, Attribute | None] | None = None,
        successors: Sequence[Any] | None = None,
        regions: Sequence[Any] | None = None,
    ):
        counts = _fixed_counts(type(self))
        if (
            counts is not None
            and not successors
            and not regions
            and len(operands or ()) == counts[0]
            and len(result_types or ()) == counts[1]
        ):
            values = list(operands or ())
            if not all(type(v) in _VALUE_CLASSES for v in values):
                values = [SSAValue.get(o) if isinstance(o, Operation) else o for o in values]
                plain = all(isinstance(v, SSAValue) for v in values)
            else:
                plain = True  # (SSA values: no `isinstance` against the abstract class)
            types = list(result_types or ())
            if plain and all(type(t) is TensorType or isinstance(t, Attribute) for t in types):
                init_fields(self, values, types, _present(properties), _present(attributes))
                return
        IRDLOperation.__init__(
            self,
            operands=operands,
            result_types=result_types,
            properties=properties,
            attributes=attributes,
            successors=successors,
            regions=regions,
        )


_VALUE_CLASSES = (OpResult, BlockArgument)
"""The SSA value classes, checked by identity first (an `isinstance` against xDSL's
abstract `SSAValue` goes through `abc`)."""


def ssa_value(arg: SSAValue | Operation) -> SSAValue:
    """`SSAValue.get(arg)`, without its checks against the abstract classes for what is
    already an op result or a block argument (the operands of nearly every op built)."""
    return arg if type(arg) in _VALUE_CLASSES else SSAValue.get(arg)


def init_fields(
    op: Operation,
    operands: list[SSAValue],
    result_types: list[Attribute],
    properties: dict[str, Attribute],
    attributes: dict[str, Attribute],
) -> None:
    """What `Operation.__init__` sets for an op without successors or regions, set
    directly: the operands with their uses, the results, the properties and attributes
    (dicts of this op's own), the unknown location, no successors or regions. The block
    links (`parent`, `_prev_op`, `_next_op`) keep their class defaults, None, as there.
    A third of that `__init__`'s time was its generic handling of successors and
    regions, which these ops do not have."""
    uses = tuple([Use(op, index) for index in range(len(operands))])
    for value, use in zip(operands, uses, strict=True):
        value.add_use(use)
    op._operands = SSAValues(operands)
    op._operand_uses = uses
    op.results = SSAValues([OpResult(t, op, index) for index, t in enumerate(result_types)])
    op.properties = properties
    op.attributes = attributes
    op.location = UNKNOWN_LOC
    op._successors = ()
    op._successor_uses = ()
    op.regions = ()


def _present(attrs: Mapping[str, Attribute | None] | None) -> dict[str, Attribute]:
    return {} if not attrs else {k: v for k, v in attrs.items() if v is not None}


_FIXED_COUNTS: dict[type[Operation], tuple[int, int] | None] = {}


def _fixed_counts(cls: type[IRDLOperation]) -> tuple[int, int] | None:
    """(operands, results) of an op class of single operands and results only, no
    regions, successors or segment-size options; None for any other."""
    try:
        return _FIXED_COUNTS[cls]
    except KeyError:
        pass
    op_def = cls.get_irdl_definition()
    fixed = (
        all(type(d) is OperandDef for _, d in op_def.operands)
        and all(type(d) is ResultDef for _, d in op_def.results)
        and not op_def.regions
        and not op_def.successors
        and not any(isinstance(o, AttrSizedSegments | SameVariadicSize) for o in op_def.options)
    )
    counts = (len(op_def.operands), len(op_def.results)) if fixed else None
    _FIXED_COUNTS[cls] = counts
    return counts
