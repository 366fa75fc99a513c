"""Parallel loops in `ag-to-loops`' kernels: when and how they emit `ag.parallel_for`.

`ag-to-loops{parallel_min_work=N}` (N > 0) lets the kernels below run their outer
loop as an `ag.parallel_for` (lowered by `parallelize` onto the thread pool) when the
loop does at least `N` units of work; with N = 0, the default, they emit the serial
loops they always did. A unit of work is one element of one elementwise op: a fused
loop over `n` elements whose region computes `c` ops does `n * c`, so that a cheap
loop needs more elements than a costly one before splitting pays (Theano's
`openmp_elemwise_minsize` is `N` for a single op). The test is made at run time by
the pool: the op's `min_trips` is `ceil(N / work per iteration)`.

Users: `ag.fused` elementwise loops (`ag_fused`: the outermost axis; a rank-1 loop in
chunks of `VECTOR_ALIGN` elements), the kernels of single elementwise ops (`ag_kernels`:
binary, unary, select, cast; one unit an element) and the row loop of `ag.gemv_pair`
(`ag_rowwise`: blocks of rows, one accumulator per part, summed after). Reductions and
copies stay serial.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, MemRefType, StringAttr
from xdsl.ir import Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from arignote.dialects import ag
from arignote.lowering.loops.loop_utils import Dim, as_index, for_loop, index_constant, loop_nest

VECTOR_ALIGN = 64
"""Chunks of a rank-1 parallel loop start at multiples of this many elements (whole
cache lines and whole vectors for every element type)."""

_MIN_WORK: ContextVar[int] = ContextVar("parallel_min_work", default=0)
_ALL: ContextVar[bool] = ContextVar("parallel_all", default=False)
_SOURCE: ContextVar[Operation | None] = ContextVar("parallel_source", default=None)

SOURCE_ATTRIBUTE = "ag.source"
"""On an `ag.parallel_for`: the op whose kernel emitted it (its name and `ag.node` label),
which the GPU target's profile shows for the kernel."""

REDUCTION_PARTS = 2048
"""A full reduction in parallel (`split_reduction`) has at most this many partial results."""

PartBody = Callable[[Builder, SSAValue, SSAValue, SSAValue], None]
"""`body(builder, begin, end, part)`: one part of a parallel loop."""


@contextmanager
def parallel_loops(min_work: int, every_loop: bool = False) -> Iterator[None]:
    """Within the block, kernels emit parallel loops of at least `min_work` units
    (none when it is 0); with `every_loop` (the GPU target), also the loops the CPU keeps
    serial: reductions (`reduction_domain`, `split_reduction`) and the nests of
    independent iterations (`independent_nest`: copies, fills, rows)."""
    if min_work < 0:
        raise ValueError(f"parallel_min_work must be >= 0, got {min_work}")
    token = _MIN_WORK.set(min_work)
    all_token = _ALL.set(every_loop and min_work > 0)
    try:
        yield
    finally:
        _ALL.reset(all_token)
        _MIN_WORK.reset(token)


@contextmanager
def emitting(op: Operation) -> Iterator[None]:
    """Within the block, the parallel loops emitted come from `op` (`SOURCE_ATTRIBUTE`)."""
    token = _SOURCE.set(op)
    try:
        yield
    finally:
        _SOURCE.reset(token)


def _source_label(op: Operation) -> str:
    """`op`'s name and the `ag.node` labels of the ops it holds (three at most)."""
    nodes = [
        inner.attributes["ag.node"].data  # type: ignore[union-attr]
        for inner in op.walk()
        if isinstance(inner.attributes.get("ag.node"), StringAttr)
    ]
    label = op.name
    if nodes:
        shown = list(dict.fromkeys(nodes))
        label += f" [{'; '.join(shown[:3])}{'; ...' if len(shown) > 3 else ''}]"
    return label


def enabled() -> bool:
    """Whether kernels emit parallel loops now."""
    return _MIN_WORK.get() > 0


def inside_parallel(b: Builder) -> bool:
    """Whether `b` inserts into the body of an `ag.parallel_for` (whose loops stay
    serial: parallel loops do not nest)."""
    block = b.insertion_point.block
    while block is not None:
        parent = block.parent_op()
        if isinstance(parent, ag.ParallelForOp):
            return True
        block = parent.parent_block() if parent is not None else None
    return False


def _product(b: Builder, values: Sequence[Dim], factor: int) -> Dim:
    """`factor` times `values`: an int when they are all static."""
    total: Dim = factor
    for value in values:
        if isinstance(total, int) and isinstance(value, int):
            total *= value
        elif total == 1:
            total = value
        else:
            total = b.insert(arith.MuliOp(as_index(b, total), as_index(b, value))).result
    return total


def min_trips(b: Builder, work_per_trip: Dim) -> SSAValue:
    """`ceil(min_work / max(work_per_trip, 1))`: the fewest iterations worth a split."""
    min_work = _MIN_WORK.get()
    if isinstance(work_per_trip, int):
        return index_constant(b, -(-min_work // max(work_per_trip, 1)))
    work = b.insert(arith.MaxUIOp(work_per_trip, index_constant(b, 1))).result
    need = b.insert(arith.AddiOp(index_constant(b, min_work - 1), work)).result
    return b.insert(arith.DivUIOp(need, work)).result


def statically_serial(
    trips: int | None, min_trips: int | None, align: int, max_parts: int | None = None
) -> bool:
    """Whether the pool runs a parallel loop of at most `trips` iterations (None:
    unknown) as one part whatever the run-time values: fewer than `min_trips`
    iterations, at most one `align`-sized chunk, or `max_parts` 1 (see
    `arignote.runtime.threadpool`)."""
    if max_parts == 1:
        return True
    if trips is None:
        return False
    return trips <= align or (min_trips is not None and trips < min_trips)


def runs_serially(
    upper: Dim, work_per_trip: Dim, align: int, max_parts: SSAValue | None = None
) -> bool:
    """Whether a parallel loop over `[0, upper)` (see `parallel_for`) would run in one
    part whatever the run-time values (`statically_serial` of what is constant)."""
    least = None
    if isinstance(work_per_trip, int):
        least = -(-_MIN_WORK.get() // max(work_per_trip, 1))
    most = None if max_parts is None else _static_or_none(max_parts)
    trips = upper if isinstance(upper, int) else _static_or_none(upper)
    return statically_serial(trips, least, align, most)


def parallel_for(
    b: Builder,
    upper: SSAValue,
    work_per_trip: Dim,
    align: int,
    body: PartBody,
    max_parts: SSAValue | None = None,
) -> SSAValue:
    """An `ag.parallel_for` over `[0, upper)`; returns its part count. When it would
    run in one part whatever the run-time values (`statically_serial`), the body on
    the whole range as part 0 in its place instead, and the count is 1."""
    if runs_serially(upper, work_per_trip, align, max_parts):
        zero = index_constant(b, 0)
        body(b, zero, upper, zero)
        return index_constant(b, 1)
    block = ag.ParallelForOp.body_block()
    inner = Builder(InsertPoint.at_end(block))
    body(inner, *block.args)
    inner.insert(ag.YieldOp())
    trips = min_trips(b, work_per_trip)
    zero = index_constant(b, 0)
    op = ag.ParallelForOp(zero, upper, trips, align, Region(block), max_parts)
    source = _SOURCE.get()
    if source is not None:
        op.attributes[SOURCE_ATTRIBUTE] = StringAttr(_source_label(source))
    return b.insert(op).parts


def _static(value: SSAValue) -> Dim:
    """`value` as an int when it is an `arith.constant`."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return value


def _static_or_none(value: SSAValue) -> int | None:
    known = _static(value)
    return known if isinstance(known, int) else None


def parallel_nest(
    b: Builder,
    bounds: Sequence[SSAValue],
    body: Callable[[Builder, Sequence[SSAValue]], None],
    cost: int,
) -> None:
    """`loop_nest(b, bounds, body)` whose outermost loop is an `ag.parallel_for`;
    each iteration of the nest does `cost` units of work. (A plain nest inside
    another parallel loop.)"""
    if inside_parallel(b):
        loop_nest(b, bounds, body)
        return
    if every_loop() and len(bounds) > 1:
        _flat_parallel_nest(b, bounds, body)
        return
    work = _product(b, [_static(v) for v in bounds[1:]], cost)
    one = index_constant(b, 1)

    def part(inner: Builder, begin: SSAValue, end: SSAValue, _: SSAValue) -> None:
        def outer(level: Builder, i: SSAValue, __: Sequence[SSAValue]) -> list[SSAValue]:
            loop_nest(level, bounds[1:], lambda nb, ivs: body(nb, [i, *ivs]))
            return []

        for_loop(inner, begin, end, one, [], outer)

    parallel_for(b, bounds[0], work, VECTOR_ALIGN if len(bounds) == 1 else 1, part)


def _flat_parallel_nest(
    b: Builder, bounds: Sequence[SSAValue], body: Callable[[Builder, Sequence[SSAValue]], None]
) -> None:
    """The nest as one parallel loop over its row-major positions, each iteration's
    indices recovered by division (the GPU target: every element a thread's iteration,
    neighbouring threads on neighbouring elements, so that loads coalesce)."""
    total = bounds[0]
    for bound in bounds[1:]:
        total = b.insert(arith.MuliOp(total, bound)).result
    one = index_constant(b, 1)

    def part(inner: Builder, begin: SSAValue, end: SSAValue, _: SSAValue) -> None:
        def each(level: Builder, k: SSAValue, __: Sequence[SSAValue]) -> list[SSAValue]:
            body(level, _delinearize(level, k, bounds))
            return []

        for_loop(inner, begin, end, one, [], each)

    parallel_for(b, total, 1, 1, part)


# --- every loop in parallel (the GPU target: `ag-to-loops{parallel_all=true}`) ------------


def every_loop() -> bool:
    """Whether every loop that can run in parallel does (the GPU target)."""
    return _ALL.get()


def independent_nest(
    b: Builder,
    bounds: Sequence[SSAValue],
    body: Callable[[Builder, Sequence[SSAValue]], None],
    buffers: Sequence[Any] = (),
) -> None:
    """`loop_nest(b, bounds, body, buffers)` for a nest whose iterations are independent
    (each writes only its own elements): a parallel nest when `every_loop()`."""
    if every_loop() and bounds and not inside_parallel(b):
        parallel_nest(b, bounds, body, 1)
    else:
        loop_nest(b, bounds, body, buffers)


def independent_outer(
    b: Builder, bounds: Sequence[SSAValue], body: Callable[[Builder, Sequence[SSAValue]], None]
) -> None:
    """`loop_nest(b, bounds, body)` whose iterations of the outermost loop are independent
    (the inner ones may write the same elements, as a scatter-add does): that loop parallel
    when `every_loop()`, the rest serial inside it."""
    if not (every_loop() and bounds) or inside_parallel(b):
        loop_nest(b, bounds, body)
        return

    def outer(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        loop_nest(inner, bounds[1:], lambda nb, rest: body(nb, [ivs[0], *rest]))

    parallel_nest(b, bounds[:1], outer, 1)


def reduction_domain(
    b: Builder, bounds: Sequence[SSAValue], body: Callable[[Builder, Sequence[SSAValue]], None]
) -> bool:
    """With parallel reductions on, the kept axes `bounds` of a reduction as a parallel
    nest (one result element an iteration, its reduction serial inside); returns whether
    it emitted it (else the caller emits its serial nest). A full reduction (no kept
    axis) is `split_reduction`'s."""
    if not (every_loop() and bounds) or inside_parallel(b):
        return False
    parallel_nest(b, bounds, body, 1)
    return True


def split_reduction(
    b: Builder,
    reduced: Sequence[SSAValue],
    init: Callable[[Builder], SSAValue],
    step: Callable[[Builder, Sequence[SSAValue], Sequence[SSAValue]], Sequence[SSAValue]],
    combine: Callable[[Builder, SSAValue, SSAValue], SSAValue],
) -> SSAValue | None:
    """With parallel reductions on, a full reduction over the nest `reduced` in two
    phases: `P = min(n, REDUCTION_PARTS)` parts in parallel, part p combining the
    elements p, p + P, p + 2P, ... of the nest in row-major order (so that neighbouring
    parts read neighbouring elements), each into its slot of a scratch buffer; then the
    P partial results combined in order. Returns the result (None when parallel
    reductions are off: the caller emits its serial nest)."""
    from xdsl.dialects import memref

    if not every_loop() or not reduced or inside_parallel(b):
        return None
    n = reduced[0]
    for bound in reduced[1:]:
        n = b.insert(arith.MuliOp(n, bound)).result
    parts = b.insert(arith.MinUIOp(n, index_constant(b, REDUCTION_PARTS))).result
    element_type = init(b).type
    scratch = b.insert(memref.AllocOp([parts], [], MemRefType(element_type, [DYNAMIC_INDEX])))
    one = index_constant(b, 1)

    def part(inner: Builder, begin: SSAValue, end: SSAValue, _: SSAValue) -> None:
        def each(level: Builder, p: SSAValue, __: Sequence[SSAValue]) -> list[SSAValue]:
            def gather(red: Builder, k: SSAValue, acc: Sequence[SSAValue]) -> Sequence[SSAValue]:
                return step(red, _delinearize(red, k, reduced), acc)

            (total,) = for_loop(level, p, n, parts, [init(level)], gather)
            level.insert(memref.StoreOp.get(total, scratch.memref, [p]))
            return []

        for_loop(inner, begin, end, one, [], each)

    parallel_for(b, parts, 1, 1, part)

    def fold(level: Builder, p: SSAValue, acc: Sequence[SSAValue]) -> list[SSAValue]:
        value = level.insert(memref.LoadOp.get(scratch.memref, [p])).res
        return [combine(level, acc[0], value)]

    (result,) = for_loop(b, index_constant(b, 0), parts, one, [init(b)], fold)
    b.insert(memref.DeallocOp.get(scratch.memref))
    return result


def _delinearize(b: Builder, k: SSAValue, bounds: Sequence[SSAValue]) -> list[SSAValue]:
    """The indices of the row-major position `k` in a nest of `bounds`."""
    indices: list[SSAValue] = []
    rest = k
    for bound in reversed(bounds[1:]):
        indices.insert(0, b.insert(arith.RemUIOp(rest, bound)).result)
        rest = b.insert(arith.DivUIOp(rest, bound)).result
    indices.insert(0, rest)
    return indices
