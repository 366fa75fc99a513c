"""The reference interpreter's `ag.specify_shape`, `ag.assert` and `ag.flatnonzero` (the ops of
`dialects/ag/data_shapes.py`): NumPy, with the native code's checks and messages."""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls

from arignote.dialects import ag
from arignote.runtime.interpreter import _label, _operands, _result


@register_impls
class DataShapeFunctions(InterpreterFunctions):
    @impl(ag.SpecifyShapeOp)
    def run_specify_shape(
        self, interpreter: Interpreter, op: ag.SpecifyShapeOp, args: PythonValues
    ) -> PythonValues:
        x, *dynamic = _operands(op, args)
        lengths = iter(int(v) for v in dynamic)
        expected = tuple(next(lengths) if e == ag.DYNAMIC_VALUE else e for e in op.shape_list)
        if x.shape != expected:
            raise ValueError(
                f"{_label(op)}: shape {x.shape} differs from the specified shape {expected}"
            )
        return _result(op, x.copy())

    @impl(ag.AssertOp)
    def run_assert(
        self, interpreter: Interpreter, op: ag.AssertOp, args: PythonValues
    ) -> PythonValues:
        x, condition = _operands(op, args)
        if not condition:
            raise ValueError(f"{_label(op)}: {op.message.data}")
        return _result(op, x.copy())

    @impl(ag.FlatNonzeroOp)
    def run_flatnonzero(
        self, interpreter: Interpreter, op: ag.FlatNonzeroOp, args: PythonValues
    ) -> PythonValues:
        (x,) = _operands(op, args)
        return _result(op, np.flatnonzero(x).astype(np.int64))
