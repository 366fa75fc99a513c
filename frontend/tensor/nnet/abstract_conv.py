"""Theano's `theano.tensor.nnet.abstract_conv`: 2-d and 3-d convolutions of mini-batches
and their gradients, the shape helpers, and the `AbstractConv*` op classes.

Every convolution is one of the `ag` conv ops (`dialects/ag/conv.py`): `ag.conv`
correlates; `filter_flip=True` (a true convolution, the default) reverses the filters'
spatial axes first. `border_mode` becomes zero padding: `'valid'` none, `'full'`
`dilation * (k - 1)`, `'half'` `(dilation * (k - 1) + 1) // 2`, an int or a tuple of
ints that many on both sides (`'half'`/`'full'` of filters whose length is only known
at run time: the op's `PAD_HALF`/`PAD_FULL`, resolved from the filter length). The
asymmetric part of a pair `(left, right)` is added to the input explicitly (zeros
around it). Gradients are the other two
ops: with respect to the input `ag.conv_grad_inputs`, to the filters
`ag.conv_grad_weights`; each op's gradient is again one of the three, so second
derivatives work.

Shape hints (`input_shape`, `filter_shape`) are checked against the actual shapes at
run time (`specify_shape`: a `ValueError` naming both shapes). `unshared=True`
(locally connected layers) raises `NotImplementedError`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.dialects import ag
from arignote.dialects.ag.conv import conv_shape
from arignote.graph import Variable, apply_op
from arignote.tensor import basic, subtensor
from arignote.tensor.shape_ops import check, specify_shape
from arignote.tensor.type import upcast_dtypes

__all__ = [
    "AbstractConv",
    "AbstractConv2d",
    "AbstractConv2d_gradInputs",
    "AbstractConv2d_gradWeights",
    "AbstractConv3d",
    "AbstractConv3d_gradInputs",
    "AbstractConv3d_gradWeights",
    "AbstractConv_gradInputs",
    "AbstractConv_gradWeights",
    "BaseAbstractConv",
    "assert_conv_shape",
    "assert_shape",
    "bilinear_kernel_1D",
    "bilinear_kernel_2D",
    "border_mode_to_pad",
    "causal_conv1d",
    "check_conv_gradinputs_shape",
    "conv2d",
    "conv2d_grad_wrt_inputs",
    "conv2d_grad_wrt_weights",
    "conv3d",
    "conv3d_grad_wrt_inputs",
    "conv3d_grad_wrt_weights",
    "get_conv_gradinputs_shape",
    "get_conv_gradinputs_shape_1axis",
    "get_conv_gradweights_shape",
    "get_conv_gradweights_shape_1axis",
    "get_conv_output_shape",
    "get_conv_shape_1axis",
    "separable_conv2d",
    "separable_conv3d",
]

# --- shape helpers (Theano's formulas; ints, None or symbolic scalars) -----------------


def _pad_pair(border_mode: Any, kernel: Any, dilation: Any) -> tuple[Any, Any]:
    """The (left, right) padding of one axis for `border_mode`."""
    dil_kernel = (kernel - 1) * dilation + 1
    if isinstance(border_mode, str):
        if border_mode == "half":
            return dil_kernel // 2, dil_kernel // 2
        if border_mode == "full":
            return dil_kernel - 1, dil_kernel - 1
        if border_mode == "valid":
            return 0, 0
        raise ValueError(f"invalid border_mode {border_mode!r}")
    left, right = border_mode if isinstance(border_mode, tuple) else (border_mode, border_mode)
    if _known(left) and left < 0 or _known(right) and right < 0:
        raise ValueError("border_mode must be >= 0")
    return left, right


def _known(v: Any) -> bool:
    return isinstance(v, int | np.integer)


def get_conv_shape_1axis(
    image_shape: Any, kernel_shape: Any, border_mode: Any, subsample: Any, dilation: Any = 1
) -> Any:
    """The output length of a convolution along one axis (None if any argument is)."""
    if any(v is None for v in (image_shape, kernel_shape, border_mode, subsample, dilation)):
        return None
    dil_kernel = (kernel_shape - 1) * dilation + 1
    left, right = _pad_pair(border_mode, kernel_shape, dilation)
    return (image_shape + left + right - dil_kernel) // subsample + 1


def _per_axis(border_mode: Any, count: int) -> list[Any]:
    if isinstance(border_mode, tuple):
        return list(border_mode)
    return [border_mode] * count


def get_conv_output_shape(
    image_shape: Sequence[Any],
    kernel_shape: Sequence[Any],
    border_mode: Any,
    subsample: Sequence[Any],
    filter_dilation: Sequence[Any] | None = None,
) -> tuple[Any, ...]:
    """`(batch, output channels, *output lengths)` of a convolution (None where unknown;
    an unshared kernel shape has six entries, its last two are the kernel)."""
    convdim = len(image_shape) - 2
    kernel = kernel_shape[-convdim:]
    dilation = filter_dilation if filter_dilation is not None else (1,) * len(subsample)
    modes = _per_axis(border_mode, len(subsample))
    outs = tuple(
        get_conv_shape_1axis(image_shape[2 + i], kernel[i], modes[i], subsample[i], dilation[i])
        for i in range(len(subsample))
    )
    return (image_shape[0], kernel_shape[0], *outs)


def get_conv_gradweights_shape_1axis(
    image_shape: Any, top_shape: Any, border_mode: Any, subsample: Any, dilation: Any
) -> Any:
    """The kernel length along one axis of a convolution mapping `image_shape` to
    `top_shape`; None when it cannot be known (strides, `'half'`, None arguments)."""
    if any(v is None for v in (image_shape, top_shape, border_mode, subsample, dilation)):
        return None
    if subsample != 1 or border_mode == "half":
        return None
    if border_mode == "full":
        kernel = top_shape - image_shape
    elif border_mode == "valid":
        kernel = image_shape - top_shape
    else:
        left, right = _pad_pair(border_mode, 1, 1)
        kernel = image_shape + left + right - top_shape
    if dilation > 1:
        kernel = kernel / dilation
    return kernel + 1


def get_conv_gradweights_shape(
    image_shape: Sequence[Any],
    top_shape: Sequence[Any],
    border_mode: Any,
    subsample: Sequence[Any],
    filter_dilation: Sequence[Any] | None = None,
    num_groups: int = 1,
    unshared: bool = False,
) -> tuple[Any, ...]:
    """The filters' shape of a convolution mapping `image_shape` to `top_shape`."""
    nkern, nchan = image_shape[1], top_shape[1]
    dilation = filter_dilation if filter_dilation is not None else (1,) * len(subsample)
    if num_groups > 1:
        nkern = nkern // num_groups
    modes = _per_axis(border_mode, len(subsample))
    outs = tuple(
        get_conv_gradweights_shape_1axis(
            image_shape[2 + i], top_shape[2 + i], modes[i], subsample[i], dilation[i]
        )
        for i in range(len(subsample))
    )
    if unshared:
        return (nchan, *top_shape[2:], nkern, *outs)
    return (nchan, nkern, *outs)


def get_conv_gradinputs_shape_1axis(
    kernel_shape: Any, top_shape: Any, border_mode: Any, subsample: Any, dilation: Any
) -> Any:
    """The input length along one axis of a convolution whose output has `top_shape`;
    None when it cannot be known (a stride > 1, None arguments)."""
    if any(v is None for v in (kernel_shape, top_shape, border_mode, subsample, dilation)):
        return None
    if subsample != 1:
        return None
    dil_kernel = (kernel_shape - 1) * dilation + 1
    left, right = _pad_pair(border_mode, kernel_shape, dilation)
    return top_shape + dil_kernel - 1 - left - right


def get_conv_gradinputs_shape(
    kernel_shape: Sequence[Any],
    top_shape: Sequence[Any],
    border_mode: Any,
    subsample: Sequence[Any],
    filter_dilation: Sequence[Any] | None = None,
    num_groups: int = 1,
) -> tuple[Any, ...]:
    """The input shape of a convolution whose output has `top_shape`."""
    convdim = len(top_shape) - 2
    nkern, kernel = kernel_shape[1], kernel_shape[-convdim:]
    dilation = filter_dilation if filter_dilation is not None else (1,) * len(subsample)
    if num_groups > 1:
        nkern = nkern * num_groups
    modes = _per_axis(border_mode, len(subsample))
    outs = tuple(
        get_conv_gradinputs_shape_1axis(
            kernel[i], top_shape[2 + i], modes[i], subsample[i], dilation[i]
        )
        for i in range(len(subsample))
    )
    return (top_shape[0], nkern, *outs)


def check_conv_gradinputs_shape(
    image_shape: Sequence[Any],
    kernel_shape: Sequence[Any],
    output_shape: Sequence[Any],
    border_mode: Any,
    subsample: Sequence[Any],
    filter_dilation: Sequence[Any] | None = None,
) -> bool:
    """False if a convolution of `image_shape` by `kernel_shape` cannot give
    `output_shape`; True otherwise (also when a length is None or symbolic)."""
    image_shape, kernel_shape = tuple(image_shape), tuple(kernel_shape)
    output_shape = tuple(output_shape)
    if len(image_shape) != len(kernel_shape) or len(image_shape) != len(output_shape):
        return False
    if len(image_shape) - 2 != len(subsample):
        return False
    if filter_dilation is not None and len(image_shape) - 2 != len(filter_dilation):
        return False
    computed = get_conv_output_shape(
        image_shape, kernel_shape, border_mode, subsample, filter_dilation
    )
    return all(
        not (_known(g) and _known(c)) or int(g) == int(c)
        for g, c in zip(output_shape, computed, strict=True)
    )


def assert_conv_shape(shape: Sequence[Any]) -> tuple[Any, ...]:
    """`shape`, checked as a convolution shape: the first two lengths >= 0, the others
    > 0 (a `ValueError` now for ints; for symbolic lengths a run-time check, whose
    failure is a `ValueError` with Theano's message)."""
    out: list[Any] = []
    for i, n in enumerate(shape):
        least, sign = (0, "<") if i < 2 else (1, "<=")
        if _known(n):
            if n < least:
                raise ValueError(
                    f"The convolution would produce an invalid shape (dim[{i}]: {n} {sign} 0)."
                )
            out.append(n)
            continue
        message = f"The convolution would produce an invalid shape (dim[{i}] {sign} 0)."
        out.append(check(n, basic.ge(n, least), message))
    return tuple(out)


def assert_shape(
    x: Any, expected_shape: Sequence[Any] | None, msg: str = "Unexpected shape."
) -> Any:
    """`x`, checked at run time to have `expected_shape` (None entries unchecked): a
    `ValueError` with `msg` otherwise. (Theano checks only with `config.conv.assert_shape`
    on; arignote always does.)"""
    if expected_shape is None:
        return x
    v = basic.as_tensor_variable(x)
    for i, e in enumerate(expected_shape):
        if e is not None:
            v = check(v, basic.eq(basic.shape_i(v, i), e), msg)
    return v


def border_mode_to_pad(mode: Any, convdim: int, kshp: Sequence[Any]) -> tuple[tuple[Any, Any], ...]:
    """`convdim` pairs `(left, right)` of zero padding for `mode` (`'valid'`, `'full'`,
    `'half'`, or a tuple of ints and pairs of ints; Theano's undilated formulas)."""
    if isinstance(mode, tuple):
        if len(mode) != convdim:
            raise ValueError(
                f"invalid border_mode {mode} which must be a tuple of length {convdim}"
            )
        border: list[tuple[Any, Any]] = []
        for m in mode:
            if _known(m) and m >= 0:
                border.append((m, m))
            elif isinstance(m, tuple) and all(_known(b) for b in m) and min(m) >= 0:
                if len(m) != 2:
                    raise NotImplementedError(f"Asymmetric padding not implemented for {len(m)}d")
                border.append((m[0], m[1]))
            else:
                raise ValueError(
                    f"invalid border mode {mode}. The tuple can only contain integers or "
                    "tuples of length 2"
                )
        return tuple(border)
    if mode == "full":
        return tuple((kshp[i] - 1,) * 2 for i in range(convdim))
    if mode == "half":
        return tuple((kshp[i] // 2,) * 2 for i in range(convdim))
    if mode == "valid":
        return ((0, 0),) * convdim
    raise ValueError(
        f'invalid border_mode {mode}, which must be either "valid", "full", "half", an '
        f"integer or a tuple of length {convdim}"
    )


# --- argument checks -------------------------------------------------------------------


class _Conv:
    """The checked parameters of one convolution call."""

    def __init__(
        self,
        name: str,
        convdim: int,
        border_mode: Any,
        subsample: Any,
        filter_dilation: Any,
        num_groups: Any,
        unshared: Any,
    ):
        self.name, self.convdim = name, convdim
        if unshared:
            raise NotImplementedError(
                f"{name}: unshared=True (a locally connected layer) is not supported"
            )
        self.subsample = _int_tuple(name, "subsample", subsample, convdim, 1)
        self.dilation = _int_tuple(name, "filter_dilation", filter_dilation, convdim, 1)
        if not _known(num_groups) or num_groups < 1:
            raise ValueError(f"{name}: num_groups must be a positive int, got {num_groups!r}")
        self.groups = int(num_groups)
        self.modes = _check_border_mode(name, border_mode, convdim)

    def pads(self, kernel: Sequence[Any]) -> tuple[list[int], list[tuple[Any, Any]]]:
        """Per axis, for the kernel lengths `kernel` (ints, or symbolic where unknown):
        the symmetric padding the op takes (`ag.PAD_HALF` / `ag.PAD_FULL` for `'half'` /
        `'full'` of a kernel length known only at run time), and the asymmetric rest,
        added to the input explicitly."""
        inside: list[int] = []
        extra: list[tuple[Any, Any]] = []
        for m, k, d in zip(self.modes, kernel, self.dilation, strict=True):
            if isinstance(m, str) and m != "valid" and not _known(k):
                inside.append(ag.PAD_HALF if m == "half" else ag.PAD_FULL)
                extra.append((0, 0))
                continue
            left, right = _pad_pair(m, k, d)
            common = min(left, right)
            inside.append(int(common))
            extra.append((left - common, right - common))
        return inside, extra


def _int_tuple(name: str, what: str, value: Any, count: int, least: int) -> tuple[int, ...]:
    if not isinstance(value, tuple | list) or len(value) != count:
        raise ValueError(f"{name}: {what} must be a tuple of {count} ints, got {value!r}")
    if not all(_known(v) and v >= least for v in value):
        raise ValueError(f"{name}: {what} must hold ints >= {least}, got {value!r}")
    return tuple(int(v) for v in value)


def _check_border_mode(name: str, mode: Any, convdim: int) -> list[Any]:
    """One entry per axis: `'valid'`, `'half'`, `'full'`, an int >= 0 or a pair."""
    bad = ValueError(
        f"{name}: invalid border_mode {mode!r}, which must be either 'valid', 'full', "
        f"'half', an integer or a tuple of {convdim} integers or pairs of integers"
    )
    if isinstance(mode, str):
        if mode not in ("valid", "full", "half"):
            raise bad
        return [mode] * convdim
    if _known(mode):
        if mode < 0:
            raise bad
        return [int(mode)] * convdim
    if not isinstance(mode, tuple | list) or len(mode) != convdim:
        raise bad
    modes: list[Any] = []
    for m in mode:
        if _known(m) and m >= 0:
            modes.append(int(m))
        elif isinstance(m, tuple | list) and len(m) == 2 and all(_known(v) and v >= 0 for v in m):
            modes.append((int(m[0]), int(m[1])))
        else:
            raise bad
    return modes


def _tensor(name: str, what: str, x: Any, ndim: int) -> Variable:
    v = basic.as_tensor_variable(x)
    if v.ndim != ndim:
        raise TypeError(f"{name}: {what} must be a {ndim}-D tensor, got {v.ndim} dimensions")
    return v


def _float_pair(a: Variable, b: Variable) -> tuple[Variable, Variable]:
    """Both operands in one float dtype (their upcast; integers compute in floatX)."""
    from arignote import config

    dtype = upcast_dtypes(a.dtype, b.dtype)
    if dtype not in ("float32", "float64"):
        dtype = config.floatX
    return _cast(a, dtype), _cast(b, dtype)


def _cast(v: Variable, dtype: str) -> Variable:
    return v if v.dtype == dtype else basic.cast(v, dtype)


def _hinted(name: str, what: str, v: Variable, shape: Any) -> Variable:
    """`v`, checked at run time to have `shape` (None entries unchecked)."""
    if shape is None:
        return v
    entries = list(shape)
    if len(entries) != v.ndim:
        raise ValueError(
            f"{name}: {what} has {len(entries)} entries for a tensor of {v.ndim} dimensions"
        )
    for e in entries:
        if e is not None and not (_known(e) or isinstance(e, Variable)):
            raise ValueError(f"{name}: {what} must hold ints, None or scalars, got {shape!r}")
        if _known(e) and e < 0:
            raise ValueError(f"{name}: {what} has a negative length: {shape!r}")
    if all(e is None for e in entries):
        return v
    actual = [e if e is not None else basic.shape_i(v, i) for i, e in enumerate(entries)]
    return specify_shape(v, actual)


def _lengths(v: Variable, first: int) -> list[Any]:
    """The lengths of `v`'s axes from `first` on: ints where its type knows them."""
    shape = ag.value_shape(v.value)
    return [
        n if n != ag.DYNAMIC else basic.shape_i(v, i) for i, n in enumerate(shape) if i >= first
    ]


def _flip(w: Variable, convdim: int) -> Variable:
    return subtensor.getitem(w, (slice(None),) * 2 + (slice(None, None, -1),) * convdim)


def _any_extra(extra: Sequence[tuple[Any, Any]]) -> bool:
    return any(not (_known(a) and a == 0 and _known(b) and b == 0) for a, b in extra)


def _pad_input(x: Variable, extra: Sequence[tuple[Any, Any]]) -> Variable:
    """`x` with `extra[i]` zeros before and after spatial axis `i`."""
    if not _any_extra(extra):
        return x
    lengths = _lengths(x, 0)
    shape = lengths[:2] + [n + a + b for n, (a, b) in zip(lengths[2:], extra, strict=True)]
    region = (slice(None),) * 2 + tuple(
        slice(a, a + n) for n, (a, _) in zip(lengths[2:], extra, strict=True)
    )
    zeros = subtensor.zeros(shape, dtype=x.dtype)
    return subtensor.set_subtensor(subtensor.getitem(zeros, region), x)


def _crop(x: Variable, extra: Sequence[tuple[Any, Any]], sizes: Sequence[Any]) -> Variable:
    if not _any_extra(extra):
        return x
    region = (slice(None),) * 2 + tuple(
        slice(a, a + n) for n, (a, _) in zip(sizes, extra, strict=True)
    )
    return subtensor.getitem(x, region)


def _size_value(name: str, n: Any) -> Variable:
    """A length as a 0-d int64 variable."""
    v = basic.as_tensor_variable(n)
    if v.ndim != 0 or not v.dtype.startswith(("int", "uint")):
        raise TypeError(f"{name}: a length must be an int or an integer scalar, got {n!r}")
    return _cast(v, "int64")


# --- the convolutions ------------------------------------------------------------------


def _conv(
    c: _Conv, input: Any, filters: Any, input_shape: Any, filter_shape: Any, filter_flip: bool
) -> Variable:
    x = _tensor(c.name, "input", input, c.convdim + 2)
    w = _tensor(c.name, "filters", filters, c.convdim + 2)
    x, w = _float_pair(x, w)
    x = _hinted(c.name, "input_shape", x, input_shape)
    w = _hinted(c.name, "filter_shape", w, filter_shape)
    if filter_flip:
        w = _flip(w, c.convdim)
    inside, extra = c.pads(_lengths(w, 2))
    x = _pad_input(x, extra)
    _static_check(c, x, w, inside)
    return apply_op(ag.ConvOp(x.value, w.value, c.subsample, c.dilation, inside, c.groups))


def _static_check(c: _Conv, x: Variable, w: Variable, pads: Sequence[int]) -> None:
    """A ValueError naming the function for shapes that cannot fit (the op's own check
    would name the op)."""
    params = ag.ConvParams(c.subsample, c.dilation, tuple(pads), c.groups)
    try:
        conv_shape(params, ag.value_shape(x.value), ag.value_shape(w.value))
    except ValueError as e:
        raise ValueError(f"{c.name}: {e}") from e


def conv2d(
    input: Any,
    filters: Any,
    input_shape: Any = None,
    filter_shape: Any = None,
    border_mode: Any = "valid",
    subsample: Any = (1, 1),
    filter_flip: bool = True,
    filter_dilation: Any = (1, 1),
    num_groups: int = 1,
    unshared: bool = False,
) -> Variable:
    """The 2-d convolution of a mini-batch `input` `(batch, channels, rows, columns)` with
    `filters` `(output channels, channels / num_groups, rows, columns)`: `(batch, output
    channels, output rows, output columns)` (Theano's `abstract_conv.conv2d`)."""
    c = _Conv("conv2d", 2, border_mode, subsample, filter_dilation, num_groups, unshared)
    return _conv(c, input, filters, input_shape, filter_shape, filter_flip)


def conv3d(
    input: Any,
    filters: Any,
    input_shape: Any = None,
    filter_shape: Any = None,
    border_mode: Any = "valid",
    subsample: Any = (1, 1, 1),
    filter_flip: bool = True,
    filter_dilation: Any = (1, 1, 1),
    num_groups: int = 1,
) -> Variable:
    """The 3-d convolution of `input` `(batch, channels, depth, rows, columns)` with
    `filters` `(output channels, channels / num_groups, depth, rows, columns)`."""
    c = _Conv("conv3d", 3, border_mode, subsample, filter_dilation, num_groups, False)
    return _conv(c, input, filters, input_shape, filter_shape, filter_flip)


def _grad_inputs(
    c: _Conv,
    output_grad: Any,
    filters: Any,
    input_shape: Any,
    filter_shape: Any,
    filter_flip: bool,
) -> Variable:
    gy = _tensor(c.name, "output_grad", output_grad, c.convdim + 2)
    w = _tensor(c.name, "filters", filters, c.convdim + 2)
    gy, w = _float_pair(gy, w)
    w = _hinted(c.name, "filter_shape", w, filter_shape)
    if input_shape is None or len(input_shape) != c.convdim + 2:
        raise ValueError(f"{c.name}: input_shape must have {c.convdim + 2} entries")
    sizes = [input_shape[2 + i] for i in range(c.convdim)]
    if any(s is None for s in sizes):
        raise ValueError(f"{c.name}: the spatial lengths of input_shape must be known")
    if filter_flip:
        w = _flip(w, c.convdim)
    inside, extra = c.pads(_lengths(w, 2))
    padded = [n + a + b for n, (a, b) in zip(sizes, extra, strict=True)]
    values = [_size_value(c.name, n).value for n in padded]
    static = [int(n) if _known(n) else ag.DYNAMIC for n in padded]
    op = ag.ConvGradInputsOp(
        gy.value, w.value, values, c.subsample, c.dilation, inside, c.groups, spatial=static
    )
    gx = _crop(apply_op(op), extra, sizes)
    expected = [e if e is not None else basic.shape_i(gx, i) for i, e in enumerate(input_shape)]
    return _hinted(c.name, "input_shape", gx, expected)


def _grad_weights(
    c: _Conv,
    input: Any,
    output_grad: Any,
    filter_shape: Any,
    input_shape: Any,
    filter_flip: bool,
) -> Variable:
    x = _tensor(c.name, "input", input, c.convdim + 2)
    gy = _tensor(c.name, "output_grad", output_grad, c.convdim + 2)
    x, gy = _float_pair(x, gy)
    x = _hinted(c.name, "input_shape", x, input_shape)
    if filter_shape is None or len(filter_shape) != c.convdim + 2:
        raise ValueError(f"{c.name}: filter_shape must have {c.convdim + 2} entries")
    kernel = [filter_shape[2 + i] for i in range(c.convdim)]
    if any(k is None for k in kernel):
        raise ValueError(f"{c.name}: the spatial lengths of filter_shape must be known")
    inside, extra = c.pads(kernel)
    x = _pad_input(x, extra)
    values = [_size_value(c.name, k).value for k in kernel]
    static = [int(k) if _known(k) else ag.DYNAMIC for k in kernel]
    op = ag.ConvGradWeightsOp(
        x.value, gy.value, values, c.subsample, c.dilation, inside, c.groups, kernel=static
    )
    gw = apply_op(op)
    if filter_flip:
        gw = _flip(gw, c.convdim)
    expected = [e if e is not None else basic.shape_i(gw, i) for i, e in enumerate(filter_shape)]
    return _hinted(c.name, "filter_shape", gw, expected)


def conv2d_grad_wrt_inputs(
    output_grad: Any,
    filters: Any,
    input_shape: Any,
    filter_shape: Any = None,
    border_mode: Any = "valid",
    subsample: Any = (1, 1),
    filter_flip: bool = True,
    filter_dilation: Any = (1, 1),
    num_groups: int = 1,
    unshared: bool = False,
) -> Variable:
    """The gradient of `conv2d` with respect to its input, for the output gradient
    `output_grad`; `input_shape` (4 entries, the last two ints or integer scalars) is
    the input's shape (a strided convolution maps several input lengths onto one)."""
    c = _Conv(
        "conv2d_grad_wrt_inputs", 2, border_mode, subsample, filter_dilation, num_groups, unshared
    )
    return _grad_inputs(c, output_grad, filters, input_shape, filter_shape, filter_flip)


def conv3d_grad_wrt_inputs(
    output_grad: Any,
    filters: Any,
    input_shape: Any,
    filter_shape: Any = None,
    border_mode: Any = "valid",
    subsample: Any = (1, 1, 1),
    filter_flip: bool = True,
    filter_dilation: Any = (1, 1, 1),
    num_groups: int = 1,
) -> Variable:
    """The gradient of `conv3d` with respect to its input (see `conv2d_grad_wrt_inputs`)."""
    c = _Conv(
        "conv3d_grad_wrt_inputs", 3, border_mode, subsample, filter_dilation, num_groups, False
    )
    return _grad_inputs(c, output_grad, filters, input_shape, filter_shape, filter_flip)


def conv2d_grad_wrt_weights(
    input: Any,
    output_grad: Any,
    filter_shape: Any,
    input_shape: Any = None,
    border_mode: Any = "valid",
    subsample: Any = (1, 1),
    filter_flip: bool = True,
    filter_dilation: Any = (1, 1),
    num_groups: int = 1,
    unshared: bool = False,
) -> Variable:
    """The gradient of `conv2d` with respect to its filters, for the output gradient
    `output_grad`; `filter_shape` (4 entries, the last two ints or integer scalars) is
    the filters' shape."""
    c = _Conv(
        "conv2d_grad_wrt_weights", 2, border_mode, subsample, filter_dilation, num_groups, unshared
    )
    return _grad_weights(c, input, output_grad, filter_shape, input_shape, filter_flip)


def conv3d_grad_wrt_weights(
    input: Any,
    output_grad: Any,
    filter_shape: Any,
    input_shape: Any = None,
    border_mode: Any = "valid",
    subsample: Any = (1, 1, 1),
    filter_flip: bool = True,
    filter_dilation: Any = (1, 1, 1),
    num_groups: int = 1,
) -> Variable:
    """The gradient of `conv3d` with respect to its filters (see
    `conv2d_grad_wrt_weights`)."""
    c = _Conv(
        "conv3d_grad_wrt_weights", 3, border_mode, subsample, filter_dilation, num_groups, False
    )
    return _grad_weights(c, input, output_grad, filter_shape, input_shape, filter_flip)


def separable_conv2d(
    input: Any,
    depthwise_filters: Any,
    pointwise_filters: Any,
    num_channels: int,
    input_shape: Any = None,
    depthwise_filter_shape: Any = None,
    pointwise_filter_shape: Any = None,
    border_mode: Any = "valid",
    subsample: Any = (1, 1),
    filter_flip: bool = True,
    filter_dilation: Any = (1, 1),
) -> Variable:
    """A depthwise convolution (`num_groups = num_channels`, filters
    `(depth multiplier * channels, 1, rows, columns)`) followed by a 1x1 pointwise one
    (Theano's `separable_conv2d`; the subsampling is the depthwise one's)."""
    depthwise = conv2d(
        input,
        depthwise_filters,
        input_shape,
        depthwise_filter_shape,
        border_mode,
        subsample,
        filter_flip,
        filter_dilation,
        num_groups=num_channels,
    )
    return conv2d(
        depthwise,
        pointwise_filters,
        None,
        pointwise_filter_shape,
        "valid",
        (1, 1),
        filter_flip,
        (1, 1),
    )


def separable_conv3d(
    input: Any,
    depthwise_filters: Any,
    pointwise_filters: Any,
    num_channels: int,
    input_shape: Any = None,
    depthwise_filter_shape: Any = None,
    pointwise_filter_shape: Any = None,
    border_mode: Any = "valid",
    subsample: Any = (1, 1, 1),
    filter_flip: bool = True,
    filter_dilation: Any = (1, 1, 1),
) -> Variable:
    """The 3-d `separable_conv2d`."""
    depthwise = conv3d(
        input,
        depthwise_filters,
        input_shape,
        depthwise_filter_shape,
        border_mode,
        subsample,
        filter_flip,
        filter_dilation,
        num_groups=num_channels,
    )
    return conv3d(
        depthwise,
        pointwise_filters,
        None,
        pointwise_filter_shape,
        "valid",
        (1, 1, 1),
        filter_flip,
        (1, 1, 1),
    )


def causal_conv1d(
    input: Any,
    filters: Any,
    filter_shape: Any,
    input_shape: Any = None,
    subsample: int = 1,
    filter_flip: bool = True,
    filter_dilation: int = 1,
    num_groups: int = 1,
    unshared: bool = False,
) -> Variable:
    """A 1-d convolution of `input` `(batch, channels, length)` with `filters`
    `(output channels, channels, length)` whose output at `t` sees only inputs up to
    `t`: padded by `dilation * (k - 1)` on the left (Theano's `causal_conv1d`)."""
    x = _tensor("causal_conv1d", "input", input, 3)
    w = _tensor("causal_conv1d", "filters", filters, 3)
    if filter_shape is None or len(filter_shape) != 3 or not _known(filter_shape[2]):
        raise ValueError("causal_conv1d: filter_shape must have 3 entries, the last an int")
    pad = (int(filter_shape[2]) - 1) * filter_dilation
    x4 = basic.dimshuffle(x, (0, 1, "x", 2))
    w4 = basic.dimshuffle(w, (0, 1, "x", 2))
    shape4 = None if input_shape is None else (*input_shape[:2], 1, input_shape[2])
    fshape4 = (*filter_shape[:2], 1, filter_shape[2])
    out = conv2d(
        x4,
        w4,
        shape4,
        fshape4,
        ((0, 0), (pad, 0)),
        (1, subsample),
        filter_flip,
        (1, filter_dilation),
        num_groups,
        unshared,
    )
    return subtensor.getitem(out, (slice(None), slice(None), 0))


# --- bilinear upsampling -----------------------------------------------------------------


def bilinear_kernel_1D(ratio: Any, normalize: bool = True) -> Variable:
    """The 1-d bilinear interpolation kernel of `ratio` (an int or an integer scalar):
    `[1, 2, ..., ratio, ..., 2, 1]`, divided by `ratio` when `normalize` (floatX)."""
    from arignote import config

    half = subtensor.arange(1, basic.add(ratio, 1), dtype=config.floatX)
    kern = subtensor.concatenate([half, subtensor.getitem(half, slice(-2, None, -1))])
    if normalize:
        kern = basic.true_div(kern, basic.cast(basic.as_tensor_variable(ratio), config.floatX))
    return kern


def bilinear_kernel_2D(ratio: Any, normalize: bool = True) -> Variable:
    """The 2-d bilinear kernel: the outer product of the 1-d kernels of the vertical and
    horizontal ratios (`ratio` an int, an integer scalar or a pair)."""
    vertical, horizontal = ratio if isinstance(ratio, tuple) else (ratio, ratio)
    hkern = basic.dimshuffle(bilinear_kernel_1D(horizontal, normalize), ("x", 0))
    vkern = basic.dimshuffle(bilinear_kernel_1D(vertical, normalize), (0, "x"))
    return basic.mul(hkern, vkern)


def _as_float(x: Variable) -> Variable:
    """`x`, in floatX unless it is float32 or float64."""
    from arignote import config

    return x if x.dtype in ("float32", "float64") else _cast(x, config.floatX)


def _edge_padded(x: Variable) -> tuple[Variable, Variable, Variable]:
    """`x` as `(batch * channels, 1, rows + 2, columns + 2)` with its first and last rows
    and columns repeated; and its row and column counts."""
    rows, cols = basic.shape_i(x, 2), basic.shape_i(x, 3)
    up = subtensor.reshape(x, (-1, 1, rows, cols))
    up = subtensor.concatenate([up[:, :, :1, :], up, up[:, :, -1:, :]], axis=2)
    up = subtensor.concatenate([up[:, :, :, :1], up, up[:, :, :, -1:]], axis=3)
    return up, rows, cols


def bilinear_upsampling(
    input: Any,
    ratio: int | None = None,
    frac_ratio: Any = None,
    batch_size: Any = None,
    num_input_channels: Any = None,
    use_1D_kernel: bool = True,
) -> Variable:
    """`input` `(batch, channels, rows, columns)` upsampled `ratio` times along both
    spatial axes by bilinear interpolation (Theano's: edges repeated, then transposed
    convolutions with the bilinear kernel, one 1-d kernel per axis or one 2-d kernel);
    a `frac_ratio` goes to `frac_bilinear_upsampling`."""
    if frac_ratio:
        if use_1D_kernel:
            raise ValueError(
                "For fractional ratios 1D kernel method not implemented. You may want to "
                "pass use_1D_kernel as False"
            )
        return frac_bilinear_upsampling(input, frac_ratio=frac_ratio)
    if not _known(ratio) or ratio < 1:
        raise ValueError(f"bilinear_upsampling: ratio must be a positive int, got {ratio!r}")
    x = _as_float(_tensor("bilinear_upsampling", "input", input, 4))
    r = int(ratio)
    up, rows, cols = _edge_padded(x)
    pad = 2 * r - (r - 1) // 2 - 1
    if use_1D_kernel:
        kern = basic.cast(bilinear_kernel_1D(r), x.dtype)
        by_rows = conv2d_grad_wrt_inputs(
            up,
            basic.dimshuffle(kern, ("x", "x", 0, "x")),
            (None, 1, rows * r, cols + 2),
            border_mode=(pad, 0),
            subsample=(r, 1),
        )
        out = conv2d_grad_wrt_inputs(
            by_rows,
            basic.dimshuffle(kern, ("x", "x", "x", 0)),
            (None, 1, rows * r, cols * r),
            border_mode=(0, pad),
            subsample=(1, r),
        )
    else:
        kern = basic.cast(bilinear_kernel_2D(r), x.dtype)
        out = conv2d_grad_wrt_inputs(
            up,
            basic.dimshuffle(kern, ("x", "x", 0, 1)),
            (None, 1, rows * r, cols * r),
            border_mode=(pad, pad),
            subsample=(r, r),
        )
    shape = (basic.shape_i(x, 0), basic.shape_i(x, 1), rows * r, cols * r)
    return subtensor.reshape(out, shape)


def _reduced(fraction: Any) -> tuple[int, int]:
    if not (isinstance(fraction, tuple) and len(fraction) == 2 and all(map(_known, fraction))):
        raise ValueError(f"frac_ratio: expected (numerator, denominator), got {fraction!r}")
    p, q = int(fraction[0]), int(fraction[1])
    if p < 1 or q < 1:
        raise ValueError(f"frac_ratio: expected positive ints, got {fraction!r}")
    d = math.gcd(p, q)
    return p // d, q // d


def _zeros_beside(kern: Variable, before: Any, after: Any, axis: int) -> Variable:
    """`kern` with `before` and `after` zeros along `axis` (2 or 3)."""
    shape = [basic.shape_i(kern, i) for i in range(4)]
    parts = []
    for n in (before, after):
        shape[axis] = n
        parts.append(subtensor.zeros(list(shape), dtype=kern.dtype))
    return subtensor.concatenate([parts[0], kern, parts[1]], axis=axis)


def frac_bilinear_upsampling(input: Any, frac_ratio: Any) -> Variable:
    """`input` `(batch, channels, rows, columns)` upsampled by the fractional ratio
    `frac_ratio` (`(numerator, denominator)`, or one such pair per axis) by bilinear
    interpolation (Theano's construction: the padded bilinear kernel convolved with the
    edge-padded input, dilated by the numerator, strided by the denominator)."""
    if not isinstance(frac_ratio, tuple):
        raise ValueError("frac_ratio must be a tuple")
    if isinstance(frac_ratio[0], tuple):
        (p0, q0), (p1, q1) = (_reduced(f) for f in frac_ratio)
        ratio, stride = (p0, p1), (q0, q1)
    else:
        p, q = _reduced(frac_ratio)
        ratio, stride = (p, p), (q, q)
    x = _as_float(_tensor("frac_bilinear_upsampling", "input", input, 4))
    up, rows, cols = _edge_padded(x)
    double = [(2 * n - 1) * r + 1 for n, r in zip((rows, cols), ratio, strict=True)]
    pad = [d // 2 for d in double]
    kern = basic.cast(basic.dimshuffle(bilinear_kernel_2D(ratio), ("x", "x", 0, 1)), x.dtype)
    kern = _zeros_beside(kern, pad[0], double[0] - pad[0], 2)
    kern = _zeros_beside(kern, pad[1], double[1] - pad[1], 3)
    out = conv2d(kern, up, subsample=stride, filter_dilation=ratio)
    shape = (basic.shape_i(x, 0), basic.shape_i(x, 1), basic.shape_i(out, 2), basic.shape_i(out, 3))
    return subtensor.reshape(out, shape)


# --- the op classes, as Theano's users construct them ------------------------------------


class BaseAbstractConv:
    """Theano's abstract convolution op: the parameters of one convolution; calling
    it builds the graph (see the subclasses)."""

    convdim = 2

    def __init__(
        self,
        convdim: int = 2,
        imshp: Any = None,
        kshp: Any = None,
        border_mode: Any = "valid",
        subsample: Any = None,
        filter_flip: bool = True,
        filter_dilation: Any = None,
        num_groups: int = 1,
        unshared: bool = False,
    ):
        self.convdim = convdim
        self.imshp, self.kshp = imshp, kshp
        self.border_mode = border_mode
        self.subsample = tuple(subsample) if subsample is not None else (1,) * convdim
        self.filter_flip = filter_flip
        self.filter_dilation = (
            tuple(filter_dilation) if filter_dilation is not None else (1,) * convdim
        )
        self.num_groups, self.unshared = num_groups, unshared
        _Conv(
            type(self).__name__,
            convdim,
            border_mode,
            self.subsample,
            self.filter_dilation,
            num_groups,
            unshared,
        )

    def _params(self, name: str) -> _Conv:
        return _Conv(
            name,
            self.convdim,
            self.border_mode,
            self.subsample,
            self.filter_dilation,
            self.num_groups,
            self.unshared,
        )


class AbstractConv(BaseAbstractConv):
    """`AbstractConv(convdim, imshp, kshp, ...)(input, filters)`: the convolution."""

    def __call__(self, input: Any, filters: Any) -> Variable:
        c = self._params(type(self).__name__)
        return _conv(c, input, filters, self.imshp, self.kshp, self.filter_flip)


class AbstractConv_gradWeights(BaseAbstractConv):
    """`AbstractConv_gradWeights(...)(input, output_grad, shape)`: the filters'
    gradient, `shape` the kernel's spatial lengths."""

    def __call__(self, input: Any, output_grad: Any, shape: Any) -> Variable:
        c = self._params(type(self).__name__)
        filter_shape = (None, None, *shape)
        return _grad_weights(c, input, output_grad, filter_shape, self.imshp, self.filter_flip)


class AbstractConv_gradInputs(BaseAbstractConv):
    """`AbstractConv_gradInputs(...)(filters, output_grad, shape)`: the input's
    gradient, `shape` the input's spatial lengths."""

    def __call__(self, filters: Any, output_grad: Any, shape: Any) -> Variable:
        c = self._params(type(self).__name__)
        input_shape = (None, None, *shape)
        return _grad_inputs(c, output_grad, filters, input_shape, self.kshp, self.filter_flip)


def _fixed_rank(base: type, convdim: int, name: str) -> type:
    def __init__(
        self: Any,
        imshp: Any = None,
        kshp: Any = None,
        border_mode: Any = "valid",
        subsample: Any = None,
        filter_flip: bool = True,
        filter_dilation: Any = None,
        num_groups: int = 1,
        unshared: bool = False,
    ) -> None:
        base.__init__(
            self,
            convdim,
            imshp,
            kshp,
            border_mode,
            subsample,
            filter_flip,
            filter_dilation,
            num_groups,
            unshared,
        )

    return type(
        name,
        (base,),
        {
            "__init__": __init__,
            "convdim": convdim,
            "__doc__": f"`{base.__name__}` of {convdim}-d convolutions.",
        },
    )


AbstractConv2d = _fixed_rank(AbstractConv, 2, "AbstractConv2d")
AbstractConv3d = _fixed_rank(AbstractConv, 3, "AbstractConv3d")
AbstractConv2d_gradWeights = _fixed_rank(AbstractConv_gradWeights, 2, "AbstractConv2d_gradWeights")
AbstractConv3d_gradWeights = _fixed_rank(AbstractConv_gradWeights, 3, "AbstractConv3d_gradWeights")
AbstractConv2d_gradInputs = _fixed_rank(AbstractConv_gradInputs, 2, "AbstractConv2d_gradInputs")
AbstractConv3d_gradInputs = _fixed_rank(AbstractConv_gradInputs, 3, "AbstractConv3d_gradInputs")
