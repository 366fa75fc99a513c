"""SSA dominance: each operand is defined before its use, where the use can see it.

xDSL's verifier checks each op's own invariants but not dominance, which MLIR's verifier
does; the lowering assumes it (it looks each operand up among the values already
computed). A value used by an op must be a block argument of the op's block or of a
block enclosing it, or the result of an op that comes before the user (or before the
op enclosing the user) in that block; with several blocks in a region (after
`convert-scf-to-cf`), a defining block other than the user's must dominate it. So a
region cannot read a value of a sibling region (`ag.yield` in the `else` region of an
`ag.if` of a value computed in its `then` region), an op cannot read its own results
inside its regions, and nothing reads a value computed later in its block.

The regions of `builtin.module` are graph regions (MLIR's rule): there order does not
matter. The checks are iterative: blocks may hold more ops than Python's recursion limit.

```python
from arignote.dialects.ag.dominance import verify_dominance

verify_dominance(module)  # raises VerifyException naming the op and its operand
```
"""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.irdl.dominance import DominanceInfo
from xdsl.utils.exceptions import VerifyException


class DominanceError(VerifyException):
    """An operand that does not dominate its use; `op` is the user."""

    def __init__(self, message: str, op: Operation):
        super().__init__(message)
        self.op = op


class _Orders:
    """Positions of ops in their blocks and block dominance, computed once per block or
    region that a check needs."""

    def __init__(self) -> None:
        self._positions: dict[Block, dict[Operation, int]] = {}
        self._dominance: dict[Region, DominanceInfo] = {}

    def before(self, a: Operation, b: Operation, block: Block) -> bool:
        positions = self._positions.get(block)
        if positions is None:
            positions = {op: k for k, op in enumerate(block.ops)}
            self._positions[block] = positions
        return positions[a] < positions[b]

    def dominates(self, a: Block, b: Block, region: Region) -> bool:
        """Whether `a` dominates `b`, or `b` is unreachable (where MLIR checks nothing)."""
        info = self._dominance.get(region)
        if info is None:
            info = self._dominance[region] = DominanceInfo(region)
        entry = region.blocks.first
        return info.dominates(a, b) or (entry is not None and not info.dominates(entry, b))


def _ancestor_in(user: Operation, region: Region) -> Operation | None:
    """`user` or the op enclosing it whose block is in `region`; None when `region`
    does not enclose `user`."""
    node: Operation | None = user
    while node is not None:
        block = node.parent
        if block is not None and block.parent is region:
            return node
        node = node.parent_op()
    return None


def _defining_block(value: SSAValue) -> Block | None:
    if isinstance(value, BlockArgument):
        return value.block
    assert isinstance(value, OpResult)
    return value.op.parent


def _problem(value: SSAValue, user: Operation, orders: _Orders) -> str | None:
    """Why `value` does not dominate its use by `user`; None when it does."""
    block = _defining_block(value)
    region = block.parent if block is not None else None
    if block is None or region is None:
        return "is defined outside any region"
    ancestor = _ancestor_in(user, region)
    if ancestor is None:
        owner = region.parent
        where = f" of {owner.name}" if owner is not None else ""
        return f"is defined in a region{where} that does not enclose this use"
    home = ancestor.parent
    assert home is not None
    if isinstance(region.parent, ModuleOp):
        return None  # a graph region
    if home is not block:
        if orders.dominates(block, home, region):
            return None
        return "is defined in a block that does not dominate this use"
    if isinstance(value, BlockArgument):
        return None
    assert isinstance(value, OpResult)
    if value.op is ancestor:
        return f"is a result of the {value.op.name} that encloses it"
    if orders.before(value.op, ancestor, block):
        return None
    return "is defined after this use"


def _inside(value: SSAValue, scope: Operation) -> bool:
    """Whether `value` is defined in a region of `scope` (at any depth) or by `scope`."""
    if isinstance(value, OpResult) and value.op is scope:
        return True
    block = _defining_block(value)
    node = block.parent_op() if block is not None else None
    while node is not None and node is not scope:
        node = node.parent_op()
    return node is scope


def check_uses(
    ops: Iterable[Operation], orders: _Orders | None = None, scope: Operation | None = None
) -> None:
    """Raise `DominanceError` for the first operand of `ops` that does not dominate
    its user; with a `scope`, only the operands defined inside it are checked."""
    orders = orders or _Orders()
    for op in ops:
        for k, operand in enumerate(op.operands):
            if scope is not None and not _inside(operand, scope):
                continue  # defined outside: the enclosing op's check
            problem = _problem(operand, op, orders)
            if problem is not None:
                name = f" ({_spelling(operand)})" if operand.name_hint else ""
                raise DominanceError(
                    f"'{op.name}' op operand #{k}{name} does not dominate this use: it {problem}",
                    op,
                )


def _spelling(value: SSAValue) -> str:
    return f"%{value.name_hint}"


def verify_region_uses(op: Operation) -> None:
    """The operands of the ops directly in `op`'s regions that are defined inside `op`
    dominate their uses (for the verifier of a region-carrying `ag` op: its cost is that
    of its own regions; values from above are checked where they are defined)."""
    orders = _Orders()
    for region in op.regions:
        for block in region.blocks:
            check_uses(block.ops, orders, scope=op)


def verify_dominance(root: Operation) -> None:
    """Every operand of every op nested in `root` dominates its use (see the module
    doc); raises `DominanceError` naming the first offending op."""
    orders = _Orders()
    check_uses((op for op in root.walk() if op is not root), orders)
