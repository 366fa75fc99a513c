"""`AgOperation` (`arignote.dialects.ag.base`): an `ag` op of single operands and results
built without `irdl_op_init` is the op that handling builds, and any other call still
goes through it, with its errors."""

from __future__ import annotations

import pytest
from xdsl.irdl import IRDLOperation

import arignote.tensor as T
from arignote.dialects import ag
from arignote.dialects.ag.base import AgOperation, _fixed_counts


def _generic(cls: type, **kwargs) -> IRDLOperation:
    op = cls.__new__(cls)
    IRDLOperation.__init__(op, **kwargs)
    return op


def _parts(op: IRDLOperation) -> tuple:
    return (
        op.name,
        tuple(op.operands),
        tuple(r.type for r in op.results),
        tuple((r.op is op, r.index) for r in op.results),
        dict(op.properties),
        dict(op.attributes),
        len(op.regions),
        len(op.successors),
        op.location,
        (op.parent, op.next_op, op.prev_op),
    )


def _uses_of(op: IRDLOperation) -> list[tuple[int, int]]:
    """Each operand's uses by `op`: (operand index, the use's index)."""
    return [
        (i, use.index) for i, v in enumerate(op.operands) for use in v.uses if use.operation is op
    ]


def test_the_fast_path_builds_what_the_generic_one_does() -> None:
    x, y = T.dmatrix("x"), T.dvector("y")
    cases = [
        (ag.AddOp, {"operands": [x.value, y.value], "result_types": [x.value.type]}),
        (ag.TanhOp, {"operands": [x.value], "result_types": [x.value.type]}),
        (
            ag.DimShuffleOp,
            {
                "operands": [x.value],
                "result_types": [x.T.value.type],
                "properties": {"pattern": x.T.value.owner.pattern},
            },
        ),
    ]
    for cls, kwargs in cases:
        assert _fixed_counts(cls) is not None, cls
        fast = cls.__new__(cls)
        AgOperation.__init__(fast, **kwargs)
        fast.verify()
        generic = _generic(cls, **kwargs)
        assert _parts(fast) == _parts(generic), cls
        # each operand lists the op among its uses, at its position (x + x: twice)
        assert _uses_of(fast) == _uses_of(generic), cls
        assert fast.properties is not kwargs.get("properties")  # a dict of its own


def test_a_fast_built_op_goes_into_a_block_and_out_like_any_other() -> None:
    from xdsl.ir import Block

    x = T.dvector("x")
    op = ag.AddOp(x.value, x.value)
    assert {(u.operation, u.index) for u in x.value.uses if u.operation is op} == {
        (op, 0),
        (op, 1),
    }
    block = Block()
    block.add_op(op)
    assert op.parent is block and list(block.ops) == [op]
    op.detach()
    op.erase()  # drops its uses of x
    assert all(u.operation is not op for u in x.value.uses)


def test_other_calls_take_the_generic_path_and_its_errors() -> None:
    x = T.dvector("x")
    op = ag.AddOp.__new__(ag.AddOp)
    with pytest.raises(ValueError, match="Expected 2 operand, but got 1"):
        AgOperation.__init__(op, operands=[x.value], result_types=[x.value.type])
    op = ag.AddOp.__new__(ag.AddOp)
    with pytest.raises(ValueError, match="result"):
        AgOperation.__init__(op, operands=[x.value, x.value], result_types=[])
    # a definition with a variadic operand (the accumulator of ag.gemm) is not fixed
    assert _fixed_counts(ag.GemmOp) is None
