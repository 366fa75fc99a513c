"""`fusion`: clusters of elementwise `ag` ops become one `ag.fused` op (one loop nest).

Accepts and leaves `ag` on tensors. In each function body, walking from the last op
to the first, an elementwise op (binary, unary, `select`, `cast`) or a reduction that
is not yet in a cluster starts one; the cluster then takes in the producers of its
operands, transitively, when

- the producer is an elementwise op whose result has the cluster's *domain* shape (the
  shape the loop nest iterates over: the root's result, or a reduction's operand), so
  fusing never evaluates one element of it more than once; or a `dimshuffle` (an index
  mapping, any shape) or a splat `ag.constant`: these two compute nothing and are
  copied into every cluster that reads them (the original goes when no user is left;
  while it stays, its operand is read from outside, never fused a second time);
- (elementwise producers) every user of the producer's result outside the cluster comes
  after the cluster's root in the block; the result then becomes one more result of the
  fused op (in a reduction cluster too: stored in the same loop as it is reduced). A
  value used by two clusters is thus computed once, by the first, and read by the
  second: nothing is recomputed.

A cluster becomes an `ag.fused` op when it holds at least two ops that are not
constants (an elementwise op alone, or a reduction alone, stays as it is). The fused op
takes the cluster's inputs in first-use order and sits where the root was.

```mlir
// before
%s = ag.add %x, %y : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
%t = ag.add %s, %z : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
%r = ag.mul %t, %two : tensor<?xf64>, tensor<f64> -> tensor<?xf64>
// after
%r = ag.fused %x, %y, %z : tensor<?xf64>, tensor<?xf64>, tensor<?xf64> -> tensor<?xf64> {
^bb0(%a: tensor<?xf64>, %b: tensor<?xf64>, %c: tensor<?xf64>):
  %two = ag.constant dense<2.0> : tensor<f64>
  %s = ag.add %a, %b : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
  %t = ag.add %s, %c : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
  %r = ag.mul %t, %two : tensor<?xf64>, tensor<f64> -> tensor<?xf64>
  ag.yield %r : tensor<?xf64>
}
```
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from arignote.dialects import ag

ELEMENTWISE_OPS: tuple[type[Operation], ...] = (
    ag.BinaryElementwiseOp,
    ag.UnaryElementwiseOp,
    ag.SelectOp,
    ag.CastOp,
)
"""The op classes (and bases) that compute one element per element: cluster members
whose result must have the domain shape."""


def _is_splat_constant(op: Operation) -> bool:
    return isinstance(op, ag.ConstantOp) and ag.is_splat(op)


def is_copied(op: Operation) -> bool:
    """Whether `op` is copied into every cluster that reads it, computing nothing: a
    splat constant, or a dimshuffle (an index mapping in the loop body)."""
    return _is_splat_constant(op) or isinstance(op, ag.DimShuffleOp)


def is_root_candidate(op: Operation) -> bool:
    """Whether `op` may start a cluster."""
    return isinstance(op, (*ELEMENTWISE_OPS, ag.ReduceOp))


@dataclass
class Cluster:
    """Ops to fuse: `members` in block order, rooted at the latest one."""

    root: Operation
    domain: tuple[int, ...]
    reduction: bool
    members: set[Operation] = field(default_factory=set[Operation])

    def outputs(self, position: dict[Operation, int]) -> list[SSAValue]:
        """The values the fused op returns: the root's result first, then every other
        member result used outside the cluster, in block order."""
        result = [self.root.results[0]]
        for op in sorted(self.members, key=position.__getitem__):
            if op is self.root or is_copied(op):
                continue
            if any(not self.holds(use.operation) for use in op.results[0].uses):
                result.append(op.results[0])
        return result

    def holds(self, user: Operation) -> bool:
        """Whether `user` is computed only by the cluster: a member, and, if it is a
        copied op (see `is_copied`), one whose every user is a member too (otherwise the
        original stays outside and reads its operands there)."""
        if user not in self.members:
            return False
        return not is_copied(user) or all(
            use.operation in self.members for use in user.results[0].uses
        )

    def worth_fusing(self) -> bool:
        return sum(not isinstance(op, ag.ConstantOp) for op in self.members) >= 2


class _Clustering:
    """Grows clusters over one block (see the module doc)."""

    def __init__(self, block: Block):
        self.ops = list(block.ops)
        self.position = {op: i for i, op in enumerate(self.ops)}
        self.assigned: set[Operation] = set()

    def clusters(self) -> list[Cluster]:
        found: list[Cluster] = []
        for op in reversed(self.ops):
            if op in self.assigned or not is_root_candidate(op):
                continue
            cluster = self._grow(op)
            if cluster.worth_fusing():
                found.append(cluster)
                self.assigned |= {m for m in cluster.members if not is_copied(m)}
        return found

    def _grow(self, root: Operation) -> Cluster:
        reduction = isinstance(root, ag.ReduceOp)
        domain = ag.value_shape(root.operands[0] if reduction else root.results[0])
        cluster = Cluster(root, domain, reduction, {root})
        pending = list(root.operands)
        while pending:
            value = pending.pop()
            if not isinstance(value, OpResult) or value.op in cluster.members:
                continue
            producer = value.op
            if self._can_join(producer, cluster):
                cluster.members.add(producer)
                if cluster.holds(producer):  # else its operands are read from outside
                    pending.extend(producer.operands)
        return cluster

    def _can_join(self, op: Operation, cluster: Cluster) -> bool:
        if is_copied(op):
            return True
        if op in self.assigned or not isinstance(op, ELEMENTWISE_OPS):
            return False
        if ag.value_shape(op.results[0]) != cluster.domain:
            return False
        return self._outside_uses_ok(op, cluster)

    def _outside_uses_ok(self, op: Operation, cluster: Cluster) -> bool:
        outside = [u.operation for u in op.results[0].uses if not cluster.holds(u.operation)]
        if not outside:
            return True
        if ag.value_shape(op.results[0]) != cluster.domain:
            return False
        root_position = self.position[cluster.root]
        return all(
            user in self.position and self.position[user] > root_position for user in outside
        )


def _inputs(cluster: Cluster, ordered: Sequence[Operation]) -> list[SSAValue]:
    """The values the cluster reads from outside, in first-use order."""
    inputs: dict[SSAValue, None] = {}
    for op in ordered:
        for operand in op.operands:
            if not (isinstance(operand, OpResult) and operand.op in cluster.members):
                inputs[operand] = None
    return list(inputs)


def build_fused(cluster: Cluster, position: dict[Operation, int]) -> ag.FusedOp:
    """The `ag.fused` op computing `cluster` (its region holds clones of the members)."""
    ordered = sorted(cluster.members, key=position.__getitem__)
    inputs = _inputs(cluster, ordered)
    outputs = cluster.outputs(position)
    block = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = {}
    for old, new in zip(inputs, block.args, strict=True):
        mapping[old] = new
        if old.name_hint:
            new.name_hint = old.name_hint
    for op in ordered:
        block.add_op(op.clone(value_mapper=mapping))
    block.add_op(ag.YieldOp([mapping[v] for v in outputs]))
    return ag.FusedOp(inputs, [v.type for v in outputs], block)


def fuse_block(block: Block) -> None:
    """Replaces each worthwhile cluster of `block` by one `ag.fused` op."""
    clustering = _Clustering(block)
    position = clustering.position
    for cluster in clustering.clusters():
        fused = build_fused(cluster, position)
        Rewriter.insert_op(fused, InsertPoint.before(cluster.root))
        outputs = cluster.outputs(position)
        for old, new in zip(outputs, fused.outputs, strict=True):
            if old.name_hint:
                new.name_hint = old.name_hint
            old.replace_all_uses_with(new)
        for op in sorted(cluster.members, key=position.__getitem__, reverse=True):
            if not op.results[0].uses:
                Rewriter.erase_op(op)


@dataclass(frozen=True)
class FusionPass(ModulePass):
    """Fuses elementwise clusters (and reductions' producers) into `ag.fused` loop nests.

    See the module doc."""

    name = "fusion"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.ops:
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                for block in f.body.blocks:
                    for scan in [o for o in block.walk() if isinstance(o, ag.ScanOp)]:
                        fuse_block(scan.body.block)  # a scan's step, like any code
                    fuse_block(block)
