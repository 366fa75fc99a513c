"""Iterative evaluation over use-def chains: no recursion over the depth of the graph.

A lowering that produces something for a value from what it produced for the value's
operands (a scalar in a fused loop body, a clone in a region, a buffer in a shape
function) would naturally recurse into the operands; a chain of a few hundred
elementwise ops then exceeds Python's recursion limit. `evaluate` does the same work
with an explicit stack: each key's operands are evaluated before it, in order (the
first operand's whole chain first, as the recursion would), each key once.

```python
memo: dict[SSAValue, SSAValue] = {}
evaluate(value, memo, operands=lambda v: ..., compute=lambda v, args: ...)
```
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def evaluate(
    root: K,
    memo: dict[K, V],
    operands: Callable[[K], Sequence[K]],
    compute: Callable[[K, list[V]], V],
) -> V:
    """`memo[root]`, computing it when missing: `compute(key, [memo[o] for o in
    operands(key)])` for `root` and, before it, for each operand missing from `memo`
    (depth first, in operand order). `operands` may be called twice on a key and must
    not have side effects that matter; `compute` is called once per key it adds.

    A cycle (invalid IR) raises `ValueError` instead of looping."""
    stack = [root]
    expanded: set[K] = set()
    while stack:
        key = stack[-1]
        if key in memo:
            stack.pop()
            continue
        needed = operands(key)
        pending = [k for k in needed if k not in memo]
        if pending:
            if key in expanded:
                raise ValueError(f"a value depends on itself: {key}")
            expanded.add(key)
            stack.extend(reversed(pending))  # the first operand on top: evaluated first
            continue
        stack.pop()
        memo[key] = compute(key, [memo[k] for k in needed])
    return memo[root]
