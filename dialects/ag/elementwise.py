"""Constants, elementwise arithmetic, comparisons, select and cast."""

from __future__ import annotations

import abc
from typing import ClassVar

from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IntegerType,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParamAttrConstraint,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import ConstantLike, Pure
from xdsl.utils.exceptions import VerifyException

from arignote.dialects.ag.base import (
    DYNAMIC,
    AgOperation,
    _check_tensor,
    _expect_result,
    broadcast_shapes,
    is_bool,
    shape_str,
    ssa_value,
    tensor_of,
    tensor_type,
)

# --- constants -------------------------------------------------------------------------


@irdl_op_definition
class ConstantOp(AgOperation):
    """A tensor of known values.

    ```mlir
    %c = ag.constant dense<[1.0, 2.0]> : tensor<2xf64>
    ```
    """

    name = "ag.constant"

    _T: ClassVar = VarConstraint("T", base(TensorType))
    value = prop_def(ParamAttrConstraint(DenseIntOrFPElementsAttr, (_T, AnyAttr())))
    """The values; their type is the result type."""

    result = result_def(_T)

    assembly_format = "$value attr-dict"
    traits = traits_def(Pure(), ConstantLike())

    def __init__(self, value: DenseIntOrFPElementsAttr):
        super().__init__(properties={"value": value}, result_types=[value.type])

    def verify_(self) -> None:
        t = _check_tensor(self, "result", self.result.type, "any")
        if self.value.type != t:
            raise VerifyException(
                f"'{self.name}' op value type {self.value.type} differs from result type {t}"
            )
        if DYNAMIC in t.get_shape():
            raise VerifyException(f"'{self.name}' op result must have a static shape, got {t}")


# --- elementwise -----------------------------------------------------------------------


class UnaryElementwiseOp(AgOperation, abc.ABC):
    """An elementwise op of one operand; the result has the operand's type."""

    CATEGORY: ClassVar[str] = "float"
    """Which element types the op accepts: "float", "numeric" or "any"."""

    _T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(_T)
    result = result_def(_T)

    assembly_format = "$input attr-dict `:` type($result)"
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue | Operation):
        super().__init__(operands=[input], result_types=[ssa_value(input).type])

    def verify_(self) -> None:
        t = _check_tensor(self, "operand", self.input.type, self.CATEGORY)
        _expect_result(self, t, self.result.type)


class UnaryPredicateOp(UnaryElementwiseOp, abc.ABC):
    """An elementwise test of one operand (`isnan`); the result is a tensor of `i1` of
    the operand's shape."""

    CATEGORY: ClassVar[str] = "any"

    input = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue | Operation):
        t = tensor_type(ssa_value(input))
        IRDLOperation.__init__(
            self, operands=[input], result_types=[tensor_of(IntegerType(1), t.get_shape())]
        )

    def verify_(self) -> None:
        t = _check_tensor(self, "operand", self.input.type, self.CATEGORY)
        _expect_result(self, tensor_of(IntegerType(1), t.get_shape()), self.result.type)


class BinaryElementwiseOp(AgOperation, abc.ABC):
    """An elementwise op of two operands of one element type, broadcast NumPy-style."""

    CATEGORY: ClassVar[str] = "numeric"

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"
    traits = traits_def(Pure())

    @classmethod
    def result_element_type(cls, operand_element: Attribute) -> Attribute:
        return operand_element

    @classmethod
    def infer_type(cls, lhs: Attribute, rhs: Attribute) -> TensorType:
        """The result type for operand types `lhs` and `rhs` (ValueError if none)."""
        assert isinstance(lhs, TensorType) and isinstance(rhs, TensorType)
        shape = broadcast_shapes(lhs.get_shape(), rhs.get_shape())
        if shape is None:
            raise ValueError(
                f"{cls.name}: shapes {shape_str(lhs.get_shape())} and "
                f"{shape_str(rhs.get_shape())} are not broadcast-compatible"
            )
        return tensor_of(cls.result_element_type(lhs.element_type), shape)

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        lhs, rhs = ssa_value(lhs), ssa_value(rhs)
        super().__init__(operands=[lhs, rhs], result_types=[self.infer_type(lhs.type, rhs.type)])

    def verify_(self) -> None:
        lt = _check_tensor(self, "lhs", self.lhs.type, self.CATEGORY)
        rt = _check_tensor(self, "rhs", self.rhs.type, self.CATEGORY)
        if lt.element_type != rt.element_type:
            raise VerifyException(
                f"'{self.name}' op operands must have one element type, got {lt} and {rt}"
            )
        if broadcast_shapes(lt.get_shape(), rt.get_shape()) is None:
            raise VerifyException(
                f"'{self.name}' op operand types {lt} and {rt} are not broadcast-compatible"
            )
        _expect_result(self, self.infer_type(lt, rt), self.result.type)


class ComparisonOp(BinaryElementwiseOp, abc.ABC):
    """An elementwise comparison; the result is a tensor of `i1`."""

    CATEGORY: ClassVar[str] = "any"

    @classmethod
    def result_element_type(cls, operand_element: Attribute) -> Attribute:
        return IntegerType(1)


@irdl_op_definition
class AddOp(BinaryElementwiseOp):
    """Elementwise `lhs + rhs`."""

    name = "ag.add"
    CATEGORY: ClassVar[str] = "arith"


@irdl_op_definition
class SubOp(BinaryElementwiseOp):
    """Elementwise `lhs - rhs`."""

    name = "ag.sub"
    CATEGORY: ClassVar[str] = "arith"


@irdl_op_definition
class MulOp(BinaryElementwiseOp):
    """Elementwise `lhs * rhs`."""

    name = "ag.mul"
    CATEGORY: ClassVar[str] = "arith"


@irdl_op_definition
class DivOp(BinaryElementwiseOp):
    """Elementwise true division of floats or complex numbers (`x / y`); integers are cast
    first."""

    name = "ag.div"
    CATEGORY: ClassVar[str] = "inexact"


@irdl_op_definition
class FloorDivOp(BinaryElementwiseOp):
    """Elementwise `x // y` rounding toward minus infinity, as NumPy (x // 0 == 0 for ints)."""

    name = "ag.floordiv"


@irdl_op_definition
class ModOp(BinaryElementwiseOp):
    """Elementwise `x % y` with the sign of `y`, as NumPy (x % 0 == 0 for ints)."""

    name = "ag.mod"


@irdl_op_definition
class PowOp(BinaryElementwiseOp):
    """Elementwise `x ** y`."""

    name = "ag.pow"
    CATEGORY: ClassVar[str] = "arith"


@irdl_op_definition
class MaximumOp(BinaryElementwiseOp):
    """Elementwise maximum; a NaN in either operand gives NaN (numpy.maximum)."""

    name = "ag.maximum"
    CATEGORY: ClassVar[str] = "real"


@irdl_op_definition
class MinimumOp(BinaryElementwiseOp):
    """Elementwise minimum; a NaN in either operand gives NaN (numpy.minimum)."""

    name = "ag.minimum"
    CATEGORY: ClassVar[str] = "real"


@irdl_op_definition
class LtOp(ComparisonOp):
    """Elementwise `lhs < rhs`."""

    name = "ag.lt"
    CATEGORY: ClassVar[str] = "real"  # complex numbers have no order (Theano, NumPy 2)


@irdl_op_definition
class LeOp(ComparisonOp):
    """Elementwise `lhs <= rhs`."""

    name = "ag.le"
    CATEGORY: ClassVar[str] = "real"  # complex numbers have no order (Theano, NumPy 2)


@irdl_op_definition
class GtOp(ComparisonOp):
    """Elementwise `lhs > rhs`."""

    name = "ag.gt"
    CATEGORY: ClassVar[str] = "real"  # complex numbers have no order (Theano, NumPy 2)


@irdl_op_definition
class GeOp(ComparisonOp):
    """Elementwise `lhs >= rhs`."""

    name = "ag.ge"
    CATEGORY: ClassVar[str] = "real"  # complex numbers have no order (Theano, NumPy 2)


@irdl_op_definition
class EqOp(ComparisonOp):
    """Elementwise `lhs == rhs`."""

    name = "ag.eq"


@irdl_op_definition
class NeOp(ComparisonOp):
    """Elementwise `lhs != rhs` (true where either is NaN)."""

    name = "ag.ne"


@irdl_op_definition
class NegOp(UnaryElementwiseOp):
    """Elementwise `-x`."""

    name = "ag.neg"
    CATEGORY: ClassVar[str] = "arith"


@irdl_op_definition
class AbsOp(UnaryElementwiseOp):
    """Elementwise `|x|`."""

    name = "ag.abs"
    CATEGORY: ClassVar[str] = "numeric"


@irdl_op_definition
class SelectOp(AgOperation):
    """Elementwise `cond ? true_value : false_value` (Theano's `switch`), broadcast.

    ```mlir
    %r = ag.select %c, %a, %b : tensor<?xi1>, tensor<?xf32>, tensor<f32> -> tensor<?xf32>
    ```
    """

    name = "ag.select"

    cond = operand_def(TensorType)
    true_value = operand_def(TensorType)
    false_value = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = (
        "$cond `,` $true_value `,` $false_value attr-dict `:` type($cond) `,` "
        "type($true_value) `,` type($false_value) `->` type($result)"
    )
    traits = traits_def(Pure())

    @staticmethod
    def infer_type(cond: Attribute, a: Attribute, b: Attribute) -> TensorType:
        assert isinstance(cond, TensorType)
        assert isinstance(a, TensorType) and isinstance(b, TensorType)
        shape = broadcast_shapes(cond.get_shape(), a.get_shape(), b.get_shape())
        if shape is None:
            raise ValueError(
                f"ag.select: shapes {shape_str(cond.get_shape())}, "
                f"{shape_str(a.get_shape())} and {shape_str(b.get_shape())} "
                "are not broadcast-compatible"
            )
        return tensor_of(a.element_type, shape)

    def __init__(
        self,
        cond: SSAValue | Operation,
        true_value: SSAValue | Operation,
        false_value: SSAValue | Operation,
    ):
        c, a, b = ssa_value(cond), ssa_value(true_value), ssa_value(false_value)
        super().__init__(operands=[c, a, b], result_types=[self.infer_type(c.type, a.type, b.type)])

    def verify_(self) -> None:
        ct = _check_tensor(self, "condition", self.cond.type, "any")
        at = _check_tensor(self, "true value", self.true_value.type, "any")
        bt = _check_tensor(self, "false value", self.false_value.type, "any")
        if not is_bool(ct.element_type):
            raise VerifyException(f"'{self.name}' op condition must have element type i1, got {ct}")
        if at.element_type != bt.element_type:
            raise VerifyException(
                f"'{self.name}' op branches must have one element type, got {at} and {bt}"
            )
        if broadcast_shapes(ct.get_shape(), at.get_shape(), bt.get_shape()) is None:
            raise VerifyException(
                f"'{self.name}' op operand types {ct}, {at} and {bt} are not broadcast-compatible"
            )
        _expect_result(self, self.infer_type(ct, at, bt), self.result.type)


@irdl_op_definition
class CastOp(AgOperation):
    """Elementwise conversion to another element type, as NumPy's `astype`.

    Floats convert to integers by truncation toward zero; any nonzero value is `true`.

    ```mlir
    %d = ag.cast %x : tensor<?xi32> to tensor<?xf64>
    ```
    """

    name = "ag.cast"

    input = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue | Operation, element_type: Attribute):
        value = ssa_value(input)
        t = tensor_type(value)
        super().__init__(operands=[value], result_types=[tensor_of(element_type, t.get_shape())])

    def verify_(self) -> None:
        it = _check_tensor(self, "operand", self.input.type, "any")
        rt = _check_tensor(self, "result", self.result.type, "any")
        if it.get_shape() != rt.get_shape():
            raise VerifyException(
                f"'{self.name}' op operand {it} and result {rt} must have the same shape"
            )
