"""The MPI library that `ag.allreduce` runs on, through `mpi4py` (the `mpi` extra).

`world()` is mpi4py's `COMM_WORLD`, or None when mpi4py is not installed or the
process was not launched as one of several (`mpiexec -n 1` or a plain `python`): then a
collective is the identity, and a script runs unchanged on one process.

Native code calls the library that mpi4py is linked to (see
`arignote.lowering.loops.ag_mpi`): `load_mpi()` finds its path among the shared objects the
process has mapped once `mpi4py.MPI` is imported, loads it with llvmlite's
`load_library_permanently` (mpi4py's extension loads it privately, so MCJIT would not
see its symbols otherwise) and checks that the handles the lowering emits
(`MPICH_HANDLES`, MPICH's `mpi.h` ABI, as xDSL's `MpiLibraryInfo`) are the library's;
another ABI (Open MPI's handles are addresses of globals) gets a clear
`DistributedError`.

Native code reports a failed MPI call or a collective that outlived its deadline
through the callback `arignote_mpi_error(code, timeout_ms)`, kept as the calling
thread's pending error (the mechanism of `arignote.runtime.printing`), which the call
raises when it returns.
"""

from __future__ import annotations

import ctypes
import os
from functools import cache
from typing import Any

from arignote.runtime.printing import _PENDING

SYMBOL = "arignote_mpi_error"
"""The error callback's symbol (`ag_mpi.ERROR_CALLBACK`)."""

SYMBOL_PREFIX = "MPI_"
"""Every MPI library function starts with this prefix."""

TIMEOUT = -1
"""The `code` native code passes when a collective did not complete by its deadline."""

MPICH_HANDLES = {
    "COMM_WORLD": 0x44000000,
    "FLOAT": 0x4C00040A,
    "DOUBLE": 0x4C00080B,
    "SUM": 0x58000003,
}
"""The handles the lowering emits (MPICH's ABI), checked against the loaded library."""


class DistributedError(RuntimeError):
    """A collective across the processes of an MPI job failed: a process died or hangs,
    the processes compiled different graphs, or the MPI library is not usable."""


@cache
def world() -> Any | None:
    """mpi4py's `COMM_WORLD` when this process is one of several in an MPI job, else
    None (mpi4py missing, or a single process)."""
    try:
        from mpi4py import MPI
    except ImportError:
        return None
    comm = MPI.COMM_WORLD
    return comm if comm.Get_size() > 1 else None


def mpi_library_path() -> str:
    """The path of the MPI shared library mpi4py uses (DistributedError if none)."""
    try:
        from mpi4py import MPI  # noqa: F401 - maps the library into the process
    except ImportError as e:
        raise DistributedError(
            "ag.allreduce in native code needs mpi4py and an MPI library "
            '(pip install "arignote[mpi]")'
        ) from e
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "/" in line}
    names = sorted(p for p in paths if os.path.basename(p).startswith(("libmpi.", "libmpich.")))
    if not names:
        raise DistributedError(
            f"cannot find the MPI library mpi4py is linked to among {sorted(paths)[:20]}"
        )
    return names[0]


def check_abi() -> None:
    """DistributedError unless the library's handles are MPICH's, which native code
    uses."""
    from mpi4py import MPI

    vendor = MPI.get_vendor()
    objects = {name: getattr(MPI, name) for name in MPICH_HANDLES}
    actual = {name: MPI._handleof(obj) for name, obj in objects.items()}
    if actual != MPICH_HANDLES:
        raise DistributedError(
            f"native ag.allreduce supports MPI libraries with MPICH's ABI (MPICH, Intel "
            f"MPI, MVAPICH); mpi4py runs on {vendor[0]} {vendor[1]}, whose handles differ "
            f"({actual}): pip install mpich, or use mode='FAST_COMPILE' (the interpreter)"
        )


@cache
def load_mpi() -> str:
    """Load the MPI library for MCJIT once, check its ABI and bind the error callback;
    returns the library's path."""
    import llvmlite.binding as llvm

    path = mpi_library_path()
    check_abi()
    llvm.load_library_permanently(path)
    llvm.add_symbol(SYMBOL, ctypes.cast(_CALLBACK, ctypes.c_void_p).value)
    return path


def needs_mpi(llvm_ir: str) -> bool:
    """Whether LLVM IR text calls the MPI library."""
    return f'@"{SYMBOL_PREFIX}' in llvm_ir or f"@{SYMBOL_PREFIX}" in llvm_ir


def mpi_error(code: int, timeout_ms: int) -> DistributedError:
    """The error of a collective that failed with MPI error `code`, or (`TIMEOUT`) did
    not complete within `timeout_ms`."""
    if code == TIMEOUT:
        return DistributedError(
            f"ag.allreduce: the other processes did not join the collective within "
            f"{timeout_ms / 1000:g} s: a process died, hangs, or runs another graph "
            "(arignote.distributed.init(timeout=...) sets the limit)"
        )
    from mpi4py import MPI

    return DistributedError(f"ag.allreduce: MPI error {code}: {MPI.Get_error_string(code)}")


def _callback(code: int, timeout_ms: int) -> None:
    if _PENDING.error is None:
        _PENDING.error = mpi_error(code, timeout_ms)


_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64)(_callback)
