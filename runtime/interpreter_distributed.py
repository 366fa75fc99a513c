"""The reference interpreter's `ag.allreduce` (`dialects/ag/distributed.py`): mpi4py's
`Allreduce` on the NumPy buffer, in place; the identity without an MPI job."""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls

from arignote.dialects import ag
from arignote.runtime.interpreter import _operands, _result
from arignote.runtime.mpi import world


@register_impls
class DistributedFunctions(InterpreterFunctions):
    @impl(ag.AllreduceOp)
    def run_allreduce(
        self, interpreter: Interpreter, op: ag.AllreduceOp, args: PythonValues
    ) -> PythonValues:
        (x,) = _operands(op, args)
        total = np.array(x, copy=True, order="C")  # (ascontiguousarray makes 0-d 1-d)
        comm = world()
        if comm is None:
            return _result(op, total)
        from mpi4py import MPI

        comm.Allreduce(MPI.IN_PLACE, total, op=MPI.SUM)
        if op.reduction.data == "mean":
            total /= total.dtype.type(comm.Get_size())
        return _result(op, total)
