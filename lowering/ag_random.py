"""`ag.mrg_uniform` (MRG31k3p, `dialects/ag/random.py`) in `ag-to-loops`.

Importing this module registers the op's shape rule (`MULTI_VALUE_SHAPE_RULES`: the
sample shape read from the `dynamic` operands; run-time checks that no length is
negative, that the state has a stream and 6 columns, and that there are at most `2**31 - 1` samples,
Theano's limit) and its kernel (`MULTI_KERNELS`).

The kernel is one loop over the streams (an `ag.parallel_for` when parallel loops are
on: streams are independent) whose body loads the stream's six `i32` words, runs an
`scf.for` over the flat sample positions `s, s + n, s + 2n, ...` carrying them in
registers (one MRG31k3p step, an `i32` → float conversion and a store per position),
and stores the final words into the new state. Only `arith` integer ops and one
`sitofp`/`mulf`: the same loop body can become a GPU thread's body (one stream a
thread). The samples are written through a flat row-major view of the result buffer
(`memref.reinterpret_cast`), or through a flat scratch buffer copied into a strided one.

```mlir
%s2, %u = ag.mrg_uniform %s[%n] {shape = array<i64: -9223372036854775808>}
    : tensor<?x6xi32>, tensor<i64> -> tensor<?x6xi32>, tensor<?xf32>
// becomes, per stream %k (in an ag.parallel_for over [0, %streams)):
%w:6 = memref.load %state[%k, %c0..%c5] ...
%last:6 = scf.for %i = %k to %total step %streams iter_args(...) { <one step>;
    memref.store %sample, %flat[%i] }
memref.store %last#0, %new_state[%k, %c0] ...
```
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, NoneAttr, f32, i32
from xdsl.ir import Attribute, Operation, SSAValue

from arignote.dialects import ag
from arignote.dialects.ag import random
from arignote.lowering import ag_scalar, parallel_loops
from arignote.lowering.ag_kernels import MULTI_KERNELS
from arignote.lowering.ag_shapes import (
    MULTI_VALUE_SHAPE_RULES,
    Check,
    ShapeContext,
    op_label,
    shape_text,
)
from arignote.lowering.loop_utils import (
    Buffer,
    Dim,
    as_index,
    for_loop,
    index_constant,
    load,
    loop_nest,
    store,
)

# --- shape rule ------------------------------------------------------------------------


def _holds(message: str, ok: SSAValue, shown: tuple[Dim, ...]) -> Check:
    return Check(message, 0, 0, "holds", ok, shown)


def _index_cmp(b: Builder, predicate: str, x: Dim, y: Dim) -> SSAValue:
    return b.insert(arith.CmpiOp(as_index(b, x), as_index(b, y), predicate)).result


def mrg_uniform_rule(
    op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext
) -> tuple[list[list[Dim]], list[Check]]:
    """The state keeps its shape; the samples have `shape`'s lengths (the dynamic ones
    read from the operands)."""
    assert isinstance(op, ag.MrgUniformOp)
    b = context.builder
    values = iter(context.value(1 + k) for k in range(len(op.dynamic)))
    lengths: list[Dim] = [e if e != ag.DYNAMIC_VALUE else next(values) for e in op.shape_list]
    state_dims: list[Dim] = [dims[0][0], 6]
    if not context.emit_checks:
        return [state_dims, lengths], []
    label, (text, shown) = op_label(op), shape_text(lengths)
    checks: list[Check] = []
    total: Dim = 1
    for v in lengths:
        if not isinstance(v, int):
            message = f"{label}: size {text} has a negative length"
            checks.append(_holds(message, _index_cmp(b, "sge", v, 0), shown))
        total = v * total if isinstance(v, int) and isinstance(total, int) else _mul(b, total, v)
    streams, columns = dims[0]
    if not isinstance(columns, int):
        message = f"{label}: rstate must have 6 columns, got shape (%d, %d)"
        checks.append(Check(message, columns, 6, shown=(streams, columns)))
    if not isinstance(streams, int):
        message = f"{label}: rstate has no stream (shape (%d, 6))"
        checks.append(_holds(message, _index_cmp(b, "sgt", streams, 0), (streams,)))
    if not isinstance(total, int) or total > random.M1:
        message = f"{label}: rng_mrg does not support more than (2**31 - 1) samples (size {text})"
        checks.append(_holds(message, _index_cmp(b, "sle", total, random.M1), shown))
    return [state_dims, lengths], checks


def _mul(b: Builder, x: Dim, y: Dim) -> SSAValue:
    return b.insert(arith.MuliOp(as_index(b, x), as_index(b, y))).result


# --- one MRG31k3p step -----------------------------------------------------------------


class _I32:
    """`i32` arithmetic at a builder (wrapping, as the algorithm wants)."""

    def __init__(self, b: Builder):
        self.b = b

    def c(self, value: int) -> SSAValue:
        return ag_scalar.constant(self.b, value, i32)

    def add(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.b.insert(arith.AddiOp(x, y)).result

    def mask_shift(self, x: SSAValue, mask: int, shift: int) -> SSAValue:
        masked = self.b.insert(arith.AndIOp(x, self.c(mask))).result
        return self.b.insert(arith.ShLIOp(masked, self.c(shift))).result

    def shr(self, x: SSAValue, shift: int) -> SSAValue:
        return self.b.insert(arith.ShRSIOp(x, self.c(shift))).result

    def mul(self, x: SSAValue, factor: int) -> SSAValue:
        return self.b.insert(arith.MuliOp(x, self.c(factor))).result

    def reduce(self, y: SSAValue, modulus: int) -> SSAValue:
        """`y - modulus` where `y < 0 or y >= modulus`, else `y`."""
        m = self.c(modulus)
        negative = self.b.insert(arith.CmpiOp(y, self.c(0), "slt")).result
        big = self.b.insert(arith.CmpiOp(y, m, "sge")).result
        out = self.b.insert(arith.OrIOp(negative, big)).result
        lowered = self.b.insert(arith.SubiOp(y, m)).result
        return self.b.insert(arith.SelectOp(out, lowered, y)).result


def mrg_step(b: Builder, words: Sequence[SSAValue]) -> tuple[list[SSAValue], SSAValue]:
    """One step of a stream (`dialects/ag/random.py`): the six new words and the
    integer in `1..M1` the sample is made of."""
    x11, x12, x13, x21, x22, x23 = words
    a = _I32(b)
    y1 = a.add(
        a.add(a.mask_shift(x12, 511, 22), a.shr(x12, 9)),
        a.add(a.mask_shift(x13, 16777215, 7), a.shr(x13, 24)),
    )
    y1 = a.reduce(a.add(a.reduce(y1, random.M1), x13), random.M1)
    z1 = a.reduce(a.add(a.mask_shift(x21, 65535, 15), a.mul(a.shr(x21, 16), 21069)), random.M2)
    z2 = a.reduce(a.add(a.mask_shift(x23, 65535, 15), a.mul(a.shr(x23, 16), 21069)), random.M2)
    z2 = a.reduce(a.add(a.reduce(a.add(z2, x23), random.M2), z1), random.M2)
    difference = b.insert(arith.SubiOp(y1, z2)).result
    wraps = b.insert(arith.CmpiOp(y1, z2, "sle")).result
    shifted = a.add(difference, a.c(random.M1))
    value = b.insert(arith.SelectOp(wraps, shifted, difference)).result
    return [y1, x11, x12, z2, x21, x22], value


def to_unit_float(b: Builder, value: SSAValue, t: Attribute) -> SSAValue:
    """Theano's conversion of `1..M1` to a sample: exact times `2**-31` in `f64`;
    rounded to `f32`, times the `f32` `4.6566126e-10`, in `f32`."""
    norm = random.NORM_F32 if t == f32 else random.NORM_F64
    as_float = b.insert(arith.SIToFPOp(value, t)).result  # pyright: ignore[reportArgumentType]
    return b.insert(arith.MulfOp(as_float, ag_scalar.constant(b, norm, t))).result


# --- kernel ----------------------------------------------------------------------------


def _total(b: Builder, dims: Sequence[Dim]) -> SSAValue:
    total = index_constant(b, 1)
    for d in dims:
        total = b.insert(arith.MuliOp(total, as_index(b, d))).result
    return total


def _flat(b: Builder, out: Buffer, total: SSAValue) -> tuple[SSAValue, bool]:
    """A 1-D memref of the samples in row-major order: a view of `out` when its layout
    is the identity (contiguous), else a scratch buffer (True: copy it back)."""
    flat_type = MemRefType(out.element_type, [DYNAMIC_INDEX])
    if isinstance(out.type.layout, NoneAttr):
        cast = memref.ReinterpretCastOp(
            out.memref, [], [total], [], [0], [DYNAMIC_INDEX], [1], flat_type
        )
        return b.insert(cast).result, False
    scratch = memref.AllocOp.get(out.element_type, shape=[DYNAMIC_INDEX], dynamic_sizes=[total])
    return b.insert(scratch).memref, True


def _copy_back(b: Builder, flat: SSAValue, out: Buffer) -> None:
    strides: list[SSAValue] = []
    running = index_constant(b, 1)
    for d in reversed(out.dims):
        strides.insert(0, running)
        running = b.insert(arith.MuliOp(running, as_index(b, d))).result

    def body(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        position = index_constant(inner, 0)
        for iv, stride in zip(ivs, strides, strict=True):
            step = inner.insert(arith.MuliOp(iv, stride)).result
            position = inner.insert(arith.AddiOp(position, step)).result
        value = inner.insert(memref.LoadOp.get(flat, [position])).res
        store(inner, value, out, ivs)

    loop_nest(b, [as_index(b, d) for d in out.dims], body)
    b.insert(memref.DeallocOp.get(flat))


def emit_stream(
    b: Builder,
    k: SSAValue,
    buffers: tuple[Buffer, Buffer, SSAValue],
    bounds: tuple[SSAValue, SSAValue],
) -> None:
    """Stream `k`: its samples at flat positions `k, k + n, ...` below `total`."""
    state, new_state, flat = buffers
    total, streams = bounds
    columns = [index_constant(b, c) for c in range(6)]
    words = [load(b, state, [k, c]) for c in columns]
    t = flat.type.get_element_type()  # pyright: ignore[reportAttributeAccessIssue]

    def step(inner: Builder, i: SSAValue, carried: Sequence[SSAValue]) -> Sequence[SSAValue]:
        new, value = mrg_step(inner, carried)
        inner.insert(memref.StoreOp.get(to_unit_float(inner, value, t), flat, [i]))
        return new

    last = for_loop(b, k, total, streams, words, step)
    for word, c in zip(last, columns, strict=True):
        store(b, word, new_state, [k, c])


def emit_mrg_uniform(
    b: Builder, op: Operation, outs: Sequence[Buffer], ins: Sequence[Buffer]
) -> None:
    """The loop over streams (parallel when parallel loops are on)."""
    new_state, sample = outs
    state = ins[0]
    streams = as_index(b, state.dims[0])
    total = _total(b, sample.dims)
    flat, scratch = _flat(b, sample, total)
    buffers, bounds = (state, new_state, flat), (total, streams)
    one = index_constant(b, 1)

    def part(inner: Builder, begin: SSAValue, end: SSAValue, _: SSAValue) -> None:
        def each(level: Builder, k: SSAValue, __: Sequence[SSAValue]) -> list[SSAValue]:
            emit_stream(level, k, buffers, bounds)
            return []

        for_loop(inner, begin, end, one, [], each)

    if parallel_loops.enabled() and not parallel_loops.inside_parallel(b):
        per_stream = b.insert(arith.DivUIOp(total, streams)).result
        parallel_loops.parallel_for(b, streams, per_stream, 1, part)
    else:
        part(b, index_constant(b, 0), streams, index_constant(b, 0))
    if scratch:
        _copy_back(b, flat, sample)


MULTI_VALUE_SHAPE_RULES[ag.MrgUniformOp] = mrg_uniform_rule
MULTI_KERNELS[ag.MrgUniformOp] = emit_mrg_uniform
