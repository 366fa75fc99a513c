"""Placing a graph's operations into a function body and the regions of its control flow.

Frontend expressions are detached `ag` ops. A region-carrying op built by the frontend
(`ag.if`, see `arignote.ifelse`) has regions that only yield values computed outside
it: `ifelse(c, mean(x), mean(y))` is an `ag.if` whose regions yield the two detached
means. When `function()` emits the body, each operation goes to the innermost place
that covers all its uses: an op used only by one branch (directly or through other ops
of that branch) moves into that branch's region and is computed only when the branch is
taken; an op used by both branches, by the condition or by anything outside stays
outside. In the tree of places (the body; each region of each placed op is a child of
the place of that op) an op's place is the lowest common ancestor of the places of its
uses.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Block, Operation, OpResult, Region, SSAValue

from arignote.dialects import ag
from arignote.graph import ancestors, region_inputs

Place = tuple[Operation, int] | None
"""Where an op is emitted: the function body (None) or a region (op, region index)."""


def _common(a: tuple[Place, ...], b: tuple[Place, ...]) -> tuple[Place, ...]:
    """The longest common prefix of two paths of places."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def place_ops(ops: Sequence[Operation], results: Sequence[SSAValue]) -> dict[Operation, Place]:
    """The place of each op of `ops` (topologically ordered, as `ancestors` gives them)
    computing `results` (which are used in the body).

    Walking the ops in reverse, each op's uses are known when it is reached; its path
    (the places from the body down to its own) is the common prefix of its uses' paths.
    """
    members = set(ops)
    paths: dict[Operation, tuple[Place, ...]] = {}

    def use(value: SSAValue, path: tuple[Place, ...]) -> None:
        if not isinstance(value, OpResult) or value.op not in members:
            return
        seen = paths.get(value.op)
        paths[value.op] = path if seen is None else _common(seen, path)

    for value in results:
        use(value, ())
    placed: dict[Operation, Place] = {}
    for op in reversed(ops):
        path = paths.get(op, ())
        placed[op] = path[-1] if path else None
        for value, region in region_inputs(op):
            use(value, path if region is None else (*path, (op, region)))
    return placed


def emit_ops(block: Block, results: Sequence[SSAValue], mapping: dict[SSAValue, SSAValue]) -> None:
    """Clone the ops computing `results` into `block` (after its current ops), each at
    its place; `mapping` maps the graph's inputs to the block's values and receives the
    values of the clones."""
    ops = ancestors(list(results))
    placed = place_ops(ops, results)
    members: dict[Place, list[Operation]] = {}
    for op in ops:
        members.setdefault(placed[op], []).append(op)
    _emit_place(block, None, members, mapping)


def _emit_place(
    block: Block,
    place: Place,
    members: dict[Place, list[Operation]],
    mapping: dict[SSAValue, SSAValue],
) -> None:
    for op in members.get(place, ()):
        if isinstance(op, ag.IfOp):
            block.add_op(_emit_if(op, members, mapping))
        else:
            block.add_op(op.clone(value_mapper=mapping))


def _emit_if(
    op: ag.IfOp, members: dict[Place, list[Operation]], mapping: dict[SSAValue, SSAValue]
) -> ag.IfOp:
    regions = []
    for index, terminator in enumerate((op.then_yield, op.else_yield)):
        body = Block()
        _emit_place(body, (op, index), members, mapping)
        body.add_op(ag.YieldOp([mapping.get(v, v) for v in terminator.values]))
        regions.append(Region(body))
    new = ag.IfOp(mapping.get(op.condition, op.condition), op.result_types, *regions)
    new.attributes.update(op.attributes)
    for old, result in zip(op.results, new.results, strict=True):
        result.name_hint = old.name_hint
        mapping[old] = result
    return new
