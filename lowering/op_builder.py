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
with the same combination make the op from that record with their own operands: its
fields set directly (`arignote.dialects.ag.base.init_fields`, as `Operation.create`
sets them) when it has no successors, else by `create`.
So the result is the op the factory makes, provided its result types, properties and
attributes depend only on the operands' types and the other arguments (true of the
`llvm` dialect's constructors and of the `arith`, `memref`, `func` and `scf` ones that
`ag-to-loops` builds with it, and checked for nothing else: use it for such). The
factory's operands must be the SSA values among its arguments in argument order
(nested in lists or tuples allowed), and its successors the blocks among them, in
their order too: a combination where they are not, or with a region or an argument
that cannot be a dictionary key, is built by the factory every time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar, cast

from xdsl.dialects.builtin import UNKNOWN_LOC
from xdsl.ir import Attribute, Block, Operation, SSAValue

from arignote.dialects.ag.base import init_fields

OpT = TypeVar("OpT", bound=Operation)

_Record = tuple[type[Operation], tuple[Attribute, ...], dict[str, Attribute], dict[str, Attribute]]

_UNCACHED: None = None
"""The record of a combination that the factory builds every time."""


class _Tables(threading.local):
    """The records of one thread: a thread's `build` never sees a record (nor clears a
    table) of another, so that an attribute's `id` in a key always belongs to an object
    its own `types_seen` keeps alive."""

    def __init__(self) -> None:
        self.records: dict[Hashable, _Record | None] = {}
        """Records by the identity of the operand types (see `_flatten`)."""
        self.by_value: dict[Hashable, _Record | None] = {}
        """The same records by the value of the operand types."""
        self.types_seen: dict[int, Attribute] = {}
        """The attributes keyed by `id` in `records`, kept alive with them."""


_tables = _Tables()

MAX_RECORDS = 4096
"""Combinations remembered at most; beyond that the tables start over."""


_VALUE, _ATTRIBUTE, _SEQUENCE, _BLOCK = "value", "attribute", "sequence", "block"
_OTHER = "other"

_SUCCESSOR = object()
"""A block's place in a key (no argument of another kind equals it)."""

_kinds: dict[type, str] = {}
"""What `_flatten` does with an argument of each class (`isinstance` on xDSL's abstract
base classes costs more than the rest of the key)."""


def _kind(arg: Any) -> str:
    kind = (
        _VALUE
        if isinstance(arg, SSAValue)
        else _ATTRIBUTE
        if isinstance(arg, Attribute)
        else _SEQUENCE
        if isinstance(arg, list | tuple)
        else _BLOCK
        if isinstance(arg, Block)
        else _OTHER
    )
    _kinds[type(arg)] = kind
    return kind


def _flatten(
    args: tuple[Any, ...],
    operands: list[SSAValue],
    by_id: bool,
    seen: dict[int, Attribute],
    blocks: list[Block],
) -> tuple[Hashable, ...]:
    """The key of `args`, appending the SSA values to `operands` and the blocks (the
    successors, each one place in the key whatever the block) to `blocks`.

    An SSA value counts by its type. An attribute (a type included) counts, `by_id`, by
    the identity of the object, kept alive in `seen` while the tables hold it so
    that its `id` is not reused: hashing an attribute (recursively) can cost more than
    making the op, and the ops of a conversion share a few type objects and cached
    attributes; a new attribute object is looked up by value once."""
    key: list[Hashable] = []
    for arg in args:
        kind = _kinds.get(type(arg)) or _kind(arg)
        if kind is _VALUE:
            operands.append(arg)
            arg = arg.type
            kind = _ATTRIBUTE
        if kind is _ATTRIBUTE:
            if by_id:
                key.append(id(arg))
                if id(arg) not in seen:
                    seen[id(arg)] = arg
            else:
                key.append(arg)
        elif kind is _SEQUENCE:
            items = tuple(cast(list[Any], arg))
            key.append((type(arg), _flatten(items, operands, by_id, seen, blocks)))
        elif kind is _BLOCK:
            blocks.append(arg)
            key.append(_SUCCESSOR)
        else:
            key.append(arg)
    return tuple(key)


def _key(
    factory: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    by_id: bool,
    operands: list[SSAValue],
    seen: dict[int, Attribute],
    blocks: list[Block],
) -> Hashable:
    return (
        factory,
        _flatten(args, operands, by_id, seen, blocks),
        *kwargs,
        _flatten((*kwargs.values(),), operands, by_id, seen, blocks),
    )


def _same(found: Sequence[Any], expected: list[Any]) -> bool:
    return len(found) == len(expected) and all(a is b for a, b in zip(found, expected, strict=True))


def _record(op: Operation, operands: list[SSAValue], blocks: list[Block]) -> _Record | None:
    if not _same(op.operands, operands) or not _same(op.successors, blocks) or op.regions:
        return _UNCACHED
    result_types = tuple(r.type for r in op.results)
    return type(op), result_types, dict(op.properties), dict(op.attributes)


def build(factory: Callable[..., OpT], *args: Any, **kwargs: Any) -> OpT:
    """`factory(*args, **kwargs)`, made with `Operation.create` once the combination of
    factory, operand types and other arguments has been seen (see the module docstring)."""
    tables = _tables
    records, by_value, seen = tables.records, tables.by_value, tables.types_seen
    if len(records) >= MAX_RECORDS:
        records.clear()
        by_value.clear()
        seen.clear()
    operands: list[SSAValue] = []
    blocks: list[Block] = []
    try:
        key = _key(factory, args, kwargs, True, operands, seen, blocks)
        record = records.get(key, False)
        if record is False:
            value_key = _key(factory, args, kwargs, False, [], seen, [])
            record = records[key] = by_value.get(value_key, False)
    except TypeError:  # an argument that cannot be a key
        return factory(*args, **kwargs)
    if record is False:
        op = factory(*args, **kwargs)
        value_key = _key(factory, args, kwargs, False, [], seen, [])
        records[key] = by_value[value_key] = _record(op, operands, blocks)
        return op
    if record is None:
        return factory(*args, **kwargs)
    cls, result_types, properties, attributes = record
    if not blocks:  # (set directly: `create`'s generic successor and region handling)
        op = cls.__new__(cls)
        init_fields(op, operands, list(result_types), dict(properties), dict(attributes))
        return cast(OpT, op)
    return cast(
        OpT,
        cls.create(
            operands=operands,
            result_types=result_types,
            properties=properties,
            attributes=attributes,
            successors=blocks,
            location=UNKNOWN_LOC,  # what `create` takes by default, through an import per op
        ),
    )
