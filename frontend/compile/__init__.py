"""`arignote.compile`: turning symbolic graphs into callables (Theano's `theano.compile`)."""

from __future__ import annotations

from typing import Any

from arignote.compile.clone import clone
from arignote.compile.function import Function, MissingInputError, UnusedInputError, function
from arignote.compile.io import In, Out, Param
from arignote.compile.mode import Mode, get_default_mode, get_mode
from arignote.compile.profiling import ProfileStats
from arignote.compile.sharedvalue import SharedVariable, shared

__all__ = [
    "DebugMode",
    "MonitorMode",
    "ProfileStats",
    "Function",
    "In",
    "MissingInputError",
    "Mode",
    "Out",
    "Param",
    "SharedVariable",
    "UnusedInputError",
    "clone",
    "function",
    "get_default_mode",
    "get_mode",
    "shared",
]

# custom ops and OpFromGraph (issue 13 item 8), as Theano's `theano.compile` exports them
from arignote.compile.builders import OpFromGraph  # noqa: E402
from arignote.compile.ops import (  # noqa: E402
    DeepCopyOp,
    FromFunctionOp,
    Shape_i,
    ViewOp,
    as_op,
    deep_copy_op,
    register_deep_copy_op_c_code,
    register_shape_c_code,
    register_shape_i_c_code,
    register_view_op_c_code,
    view_op,
)

__all__ += [
    "DeepCopyOp",
    "FromFunctionOp",
    "OpFromGraph",
    "Shape_i",
    "ViewOp",
    "as_op",
    "deep_copy_op",
    "register_deep_copy_op_c_code",
    "register_shape_c_code",
    "register_shape_i_c_code",
    "register_view_op_c_code",
    "view_op",
]


def __getattr__(name: str) -> Any:
    """`DebugMode` and `MonitorMode` on first use: their modules import xDSL's
    interpreter (about 5 ms of every process's first `function()` otherwise)."""
    if name == "DebugMode":
        from arignote.compile.debugmode import DebugMode

        return DebugMode
    if name == "MonitorMode":
        from arignote.compile.monitormode import MonitorMode

        return MonitorMode
    raise AttributeError(f"module 'arignote.compile' has no attribute {name!r}")
