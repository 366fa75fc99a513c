"""Reference semantics of the `ag` control-flow ops (`ag.if`, `ag.yield`).

`ag.if` evaluates its condition (a 0-d array; nonzero is true) and runs only the
selected region; the other region's ops are never interpreted, so a branch that would
fail (an index out of range, operands of different shapes) is harmless when it is not
taken. `ag.yield` returns its operands as the region's results.
"""

from __future__ import annotations

from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_terminator,
    register_impls,
)

from arignote.dialects import ag
from arignote.runtime.interpreter import _label, check_value


@register_impls
class AgControlFunctions(InterpreterFunctions):
    """NumPy-level implementations of `ag.if` and `ag.yield`."""

    @impl(ag.IfOp)
    def run_if(self, interpreter: Interpreter, op: ag.IfOp, args: PythonValues) -> PythonValues:
        where = _label(op)
        condition = check_value(where, "condition", args[0], op.condition.type)
        taken = bool(condition)
        region = op.then_region if taken else op.else_region
        results = interpreter.run_ssacfg_region(region, (), "then" if taken else "else")
        return tuple(
            check_value(where, f"result #{i}", value, result.type)
            for i, (value, result) in enumerate(zip(results, op.results, strict=True))
        )

    @impl_terminator(ag.YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: ag.YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()
