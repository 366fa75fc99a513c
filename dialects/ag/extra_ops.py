"""Scans, sorting and searching (Theano's `extra_ops` and `sort`): `ag.cumsum`,
`ag.cumprod`, `ag.sort`, `ag.argsort` and `ag.searchsorted`.

The other functions of Theano's `extra_ops` (`diff`, `bincount`, `unique`, `repeat`,
`compress`, `fill_diagonal`, ...) are compositions of these and of the indexing ops in
the frontend (`arignote.tensor.extra_ops`).

Sorting follows NumPy's order for floats: NaN after every number (so an ascending sort
puts NaNs last), and it is stable (equal elements keep their order, as NumPy's
`kind="stable"`).
"""

from __future__ import annotations

import abc
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    IntegerAttr,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from arignote.dialects.ag.base import (
    AgOperation,
    _check_tensor,
    _expect_result,
    tensor_of,
    tensor_type,
)


class AxisOp(AgOperation, abc.ABC):
    """An op working along one axis of its operand, with a result of the operand's shape."""

    input = operand_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    """The axis the op works along, in `0..rank-1` (the operand has rank 1 or more)."""

    result = result_def(TensorType)

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    CATEGORY: ClassVar[str] = "numeric"
    """The element types the operand may have."""

    def __init__(self, input: SSAValue | Operation, axis: int):
        value = SSAValue.get(input)
        t = tensor_type(value)
        if not 0 <= axis < t.get_num_dims():
            raise ValueError(f"{self.name}: axis {axis} out of range for rank {t.get_num_dims()}")
        super().__init__(
            operands=[value],
            properties={"axis": IntegerAttr(axis, i64)},
            result_types=[self.result_type(t)],
        )

    @classmethod
    def result_type(cls, t: TensorType) -> TensorType:
        return t

    @property
    def axis_value(self) -> int:
        return self.axis.value.data

    def verify_(self) -> None:
        t = _check_tensor(self, "operand", self.input.type, self.CATEGORY)
        if not 0 <= self.axis_value < t.get_num_dims():
            raise VerifyException(f"'{self.name}' op axis {self.axis_value} out of range for {t}")
        _expect_result(self, self.result_type(t), self.result.type)


class CumulativeOp(AxisOp, abc.ABC):
    """A running reduction along `axis`: element `i` combines elements `0..i` (in the
    operand's element type, as NumPy's `cumsum`/`cumprod` with `dtype=x.dtype`)."""


@irdl_op_definition
class CumSumOp(CumulativeOp):
    """The running sum along `axis` (`numpy.cumsum`).

    ```mlir
    %s = ag.cumsum %x {axis = 1 : i64} : tensor<?x?xf32> -> tensor<?x?xf32>
    ```
    """

    name = "ag.cumsum"


@irdl_op_definition
class CumProdOp(CumulativeOp):
    """The running product along `axis` (`numpy.cumprod`)."""

    name = "ag.cumprod"


@irdl_op_definition
class SortOp(AxisOp):
    """The operand sorted ascending along `axis`, NaNs last (`numpy.sort`).

    ```mlir
    %s = ag.sort %x {axis = 0 : i64} : tensor<?xf64> -> tensor<?xf64>
    ```
    """

    name = "ag.sort"
    CATEGORY: ClassVar[str] = "any"


@irdl_op_definition
class ArgSortOp(AxisOp):
    """The `i64` positions along `axis` that sort the operand (`numpy.argsort` with
    `kind="stable"`: equal elements keep their order, NaNs come last).

    ```mlir
    %i = ag.argsort %x {axis = 1 : i64} : tensor<?x?xf32> -> tensor<?x?xi64>
    ```
    """

    name = "ag.argsort"
    CATEGORY: ClassVar[str] = "any"

    @classmethod
    def result_type(cls, t: TensorType) -> TensorType:
        return tensor_of(i64, t.get_shape())


SEARCH_SIDES = ("left", "right")


@irdl_op_definition
class SearchSortedOp(AgOperation):
    """For each element `v` of `values`, the `i64` position in the ascending vector
    `sorted` where `v` would be inserted to keep it sorted (`numpy.searchsorted`): the
    first such position (`side = "left"`) or the last (`"right"`). NaN sorts after every
    number, as in `ag.sort`. `sorted` and `values` have one element type.

    ```mlir
    %i = ag.searchsorted %a, %v {side = "left"} : tensor<?xf64>, tensor<?x?xf64>
        -> tensor<?x?xi64>
    ```
    """

    name = "ag.searchsorted"

    sorted = operand_def(TensorType)
    """The ascending vector searched."""
    values = operand_def(TensorType)
    """The values looked for, of any shape."""
    side = prop_def(StringAttr)
    """`"left"` or `"right"`."""

    result = result_def(TensorType)

    assembly_format = (
        "$sorted `,` $values attr-dict `:` type($sorted) `,` type($values) `->` type($result)"
    )
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    def __init__(self, sorted: SSAValue | Operation, values: SSAValue | Operation, side: str):
        v = SSAValue.get(values)
        super().__init__(
            operands=[SSAValue.get(sorted), v],
            properties={"side": StringAttr(side)},
            result_types=[tensor_of(i64, tensor_type(v).get_shape())],
        )

    @property
    def right(self) -> bool:
        return self.side.data == "right"

    def verify_(self) -> None:
        st = _check_tensor(self, "sorted", self.sorted.type, "any")
        vt = _check_tensor(self, "values", self.values.type, "any")
        if st.get_num_dims() != 1:
            raise VerifyException(f"'{self.name}' op sorted must be a vector, got {st}")
        if st.element_type != vt.element_type:
            raise VerifyException(
                f"'{self.name}' op sorted and values must have one element type, got {st} and {vt}"
            )
        if self.side.data not in SEARCH_SIDES:
            raise VerifyException(
                f'\'{self.name}\' op side must be "left" or "right", got "{self.side.data}"'
            )
        _expect_result(self, tensor_of(i64, vt.get_shape()), self.result.type)


CUMULATIVE_OPS: tuple[type[CumulativeOp], ...] = (CumSumOp, CumProdOp)
SORT_OPS: tuple[type[AxisOp], ...] = (SortOp, ArgSortOp)
EXTRA_OPS: tuple[type[IRDLOperation], ...] = (*CUMULATIVE_OPS, *SORT_OPS, SearchSortedOp)
"""The scan, sort and search ops."""
