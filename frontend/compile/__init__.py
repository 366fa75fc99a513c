"""`arignote.compile`: turning symbolic graphs into callables (Theano's `theano.compile`)."""

from __future__ import annotations

from arignote.compile.clone import clone
from arignote.compile.debugmode import DebugMode
from arignote.compile.function import Function, MissingInputError, UnusedInputError, function
from arignote.compile.io import In, Out, Param
from arignote.compile.mode import Mode, get_default_mode, get_mode
from arignote.compile.monitormode import MonitorMode
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
