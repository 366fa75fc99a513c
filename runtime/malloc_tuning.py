"""glibc's malloc settings for the temporaries of native code.

A natively compiled function allocates its intermediate buffers with `malloc` and frees
them before it returns (`ag-to-loops`, `memref.alloc`/`dealloc`). glibc serves a block of
128 KiB or more with its own `mmap` at first, and after the first such block is freed it
raises that threshold to the block's size (up to 32 MiB) and its trim threshold to twice
that: from then on the blocks come from the heap, but as soon as more than twice the
largest block is free at the top of the heap, `free` gives it back to the system. A
function whose temporaries add up to more than that then page-faults them all in again
at every call (the RNN benchmark's step, before its BPTT stopped copying its 1.6 MB
sequences: 3,572 minor faults per step, 12.1 ms of CPU time where the same step took
5.7 ms without them).

`tune_malloc()` sets what glibc's dynamic thresholds would reach anyway, once and for
all: blocks below `MMAP_THRESHOLD` (32 MiB, glibc's own maximum) come from the heap, and
the heap is trimmed only when `TRIM_THRESHOLD` (128 MiB) is free at its top. Blocks of 32
MiB or more (e.g. a 40 MB output array) are still mapped and unmapped on their own, so
the memory a process keeps is bounded by the trim threshold. It changes malloc for the
whole process (NumPy included), so it is a flag: `config.malloc_tuning` (default True),
applied when the first function is compiled natively (`Mode.compile`). It does nothing
when the environment already sets glibc's tunables (`MALLOC_MMAP_THRESHOLD_`,
`MALLOC_TRIM_THRESHOLD_`, `MALLOC_TOP_PAD_`, `MALLOC_MMAP_MAX_`, `GLIBC_TUNABLES`: the
user's choice wins) or with another C library.
"""

from __future__ import annotations

import ctypes
import os
from functools import cache

MMAP_THRESHOLD = 32 << 20
"""Blocks at least this large are mapped on their own (glibc's dynamic maximum)."""

TRIM_THRESHOLD = 128 << 20
"""The free memory at the top of the heap that `free` keeps before trimming it."""

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3

ENVIRONMENT = (
    "MALLOC_MMAP_THRESHOLD_",
    "MALLOC_TRIM_THRESHOLD_",
    "MALLOC_TOP_PAD_",
    "MALLOC_MMAP_MAX_",
    "GLIBC_TUNABLES",
)
"""Environment variables by which the user tunes glibc's malloc (then left alone)."""


def _glibc() -> bool:
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (AttributeError, ValueError, OSError):
        return False


@cache
def tune_malloc() -> bool:
    """Set glibc's mmap and trim thresholds (see the module docstring) once per process;
    True when they were set, False when left alone (another C library, or the
    environment tunes malloc)."""
    if any(name in os.environ for name in ENVIRONMENT):
        return False
    if not _glibc():
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )
