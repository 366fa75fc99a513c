"""Pooling over the last `nd` axes (Theano's `theano.tensor.signal.pool`): `ag.pool`
and its derivatives `ag.max_pool_grad`, `ag.average_pool_grad` and
`ag.max_pool_grad_grad`.

Every op carries the window `ws`, the `stride` and the zero `pad` (one entry per pooled
axis; `nd = len(ws)` is 2 for `pool_2d`, 3 for `pool_3d`), `ignore_border` and a
`mode`. The axes before the last `nd` are independent (a batch of images, channels).

Windows, in padded coordinates along one pooled axis of length `h`: window `o` covers
`[o*stride, o*stride + ws)`; the image lies at `[pad, pad + h)`. The number of windows
is `(h + 2*pad - ws) // stride + 1` (at least 0) with `ignore_border`; without it
(`pad` must then be 0) a partial window at the end is kept: `(h - 1) // stride + 1`
when `stride >= ws`, else `max(0, (h - 1 - ws + stride) // stride) + 1` (Theano's
`Pool.out_shape`).

Modes: `max` and `sum` see only the image's elements of the window (never the
padding); `average_exc_pad` divides their sum by their count, `average_inc_pad` by
the window's length clipped to the padded image (the padding counts as zeros).
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerAttr,
    StringAttr,
    TensorType,
    i1,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
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
    DYNAMIC,
    AgOperation,
    _check_tensor,
    _expect_result,
    i64_array,
    tensor_of,
    tensor_type,
)

POOL_MODES = ("max", "sum", "average_inc_pad", "average_exc_pad")
"""The reductions of a window (Theano's `Pool` modes)."""
AVERAGE_MODES = ("sum", "average_inc_pad", "average_exc_pad")
"""The modes whose gradient is `ag.average_pool_grad` (the linear ones)."""
TIES = ("all", "first")
"""Which positions equal to a window's maximum `ag.max_pool_grad_grad` reads."""


def pooled_length(h: int, ws: int, stride: int, pad: int, ignore_border: bool) -> int:
    """The number of windows along an axis of length `h` (Theano's `Pool.out_shape`)."""
    if ignore_border:
        return max(0, (h + 2 * pad - ws) // stride + 1)
    if h == 0:
        return 0
    if stride >= ws:
        return (h - 1) // stride + 1
    return max(0, (h - 1 - ws + stride) // stride) + 1


def pooled_shape(
    shape: Sequence[int],
    ws: Sequence[int],
    stride: Sequence[int],
    pad: Sequence[int],
    ignore_border: bool,
) -> list[int]:
    """The shape of the pooled result for an input of `shape` (`DYNAMIC` stays)."""
    nd = len(ws)
    lengths = zip(shape[len(shape) - nd :], ws, stride, pad, strict=True)
    pooled = [
        d if d == DYNAMIC else pooled_length(d, w, s, p, ignore_border) for d, w, s, p in lengths
    ]
    return [*shape[: len(shape) - nd], *pooled]


def check_pool_parameters(
    ws: Sequence[int], stride: Sequence[int], pad: Sequence[int], ignore_border: bool
) -> None:
    """Raises ValueError naming the parameter that is out of range."""
    if not len(ws) == len(stride) == len(pad) >= 1:
        raise ValueError(
            f"ws, stride and pad must have one entry per pooled axis, got {list(ws)}, "
            f"{list(stride)} and {list(pad)}"
        )
    if min(ws) < 1:
        raise ValueError(f"ws must be positive, got {list(ws)}")
    if min(stride) < 1:
        raise ValueError(f"stride must be positive, got {list(stride)}")
    if min(pad) < 0:
        raise ValueError(f"pad must not be negative, got {list(pad)}")
    if any(p >= w for p, w in zip(pad, ws, strict=True)):
        raise ValueError(f"pad {list(pad)} must be smaller than ws {list(ws)}")
    if max(pad) > 0 and not ignore_border:
        raise ValueError(f"pad {list(pad)} needs ignore_border")


class PoolBase(AgOperation, abc.ABC):
    """The parameters every pooling op carries."""

    ws = prop_def(DenseArrayBase)
    """The window's length along each pooled axis."""
    stride = prop_def(DenseArrayBase)
    """The distance between neighbouring windows along each pooled axis."""
    pad = prop_def(DenseArrayBase)
    """The zeros added on both sides of each pooled axis (each smaller than `ws`)."""
    ignore_border = prop_def(IntegerAttr)
    """`true`: no partial window at the end of an axis; `false`: one (needs `pad` 0)."""
    mode = prop_def(StringAttr)
    """One of `POOL_MODES`."""

    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    MODES: ClassVar[tuple[str, ...]] = POOL_MODES
    """The modes this op accepts."""

    @staticmethod
    def pool_properties(
        ws: Sequence[int],
        stride: Sequence[int],
        pad: Sequence[int],
        ignore_border: bool,
        mode: str,
    ) -> dict[str, Attribute]:
        return {
            "ws": i64_array(ws),
            "stride": i64_array(stride),
            "pad": i64_array(pad),
            "ignore_border": IntegerAttr(int(ignore_border), i1),
            "mode": StringAttr(mode),
        }

    @property
    def ws_list(self) -> tuple[int, ...]:
        return tuple(int(v) for v in self.ws.get_values())

    @property
    def stride_list(self) -> tuple[int, ...]:
        return tuple(int(v) for v in self.stride.get_values())

    @property
    def pad_list(self) -> tuple[int, ...]:
        return tuple(int(v) for v in self.pad.get_values())

    @property
    def ignore_border_value(self) -> bool:
        return bool(self.ignore_border.value.data)

    @property
    def mode_value(self) -> str:
        return self.mode.data

    @property
    def nd(self) -> int:
        """The number of pooled (trailing) axes."""
        return len(self.ws_list)

    def pooled_shape(self, shape: Sequence[int]) -> list[int]:
        """The shape of the pooled result for an input of `shape` (`DYNAMIC` stays)."""
        return pooled_shape(
            shape, self.ws_list, self.stride_list, self.pad_list, self.ignore_border_value
        )

    def verify_parameters(self, input: TensorType) -> None:
        for name in ("ws", "stride", "pad"):
            array = getattr(self, name)
            assert isinstance(array, DenseArrayBase)
            if array.elt_type != i64:
                raise VerifyException(f"'{self.name}' op {name} must be an i64 array")
        if self.ignore_border.type != i1:
            raise VerifyException(f"'{self.name}' op ignore_border must be an i1")
        try:
            check_pool_parameters(
                self.ws_list, self.stride_list, self.pad_list, self.ignore_border_value
            )
        except ValueError as e:
            raise VerifyException(f"'{self.name}' op {e}") from e
        if self.mode_value not in self.MODES:
            raise VerifyException(
                f"'{self.name}' op mode must be one of {', '.join(self.MODES)}, "
                f'got "{self.mode_value}"'
            )
        if input.get_num_dims() < self.nd:
            raise VerifyException(
                f"'{self.name}' op input {input} has fewer than {self.nd} (pooled) dimensions"
            )

    def expect_like(self, what: str, t: Attribute, like: TensorType) -> None:
        """`t` has `like`'s element type, rank and static lengths where both have one."""
        got = _check_tensor(self, what, t, "float")
        same_rank = got.get_num_dims() == like.get_num_dims()
        same = same_rank and all(
            a == b or DYNAMIC in (a, b)
            for a, b in zip(got.get_shape(), like.get_shape(), strict=True)
        )
        if got.element_type != like.element_type or not same:
            raise VerifyException(f"'{self.name}' op {what} {got} does not fit {like}")


@irdl_op_definition
class PoolOp(PoolBase):
    """The windows of the last `nd` axes reduced by `mode` (Theano's `Pool`).

    ```mlir
    %y = ag.pool %x {ws = array<i64: 2, 2>, stride = array<i64: 2, 2>,
           pad = array<i64: 0, 0>, ignore_border = true, mode = "max"}
           : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
    ```
    """

    name = "ag.pool"

    input = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(
        self,
        input: SSAValue | Operation,
        ws: Sequence[int],
        stride: Sequence[int],
        pad: Sequence[int],
        ignore_border: bool,
        mode: str,
    ):
        value = SSAValue.get(input)
        props = self.pool_properties(ws, stride, pad, ignore_border, mode)
        t = tensor_type(value)
        shape = pooled_shape(t.get_shape(), ws, stride, pad, ignore_border)
        result = tensor_of(t.element_type, shape)
        super().__init__(operands=[value], properties=props, result_types=[result])

    def verify_(self) -> None:
        average = self.mode_value.startswith("average")
        t = _check_tensor(self, "input", self.input.type, "float" if average else "numeric")
        self.verify_parameters(t)
        expected = tensor_of(t.element_type, self.pooled_shape(t.get_shape()))
        _expect_result(self, expected, self.result.type)


@irdl_op_definition
class MaxPoolGradOp(PoolBase):
    """The gradient of a max `ag.pool` (Theano's `MaxPoolGrad`): `grad` (the output
    gradient) goes to every image position of a window whose value equals the window's
    maximum `output` (all of them on a tie), summed over the windows.

    ```mlir
    %gx = ag.max_pool_grad %x, %y, %gy {ws = array<i64: 2, 2>, stride = array<i64: 2, 2>,
            pad = array<i64: 0, 0>, ignore_border = true, mode = "max"}
            : tensor<?x?xf64>, tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?x?xf64>
    ```
    """

    name = "ag.max_pool_grad"

    input = operand_def(TensorType)
    output = operand_def(TensorType)
    grad = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = (
        "$input `,` $output `,` $grad attr-dict `:` type($input) `,` type($output) `,` "
        "type($grad) `->` type($result)"
    )
    MODES: ClassVar[tuple[str, ...]] = ("max",)

    def __init__(
        self,
        input: SSAValue | Operation,
        output: SSAValue | Operation,
        grad: SSAValue | Operation,
        ws: Sequence[int],
        stride: Sequence[int],
        pad: Sequence[int],
        ignore_border: bool,
    ):
        x = SSAValue.get(input)
        super().__init__(
            operands=[x, SSAValue.get(output), SSAValue.get(grad)],
            properties=self.pool_properties(ws, stride, pad, ignore_border, "max"),
            result_types=[x.type],
        )

    def verify_(self) -> None:
        t = _check_tensor(self, "input", self.input.type, "float")
        self.verify_parameters(t)
        pooled = tensor_of(t.element_type, self.pooled_shape(t.get_shape()))
        self.expect_like("output", self.output.type, pooled)
        self.expect_like("grad", self.grad.type, pooled)
        _expect_result(self, t, self.result.type)


@irdl_op_definition
class AveragePoolGradOp(PoolBase):
    """The gradient of a `sum` or `average_*` `ag.pool` (Theano's `AveragePoolGrad`):
    each window's output gradient, divided by the count its mode divides by, added to
    each image position of the window. `input` gives the result's shape only.

    ```mlir
    %gx = ag.average_pool_grad %x, %gy {ws = array<i64: 3>, stride = array<i64: 1>,
            pad = array<i64: 1>, ignore_border = true, mode = "average_inc_pad"}
            : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
    ```
    """

    name = "ag.average_pool_grad"

    input = operand_def(TensorType)
    grad = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = (
        "$input `,` $grad attr-dict `:` type($input) `,` type($grad) `->` type($result)"
    )
    MODES: ClassVar[tuple[str, ...]] = AVERAGE_MODES

    def __init__(
        self,
        input: SSAValue | Operation,
        grad: SSAValue | Operation,
        ws: Sequence[int],
        stride: Sequence[int],
        pad: Sequence[int],
        ignore_border: bool,
        mode: str,
    ):
        x = SSAValue.get(input)
        super().__init__(
            operands=[x, SSAValue.get(grad)],
            properties=self.pool_properties(ws, stride, pad, ignore_border, mode),
            result_types=[x.type],
        )

    def verify_(self) -> None:
        t = _check_tensor(self, "input", self.input.type, "float")
        self.verify_parameters(t)
        pooled = tensor_of(t.element_type, self.pooled_shape(t.get_shape()))
        self.expect_like("grad", self.grad.type, pooled)
        _expect_result(self, t, self.result.type)


@irdl_op_definition
class MaxPoolGradGradOp(PoolBase):
    """Per window, the sum of `eval` (input-shaped) over the image positions where
    `input` equals the window's maximum `output` (`ties = "all"`: Theano's
    `DownsampleFactorMaxGradGrad`, the gradient of `ag.max_pool_grad` and the R-operator
    of a max pool), or `eval` at the first such position in row-major order (`ties =
    "first"`: Theano's `MaxPoolRop`).

    ```mlir
    %r = ag.max_pool_grad_grad %x, %y, %e {ws = array<i64: 2, 2>,
           stride = array<i64: 1, 1>, pad = array<i64: 0, 0>, ignore_border = false,
           mode = "max", ties = "all"}
           : tensor<?x?xf64>, tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?x?xf64>
    ```
    """

    name = "ag.max_pool_grad_grad"

    input = operand_def(TensorType)
    output = operand_def(TensorType)
    eval = operand_def(TensorType)
    ties = prop_def(StringAttr)
    """`"all"` or `"first"` (see above)."""
    result = result_def(TensorType)

    assembly_format = (
        "$input `,` $output `,` $eval attr-dict `:` type($input) `,` type($output) `,` "
        "type($eval) `->` type($result)"
    )
    MODES: ClassVar[tuple[str, ...]] = ("max",)

    def __init__(
        self,
        input: SSAValue | Operation,
        output: SSAValue | Operation,
        eval: SSAValue | Operation,
        ws: Sequence[int],
        stride: Sequence[int],
        pad: Sequence[int],
        ignore_border: bool,
        ties: str = "all",
    ):
        y = SSAValue.get(output)
        props = self.pool_properties(ws, stride, pad, ignore_border, "max")
        props["ties"] = StringAttr(ties)
        super().__init__(
            operands=[SSAValue.get(input), y, SSAValue.get(eval)],
            properties=props,
            result_types=[y.type],
        )

    @property
    def first_only(self) -> bool:
        return self.ties.data == "first"

    def verify_(self) -> None:
        t = _check_tensor(self, "input", self.input.type, "float")
        self.verify_parameters(t)
        if self.ties.data not in TIES:
            raise VerifyException(
                f'\'{self.name}\' op ties must be "all" or "first", got "{self.ties.data}"'
            )
        pooled = tensor_of(t.element_type, self.pooled_shape(t.get_shape()))
        self.expect_like("output", self.output.type, pooled)
        self.expect_like("eval", self.eval.type, t)
        _expect_result(self, self.output.type, self.result.type)


POOL_OPS: tuple[type[PoolBase], ...] = (
    PoolOp,
    MaxPoolGradOp,
    AveragePoolGradOp,
    MaxPoolGradGradOp,
)
"""The pooling ops."""
