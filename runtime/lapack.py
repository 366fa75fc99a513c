"""The callback behind a failed LAPACK call in native code (see
`arignote.lowering.loops.ag_lapack`).

Native code calls `arignote_lapack_error(op, reason, info)` when a LAPACKE function
returns a non-zero `info` (`op`: the op's index in `ag.LAPACK_OPS`, `reason`: an index in
`ag.LAPACK_ERRORS`). An exception cannot unwind through native code: the callback keeps
a `numpy.linalg.LinAlgError` naming the op as the calling thread's pending error (the
mechanism of `arignote.runtime.printing`), which `NativeFunction` raises when the call
returns; the first failure of a call wins. `register_lapack_symbols` binds the symbol for
MCJIT; `load_blas` runs it, as every module calling LAPACK needs the library.
"""

from __future__ import annotations

import ctypes

import numpy as np

from arignote.runtime.printing import _PENDING

SYMBOL = "arignote_lapack_error"
"""The callback's symbol (`ag_lapack.ERROR_CALLBACK`)."""


def lapack_error(op: int, reason: int, info: int) -> np.linalg.LinAlgError:
    """The error of op `op` of `ag.LAPACK_OPS` failing for `reason` with LAPACK `info`."""
    from arignote.dialects import ag

    name = ag.LAPACK_OPS[op].name if 0 <= op < len(ag.LAPACK_OPS) else f"LAPACK op #{op}"
    text = ag.LAPACK_ERRORS[reason] if 0 < reason < len(ag.LAPACK_ERRORS) else "failed"
    detail = f" (LAPACK info {info})" if reason == 6 else ""
    return np.linalg.LinAlgError(f"{name}: {text}{detail}")


def _callback(op: int, reason: int, info: int) -> None:
    if _PENDING.error is None:
        _PENDING.error = lapack_error(op, reason, info)


_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)(_callback)


def register_lapack_symbols(library: ctypes.CDLL) -> None:
    """Binds the callback's symbol for MCJIT, and turns off LAPACKE's scan of its inputs
    for NaNs (the library serves only arignote): a NaN then flows into the results, as
    with NumPy, instead of failing as a bad argument."""
    import llvmlite.binding as llvm

    llvm.add_symbol(SYMBOL, ctypes.cast(_CALLBACK, ctypes.c_void_p).value)
    library.scipy_LAPACKE_set_nancheck(ctypes.c_int(0))
