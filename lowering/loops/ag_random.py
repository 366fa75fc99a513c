"""`ag.mrg_uniform` (MRG31k3p, `dialects/ag/random.py`) in `ag-to-loops`.

Importing this module registers the op's shape rule (`MULTI_VALUE_SHAPE_RULES`: the
sample shape read from the `dynamic` operands; run-time checks that no length is
negative, that the state has a stream and 6 columns, and that there are at most `2**31 - 1` samples,
Theano's limit) and its kernel (`MULTI_KERNELS`).

The kernel copies the state into the new state (viewed as rows of 6 `i32` words)
and steps it in place: a loop over rounds `r`, in each an inner loop over the streams
`k` (independent, so the iterations overlap and LLVM may vectorise them) that loads a
stream's six words, runs one MRG31k3p step, stores the words back and stores the
sample at flat position `r * n + k` (the last round stops at the sample count): Theano's
order. With parallel loops, the streams are split into ranges, one per part, each
running every round over its range. Only `arith` integer ops and one `sitofp`/`mulf`
per sample (`mrg_step`, `to_unit_float`): the same step can become a GPU thread's
body (one stream a thread). The samples are written through a flat row-major view of
the result buffer (`memref.reinterpret_cast`), or through a flat scratch buffer copied
into a strided one (the state likewise).

```mlir
%s2, %u = ag.mrg_uniform %s[%n] {shape = array<i64: -9223372036854775808>}
    : tensor<?x6xi32>, tensor<i64> -> tensor<?x6xi32>, tensor<?xf32>
// becomes (%words: the new state as memref<?x6xi32>, a copy of %s):
scf.for %r = %c0 to %rounds step %c1 {
  scf.for %k = %c0 to %streams_this_round step %c1 {
    %w:6 = memref.load %words[%k, %c0..%c5]; <one step>; memref.store ... %words[%k, ..]
    memref.store %sample, %flat[%r * %n + %k] } }
```
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, NoneAttr, f32, i32
from xdsl.ir import Attribute, Operation, SSAValue

from arignote.dialects import ag
from arignote.dialects.ag import random
from arignote.lowering.loops import ag_scalar, parallel_loops
from arignote.lowering.loops.ag_kernels import MULTI_KERNELS, copy
from arignote.lowering.loops.ag_shapes import (
    MULTI_VALUE_SHAPE_RULES,
    Check,
    ShapeContext,
    op_label,
    shape_text,
)
from arignote.lowering.loops.loop_utils import (
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
    assert isinstance(op, ag.MrgUniformOp | ag.MrgBinomialOp)
    b = context.builder
    first = len(op.operands) - len(op.dynamic)
    values = iter(context.value(first + k) for k in range(len(op.dynamic)))
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


STEP_WORK = 30
"""The units of parallel work (elementwise ops, see `parallel_loops`) of one sample: an
MRG31k3p step is about 30 integer ops."""

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


def _words(b: Builder, state: Buffer, new_state: Buffer) -> tuple[Buffer, bool]:
    """A copy of the state (one flat loop when both are contiguous) as
    `memref<?x6xi32>`: the new state's buffer viewed so when its layout is the identity,
    else a scratch buffer (True: copy it into the new state after the rounds). The
    columns are checked to be 6; a static row length lets LLVM vectorise the rounds'
    loads and stores (an interleaved group)."""
    rows = as_index(b, new_state.dims[0])
    view = MemRefType(i32, [DYNAMIC_INDEX, 6])
    if not isinstance(new_state.type.layout, NoneAttr):
        scratch = b.insert(memref.AllocOp.get(i32, shape=[DYNAMIC_INDEX, 6], dynamic_sizes=[rows]))
        words = Buffer(scratch.memref, (rows, 6))
        copy(b, state, words)
        return words, True
    copy(b, state, new_state)
    cast = memref.ReinterpretCastOp(
        new_state.memref, [], [rows], [], [0], [DYNAMIC_INDEX, 6], [6, 1], view
    )
    return Buffer(b.insert(cast).result, (rows, 6)), False


def _ceil_div(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    """`ceil(x / y)` of `index` values, `x >= 0`, `y > 0`."""
    less_one = b.insert(arith.SubiOp(y, index_constant(b, 1))).result
    return b.insert(arith.DivUIOp(b.insert(arith.AddiOp(x, less_one)), y)).result


Finish = Callable[[Builder, SSAValue], SSAValue]
"""The element stored for a sample's integer in `1..M1` (`to_unit_float`, or a mask)."""


def emit_streams(
    b: Builder,
    span: tuple[SSAValue, SSAValue],
    words: Buffer,
    flat: SSAValue,
    sizes: tuple[SSAValue, SSAValue],
    finish: Finish,
) -> None:
    """Streams `begin..end` (`span`) for every round: in round `r`, stream `k` gives
    the sample at flat position `r * n + k` (those below `total`). The streams of a
    round are independent, so the inner loop runs them side by side (and LLVM may
    vectorise it: the words are rows of 6)."""
    begin, end = span
    total, streams = sizes
    rounds = _ceil_div(b, total, streams)
    columns = [index_constant(b, c) for c in range(6)]

    def round_(inner: Builder, r: SSAValue, _: Sequence[SSAValue]) -> list[SSAValue]:
        first = inner.insert(arith.MuliOp(r, streams)).result
        left = inner.insert(arith.SubiOp(total, first)).result
        smaller = inner.insert(arith.CmpiOp(end, left, "ult")).result
        stop = inner.insert(arith.SelectOp(smaller, end, left)).result

        def stream(body: Builder, k: SSAValue, __: Sequence[SSAValue]) -> list[SSAValue]:
            current = [load(body, words, [k, c]) for c in columns]
            new, value = mrg_step(body, current)
            for word, c in zip(new, columns, strict=True):
                store(body, word, words, [k, c])
            position = body.insert(arith.AddiOp(first, k)).result
            body.insert(memref.StoreOp.get(finish(body, value), flat, [position]))
            return []

        for_loop(inner, begin, stop, index_constant(inner, 1), [], stream)
        return []

    for_loop(b, index_constant(b, 0), rounds, index_constant(b, 1), [], round_)


def _finish(b: Builder, op: Operation, ins: Sequence[Buffer], out: Attribute) -> Finish:
    """`ag.mrg_uniform`: the float sample; `ag.mrg_binomial`: `cast(u < p)`, `p` read
    once here."""
    if not isinstance(op, ag.MrgBinomialOp):
        return lambda inner, value: to_unit_float(inner, value, out)
    p = load(b, ins[1], [])
    drawn, compared = op.uniform_type, p.type

    def mask(inner: Builder, value: SSAValue) -> SSAValue:
        u = to_unit_float(inner, value, drawn)
        if compared != drawn:  # f32 uniforms compared with an f64 p: widened, exact
            u = inner.insert(arith.ExtFOp(u, compared)).result  # pyright: ignore[reportArgumentType]
        below = inner.insert(arith.CmpfOp(u, p, "olt")).result
        return ag_scalar.cast(inner, below, out)

    return mask


def emit_mrg_uniform(
    b: Builder, op: Operation, outs: Sequence[Buffer], ins: Sequence[Buffer]
) -> None:
    """The state copied into the new state, then the rounds over ranges of streams
    (ranges in parallel when parallel loops are on) stepping it in place."""
    new_state, sample = outs
    state = ins[0]
    finish = _finish(b, op, ins, sample.element_type)
    streams = as_index(b, state.dims[0])
    total = _total(b, sample.dims)
    flat, scratch = _flat(b, sample, total)
    words, words_scratch = _words(b, state, new_state)

    def part(inner: Builder, begin: SSAValue, end: SSAValue, _: SSAValue) -> None:
        emit_streams(inner, (begin, end), words, flat, (total, streams), finish)

    if parallel_loops.enabled() and not parallel_loops.inside_parallel(b):
        samples = _ceil_div(b, total, streams)
        work = b.insert(arith.MuliOp(samples, index_constant(b, STEP_WORK))).result
        parallel_loops.parallel_for(b, streams, work, 8, part)
    else:
        part(b, index_constant(b, 0), streams, index_constant(b, 0))
    if words_scratch:
        copy(b, words, new_state)
        b.insert(memref.DeallocOp.get(words.memref))
    if scratch:
        _copy_back(b, flat, sample)


MULTI_VALUE_SHAPE_RULES[ag.MrgUniformOp] = mrg_uniform_rule
MULTI_VALUE_SHAPE_RULES[ag.MrgBinomialOp] = mrg_uniform_rule
MULTI_KERNELS[ag.MrgUniformOp] = emit_mrg_uniform
MULTI_KERNELS[ag.MrgBinomialOp] = emit_mrg_uniform
