"""Indexing, reshaping, joining and allocation."""

from __future__ import annotations

import abc
import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    IntegerAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from arignote.dialects.ag.base import (
    DYNAMIC,
    AgOperation,
    Shape,
    _check_tensor,
    _expect_result,
    _verify_with_value_error,
    broadcast_shapes,
    i64_array,
    is_int,
    shape_str,
    tensor_of,
    tensor_type,
)

# --- indexing, reshaping, joining and allocation ---------------------------------------
#
# Ops whose result shape depends on run-time *values* (slice bounds, indices, shapes)
# take those values as 0-d `i64` operands, as MLIR's `tensor.extract_slice` takes its
# dynamic offsets: a static integer array property holds every entry, and the entries
# equal to `DYNAMIC_VALUE` are read, in order, from the variadic `dynamic` operands.

DYNAMIC_VALUE = -(2**63)
"""In `ag.subtensor`/`ag.reshape`/`ag.alloc` entries: the value of the next dynamic
operand (MLIR's `kDynamic`)."""

SLICE_NONE = -(2**63) + 1
"""In `ag.subtensor` slice bounds and steps: absent (Python's `None`)."""

SLICE, INDEX = 0, 1
"""`ag.subtensor` entry kinds: a slice keeps its axis, an integer index drops it."""


def _entry_str(v: int) -> str:
    return "?" if v == DYNAMIC_VALUE else "" if v == SLICE_NONE else str(v)


def _array_values(op: Operation, name: str) -> tuple[int, ...]:
    attr = op.properties[name]
    if not isinstance(attr, DenseArrayBase) or attr.elt_type != i64:
        raise VerifyException(f"'{op.name}' op {name} must be an i64 array")
    return tuple(int(v) for v in attr.get_values())


def _check_dynamic_operands(op: Operation, what: str, dynamic: Sequence[SSAValue]) -> None:
    for i, v in enumerate(dynamic):
        t = v.type
        if not (isinstance(t, TensorType) and t.get_num_dims() == 0 and t.element_type == i64):
            raise VerifyException(
                f"'{op.name}' op dynamic {what} #{i} must be a 0-d tensor<i64>, got {t}"
            )


def _check_int_tensor(op: Operation, what: str, t: Attribute) -> TensorType:
    if not isinstance(t, TensorType) or not is_int(t.element_type):
        raise VerifyException(f"'{op.name}' op {what} must be a tensor of integers, got {t}")
    return t


def slice_length(n: int, start: int, stop: int, step: int) -> int:
    """The length of `range(n)[start:stop:step]` (SLICE_NONE for an absent part)."""
    part = [None if v == SLICE_NONE else v for v in (start, stop, step)]
    return len(range(*slice(*part).indices(n)))


def subtensor_shape(
    name: str,
    shape: Sequence[int],
    kinds: Sequence[int],
    starts: Sequence[int],
    stops: Sequence[int],
    steps: Sequence[int],
) -> Shape:
    """The result shape of `ag.subtensor` (ValueError naming `name` if invalid).

    Entry `a` indexes input axis `a`: an integer index (`kinds[a] == INDEX`, the index
    in `starts[a]`) drops the axis; a slice keeps it with the length Python gives
    `range(n)[start:stop:step]`, static when the length and every part are.
    """
    lengths = {len(kinds), len(starts), len(stops), len(steps)}
    if lengths != {len(shape)}:
        raise ValueError(
            f"{name}: kinds, starts, stops and steps must have one entry per axis of "
            f"{shape_str(shape)} (rank {len(shape)})"
        )
    result: list[int] = []
    for axis, (n, kind, start, stop, step) in enumerate(
        zip(shape, kinds, starts, stops, steps, strict=True)
    ):
        if kind == INDEX:
            if start == SLICE_NONE or stop != SLICE_NONE or step != SLICE_NONE:
                raise ValueError(
                    f"{name}: the index of axis {axis} must be in starts, with no stop or step"
                )
            if start != DYNAMIC_VALUE and n != DYNAMIC and not -n <= start < n:
                raise ValueError(
                    f"{name}: index {start} is out of bounds for axis {axis} with size {n}"
                )
            continue
        if kind != SLICE:
            raise ValueError(f"{name}: entry kind {kind} of axis {axis} is neither 0 nor 1")
        if step == 0:
            raise ValueError(f"{name}: the slice step of axis {axis} is zero")
        static = DYNAMIC_VALUE not in (start, stop, step) and n != DYNAMIC
        result.append(slice_length(n, start, stop, step) if static else DYNAMIC)
    return tuple(result)


def _broadcastable_into(value: Sequence[int], target: Sequence[int]) -> bool:
    """Whether a value of shape `value` can be written into a `target`-shaped region
    (right-aligned; static 1s stretch, two static lengths must agree)."""
    if len(value) > len(target):
        return False
    for v, t in zip(value, target[len(target) - len(value) :], strict=True):
        if v not in (1, DYNAMIC) and t != DYNAMIC and v != t:
            return False
    return True


class SubtensorBase(AgOperation, abc.ABC):
    """Properties and checks shared by `ag.subtensor`, `ag.set_subtensor` and
    `ag.inc_subtensor` (see `subtensor_shape`)."""

    kinds = prop_def(DenseArrayBase)
    """Per input axis: SLICE (0) or INDEX (1)."""
    starts = prop_def(DenseArrayBase)
    """Per input axis: the slice start or the index (SLICE_NONE, DYNAMIC_VALUE or a value)."""
    stops = prop_def(DenseArrayBase)
    steps = prop_def(DenseArrayBase)

    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    @staticmethod
    def entry_properties(
        kinds: Sequence[int], starts: Sequence[int], stops: Sequence[int], steps: Sequence[int]
    ) -> dict[str, Attribute]:
        return {
            "kinds": i64_array(kinds),
            "starts": i64_array(starts),
            "stops": i64_array(stops),
            "steps": i64_array(steps),
        }

    def entries(self) -> list[tuple[int, int, int, int]]:
        """`(kind, start, stop, step)` per input axis."""
        return list(
            zip(
                _array_values(self, "kinds"),
                _array_values(self, "starts"),
                _array_values(self, "stops"),
                _array_values(self, "steps"),
                strict=True,
            )
        )

    def region_shape(self, shape: Sequence[int]) -> Shape:
        return subtensor_shape(
            self.name,
            shape,
            _array_values(self, "kinds"),
            _array_values(self, "starts"),
            _array_values(self, "stops"),
            _array_values(self, "steps"),
        )

    def _verify_entries(self, input_type: TensorType, dynamic: Sequence[SSAValue]) -> Shape:
        region = _verify_with_value_error(self, lambda: self.region_shape(input_type.get_shape()))
        wanted = sum(
            v == DYNAMIC_VALUE
            for name in ("starts", "stops", "steps")
            for v in _array_values(self, name)
        )
        if wanted != len(dynamic):
            raise VerifyException(
                f"'{self.name}' op has {len(dynamic)} dynamic operands but its entries "
                f"name {wanted}"
            )
        _check_dynamic_operands(self, "entry", dynamic)
        return region

    def describe(self) -> str:
        """The index expression, e.g. `[?, 1:?, ::-1]`."""
        parts = []
        for kind, start, stop, step in self.entries():
            if kind == INDEX:
                parts.append(_entry_str(start))
            else:
                text = f"{_entry_str(start)}:{_entry_str(stop)}"
                parts.append(text if step == SLICE_NONE else f"{text}:{_entry_str(step)}")
        return "[" + ", ".join(parts) + "]"


@irdl_op_definition
class SubtensorOp(SubtensorBase):
    """Basic indexing `x[i, a:b:c, ...]`: one entry per input axis, an integer index
    (which drops the axis) or a Python slice (which clips like Python's). Negative
    indices count from the end; an index out of range is a run-time error.

    ```mlir
    %r = ag.subtensor %x[%i : tensor<i64>] {kinds = array<i64: 1, 0>,
           starts = array<i64: -9223372036854775808, 1>, stops = ..., steps = ...}
           : tensor<?x?xf32> -> tensor<?xf32>
    ```
    """

    name = "ag.subtensor"

    input = operand_def(TensorType)
    dynamic = var_operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = (
        "$input `[` $dynamic `]` attr-dict `:` type($input) (`,` type($dynamic)^)? "
        "`->` type($result)"
    )

    def __init__(
        self,
        input: SSAValue | Operation,
        kinds: Sequence[int],
        starts: Sequence[int],
        stops: Sequence[int],
        steps: Sequence[int],
        dynamic: Sequence[SSAValue | Operation] = (),
    ):
        value = SSAValue.get(input)
        t = tensor_type(value)
        shape = subtensor_shape(self.name, t.get_shape(), kinds, starts, stops, steps)
        super().__init__(
            operands=[value, [SSAValue.get(d) for d in dynamic]],
            properties=self.entry_properties(kinds, starts, stops, steps),
            result_types=[tensor_of(t.element_type, shape)],
        )

    def verify_(self) -> None:
        it = _check_tensor(self, "operand", self.input.type, "any")
        shape = self._verify_entries(it, self.dynamic)
        _expect_result(self, tensor_of(it.element_type, shape), self.result.type)


class SubtensorUpdateOp(SubtensorBase, abc.ABC):
    """`x` with the region `x[entries]` replaced by (set) or incremented by (inc)
    `value`, broadcast to the region; the result is a new tensor."""

    input = operand_def(TensorType)
    value = operand_def(TensorType)
    dynamic = var_operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = (
        "$input `[` $dynamic `]` `,` $value attr-dict `:` type($input) `,` type($value) "
        "(`,` type($dynamic)^)? `->` type($result)"
    )

    def __init__(
        self,
        input: SSAValue | Operation,
        value: SSAValue | Operation,
        kinds: Sequence[int],
        starts: Sequence[int],
        stops: Sequence[int],
        steps: Sequence[int],
        dynamic: Sequence[SSAValue | Operation] = (),
    ):
        x, y = SSAValue.get(input), SSAValue.get(value)
        t, vt = tensor_type(x), tensor_type(y)
        region = subtensor_shape(self.name, t.get_shape(), kinds, starts, stops, steps)
        if not _broadcastable_into(vt.get_shape(), region):
            raise ValueError(
                f"{self.name}: a value of shape {shape_str(vt.get_shape())} cannot be "
                f"broadcast to the region of shape {shape_str(region)}"
            )
        super().__init__(
            operands=[x, y, [SSAValue.get(d) for d in dynamic]],
            properties=self.entry_properties(kinds, starts, stops, steps),
            result_types=[t],
        )

    def verify_(self) -> None:
        it = _check_tensor(self, "operand", self.input.type, "any")
        vt = _check_tensor(self, "value", self.value.type, "any")
        if vt.element_type != it.element_type:
            raise VerifyException(
                f"'{self.name}' op value {vt} must have the element type of the operand {it}"
            )
        region = self._verify_entries(it, self.dynamic)
        if not _broadcastable_into(vt.get_shape(), region):
            raise VerifyException(
                f"'{self.name}' op value {vt} cannot be broadcast to the region of shape "
                f"{shape_str(region)} of {it}"
            )
        _expect_result(self, it, self.result.type)


@irdl_op_definition
class SetSubtensorOp(SubtensorUpdateOp):
    """`x` with `x[entries] = value` (Theano's `set_subtensor`)."""

    name = "ag.set_subtensor"


@irdl_op_definition
class IncSubtensorOp(SubtensorUpdateOp):
    """`x` with `x[entries] += value` (Theano's `inc_subtensor`)."""

    name = "ag.inc_subtensor"


def advanced_subtensor_shape(
    name: str, shape: Sequence[int], index_shapes: Sequence[Sequence[int]]
) -> Shape:
    """`x[i0, ..., ik-1]` with integer arrays: the broadcast index shape followed by the
    axes `k...` of `x` (ValueError naming `name` if invalid)."""
    if not 1 <= len(index_shapes) <= len(shape):
        raise ValueError(
            f"{name}: {len(index_shapes)} index arrays for an operand of rank {len(shape)}"
        )
    broadcast = broadcast_shapes(*index_shapes)
    if broadcast is None:
        raise ValueError(
            f"{name}: index shapes {', '.join(shape_str(s) for s in index_shapes)} are not "
            "broadcast-compatible"
        )
    return tuple(broadcast) + tuple(shape[len(index_shapes) :])


@irdl_op_definition
class AdvancedSubtensorOp(AgOperation):
    """Integer-array indexing of the leading axes, NumPy's `x[i0, i1, ...]`: the index
    arrays broadcast together; negative indices count from the end; an index out of
    range is a run-time error. `x[ivector]` is Theano's `AdvancedSubtensor1`.

    ```mlir
    %r = ag.advanced_subtensor %x[%i] : tensor<?x?xf32>, tensor<?xi32> -> tensor<?x?xf32>
    ```
    """

    name = "ag.advanced_subtensor"

    input = operand_def(TensorType)
    indices = var_operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = (
        "$input `[` $indices `]` attr-dict `:` type($input) `,` type($indices) `->` type($result)"
    )
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue | Operation, indices: Sequence[SSAValue | Operation]):
        x, idx = SSAValue.get(input), [SSAValue.get(i) for i in indices]
        t = tensor_type(x)
        shape = advanced_subtensor_shape(
            self.name, t.get_shape(), [tensor_type(i).get_shape() for i in idx]
        )
        super().__init__(operands=[x, idx], result_types=[tensor_of(t.element_type, shape)])

    def verify_(self) -> None:
        it = _check_tensor(self, "operand", self.input.type, "any")
        shapes = [
            _check_int_tensor(self, f"index #{k}", i.type).get_shape()
            for k, i in enumerate(self.indices)
        ]
        shape = _verify_with_value_error(
            self, lambda: advanced_subtensor_shape(self.name, it.get_shape(), shapes)
        )
        _expect_result(self, tensor_of(it.element_type, shape), self.result.type)


class AdvancedSubtensorUpdateOp(AgOperation, abc.ABC):
    """`x` with the elements `x[i0, i1, ...]` replaced by (set) or incremented by (inc)
    `value`, broadcast to the indexed shape; repeated indices accumulate for inc (the
    last write wins for set)."""

    input = operand_def(TensorType)
    value = operand_def(TensorType)
    indices = var_operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = (
        "$input `[` $indices `]` `,` $value attr-dict `:` type($input) `,` type($value) "
        "`,` type($indices) `->` type($result)"
    )
    traits = traits_def(Pure())

    def __init__(
        self,
        input: SSAValue | Operation,
        value: SSAValue | Operation,
        indices: Sequence[SSAValue | Operation],
    ):
        x, y, idx = SSAValue.get(input), SSAValue.get(value), [SSAValue.get(i) for i in indices]
        t, vt = tensor_type(x), tensor_type(y)
        region = advanced_subtensor_shape(
            self.name, t.get_shape(), [tensor_type(i).get_shape() for i in idx]
        )
        if not _broadcastable_into(vt.get_shape(), region):
            raise ValueError(
                f"{self.name}: a value of shape {shape_str(vt.get_shape())} cannot be "
                f"broadcast to the indexed shape {shape_str(region)}"
            )
        super().__init__(operands=[x, y, idx], result_types=[t])

    def verify_(self) -> None:
        it = _check_tensor(self, "operand", self.input.type, "any")
        vt = _check_tensor(self, "value", self.value.type, "any")
        if vt.element_type != it.element_type:
            raise VerifyException(
                f"'{self.name}' op value {vt} must have the element type of the operand {it}"
            )
        shapes = [
            _check_int_tensor(self, f"index #{k}", i.type).get_shape()
            for k, i in enumerate(self.indices)
        ]
        region = _verify_with_value_error(
            self, lambda: advanced_subtensor_shape(self.name, it.get_shape(), shapes)
        )
        if not _broadcastable_into(vt.get_shape(), region):
            raise VerifyException(
                f"'{self.name}' op value {vt} cannot be broadcast to the indexed shape "
                f"{shape_str(region)} of {it}"
            )
        _expect_result(self, it, self.result.type)


@irdl_op_definition
class AdvancedSetSubtensorOp(AdvancedSubtensorUpdateOp):
    """`x` with `x[i0, ...] = value` (Theano's `set_subtensor` of advanced indexing)."""

    name = "ag.advanced_set_subtensor"


@irdl_op_definition
class AdvancedIncSubtensorOp(AdvancedSubtensorUpdateOp):
    """`x` with `x[i0, ...] += value`, repeated indices accumulating (Theano's
    `AdvancedIncSubtensor`)."""

    name = "ag.advanced_inc_subtensor"


def _values_shape(name: str, entries: Sequence[int], what: str) -> Shape:
    """The static shape named by `entries` (DYNAMIC_VALUE and -1 give `?`)."""
    if any(e < -1 and e != DYNAMIC_VALUE for e in entries):
        raise ValueError(f"{name}: {what} entries {list(entries)} must be >= -1 or dynamic")
    return tuple(DYNAMIC if e in (DYNAMIC_VALUE, -1) else e for e in entries)


def reshape_shape(name: str, shape: Sequence[int], entries: Sequence[int]) -> Shape:
    """The result shape of `ag.reshape` (ValueError naming `name` if invalid): static
    entries are exact, -1 (at most one) is inferred, DYNAMIC_VALUE is `?`."""
    result = list(_values_shape(name, entries, "shape"))
    if list(entries).count(-1) > 1:
        raise ValueError(f"{name}: shape {list(entries)} has more than one -1")
    known = [e for e in entries if e >= 0]
    if DYNAMIC in shape or DYNAMIC_VALUE in entries:
        return tuple(result)
    total, product = math.prod(shape), math.prod(known)
    if -1 in entries:
        if product == 0 or total % product:
            raise ValueError(f"{name}: cannot reshape {total} elements into shape {list(entries)}")
        result[list(entries).index(-1)] = total // product
    elif total != product:
        raise ValueError(f"{name}: cannot reshape {total} elements into shape {list(entries)}")
    return tuple(result)


class ShapedByOperandsOp(AgOperation, abc.ABC):
    """An op of one source tensor whose result shape is the `shape` property; its
    `DYNAMIC_VALUE` entries are read, in order, from the 0-d `dynamic` operands. Leaves
    define the operands (source first, then `dynamic`) and `result_shape`."""

    SOURCE: ClassVar[str] = "operand"
    """How the verifier names the source operand."""

    def __init__(
        self,
        source: SSAValue | Operation,
        shape: Sequence[int],
        dynamic: Sequence[SSAValue | Operation] = (),
    ):
        x = SSAValue.get(source)
        t = tensor_type(x)
        result = self.result_shape(t.get_shape(), shape)
        super().__init__(
            operands=[x, [SSAValue.get(d) for d in dynamic]],
            properties={"shape": i64_array(shape)},
            result_types=[tensor_of(t.element_type, result)],
        )

    @classmethod
    @abc.abstractmethod
    def result_shape(cls, source: Sequence[int], entries: Sequence[int]) -> Shape:
        """The static result shape (ValueError naming the op if the entries are invalid)."""

    @property
    def shape_list(self) -> tuple[int, ...]:
        return _array_values(self, "shape")

    def verify_(self) -> None:
        st = _check_tensor(self, self.SOURCE, self.operands[0].type, "any")
        entries = self.shape_list
        shape = _verify_with_value_error(self, lambda: self.result_shape(st.get_shape(), entries))
        dynamic = self.operands[1:]
        if entries.count(DYNAMIC_VALUE) != len(dynamic):
            raise VerifyException(
                f"'{self.name}' op has {len(dynamic)} dynamic operands but its shape "
                f"names {entries.count(DYNAMIC_VALUE)}"
            )
        _check_dynamic_operands(self, "length", dynamic)
        _expect_result(self, tensor_of(st.element_type, shape), self.result_types[0])


@irdl_op_definition
class ReshapeOp(ShapedByOperandsOp):
    """The elements of `x` in row-major order, in a new shape (NumPy's `reshape`):
    `shape` has one entry per result axis, a length, -1 (inferred, at most once, also
    as a dynamic value) or DYNAMIC_VALUE (the next dynamic operand). The element counts
    must agree at run time.

    ```mlir
    %r = ag.reshape %x[%n] {shape = array<i64: -9223372036854775808, -1>}
           : tensor<?x?xf32>, tensor<i64> -> tensor<?x?xf32>
    ```
    """

    name = "ag.reshape"

    input = operand_def(TensorType)
    dynamic = var_operand_def(TensorType)
    shape = prop_def(DenseArrayBase)
    result = result_def(TensorType)

    assembly_format = (
        "$input `[` $dynamic `]` attr-dict `:` type($input) (`,` type($dynamic)^)? "
        "`->` type($result)"
    )
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    SOURCE: ClassVar[str] = "operand"

    @classmethod
    def result_shape(cls, source: Sequence[int], entries: Sequence[int]) -> Shape:
        return reshape_shape(cls.name, source, entries)


def concatenate_shape(name: str, shapes: Sequence[Sequence[int]], axis: int) -> Shape:
    """The result shape of `ag.concatenate` (ValueError naming `name` if invalid)."""
    if not shapes:
        raise ValueError(f"{name}: needs at least one operand")
    rank = len(shapes[0])
    if any(len(s) != rank for s in shapes) or not 0 <= axis < rank:
        raise ValueError(
            f"{name}: operands of shapes {', '.join(shape_str(s) for s in shapes)} "
            f"cannot be joined along axis {axis}"
        )
    result: list[int] = []
    for a in range(rank):
        dims = [s[a] for s in shapes]
        if a == axis:
            result.append(DYNAMIC if DYNAMIC in dims else sum(dims))
            continue
        statics = {d for d in dims if d != DYNAMIC}
        if len(statics) > 1:
            raise ValueError(
                f"{name}: dimension {a} of operand shapes "
                f"{', '.join(shape_str(s) for s in shapes)} differ"
            )
        result.append(statics.pop() if statics else DYNAMIC)
    return tuple(result)


@irdl_op_definition
class ConcatenateOp(AgOperation):
    """The operands joined along `axis` (Theano's `join`, NumPy's `concatenate`); the
    other dimensions must be equal (no broadcasting).

    ```mlir
    %r = ag.concatenate %a, %b {axis = 0 : i64}
           : tensor<?x3xf32>, tensor<2x3xf32> -> tensor<?x3xf32>
    ```
    """

    name = "ag.concatenate"

    inputs = var_operand_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)

    assembly_format = "$inputs attr-dict `:` type($inputs) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    def __init__(self, inputs: Sequence[SSAValue | Operation], axis: int):
        values = [SSAValue.get(v) for v in inputs]
        types = [tensor_type(v) for v in values]
        shape = concatenate_shape(self.name, [t.get_shape() for t in types], axis)
        super().__init__(
            operands=[values],
            properties={"axis": IntegerAttr(axis, i64)},
            result_types=[tensor_of(types[0].element_type, shape)],
        )

    @property
    def axis_value(self) -> int:
        return self.axis.value.data

    def verify_(self) -> None:
        types = [
            _check_tensor(self, f"operand #{k}", v.type, "any") for k, v in enumerate(self.inputs)
        ]
        if not types:
            raise VerifyException(f"'{self.name}' op needs at least one operand")
        if len({t.element_type for t in types}) != 1:
            raise VerifyException(
                f"'{self.name}' op operands must have one element type, got "
                f"{', '.join(map(str, types))}"
            )
        shape = _verify_with_value_error(
            self,
            lambda: concatenate_shape(self.name, [t.get_shape() for t in types], self.axis_value),
        )
        _expect_result(self, tensor_of(types[0].element_type, shape), self.result.type)


def alloc_shape(name: str, value: Sequence[int], entries: Sequence[int]) -> Shape:
    """The result shape of `ag.alloc` (ValueError naming `name` if invalid)."""
    if any(e < 0 and e != DYNAMIC_VALUE for e in entries):
        raise ValueError(f"{name}: shape {list(entries)} has a negative length")
    shape = tuple(DYNAMIC if e == DYNAMIC_VALUE else e for e in entries)
    if not _broadcastable_into(value, shape):
        raise ValueError(
            f"{name}: a value of shape {shape_str(value)} cannot be broadcast to shape "
            f"{shape_str(shape)}"
        )
    return shape


@irdl_op_definition
class AllocOp(ShapedByOperandsOp):
    """`value` broadcast (right-aligned) to a shape whose lengths are static entries or
    dynamic operands (Theano's `alloc`).

    ```mlir
    %r = ag.alloc %v[%n] {shape = array<i64: -9223372036854775808, 3>}
           : tensor<f32>, tensor<i64> -> tensor<?x3xf32>
    ```
    """

    name = "ag.alloc"

    value = operand_def(TensorType)
    dynamic = var_operand_def(TensorType)
    shape = prop_def(DenseArrayBase)
    result = result_def(TensorType)

    assembly_format = (
        "$value `[` $dynamic `]` attr-dict `:` type($value) (`,` type($dynamic)^)? "
        "`->` type($result)"
    )
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    SOURCE: ClassVar[str] = "value"

    @classmethod
    def result_shape(cls, source: Sequence[int], entries: Sequence[int]) -> Shape:
        return alloc_shape(cls.name, source, entries)


@irdl_op_definition
class ArangeOp(AgOperation):
    """`[start, start + step, ...]` below `stop` (above it for a negative step), NumPy's
    `arange`: `max(0, ceil((stop - start) / step))` elements; a zero step is a run-time
    error.

    ```mlir
    %r = ag.arange %start, %stop, %step : tensor<i64> -> tensor<?xi64>
    ```
    """

    name = "ag.arange"

    _T: ClassVar = VarConstraint("T", base(TensorType))
    start = operand_def(_T)
    stop = operand_def(_T)
    step = operand_def(_T)
    result = result_def(TensorType)

    assembly_format = "$start `,` $stop `,` $step attr-dict `:` type($start) `->` type($result)"
    traits = traits_def(Pure())

    def __init__(
        self, start: SSAValue | Operation, stop: SSAValue | Operation, step: SSAValue | Operation
    ):
        values = [SSAValue.get(v) for v in (start, stop, step)]
        t = tensor_type(values[0])
        super().__init__(operands=values, result_types=[tensor_of(t.element_type, [DYNAMIC])])

    def verify_(self) -> None:
        t = _check_tensor(self, "start", self.start.type, "numeric")
        if t.get_num_dims() != 0:
            raise VerifyException(f"'{self.name}' op operands must be 0-d tensors, got {t}")
        _expect_result(self, tensor_of(t.element_type, [DYNAMIC]), self.result.type)


INDEXING_OPS: tuple[type[IRDLOperation], ...] = (
    SubtensorOp,
    SetSubtensorOp,
    IncSubtensorOp,
    AdvancedSubtensorOp,
    AdvancedSetSubtensorOp,
    AdvancedIncSubtensorOp,
    ReshapeOp,
    ConcatenateOp,
    AllocOp,
    ArangeOp,
)
"""The indexing, reshaping, joining and allocation ops."""


def view_map(op: Operation) -> dict[int, int]:
    """Theano's `view_map` of an op: result index → the index of the operand whose memory
    the result may share (a basic `ag.subtensor` is a strided view of its input when
    `ag-to-loops` can express it as one). A pass that writes into a buffer (`inplace`)
    must treat a view and its source as one buffer."""
    return {0: 0} if isinstance(op, SubtensorOp) else {}
