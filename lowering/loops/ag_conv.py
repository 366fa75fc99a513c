"""Shape rules and kernels of the convolution ops (`ag.conv`, `ag.conv_grad_weights`,
`ag.conv_grad_inputs`; `dialects/ag/conv.py`) in `ag-to-loops`.

Accepts those ops and leaves `scf.for` loop nests over `memref.load`/`memref.store`,
one temporary buffer (`memref.alloc`/`dealloc`) and calls of
`scipy_cblas_{s,d}gemm` (declared by `ag_blas.declare_blas_functions`).

All three ops go through *im2col*: for one image `n` and one channel group, the matrix
`col[(c, k), o]` (rows: the group's channels times the kernel taps, columns: the output
positions) holds the padded input tap that output position `o` sees through kernel tap
`k` of channel `c` (zero in the padding). A convolution is then one BLAS gemm per image
and group:

- `ag.conv`:              `out[n, group] = W[group] · col`;
- `ag.conv_grad_weights`: `gW[group] += grad[n, group] · colᵀ` (summed over the batch);
- `ag.conv_grad_inputs`:  `col = W[group]ᵀ · grad[n, group]`, then *col2im* adds each
  entry of `col` into the input position it came from (padding dropped).

The im2col loops run the last output axis innermost, so a unit stride reads the input
row contiguously; an axis without padding needs no bounds test (the output lengths keep
every tap inside the input). Filters and output gradients that are not contiguous are
copied into a contiguous temporary for BLAS; the input may have any layout. The result
buffer is dense (a contiguous buffer, or a dense view with an offset).

Shape rules (value rules: they do index arithmetic, `ag_shapes.VALUE_SHAPE_RULES`)
compute the output lengths `(n + 2p - d(k - 1) - 1) / s + 1` and check, at run time,
that the kernel fits, that the channels agree with `groups` and that an output gradient
has the convolution's shape; the messages are the interpreter's (`interpreter_conv`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, NoneAttr
from xdsl.ir import Operation, SSAValue

from arignote.dialects import ag
from arignote.dialects.ag.conv import pad_text
from arignote.lowering.loops import ag_scalar, parallel_loops
from arignote.lowering.loops.ag_blas import (
    NO_TRANS,
    ROW_MAJOR,
    TRANS,
    _address,
    _i32,
    _i32_constant,
    _pointer,
    _prefix,
    _result_address,
)
from arignote.lowering.loops.ag_indexing import (
    Cond,
    Idx,
    _equal,
    _holds,
    add,
    both,
    cmp,
    div,
    mul,
    rem,
    select,
    sub,
)
from arignote.lowering.loops.ag_kernels import KERNELS, copy
from arignote.lowering.loops.ag_shapes import VALUE_SHAPE_RULES, Check, ShapeContext, op_label
from arignote.lowering.loops.loop_utils import (
    Buffer,
    Dim,
    as_index,
    for_loop,
    index_constant,
    load,
    store,
)

GroupBody = Callable[[Builder, SSAValue, int], None]
"""`body(builder, n, group)`: the work of one image and channel group."""

# --- shape rules -----------------------------------------------------------------------


def _pad(b: Builder, op: ag.ConvBase, axis: int, kernel: Dim) -> Idx:
    """The zeros `op` adds on each side of spatial `axis` for a kernel of length
    `kernel` (`'half'` and `'full'` follow the kernel length, maybe known at run time
    only)."""
    p = op.params
    pad, d = p.pads[axis], p.dilations[axis]
    if pad == ag.PAD_HALF:
        return div(b, add(b, mul(b, sub(b, kernel, 1), d), 1), 2)
    if pad == ag.PAD_FULL:
        return mul(b, sub(b, kernel, 1), d)
    return pad


def _out_lengths(
    b: Builder, op: ag.ConvBase, sizes: Sequence[Dim], kernel: Sequence[Dim]
) -> tuple[list[Idx], list[Check]]:
    """The output lengths and the checks that the (dilated) kernel fits the padded
    input along every axis."""
    p = op.params
    outs: list[Idx] = []
    checks: list[Check] = []
    label = op_label(op)
    for axis, (n, k) in enumerate(zip(sizes, kernel, strict=True)):
        s, d, q = p.strides[axis], p.dilations[axis], _pad(b, op, axis, k)
        span = sub(b, add(b, n, mul(b, q, 2)), add(b, mul(b, sub(b, k, 1), d), 1))
        empty_message = f"{label}: the filters have an empty spatial axis {axis}: %d"
        checks += _holds(empty_message, cmp(b, "sge", k, 1), k, k, (k,))
        fits = cmp(b, "sge", span, 0)
        message = (
            f"{label}: along spatial axis {axis}, the filter length %d (dilation {d}) does "
            f"not fit the input length %d padded by {pad_text(p.pads[axis])}"
        )
        checks += _holds(message, fits, k, n)
        outs.append(add(b, div(b, select(b, fits, span, 0), s), 1))
    return outs, checks


def _group_checks(op: ag.ConvBase, b: Builder, channels: Dim, per_group: Dim) -> list[Check]:
    groups = op.params.groups
    message = (
        f"{op_label(op)}: the input has %d channels but the filters take %d per group of {groups}"
    )
    return _equal(message, channels, mul(b, per_group, groups), (channels, per_group))


def _multiple_check(op: ag.ConvBase, b: Builder, out_channels: Dim) -> list[Check]:
    groups = op.params.groups
    if groups == 1:
        return []
    message = f"{op_label(op)}: %d output channels are not a multiple of {groups} groups"
    ok = cmp(b, "eq", rem(b, out_channels, groups), 0)
    return _holds(message, ok, out_channels, out_channels, (out_channels,))


def _grad_checks(op: ag.ConvBase, grad: Sequence[Dim], expected: Sequence[Idx]) -> list[Check]:
    shown = ", ".join("%d" for _ in grad)
    message = (
        f"{op_label(op)}: the output gradient has shape ({shown}), the convolution gives ({shown})"
    )
    checks: list[Check] = []
    for g, e in zip(grad, expected, strict=True):
        checks += _equal(message, g, e, (*grad, *expected))
    return checks


def conv_rule(
    op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext
) -> tuple[list[Dim], list[Check]]:
    assert isinstance(op, ag.ConvOp)
    b = context.builder
    x, w = dims
    checks = _group_checks(op, b, x[1], w[1]) + _multiple_check(op, b, w[0])
    outs, fit = _out_lengths(b, op, x[2:], w[2:])
    return [x[0], w[0], *outs], checks + fit


def _sizes(context: ShapeContext, count: int) -> list[Dim]:
    return [context.value(2 + i) for i in range(count)]


def grad_weights_rule(
    op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext
) -> tuple[list[Dim], list[Check]]:
    assert isinstance(op, ag.ConvGradWeightsOp)
    b = context.builder
    x, gy = dims[0], dims[1]
    groups = op.params.groups
    kernel = _sizes(context, len(x) - 2)
    checks = _multiple_check(op, b, x[1]) + _multiple_check(op, b, gy[1])
    outs, fit = _out_lengths(b, op, x[2:], kernel)
    checks += fit + _grad_checks(op, gy, [x[0], gy[1], *outs])
    return [gy[1], div(b, x[1], groups), *kernel], checks


def grad_inputs_rule(
    op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext
) -> tuple[list[Dim], list[Check]]:
    assert isinstance(op, ag.ConvGradInputsOp)
    b = context.builder
    gy, w = dims[0], dims[1]
    sizes = _sizes(context, len(w) - 2)
    checks = _multiple_check(op, b, w[0])
    outs, fit = _out_lengths(b, op, sizes, w[2:])
    checks += fit + _grad_checks(op, gy, [gy[0], w[0], *outs])
    return [gy[0], mul(b, w[1], op.params.groups), *sizes], checks


# --- kernels ---------------------------------------------------------------------------


class _Geometry:
    """The lengths one kernel works with, as `Idx` (ints where static)."""

    def __init__(self, b: Builder, x: Sequence[Dim], w: Sequence[Dim], out: Sequence[Dim]):
        self.batch = x[0]
        self.out_channels = w[0]
        self.per_group = w[1]  # input channels per group
        self.sizes = list(x[2:])
        self.kernel = list(w[2:])
        self.outs = list(out)
        self.taps = _product(b, self.kernel)
        self.rows = mul(b, self.per_group, self.taps)  # of col
        self.cols = _product(b, self.outs)  # of col


def _product(b: Builder, values: Sequence[Idx]) -> Idx:
    total: Idx = 1
    for v in values:
        total = mul(b, total, v)
    return total


def _flat(b: Builder, ivs: Sequence[SSAValue], lengths: Sequence[Idx]) -> Idx:
    """The row-major position of `ivs` in an array of `lengths`."""
    flat: Idx = ivs[0]
    for iv, n in zip(ivs[1:], lengths[1:], strict=True):
        flat = add(b, mul(b, flat, n), iv)
    return flat


def _alloc(b: Builder, element: object, rows: Idx, cols: Idx) -> Buffer:
    t = MemRefType(element, [DYNAMIC_INDEX, DYNAMIC_INDEX])  # pyright: ignore[reportArgumentType]
    lengths = [as_index(b, rows), as_index(b, cols)]
    return Buffer(b.insert(memref.AllocOp(lengths, [], t)).memref, (rows, cols))


def _dense(b: Builder, source: Buffer) -> tuple[Buffer, SSAValue | None]:
    """`source`, or a contiguous copy of it (and the copy to free) unless its type says
    it is contiguous."""
    if isinstance(source.type.layout, NoneAttr):
        return source, None
    t = MemRefType(source.element_type, [DYNAMIC_INDEX] * len(source.dims))
    lengths = [as_index(b, d) for d in source.dims]
    temp = Buffer(b.insert(memref.AllocOp(lengths, [], t)).memref, source.dims)
    copy(b, source, temp)
    return temp, temp.memref


def _tap_positions(
    b: Builder, op: ag.ConvBase, k: Sequence[SSAValue], o: Sequence[SSAValue], g: _Geometry
) -> tuple[list[SSAValue], Cond]:
    """The input positions (clamped into the input) that output position `o` reads
    through tap `k`, and whether they are inside the input (not padding)."""
    p = op.params
    positions: list[SSAValue] = []
    inside: Cond = True
    for axis, (ki, oi) in enumerate(zip(k, o, strict=True)):
        pad = _pad(b, op, axis, g.kernel[axis])
        at = sub(b, add(b, mul(b, oi, p.strides[axis]), mul(b, ki, p.dilations[axis])), pad)
        if pad != 0:
            ok = both(b, cmp(b, "sge", at, 0), cmp(b, "slt", at, g.sizes[axis]))
            inside = both(b, inside, ok)
            at = select(b, ok, at, 0)
        positions.append(as_index(b, at))
    return positions, inside


def _im2col(
    b: Builder, op: ag.ConvBase, x: Buffer, col: Buffer, n: SSAValue, first: Idx, g: _Geometry
) -> None:
    """`col[(c, k), o]` = padded `x[n, first + c]` at the tap `k` of output `o`."""
    rank = len(g.kernel)
    zero = ag_scalar.constant(b, 0, x.element_type)
    bounds = [as_index(b, d) for d in (g.per_group, *g.kernel, *g.outs)]

    def body(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        c, k, o = ivs[0], ivs[1 : 1 + rank], ivs[1 + rank :]
        positions, inside = _tap_positions(inner, op, k, o, g)
        channel = as_index(inner, add(inner, first, c))
        value = load(inner, x, [n, channel, *positions])
        if not isinstance(inside, bool):
            value = inner.insert(arith.SelectOp(inside, value, zero)).result
        row = add(inner, mul(inner, c, g.taps), _flat(inner, k, g.kernel))
        store(inner, value, col, [as_index(inner, row), as_index(inner, _flat(inner, o, g.outs))])

    parallel_loops.independent_nest(b, bounds, body)  # each col element written once


def _col2im(
    b: Builder,
    op: ag.ConvBase,
    col: Buffer,
    out: Buffer,
    n: SSAValue,
    first: Idx,
    g: _Geometry,
    channels: Idx,
) -> None:
    """Adds `col[(c, k), o]` into `out[n, first + c]` for `c < channels` at the tap `k`
    of output `o` (entries that fall in the padding are dropped: 0 is added instead)."""
    rank = len(g.kernel)
    zero = ag_scalar.constant(b, 0, out.element_type)
    add_op = ag_scalar.BINARY[ag.AddOp]
    bounds = [as_index(b, d) for d in (channels, *g.kernel, *g.outs)]

    def body(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        c, k, o = ivs[0], ivs[1 : 1 + rank], ivs[1 + rank :]
        positions, inside = _tap_positions(inner, op, k, o, g)
        row = add(inner, mul(inner, c, g.taps), _flat(inner, k, g.kernel))
        value = load(inner, col, [as_index(inner, row), as_index(inner, _flat(inner, o, g.outs))])
        if not isinstance(inside, bool):
            value = inner.insert(arith.SelectOp(inside, value, zero)).result
        at = [n, as_index(inner, add(inner, first, c)), *positions]
        store(inner, add_op(inner, load(inner, out, at), value), out, at)

    # overlapping taps add into the same elements of a channel: channels in parallel
    parallel_loops.independent_outer(b, bounds, body)


def _fill_zero(b: Builder, out: Buffer, count: Idx) -> None:
    """Zeros in the first `count` elements along axis 0 of `out`."""
    zero = ag_scalar.constant(b, 0, out.element_type)
    bounds = [as_index(b, count), *(as_index(b, d) for d in out.dims[1:])]
    parallel_loops.independent_nest(
        b, bounds, lambda inner, ivs: store(inner, zero, out, ivs), [out]
    )


def _at(b: Builder, base: SSAValue, elements: Idx, element_size: int) -> SSAValue:
    """`base` (an address) moved by `elements` elements, as `!llvm.ptr`."""
    delta = mul(b, elements, element_size)
    return _pointer(b, as_index(b, add(b, base, delta)))


def _gemm(
    b: Builder,
    element: object,
    transposes: tuple[bool, bool],
    mnk: tuple[Idx, Idx, Idx],
    a: tuple[SSAValue, Idx],
    bb: tuple[SSAValue, Idx],
    c: tuple[SSAValue, Idx],
    beta: float,
) -> None:
    """`C = op(A)·op(B) + beta C` in row-major order (pointers and leading dimensions)."""
    m, n, k = (_i32(b, as_index(b, v)) for v in mnk)
    one = ag_scalar.constant(b, 1, element)  # pyright: ignore[reportArgumentType]
    args = [
        _i32_constant(b, ROW_MAJOR),
        _i32_constant(b, TRANS if transposes[0] else NO_TRANS),
        _i32_constant(b, TRANS if transposes[1] else NO_TRANS),
        m,
        n,
        k,
        one,
        a[0],
        _i32(b, as_index(b, a[1])),
        bb[0],
        _i32(b, as_index(b, bb[1])),
        ag_scalar.constant(b, beta, element),  # pyright: ignore[reportArgumentType]
        c[0],
        _i32(b, as_index(b, c[1])),
    ]
    b.insert(func.CallOp(f"scipy_cblas_{_prefix(element)}gemm", args, []))  # pyright: ignore[reportArgumentType]


def _max1(b: Builder, v: Idx) -> Idx:
    return select(b, cmp(b, "sgt", v, 1), v, 1)


def _per_image(b: Builder, batch: Idx, groups: int, body: GroupBody) -> None:
    """`body(builder, n, group)` for every image and group."""
    zero, one = index_constant(b, 0), index_constant(b, 1)

    def image(inner: Builder, n: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
        for group in range(groups):
            body(inner, n, group)
        return ()

    for_loop(b, zero, as_index(b, batch), one, (), image)


def _element_size(element: object) -> int:
    return 4 if _prefix(element) == "s" else 8  # pyright: ignore[reportArgumentType]


def emit_conv(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """`out[n, group] = W[group] · im2col(x[n], group)` by `cblas_?gemm`."""
    assert isinstance(op, ag.ConvOp)
    x, w_in = ins
    g = _Geometry(b, x.dims, w_in.dims, out.dims[2:])
    groups = op.params.groups
    fg = div(b, g.out_channels, groups)
    w, w_temp = _dense(b, w_in)
    t, size = out.element_type, _element_size(out.element_type)
    col = _alloc(b, t, g.rows, g.cols)
    empty = cmp(b, "eq", g.rows, 0)
    _fill_zero(b, out, select(b, empty, g.batch, 0))  # BLAS does nothing when k is 0
    w_base, out_base = _address(b, w.memref, None), _result_address(b, out)
    col_ptr = _pointer(b, _address(b, col.memref, None))
    m = select(b, empty, 0, fg)

    def one(inner: Builder, n: SSAValue, group: int) -> None:
        _im2col(inner, op, x, col, n, mul(inner, g.per_group, group), g)
        w_at = _at(inner, w_base, mul(inner, mul(inner, fg, group), g.rows), size)
        row = add(inner, mul(inner, n, g.out_channels), mul(inner, fg, group))
        out_at = _at(inner, out_base, mul(inner, row, g.cols), size)
        _gemm(
            inner,
            t,
            (False, False),
            (m, g.cols, g.rows),
            (w_at, _max1(inner, g.rows)),
            (col_ptr, g.cols),
            (out_at, g.cols),
            0.0,
        )

    _per_image(b, g.batch, groups, one)
    b.insert(memref.DeallocOp.get(col.memref))
    if w_temp is not None:
        b.insert(memref.DeallocOp.get(w_temp))


def emit_grad_weights(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """`gW[group] = sum_n grad[n, group] · im2col(x[n], group)ᵀ` by `cblas_?gemm`."""
    assert isinstance(op, ag.ConvGradWeightsOp)
    x, gy_in = ins[0], ins[1]
    g = _Geometry(b, x.dims, out.dims, gy_in.dims[2:])
    groups = op.params.groups
    fg = div(b, g.out_channels, groups)
    gy, gy_temp = _dense(b, gy_in)
    t, size = out.element_type, _element_size(out.element_type)
    _fill_zero(b, out, out.dims[0])
    col = _alloc(b, t, g.rows, g.cols)
    gy_base, out_base = _address(b, gy.memref, None), _result_address(b, out)
    col_ptr = _pointer(b, _address(b, col.memref, None))

    def one(inner: Builder, n: SSAValue, group: int) -> None:
        _im2col(inner, op, x, col, n, mul(inner, g.per_group, group), g)
        row = add(inner, mul(inner, n, g.out_channels), mul(inner, fg, group))
        gy_at = _at(inner, gy_base, mul(inner, row, g.cols), size)
        out_at = _at(inner, out_base, mul(inner, mul(inner, fg, group), g.rows), size)
        _gemm(
            inner,
            t,
            (False, True),
            (fg, g.rows, g.cols),
            (gy_at, g.cols),
            (col_ptr, g.cols),
            (out_at, _max1(inner, g.rows)),
            1.0,
        )

    _per_image(b, g.batch, groups, one)
    b.insert(memref.DeallocOp.get(col.memref))
    if gy_temp is not None:
        b.insert(memref.DeallocOp.get(gy_temp))


def emit_grad_inputs(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """`gX[n] = col2im(W[group]ᵀ · grad[n, group])` by `cblas_?gemm`."""
    assert isinstance(op, ag.ConvGradInputsOp)
    gy_in, w_in = ins[0], ins[1]
    g = _Geometry(b, out.dims, w_in.dims, gy_in.dims[2:])
    groups = op.params.groups
    fg = div(b, g.out_channels, groups)
    gy, gy_temp = _dense(b, gy_in)
    w, w_temp = _dense(b, w_in)
    t, size = out.element_type, _element_size(out.element_type)
    _fill_zero(b, out, out.dims[0])
    col = _alloc(b, t, g.rows, g.cols)
    w_base, gy_base = _address(b, w.memref, None), _address(b, gy.memref, None)
    col_ptr = _pointer(b, _address(b, col.memref, None))
    # with no filter per group BLAS writes nothing into col: then col2im adds nothing
    # (the result is zeros)
    channels = select(b, cmp(b, "eq", fg, 0), 0, g.per_group)

    def one(inner: Builder, n: SSAValue, group: int) -> None:
        w_at = _at(inner, w_base, mul(inner, mul(inner, fg, group), g.rows), size)
        row = add(inner, mul(inner, n, g.out_channels), mul(inner, fg, group))
        gy_at = _at(inner, gy_base, mul(inner, row, g.cols), size)
        _gemm(
            inner,
            t,
            (True, False),
            (g.rows, g.cols, fg),
            (w_at, _max1(inner, g.rows)),
            (gy_at, g.cols),
            (col_ptr, g.cols),
            0.0,
        )
        _col2im(inner, op, col, out, n, mul(inner, g.per_group, group), g, channels)

    _per_image(b, g.batch, groups, one)
    b.insert(memref.DeallocOp.get(col.memref))
    for temp in (gy_temp, w_temp):
        if temp is not None:
            b.insert(memref.DeallocOp.get(temp))


VALUE_SHAPE_RULES.update(
    {
        ag.ConvOp: conv_rule,
        ag.ConvGradWeightsOp: grad_weights_rule,
        ag.ConvGradInputsOp: grad_inputs_rule,
    }
)
KERNELS.update(
    {
        ag.ConvOp: emit_conv,
        ag.ConvGradWeightsOp: emit_grad_weights,
        ag.ConvGradInputsOp: emit_grad_inputs,
    }
)
