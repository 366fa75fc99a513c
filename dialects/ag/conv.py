"""Convolution (Theano's `abstract_conv`): `ag.conv`, `ag.conv_grad_weights` and
`ag.conv_grad_inputs`, one family of N-d cross-correlations (2-d and 3-d).

Every op works on batched, channel-first tensors of one float element type (f32 or
f64): an input `(batch, channels, *spatial)`, filters `(out_channels, channels /
groups, *kernel)` and an output `(batch, out_channels, *out)`. The properties are one
entry per spatial axis: `strides` (Theano's `subsample`), `dilations`
(`filter_dilation`) and `pads` (zeros added on both sides of the input, Theano's
`border_mode`: a number, or `PAD_HALF` / `PAD_FULL` for `'half'` / `'full'`, whose
padding `(dilation * (kernel - 1) + 1) // 2` / `dilation * (kernel - 1)` follows the
kernel length, known at run time only for filters of dynamic shape); `groups` splits
the channels (`num_groups`). The ops *correlate* (no filter flip: the frontend flips
the filters for Theano's `filter_flip=True`). Along an axis

    out = (size + 2 * pad - dilation * (kernel - 1) - 1) // stride + 1

and it must be at least 1 (checked statically where the types say, at run time
otherwise).

- `ag.conv`: `out[n, f, o] = sum_{c, k} in_pad[n, g(f) * C_g + c, o * s + k * d] *
  w[f, c, k]` (`g(f)` the group of output channel `f`, `C_g` the channels per group);
- `ag.conv_grad_weights`: the gradient of `ag.conv` with respect to the filters, from
  the input and the output gradient; the kernel lengths are operands (0-d integers);
- `ag.conv_grad_inputs`: the gradient with respect to the input, from the output
  gradient and the filters (a transposed convolution); the input's spatial lengths are
  operands (0-d integers), since a strided convolution maps several lengths onto one.

```mlir
%y = ag.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
       pads = array<i64: 0, 0>, groups = 1 : i64}
       : tensor<?x1x28x28xf32>, tensor<20x1x5x5xf32> -> tensor<?x20x24x24xf32>
%gw = ag.conv_grad_weights %x, %gy[%kh, %kw] {...}
       : tensor<?x1x28x28xf32>, tensor<?x20x24x24xf32>, tensor<i64>, tensor<i64>
       -> tensor<20x1x?x?xf32>
%gx = ag.conv_grad_inputs %gy, %w[%h, %w] {...}
       : tensor<?x20x24x24xf32>, tensor<20x1x5x5xf32>, tensor<i64>, tensor<i64>
       -> tensor<?x1x?x?xf32>
```
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, TensorType, f32, f64, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
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
    _expect_result,
    shape_str,
    tensor_of,
)

PAD_HALF = -1
"""A `pads` entry: Theano's `'half'`, `(dilation * (kernel - 1) + 1) // 2` zeros."""
PAD_FULL = -2
"""A `pads` entry: Theano's `'full'`, `dilation * (kernel - 1)` zeros."""


_SENTINELS = {("pads", PAD_HALF), ("pads", PAD_FULL)}


def resolve_pad(pad: int, kernel: int, dilation: int) -> int:
    """The zeros a `pads` entry adds on each side for a kernel of length `kernel`."""
    if pad == PAD_HALF:
        return (dilation * (kernel - 1) + 1) // 2
    if pad == PAD_FULL:
        return dilation * (kernel - 1)
    return pad


def pad_text(pad: int) -> str:
    """A `pads` entry for messages."""
    return {PAD_HALF: "'half'", PAD_FULL: "'full'"}.get(pad, str(pad))


def conv_out_length(size: int, kernel: int, stride: int, dilation: int, pad: int) -> int:
    """The output length along one axis (`DYNAMIC` if `size` or `kernel` is); may be
    below 1 for sizes that do not fit (the callers reject those)."""
    if DYNAMIC in (size, kernel):
        return DYNAMIC
    padding = resolve_pad(pad, kernel, dilation)
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _merge(what: str, a: int, b: int) -> int:
    if DYNAMIC not in (a, b) and a != b:
        raise ValueError(what)
    return b if a == DYNAMIC else a


@dataclass(frozen=True)
class ConvParams:
    """The properties of a conv op as Python ints."""

    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    pads: tuple[int, ...]
    groups: int

    @classmethod
    def of(cls, op: ConvBase) -> ConvParams:
        return cls(
            tuple(op.strides.get_values()),
            tuple(op.dilations.get_values()),
            tuple(op.pads.get_values()),
            op.groups.value.data,
        )

    def check(self, rank: int) -> None:
        """ValueError unless there is one positive stride and dilation and one pad >= 0
        (or `PAD_HALF`, `PAD_FULL`) per spatial axis and `groups` >= 1."""
        for what, values, least in (
            ("strides", self.strides, 1),
            ("dilations", self.dilations, 1),
            ("pads", self.pads, 0),
        ):
            if len(values) != rank:
                raise ValueError(f"{what} has {len(values)} entries for {rank} spatial axes")
            if any(v < least and (what, v) not in _SENTINELS for v in values):
                raise ValueError(f"{what} must be >= {least}, got {list(values)}")
        if self.groups < 1:
            raise ValueError(f"groups must be >= 1, got {self.groups}")

    def out_lengths(self, sizes: Sequence[int], kernel: Sequence[int]) -> list[int]:
        outs = [
            conv_out_length(n, k, s, d, p)
            for n, k, s, d, p in zip(
                sizes, kernel, self.strides, self.dilations, self.pads, strict=True
            )
        ]
        if any(k != DYNAMIC and k < 1 for k in kernel):
            raise ValueError(f"the kernel {shape_str(kernel)} has an empty axis")
        if any(o != DYNAMIC and o < 1 for o in outs):
            raise ValueError(
                f"the kernel {shape_str(kernel)} (dilated) does not fit the input "
                f"{shape_str(sizes)} padded by [{', '.join(map(pad_text, self.pads))}]"
            )
        return outs


def _group_channels(params: ConvParams, channels: int, per_group: int, what: str) -> None:
    if channels != DYNAMIC and channels % params.groups:
        raise ValueError(f"{what} channels ({channels}) are not a multiple of groups")
    if DYNAMIC in (channels, per_group):
        return
    if channels != per_group * params.groups:
        raise ValueError(
            f"the input has {channels} channels but the filters take {per_group} per group "
            f"of {params.groups}"
        )


def conv_shape(params: ConvParams, x: Shape, w: Shape) -> Shape:
    """`ag.conv`'s result shape (ValueError if the operands cannot fit)."""
    _group_channels(params, x[1], w[1], "input")
    _group_channels(params, w[0], 1 if w[0] == DYNAMIC else w[0] // params.groups, "output")
    return (x[0], w[0], *params.out_lengths(x[2:], w[2:]))


def _check_out(params: ConvParams, sizes: Shape, kernel: Shape, grad: Shape) -> None:
    for o, g in zip(params.out_lengths(sizes, kernel), grad[2:], strict=True):
        _merge(f"the output gradient {shape_str(grad)} does not match the convolution", o, g)


def grad_weights_shape(params: ConvParams, x: Shape, gy: Shape, kernel: Shape) -> Shape:
    """`ag.conv_grad_weights`' result shape, `kernel` the static kernel lengths."""
    _merge(f"batch of {shape_str(x)} and {shape_str(gy)} differ", x[0], gy[0])
    _group_channels(params, x[1], DYNAMIC, "input")
    _group_channels(params, gy[1], DYNAMIC, "output")
    _check_out(params, x[2:], kernel, gy)
    per_group = DYNAMIC if x[1] == DYNAMIC else x[1] // params.groups
    return (gy[1], per_group, *kernel)


def grad_inputs_shape(params: ConvParams, gy: Shape, w: Shape, sizes: Shape) -> Shape:
    """`ag.conv_grad_inputs`' result shape, `sizes` the static input lengths."""
    _merge(f"filters {shape_str(w)} and output gradient {shape_str(gy)} differ", w[0], gy[1])
    _group_channels(params, w[0], DYNAMIC, "output")
    _check_out(params, sizes, w[2:], gy)
    channels = DYNAMIC if w[1] == DYNAMIC else w[1] * params.groups
    return (gy[0], channels, *sizes)


def _props(strides: Sequence[int], dilations: Sequence[int], pads: Sequence[int], groups: int):
    return {
        "strides": DenseArrayBase.from_list(i64, list(strides)),
        "dilations": DenseArrayBase.from_list(i64, list(dilations)),
        "pads": DenseArrayBase.from_list(i64, list(pads)),
        "groups": IntegerAttr(groups, i64),
    }


def _fail(name: str, e: ValueError) -> VerifyException:
    return VerifyException(f"'{name}' op {e}")


def _operands_checked(name: str, *named: tuple[str, Attribute]) -> list[TensorType]:
    """The operand types: float tensors of one element type and one rank, 4 or 5."""
    types: list[TensorType] = []
    for what, t in named:
        if not isinstance(t, TensorType):
            raise VerifyException(f"'{name}' op {what} must be a ranked tensor, got {t}")
        types.append(t)
    listed = ", ".join(str(t) for t in types)
    if len({t.element_type for t in types}) != 1:
        raise VerifyException(f"'{name}' op operands must have one element type: {listed}")
    if len({t.get_num_dims() for t in types}) != 1 or types[0].get_num_dims() not in (4, 5):
        raise VerifyException(f"'{name}' op operands must be all 4-d or all 5-d: {listed}")
    for (what, _), t in zip(named, types, strict=True):
        _check_tensor_float(name, what, t)
    return types


def _check_tensor_float(name: str, what: str, t: TensorType) -> None:
    if t.element_type not in (f32, f64):
        raise VerifyException(f"'{name}' op {what} must have f32 or f64 elements, got {t}")
    if any(d < 0 and d != DYNAMIC for d in t.get_shape()):
        raise VerifyException(f"'{name}' op {what} has a negative dimension: {t}")


def _verify_sizes(name: str, sizes: Sequence[SSAValue], rank: int) -> None:
    if len(sizes) != rank:
        raise VerifyException(f"'{name}' op expected {rank} size operands, got {len(sizes)}")
    for v in sizes:
        t = v.type
        if not (isinstance(t, TensorType) and t.get_num_dims() == 0 and t.element_type == i64):
            raise VerifyException(f"'{name}' op sizes must be tensor<i64>, got {t}")


def _infer(
    name: str,
    params: ConvParams,
    operands: tuple[tuple[str, Attribute], tuple[str, Attribute]],
    shape_of: Callable[[Shape, Shape], Shape],
) -> TensorType:
    """The result type `shape_of` gives for the two (checked) tensor operands' shapes,
    of the first one's element type (VerifyException naming `name` if none)."""
    first, second = _operands_checked(name, *operands)
    try:
        params.check(first.get_num_dims() - 2)
        shape = shape_of(tuple(first.get_shape()), tuple(second.get_shape()))
    except ValueError as e:
        raise _fail(name, e) from e
    return tensor_of(first.element_type, shape)


def infer_conv(name: str, params: ConvParams, x: Attribute, w: Attribute) -> TensorType:
    """`ag.conv`'s result type (VerifyException naming `name` if none)."""
    return _infer(
        name, params, (("input", x), ("filters", w)), lambda a, b: conv_shape(params, a, b)
    )


def infer_grad_weights(
    name: str, params: ConvParams, x: Attribute, g: Attribute, kernel: Shape
) -> TensorType:
    """`ag.conv_grad_weights`' result type for the static kernel lengths `kernel`."""
    return _infer(
        name,
        params,
        (("input", x), ("grad", g)),
        lambda a, b: grad_weights_shape(params, a, b, kernel),
    )


def infer_grad_inputs(
    name: str, params: ConvParams, g: Attribute, w: Attribute, sizes: Shape
) -> TensorType:
    """`ag.conv_grad_inputs`' result type for the static input lengths `sizes`."""
    return _infer(
        name,
        params,
        (("grad", g), ("filters", w)),
        lambda a, b: grad_inputs_shape(params, a, b, sizes),
    )


def _params(
    strides: Sequence[int], dilations: Sequence[int], pads: Sequence[int], groups: int
) -> ConvParams:
    return ConvParams(tuple(strides), tuple(dilations), tuple(pads), groups)


def _static_lengths(given: Sequence[int] | None, count: int) -> Shape:
    if given is None:
        return (DYNAMIC,) * count
    if len(given) != count:
        raise ValueError(f"expected {count} static lengths, got {list(given)}")
    return tuple(given)


def _operand_rank(t: Attribute) -> int:
    return t.get_num_dims() if isinstance(t, TensorType) else 0


def _result_rank(op: IRDLOperation, result: SSAValue, rank: int) -> TensorType:
    t = result.type
    if not isinstance(t, TensorType) or t.get_num_dims() != rank:
        raise VerifyException(f"'{op.name}' op result must be a tensor of rank {rank}, got {t}")
    return t


class ConvBase(AgOperation):
    """The properties shared by the conv ops."""

    strides = prop_def(DenseArrayBase)
    """The step between output positions along each spatial axis (Theano's `subsample`)."""
    dilations = prop_def(DenseArrayBase)
    """The spacing of filter taps along each spatial axis (`filter_dilation`)."""
    pads = prop_def(DenseArrayBase)
    """Zeros added before and after the input along each spatial axis."""
    groups = prop_def(IntegerAttr)
    """The number of channel groups (`num_groups`)."""

    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    @property
    def params(self) -> ConvParams:
        return ConvParams.of(self)


@irdl_op_definition
class ConvOp(ConvBase):
    """The correlation of `input` with `filters` (see the module doc).

    ```mlir
    %y = ag.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
           pads = array<i64: 0, 0>, groups = 1 : i64}
           : tensor<?x1x28x28xf32>, tensor<20x1x5x5xf32> -> tensor<?x20x24x24xf32>
    ```
    """

    name = "ag.conv"

    input = operand_def(TensorType)
    """`(batch, channels, *spatial)`."""
    filters = operand_def(TensorType)
    """`(out_channels, channels / groups, *kernel)`."""
    result = result_def(TensorType)

    assembly_format = (
        "$input `,` $filters attr-dict `:` type($input) `,` type($filters) `->` type($result)"
    )

    def __init__(
        self,
        input: SSAValue | Operation,
        filters: SSAValue | Operation,
        strides: Sequence[int],
        dilations: Sequence[int],
        pads: Sequence[int],
        groups: int = 1,
    ):
        x, w = SSAValue.get(input), SSAValue.get(filters)
        params = _params(strides, dilations, pads, groups)
        super().__init__(
            operands=[x, w],
            properties=_props(strides, dilations, pads, groups),
            result_types=[infer_conv(self.name, params, x.type, w.type)],
        )

    def verify_(self) -> None:
        inferred = infer_conv(self.name, self.params, self.input.type, self.filters.type)
        _expect_result(self, inferred, self.result.type)


@irdl_op_definition
class ConvGradWeightsOp(ConvBase):
    """The gradient of `ag.conv` with respect to its filters: from the convolution's
    `input` and the gradient `grad` of its output; `sizes` are the kernel lengths.

    ```mlir
    %gw = ag.conv_grad_weights %x, %gy[%kh, %kw] {strides = array<i64: 1, 1>,
           dilations = array<i64: 1, 1>, pads = array<i64: 0, 0>, groups = 1 : i64}
           : tensor<?x1x28x28xf32>, tensor<?x20x24x24xf32>, tensor<i64>, tensor<i64>
           -> tensor<20x1x5x5xf32>
    ```
    """

    name = "ag.conv_grad_weights"

    input = operand_def(TensorType)
    grad = operand_def(TensorType)
    sizes = var_operand_def(TensorType)
    """The kernel's spatial lengths (0-d i64)."""
    result = result_def(TensorType)

    assembly_format = (
        "$input `,` $grad `[` $sizes `]` attr-dict `:` type($input) `,` type($grad)"
        " (`,` type($sizes)^)? `->` type($result)"
    )

    def __init__(
        self,
        input: SSAValue | Operation,
        grad: SSAValue | Operation,
        sizes: Sequence[SSAValue | Operation],
        strides: Sequence[int],
        dilations: Sequence[int],
        pads: Sequence[int],
        groups: int = 1,
        kernel: Sequence[int] | None = None,
    ):
        """`kernel`: the kernel lengths known statically (`DYNAMIC` entries unknown),
        written into the result type."""
        x, g = SSAValue.get(input), SSAValue.get(grad)
        values = [SSAValue.get(s) for s in sizes]
        params = _params(strides, dilations, pads, groups)
        static = _static_lengths(kernel, len(values))
        super().__init__(
            operands=[x, g, values],
            properties=_props(strides, dilations, pads, groups),
            result_types=[infer_grad_weights(self.name, params, x.type, g.type, static)],
        )

    def verify_(self) -> None:
        rank = _operand_rank(self.input.type)
        _verify_sizes(self.name, self.sizes, rank - 2)
        rt = _result_rank(self, self.result, rank)
        kernel = tuple(rt.get_shape()[2:])
        inferred = infer_grad_weights(
            self.name, self.params, self.input.type, self.grad.type, kernel
        )
        _expect_result(self, inferred, rt)


@irdl_op_definition
class ConvGradInputsOp(ConvBase):
    """The gradient of `ag.conv` with respect to its input (a transposed convolution):
    from the gradient `grad` of the output and the `filters`; `sizes` are the input's
    spatial lengths.

    ```mlir
    %gx = ag.conv_grad_inputs %gy, %w[%h, %w2] {strides = array<i64: 1, 1>,
           dilations = array<i64: 1, 1>, pads = array<i64: 0, 0>, groups = 1 : i64}
           : tensor<?x20x24x24xf32>, tensor<20x1x5x5xf32>, tensor<i64>, tensor<i64>
           -> tensor<?x1x28x28xf32>
    ```
    """

    name = "ag.conv_grad_inputs"

    grad = operand_def(TensorType)
    filters = operand_def(TensorType)
    sizes = var_operand_def(TensorType)
    """The input's spatial lengths (0-d i64)."""
    result = result_def(TensorType)

    assembly_format = (
        "$grad `,` $filters `[` $sizes `]` attr-dict `:` type($grad) `,` type($filters)"
        " (`,` type($sizes)^)? `->` type($result)"
    )

    def __init__(
        self,
        grad: SSAValue | Operation,
        filters: SSAValue | Operation,
        sizes: Sequence[SSAValue | Operation],
        strides: Sequence[int],
        dilations: Sequence[int],
        pads: Sequence[int],
        groups: int = 1,
        spatial: Sequence[int] | None = None,
    ):
        """`spatial`: the input lengths known statically (`DYNAMIC` entries unknown)."""
        g, w = SSAValue.get(grad), SSAValue.get(filters)
        values = [SSAValue.get(s) for s in sizes]
        params = _params(strides, dilations, pads, groups)
        static = _static_lengths(spatial, len(values))
        super().__init__(
            operands=[g, w, values],
            properties=_props(strides, dilations, pads, groups),
            result_types=[infer_grad_inputs(self.name, params, g.type, w.type, static)],
        )

    def verify_(self) -> None:
        rank = _operand_rank(self.grad.type)
        _verify_sizes(self.name, self.sizes, rank - 2)
        rt = _result_rank(self, self.result, rank)
        sizes = tuple(rt.get_shape()[2:])
        inferred = infer_grad_inputs(
            self.name, self.params, self.grad.type, self.filters.type, sizes
        )
        _expect_result(self, inferred, rt)


CONV_OPS: tuple[type[ConvBase], ...] = (ConvOp, ConvGradWeightsOp, ConvGradInputsOp)
"""The convolution ops."""
