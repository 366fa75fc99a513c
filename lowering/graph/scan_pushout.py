"""`scan-pushout`: move what does not need the loop out of an `ag.scan` (PyTensor's
`scan_pushout_*` rewrites).

Two rewrites, each applied to a scan until nothing more matches (the op is rebuilt after
each one):

- **Products of sequence rows.** A `dot`/`gemv`/`gemm` of the body whose one operand is a
  sequence row (a body argument of a sequence tap) and whose other operand (and `alpha`)
  is loop-invariant (non-sequences, constants and what is computed from them only) is
  computed for all the rows of the sequence at once before the loop: the sequence
  `(L, B, k)` reshaped to `(L·B, k)`, one `gemm`, reshaped back to `(L, B, n)` (a
  vector row: `(L, k)` and one `gemm`; a matrix row times an invariant vector: one
  `gemv`). The result is a new sequence with the same tap offset; the step reads its row.
  An accumulation (`beta, C`) of the product stays in the step as `row + beta * C`, into
  which `specialize`'s patterns fold a product `C` again (`gemm(1, h, U, 1, row)`).
  A product whose operand depends on a fed-back state stays inside; so does a product
  of a sequence row on the right of a matrix (a batched product: no single gemm).
- **Accumulators.** A fed-back output with the one tap `-1` whose step is
  `acc + alpha * X_tᵀ·Y_t` (`gemm {transpose_a}` accumulating into its own earlier
  value), `acc + alpha * A_tᵀ·x_t` (`gemv {transpose_a}`), `acc + v_t` or
  `acc + sum(D_t, axes)`, where nothing else in the step reads `acc` and every use
  outside reads only its last row (`[-1]`, `[-1:]`), is computed after the loop. Each
  summed step value is, over the steps, the rows `off .. off + n` of its sequence (a
  sequence row) or a new stacked output of the scan (not fed back); a sum's `v_t`/`D_t`
  must be a sequence row or stacked anyway (by a gemm/gemv accumulator, or an output).
  The final value is `acc0 + alpha * reshape(X, (n·B, m))ᵀ · reshape(Y, (n·B, p))` (one
  gemm; the sum over the steps is the sum over the rows, step `s` of `X` paired with
  step `s` of `Y`, whatever order the steps walk the data in), a gemv likewise, and
  for column sums `acc0 + reshape(D, (n·B, p))ᵀ · ones` (other sums: `reduce_sum`).
  `acc0` is row 0 of the initial value (what tap `-1` reads at step 0); the lengths of
  the accumulator give the reshapes' last axes (a stacked output over no step has zeros
  there). The scan's result is replaced by the final value as its one row (`min(n, 1)`
  rows: no step, no row), so the last-row reads outside are unchanged. All the
  accumulators of a scan move in one rebuild.

Only scans without unknown properties are rewritten; operands must be float (BLAS).

```mlir
// before: the forward step of an RNN
%hs = ag.scan sequences(%x : ...) initials(%h0 : ...) non_sequences(%W, %U : ...) ... {
^bb0(%xt: tensor<?x?xf32>, %h: tensor<?x?xf32>, %w: tensor<?x?xf32>, %u: tensor<?x?xf32>):
  %hu = ag.gemm %one, %h, %u : ...
  %s = ag.gemm %one, %xt, %w, %one, %hu : ...
  ...
}
// after
%x2 = ag.reshape %x[%tb, %k] ... -> tensor<?x?xf32>
%p2 = ag.gemm %one, %x2, %W : ...
%p = ag.reshape %p2[%t, %b, %n] ... -> tensor<?x?x?xf32>
%hs = ag.scan sequences(%p : ...) ... non_sequences(%U : ...) ... {
^bb0(%pt: tensor<?x?xf32>, %h: ..., %u: ...):
  %s = ag.gemm %one, %h, %u, %one, %pt : ...
  ...
}
```
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    ModuleOp,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, BlockArgument, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import IsolatedFromAbove, Pure
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination

from arignote.dialects import ag
from arignote.dialects.ag.base import DYNAMIC
from arignote.lowering.graph.scan_last_step import _reads_last_row
from arignote.lowering.graph.scan_prune import PruneScan
from arignote.lowering.graph.specialize import AccumulateDifference, AccumulateSum, ScaleProduct
from arignote.lowering.graph.stable_forms import defining, is_one
from arignote.lowering.graph_walk import evaluate
from arignote.lowering.rewriting import DispatchingApplier

_KNOWN_PROPERTIES = {
    "sequence_taps",
    "output_taps",
    "last_only",
    "with_initial",
    "operandSegmentSizes",
}
"""The properties this pass understands; a scan with another one is left alone."""


# --- the body's structure ---------------------------------------------------------------


@dataclass
class _Body:
    """The roles of a scan body's values."""

    op: ag.ScanOp
    sequence_rows: dict[SSAValue, tuple[int, int]] = field(default_factory=dict)
    """Body argument of a sequence tap → (sequence index, tap)."""
    non_sequences: dict[SSAValue, int] = field(default_factory=dict)
    """Body argument of a non-sequence → its index."""
    states: dict[int, list[BlockArgument]] = field(default_factory=dict)
    """Fed-back output → the body arguments of its taps."""
    invariant: set[SSAValue] = field(default_factory=set)
    """Values that are the same at every step (non-sequences and what only they and
    constants compute)."""

    @staticmethod
    def of(op: ag.ScanOp) -> _Body:
        body = _Body(op)
        args = iter(op.body.block.args)
        for i, taps in enumerate(op.sequence_tap_lists):
            for k in taps:
                body.sequence_rows[next(args)] = (i, k)
        for i in op.recurrent_outputs:
            body.states[i] = [next(args) for _ in op.output_tap_lists[i]]
        for k, arg in enumerate(args):
            body.non_sequences[arg] = k
        body.invariant = set(body.non_sequences)
        for body_op in op.body.block.ops:
            if _movable(body_op) and all(o in body.invariant for o in body_op.operands):
                body.invariant.update(body_op.results)
        return body


def _movable(op: Operation) -> bool:
    """A pure op that reads only its operands (may be cloned before the loop)."""
    if isinstance(op, ag.YieldOp) or not op.has_trait(Pure):
        return False
    return not op.regions or op.has_trait(IsolatedFromAbove)


def _is_float(value: SSAValue) -> bool:
    return ag.is_float(ag.tensor_type(value).element_type)


def _rank(value: SSAValue) -> int:
    return ag.tensor_type(value).get_num_dims()


# --- building outer ops -----------------------------------------------------------------


class _Ops:
    """Ops built outside the loop, in order; `discard` erases them all."""

    def __init__(self) -> None:
        self.ops: list[Operation] = []
        self._lengths: dict[tuple[SSAValue, int], SSAValue] = {}
        self._merged: dict[SSAValue, SSAValue] = {}

    def add(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def discard(self) -> None:
        for op in reversed(self.ops):
            op.erase()
        self.ops.clear()

    def i64(self, value: int) -> SSAValue:
        attr = DenseIntOrFPElementsAttr.from_list(TensorType(i64, []), [value])
        return self.add(ag.ConstantOp(attr))

    def scalar(self, value: float, like: SSAValue) -> SSAValue:
        element = ag.tensor_type(like).element_type
        return self.add(
            ag.ConstantOp(DenseIntOrFPElementsAttr.from_list(TensorType(element, []), [value]))
        )

    def length(self, x: SSAValue, axis: int) -> int | SSAValue:
        """The length of axis `axis` of `x`: static, or an `ag.dim`."""
        n = ag.value_shape(x)[axis]
        if n != DYNAMIC:
            return n
        if (x, axis) not in self._lengths:
            self._lengths[(x, axis)] = self.add(ag.DimOp(x, axis))
        return self._lengths[(x, axis)]

    def as_value(self, n: int | SSAValue) -> SSAValue:
        return self.i64(n) if isinstance(n, int) else n

    def reshape(self, x: SSAValue, lengths: Sequence[int | SSAValue]) -> SSAValue:
        shape = [n if isinstance(n, int) else ag.DYNAMIC_VALUE for n in lengths]
        dynamic = [n for n in lengths if not isinstance(n, int)]
        return self.add(ag.ReshapeOp(x, shape, dynamic))

    def merge_leading(self, x: SSAValue, rest: Sequence[int | SSAValue] | None = None) -> SSAValue:
        """`x` with its first two axes merged into one; the lengths of the other axes
        are `rest` when given (a scan output stacked over no step has zeros there)."""
        if x in self._merged:
            return self._merged[x]
        a, b = self.length(x, 0), self.length(x, 1)
        if isinstance(a, int) and isinstance(b, int):
            merged: int | SSAValue = a * b
        else:
            merged = self.add(ag.MulOp(self.as_value(a), self.as_value(b)))
        if rest is None:
            rest = [self.length(x, d) for d in range(2, _rank(x))]
        self._merged[x] = self.reshape(x, [merged, *rest])
        return self._merged[x]

    def rows(self, x: SSAValue, first: int, count: SSAValue) -> SSAValue:
        """`x[first : first + count]`."""
        stop = count if first == 0 else self.add(ag.AddOp(count, self.i64(first)))
        none = ag.SLICE_NONE
        rank = _rank(x)
        return self.add(
            ag.SubtensorOp(
                x,
                [ag.SLICE] * rank,
                [first] + [none] * (rank - 1),
                [ag.DYNAMIC_VALUE] + [none] * (rank - 1),
                [none] * rank,
                [stop],
            )
        )

    def row(self, x: SSAValue, index: int) -> SSAValue:
        """`x[index]`."""
        none, rank = ag.SLICE_NONE, _rank(x)
        return self.add(
            ag.SubtensorOp(
                x,
                [ag.INDEX] + [ag.SLICE] * (rank - 1),
                [index] + [none] * (rank - 1),
                [none] * rank,
                [none] * rank,
            )
        )


class _Outside:
    """Invariant body values materialized before the loop (cloned, memoized)."""

    def __init__(self, body: _Body, ops: _Ops):
        self.body = body
        self.ops = ops
        self.mapping: dict[SSAValue, SSAValue] = {
            arg: body.op.non_sequences[k] for arg, k in body.non_sequences.items()
        }

    def value(self, v: SSAValue) -> SSAValue:
        """`v` outside the loop, its operands cloned first, in order (by
        `graph_walk.evaluate`: an invariant chain may hold thousands of ops)."""
        return evaluate(v, self.mapping, self._operands, self._hoisted)

    def _operands(self, v: SSAValue) -> Sequence[SSAValue]:
        assert isinstance(v, OpResult) and v in self.body.invariant
        return v.op.operands

    def _hoisted(self, v: SSAValue, _: list[SSAValue]) -> SSAValue:
        assert isinstance(v, OpResult)
        self._hoist(v.op)
        return self.mapping[v]

    def _hoist(self, op: Operation) -> None:
        # `clone` adds the results (and any region values) to the mapping it is given
        clone = op.clone(value_mapper=self.mapping)
        clone.attributes.pop("ag.destroy_map", None)  # its operands may live on outside
        self.ops.ops.append(clone)
        self.mapping.update(zip(op.results, clone.results, strict=True))


def _steps(op: ag.ScanOp, ops: _Ops) -> SSAValue:
    """The number of steps as a 0-d i64 tensor, from the operands."""
    if op.n_steps is not None:
        if ag.tensor_type(op.n_steps).element_type == i64:
            return op.n_steps
        return ops.add(ag.CastOp(op.n_steps, i64))
    n: SSAValue | None = None
    for seq, taps in zip(op.sequences, op.sequence_tap_lists, strict=True):
        usable = ops.as_value(ops.length(seq, 0))
        if max(taps) != min(taps):
            usable = ops.add(ag.SubOp(usable, ops.i64(max(taps) - min(taps))))
        n = usable if n is None else ops.add(ag.MinimumOp(n, usable))
    assert n is not None
    return n


# --- rebuilding the scan ----------------------------------------------------------------


@dataclass
class _Edit:
    """Changes to a scan: sequences appended (their body arguments already inserted),
    step ops erased once the yield no longer reads them, fed-back outputs dropped (their
    tap arguments must then be unused), step values stacked as new outputs."""

    sequences: list[tuple[SSAValue, tuple[int, ...]]] = field(default_factory=list)
    unread: set[int] = field(default_factory=set)
    """Sequences dropped (their body arguments unused; another of the same length and
    tap span stays, so the number of steps is kept)."""
    erased: list[Operation] = field(default_factory=list)
    dropped: set[int] = field(default_factory=set)
    stacked: list[SSAValue] = field(default_factory=list)


def _rebuilt(op: ag.ScanOp, body: _Body, edit: _Edit, rewriter: PatternRewriter) -> ag.ScanOp:
    """A copy of `op` with `edit` applied, taking over its body. Its results: the kept
    outputs in order, then the stacked values."""
    block = op.body.block
    kept = [i for i in range(len(op.outputs)) if i not in edit.dropped]
    yielded = op.yield_op.values
    new_yield = ag.YieldOp([*(yielded[i] for i in kept), *edit.stacked])
    rewriter.replace(op.yield_op, new_yield, [])
    for erased in edit.erased:
        rewriter.erase(erased)
    for i in edit.dropped:
        for arg in body.states[i]:
            block.erase_arg(arg)
    for arg, (i, _) in body.sequence_rows.items():
        if i in edit.unread:
            block.erase_arg(arg)
    pairs = zip(op.sequences, op.sequence_tap_lists, strict=True)
    sequences = [p for i, p in enumerate(pairs) if i not in edit.unread] + edit.sequences
    recurrent = op.recurrent_outputs
    stacked_types = [
        TensorType(ag.tensor_type(v).element_type, [DYNAMIC, *ag.value_shape(v)])
        for v in edit.stacked
    ]
    new = ag.ScanOp(
        op.n_steps,
        [v for v, _ in sequences],
        [v for j, v in enumerate(op.initials) if recurrent[j] not in edit.dropped],
        list(op.non_sequences),
        [t for _, t in sequences],
        [*(op.output_tap_lists[i] for i in kept), *([()] * len(edit.stacked))],
        [*(op.outputs[i].type for i in kept), *stacked_types],
        op.body.detach_block(block),
    )
    new.take_output_marks(op, kept)
    return new


# --- rewrite 1: products of sequence rows ----------------------------------------------

_Build = Callable[[_Ops, SSAValue, SSAValue, SSAValue], SSAValue]
"""(ops, the whole sequence, alpha outside, the invariant operand outside) → the product
for every row of the sequence."""


def _matrix_rows(transpose_b: bool) -> _Build:
    """Rows `s_t` (B, k) times an invariant matrix: one gemm on the sequence with its
    first two axes merged, reshaped back to (L, B, n)."""

    def build(ops: _Ops, seq: SSAValue, alpha: SSAValue, m: SSAValue) -> SSAValue:
        flat = ops.add(ag.GemmOp(alpha, ops.merge_leading(seq), m, transpose_b=transpose_b))
        return ops.reshape(flat, [ops.length(seq, 0), ops.length(seq, 1), ops.length(flat, 1)])

    return build


def _vector_rows(transpose_b: bool) -> _Build:
    """Vector rows `s_t` (k,) times an invariant matrix: one gemm on the sequence."""

    def build(ops: _Ops, seq: SSAValue, alpha: SSAValue, m: SSAValue) -> SSAValue:
        return ops.add(ag.GemmOp(alpha, seq, m, transpose_b=transpose_b))

    return build


def _matrix_rows_times_vector(ops: _Ops, seq: SSAValue, alpha: SSAValue, v: SSAValue) -> SSAValue:
    """Matrix rows `A_t` (m, k) times an invariant vector: one gemv, reshaped back."""
    flat = ops.add(ag.GemvOp(alpha, ops.merge_leading(seq), v))
    return ops.reshape(flat, [ops.length(seq, 0), ops.length(seq, 1)])


@dataclass
class _Product:
    """A product of the step: a sequence row and a loop-invariant operand."""

    op: ag.DotOp | ag.GemvOp | ag.GemmOp
    row: SSAValue
    invariant: SSAValue
    build: _Build


def _dot_form(op: ag.DotOp, rows: dict, inv: set) -> tuple[SSAValue, SSAValue, _Build] | None:
    lhs, rhs = op.lhs, op.rhs
    if lhs in rows and rhs in inv and _rank(rhs) == 2:
        return lhs, rhs, _matrix_rows(False) if _rank(lhs) == 2 else _vector_rows(False)
    if rhs in rows and lhs in inv and (_rank(lhs), _rank(rhs)) == (2, 1):
        return rhs, lhs, _vector_rows(True)
    if lhs in rows and rhs in inv and (_rank(lhs), _rank(rhs)) == (2, 1):
        return lhs, rhs, _matrix_rows_times_vector
    return None


def _product(op: Operation, body: _Body) -> _Product | None:
    """`op` as a product this pass moves out, if it is one."""
    rows, inv = body.sequence_rows, body.invariant
    if not isinstance(op, ag.DotOp | ag.GemvOp | ag.GemmOp) or not _is_float(op.results[0]):
        return None
    form: tuple[SSAValue, SSAValue, _Build] | None = None
    if isinstance(op, ag.DotOp):
        form = _dot_form(op, rows, inv)
    elif op.alpha not in inv:
        return None
    elif isinstance(op, ag.GemvOp):
        transposed = op.transpose_a is not None
        if op.b in rows and op.a in inv:
            form = op.b, op.a, _vector_rows(not transposed)
        elif op.a in rows and op.b in inv and not transposed:
            form = op.a, op.b, _matrix_rows_times_vector
    elif op.a in rows and op.b in inv and op.transpose_a is None:
        form = op.a, op.b, _matrix_rows(op.transpose_b is not None)
    return None if form is None else _Product(op, *form)


def _residual(op: Operation, row: SSAValue) -> tuple[list[Operation], SSAValue] | None:
    """The ops giving the step's value of the product `op` from its pushed-out `row`:
    the row plus the accumulation, if any (None when that would change the type)."""
    if not isinstance(op, ag.GemvOp | ag.GemmOp) or not op.acc:
        return ([], row) if row.type == op.results[0].type else None
    beta, initial = op.acc
    new_ops: list[Operation] = []
    if not is_one(beta):
        new_ops.append(scaled := ag.MulOp(beta, initial))
        initial = scaled.result
    new_ops.append(total := ag.AddOp(row, initial))
    if total.result.type != op.results[0].type:
        for o in reversed(new_ops):
            o.erase()
        return None
    return new_ops, total.result


def _push_product(op: ag.ScanOp, body: _Body, product: _Product, rewriter: PatternRewriter) -> bool:
    i, tap = body.sequence_rows[product.row]
    seq, taps = op.sequences[i], op.sequence_tap_lists[i]
    ops = _Ops()
    outside = _Outside(body, ops)
    alpha = product.op.alpha if not isinstance(product.op, ag.DotOp) else None
    alpha_out = outside.value(alpha) if alpha is not None else ops.scalar(1.0, seq)
    stacked = product.build(ops, seq, alpha_out, outside.value(product.invariant))
    row_type = TensorType(ag.tensor_type(stacked).element_type, ag.value_shape(stacked)[1:])
    if row_type != product.op.results[0].type:
        ops.discard()
        return False
    new_taps = (min(taps), tap) if tap != min(taps) else (tap,)
    args = _insert_sequence_args(op, new_taps, row_type)
    residual = _residual(product.op, args[-1])
    if residual is None:
        for arg in reversed(args):
            op.body.block.erase_arg(arg)
        ops.discard()
        return False
    residual_ops, value = residual
    rewriter.insert(residual_ops, InsertPoint.before(product.op))
    stacked_op = stacked.owner
    assert isinstance(stacked_op, Operation)
    if "ag.node" in product.op.attributes:  # the profile's and the messages' label
        stacked_op.attributes.setdefault("ag.node", product.op.attributes["ag.node"])
    rewriter.replace_all_uses_with(product.op.results[0], value)
    rewriter.erase(product.op)
    unread = (
        {i}
        if _unread(body, i) and max(new_taps) - min(new_taps) == max(taps) - min(taps)
        else set()
    )
    new = _rebuilt(op, body, _Edit(sequences=[(stacked, new_taps)], unread=unread), rewriter)
    rewriter.replace(op, [*ops.ops, new], list(new.results))
    return True


def _unread(body: _Body, index: int) -> bool:
    """Whether the step reads no tap of sequence `index`."""
    return all(not arg.uses for arg, (i, _) in body.sequence_rows.items() if i == index)


def _insert_sequence_args(op: ag.ScanOp, taps: Sequence[int], t: Attribute) -> list[BlockArgument]:
    """Body arguments for a sequence appended after the others (one per tap)."""
    position = sum(len(k) for k in op.sequence_tap_lists)
    return [op.body.block.insert_arg(t, position + j) for j in range(len(taps))]


# --- rewrite 2: accumulators ------------------------------------------------------------


def _stacked_output(op: ag.ScanOp, value: SSAValue) -> int | None:
    """The output stacking `value` at every step (not fed back, every row kept)."""
    taps, last = op.output_tap_lists, op.last_only_outputs
    for j, v in enumerate(op.yield_op.values):
        if v is value and not taps[j] and j not in last:
            return j
    return None


_Final = Callable[[_Ops, SSAValue, list[SSAValue]], SSAValue]
"""(ops, the initial value's row 0, alpha outside (if any) then the summed step values
over the steps) → the accumulator's final value."""


@dataclass
class _Accumulation:
    """Output `index` is `acc + (a sum over the steps of step values `operands`)`."""

    index: int
    step_op: Operation
    alpha: SSAValue | None
    operands: list[SSAValue]
    final: _Final


def _last_row_uses_only(result: SSAValue) -> bool:
    return bool(result.uses) and all(_reads_last_row(u.operation, result) for u in result.uses)


def _accumulation(
    op: ag.ScanOp, body: _Body, index: int, stacked: set[SSAValue] | None = None
) -> _Accumulation | None:
    """The accumulation of output `index`, if its step is one this pass moves out."""
    if op.output_tap_lists[index] != (-1,) or not _last_row_uses_only(op.outputs[index]):
        return None
    if index in op.with_initial_outputs:  # its result holds the initial rows too
        return None
    (acc,) = body.states[index]
    value = op.yield_op.values[index]
    if not isinstance(value, OpResult) or not (acc.has_one_use() and value.has_one_use()):
        return None
    step_op = value.op
    if next(iter(acc.uses)).operation is not step_op:
        return None
    if isinstance(step_op, ag.GemmOp | ag.GemvOp) and _is_float(value):
        return _blas_accumulation(body, index, step_op, acc)
    if isinstance(step_op, ag.AddOp):
        return _sum_accumulation(op, body, index, step_op, acc, stacked or set())
    return None


def _blas_accumulation(
    body: _Body, index: int, step_op: ag.GemmOp | ag.GemvOp, acc: SSAValue
) -> _Accumulation | None:
    """`acc + alpha * Aᵀ·B` (gemm) or `acc + alpha * Aᵀ·x` (gemv)."""
    if not step_op.acc or step_op.acc[1] is not acc or not is_one(step_op.acc[0]):
        return None
    if step_op.transpose_a is None or step_op.alpha not in body.invariant:
        return None
    if isinstance(step_op, ag.GemmOp) and step_op.transpose_b is not None:
        return None
    operands = [step_op.a, step_op.b]
    if any(v is acc or v in body.invariant for v in operands):
        return None
    is_gemm = isinstance(step_op, ag.GemmOp)

    def final(ops: _Ops, acc0: SSAValue, values: list[SSAValue]) -> SSAValue:
        alpha, a, b = values
        # the lengths of the accumulator, right even when no step ran
        rows = [ops.length(acc0, 0)]
        flat_a = ops.merge_leading(a, rows)
        flat_b = ops.merge_leading(b, [ops.length(acc0, 1)] if is_gemm else [])
        one = ops.scalar(1.0, acc0)
        blas = ag.GemmOp if is_gemm else ag.GemvOp
        return ops.add(blas(alpha, flat_a, flat_b, one, acc0, transpose_a=True))

    return _Accumulation(index, step_op, step_op.alpha, operands, final)


def _sum_accumulation(
    op: ag.ScanOp,
    body: _Body,
    index: int,
    step_op: ag.AddOp,
    acc: SSAValue,
    stacked: set[SSAValue],
) -> _Accumulation | None:
    """`acc + v` or `acc + sum(D, axes)` with `v`/`D` a sequence row or a value stacked
    anyway (an output, or in `stacked`)."""
    other = step_op.rhs if step_op.lhs is acc else step_op.lhs
    if other is acc or not (acc.type == other.type == step_op.result.type):
        return None
    summed, axes = other, ()
    reduce = defining(other, ag.ReduceSumOp)
    if isinstance(reduce, ag.ReduceSumOp):
        summed, axes = reduce.input, reduce.axes_list
    available = summed in body.sequence_rows or summed in stacked
    if not available and _stacked_output(op, summed) is None:
        return None

    def final(ops: _Ops, acc0: SSAValue, values: list[SSAValue]) -> SSAValue:
        (stacked,) = values
        if axes == (0,) and _rank(stacked) == 3 and _is_float(stacked):
            # the column sums of the rows of every step: one gemv with a vector of ones
            flat = ops.merge_leading(stacked, [ops.length(acc0, 0)])
            ones = ops.add(
                ag.AllocOp(
                    ops.scalar(1.0, flat), [ag.DYNAMIC_VALUE], [ops.as_value(ops.length(flat, 0))]
                )
            )
            one = ops.scalar(1.0, acc0)
            return ops.add(ag.GemvOp(one, flat, ones, one, acc0, transpose_a=True))
        total = ops.add(ag.ReduceSumOp(stacked, [0, *(a + 1 for a in axes)]))
        return ops.add(ag.AddOp(acc0, total))

    return _Accumulation(index, step_op, None, [summed], final)


@dataclass
class _Source:
    """Where a summed step value comes from over the steps: a tensor before the loop
    (`outer`), an output of the old scan (`output`) or a new stacked output (`new`)."""

    outer: SSAValue | None = None
    output: int | None = None
    new: int | None = None


def _source(
    op: ag.ScanOp, body: _Body, value: SSAValue, ops: _Ops, steps: SSAValue, new: list[SSAValue]
) -> _Source:
    if value in body.sequence_rows:
        i, tap = body.sequence_rows[value]
        seq = op.sequences[i]
        first = tap - min(op.sequence_tap_lists[i])
        if first == 0 and len(op.sequences) == 1 and op.n_steps is None:
            return _Source(outer=seq)  # the only sequence, one tap: exactly the steps' rows
        return _Source(outer=ops.rows(seq, first, steps))
    existing = _stacked_output(op, value)
    if existing is not None:
        return _Source(output=existing)
    if value not in new:
        new.append(value)
    return _Source(new=new.index(value))


def _one_row(ops: _Ops, value: SSAValue, steps: SSAValue) -> SSAValue:
    """`value` as the rows of a scan result that keeps `min(steps, 1)` rows."""
    expanded = ops.add(ag.DimShuffleOp(value, [-1, *range(_rank(value))]))
    return ops.rows(expanded, 0, steps)


def _push_accumulations(
    op: ag.ScanOp, body: _Body, found: list[_Accumulation], rewriter: PatternRewriter
) -> None:
    """Moves the accumulations `found` after the loop, in one rebuild (a step value
    stacked once, reshaped once, whatever the number of accumulators reading it)."""
    before, after = _Ops(), _Ops()
    steps = _steps(op, before)
    stacked: list[SSAValue] = []
    sources: dict[SSAValue, _Source] = {}
    for a in found:
        for v in a.operands:
            if v not in sources:
                # windows after the loop: the last use of the sequence, whose buffer
                # the window may then take over (see ag-to-loops)
                sources[v] = _source(op, body, v, after, steps, stacked)
    outside = _Outside(body, before)
    alphas = [outside.value(a.alpha) if a.alpha is not None else None for a in found]
    recurrent = op.recurrent_outputs
    initial_rows = [before.row(op.initials[recurrent.index(a.index)], 0) for a in found]
    dropped = {a.index for a in found}
    edit = _Edit(erased=[a.step_op for a in found], dropped=dropped, stacked=stacked)
    new = _rebuilt(op, body, edit, rewriter)
    kept = [i for i in range(len(op.outputs)) if i not in dropped]
    results = list(new.results)

    def over_steps(v: SSAValue) -> SSAValue:
        s = sources[v]
        if s.outer is not None:
            return s.outer
        if s.output is not None:
            return results[kept.index(s.output)]
        assert s.new is not None
        return results[len(kept) + s.new]

    replaced: dict[int, SSAValue] = {}
    for a, alpha, acc0 in zip(found, alphas, initial_rows, strict=True):
        values = [over_steps(v) for v in a.operands]
        final = a.final(after, acc0, values if alpha is None else [alpha, *values])
        replacement = _one_row(after, final, steps)
        replaced[a.index] = _as_type(after, replacement, op.outputs[a.index].type)
    mapping = [results[kept.index(i)] if i in kept else replaced[i] for i in range(len(op.outputs))]
    rewriter.replace(op, [*before.ops, new, *after.ops], mapping)


def _as_type(ops: _Ops, value: SSAValue, t: Attribute) -> SSAValue:
    """`value` with the type `t` (the same shape, more static or less): a reshape whose
    static entries are those of `t`."""
    if value.type == t:
        return value
    assert isinstance(t, TensorType)
    lengths = [n if n != DYNAMIC else ops.length(value, a) for a, n in enumerate(t.get_shape())]
    return ops.reshape(value, lengths)


# --- the pass ---------------------------------------------------------------------------


def _is_blas(found: _Accumulation) -> bool:
    return isinstance(found.step_op, ag.GemmOp | ag.GemvOp)


class PushOutOfScan(RewritePattern):
    """Moves one product of sequence rows or one accumulator out of an `ag.scan`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.ScanOp, rewriter: PatternRewriter, /):
        if set(op.properties) - _KNOWN_PROPERTIES:
            return
        body = _Body.of(op)
        for body_op in list(op.body.block.ops):
            product = _product(body_op, body)
            if product is not None and _push_product(op, body, product, rewriter):
                return
        blas = [a for i in body.states if (a := _accumulation(op, body, i)) and _is_blas(a)]
        # the step values the gemm/gemv accumulators stack, which sums may read too
        stacked = {v for a in blas for v in a.operands if v not in body.sequence_rows}
        sums = [
            a
            for i in body.states
            if (a := _accumulation(op, body, i, stacked)) is not None and not _is_blas(a)
        ]
        if blas or sums:
            _push_accumulations(op, body, [*blas, *sums], rewriter)


@dataclass(frozen=True)
class ScanPushoutPass(ModulePass):
    """Moves products of sequence rows before, and accumulators after, scan loops."""

    name = "scan-pushout"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not PatternRewriteWalker(PushOutOfScan()).rewrite_module(op):
            return
        # what the moved ops read in the step (a reduce_sum, constants, non-sequences)
        PatternRewriteWalker(PruneScan()).rewrite_module(op)
        CommonSubexpressionElimination().apply(ctx, op)  # the reshapes of shared operands
        # a pushed-out product leaves `row + C` in the step: fold a product `C` again
        folding = [ScaleProduct(), AccumulateSum(), AccumulateDifference()]
        PatternRewriteWalker(DispatchingApplier(folding)).rewrite_module(op)
