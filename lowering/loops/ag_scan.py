"""`ag.scan` in `ag-to-loops`: its shape rule and its kernel, one `scf.for` over the steps.

Importing this module registers `ScanLowering` in `ag_control.CONTROL_FLOW` (how
`ag-to-loops` lowers region-carrying ops); a scan nested in a scan's body is lowered by
the same rule and kernel, the body's other ops by `results_dims` and `emit_op` (`ag.fused`
included).

**Shapes.** The rule computes the number of steps `n` (the `n_steps` operand, or the
shortest sequence's length minus its tap span) and checks that `n >= 0`, that every
sequence has enough rows and that each initial value holds `L = max |tap|` rows. It then
runs the shape rules of the body once, on the operands' row shapes: a scan's states keep
their shape over the steps (as in Theano), so the body's shapes do not depend on the
step. Every fed-back output is checked to have its initial state's shape. A body
shape that depends on a *value* computed from a sequence slice or a state (a slice bound
read from a sequence, say) cannot be known before the loop runs: compiling such a scan
raises `NoNativeScanError` (and the native linkers fall back to the interpreter), as
does an `ag.if` in the body. In `@f__shape` all of this happens before any memory is
touched; in `@f` the same rule gives the result sizes and the body's sizes, computed
once, outside the loop.

**Loop.** Each result is `n x <state>`, written in place:

```mlir
%ext = memref.alloc(%L + %n, ...)          // fed-back output: history rows, then steps
<copy the initial value's L rows into %ext[0..L)>
scf.for %t = %c0 to %n step %c1 {
  %x_t  = memref.subview %seq[%t + tap - min_tap, 0...]   // a row: no copy
  %h_k  = memref.subview %ext[%t + L - k, 0...]
  %dest = memref.subview %ext[%t + L, 0...]               // the step writes here
  <the body's kernels, into the scratch buffers, the last one into %dest>
}
<copy %ext[L..L+n) into the result; free %ext>
```

An output that is not fed back is written straight into its result's row `t`; a fed-back
output `with_initial` (`scan-history`) is its own history buffer: `%ext` is its result,
with no copy after the loop. The
body's intermediates get one scratch buffer each, allocated in front of the loop (their
shapes do not change from step to step) and freed after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.builder import Builder
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    MemRefType,
    NoneAttr,
    StridedLayoutAttr,
    TensorType,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from arignote.dialects import ag
from arignote.lowering.graph_walk import evaluate
from arignote.lowering.loops.ag_control import CONTROL_FLOW
from arignote.lowering.loops.ag_indexing import add, cmp, rem, smin, sub
from arignote.lowering.loops.ag_kernels import KERNELS, copy
from arignote.lowering.loops.ag_shapes import (
    Check,
    ShapeContext,
    op_label,
    results_dims,
    shape_text,
)
from arignote.lowering.loops.kernel_reuse import emit_kernel
from arignote.lowering.loops.loop_utils import (
    Buffer,
    Dim,
    as_index,
    dynamic_sizes,
    for_loop,
    index_constant,
    load,
    store,
)
from arignote.lowering.loops.scan_accumulate import accumulated_outputs, mark_in_place
from arignote.lowering.loops.statements import STATEMENTS
from arignote.lowering.op_builder import build


class NoNativeScanError(NotImplementedError):
    """The scan has no native lowering (the interpreter runs it): a shape inside its body
    depends on a value that changes from step to step, or the body holds an `ag.if`.
    `scan` is that `ag.scan` (None where unknown)."""

    def __init__(self, message: str, scan: ag.ScanOp | None = None):
        super().__init__(message)
        self.scan = scan


# --- the operands of an ag.scan -------------------------------------------------------------


@dataclass(frozen=True)
class _Layout:
    """Where each operand group of a scan starts among its operands."""

    given: int
    seqs: int
    inits: int
    nonseqs: int

    @staticmethod
    def of(op: ag.ScanOp) -> _Layout:
        given = 1 if op.n_steps is not None else 0
        return _Layout(
            given,
            len(op.sequences),
            len(op.initials),
            len(op.non_sequences),
        )

    def seq(self, i: int) -> int:
        return self.given + i

    def init(self, j: int) -> int:
        return self.given + self.seqs + j

    def nonseq(self, k: int) -> int:
        return self.given + self.seqs + self.inits + k


def _depths(op: ag.ScanOp) -> list[int]:
    """Per fed-back output, `L`: how many earlier values its taps reach."""
    return [max(-k for k in taps) for taps in op.output_tap_lists if taps]


def _holds(
    b: Builder, message: str, ok: SSAValue | bool, a: Dim, c: Dim, shown: tuple[Dim, ...]
) -> list[Check]:
    if ok is True:
        return []
    if ok is False:
        raise NotImplementedError(f"ag-to-loops: a check fails at compile time: {message}")
    return [Check(message, a, c, "holds", ok, shown)]


def _steps(
    op: ag.ScanOp, dims: Sequence[Sequence[Dim]], context: ShapeContext
) -> tuple[Dim, list[Check]]:
    """The number of steps and the checks on it and on the sequences' lengths."""
    b, layout, label = context.builder, _Layout.of(op), op_label(op)
    spans = [max(t) - min(t) for t in op.sequence_tap_lists]
    usable = [sub(b, dims[layout.seq(i)][0], s) for i, s in enumerate(spans)]
    checks: list[Check] = []
    if op.n_steps is None:
        n: Dim = usable[0]
        for u in usable[1:]:
            n = smin(b, n, u)
        for i, (u, span) in enumerate(zip(usable, spans, strict=True)):
            if span == 0:
                continue  # a length is never negative
            length = dims[layout.seq(i)][0]
            message = f"{label}: a sequence of length %d is shorter than its taps span ({span})"
            checks += _holds(b, message, cmp(b, "sge", u, 0), u, 0, (length,))
        return n, checks
    n = context.value(0)
    message = f"{label}: n_steps must not be negative, got %d"
    checks += _holds(b, message, cmp(b, "sge", n, 0), n, 0, (n,))
    for i, u in enumerate(usable):
        message = f"{label}: sequence #{i} has %d rows, too few for %d steps (it needs %d)"
        shown = (dims[layout.seq(i)][0], n, add(b, n, spans[i]))
        checks += _holds(b, message, cmp(b, "sge", u, n), u, n, shown)
    return n, checks


def _initial_checks(
    op: ag.ScanOp, dims: Sequence[Sequence[Dim]], context: ShapeContext
) -> list[Check]:
    b, layout, checks = context.builder, _Layout.of(op), []
    taps = [t for t in op.output_tap_lists if t]
    for j, depth in enumerate(_depths(op)):
        rows = dims[layout.init(j)][0]
        message = (
            f"{op_label(op)}: initial value #{j} has %d rows; its taps {list(taps[j])} need {depth}"
        )
        checks += _holds(b, message, cmp(b, "sge", rows, depth), rows, depth, (rows,))
    return checks


def _argument_dims(op: ag.ScanOp, dims: Sequence[Sequence[Dim]]) -> list[tuple[Dim, ...]]:
    """The dimensions of the body's arguments (rows of the sequences and initial values,
    then the non-sequences)."""
    layout, result = _Layout.of(op), []
    for i, taps in enumerate(op.sequence_tap_lists):
        result += [tuple(dims[layout.seq(i)][1:])] * len(taps)
    for j, taps in enumerate(t for t in op.output_tap_lists if t):
        result += [tuple(dims[layout.init(j)][1:])] * len(taps)
    return result + [tuple(dims[layout.nonseq(k)]) for k in range(layout.nonseqs)]


# --- shapes of the body ---------------------------------------------------------------------


class _BodyShapeContext:
    """The `ShapeContext` of a body op, in front of the loop: values of the
    non-sequences (and of body values computed from them only) are read from the scan's
    operands; values that change from step to step are not available."""

    def __init__(self, parent: ShapeContext, scan: ag.ScanOp, env: dict[SSAValue, tuple]):
        self.parent = parent
        self.builder = parent.builder
        self.emit_checks = parent.emit_checks
        self.env = env
        self.op: Operation | None = None
        self.scan = scan
        args = scan.body.block.args
        first = len(args) - len(scan.non_sequences)
        layout = _Layout.of(scan)
        self.outer = {a: layout.nonseq(k) for k, a in enumerate(args[first:])}
        self.buffers: dict[SSAValue, Buffer] = {}
        self.temporaries: list[SSAValue] = []

    def _buffer_of(self, value: SSAValue) -> Buffer:
        """`value` computed into a temporary, the ops it needs first (iteratively: the
        chain may be deeper than Python's recursion limit)."""
        return evaluate(value, self.buffers, self._needs, self._compute)

    def _needs(self, value: SSAValue) -> Sequence[SSAValue]:
        op = value.owner
        if value in self.outer or isinstance(op, ag.DimOp):
            return ()
        if isinstance(value, BlockArgument) or type(op) not in KERNELS:
            raise NoNativeScanError(
                "ag-to-loops: a shape inside ag.scan depends on a value that changes "
                "from step to step; such a scan runs with the reference interpreter",
                self.scan,
            )
        assert isinstance(op, Operation)
        return op.operands

    def _compute(self, value: SSAValue, ins: list[Buffer]) -> Buffer:
        if value in self.outer:
            return self.parent.buffer(self.outer[value])
        op = value.owner
        if isinstance(op, ag.DimOp):  # a length: known even when the data changes
            return self._dim(op, value)
        assert isinstance(op, Operation)
        t = _buffer_type(value.type)
        sizes = dynamic_sizes(self.builder, t.get_shape(), self.env[value])
        alloc = self.builder.insert(memref.AllocOp(sizes, [], t)).memref
        dest = Buffer(alloc, tuple(self.env[value]))
        KERNELS[type(op)](self.builder, op, dest, ins)
        self.temporaries.append(alloc)
        return dest

    def _dim(self, op: ag.DimOp, value: SSAValue) -> Buffer:
        """`ag.dim` of any body value, from the body's dimensions."""
        t = _buffer_type(value.type)
        dest = Buffer(self.builder.insert(memref.AllocOp([], [], t)).memref, ())
        source = Buffer(dest.memref, tuple(self.env[op.operands[0]]))  # only dims are read
        KERNELS[ag.DimOp](self.builder, op, dest, [source])
        self.temporaries.append(dest.memref)
        return dest

    def buffer(self, operand: int) -> Buffer:
        assert self.op is not None
        return self._buffer_of(self.op.operands[operand])

    def scalar(self, operand: int) -> SSAValue:
        return load(self.builder, self.buffer(operand), [])

    def value(self, operand: int) -> SSAValue:
        return self.builder.insert(arith.IndexCastOp(self.scalar(operand), IndexType())).result

    def release(self) -> None:
        for temporary in self.temporaries:
            self.builder.insert(memref.DeallocOp.get(temporary))
        self.temporaries.clear()
        self.buffers.clear()


def _buffer_type(t: Attribute) -> MemRefType:
    assert isinstance(t, TensorType)
    return MemRefType(t.element_type, t.get_shape())


@dataclass
class _ScanShapes:
    steps: Dim
    body: dict[SSAValue, tuple[Dim, ...]]
    results: list[list[Dim]]
    checks: list[Check]


def _state_checks(
    op: ag.ScanOp, body: dict[SSAValue, tuple[Dim, ...]], dims: Sequence[Sequence[Dim]]
) -> list[Check]:
    """Each fed-back output keeps its initial state's shape."""
    layout, checks = _Layout.of(op), []
    recurrent = op.recurrent_outputs
    for j, i in enumerate(recurrent):
        yielded = body[op.yield_op.values[i]]
        state = dims[layout.init(j)][1:]
        (y_text, y_shown), (s_text, s_shown) = shape_text(yielded), shape_text(state)
        message = (
            f"{op_label(op)}: output #{i} of the step has shape {y_text}, but its initial "
            f"state has shape {s_text}; a fed-back output must keep its shape"
        )
        for y, s in zip(yielded, state, strict=True):
            check = Check(message, y, s, shown=(*y_shown, *s_shown))
            if y is s or check.is_static and y == s:
                continue
            if check.is_static:
                raise NotImplementedError(f"ag-to-loops: {message}")
            checks.append(check)
    return checks


def scan_shapes(op: ag.ScanOp, dims: Sequence[Sequence[Dim]], context: ShapeContext) -> _ScanShapes:
    """The number of steps, the dimensions of every body value and of the results, and
    the checks (in order: steps, initial values, the body's, the states')."""
    steps, checks = _steps(op, dims, context)
    checks += _initial_checks(op, dims, context)
    block = op.body.block
    body: dict[SSAValue, tuple[Dim, ...]] = dict(
        zip(block.args, _argument_dims(op, dims), strict=True)
    )
    inner = _BodyShapeContext(context, op, body)
    for body_op in block.ops:
        if isinstance(body_op, ag.YieldOp):
            break
        if (type(body_op) in CONTROL_FLOW and not isinstance(body_op, ag.ScanOp)) or type(
            body_op
        ) in STATEMENTS:
            raise NoNativeScanError(
                f"ag-to-loops: {body_op.name} inside ag.scan has no native lowering yet",
                op,
            )
        inner.op = body_op
        op_dims, op_checks = _body_op_dims(body_op, [body[o] for o in body_op.operands], inner)
        body.update((r, tuple(d)) for r, d in zip(body_op.results, op_dims, strict=True))
        checks += op_checks
    inner.release()
    checks += _state_checks(op, body, dims)
    last = op.last_only_outputs
    kept = smin(context.builder, steps, 1) if last else steps
    results = [[kept if i in last else steps, *body[v]] for i, v in enumerate(op.yield_op.values)]
    if op.has_until:
        results[-1] = []  # the count of steps run
    for i, depth in zip(op.recurrent_outputs, _depths(op), strict=True):
        if i in op.with_initial_outputs:  # the initial rows, then the steps
            results[i][0] = add(context.builder, steps, depth)
    return _ScanShapes(steps, body, results, checks if context.emit_checks else [])


def scan_rule(
    op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext
) -> tuple[list[list[Dim]], list[Check]]:
    assert isinstance(op, ag.ScanOp)
    shapes = scan_shapes(op, dims, context)
    return shapes.results, shapes.checks


# --- the loop -------------------------------------------------------------------------------


def _strided(shape: Sequence[int], source: MemRefType) -> MemRefType:
    """The type of a view of `source` with `shape`: the trailing strides of a contiguous
    source are static where its trailing lengths are (so loops over a row see unit
    strides), the rest dynamic."""
    strides: list[int | None] = [None] * len(shape)
    if isinstance(source.layout, NoneAttr):
        stride: int | None = 1
        for axis in range(len(shape) - 1, -1, -1):
            strides[axis] = stride
            length = source.get_shape()[axis + source.get_num_dims() - len(shape)]
            stride = None if stride is None or length == DYNAMIC_INDEX else stride * length
    return MemRefType(source.get_element_type(), shape, StridedLayoutAttr(strides, None))


def subview(b: Builder, buffer: Buffer, first: Dim, length: Dim | None) -> Buffer:
    """Rows `first..first+length` of `buffer` (a view), or row `first` alone (rank - 1)
    when `length` is None."""
    rest = tuple(buffer.dims[1:])
    offsets = [first, *([0] * len(rest))]
    if length is None:
        result_type = _strided(buffer.shape[1:], buffer.type)
        sizes, dims = [1, *rest], rest
    else:
        result_type = _strided([DYNAMIC_INDEX, *buffer.shape[1:]], buffer.type)
        sizes, dims = [length, *rest], (length, *rest)
    strides = [1] * len(buffer.dims)
    view = b.insert(memref.SubviewOp.get(buffer.memref, offsets, sizes, strides, result_type))
    return Buffer(view.result, dims)


@dataclass
class _Step:
    """What one step's body reads and writes."""

    args: list[Buffer]
    dests: dict[int, Buffer]
    """Output index → the row its value of this step goes to."""


def _step_buffers(
    b: Builder,
    op: ag.ScanOp,
    t: SSAValue,
    ins: Sequence[Buffer],
    ext: list[Buffer],
    dests: Sequence[Buffer],
    condition: Buffer | None = None,
) -> _Step:
    """The body's arguments at step `t` (views of rows) and where its outputs go; an
    `until` loop's condition goes to `condition`."""
    layout, args = _Layout.of(op), []
    for i, taps in enumerate(op.sequence_tap_lists):
        for k in taps:
            args.append(subview(b, ins[layout.seq(i)], add(b, t, k - min(taps)), None))
    depths, rings = _depths(op), _rings(op)
    for j, i in enumerate(op.recurrent_outputs):
        for k in op.output_tap_lists[i]:
            row = _history_row(b, add(b, t, depths[j] + k), rings[i])
            args.append(subview(b, ext[j], row, None))
    args += [ins[layout.nonseq(k)] for k in range(layout.nonseqs)]
    rows: dict[int, Buffer] = {}
    position = {i: j for j, i in enumerate(op.recurrent_outputs)}
    for i in range(op.stepped_outputs):
        if i in position:
            j = position[i]
            row = _history_row(b, add(b, t, depths[j]), rings[i])
            rows[i] = subview(b, ext[j], row, None)
        else:
            rows[i] = subview(b, dests[i], 0 if i in op.last_only_outputs else t, None)
    if condition is not None:
        rows[op.stepped_outputs] = condition
    return _Step(args, rows)


def _rings(op: ag.ScanOp) -> dict[int, int | None]:
    """Fed-back output → the rows of its ring: `L + 1` when only the last step is kept,
    1 for an accumulator updated in place (`scan_accumulate`), None (no ring: one row
    per step) otherwise."""
    accumulated, last = accumulated_outputs(op), op.last_only_outputs
    rings: dict[int, int | None] = {}
    for i, depth in zip(op.recurrent_outputs, _depths(op), strict=True):
        rings[i] = 1 if i in accumulated else depth + 1 if i in last else None
    return rings


def _history_row(b: Builder, row: Dim, ring: int | None) -> Dim:
    """The row of a history buffer holding history position `row` (modulo the ring's
    rows when only the last step is kept)."""
    if ring == 1:
        return 0
    return row if ring is None else rem(b, row, ring)


def _body_op_dims(
    op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext
) -> tuple[list[list[Dim]], list[Check]]:
    """The result dimensions and checks of a body op (a nested scan included)."""
    if isinstance(op, ag.ScanOp):
        return scan_rule(op, dims, context)
    return results_dims(op, dims, context)


def _emit_body_op(
    b: Builder, op: Operation, dests: Sequence[Buffer], ins: Sequence[Buffer]
) -> None:
    """The kernel of a body op (a nested scan: its own loop; another op: once per kind,
    see `kernel_reuse`)."""
    if isinstance(op, ag.ScanOp):
        emit_scan(b, op, dests, ins)
    else:
        emit_kernel(b, op, list(dests), list(ins))


def _first_yields(yield_op: Operation) -> dict[SSAValue, int]:
    """Yielded op results → the first output yielding them (computed in place there)."""
    first: dict[SSAValue, int] = {}
    for i, value in enumerate(yield_op.operands):
        if not isinstance(value, BlockArgument):
            first.setdefault(value, i)
    return first


def _scratch(
    b: Builder, op: ag.ScanOp, dims: dict[SSAValue, tuple[Dim, ...]]
) -> dict[SSAValue, Buffer]:
    """A buffer for each intermediate of the body, allocated once in front of the loop
    (the body's shapes do not change from step to step) and reused by every step."""
    *ops, yield_op = list(op.body.block.ops)
    first_yield = _first_yields(yield_op)
    buffers: dict[SSAValue, Buffer] = {}
    for body_op in ops:
        for r in body_op.results:
            if r in first_yield:
                continue
            t = _buffer_type(r.type)
            sizes = dynamic_sizes(b, t.get_shape(), dims[r])
            buffers[r] = Buffer(b.insert(build(memref.AllocOp, sizes, [], t)).memref, dims[r])
    return buffers


def _compute_body(b: Builder, op: ag.ScanOp, step: _Step, scratch: dict[SSAValue, Buffer]) -> None:
    """The body's kernels for one step; yielded values land in `step.dests`."""
    block = op.body.block
    *ops, yield_op = list(block.ops)
    env: dict[SSAValue, Buffer] = dict(zip(block.args, step.args, strict=True))
    first_yield = _first_yields(yield_op)
    for body_op in ops:
        dests = [
            step.dests[first_yield[r]] if r in first_yield else scratch[r] for r in body_op.results
        ]
        _emit_body_op(b, body_op, dests, [env[o] for o in body_op.operands])
        env.update(zip(body_op.results, dests, strict=True))
    for i, value in enumerate(yield_op.operands):
        if env[value].memref is not step.dests[i].memref:
            copy(b, env[value], step.dests[i])


class _KernelContext:
    """The `ShapeContext` of the scan op itself in `@f`: operands are buffers."""

    def __init__(self, builder: Builder, ins: Sequence[Buffer]):
        self.builder = builder
        self.emit_checks = False
        self.ins = ins

    def buffer(self, operand: int) -> Buffer:
        return self.ins[operand]

    def scalar(self, operand: int) -> SSAValue:
        return load(self.builder, self.ins[operand], [])

    def value(self, operand: int) -> SSAValue:
        return self.builder.insert(arith.IndexCastOp(self.scalar(operand), IndexType())).result


def _histories(
    b: Builder, op: ag.ScanOp, ins: Sequence[Buffer], steps: Dim, dests: Sequence[Buffer]
) -> list[Buffer]:
    """Per fed-back output, a buffer of its `L` earlier values then one row per step
    (a ring of `L + 1` rows when only the last step is kept; the result itself for an
    output `with_initial`)."""
    layout, result, rings = _Layout.of(op), [], _rings(op)
    for j, (i, depth) in enumerate(zip(op.recurrent_outputs, _depths(op), strict=True)):
        init = ins[layout.init(j)]
        state = tuple(init.dims[1:])
        ring = rings[i]
        dims = (add(b, steps, depth) if ring is None else ring, *state)
        if i in op.with_initial_outputs:
            ext = dests[i]
        else:
            t = MemRefType(init.element_type, [DYNAMIC_INDEX, *init.shape[1:]])
            sizes = dynamic_sizes(b, t.get_shape(), dims)
            ext = Buffer(b.insert(memref.AllocOp(sizes, [], t)).memref, dims)
        copy(b, Buffer(init.memref, (depth, *state)), Buffer(ext.memref, (depth, *state)))
        result.append(ext)
    return result


def emit_scan(b: Builder, op: Operation, dests: Sequence[Buffer], ins: Sequence[Buffer]) -> None:
    """One `scf.for` over the steps (see the module doc)."""
    assert isinstance(op, ag.ScanOp)
    shapes = scan_shapes(op, [x.dims for x in ins], _KernelContext(b, ins))
    mark_in_place(op, accumulated_outputs(op))
    ext = _histories(b, op, ins, shapes.steps, dests)
    scratch = _scratch(b, op, shapes.body)
    if op.has_until:
        ran = _until_loop(b, op, shapes.steps, ins, ext, dests, scratch)
    else:
        ran = shapes.steps

        def body(inner: Builder, t: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
            step = _step_buffers(inner, op, t, ins, ext, dests)
            _compute_body(inner, op, step, scratch)
            return ()

        zero, one = index_constant(b, 0), index_constant(b, 1)
        for_loop(b, zero, as_index(b, shapes.steps), one, [], body)
    rings = _rings(op)
    for j, (i, depth) in enumerate(zip(op.recurrent_outputs, _depths(op), strict=True)):
        if i in op.with_initial_outputs:  # computed in place
            continue
        if i in op.last_only_outputs:  # the last step's row (read only when there was a step)
            row = _history_row(b, add(b, sub(b, shapes.steps, 1), depth), rings[i])
            copy(b, subview(b, ext[j], row, dests[i].dims[0]), dests[i])
        elif op.has_until:  # the rows of the steps run
            copy(b, subview(b, ext[j], depth, ran), subview(b, dests[i], 0, ran))
        else:
            copy(b, subview(b, ext[j], depth, shapes.steps), dests[i])
        b.insert(memref.DeallocOp.get(ext[j].memref))
    for buffer in scratch.values():
        b.insert(memref.DeallocOp.get(buffer.memref))


def _until_loop(
    b: Builder,
    op: ag.ScanOp,
    steps: Dim,
    ins: Sequence[Buffer],
    ext: list[Buffer],
    dests: Sequence[Buffer],
    scratch: dict[SSAValue, Buffer],
) -> SSAValue:
    """The loop of a repeat-until scan; the number of steps run (an index).

    The count (the last result) starts at `steps`; step `t` runs while `t < count`, and
    a true condition sets the count to `t + 1`, so the steps after it do nothing (an
    `scf.for` cannot break: each is a load, a compare and a branch)."""
    count = dests[-1]
    condition = Buffer(b.insert(memref.AllocOp([], [], MemRefType(i1, []))).memref, ())
    store(b, _to_i64(b, as_index(b, steps)), count, [])

    def body(inner: Builder, t: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
        limit = inner.insert(arith.IndexCastOp(load(inner, count, []), IndexType())).result
        running = cmp(inner, "slt", t, limit)
        then = Block()
        g = Builder(InsertPoint.at_end(then))
        step = _step_buffers(g, op, t, ins, ext, dests, condition)
        _compute_body(g, op, step, scratch)
        stop = Block()
        s = Builder(InsertPoint.at_end(stop))
        store(s, _to_i64(s, add(s, t, 1)), count, [])
        s.insert(scf.YieldOp())
        g.insert(scf.IfOp(load(g, condition, []), [], Region(stop), Region(Block([scf.YieldOp()]))))
        g.insert(scf.YieldOp())
        inner.insert(scf.IfOp(running, [], Region(then), Region(Block([scf.YieldOp()]))))
        return ()

    zero, one = index_constant(b, 0), index_constant(b, 1)
    for_loop(b, zero, as_index(b, steps), one, [], body)
    b.insert(memref.DeallocOp.get(condition.memref))
    return b.insert(arith.IndexCastOp(load(b, count, []), IndexType())).result


def _to_i64(b: Builder, index: SSAValue | int) -> SSAValue:
    return b.insert(arith.IndexCastOp(as_index(b, index), i64)).result


class ScanLowering:
    """`ag.scan` in `ag-to-loops`'s `CONTROL_FLOW` table: its shape rule and checks in
    `@f__shape` (a `ShapeWalker`), its loop in `@f` (a `_ComputeState`)."""

    def shape(self, walker: Any, op: Operation) -> None:
        walker.context.op = op
        dims, checks = scan_rule(op, [walker.env[o] for o in op.operands], walker.context)
        walker.env.update(zip(op.results, dims, strict=True))
        walker.context.release()
        walker.emit_checks(checks)

    def compute(self, state: Any, op: Operation) -> None:
        b = state.builder
        operands = [state.env[o] for o in op.operands]
        dims, _ = scan_rule(op, [x.dims for x in operands], _KernelContext(b, operands))
        dests = [state.destination(r, d) for r, d in zip(op.results, dims, strict=True)]
        emit_scan(b, op, dests, operands)
        state.env.update(zip(op.results, dests, strict=True))


CONTROL_FLOW[ag.ScanOp] = ScanLowering()
