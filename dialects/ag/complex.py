"""Complex numbers: the parts of a complex tensor and a complex tensor from its parts.

`ag` tensors of `complex<f32>` and `complex<f64>` elements (NumPy's `complex64` and
`complex128`) take the arithmetic ops that accept the "arith" or "inexact" category
(`ag.add`, `ag.mul`, `ag.div`, `ag.exp`, `ag.reduce_sum`, `ag.dot`, ...). The three ops
here convert between complex and real tensors; `T.abs_`, `T.angle`, `T.conj` and
`T.complex_from_polar` are compositions of them (see `arignote.tensor.basic`).
"""

from __future__ import annotations

import abc

from xdsl.dialects.builtin import ComplexType, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from arignote.dialects.ag.base import (
    AgOperation,
    _check_tensor,
    _expect_result,
    broadcast_shapes,
    shape_str,
    tensor_of,
    tensor_type,
)


def part_type(t: Attribute) -> Attribute:
    """The element type of the real and imaginary parts of complex element type `t`."""
    assert isinstance(t, ComplexType)
    return t.element_type


class ComplexPartOp(AgOperation, abc.ABC):
    """One real part of each element of a complex tensor; the result has the operand's
    shape and the parts' float type."""

    input = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue | Operation):
        t = tensor_type(SSAValue.get(input))
        result = tensor_of(part_type(t.element_type), t.get_shape())
        super().__init__(operands=[input], result_types=[result])

    def verify_(self) -> None:
        t = _check_tensor(self, "operand", self.input.type, "complex")
        _expect_result(self, tensor_of(part_type(t.element_type), t.get_shape()), self.result.type)


@irdl_op_definition
class RealOp(ComplexPartOp):
    """The real part of each element (`numpy.real`).

    ```mlir
    %r = ag.real %z : tensor<?xcomplex<f64>> -> tensor<?xf64>
    ```
    """

    name = "ag.real"


@irdl_op_definition
class ImagOp(ComplexPartOp):
    """The imaginary part of each element (`numpy.imag`).

    ```mlir
    %i = ag.imag %z : tensor<?xcomplex<f32>> -> tensor<?xf32>
    ```
    """

    name = "ag.imag"


@irdl_op_definition
class ComplexOp(AgOperation):
    """`real + 1j * imag` elementwise, the parts broadcast NumPy-style; both parts have one
    float type and the result is the complex type of it.

    ```mlir
    %z = ag.complex %x, %y : tensor<?xf64>, tensor<f64> -> tensor<?xcomplex<f64>>
    ```
    """

    name = "ag.complex"

    real = operand_def(TensorType)
    imag = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = "$real `,` $imag attr-dict `:` type($real) `,` type($imag) `->` type($result)"
    traits = traits_def(Pure())

    @staticmethod
    def infer_type(real: Attribute, imag: Attribute) -> TensorType:
        """The result type for parts of types `real` and `imag` (ValueError if none)."""
        assert isinstance(real, TensorType) and isinstance(imag, TensorType)
        shape = broadcast_shapes(real.get_shape(), imag.get_shape())
        if shape is None:
            raise ValueError(
                f"ag.complex: shapes {shape_str(real.get_shape())} and "
                f"{shape_str(imag.get_shape())} are not broadcast-compatible"
            )
        return tensor_of(ComplexType(real.element_type), shape)  # pyright: ignore[reportArgumentType]

    def __init__(self, real: SSAValue | Operation, imag: SSAValue | Operation):
        re, im = SSAValue.get(real), SSAValue.get(imag)
        super().__init__(operands=[re, im], result_types=[self.infer_type(re.type, im.type)])

    def verify_(self) -> None:
        rt = _check_tensor(self, "real", self.real.type, "float")
        it = _check_tensor(self, "imag", self.imag.type, "float")
        if rt.element_type != it.element_type:
            raise VerifyException(
                f"'{self.name}' op parts must have one element type, got {rt} and {it}"
            )
        if broadcast_shapes(rt.get_shape(), it.get_shape()) is None:
            raise VerifyException(
                f"'{self.name}' op part types {rt} and {it} are not broadcast-compatible"
            )
        _expect_result(self, self.infer_type(rt, it), self.result.type)


COMPLEX_OPS = (RealOp, ImagOp, ComplexOp)
"""The ops of this module, for the dialect."""
