"""The reference implementations of `ag.real`, `ag.imag` and `ag.complex` (NumPy)."""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls

from arignote.dialects import ag
from arignote.runtime.dtypes import numpy_dtype
from arignote.runtime.interpreter import _operands, _result, _unary, check_broadcast


@register_impls
class AgComplexFunctions(InterpreterFunctions):
    """NumPy implementations of the ops of `arignote.dialects.ag.complex`."""

    @impl(ag.RealOp)
    def run_real(self, interpreter: Interpreter, op: ag.RealOp, args: PythonValues) -> PythonValues:
        return _unary(op, args, lambda z: np.array(np.real(z)))

    @impl(ag.ImagOp)
    def run_imag(self, interpreter: Interpreter, op: ag.ImagOp, args: PythonValues) -> PythonValues:
        return _unary(op, args, lambda z: np.array(np.imag(z)))

    @impl(ag.ComplexOp)
    def run_complex(
        self, interpreter: Interpreter, op: ag.ComplexOp, args: PythonValues
    ) -> PythonValues:
        real, imag = _operands(op, args)
        check_broadcast(op, (real, imag))
        dtype = numpy_dtype(ag.tensor_type(op.result).element_type)
        out = np.empty(np.broadcast_shapes(real.shape, imag.shape), dtype=dtype)
        out.real, out.imag = real, imag  # exact: no `real + 1j * imag` rounding of inf/NaN
        return _result(op, out)
