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
import threading
import time
from collections.abc import Callable, Collection
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
    budget = ThreadBudget.for_this_process(
        lambda n: library.scipy_openblas_set_num_threads(ctypes.c_int(n))
    )
    if budget is not None:
        budget.start()


ADAPT_INTERVAL = 0.25
"""Seconds between two looks of `ThreadBudget` at what the other processes use."""


def _busy_seconds(cpus: Collection[int], stat: str = "/proc/stat") -> float:
    """The time the CPUs `cpus` spent busy since boot (all but idle and iowait), from
    the `cpuN` lines of /proc/stat."""
    ticks = os.sysconf("SC_CLK_TCK")
    busy = 0
    with open(stat) as lines:
        for line in lines:
            if not line.startswith("cpu") or line.startswith("cpu "):
                continue
            name, *fields = line.split()
            if int(name[3:]) in cpus:
                values = [int(f) for f in fields[:8]]
                busy += sum(values) - values[3] - values[4]
    return busy / ticks


class ThreadBudget:
    """OpenBLAS's thread count kept to the cores the other processes leave free.

    OpenBLAS's threads wait for each other spinning: on a machine whose cores other
    processes keep busy, a thread that is not running holds up every call (a 784-500-10
    MLP step took 24-48 ms with 2 threads beside two busy processes on 2 cores, 1.4-2.6
    ms with one; 0.9 ms against 1.4 ms on the quiet machine). Every `ADAPT_INTERVAL`
    seconds a daemon thread measures how many of this process's cores the others used
    (the busy time of its CPUs, from /proc/stat, less this process's CPU time),
    averaged over the last two looks, and gives OpenBLAS the rest, at least one.

    Not started when the user set OpenBLAS's thread count, off Linux, under a cgroup
    CPU quota (the CPUs' time is then shared with processes the quota does not limit),
    or with one core."""

    def __init__(
        self,
        set_threads: Callable[[int], object],
        cpus: Collection[int],
        busy: Callable[[], float],
        own: Callable[[], float] = time.process_time,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.set_threads, self.cores = set_threads, len(cpus)
        self.busy, self.own, self.clock = busy, own, clock
        self.threads = self.cores
        """The thread count OpenBLAS was last given."""
        self._last = (clock(), busy(), own())
        self._others: list[float] = []

    @classmethod
    def for_this_process(cls, set_threads: Callable[[int], object]) -> ThreadBudget | None:
        """The budget of this process's CPUs, None where it does not apply (above)."""
        from arignote.runtime.threadpool import cpu_quota

        if any(os.environ.get(name) for name in _THREAD_VARIABLES):
            return None
        try:
            cpus = frozenset(os.sched_getaffinity(0))
            _busy_seconds(cpus)
        except (AttributeError, OSError, ValueError):  # not Linux, no /proc
            return None
        if len(cpus) < 2 or cpu_quota() is not None:
            return None
        return cls(set_threads, cpus, lambda: _busy_seconds(cpus))

    def look(self) -> int:
        """Measure the others' use since the last look and set OpenBLAS's threads;
        returns their count."""
        now, busy, own = self.clock(), self.busy(), self.own()
        then, busy_then, own_then = self._last
        self._last = (now, busy, own)
        if now <= then:
            return self.threads
        others = max(0.0, (busy - busy_then) - (own - own_then)) / (now - then)
        self._others = [*self._others[-1:], others]
        average = sum(self._others) / len(self._others)
        threads = max(1, min(self.cores, self.cores - round(average)))
        if threads != self.threads:
            self.set_threads(threads)
            self.threads = threads
        return threads

    def start(self) -> None:
        """Look every `ADAPT_INTERVAL` seconds, in a daemon thread, for the process's
        life (a forked child has no such thread: its OpenBLAS keeps the last count)."""

        def run() -> None:
            while True:
                time.sleep(ADAPT_INTERVAL)
                try:
                    self.look()
                except (OSError, ValueError):  # /proc unreadable now: stop adapting
                    return

        threading.Thread(target=run, name="arignote-blas-budget", daemon=True).start()


def needs_blas(llvm_ir: str) -> bool:
    """Whether LLVM IR text declares a BLAS or LAPACK function."""
    return SYMBOL_PREFIX in llvm_ir or LAPACK_PREFIX in llvm_ir
