"""Ops without a tensor result in `ag-to-loops`: the registry of their emitters.

A tensor function's body is mostly ops computing one tensor each (`KERNELS`); a
*statement* computes nothing that later ops read and only has an effect, like the
profiling timers (`ag.profile_begin` / `ag.profile_end`, see `profile_timers`).
`ag-to-loops` skips statements in `@f__shape` and, in `@f`, calls their emitter in
place, after the ops before them and before the ops after them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from xdsl.builder import Builder
from xdsl.ir import Operation, SSAValue

from arignote.lowering.loops.loop_utils import Buffer


@dataclass
class StatementState:
    """What a statement's emitter may read: the function being built and the buffers of
    the values computed so far; `values` keeps what one statement leaves for a later one
    (a timer's start time)."""

    function: str
    """The name of the compute function `@f`."""
    env: dict[SSAValue, Buffer]
    values: dict[Any, SSAValue] = field(default_factory=dict)


Statement = Callable[[Builder, Operation, StatementState], None]

STATEMENTS: dict[type[Operation], Statement] = {}
"""Op class → the emitter of a statement (filled by the modules that define them)."""
