"""The reference interpreter's `ag.gemv_pair`: the same math as the native kernel, on
whole vectors.

`u` and `g` come from the op's region run once on whole columns instead of once per row:
the region's ops are elementwise, so a twin of the region whose 0-d types are widened to
vectors (`tensor<?xE>` for `d` and the row operands, `tensor<1xE>` for operands of static
length 1, 0-d operands and constants unchanged) computes every row at once with the
ordinary `ag` implementations. The twin is a function of its own, run by an interpreter
without listeners (DebugMode's recorder sees `ag.gemv_pair` as one op), built once per op.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from arignote.dialects import ag
from arignote.runtime.interpreter import (
    Array,
    InterpretedFunction,
    _label,
    _operands,
    check_value,
)

TWIN = "row_twin"


def _widened(t: Attribute, rank: int, dynamic: bool) -> TensorType:
    assert isinstance(t, TensorType)
    if rank == 0:
        return TensorType(t.element_type, [])
    return TensorType(t.element_type, [ag.DYNAMIC if dynamic else 1])


def _operand_shape(value: SSAValue) -> tuple[int, bool]:
    """(rank, dynamic) of a graph value seen as a region input."""
    shape = ag.tensor_type(value).get_shape()
    return len(shape), bool(shape) and shape[0] != 1


def _clone_widened(op: Operation, mapping: dict[SSAValue, SSAValue]) -> Operation:
    operands = [mapping[o] for o in op.operands]
    if isinstance(op, ag.ConstantOp):
        return op.clone()
    shapes = [ag.tensor_type(o).get_shape() for o in operands]
    rank = max(len(s) for s in shapes)
    dynamic = any(s and s[0] != 1 for s in shapes)
    return type(op).create(
        operands=operands,
        result_types=[_widened(op.results[0].type, rank, dynamic)],
        properties=dict(op.properties),
        attributes=dict(op.attributes),
    )


def twin_module(op: ag.GemvPairOp) -> ModuleOp:
    """`@row_twin(d, rows...) -> (u, g)`: the region of `op` on whole vectors."""
    region_block = op.body.block
    shapes = [(1, True), *(_operand_shape(v) for v in op.rows)]
    types = [
        _widened(arg.type, rank, dynamic)
        for arg, (rank, dynamic) in zip(region_block.args, shapes, strict=True)
    ]
    block = Block(arg_types=types)
    mapping: dict[SSAValue, SSAValue] = dict(zip(region_block.args, block.args, strict=True))
    yielded: list[SSAValue] = []
    for region_op in region_block.ops:
        if isinstance(region_op, ag.YieldOp):
            yielded = [mapping[v] for v in region_op.values]
            continue
        clone = _clone_widened(region_op, mapping)
        block.add_op(clone)
        mapping[region_op.results[0]] = clone.results[0]
    block.add_op(func.ReturnOp(*yielded))
    signature = (types, [v.type for v in yielded])
    return ModuleOp([func.FuncOp(TWIN, signature, Region(block))])


def _check_lengths(op: ag.GemvPairOp, a: Array, x: Array, acc: list[Array], rows: list[Array]):
    """The checks of the ops the user wrote, with their messages: the dot product `A·x`,
    the accumulation onto `r0`, the elementwise ops on `A·x` and the row operands."""
    label = _label(op)
    if a.shape[1] != x.shape[0]:
        raise ValueError(
            f"{label}: contracted dimensions of operand shapes {a.shape} and {x.shape} differ"
        )
    if acc and acc[1].shape[0] != a.shape[1]:
        raise ValueError(
            f"{label}: the accumulated operand has shape {acc[1].shape}, the product "
            f"{(a.shape[1],)}"
        )
    for value, row in zip(op.rows, rows, strict=True):
        static = ag.tensor_type(value).get_shape()
        if static and static[0] != 1 and row.shape[0] != a.shape[0]:
            raise ValueError(
                f"{label}: operand shapes {(a.shape[0],)} and {row.shape} do not match at "
                "dimension 0"
            )


@register_impls
class RowwiseFunctions(InterpreterFunctions):
    """`ag.gemv_pair` for the reference interpreter."""

    def __init__(self) -> None:
        self._twins: dict[Operation, InterpretedFunction] = {}

    def _twin(self, op: ag.GemvPairOp) -> InterpretedFunction:
        if op not in self._twins:
            self._twins[op] = InterpretedFunction(twin_module(op), TWIN)
        return self._twins[op]

    @impl(ag.GemvPairOp)
    def run_gemv_pair(
        self, interpreter: Interpreter, op: ag.GemvPairOp, args: PythonValues
    ) -> PythonValues:
        a, x, alpha, *rest = _operands(op, args)
        acc, rows = rest[: len(op.acc)], rest[len(op.acc) :]
        _check_lengths(op, a, x, acc, rows)
        with np.errstate(all="ignore"):
            d = np.asarray(np.dot(a, x), dtype=a.dtype)
            u_i, g_i = self._twin(op)(d, *rows)
            u = np.broadcast_to(u_i, d.shape).copy()
            g = np.broadcast_to(g_i, d.shape).copy()
            r: Any = alpha * np.dot(a.T, g)
            if acc:
                r = r + acc[0] * acc[1]
        results = (u, g, np.asarray(r, dtype=a.dtype))
        return tuple(
            check_value(_label(op), f"result #{i}", value, result.type)
            for i, (value, result) in enumerate(zip(results, op.results, strict=True))
        )
