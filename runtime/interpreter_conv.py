"""The reference interpreter's convolution ops (`ag.conv`, `ag.conv_grad_weights`,
`ag.conv_grad_inputs`; `dialects/ag/conv.py`) with NumPy.

The input is zero-padded (`numpy.pad`), its windows taken with
`numpy.lib.stride_tricks.sliding_window_view` (every `stride`-th window, every
`dilation`-th tap) and contracted with the filters by `numpy.einsum`, one group axis
apart. The input gradient adds, for every kernel tap, the contracted output gradient
into a strided slice of the padded input, then drops the padding. Operands that do not
fit are a ValueError naming the op, with the messages of the native shape checks
(`lowering/loops/ag_conv.py`).
"""

from __future__ import annotations

import itertools
import string
from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls

from arignote.dialects import ag
from arignote.runtime.interpreter import Array, _label, _operands, _result

O_AXES = string.ascii_uppercase[:3]
K_AXES = string.ascii_uppercase[3:6]


def _fail(op: ag.ConvBase, message: str) -> ValueError:
    return ValueError(f"{_label(op)}: {message}")


def out_lengths(op: ag.ConvBase, sizes: Sequence[int], kernel: Sequence[int]) -> list[int]:
    """The output lengths (ValueError naming `op` when the kernel does not fit)."""
    p = op.params
    for axis, k in enumerate(kernel):
        if k < 1:
            raise _fail(op, f"the filters have an empty spatial axis {axis}: {k}")
    outs = [
        ag.conv_out_length(n, k, s, d, q)
        for n, k, s, d, q in zip(sizes, kernel, p.strides, p.dilations, p.pads, strict=True)
    ]
    if any(o < 1 for o in outs):
        raise _fail(
            op,
            f"the filters of spatial shape {tuple(kernel)} (dilation {list(p.dilations)}) do "
            f"not fit the input of spatial shape {tuple(sizes)} padded by "
            f"{_pads(op, kernel)}",
        )
    return outs


def _pads(op: ag.ConvBase, kernel: Sequence[int]) -> list[int]:
    """The zeros added on each side of each spatial axis (`'half'` and `'full'` entries
    resolved for `kernel`)."""
    p = op.params
    return [ag.resolve_pad(q, k, d) for q, k, d in zip(p.pads, kernel, p.dilations, strict=True)]


def _check_groups(op: ag.ConvBase, channels: int, per_group: int, out_channels: int) -> None:
    groups = op.params.groups
    if channels != per_group * groups:
        raise _fail(
            op,
            f"the input has {channels} channels but the filters take {per_group} per group "
            f"of {groups}",
        )
    if out_channels % groups:
        raise _fail(op, f"{out_channels} output channels are not a multiple of {groups} groups")


def _check_grad(op: ag.ConvBase, grad: Array, batch: int, channels: int, outs: list[int]) -> None:
    expected = (batch, channels, *outs)
    if grad.shape != expected:
        raise _fail(
            op, f"the output gradient has shape {grad.shape}, the convolution gives {expected}"
        )


def _windows(op: ag.ConvBase, x: Array, kernel: Sequence[int], outs: Sequence[int]) -> Array:
    """`(N, C, *out, *kernel)`: the input taps each output position sees."""
    p = op.params
    rank = len(kernel)
    padded = np.pad(x, [(0, 0), (0, 0), *((q, q) for q in _pads(op, kernel))])
    extent = [d * (k - 1) + 1 for k, d in zip(kernel, p.dilations, strict=True)]
    view = sliding_window_view(padded, extent, axis=tuple(range(2, 2 + rank)))
    steps = (
        *(slice(None, (o - 1) * s + 1, s) for o, s in zip(outs, p.strides, strict=True)),
        *(slice(None, None, d) for d in p.dilations),
    )
    return view[(slice(None), slice(None), *steps)]


def _grouped(a: Array, groups: int, axis: int) -> Array:
    """`a` with its `axis` split into `(groups, a.shape[axis] // groups)`."""
    shape = a.shape
    return a.reshape(*shape[:axis], groups, shape[axis] // groups, *shape[axis + 1 :])


def conv(op: ag.ConvBase, x: Array, w: Array) -> Array:
    """`ag.conv`'s value."""
    rank = x.ndim - 2
    _check_groups(op, x.shape[1], w.shape[1], w.shape[0])
    outs = out_lengths(op, x.shape[2:], w.shape[2:])
    g = op.params.groups
    taps = _grouped(_windows(op, x, w.shape[2:], outs), g, 1)
    o, k = O_AXES[:rank], K_AXES[:rank]
    y = np.einsum(f"ngc{o}{k},gfc{k}->ngf{o}", taps, _grouped(w, g, 0), optimize=True)
    return y.reshape(x.shape[0], w.shape[0], *outs).astype(x.dtype, copy=False)


def conv_grad_weights(op: ag.ConvBase, x: Array, gy: Array, kernel: Sequence[int]) -> Array:
    """`ag.conv_grad_weights`' value."""
    rank = x.ndim - 2
    g = op.params.groups
    if x.shape[1] % g or gy.shape[1] % g:
        raise _fail(op, f"channels ({x.shape[1]}, {gy.shape[1]}) are not multiples of {g} groups")
    outs = out_lengths(op, x.shape[2:], kernel)
    _check_grad(op, gy, x.shape[0], gy.shape[1], outs)
    taps = _grouped(_windows(op, x, kernel, outs), g, 1)
    o, k = O_AXES[:rank], K_AXES[:rank]
    gw = np.einsum(f"ngc{o}{k},ngf{o}->gfc{k}", taps, _grouped(gy, g, 1), optimize=True)
    return gw.reshape(gy.shape[1], x.shape[1] // g, *kernel).astype(x.dtype, copy=False)


def conv_grad_inputs(op: ag.ConvBase, gy: Array, w: Array, sizes: Sequence[int]) -> Array:
    """`ag.conv_grad_inputs`' value."""
    p = op.params
    rank = gy.ndim - 2
    g = p.groups
    if w.shape[0] % g:
        raise _fail(op, f"{w.shape[0]} output channels are not a multiple of {g} groups")
    outs = out_lengths(op, sizes, w.shape[2:])
    _check_grad(op, gy, gy.shape[0], w.shape[0], outs)
    channels = w.shape[1] * g
    pads = _pads(op, w.shape[2:])
    padded = [n + 2 * q for n, q in zip(sizes, pads, strict=True)]
    gx = np.zeros((gy.shape[0], channels, *padded), dtype=gy.dtype)
    o = O_AXES[:rank]
    gyg, wg = _grouped(gy, g, 1), _grouped(w, g, 0)
    for tap in itertools.product(*(range(k) for k in w.shape[2:])):
        part = np.einsum(f"ngf{o},gfc->ngc{o}", gyg, wg[(Ellipsis, *tap)], optimize=True)
        where = tuple(
            slice(t * d, t * d + (n - 1) * s + 1, s)
            for t, d, n, s in zip(tap, p.dilations, outs, p.strides, strict=True)
        )
        gx[(slice(None), slice(None), *where)] += part.reshape(gy.shape[0], channels, *outs)
    crop = tuple(slice(q, q + n) for q, n in zip(pads, sizes, strict=True))
    return np.ascontiguousarray(gx[(slice(None), slice(None), *crop)])


def _sizes(op: ag.ConvBase, values: Sequence[Array]) -> list[int]:
    sizes = [int(v) for v in values]
    if any(n < 0 for n in sizes):
        raise _fail(op, f"negative sizes {sizes}")
    return sizes


@register_impls
class ConvFunctions(InterpreterFunctions):
    """NumPy implementations of the convolution ops."""

    @impl(ag.ConvOp)
    def run_conv(self, interpreter: Interpreter, op: ag.ConvOp, args: PythonValues):
        x, w = _operands(op, args)
        return _result(op, conv(op, x, w))

    @impl(ag.ConvGradWeightsOp)
    def run_grad_weights(
        self, interpreter: Interpreter, op: ag.ConvGradWeightsOp, args: PythonValues
    ):
        x, gy, *sizes = _operands(op, args)
        return _result(op, conv_grad_weights(op, x, gy, _sizes(op, sizes)))

    @impl(ag.ConvGradInputsOp)
    def run_grad_inputs(
        self, interpreter: Interpreter, op: ag.ConvGradInputsOp, args: PythonValues
    ):
        gy, w, *sizes = _operands(op, args)
        return _result(op, conv_grad_inputs(op, gy, w, _sizes(op, sizes)))
