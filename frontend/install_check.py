"""`arignote.check_install()` (this module) and `python -m arignote`: what this
installation has and can do: versions, the CPU and the vector features native code uses,
the BLAS and its threads, the compile cache, and the optional GPU and MPI backends, with
what to install when something is missing.

Each check is a function returning `Check`s; a failing check never raises (the report
is what a user runs when something is wrong).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import platform
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

VECTOR_FEATURES = ("sse4.2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl")
"""The x86-64 features that decide how wide native loops are (shown when present)."""


@dataclass(frozen=True)
class Check:
    """One line of the report: its topic, what was found, and whether it is usable;
    `hint` says what to install or set when it is not."""

    topic: str
    found: str
    ok: bool = True
    hint: str = ""


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def versions() -> list[Check]:
    checks = [Check("python", f"{platform.python_version()} ({sys.executable})")]
    for name in ("arignote", "numpy", "xdsl", "llvmlite", "scipy-openblas32"):
        version = _version(name)
        hint = f"pip install {name}" if version is None else ""
        checks.append(Check(name, version or "not installed", version is not None, hint))
    try:
        import llvmlite.binding as llvm

        checks.append(Check("LLVM", ".".join(map(str, llvm.llvm_version_info))))
    except Exception as e:  # noqa: BLE001 - reported, not raised
        checks.append(Check("LLVM", f"unavailable: {e}", False, "pip install llvmlite"))
    return checks


def cpu() -> list[Check]:
    try:
        from arignote.runtime.cpu import host_cpu

        triple, name, features = host_cpu()
    except Exception as e:  # noqa: BLE001
        return [Check("CPU", f"LLVM cannot describe it: {e}", False)]
    enabled = {f[1:] for f in features.split(",") if f.startswith("+")}
    used = [f for f in VECTOR_FEATURES if f in enabled]
    from arignote.runtime.threadpool import usable_cores

    return [
        Check("CPU", f"{name} ({triple}), {usable_cores()} usable cores"),
        Check("vector features", ", ".join(used) or "none of " + ", ".join(VECTOR_FEATURES)),
    ]


def blas() -> list[Check]:
    try:
        import ctypes

        from arignote.runtime.blas import load_blas

        path = load_blas()
        threads = ctypes.CDLL(path).scipy_openblas_get_num_threads()
        config = ctypes.CDLL(path).scipy_openblas_get_config
        config.restype = ctypes.c_char_p
        kernel = config().decode(errors="replace")
    except Exception as e:  # noqa: BLE001
        return [Check("BLAS", f"unavailable: {e}", False, "pip install scipy-openblas32")]
    chosen = next(
        (v for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS") if os.environ.get(v)), None
    )
    how = f"set by {chosen}" if chosen else "at most the usable cores"
    return [Check("BLAS", f"{kernel} ({path})"), Check("BLAS threads", f"{threads} ({how})")]


def compile_cache() -> list[Check]:
    from arignote.compile.codecache import cache_directory
    from arignote.configuration import config

    directory = cache_directory()
    if not config.compile_cache:
        return [Check("compile cache", f"off (config.compile_cache=False); {directory}")]
    total = files = 0
    for root, _, names in os.walk(directory):
        for name in names:
            try:
                total += os.path.getsize(os.path.join(root, name))
                files += 1
            except OSError:
                continue
    writable = os.access(directory if os.path.isdir(directory) else config.compiledir, os.W_OK)
    found = f"{directory}: {files} files, {total / 2**20:.1f} MiB"
    return [
        Check(
            "compile cache",
            found,
            writable or not os.path.exists(config.compiledir),
            ""
            if writable
            else "make config.compiledir writable or set ARIGNOTE_FLAGS="
            "compiledir=<a writable directory>",
        )
    ]


def gpu() -> list[Check]:
    checks = []
    ptxas = shutil.which("ptxas")
    checks.append(
        Check(
            "ptxas",
            ptxas or "not on PATH",
            ptxas is not None,
            "" if ptxas else "install the CUDA toolkit to validate generated PTX",
        )
    )
    if importlib.util.find_spec("pycuda") is None:
        checks.append(
            Check(
                "GPU (pycuda)",
                "not installed",
                False,
                "pip install pycuda, with a CUDA driver and toolkit; arignote's GPU "
                "target is not built yet: device=cuda runs on the CPU and warns",
            )
        )
        return checks
    try:
        import pycuda.driver as cuda

        cuda.init()
        names = [cuda.Device(i).name() for i in range(cuda.Device.count())]
        checks.append(Check("GPU (pycuda)", ", ".join(names) or "no CUDA device", bool(names)))
    except Exception as e:  # noqa: BLE001
        checks.append(Check("GPU (pycuda)", f"no usable CUDA driver: {e}", False))
    return checks


def mpi() -> list[Check]:
    if importlib.util.find_spec("mpi4py") is None:
        return [
            Check(
                "MPI (mpi4py)",
                "not installed",
                False,
                "pip install mpi4py mpich; arignote.distributed is not built yet",
            )
        ]
    try:
        from mpi4py import MPI

        return [Check("MPI (mpi4py)", MPI.Get_library_version().splitlines()[0].strip())]
    except Exception as e:  # noqa: BLE001
        return [Check("MPI (mpi4py)", f"cannot load the MPI library: {e}", False)]


CHECKS: tuple[Callable[[], list[Check]], ...] = (versions, cpu, blas, compile_cache, gpu, mpi)


def run_checks() -> list[Check]:
    return [check for section in CHECKS for check in section()]


def check_install(file: TextIO | None = None) -> bool:
    """Prints what this installation has and can do, one line each, with what to install
    for anything missing; returns whether the required parts (everything but the GPU and
    MPI backends) work."""
    out = sys.stdout if file is None else file
    checks = run_checks()
    width = max(len(c.topic) for c in checks)
    for c in checks:
        mark = "ok " if c.ok else "-- "
        hint = f"  [{c.hint}]" if c.hint else ""
        print(f"{mark}{c.topic.ljust(width)}  {c.found}{hint}", file=out)
    optional = ("ptxas", "GPU (pycuda)", "MPI (mpi4py)")
    return all(c.ok for c in checks if c.topic not in optional)
