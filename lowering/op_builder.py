"""Op construction for the hot lowering patterns, without xDSL's generic builder each time.

An xDSL op's constructor goes through `irdl_op_init`, which matches every operand,
result, property and region against the op definition: 15-30 µs per op, most of the
cost of a conversion that creates thousands of them. `Operation.create` with the final
operands, result types and properties takes a quarter of that. `build` gets those from
one op made by the constructor itself:

```python
load = build(llvm.LoadOp, pointer, f32)  # as llvm.LoadOp(pointer, f32)
```

The first call for a combination of (factory, operand types, other arguments) runs the
factory and records the op's class, result types, properties and attributes; later calls
with the same combination `create` the op from that record with their own operands.
So the result is the op the factory makes, provided its result types, properties and
attributes depend only on the operands' types and the other arguments (true of the
`llvm` dialect's constructors, and checked for nothing else: use it for those). The
factory's operands must be the SSA values among its arguments in argument order
(nested in lists or tuples allowed): a combination where they are not, or with a
region, a successor or an argument that cannot be a dictionary key, is built by the
factory every time.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar, cast

from xdsl.ir import Attribute, Operation, SSAValue

OpT = TypeVar("OpT", bound=Operation)

_Record = tuple[type[Operation], tuple[Attribute, ...], dict[str, Attribute], dict[str, Attribute]]

_UNCACHED: None = None
"""The record of a combination that the factory builds every time."""

_records: dict[Hashable, _Record | None] = {}

MAX_RECORDS = 4096
"""Combinations remembered at most; beyond that the table starts over."""


def _flatten(args: tuple[Any, ...], operands: list[SSAValue]) -> tuple[Hashable, ...]:
    """The key of `args` (SSA values by their type), appending the values to `operands`."""
    key: list[Hashable] = []
    for arg in args:
        if isinstance(arg, SSAValue):
            operands.append(arg)
            key.append(arg.type)
        elif isinstance(arg, list | tuple):
            key.append((type(arg), _flatten(tuple(cast(list[Any], arg)), operands)))
        else:
            key.append(arg)
    return tuple(key)


def _record(op: Operation, operands: list[SSAValue]) -> _Record | None:
    same_operands = len(op.operands) == len(operands) and all(
        a is b for a, b in zip(op.operands, operands, strict=True)
    )
    if not same_operands or op.regions or op.successors:
        return _UNCACHED
    result_types = tuple(r.type for r in op.results)
    return type(op), result_types, dict(op.properties), dict(op.attributes)


def build(factory: Callable[..., OpT], *args: Any, **kwargs: Any) -> OpT:
    """`factory(*args, **kwargs)`, made with `Operation.create` once the combination of
    factory, operand types and other arguments has been seen (see the module docstring)."""
    operands: list[SSAValue] = []
    try:
        key = (factory, _flatten(args, operands), *kwargs, _flatten((*kwargs.values(),), operands))
        record = _records.get(key, False)
    except TypeError:  # an argument that cannot be a key
        return factory(*args, **kwargs)
    if record is False:
        op = factory(*args, **kwargs)
        if len(_records) >= MAX_RECORDS:
            _records.clear()
        _records[key] = _record(op, operands)
        return op
    if record is None:
        return factory(*args, **kwargs)
    cls, result_types, properties, attributes = record
    return cast(
        OpT,
        cls.create(
            operands=operands,
            result_types=result_types,
            properties=properties,
            attributes=attributes,
        ),
    )
