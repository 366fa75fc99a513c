"""Reading the per-node counters of a profiled native function.

The lowering (`arignote.lowering.loops.profile_timers`) gives a profiled function `@f` the
global `@f__profile`: three int64 per node (nanoseconds, runs, largest bytes of its
results). `NodeCounters` views that global as a NumPy array through the JIT's address
of it.
"""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from arignote.runtime.cpu import NativeModule

COUNTERS_SUFFIX = "__profile"
COUNTERS_PER_NODE = 3


class NodeCounters:
    """The counters of `n_nodes` nodes of `@name` in `module`: `times` (seconds),
    `calls` and `bytes` per node."""

    def __init__(self, module: NativeModule, name: str, n_nodes: int):
        self._module = module  # keeps the global alive
        self.n_nodes = n_nodes
        if n_nodes == 0:
            self._raw = np.zeros((0, COUNTERS_PER_NODE), np.int64)
            return
        address = module.global_address(name + COUNTERS_SUFFIX)
        words = (ctypes.c_int64 * (COUNTERS_PER_NODE * n_nodes)).from_address(address)
        self._raw = np.frombuffer(words, np.int64).reshape(n_nodes, COUNTERS_PER_NODE)

    @property
    def times(self) -> np.ndarray:
        return self._raw[:, 0] * 1e-9

    @property
    def calls(self) -> np.ndarray:
        return self._raw[:, 1].copy()

    @property
    def bytes(self) -> np.ndarray:
        return self._raw[:, 2].copy()

    def reset(self) -> None:
        self._raw[:] = 0
