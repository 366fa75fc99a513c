"""`arignote.compile.monitormode`: Theano's module path for `MonitorMode` (the mode
lives in `arignote.compile.monitoring`) and its example callback `detect_nan`."""

from __future__ import annotations

from typing import Any

import numpy as np

from arignote.compile.monitoring import MonitorMode, NodeThunk

__all__ = ["MonitorMode", "NodeThunk", "detect_nan"]


def _has_nan(value: Any) -> bool:
    array = np.asarray(value)
    return array.dtype.kind in "fc" and bool(np.isnan(array).any())


def detect_nan(i: int, node: Any, fn: NodeThunk) -> None:
    """A `post_func` for `MonitorMode` (Theano's): print the node, its inputs and its
    outputs when one of its outputs holds a NaN."""
    if not any(_has_nan(cell[0]) for cell in fn.outputs):
        return
    from arignote.printing import debugprint

    print("*** NaN detected ***")
    debugprint(node)
    print(f"Inputs : {[cell[0] for cell in fn.inputs]}")
    print(f"Outputs: {[cell[0] for cell in fn.outputs]}")
