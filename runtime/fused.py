"""The reference interpreter's `ag.fused`: its region run op by op on whole arrays.

The region's ops keep the tensor types they had before fusion, so each runs through its
own implementation in `AgFunctions` (same NumPy calls, same checks and messages): the
fused op computes bit for bit what the unfused ops did. Interpreter listeners (DebugMode's
recorder) see the region's ops like any other.
"""

from __future__ import annotations

from typing import Any

from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import SSAValue

from arignote.dialects import ag


@register_impls
class FusedFunctions(InterpreterFunctions):
    """The implementation of `ag.fused`."""

    @impl(ag.FusedOp)
    def run_fused(
        self, interpreter: Interpreter, op: ag.FusedOp, args: PythonValues
    ) -> PythonValues:
        env: dict[SSAValue, Any] = dict(zip(op.block.args, args, strict=True))
        for inner in op.computing_ops:
            results = interpreter.run_op(inner, tuple(env[v] for v in inner.operands))
            env.update(zip(inner.results, results, strict=True))
        return tuple(env[v] for v in op.terminator.values)
