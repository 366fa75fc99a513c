"""`arignote.scan` and its shorthands `map`, `reduce`, `foldl`, `foldr` (Theano's
`theano.scan`).

The step function is called once, on placeholder variables standing for one step's
slices of the sequences and earlier values of the outputs; the operations it builds on
them become the body of one `ag.scan` operation (see `arignote.dialects.ag.scan`).
Anything else the step reads — the non-sequences, shared variables and other outer
variables, expressions of those — becomes an operand of the op, so the body is
isolated from the graph around it and outer expressions are computed once, not once
per step. The compiler turns the op into one native loop.
"""

from __future__ import annotations

import sys
import types
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects import builtin
from xdsl.dialects.builtin import IntegerAttr, StringAttr, UnitAttr, i64
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from arignote import scan_grad as _scan_grad  # noqa: F401 - registers the gradient rule
from arignote.dialects import ag
from arignote.graph import (
    _OP_VIEWS,
    NODE_ATTRIBUTE,
    Op,
    Variable,
    _input_tag,
    _user_location,
    ancestors,
    graph_inputs,
    locate,
    node_label,
    variable_of,
)
from arignote.tensor import basic as T
from arignote.tensor.type import TensorType

__all__ = ["foldl", "foldr", "map", "reduce", "scan", "scan_checkpoints", "until"]

TRUNCATE_ATTRIBUTE = "ag.truncate_gradient"
"""The attribute of an `ag.scan` built with `truncate_gradient=k` (k > 0): its gradient
backpropagates through the last `k` steps only."""


class Scan(Op):
    """The graph view of `ag.scan` (`Scan{name}`)."""

    @property
    def props(self) -> str:
        name = self.ir_op.attributes.get("ag.scan_name")
        return name.data if isinstance(name, StringAttr) else ""


_OP_VIEWS[ag.ScanOp] = Scan


class until:  # noqa: N801 - Theano's name
    """The stop condition of a repeat-until `scan` (Theano's `theano.scan_module.until`):
    the step function returns `(outputs, until(cond))` or `(outputs, updates,
    until(cond))`, and the loop stops after the first step where the 0-d `cond` is true
    (that step included), or after `n_steps`."""

    def __init__(self, condition: Any):
        self.condition = T.as_tensor_variable(condition)
        if self.condition.ndim != 0:
            raise AssertionError(
                f"until: the condition must be a 0-d tensor, got {self.condition.ndim} dimensions"
            )


# Theano's `theano.scan_module.scan_utils.until`: a module object registered under that
# name, so that `from arignote.scan_module.scan_utils import until` works as in Theano.
scan_utils = types.ModuleType(f"{__name__}.scan_utils", "Theano's `scan_utils`: `until`.")
scan_utils.until = until  # type: ignore[attr-defined]
sys.modules[scan_utils.__name__] = scan_utils

_ORDER_MESSAGE = (
    "The return value of the lambda function has been restricted. you have to always "
    "return first the outputs (if any), afterwards the updates (if any) and at the end "
    "the conclusion"
)


@dataclass
class _Output:
    """One entry of `outputs_info`: its initial value with a leading history axis (None
    for an output that is not fed back) and its taps."""

    initial: Variable | None
    taps: tuple[int, ...]


@dataclass
class _Trace:
    """The step function's placeholders and what it returned."""

    placeholders: list[Variable] = field(default_factory=list)
    outputs: list[Variable] = field(default_factory=list)
    condition: Variable | None = None


def _as_list(x: Any) -> list[Any]:
    if x is None:
        return []
    if isinstance(x, list | tuple):
        return list(x)
    return [x]


def _taps(value: Any, what: str) -> tuple[int, ...]:
    taps = tuple(int(k) for k in _as_list(value))
    if len(set(taps)) != len(taps):
        raise ValueError(f"scan: the taps of {what} must be distinct, got {list(taps)}")
    return taps


def _sequences(sequences: Any, go_backwards: bool) -> list[tuple[Variable, tuple[int, ...]]]:
    """Each sequence as the op iterates it, with its taps (`_theano_window`)."""
    result = []
    for i, entry in enumerate(_as_list(sequences)):
        taps: tuple[int, ...] = (0,)
        if isinstance(entry, dict):
            if "input" not in entry:
                raise ValueError(f"scan: sequence #{i} is a dict without an 'input' entry")
            taps = _taps(entry.get("taps", [0]), f"sequence #{i}") or (0,)
            entry = entry["input"]
        var = T.as_tensor_variable(entry)
        if var.ndim < 1:
            raise ValueError(
                f"scan: sequence #{i} must have at least one dimension to iterate over, "
                f"got a 0-d tensor {var}"
            )
        result.append(_theano_window(var, taps, go_backwards))
    return result


def _theano_window(
    var: Variable, taps: tuple[int, ...], go_backwards: bool
) -> tuple[Variable, tuple[int, ...]]:
    """The sequence and taps that give Theano's slices: step `t` reads
    `x[t + k - min(taps, 0)]` through tap `k`, over `len(x) - (max(taps, 0) -
    min(taps, 0))` steps (Theano counts tap 0 as used: taps [1, 2] skip `x[0]`, taps
    [-2] stop 2 rows early). The op reads row `t + k - min(taps)` of what it iterates
    over, so `x` is cut to the rows the taps reach.

    With `go_backwards`, Theano reverses each tap's window: step `t` reads
    `x[len - 1 - max(taps, 0) + k - t]`, the steps run from the end and tap -1 is still
    the row before tap 0. That is the cut sequence reversed with the taps negated."""
    low, high = min(taps), max(taps)
    first, drop = low - min(low, 0), max(high, 0) - high
    if first or drop:
        var = var[first : T.shape_i(var, 0) - drop] if drop else var[first:]
    if not go_backwards:
        return var, taps
    return var[::-1], tuple(-k for k in taps)


def _output(entry: Any, i: int) -> _Output:
    taps: tuple[int, ...] = (-1,)
    if isinstance(entry, dict):
        if entry.get("initial") is None:
            if entry.get("taps"):
                raise ValueError(f"scan: outputs_info #{i} has taps but no initial value")
            return _Output(None, ())
        taps = _taps(entry.get("taps", [-1]), f"outputs_info #{i}")
        entry = entry["initial"]
    if entry is None:
        return _Output(None, ())
    if not taps or any(k >= 0 for k in taps):
        raise ValueError(f"scan: the taps of outputs_info #{i} must be negative, got {list(taps)}")
    init = T.as_tensor_variable(entry)
    if taps == (-1,):  # the state itself: give it a history axis of length 1
        return _Output(T.dimshuffle(init, "x", *range(init.ndim)), taps)
    if init.ndim < 1:
        raise ValueError(
            f"scan: outputs_info #{i} has taps {list(taps)}, so its initial value needs a "
            f"leading axis of at least {max(-k for k in taps)} earlier values; got a 0-d tensor"
        )
    return _Output(init, taps)


def _placeholder(type_: builtin.TensorType, name: str) -> Variable:
    """A new input of the IR type `type_` (static lengths kept) for one step's value."""
    value = Block(arg_types=[type_]).args[0]
    if BlockArgument.is_valid_name(name):
        value.name_hint = name
    var = Variable(value, name)
    var.tag = _input_tag(var)
    return var


def _row_ir(var: Variable) -> builtin.TensorType:
    t = ag.tensor_type(var.value)
    return builtin.TensorType(t.element_type, t.get_shape()[1:])


def _row_type(var: Variable) -> TensorType:
    return TensorType.from_ir(_row_ir(var))


def _split_condition(returned: Any) -> tuple[Any, Variable | None]:
    """The step function's return value without its `until` (which must come last, as
    in Theano), and the condition."""
    if isinstance(returned, until):
        return [], returned.condition
    if not isinstance(returned, list | tuple):
        return returned, None
    items = list(returned)
    found = [i for i, item in enumerate(items) if isinstance(item, until)]
    if not found:
        return returned, None
    if found != [len(items) - 1]:
        raise ValueError(_ORDER_MESSAGE)
    condition = items.pop().condition
    return (items[0] if len(items) == 1 else items), condition


def _split_returned(returned: Any) -> tuple[list[Variable], dict[Any, Any]]:
    """The step function's outputs and updates (Theano accepts outputs, (outputs,
    updates), (updates, outputs) or updates alone)."""
    updates: dict[Any, Any] = {}
    if isinstance(returned, dict):
        return [], dict(returned)
    items = list(returned) if isinstance(returned, list | tuple) else [returned]
    outputs = []
    for item in items:
        if isinstance(item, dict):
            updates.update(item)
        elif (
            isinstance(item, list | tuple)
            and item
            and all(isinstance(p, tuple) and len(p) == 2 for p in item)
        ):
            updates.update(dict(item))
        elif isinstance(item, list | tuple):
            outputs.extend(item)
        else:
            outputs.append(item)
    for i, out in enumerate(outputs):
        outputs[i] = T.as_tensor_variable(out)
    return outputs, updates


def _trace(
    fn: Callable[..., Any],
    seqs: list[tuple[Variable, tuple[int, ...]]],
    outs: list[_Output],
    non_seqs: list[Variable],
) -> tuple[_Trace, dict[Any, Any]]:
    trace = _Trace()
    for i, (seq, taps) in enumerate(seqs):
        for k in taps:
            trace.placeholders.append(_placeholder(_row_ir(seq), f"seq{i}_t{k:+d}"))
    for i, out in enumerate(outs):
        if out.initial is not None:
            for k in out.taps:
                trace.placeholders.append(_placeholder(_row_ir(out.initial), f"out{i}_t{k:+d}"))
    returned, trace.condition = _split_condition(fn(*trace.placeholders, *non_seqs))
    trace.outputs, updates = _split_returned(returned)
    return trace, updates


def _feed_back_updates(trace: _Trace, outs: list[_Output], updates: dict[Any, Any]) -> list[Any]:
    """Shared-variable updates of the step become fed-back outputs: inside the step the
    variable reads its value after the previous step (its own value before step 0), and
    its update is the output's last step. Appends to `trace` and `outs`; the variables."""
    from arignote.compile.clone import rebuild
    from arignote.compile.sharedvalue import SharedVariable

    if not updates:
        return []
    shared, states, new_values = [], [], []
    for target, value in updates.items():
        if not isinstance(target, SharedVariable):
            raise TypeError(f"scan: an update target must be a shared variable, got {target!r}")
        value = T.as_tensor_variable(value)
        if value.dtype != target.dtype or value.ndim != target.ndim:
            value = T.cast(value, target.dtype)
        if value.ndim != target.ndim:
            raise TypeError(f"scan: the update of {target} has {value.ndim} dimensions")
        shared.append(target)
        states.append(_placeholder(ag.tensor_type(target.value), f"{target.name or 'shared'}_t-1"))
        new_values.append(value.value)
    replace = {sv.value: ph.value for sv, ph in zip(shared, states, strict=True)}
    rebuilt = rebuild([*(o.value for o in trace.outputs), *new_values], replace)
    trace.outputs = [variable_of(v) for v in rebuilt]
    trace.placeholders += states
    for sv in shared:
        outs.append(_Output(T.dimshuffle(sv, "x", *range(sv.ndim)), (-1,)))
    return shared


def _add_default_updates(
    trace: _Trace, updates: dict[Any, Any], non_seqs: Sequence[Variable]
) -> None:
    """Adds to `updates` the `default_update` of each shared variable the step reads
    (through expressions built inside or outside it, not through the non-sequences)
    that has one and no update yet, as Theano's scan does: a random stream the step
    uses draws anew at every step, and the scan's updates advance its generator."""
    from arignote.compile.sharedvalue import shared_of

    stop = [v.value for v in non_seqs]
    updated = {id(target) for target in updates}
    pending = [o.value for o in trace.outputs]
    pending += [T.as_tensor_variable(v).value for v in updates.values()]
    if trace.condition is not None:
        pending.append(trace.condition.value)
    while pending:
        ops = ancestors(pending, stop)
        pending = []
        read = [shared_of(v) for op in ops for v in op.operands]
        for sv in read:
            default = getattr(sv, "default_update", None)
            if sv is None or default is None or id(sv) in updated:
                continue
            updated.add(id(sv))
            updates[sv] = default
            pending.append(T.as_tensor_variable(default).value)


def _updates_and_condition(trace: _Trace, outs: list[_Output], updates: dict[Any, Any]) -> list:
    """The shared-variable updates fed back (`_feed_back_updates`), then the `until`
    condition as the last output of the step (a bool; reading the shared variables as
    the outputs do) with its entry in `outs` (the count of steps: not fed back)."""
    if trace.condition is None:
        return _feed_back_updates(trace, outs, updates)
    condition = trace.condition
    if condition.dtype != "bool":
        condition = T.neq(condition, 0)
    position = len(trace.outputs)
    trace.outputs.append(condition)
    updated = _feed_back_updates(trace, outs, updates)
    trace.outputs.append(trace.outputs.pop(position))
    outs.append(_Output(None, ()))
    return updated


def _steps_run(results: list[Variable], op: ag.ScanOp) -> list[Variable]:
    """The results of a repeat-until scan cut to the steps run (the op's outputs have
    `n_steps` rows, its last result the count); other scans' results unchanged."""
    if not op.has_until:
        return results
    count = results.pop()
    return [r[:count] for r in results]


# --- building the op ---------------------------------------------------------------------


def _body_ops(outputs: Sequence[SSAValue], inner: set[SSAValue]) -> list[Operation]:
    """The operations between the placeholders `inner` and `outputs`, in order; `inner`
    gains their results."""
    body = []
    for op in ancestors(list(outputs)):
        if any(o in inner for o in op.operands):
            body.append(op)
            inner.update(op.results)
    return body


def _is_constant(value: SSAValue) -> bool:
    return isinstance(value.owner, ag.ConstantOp)


def _captured(
    body: Sequence[Operation], outputs: Sequence[SSAValue], inner: set[SSAValue], first: list
) -> list[SSAValue]:
    """The outer values the body reads (constants excepted: they are copied in), the
    non-sequences `first` first."""
    found: dict[SSAValue, None] = {}
    used = [o for op in body for o in op.operands] + list(outputs)
    used_set = set(used)
    for v in first:
        if v.value in used_set and v.value not in inner:
            found[v.value] = None
    for value in used:
        if value not in inner and not _is_constant(value):
            found[value] = None
    return list(found)


def _check_strict(
    body: Sequence[Operation], captured: Sequence[SSAValue], non_seqs: Sequence[Variable]
) -> None:
    """With `strict=True`, Theano's `MissingInputError` for a variable the step uses
    without receiving it (an input or shared variable not in `non_sequences`)."""
    from arignote.compile.function import MissingInputError

    allowed = {v.value for v in non_seqs}
    for value in captured:
        if value in allowed:
            continue
        missing = [v for v in graph_inputs([variable_of(value)]) if v.value not in allowed]
        if not missing:
            continue
        user = next((op for op in body if value in op.operands), None)
        index = list(user.operands).index(value) if user is not None else 0
        node = variable_of(user.results[0]).owner if user is not None else variable_of(value)
        raise MissingInputError(
            f"Input {index} of the graph (indices start from 0), used to compute {node}, "
            "was not provided and not given a value. scan was called with strict=True: "
            f"the step function must receive {', '.join(str(v) for v in missing)} "
            "through sequences, outputs_info or non_sequences."
        )


def _check_output_types(outs: Sequence[_Output], outputs: Sequence[Variable]) -> None:
    if len(outputs) != len(outs):
        raise ValueError(
            f"scan: the step function returned {len(outputs)} outputs but outputs_info has "
            f"{len(outs)} entries"
        )
    for i, (out, var) in enumerate(zip(outs, outputs, strict=True)):
        if out.initial is None:
            continue
        state = _row_type(out.initial)
        if var.dtype != state.dtype or var.ndim != state.ndim:
            raise TypeError(
                f"scan: output #{i} of the step function ({var}) has type {var.type}, but its "
                f"initial state (outputs_info #{i}) has type {state}; they must have the same "
                "dtype and number of dimensions (cast the initial value or the output)"
            )


def _build_block(trace: _Trace, body: Sequence[Operation], captured: Sequence[SSAValue]) -> Block:
    args = [p.value for p in trace.placeholders] + list(captured)
    block = Block(arg_types=[v.type for v in args])
    mapping: dict[SSAValue, SSAValue] = dict(zip(args, block.args, strict=True))
    for old, new in zip(args, block.args, strict=True):
        if old.name_hint and BlockArgument.is_valid_name(old.name_hint):
            new.name_hint = old.name_hint

    def materialize(value: SSAValue) -> None:
        if value not in mapping and _is_constant(value):
            const = value.owner
            assert isinstance(const, Operation)
            block.add_op(new := const.clone())
            mapping[value] = new.results[0]

    for op in body:
        for operand in op.operands:
            materialize(operand)
        block.add_op(op.clone(value_mapper=mapping))
    for out in trace.outputs:
        materialize(out.value)
    block.add_op(ag.YieldOp([mapping[o.value] for o in trace.outputs]))
    return block


def _n_steps(n_steps: Any, has_sequences: bool) -> Variable | None:
    if n_steps is None:
        if not has_sequences:
            raise ValueError(
                "scan: no information about the number of steps; give sequences or n_steps"
            )
        return None
    var = T.as_tensor_variable(n_steps)
    if var.ndim != 0 or not var.dtype.startswith(("int", "uint")):
        raise TypeError(f"scan: n_steps must be a 0-d integer, got {var} of type {var.type}")
    return var


def _result_type(out: _Output, var: Variable) -> Any:
    row = _row_ir(out.initial) if out.initial is not None else ag.tensor_type(var.value)
    return builtin.TensorType(row.element_type, [ag.DYNAMIC, *row.get_shape()])


def _label(op: Operation, name: str | None) -> None:
    where = _user_location()
    locate(op)
    view = f"Scan{{{name}}}" if name else "Scan"
    op.attributes[NODE_ATTRIBUTE] = StringAttr(node_label(view, where))
    if name:
        op.attributes["ag.scan_name"] = StringAttr(name)


def scan(
    fn: Callable[..., Any],
    sequences: Any = None,
    outputs_info: Any = None,
    non_sequences: Any = None,
    n_steps: Any = None,
    truncate_gradient: int = -1,
    go_backwards: bool = False,
    mode: Any = None,
    name: str | None = None,
    profile: Any = False,
    allow_gc: Any = None,
    strict: bool = False,
    return_list: bool = False,
) -> tuple[Any, OrderedDict[Any, Any]]:
    """Apply `fn` over steps, Theano's `scan`; returns `(outputs, updates)`.

    * `sequences`: tensors iterated over their first axis; an entry may be
      `dict(input=x, taps=[...])` (step `t` then sees `x[t + k - min(taps)]` per tap `k`).
    * `outputs_info`: per output of `fn`, None (not fed back), an initial value (fed back
      as tap -1) or `dict(initial=x0, taps=[-k, ...])` (`x0`'s first axis holds the
      `max k` values before step 0, oldest first).
    * `non_sequences`: passed whole to every step.
    * `n_steps`: the number of steps (default: the shortest sequence's usable length).
    * `go_backwards`: iterate the sequences from their end.
    * `truncate_gradient`: `k > 0` backpropagates through the last `k` steps only.
    * `strict`: raise ValueError if `fn` uses a variable not passed to it.
    * `return_list`: always return a list of outputs (else one output is unwrapped).

    `fn` receives the sequence slices, then the earlier outputs (per output, per tap),
    then the non-sequences, and returns its outputs. Each result stacks an output over
    the steps (`n_steps x ...`). `mode`, `profile` and `allow_gc` are accepted for
    compatibility and ignored.
    """
    seqs = _sequences(sequences, go_backwards)
    info = _as_list(outputs_info)
    outs = [_output(entry, i) for i, entry in enumerate(info)]
    non_seqs = [T.as_tensor_variable(v) for v in _as_list(non_sequences)]
    steps = _n_steps(n_steps, bool(seqs))
    trace, updates = _trace(fn, seqs, outs, non_seqs)
    _add_default_updates(trace, updates, non_seqs)
    if outputs_info is None:
        outs = [_Output(None, ()) for _ in trace.outputs]
    _check_output_types(outs, trace.outputs)
    updated = _updates_and_condition(trace, outs, updates)
    inner = {p.value for p in trace.placeholders}
    out_values = [o.value for o in trace.outputs]
    body = _body_ops(out_values, inner)
    captured = _captured(body, out_values, inner, non_seqs)
    if strict:
        _check_strict(body, captured, non_seqs)
    result_types = [_result_type(o, v) for o, v in zip(outs, trace.outputs, strict=True)]
    if trace.condition is not None:  # the last result counts the steps run
        result_types[-1] = builtin.TensorType(i64, [])
    op = ag.ScanOp(
        steps.value if steps is not None else None,
        [s.value for s, _ in seqs],
        [o.initial.value for o in outs if o.initial is not None],
        captured,
        [taps for _, taps in seqs],
        [o.taps for o in outs],
        result_types,
        _build_block(trace, body, captured),
    )
    if trace.condition is not None:
        op.properties["until"] = UnitAttr()
    if truncate_gradient is not None and truncate_gradient > 0:
        op.attributes[TRUNCATE_ATTRIBUTE] = IntegerAttr(int(truncate_gradient), i64)
    _label(op, name)
    results = _steps_run([Variable(r) for r in op.results], op)
    updates_out: OrderedDict[Any, Any] = OrderedDict()
    if updated:
        states = results[len(results) - len(updated) :]
        results = results[: len(results) - len(updated)]
        updates_out.update((sv, state[-1]) for sv, state in zip(updated, states, strict=True))
    if len(results) == 1 and not return_list:
        return results[0], updates_out
    return results, updates_out


def map(  # noqa: A001 - Theano's name
    fn: Callable[..., Any],
    sequences: Any,
    non_sequences: Any = None,
    truncate_gradient: int = -1,
    go_backwards: bool = False,
    mode: Any = None,
    name: str | None = None,
) -> tuple[Any, OrderedDict[Any, Any]]:
    """`fn` applied to each element of `sequences` (a `scan` without fed-back outputs)."""
    return scan(
        fn,
        sequences=sequences,
        outputs_info=None,
        non_sequences=non_sequences,
        truncate_gradient=truncate_gradient,
        go_backwards=go_backwards,
        mode=mode,
        name=name,
    )


def reduce(  # noqa: A001 - Theano's name
    fn: Callable[..., Any],
    sequences: Any,
    outputs_info: Any,
    non_sequences: Any = None,
    go_backwards: bool = False,
    mode: Any = None,
    name: str | None = None,
) -> tuple[Any, OrderedDict[Any, Any]]:
    """The last step of `scan(fn, sequences, outputs_info, non_sequences)`."""
    outputs, updates = scan(
        fn,
        sequences=sequences,
        outputs_info=outputs_info,
        non_sequences=non_sequences,
        go_backwards=go_backwards,
        mode=mode,
        name=name,
    )
    if isinstance(outputs, list):
        return [o[-1] for o in outputs], updates
    return outputs[-1], updates


def foldl(
    fn: Callable[..., Any],
    sequences: Any,
    outputs_info: Any,
    non_sequences: Any = None,
    mode: Any = None,
    name: str | None = None,
) -> tuple[Any, OrderedDict[Any, Any]]:
    """`reduce` from the first element of the sequences to the last."""
    return reduce(fn, sequences, outputs_info, non_sequences, False, mode, name)


def foldr(
    fn: Callable[..., Any],
    sequences: Any,
    outputs_info: Any,
    non_sequences: Any = None,
    mode: Any = None,
    name: str | None = None,
) -> tuple[Any, OrderedDict[Any, Any]]:
    """`reduce` from the last element of the sequences to the first."""
    return reduce(fn, sequences, outputs_info, non_sequences, True, mode, name)


def scan_checkpoints(
    fn: Callable[..., Any],
    sequences: Any = None,
    outputs_info: Any = None,
    non_sequences: Any = None,
    name: str = "checkpointscan_fn",
    n_steps: Any = None,
    save_every_N: int = 10,  # noqa: N803 - Theano's name
    padding: bool = True,
) -> tuple[Any, OrderedDict[Any, Any]]:
    """A `scan` that stores its states only every `save_every_N` steps (Theano's
    `scan_checkpoints`): an outer scan over chunks of `save_every_N` steps whose step runs
    an inner scan over the chunk and keeps its last step. The gradient recomputes each
    chunk's inner steps from its checkpoint, so backpropagation through time holds about
    `n / N + N` states instead of `n`.

    Restrictions (as Theano's): every output is fed back with the single tap -1 (an
    initial value, no `None`, no other taps); the sequences all have the length of the
    scan. Returns `(outputs, updates)` where each output holds the states at the
    checkpoints (`ceil(n / N)` rows; the last is the final state). The sequences are
    zero-padded to a multiple of `save_every_N` (a copy); with `padding=False` their
    length must already be one.
    """
    every = int(save_every_N)
    if every < 1:
        raise ValueError(f"scan_checkpoints: save_every_N must be >= 1, got {save_every_N}")
    infos = _as_list(outputs_info)
    for i, entry in enumerate(infos):
        if isinstance(entry, dict) and "taps" in entry:
            raise RuntimeError("scan_checkpoints doesn't work with taps.")
        if entry is None or isinstance(entry, dict) and entry.get("initial") is None:
            raise ValueError(
                f"scan_checkpoints: outputs_info #{i} must be an initial value fed back "
                "with tap -1 (no None, no other taps)"
            )
    seqs = [T.as_tensor_variable(s) for s in _as_list(sequences)]
    non_seqs = [T.as_tensor_variable(v) for v in _as_list(non_sequences)]
    if n_steps is None:
        if not seqs:
            raise ValueError("scan_checkpoints: give sequences or n_steps")
        n_steps = T.shape_i(seqs[0], 0)
    steps = T.cast(T.as_tensor_variable(n_steps), "int64")
    chunks = (steps + (every - 1)) // every
    chunked = [_chunks(s, chunks, every, padding) for s in seqs]
    mask = T.lt(_arange(chunks * every), steps).reshape((chunks, every))

    def outer_step(*args: Variable) -> list[Variable]:
        chunk_seqs, chunk_mask = list(args[: len(chunked)]), args[len(chunked)]
        states = list(args[len(chunked) + 1 : len(chunked) + 1 + len(infos)])

        def inner_step(*inner: Variable) -> list[Variable]:
            slices, valid = list(inner[: len(chunk_seqs)]), inner[len(chunk_seqs)]
            prev = list(inner[len(chunk_seqs) + 1 : len(chunk_seqs) + 1 + len(states)])
            new = fn(*slices, *prev, *non_seqs)
            new_list = list(new) if isinstance(new, list | tuple) else [new]
            return [T.switch(valid, n, p) for n, p in zip(new_list, prev, strict=True)]

        results, _ = scan(
            inner_step,
            sequences=[*chunk_seqs, chunk_mask],
            outputs_info=states,
            name=f"{name}_inner",
            return_list=True,
        )
        return [r[-1] for r in results]

    outputs, updates = scan(
        outer_step,
        sequences=[*chunked, mask],
        outputs_info=infos,
        n_steps=chunks,
        name=f"{name}_outer",
    )
    return outputs, updates


def _arange(n: Variable) -> Variable:
    from arignote.tensor.subtensor import arange

    return arange(n, dtype="int64")


def _chunks(seq: Variable, chunks: Variable, every: int, padding: bool) -> Variable:
    """`seq` as `chunks x every x ...`, zero-padded at the end when `padding`."""
    from arignote.tensor.subtensor import alloc, concatenate

    rest = [T.shape_i(seq, d) for d in range(1, seq.ndim)]
    if padding:
        missing = chunks * every - T.shape_i(seq, 0)
        zero = T.constant(0, dtype=seq.dtype)
        seq = concatenate([seq, alloc(zero, missing, *rest)])
    return seq.reshape([chunks, every, *rest], ndim=seq.ndim + 1)
