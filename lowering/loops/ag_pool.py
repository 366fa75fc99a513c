"""Kernels and shape rules of the pooling ops (`ag.pool`, `ag.max_pool_grad`,
`ag.average_pool_grad`, `ag.max_pool_grad_grad`; `dialects/ag/pool.py`).

Accepts those ops (through `ag-to-loops`, which calls the kernels registered here) and
leaves `scf.for` loops over `memref.load`/`memref.store` and `arith` ops; with parallel
loops on, the outermost loop (a batch or channel axis) is an `ag.parallel_for`.

Window `o` of a pooled axis of length `h` reads the image positions `[lo, hi)`, with
`start = o*stride - pad`, `lo = max(start, 0)`, `hi = min(start + ws, h)`. Without
padding and with `ignore_border` every window lies inside the image: then `lo = start`
and `hi = start + ws`, a loop of a constant `ws` trips that LLVM unrolls.

- `pool`, `max_pool_grad_grad`: a gather per result element, one loop nest over its
  window carrying the maximum (`arith.maximumf`, NaN wins as in NumPy), the sum, or the
  sum of `eval` where `input == output` (with `ties = "first"` also a flag: only the
  first such position counts). Averages divide by `hi - lo` per axis
  (`average_exc_pad`) or by `min(start + ws, h + pad) - start` (`average_inc_pad`).
- `max_pool_grad`, `average_pool_grad`: with disjoint windows (`stride >= ws` on every
  axis) a gather per input position, which lies in at most the window `(r + pad) //
  stride`: one pass writing each position once. Otherwise a scatter per leading
  position (an image): the image's gradient is zeroed, then each window adds its output
  gradient (where `input == output`, or divided by the window's count) to its positions.
  Images are independent, so the leading axes run in parallel.

The shape rules compute the pooled lengths (`ag.pooled_length` in index arithmetic) and
check that the gradient operands have them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from arignote.dialects import ag
from arignote.lowering.loops import ag_scalar, parallel_loops
from arignote.lowering.loops.ag_indexing import (
    Cond,
    Idx,
    add,
    both,
    cmp,
    div,
    mul,
    select,
    smax,
    smin,
    sub,
)
from arignote.lowering.loops.ag_kernels import KERNELS
from arignote.lowering.loops.ag_shapes import (
    VALUE_SHAPE_RULES,
    Check,
    ShapeContext,
    op_label,
    shapes_text,
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

WindowBody = Callable[[Builder, Sequence[SSAValue], Sequence[SSAValue]], Sequence[SSAValue]]
"""`body(builder, image_indices, carried) -> carried`, at one position of a window."""


# --- shape rules -----------------------------------------------------------------------


def pooled_dim(b: Builder, h: Dim, ws: int, stride: int, pad: int, ignore_border: bool) -> Dim:
    """`ag.pooled_length` of a (possibly dynamic) length `h`."""
    if isinstance(h, int):
        return ag.pooled_length(h, ws, stride, pad, ignore_border)
    one: Idx = 1
    if ignore_border:
        span = sub(b, add(b, h, 2 * pad), ws)
        count = add(b, div(b, span, stride), one)
        return as_index(b, select(b, cmp(b, "sge", span, 0), count, 0))
    if stride >= ws:
        count = add(b, div(b, sub(b, h, one), stride), one)
    else:
        count = add(b, div(b, smax(b, sub(b, h, 1 + ws - stride), 0), stride), one)
    return as_index(b, select(b, cmp(b, "sgt", h, 0), count, 0))


def pooled_dims(b: Builder, op: ag.PoolBase, dims: Sequence[Dim]) -> list[Dim]:
    lead = len(dims) - op.nd
    window = zip(dims[lead:], op.ws_list, op.stride_list, op.pad_list, strict=True)
    border = op.ignore_border_value
    return [*dims[:lead], *(pooled_dim(b, h, w, s, p, border) for h, w, s, p in window)]


def _fits(op: ag.PoolBase, what: str, got: Sequence[Dim], expected: Sequence[Dim]) -> list[Check]:
    """`got` (an operand's dims) equals `expected`, dimension by dimension."""
    text, shown = shapes_text([got, expected])
    message = f"{op_label(op)}: the shapes of {what} and of the pooled input, {text}, differ"
    checks = [Check(message, a, e, shown=shown) for a, e in zip(got, expected, strict=True)]
    return [c for c in checks if not c.is_static]


def pool_rule(
    op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext
) -> tuple[list[Dim], list[Check]]:
    assert isinstance(op, ag.PoolOp)
    return pooled_dims(context.builder, op, dims[0]), []


def pool_grad_rule(
    op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext
) -> tuple[list[Dim], list[Check]]:
    """The input's shape; the pooled operands must have the pooled input's shape (and
    `max_pool_grad_grad`'s `eval` the input's)."""
    assert isinstance(op, ag.PoolBase)
    pooled = pooled_dims(context.builder, op, dims[0])
    if isinstance(op, ag.AveragePoolGradOp):
        return list(dims[0]), _fits(op, "grad", dims[1], pooled)
    checks = _fits(op, "output", dims[1], pooled)
    if isinstance(op, ag.MaxPoolGradOp):
        return list(dims[0]), checks + _fits(op, "grad", dims[2], pooled)
    return pooled, checks + _fits(op, "eval", dims[2], dims[0])


# --- windows ---------------------------------------------------------------------------


def _clipped(op: ag.PoolBase) -> bool:
    """Whether windows may cross the image's border (padding or a partial window)."""
    return max(op.pad_list) > 0 or not op.ignore_border_value


def window_bounds(
    b: Builder, op: ag.PoolBase, pooled: Sequence[SSAValue], image: Sequence[Dim]
) -> list[tuple[Idx, Idx, Idx]]:
    """Per pooled axis, `(lo, hi, start)` of the window at `pooled` (see the module)."""
    bounds: list[tuple[Idx, Idx, Idx]] = []
    for o, h, w, s, p in zip(pooled, image, op.ws_list, op.stride_list, op.pad_list, strict=True):
        start = sub(b, mul(b, o, s), p)
        end = add(b, start, w)
        if not _clipped(op):
            bounds.append((start, end, start))
            continue
        bounds.append((smax(b, start, 0), smin(b, end, h), start))
    return bounds


def window_count(
    b: Builder, op: ag.PoolBase, bounds: Sequence[tuple[Idx, Idx, Idx]], image: Sequence[Dim]
) -> Idx:
    """What a window's sum is divided by in the op's (average) mode."""
    count: Idx = 1
    for (lo, hi, start), h, w, p in zip(bounds, image, op.ws_list, op.pad_list, strict=True):
        if op.mode_value == "average_inc_pad":
            length = sub(b, smin(b, add(b, start, w), add(b, h, p)), start)
        else:
            length = sub(b, hi, lo)
        count = mul(b, count, length)
    return count


def window_loop(
    b: Builder,
    bounds: Sequence[tuple[Idx, Idx, Idx]],
    inits: Sequence[SSAValue],
    body: WindowBody,
) -> Sequence[SSAValue]:
    """A nest of `scf.for` over the window `bounds` (row-major) threading `inits`."""
    one = index_constant(b, 1)

    def level(k: int, inner: Builder, at: list[SSAValue], carried: Sequence[SSAValue]):
        if k == len(bounds):
            return body(inner, at, carried)
        lo, hi, _ = bounds[k]

        def step(nb: Builder, iv: SSAValue, c: Sequence[SSAValue]) -> Sequence[SSAValue]:
            return level(k + 1, nb, [*at, iv], c)

        return for_loop(inner, as_index(inner, lo), as_index(inner, hi), one, carried, step)

    return level(0, b, [], inits)


def _as_float(b: Builder, count: Idx, t: Attribute) -> SSAValue:
    """A window's count (an `index`) as a float of type `t`."""
    as_int = b.insert(arith.IndexCastOp(as_index(b, count), i64)).result
    return b.insert(arith.SIToFPOp(as_int, t)).result


def _nest(b: Builder, bounds: Sequence[SSAValue], body: Callable, cost: int) -> None:
    """`loop_nest` whose outermost loop runs in parallel when parallel loops are on."""
    if bounds and parallel_loops.enabled():
        parallel_loops.parallel_nest(b, bounds, body, cost)
    else:
        loop_nest(b, bounds, body)


def _cost(op: ag.PoolBase) -> int:
    cost = 1
    for w in op.ws_list:
        cost *= w
    return cost


# --- gathers: pool, max_pool_grad_grad -------------------------------------------------


def _reduce_window(b: Builder, op: ag.PoolOp, x: Buffer, ivs: Sequence[SSAValue]) -> SSAValue:
    lead = len(ivs) - op.nd
    image = x.dims[lead:]
    bounds = window_bounds(b, op, ivs[lead:], image)
    t = x.element_type
    is_max = op.mode_value == "max"
    combine = ag_scalar.BINARY[ag.MaximumOp if is_max else ag.AddOp]
    init = ag_scalar.reduction_init(b, ag.ReduceMaxOp if is_max else ag.ReduceSumOp, t)

    def body(inner: Builder, at: Sequence[SSAValue], c: Sequence[SSAValue]) -> Sequence[SSAValue]:
        return [combine(inner, c[0], load(inner, x, [*ivs[:lead], *at]))]

    (acc,) = window_loop(b, bounds, [init], body)
    if not op.mode_value.startswith("average"):
        return acc
    count = _as_float(b, window_count(b, op, bounds, image), t)
    return b.insert(arith.DivfOp(acc, count)).result


def emit_pool(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    assert isinstance(op, ag.PoolOp)
    x = ins[0]

    def element(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        store(inner, _reduce_window(inner, op, x, ivs), out, ivs)

    _nest(b, [as_index(b, d) for d in out.dims], element, _cost(op))


def _is_max(b: Builder, value: SSAValue, maximum: SSAValue) -> SSAValue:
    return ag_scalar.BINARY[ag.EqOp](b, value, maximum)


def emit_max_pool_grad_grad(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]):
    """Per window, the sum of `eval` where `input` equals the window's maximum (with
    `ties = "first"`, at the first such position only)."""
    assert isinstance(op, ag.MaxPoolGradGradOp)
    x, maximum, e = ins
    lead, first = len(x.dims) - op.nd, op.first_only

    def element(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        bounds = window_bounds(inner, op, ivs[lead:], x.dims[lead:])
        top = load(inner, maximum, ivs)
        zero = ag_scalar.constant(inner, 0, x.element_type)
        found = inner.insert(arith.ConstantOp.from_int_and_width(0, 1)).result

        def body(nb: Builder, at: Sequence[SSAValue], c: Sequence[SSAValue]):
            indices = [*ivs[:lead], *at]
            hit = _is_max(nb, load(nb, x, indices), top)
            if first:
                fresh = nb.insert(arith.XOrIOp(c[1], _true(nb))).result
                hit = nb.insert(arith.AndIOp(hit, fresh)).result
            term = nb.insert(arith.SelectOp(hit, load(nb, e, indices), zero)).result
            total = ag_scalar.BINARY[ag.AddOp](nb, c[0], term)
            return [total, nb.insert(arith.OrIOp(c[1], hit)).result]

        total, _ = window_loop(inner, bounds, [zero, found], body)
        store(inner, total, out, ivs)

    _nest(b, [as_index(b, d) for d in out.dims], element, _cost(op))


def _true(b: Builder) -> SSAValue:
    return b.insert(arith.ConstantOp.from_int_and_width(1, 1)).result


# --- scatters: max_pool_grad, average_pool_grad ----------------------------------------

Share = Callable[[Builder, Sequence[SSAValue], Sequence[tuple[Idx, Idx, Idx]]], SSAValue]
"""What a window (at result indices) gives each of its positions, before a test."""


def _scatter(
    b: Builder,
    op: ag.PoolBase,
    out: Buffer,
    pooled: Sequence[Dim],
    share: Share,
    test: Callable[[Builder, Sequence[SSAValue], Sequence[SSAValue], SSAValue], SSAValue],
) -> None:
    """Per image (leading position): zero `out`'s image, then every window adds
    `test(builder, pooled indices, image indices, share)` to each of its positions."""
    lead = len(out.dims) - op.nd
    image = out.dims[lead:]
    zero = ag_scalar.constant(b, 0, out.element_type)
    add_ = ag_scalar.BINARY[ag.AddOp]

    def one_image(inner: Builder, lead_ivs: Sequence[SSAValue]) -> None:
        def clear(nb: Builder, at: Sequence[SSAValue]) -> None:
            store(nb, zero, out, [*lead_ivs, *at])

        loop_nest(inner, [as_index(inner, d) for d in image], clear)

        def window(nb: Builder, pooled_ivs: Sequence[SSAValue]) -> None:
            ivs = [*lead_ivs, *pooled_ivs]
            bounds = window_bounds(nb, op, pooled_ivs, image)
            given = share(nb, ivs, bounds)

            def body(wb: Builder, at: Sequence[SSAValue], _: Sequence[SSAValue]):
                indices = [*lead_ivs, *at]
                term = test(wb, ivs, indices, given)
                store(wb, add_(wb, load(wb, out, indices), term), out, indices)
                return ()

            window_loop(nb, bounds, (), body)

        loop_nest(inner, [as_index(inner, d) for d in pooled[lead:]], window)

    lead_bounds = [as_index(b, d) for d in out.dims[:lead]]
    if lead_bounds and parallel_loops.enabled():
        parallel_loops.parallel_nest(b, lead_bounds, one_image, 4 * _cost(op))
    elif lead_bounds:
        loop_nest(b, lead_bounds, one_image)
    else:
        one_image(b, [])


# --- gathers for disjoint windows: max_pool_grad, average_pool_grad ---------------------

Term = Callable[[Builder, Sequence[SSAValue], list[SSAValue]], SSAValue]
"""What the window at pooled indices gives the input position at indices (both full)."""


def _disjoint(op: ag.PoolBase) -> bool:
    """Whether each input position lies in at most one window (`stride >= ws`)."""
    return all(s >= w for s, w in zip(op.stride_list, op.ws_list, strict=True))


def _gather_grad(
    b: Builder, op: ag.PoolBase, out: Buffer, pooled: Sequence[Dim], term: Term
) -> None:
    """`out[.., r] = term(window o of r)` where position `r` lies in window `o = (r +
    pad) // stride` (with `(r + pad) % stride < ws` and `o` < the window count), else 0:
    one pass writing each position once. The window index is clamped into range, so a
    load never leaves its buffer; with no window at all the result is zeros."""
    lead = len(out.dims) - op.nd
    zero = ag_scalar.constant(b, 0, out.element_type)

    def element(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        window: list[SSAValue] = list(ivs[:lead])
        inside: Cond = True
        for r, count, w, s, p in zip(
            ivs[lead:], pooled[lead:], op.ws_list, op.stride_list, op.pad_list, strict=True
        ):
            q = add(inner, r, p)
            o = div(inner, q, s)
            fits = cmp(inner, "slt", sub(inner, q, mul(inner, o, s)), w)
            last = sub(inner, count, 1)
            inside = both(inner, inside, both(inner, fits, cmp(inner, "sle", o, last)))
            window.append(as_index(inner, smin(inner, o, last)))
        value = term(inner, window, list(ivs))
        if inside is not True:
            value = inner.insert(arith.SelectOp(_cond(inner, inside), value, zero)).result
        store(inner, value, out, ivs)

    nonempty: Cond = True
    for count in pooled[lead:]:
        nonempty = both(b, nonempty, cmp(b, "sgt", count, 0))
    bounds = [as_index(b, d) for d in out.dims]
    if nonempty is True:
        _nest(b, bounds, element, 2)
        return
    gather, zeros = Block(), Block()
    _nest(Builder(InsertPoint.at_end(gather)), bounds, element, 2)
    loop_nest(Builder(InsertPoint.at_end(zeros)), bounds, lambda nb, ivs: store(nb, zero, out, ivs))
    for block in (gather, zeros):
        block.add_op(scf.YieldOp())
    b.insert(scf.IfOp(_cond(b, nonempty), [], Region(gather), Region(zeros)))


def _cond(b: Builder, c: Cond) -> SSAValue:
    if isinstance(c, bool):
        return b.insert(arith.ConstantOp.from_int_and_width(int(c), 1)).result
    return c


def emit_max_pool_grad(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    assert isinstance(op, ag.MaxPoolGradOp)
    x, maximum, gz = ins
    zero = ag_scalar.constant(b, 0, x.element_type)
    if _disjoint(op):

        def term(nb: Builder, window: Sequence[SSAValue], at: list[SSAValue]) -> SSAValue:
            hit = _is_max(nb, load(nb, x, at), load(nb, maximum, window))
            return nb.insert(arith.SelectOp(hit, load(nb, gz, window), zero)).result

        _gather_grad(b, op, out, maximum.dims, term)
        return

    def share(nb: Builder, ivs: Sequence[SSAValue], _: object) -> SSAValue:
        return load(nb, gz, ivs)

    def test(nb: Builder, ivs: Sequence[SSAValue], at: Sequence[SSAValue], g: SSAValue):
        hit = _is_max(nb, load(nb, x, at), load(nb, maximum, ivs))
        return nb.insert(arith.SelectOp(hit, g, zero)).result

    _scatter(b, op, out, maximum.dims, share, test)


def emit_average_pool_grad(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]):
    assert isinstance(op, ag.AveragePoolGradOp)
    x, gz = ins
    lead = len(x.dims) - op.nd

    def share(nb: Builder, ivs: Sequence[SSAValue], bounds) -> SSAValue:
        g = load(nb, gz, ivs)
        if op.mode_value == "sum":
            return g
        count = _as_float(nb, window_count(nb, op, bounds, x.dims[lead:]), x.element_type)
        return nb.insert(arith.DivfOp(g, count)).result

    def test(nb: Builder, ivs: Sequence[SSAValue], at: Sequence[SSAValue], g: SSAValue):
        return g

    if _disjoint(op):

        def term(nb: Builder, window: Sequence[SSAValue], at: list[SSAValue]) -> SSAValue:
            bounds = window_bounds(nb, op, window[lead:], x.dims[lead:])
            return share(nb, window, bounds)

        _gather_grad(b, op, out, gz.dims, term)
        return
    _scatter(b, op, out, gz.dims, share, test)


VALUE_SHAPE_RULES.update(
    {
        ag.PoolOp: pool_rule,
        ag.MaxPoolGradOp: pool_grad_rule,
        ag.AveragePoolGradOp: pool_grad_rule,
        ag.MaxPoolGradGradOp: pool_grad_rule,
    }
)
KERNELS.update(
    {
        ag.PoolOp: emit_pool,
        ag.MaxPoolGradOp: emit_max_pool_grad,
        ag.AveragePoolGradOp: emit_average_pool_grad,
        ag.MaxPoolGradGradOp: emit_max_pool_grad_grad,
    }
)
