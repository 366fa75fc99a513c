"""Parallel loops: the loop-level ops that `ag-to-loops` emits when it is asked to
(`ag-to-loops{parallel_min_work=N}`) and the `parallelize` pass lowers onto the native
thread pool. They live between those two passes only, among `scf` and `memref` ops.

`ag.parallel_for` runs its body on disjoint sub-ranges `[begin, end)` covering
`[lower, upper)`, possibly at once on several threads. Every sub-range boundary but
`upper` is `lower + k * chunk` where `chunk` is a multiple of `align` (so that
vector-aligned loops stay aligned). When the range has fewer than `min_trips`
iterations, the body runs once on the whole range. `part` numbers the sub-ranges from
0; the result is how many there were (at most `max_parts` when given, else at most
`ag.parallel_width`). The body must write only memory that its sub-range owns, or
memory indexed by `part`.

```mlir
%parts = ag.parallel_for %c0 to %n min_trips %m align 64 {
^bb0(%begin: index, %end: index, %part: index):
  scf.for %i = %begin to %end step %c1 { ... }
  ag.yield
}
```

`ag.parallel_width` is the most sub-ranges an `ag.parallel_for` splits into (the
pool's thread count, at least 1): per-part scratch buffers are sized by it.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I64, IndexType, IntegerAttr, i64
from xdsl.ir import Block, Region, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
)
from xdsl.traits import RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException

from arignote.dialects.ag.base import AgOperation
from arignote.dialects.ag.control import YieldOp
from arignote.dialects.ag.dominance import verify_region_uses


@irdl_op_definition
class ParallelForOp(AgOperation):
    """A loop whose iterations may run on several threads (see the module doc)."""

    name = "ag.parallel_for"

    lower = operand_def(IndexType)
    upper = operand_def(IndexType)
    min_trips = operand_def(IndexType)
    """Below this many iterations the body runs once, on the calling thread."""
    max_parts = opt_operand_def(IndexType)
    """At most this many parts (the size of per-part scratch), when given."""

    align = prop_def(IntegerAttr[I64])
    """Sub-range boundaries are `lower` plus multiples of this (>= 1)."""

    parts = result_def(IndexType)
    """How many sub-ranges the body ran on."""

    body = region_def("single_block")
    """`^bb0(%begin: index, %end: index, %part: index)`, ending with `ag.yield`."""

    traits = traits_def(RecursiveMemoryEffect())

    assembly_format = (
        "$lower `to` $upper `min_trips` $min_trips (`max_parts` $max_parts^)? "
        "`align` $align $body attr-dict"
    )

    def __init__(
        self,
        lower: SSAValue,
        upper: SSAValue,
        min_trips: SSAValue,
        align: int,
        body: Region,
        max_parts: SSAValue | None = None,
    ):
        super().__init__(
            operands=[lower, upper, min_trips, [] if max_parts is None else [max_parts]],
            properties={"align": IntegerAttr(align, i64)},
            result_types=[IndexType()],
            regions=[body],
        )

    @staticmethod
    def body_block() -> Block:
        """An empty body block with its `(begin, end, part)` arguments."""
        block = Block(arg_types=[IndexType()] * 3)
        for arg, name in zip(block.args, ("begin", "end", "part"), strict=True):
            arg.name_hint = name
        return block

    @property
    def align_value(self) -> int:
        return self.align.value.data

    def verify_(self) -> None:
        if self.align_value < 1:
            raise VerifyException(f"'{self.name}' op align must be >= 1, got {self.align_value}")
        block = self.body.block
        types: Sequence = [a.type for a in block.args]
        if len(types) != 3 or not all(isinstance(t, IndexType) for t in types):
            raise VerifyException(
                f"'{self.name}' op body must take (begin, end, part) of type index, got "
                f"({', '.join(map(str, types))})"
            )
        last = block.last_op
        if not isinstance(last, YieldOp) or last.values:
            raise VerifyException(f"'{self.name}' op body must end with an ag.yield of no values")
        verify_region_uses(self)


@irdl_op_definition
class ParallelWidthOp(AgOperation):
    """The most sub-ranges an `ag.parallel_for` runs on (the pool's thread count).

    ```mlir
    %w = ag.parallel_width : index
    ```
    """

    name = "ag.parallel_width"

    width = result_def(IndexType)

    assembly_format = "attr-dict `:` type($width)"

    def __init__(self):
        super().__init__(result_types=[IndexType()])


PARALLEL_OPS = (ParallelForOp, ParallelWidthOp)
