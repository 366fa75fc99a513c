"""Compiling with the cyclic garbage collector paused.

A compile builds and discards thousands of xDSL ops, each in reference cycles (an op
and its parent block, a value and its uses), so CPython's collector runs over and over
during it: on the logreg training function, about 120 young and 10 middle-generation
collections, and often a full one over every object the imports made (xDSL's dialects,
llvmlite, numpy), about 45 ms of CPU time in all, under a tenth of the compile.
`gc_paused()` disables the collector for the duration of a compile; the cycles a
compile leaves are collected by the collector's next run after it, when the garbage of
the whole compile goes at once. Reference counting frees everything else as usual.

Nesting and threads: the collector is disabled while at least one compile runs, and
re-enabled when the last ends, only if it was enabled when the first began (a program
that turned it off keeps it off).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_reenable = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """Run the body with the cyclic garbage collector disabled (see the module)."""
    global _depth, _reenable
    with _lock:
        if _depth == 0:
            _reenable = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _reenable:
                gc.enable()
