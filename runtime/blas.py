"""The CBLAS library that JIT code calls for `ag.gemv` / `ag.gemm`.

The `scipy-openblas32` wheel (a hard dependency) ships OpenBLAS with 32-bit integers and
its symbols prefixed `scipy_`: `scipy_cblas_sgemv`, `scipy_cblas_dgemv`,
`scipy_cblas_sgemm`, `scipy_cblas_dgemm`, ... `load_blas()` loads that shared library
into the process with `llvmlite.binding.load_library_permanently`, so MCJIT resolves the
`llvm.func` declarations `ag-to-loops` emits against it. `runtime/cpu.py` calls it before
compiling a module that references a `scipy_cblas_` symbol; `BlasUnavailableError` then
says why the library could not be loaded.
"""

from __future__ import annotations

import os
from functools import cache

SYMBOL_PREFIX = "scipy_cblas_"
"""Every BLAS function the lowering calls starts with this prefix."""

LAPACK_PREFIX = "scipy_LAPACKE_"
"""Every LAPACK function the lowering calls starts with this prefix (same library)."""


class BlasUnavailableError(RuntimeError):
    """The BLAS library could not be loaded, and a compiled module needs it."""


def blas_library_path() -> str:
    """The path of the `scipy-openblas32` shared library (BlasUnavailableError if absent).

    Found without importing the package (its import reads package metadata, which takes
    longer than loading a cached compiled function): the library is the file starting
    with `libscipy_openblas` in its `lib` directory, as `scipy_openblas32.get_library`
    says.
    """
    import importlib.util

    spec = importlib.util.find_spec("scipy_openblas32")
    if spec is None or not spec.submodule_search_locations:
        raise BlasUnavailableError(
            "arignote needs the 'scipy-openblas32' package for ag.gemv/ag.gemm on the CPU "
            "(pip install scipy-openblas32)"
        )
    lib_dir = os.path.join(list(spec.submodule_search_locations)[0], "lib")
    try:
        names = sorted(n for n in os.listdir(lib_dir) if n.startswith("libscipy_openblas"))
    except OSError:  # pragma: no cover
        names = []
    if not names:  # pragma: no cover
        raise BlasUnavailableError(f"no libscipy_openblas library in {lib_dir}")
    return os.path.join(lib_dir, names[0])


@cache
def load_blas() -> str:
    """Load the BLAS library into the process once (for MCJIT); returns its path."""
    import ctypes

    import llvmlite.binding as llvm

    path = blas_library_path()
    user_timeout = os.environ.get(THREAD_TIMEOUT_VARIABLE)
    if user_timeout is None:  # read once, when the library initialises (below)
        os.environ[THREAD_TIMEOUT_VARIABLE] = str(THREAD_TIMEOUT)
    try:
        llvm.load_library_permanently(path)
    except RuntimeError as e:  # pragma: no cover
        raise BlasUnavailableError(f"cannot load the BLAS library {path}: {e}") from e
    finally:
        if user_timeout is None:  # (the process's environment as it was)
            os.environ.pop(THREAD_TIMEOUT_VARIABLE, None)
    _limit_threads(path)
    from arignote.runtime.lapack import register_lapack_symbols

    register_lapack_symbols(ctypes.CDLL(path))
    return path


THREAD_TIMEOUT_VARIABLE = "OPENBLAS_THREAD_TIMEOUT"
THREAD_TIMEOUT = 20
"""OpenBLAS's worker threads wait for work spinning `2**THREAD_TIMEOUT` cycles before
they sleep; its default, 28 (about 0.1 s), kept a worker spinning for that long after
the library loaded and after each threaded call, on a core that arignote's thread pool
wanted: a logreg step measured right after its compile took 26-27 us instead of 19 us
in three processes of eight on 2 cores (in eight of eight at 2**20 cycles, about
0.4 ms), and a 784-500-10 MLP step was as fast (955-994 against 966-979 us). Set in
the environment only while the library loads (where OpenBLAS reads it), unless the
user set it."""

_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")


def _limit_threads(path: str) -> None:
    """Run OpenBLAS on at most the cores this process may use (`usable_cores`, which
    honours a cgroup CPU quota) unless the user set its thread count: OpenBLAS counts
    the host's cores, and in a container with a quota its threads, which wait by
    spinning, would then outnumber the CPUs it gets."""
    import ctypes

    from arignote.runtime.threadpool import usable_cores

    if any(os.environ.get(name) for name in _THREAD_VARIABLES):
        return
    library, cores = ctypes.CDLL(path), usable_cores()
    if library.scipy_openblas_get_num_threads() > cores:
        library.scipy_openblas_set_num_threads(ctypes.c_int(cores))


def needs_blas(llvm_ir: str) -> bool:
    """Whether LLVM IR text declares a BLAS or LAPACK function."""
    return SYMBOL_PREFIX in llvm_ir or LAPACK_PREFIX in llvm_ir
