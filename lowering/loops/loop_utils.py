"""Helpers that build `scf.for` loop nests over `memref`s with body-builder callbacks.

Used by `ag-to-loops`. Every helper inserts through an xDSL `Builder` at its current
insertion point; a body callback receives a `Builder` positioned inside the innermost
loop, the induction variables (outermost first) and, for reductions, the loop-carried
values, and returns the values to carry on. Loops run from 0 to their bound by 1, over
`index`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, MemRefType, ModuleOp, NoneAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from arignote.lowering.llvm.llvm_utils import integer_attr
from arignote.lowering.op_builder import build

INDEX = IndexType()

Dim = int | SSAValue
"""A dimension length: a compile-time constant or an `index` SSA value."""

NestBody = Callable[[Builder, Sequence[SSAValue]], None]
ReductionBody = Callable[[Builder, Sequence[SSAValue], Sequence[SSAValue]], Sequence[SSAValue]]


@dataclass(frozen=True)
class Buffer:
    """A memref holding a tensor value, with the lengths of its dimensions."""

    memref: SSAValue
    dims: tuple[Dim, ...]

    @property
    def type(self) -> MemRefType:
        t = self.memref.type
        assert isinstance(t, MemRefType)
        return t

    @property
    def shape(self) -> tuple[int, ...]:
        """The static shape of the memref type (`DYNAMIC_INDEX` for `?`)."""
        return self.type.get_shape()

    @property
    def element_type(self) -> Attribute:
        return self.type.get_element_type()


def index_constant(b: Builder, value: int) -> SSAValue:
    """An `arith.constant` of type `index`."""
    return b.insert(build(arith.ConstantOp, integer_attr(value, INDEX))).result


def as_index(b: Builder, dim: Dim) -> SSAValue:
    """`dim` as an `index` SSA value (a constant is materialized at `b`)."""
    return index_constant(b, dim) if isinstance(dim, int) else dim


def dynamic_sizes(b: Builder, shape: Sequence[int], dims: Sequence[Dim]) -> list[SSAValue]:
    """The operands of `memref.alloc` for a type of `shape`: the lengths of its `?` dims."""
    return [as_index(b, d) for s, d in zip(shape, dims, strict=True) if s == DYNAMIC_INDEX]


def memref_dims(b: Builder, value: SSAValue) -> tuple[Dim, ...]:
    """The lengths of `value`'s dimensions: static ones as ints, the rest via `memref.dim`."""
    t = value.type
    assert isinstance(t, MemRefType)
    dims: list[Dim] = []
    for axis, length in enumerate(t.get_shape()):
        if length != DYNAMIC_INDEX:
            dims.append(length)
            continue
        dim = b.insert(build(memref.DimOp, value, index_constant(b, axis))).result
        dim.name_hint = "d"
        dims.append(dim)
    return tuple(dims)


def for_loop(
    b: Builder,
    lower: SSAValue,
    upper: SSAValue,
    step: SSAValue,
    iter_args: Sequence[SSAValue],
    body: Callable[[Builder, SSAValue, Sequence[SSAValue]], Sequence[SSAValue]],
) -> Sequence[SSAValue]:
    """One `scf.for`; `body(builder, iv, carried)` returns the values to yield."""
    block = Block(arg_types=[IndexType(), *(a.type for a in iter_args)])
    block.args[0].name_hint = "i"
    inner = Builder(InsertPoint.at_end(block))
    yielded = body(inner, block.args[0], block.args[1:])
    inner.insert(build(scf.YieldOp, *yielded))
    return b.insert(scf.ForOp(lower, upper, step, iter_args, block)).results


def reduction_nest(
    b: Builder, bounds: Sequence[SSAValue], inits: Sequence[SSAValue], body: ReductionBody
) -> Sequence[SSAValue]:
    """A perfect nest of `scf.for` over `bounds` threading `inits` through `iter_args`.

    With no bounds, `body` runs once at `b` on `inits`. Returns the final values.
    """
    if not bounds:
        return body(b, (), inits)
    zero, one = index_constant(b, 0), index_constant(b, 1)
    return _nest(b, zero, one, bounds, (), inits, body)


REDUCTION_BLOCK = 1024
"""Length of the blocks `blocked_reduction_nest` sums separately."""

Fold = Callable[[Builder, Sequence[SSAValue], Sequence[SSAValue]], Sequence[SSAValue]]


def blocked_reduction_nest(
    b: Builder,
    bounds: Sequence[SSAValue],
    inits: Sequence[SSAValue],
    body: ReductionBody,
    fold: Fold,
    totals: Sequence[SSAValue],
) -> Sequence[SSAValue]:
    """`reduction_nest` whose innermost loop runs in blocks of `REDUCTION_BLOCK`: each
    block accumulates from `inits` (the identities, defined outside the nest) and
    `fold(builder, totals, partials)` adds its result into the running `totals` (which
    start from the given values, may carry more than the partials, e.g. a compensation
    term, and are what the nest returns).

    For a float sum this bounds the length of every sequential chain of additions (with
    `fastmath<reassoc>` on the body's additions LLVM splits a block further into vector
    lanes), which keeps the error close to NumPy's pairwise summation.
    """
    if not bounds:
        return fold(b, totals, body(b, (), inits))
    zero, one = index_constant(b, 0), index_constant(b, 1)
    block = index_constant(b, REDUCTION_BLOCK)
    last = bounds[-1]

    def innermost(
        inner: Builder, outer_ivs: Sequence[SSAValue], running: Sequence[SSAValue]
    ) -> Sequence[SSAValue]:
        def one_block(
            blk: Builder, start: SSAValue, running: Sequence[SSAValue]
        ) -> Sequence[SSAValue]:
            end = blk.insert(arith.AddiOp(start, block)).result
            inside = blk.insert(arith.CmpiOp(end, last, "slt")).result
            end = blk.insert(arith.SelectOp(inside, end, last)).result

            def element(el: Builder, iv: SSAValue, acc: Sequence[SSAValue]) -> Sequence[SSAValue]:
                return body(el, (*outer_ivs, iv), acc)

            partials = for_loop(blk, start, end, one, inits, element)
            return fold(blk, running, partials)

        return for_loop(inner, zero, last, block, running, one_block)

    if len(bounds) == 1:
        return innermost(b, (), totals)
    return _nest(b, zero, one, bounds[:-1], (), totals, innermost)


def _nest(
    b: Builder,
    zero: SSAValue,
    one: SSAValue,
    bounds: Sequence[SSAValue],
    outer_ivs: tuple[SSAValue, ...],
    carried: Sequence[SSAValue],
    body: ReductionBody,
) -> Sequence[SSAValue]:
    def level(inner: Builder, iv: SSAValue, values: Sequence[SSAValue]) -> Sequence[SSAValue]:
        ivs = (*outer_ivs, iv)
        if len(bounds) == 1:
            return body(inner, ivs, values)
        return _nest(inner, zero, one, bounds[1:], ivs, values, body)

    return for_loop(b, zero, bounds[0], one, carried, level)


def loop_nest(
    b: Builder, bounds: Sequence[SSAValue], body: NestBody, buffers: Sequence[Buffer] = ()
) -> None:
    """A perfect nest of `scf.for` over `bounds` (no loop when empty) around `body`.

    `buffers`, optional, promises that `body` touches memory only through these buffers,
    each indexed by exactly the nest's induction variables (same rank as the nest, no
    broadcast dimension). Then a nest of two or more loops gets a contiguous fast path:
    when every buffer is row-major contiguous (identity layouts are, strided ones are
    checked at run time with `memref.extract_strided_metadata`), ONE flat unit-stride
    loop over the product of the bounds runs `body` with indices `(0, ..., 0, i)`;
    otherwise (an `scf.if`) the nest runs. The flat loop indexes the last dimension past
    its length: the memref lowering turns indices into `offset + sum(index * stride)`
    without bounds, which for contiguous buffers is the flat position `i`. It is one
    loop that LLVM vectorises whatever the row length, with one prologue and epilogue.
    `body` is emitted twice then; it must not assume it runs once.
    """
    if len(bounds) >= 2 and buffers and all(_flattenable(x, len(bounds)) for x in buffers):
        _versioned_nest(b, bounds, body, buffers)
    else:
        _plain_nest(b, bounds, body)


def _plain_nest(b: Builder, bounds: Sequence[SSAValue], body: NestBody) -> None:
    def no_carry(
        inner: Builder, ivs: Sequence[SSAValue], _: Sequence[SSAValue]
    ) -> Sequence[SSAValue]:
        body(inner, ivs)
        return ()

    reduction_nest(b, bounds, (), no_carry)


def _flattenable(buffer: Buffer, rank: int) -> bool:
    return len(buffer.shape) == rank and 1 not in buffer.shape


def _contiguity_check(b: Builder, buffer: Buffer) -> SSAValue | None:
    """An `i1`: `buffer`'s strides are the row-major ones of its dims; None when its
    type says so (identity layout)."""
    if isinstance(buffer.type.layout, NoneAttr):
        return None
    strides = b.insert(memref.ExtractStridedMetaDataOp(buffer.memref)).strides
    expected = index_constant(b, 1)
    check: SSAValue | None = None
    for axis in reversed(range(len(buffer.dims))):
        same = b.insert(build(arith.CmpiOp, strides[axis], expected, "eq")).result
        check = same if check is None else b.insert(build(arith.AndIOp, check, same)).result
        if axis:
            expected = b.insert(
                build(arith.MuliOp, expected, as_index(b, buffer.dims[axis]))
            ).result
    return check


def _flat_loop(b: Builder, bounds: Sequence[SSAValue], body: NestBody) -> None:
    total = bounds[0]
    for bound in bounds[1:]:
        total = b.insert(build(arith.MuliOp, total, bound)).result
    zero, one = index_constant(b, 0), index_constant(b, 1)

    def flat(inner: Builder, iv: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
        body(inner, [zero] * (len(bounds) - 1) + [iv])
        return ()

    for_loop(b, zero, total, one, (), flat)


def _versioned_nest(
    b: Builder, bounds: Sequence[SSAValue], body: NestBody, buffers: Sequence[Buffer]
) -> None:
    checks = [c for c in (_contiguity_check(b, x) for x in buffers) if c is not None]
    if not checks:
        _flat_loop(b, bounds, body)
        return
    condition = checks[0]
    for check in checks[1:]:
        condition = b.insert(arith.AndIOp(condition, check)).result
    flat, nest = Block(), Block()
    _flat_loop(Builder(InsertPoint.at_end(flat)), bounds, body)
    _plain_nest(Builder(InsertPoint.at_end(nest)), bounds, body)
    for block in (flat, nest):
        block.add_op(scf.YieldOp())
    b.insert(scf.IfOp(condition, [], Region(flat), Region(nest)))


def load(b: Builder, buffer: Buffer, indices: Sequence[SSAValue]) -> SSAValue:
    return b.insert(build(memref.LoadOp.get, buffer.memref, indices)).res


def store(b: Builder, value: SSAValue, buffer: Buffer, indices: Sequence[SSAValue]) -> None:
    b.insert(build(memref.StoreOp.get, value, buffer.memref, indices))


def copy_in_order(
    b: Builder, source: Buffer, dest: Buffer, general: Callable[[Builder], None]
) -> None:
    """`dest`'s elements in row-major order = `source`'s (the same element count, ranks
    may differ: a reshape). When both are row-major contiguous (identity layouts are,
    strided ones are checked at run time), one flat unit-stride loop (indices
    `(0, ..., 0, i)`, see `loop_nest`) that LLVM vectorises; otherwise `general` emits
    the copy. A rank-0 buffer or a static 1 (maybe a broadcast) takes `general` only."""
    buffers = (source, dest)
    if any(not x.dims or 1 in x.shape for x in buffers):
        general(b)
        return
    checks = [c for c in (_contiguity_check(b, x) for x in buffers) if c is not None]

    def flat(inner: Builder) -> None:
        total = as_index(inner, dest.dims[0])
        for d in dest.dims[1:]:
            total = inner.insert(arith.MuliOp(total, as_index(inner, d))).result
        zero, one = index_constant(inner, 0), index_constant(inner, 1)

        def element(body: Builder, iv: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
            at = [zero] * (len(source.dims) - 1) + [iv]
            store(body, load(body, source, at), dest, [zero] * (len(dest.dims) - 1) + [iv])
            return ()

        for_loop(inner, zero, total, one, (), element)

    if not checks:
        flat(b)
        return
    condition = checks[0]
    for check in checks[1:]:
        condition = b.insert(arith.AndIOp(condition, check)).result
    fast, slow = Block(), Block()
    flat(Builder(InsertPoint.at_end(fast)))
    general(Builder(InsertPoint.at_end(slow)))
    for block in (fast, slow):
        block.add_op(scf.YieldOp())
    b.insert(scf.IfOp(condition, [], Region(fast), Region(slow)))


Calls = dict[str, func.CallOp]
"""The first `func.call` of each callee of a module, in walk order (`first_calls`)."""


def first_calls(op: Operation, calls: Calls | None = None) -> Calls:
    """The first `func.call` of each function `op` (a module) calls, in walk order; with
    `calls`, those of `op` (one appended to the module after the others: a helper
    function) added to it where new. The `declare_*_functions` of the lowering take
    these, so that adding the declarations walks the module once, not once each."""
    calls = {} if calls is None else calls
    for inner in op.walk():
        if isinstance(inner, func.CallOp):
            calls.setdefault(inner.callee.string_value(), inner)
    return calls


def declare_called_functions(
    module: ModuleOp, wanted: Callable[[str], bool], calls: Calls | None = None
) -> None:
    """Adds a `func.func private` declaration for each function whose name is `wanted`
    that `module` calls but does not declare, typed by its first call (`calls`: the
    module's `first_calls`, when the caller has them)."""
    declared = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
    if calls is None:
        calls = first_calls(module)
    for name in sorted(n for n in calls if wanted(n) and n not in declared):
        call = calls[name]
        inputs = [a.type for a in call.arguments]
        outputs = [r.type for r in call.results]
        module.body.block.add_op(func.FuncOp.external(name, inputs, outputs))
