"""The gradient of `ag.scan`: backpropagation through time, as a reverse scan.

For a forward scan over `n` steps the rule builds a second scan over the same steps in
reverse order. Its step re-applies the forward step's body to the forward values of that
step (sequence slices, earlier states, non-sequences) and takes the vector-Jacobian
product with `grad(known_grads=...)` (the step's outputs, which the gradient rules of
`tanh` and the like read, are the forward scan's values: they are not recomputed), the
cotangent of each output at time `s` being the
gradient arriving from outside plus what later steps sent back through the taps. The
reverse scan carries, per fed-back output and tap `-k`, the gradient sent to the state
`k` steps earlier (a fed-back output of its own, with the same tap), and accumulates the
gradients of the non-sequences; the gradients of the sequence slices are stacked and
added back into place. `truncate_gradient=k` runs the reverse scan over the last `k`
steps only. For a repeat-until scan the steps are those run (its count result), the
forward values and incoming gradients cut to them.

The reverse scan's sequences are reversed windows of the forward values (basic
subtensors: views in native code); the states the steps started from are
`concatenate(init[:L], hs)`, which the `scan-history` pass turns into the forward scan's
own history buffer. An incoming gradient that is zeros but for the last row (a cost of
`h[-1]`) seeds the carried gradient of tap -1 instead of being a sequence (`_seeds`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation, OpResult, SSAValue

from arignote.dialects import ag
from arignote.graph import Variable, variable_of
from arignote.runtime.dtypes import constant_array
from arignote.tensor import basic as T
from arignote.tensor import subtensor as S
from arignote.tensor.grad_rules import RULES, is_float


@dataclass(frozen=True)
class _Parts:
    """The operands of a forward scan, by role."""

    seqs: list[Variable]
    inits: list[Variable]
    nonseqs: list[Variable]
    seq_taps: list[tuple[int, ...]]
    out_taps: list[tuple[int, ...]]
    recurrent: list[int]

    @staticmethod
    def of(op: ag.ScanOp, inputs: Sequence[Variable]) -> _Parts:
        given = 1 if op.n_steps is not None else 0
        ns, ni = len(op.sequences), len(op.initials)
        return _Parts(
            list(inputs[given : given + ns]),
            list(inputs[given + ns : given + ns + ni]),
            list(inputs[given + ns + ni :]),
            op.sequence_tap_lists,
            op.output_tap_lists,
            op.recurrent_outputs,
        )


def apply_body(op: ag.ScanOp, args: Sequence[Variable]) -> list[Variable]:
    """The forward step's outputs computed from `args` (a copy of the body's ops)."""
    block = op.body.block
    mapping: dict[SSAValue, SSAValue] = {
        a: _with_type_of(a, v).value for a, v in zip(block.args, args, strict=True)
    }
    for body_op in block.ops:
        if isinstance(body_op, ag.YieldOp):  # (not an `until` loop's condition)
            return [variable_of(mapping[v]) for v in body_op.values[: op.stepped_outputs]]
        new = body_op.clone(value_mapper=mapping)
        mapping.update(zip(body_op.results, new.results, strict=True))
    raise AssertionError("ag.scan body without ag.yield")


def _with_type_of(arg: SSAValue, value: Variable) -> Variable:
    """`value` with the static lengths of `arg` (a body argument or a step output), whose
    users are copied with their result types: a state whose initial value has a fixed
    shape reaches the reverse scan with lengths the forward body left unknown, or the
    other way round. A reshape forgets (or asserts, at run time) the lengths that differ."""
    if value.value.type == arg.type:
        return value
    lengths = ag.value_shape(arg)
    if len(lengths) != value.ndim:
        return value
    shape = [value.shape[d] if n == ag.DYNAMIC else n for d, n in enumerate(lengths)]
    return S.reshape(value, shape) if shape else value


def _window(x: Variable, first: int, n: Variable) -> Variable:
    """Rows `first .. first + n` of `x`, reversed."""
    return x[first : first + n][::-1]


def _constant_data(value: SSAValue) -> np.ndarray | None:
    owner = value.owner
    if isinstance(owner, ag.ConstantOp):
        return constant_array(owner.value)
    return None


def _is_zeros(value: SSAValue) -> bool:
    """Whether `value` is zeros as the gradient machinery builds them: a zero constant, an
    `ag.alloc` of one, or `fill(model, 0)` (`select(true, 0, model)`, `zeros_like`)."""
    owner = value.owner
    if isinstance(owner, ag.SelectOp):
        cond, zero = _constant_data(owner.cond), _constant_data(owner.true_value)
        return cond is not None and bool(np.all(cond)) and zero is not None and not zero.any()
    if isinstance(owner, ag.AllocOp):
        value = owner.value
    data = _constant_data(value)
    return data is not None and not data.any()


def _last_row_seed(g: Variable) -> Variable | None:
    """`v` when `g` is zeros with `v` added to (or set at) its last row, `inc_subtensor(
    zeros_like(h)[-1], v)`: the gradient of a cost reading `h[-1]`, which then need not be
    fed to the reverse scan as a sequence of mostly zero rows."""
    op = g.value.owner
    if not isinstance(op, ag.IncSubtensorOp | ag.SetSubtensorOp) or op.dynamic:
        return None
    (kind, start, _, _), *rest = op.entries()
    full = (ag.SLICE, ag.SLICE_NONE, ag.SLICE_NONE, ag.SLICE_NONE)
    if kind != ag.INDEX or start != -1 or any(e != full for e in rest):
        return None
    return variable_of(op.value) if _is_zeros(op.input) else None


@dataclass
class _Reverse:
    """The reverse scan's inputs, in the order of its step function's arguments."""

    sequences: list[Variable]
    outputs_info: list[Any]
    float_outputs: list[int]
    gz_outputs: list[int]
    """The float outputs whose incoming gradient is a sequence of the reverse scan (for a
    fed-back output it may be zeros, then the carried gradients are all there is, or
    zeros but for the last row, then that row seeds the carried gradient: `_seeds`)."""
    taps: list[tuple[int, int]]  # (recurrent position j, k) per carried tap gradient
    float_nonseqs: list[int]
    float_seq_taps: list[tuple[int, int]]  # (sequence i, tap) per sequence gradient


def _reverse_inputs(
    parts: _Parts, outputs: Sequence[Variable], gz: Sequence[Variable], n: Variable
) -> _Reverse:
    float_outputs = [i for i, o in enumerate(outputs) if is_float(o)]
    seeds = _seeds(parts, gz, float_outputs)
    gz_outputs = [
        i
        for i in float_outputs
        if i not in seeds and not (i in parts.recurrent and _is_zeros(gz[i].value))
    ]
    sequences = [gz[i][::-1] for i in gz_outputs]
    for seq, taps in zip(parts.seqs, parts.seq_taps, strict=True):
        sequences += [_window(seq, k - min(taps), n) for k in taps]
    for j, i in enumerate(parts.recurrent):
        depth = max(-k for k in parts.out_taps[i])
        history = S.concatenate([parts.inits[j][:depth], outputs[i]])
        sequences += [_window(history, depth + k, n) for k in parts.out_taps[i]]
    sequences += [outputs[i][::-1] for i in float_outputs]  # the forward values
    rev = _Reverse(sequences, [], float_outputs, gz_outputs, [], [], [])
    for j, i in enumerate(parts.recurrent):
        if not is_float(outputs[i]):
            continue
        for k in parts.out_taps[i]:
            zero = T.zeros_like(parts.inits[j][:-k])
            initial = _row_initial(parts.inits[j][0], seeds.get(i)) if k == -1 else zero
            rev.outputs_info.append(dict(initial=initial, taps=[k]))
            rev.taps.append((j, k))
    for m, v in enumerate(parts.nonseqs):
        if is_float(v):
            rev.outputs_info.append(T.zeros_like(v))
            rev.float_nonseqs.append(m)
    for i, (seq, taps) in enumerate(zip(parts.seqs, parts.seq_taps, strict=True)):
        if is_float(seq):
            rev.outputs_info += [None] * len(taps)
            rev.float_seq_taps += [(i, k) for k in taps]
    return rev


def _seeds(parts: _Parts, gz: Sequence[Variable], float_outputs: Sequence[int]) -> dict[int, Any]:
    """Fed-back outputs (with a tap -1) whose incoming gradient is zeros but for the last
    row (`_last_row_seed`) → that row. The reverse scan's first step is the forward scan's
    last (truncated or not), so the row becomes the initial value of the gradient it
    carries for tap -1 instead of a sequence."""
    seeds: dict[int, Any] = {}
    for i in float_outputs:
        if i in parts.recurrent and -1 in parts.out_taps[i]:
            seed = _last_row_seed(gz[i])
            if seed is not None:
                seeds[i] = seed
    return seeds


def _row_initial(row: Variable, seed: Variable | None) -> Variable:
    """The initial carried gradient of tap -1: zeros of `row`'s shape plus the seed."""
    if seed is None:
        return T.zeros_like(row)
    if seed.type == row.type:  # the seed fills the row exactly (checked by inc_subtensor)
        return seed
    return T.zeros_like(row) + T.cast(seed, row.dtype)


def _backward_step(op: ag.ScanOp, parts: _Parts, rev: _Reverse) -> Any:
    """The reverse scan's step function."""
    from arignote.gradient import grad

    n_seq_args = sum(len(t) for t in parts.seq_taps)
    n_state_args = sum(len(parts.out_taps[i]) for i in parts.recurrent)

    def step(*args: Variable) -> list[Variable]:
        args_list = list(args)
        gys = args_list[: len(rev.gz_outputs)]
        rest = args_list[len(rev.gz_outputs) :]
        forward_args = rest[: n_seq_args + n_state_args]
        rest = rest[n_seq_args + n_state_args :]
        forward_outs, rest = rest[: len(rev.float_outputs)], rest[len(rev.float_outputs) :]
        carried, rest = rest[: len(rev.taps)], rest[len(rev.taps) :]
        accumulators, nonseqs = rest[: len(rev.float_nonseqs)], rest[len(rev.float_nonseqs) :]
        cotangents = dict(zip(rev.gz_outputs, gys, strict=True))
        for (j, _), c in zip(rev.taps, carried, strict=True):
            i = parts.recurrent[j]
            cotangents[i] = cotangents[i] + c if i in cotangents else c
        outs = apply_body(op, [*forward_args, *nonseqs])
        known: dict[Variable, Variable] = {}
        for i, g in cotangents.items():
            known[outs[i]] = known[outs[i]] + g if outs[i] in known else g
        state_args = forward_args[n_seq_args:]
        wrt = [*state_args, *nonseqs, *forward_args[:n_seq_args]]
        grads = grad(None, wrt, known_grads=known, disconnected_inputs="ignore")
        grads = _reuse_forward_values(grads, outs, rev.float_outputs, forward_outs)
        g_state, g_nonseq = grads[:n_state_args], grads[n_state_args : n_state_args + len(nonseqs)]
        g_seq = grads[n_state_args + len(nonseqs) :]
        return [
            *_carried_grads(parts, rev, g_state),
            *(acc + g_nonseq[m] for acc, m in zip(accumulators, rev.float_nonseqs, strict=True)),
            *_seq_grads(parts, rev, g_seq),
        ]

    return step


def _reuse_forward_values(
    grads: Sequence[Variable],
    outs: Sequence[Variable],
    indices: Sequence[int],
    forward: Sequence[Variable],
) -> list[Variable]:
    """`grads` with the step's recomputed outputs replaced by the forward scan's values
    of that step (the same numbers): the gradient rules that read an output (`tanh`,
    `exp`, `sigmoid`) then need no recomputation of it."""
    from arignote.compile.clone import rebuild

    replace: dict[SSAValue, SSAValue] = {}
    for i, value in zip(indices, forward, strict=True):
        out = outs[i].value
        if isinstance(out, OpResult) and not isinstance(out.op, ag.ConstantOp):
            replace.setdefault(out, _with_type_of(out, value).value)
    if not replace:
        return list(grads)
    return [variable_of(v) for v in rebuild([g.value for g in grads], replace)]


def _carried_grads(parts: _Parts, rev: _Reverse, g_state: Sequence[Variable]) -> list[Variable]:
    """The gradients of the state arguments the reverse scan carries (by (j, k))."""
    position, index = {}, 0
    for j, i in enumerate(parts.recurrent):
        for k in parts.out_taps[i]:
            position[(j, k)] = index
            index += 1
    return [g_state[position[key]] for key in rev.taps]


def _seq_grads(parts: _Parts, rev: _Reverse, g_seq: Sequence[Variable]) -> list[Variable]:
    position, index = {}, 0
    for i, taps in enumerate(parts.seq_taps):
        for k in taps:
            position[(i, k)] = index
            index += 1
    return [g_seq[position[key]] for key in rev.float_seq_taps]


def _forward_order(x: Variable, n: Variable, m: Variable | None, like: Variable) -> Variable:
    """A reverse-scan output (`m` rows, last step first) as `n` rows in step order, the
    steps the truncated reverse scan skipped getting zeros (rows shaped like `like`'s,
    an operand: its shape is known before anything runs)."""
    x = x[::-1]
    if m is None:
        return x
    zero = T.constant(0, dtype=x.dtype)
    pad = S.alloc(zero, n - m, *[T.shape_i(like, d) for d in range(1, like.ndim)])
    return S.concatenate([pad, x])


def _steps(op: ag.ScanOp, parts: _Parts, inputs: Sequence[Variable]) -> Variable:
    """The forward scan's number of steps, from its operands (int64)."""
    if op.n_steps is not None:
        return T.cast(inputs[0], "int64")
    n: Variable | None = None
    for seq, taps in zip(parts.seqs, parts.seq_taps, strict=True):
        usable = T.shape_i(seq, 0) - (max(taps) - min(taps))
        n = usable if n is None else T.minimum(n, usable)
    assert n is not None
    return n


def scan_grad_rule(
    op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]
) -> list[Any]:
    """`RULES[ag.ScanOp]`: the gradients of the sequences, initial values and
    non-sequences (None for `n_steps` and integer operands)."""
    from arignote.scan_module import TRUNCATE_ATTRIBUTE, scan

    assert isinstance(op, ag.ScanOp)
    parts = _Parts.of(op, inputs)
    if op.has_until:  # the steps run: the count (the last result), as Theano's as_while
        n = outputs[-1]
        outputs = [o[:n] for o in outputs[:-1]]
        gz = [g[:n] for g in gz[:-1]]
    else:
        n = _steps(op, parts, inputs)
    truncate = op.attributes.get(TRUNCATE_ATTRIBUTE)
    m = T.minimum(n, truncate.value.data) if isinstance(truncate, IntegerAttr) else None
    rev = _reverse_inputs(parts, outputs, gz, n)
    results, _ = scan(
        _backward_step(op, parts, rev),
        sequences=rev.sequences,
        outputs_info=rev.outputs_info,
        non_sequences=parts.nonseqs,
        n_steps=m,
        return_list=True,
    )
    carried = results[: len(rev.taps)]
    accumulated = results[len(rev.taps) : len(rev.taps) + len(rev.float_nonseqs)]
    seq_rows = results[len(rev.taps) + len(rev.float_nonseqs) :]
    given = 1 if op.n_steps is not None else 0
    grads: list[Any] = [None] * len(inputs)
    for m_index, acc in zip(rev.float_nonseqs, accumulated, strict=True):
        grads[given + len(parts.seqs) + len(parts.inits) + m_index] = T.sum(acc[-1:], axis=0)
    for i, seq in enumerate(parts.seqs):
        if is_float(seq):
            grads[given + i] = _seq_gradient(parts, rev, seq_rows, i, n, m)
    for j in range(len(parts.inits)):
        if is_float(parts.inits[j]):
            grads[given + len(parts.seqs) + j] = _init_gradient(parts, rev, carried, j, n, m)
    return grads


def _seq_gradient(
    parts: _Parts, rev: _Reverse, rows: Sequence[Variable], i: int, n: Variable, m: Any
) -> Variable:
    seq, taps = parts.seqs[i], parts.seq_taps[i]
    total = T.zeros_like(seq)
    for (si, k), r in zip(rev.float_seq_taps, rows, strict=True):
        if si != i:
            continue
        first = k - min(taps)
        total = S.inc_subtensor(total[first : first + n], _forward_order(r, n, m, seq))
    return total


def _init_gradient(
    parts: _Parts, rev: _Reverse, carried: Sequence[Variable], j: int, n: Variable, m: Any
) -> Variable:
    """Row `L - k + s` of the initial value fed step `s < k` through tap `-k`."""
    init = parts.inits[j]
    depth = max(-k for k in parts.out_taps[parts.recurrent[j]])
    total = T.zeros_like(init)
    for (cj, k), c in zip(rev.taps, carried, strict=True):
        if cj != j:
            continue
        if k == -1 and m is None:  # the last reverse step: lets scan-last-step keep one row
            rows = c[-1:]
        else:
            rows = _forward_order(c, n, m, init)[:-k]
        first = depth + k
        total = S.inc_subtensor(total[first : first + T.minimum(n, -k)], rows)
    return total


RULES[ag.ScanOp] = scan_grad_rule
