"""The reference semantics of `ag.scan`: the body block run once per step with NumPy.

The body's ops run through the interpreter (`Interpreter.run_op`, so listeners such as
DebugMode's see every op of every step); the block's `ag.yield` gives the step's outputs.
Each output is stacked along a new leading axis; a fed-back output's taps read the
values of earlier steps, or the rows of its initial value before step 0.

A scan's body has the same shapes at every step (a fed-back output keeps its initial
state's shape), so its shapes are those of a first step even when there is no step, as
native code computes them before its loop (`arignote.lowering.loops.ag_scan`). With no step,
the interpreter runs the body once on a first step's arguments (a sequence without rows
gives a row of zeros), quietly (no print shows, no listener is told) and only for the
shapes: a shape error is raised as at a step (a state the step would change the shape
of, operands that do not broadcast), and each result is empty with the shape of a step's
output. When that run meets an index out of bounds (a value of the invented rows, say),
it is dropped: the results then take the states' shapes and the static row shapes.

With `until`, the loop stops after the first step whose condition (the last yielded
value) is true; the outputs keep `n_steps` rows, zeros past the steps run, and the last
result is the count.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Block

from arignote.dialects import ag
from arignote.runtime.dtypes import numpy_dtype
from arignote.runtime.interpreter import _label, check_value, quietly

Array = np.ndarray[Any, np.dtype[Any]]
Shape = tuple[int, ...]


def n_steps_of(op: ag.ScanOp, n_steps: Array | None, sequences: Sequence[Array]) -> int:
    """The number of steps, checked against the sequences' lengths (ValueError)."""
    spans = [max(t) - min(t) for t in op.sequence_tap_lists]
    available = [len(s) - span for s, span in zip(sequences, spans, strict=True)]
    if n_steps is None:
        steps = min(available)
        if steps < 0:
            raise ValueError(
                f"{_label(op)}: a sequence of length {steps + spans[available.index(steps)]} "
                f"is shorter than its taps span ({spans[available.index(steps)]})"
            )
        return steps
    steps = int(n_steps)
    if steps < 0:
        raise ValueError(f"{_label(op)}: n_steps must not be negative, got {steps}")
    for i, (have, span) in enumerate(zip(available, spans, strict=True)):
        if have < steps:
            raise ValueError(
                f"{_label(op)}: sequence #{i} has {have + span} rows, too few for "
                f"{steps} steps (it needs {steps + span})"
            )
    return steps


def run_block(interpreter: Interpreter, block: Block, args: Sequence[Any]) -> list[Any]:
    """Run `block` on `args` up to its `ag.yield`; the yielded values. The block's values
    live in a scope of the interpreter, so that regions of its ops (an `ag.if`) see them."""
    interpreter.push_scope("ag.scan")
    try:
        interpreter.set_values(zip(block.args, args, strict=True))
        for op in block.ops:
            if isinstance(op, ag.YieldOp):
                return list(interpreter.get_values(op.values))
            results = interpreter.run_op(op, interpreter.get_values(op.operands))
            interpreter.set_values(zip(op.results, results, strict=True))
    finally:
        interpreter.pop_scope()
    raise AssertionError("ag.scan body without ag.yield")


def _history(op: ag.ScanOp, initials: Sequence[Array]) -> list[list[Array]]:
    """Per fed-back output, its values before step 0 (oldest first)."""
    histories = []
    for i, (init, taps) in enumerate(
        zip(initials, [t for t in op.output_tap_lists if t], strict=True)
    ):
        depth = max(-k for k in taps)
        if len(init) < depth:
            raise ValueError(
                f"{_label(op)}: initial value #{i} has {len(init)} rows; its taps "
                f"{list(taps)} need {depth}"
            )
        histories.append([init[i, ...] for i in range(depth)])
    return histories


def _check_state(op: ag.ScanOp, output: int, shape: Shape, state: Shape) -> None:
    if shape != state:
        raise ValueError(
            f"{_label(op)}: output #{output} of the step has shape {shape}, but its "
            f"initial state has shape {state}; a fed-back output must keep its shape"
        )


def _sequence_args(op: ag.ScanOp, sequences: Sequence[Array], t: int) -> list[Array]:
    """The sequences' taps at step `t`; a row past a sequence's end (only asked for the
    first step of a scan with no step) is a row of zeros."""
    args: list[Array] = []
    for seq, taps in zip(sequences, op.sequence_tap_lists, strict=True):
        for k in taps:
            row = t + k - min(taps)
            args.append(seq[row, ...] if row < len(seq) else np.zeros(seq.shape[1:], seq.dtype))
    return args


def _state_args(op: ag.ScanOp, histories: Sequence[list[Array]]) -> list[Array]:
    """The fed-back outputs' taps at the coming step."""
    args: list[Array] = []
    for history, taps in zip(histories, [k for k in op.output_tap_lists if k], strict=True):
        args += [history[len(history) + k] for k in taps]
    return args


def _first_step_shapes(
    interpreter: Interpreter,
    op: ag.ScanOp,
    sequences: Sequence[Array],
    histories: Sequence[list[Array]],
    non_sequences: Sequence[Array],
) -> list[Shape] | None:
    """With no step: the shapes of the step's outputs, from the body run quietly on a
    first step's arguments, each fed-back one checked against its state; None when that
    run meets an index out of bounds (module doc). A shape error propagates."""
    args = [*_sequence_args(op, sequences, 0), *_state_args(op, histories), *non_sequences]
    with quietly(interpreter):
        try:
            values = run_block(interpreter, op.body.block, args)
        except IndexError:
            return None
    shapes = [np.shape(v) for v in values]
    for i, history in zip(op.recurrent_outputs, histories, strict=True):
        _check_state(op, i, shapes[i], history[-1].shape)
    return shapes


def run_scan(interpreter: Interpreter, op: ag.ScanOp, args: PythonValues) -> list[Array]:
    n_given = 1 if op.n_steps is not None else 0
    n_seq, n_init = len(op.sequences), len(op.initials)
    operands = [
        check_value(_label(op), f"operand #{i}", np.asarray(a), o.type)
        for i, (a, o) in enumerate(zip(args, op.operands, strict=True))
    ]
    sequences = operands[n_given : n_given + n_seq]
    initials = operands[n_given + n_seq : n_given + n_seq + n_init]
    non_sequences = operands[n_given + n_seq + n_init :]
    steps = n_steps_of(op, operands[0] if n_given else None, sequences)
    histories = _history(op, initials)
    stacked, ran = _run_steps(interpreter, op, sequences, histories, non_sequences, steps)
    if op.has_until:
        _pad_until(op, stacked, steps, ran)
    rows_shapes: list[Shape | None] = [None] * len(op.outputs)
    if steps == 0:
        first = _first_step_shapes(interpreter, op, sequences, histories, non_sequences)
        rows_shapes = list(first) if first is not None else rows_shapes
    for i, history in zip(op.recurrent_outputs, histories, strict=True):
        rows_shapes[i] = history[-1].shape
    last = op.last_only_outputs
    stacked = [rows[-1:] if i in last else rows for i, rows in enumerate(stacked)]
    for j, i in enumerate(op.recurrent_outputs):  # histories: initial rows, then steps
        if i in op.with_initial_outputs:
            stacked[i] = histories[j]
    results = [_stack(op, i, rows, rows_shapes[i]) for i, rows in enumerate(stacked)]
    if op.has_until:
        results.append(np.array(ran, dtype=np.int64))
    return results


def _run_steps(
    interpreter: Interpreter,
    op: ag.ScanOp,
    sequences: Sequence[Array],
    histories: list[list[Array]],
    non_sequences: Sequence[Array],
    steps: int,
) -> tuple[list[list[Array]], int]:
    """Each output's values at the steps run, and how many ran (fewer than `steps` when
    an `until` condition is true)."""
    stacked: list[list[Array]] = [[] for _ in op.outputs]
    for t in range(steps):
        step_args = [*_sequence_args(op, sequences, t), *_state_args(op, histories)]
        values = run_block(interpreter, op.body.block, [*step_args, *non_sequences])
        recurrent = iter(histories)
        for i, (value, taps) in enumerate(zip(values, op.output_tap_lists, strict=True)):
            value = np.asarray(value)
            if taps:
                history = next(recurrent)
                _check_state(op, i, value.shape, history[-1].shape)
                history.append(value)
            stacked[i].append(value)
        if op.has_until and bool(values[-1]):
            return stacked, t + 1
    return stacked, steps


def _pad_until(op: ag.ScanOp, stacked: list[list[Array]], steps: int, ran: int) -> None:
    """An `until` loop's outputs padded with zero rows from the `ran` steps run up to
    `steps` (the bound), without the conditions."""
    stacked.pop()
    for rows in stacked:
        if rows:
            rows += [np.zeros_like(rows[0])] * (steps - ran)


def _stack(op: ag.ScanOp, index: int, rows: list[Array], row_shape: Shape | None) -> Array:
    """The rows of output `index` stacked; with no step, an empty array whose row shape
    is `row_shape` (a step's, see the module doc), or the static row shape, 0 for
    dynamic dimensions, when it is None."""
    result = op.outputs[index]
    if rows:
        if len({r.shape for r in rows}) > 1:
            raise ValueError(
                f"{_label(op)}: output #{index} changes shape between steps "
                f"({rows[0].shape} then {next(r.shape for r in rows if r.shape != rows[0].shape)})"
            )
        value = np.stack(rows)
    else:
        t = ag.tensor_type(result)
        row = row_shape or tuple(d if d != ag.DYNAMIC else 0 for d in t.get_shape()[1:])
        shape = [0, *row]
        value = np.zeros(shape, numpy_dtype(t.element_type))
    return check_value(_label(op), f"result #{index}", value, result.type)


@register_impls
class AgScanFunctions(InterpreterFunctions):
    """The interpreter implementation of `ag.scan`."""

    @impl(ag.ScanOp)
    def run_scan(self, interpreter: Interpreter, op: ag.ScanOp, args: PythonValues) -> PythonValues:
        return tuple(run_scan(interpreter, op, args))
