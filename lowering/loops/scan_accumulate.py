"""Accumulators of a scan kept in one row, updated in place (used by `ag_scan`).

A fed-back output only the last step of which is kept (`last_only`) normally lives in a
ring of `L + 1` rows: each step reads row `t - 1` and writes row `t`. When the state is
an *accumulator*, the ring costs a copy per step: `ag.gemm` (and `ag.gemv`) with `beta`
first copies its initial value `C` into its result, an `ag.add` reads one row and writes
another. Such a state keeps a single row instead, which the op updates in place, when

- it is `last_only`, not `with_initial`, with the taps exactly `[-1]`;
- its block argument has exactly one use: the initial value `C` of an `ag.gemm` or
  `ag.gemv` with `beta`, or the left-hand side of an `ag.add` of the argument's own type
  (so the add reads each element at the index it writes);
- that op's result is what the body yields for this state, and for no other output
  yielded before it.

Then nothing else reads the previous value, so overwriting it cannot be observed. The
BLAS op gets `ag.destroy_map = [0, 4]` (its result over its initial value, as the
`inplace-update` pass sets it): its lowering then skips the copy of `C` when `C` and the
result share their address, as they do here.
"""

from __future__ import annotations

from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue

from arignote.dialects import ag


def _state_arguments(op: ag.ScanOp) -> dict[int, BlockArgument]:
    """Output index → its block argument, for fed-back outputs with the taps `[-1]`."""
    return {
        i: args[0]
        for i, args in op.output_tap_arguments().items()
        if op.output_tap_lists[i] == (-1,)
    }


def _accumulates(user: Operation, k: int, arg: SSAValue) -> bool:
    """Whether `user` reading `arg` as its operand `k` may update it in place."""
    if isinstance(user, ag.GemmOp | ag.GemvOp):
        return k == ag.INITIAL_OPERAND
    if isinstance(user, ag.AddOp):
        return k == 0 and user.results[0].type == arg.type
    return False


def _is_accumulator(op: ag.ScanOp, i: int, arg: BlockArgument, yielded: list[SSAValue]) -> bool:
    uses = list(arg.uses)
    if len(uses) != 1:
        return False
    user, k = uses[0].operation, uses[0].index
    value = yielded[i]
    if user.parent_block() is not op.body.block or not isinstance(value, OpResult):
        return False
    if value.op is not user or value in yielded[:i]:
        return False
    return _accumulates(user, k, arg)


def accumulated_outputs(op: ag.ScanOp) -> set[int]:
    """The outputs of `op` kept in one row and updated in place (see the module doc)."""
    if not op.body.block.ops.last or op.has_until:
        return set()
    yielded = list(op.body.block.ops.last.operands)
    last, initial = op.last_only_outputs, op.with_initial_outputs
    return {
        i
        for i, arg in _state_arguments(op).items()
        if i in last and i not in initial and _is_accumulator(op, i, arg, yielded)
    }


def mark_in_place(op: ag.ScanOp, outputs: set[int]) -> None:
    """Gives the BLAS op updating each of `outputs` its `ag.destroy_map` (result 0 over
    its initial value), so that its lowering skips the copy of that value."""
    yielded = list(op.body.block.ops.last.operands)
    for i in outputs:
        producer = yielded[i].op
        if isinstance(producer, ag.GemmOp | ag.GemvOp) and not ag.destroy_map(producer):
            ag.set_destroy_map(producer, [0, ag.INITIAL_OPERAND])
