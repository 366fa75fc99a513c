"""Declarative assembly formats parsed on first use, not when a dialect is imported.

xDSL parses an op's `assembly_format` when its class is defined
(`xdsl.irdl.operations.irdl_op_definition` calls `FormatProgram.from_str`), so that
importing the dialects a first compile needs (`llvm`, `arith`, `memref`, `scf`, `cf`,
`math`, ...) parsed some 150 formats: about 45 ms of every process's first compile, for
formats only printing or parsing IR text uses, which a compile does not. `install()`
makes `FormatProgram.from_str` return a `LazyFormat`, which parses the format on its
first `parse`, `print` or other use and then acts as the `FormatProgram`. A format with
an error then raises on its first use instead of at import (the FileCheck tests print
and parse the dialects' ops).

`arignote/__init__.py` installs it, before anything defines an op. xDSL is pinned to one
minor version; `install()` leaves xDSL as it is when `from_str` is not the static
method it wraps.
"""

from __future__ import annotations

from typing import Any

_INSTALLED = False


class LazyFormat:
    """A `FormatProgram` parsed on first use (module doc)."""

    __slots__ = ("_args", "_program")

    def __init__(self, *args: Any) -> None:
        self._args = args
        self._program: Any = None

    def program(self) -> Any:
        """The `FormatProgram` (parsed now if it was not yet)."""
        if self._program is None:
            self._program = _FROM_STR(*self._args)
            self._args = ()
        return self._program

    def parse(self, parser: Any, op_type: Any) -> Any:
        return self.program().parse(parser, op_type)

    def print(self, printer: Any, op: Any) -> None:
        return self.program().print(printer, op)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.program(), name)


_FROM_STR: Any = None


def install() -> bool:
    """Make op definitions' assembly formats lazy (module doc); whether they now are."""
    global _INSTALLED, _FROM_STR
    if _INSTALLED:
        return True
    from xdsl.irdl import declarative_assembly_format as formats

    original = formats.FormatProgram.__dict__.get("from_str")
    if not isinstance(original, staticmethod):  # (another xDSL: left as it is)
        return False
    _FROM_STR = original.__func__

    def from_str(input: str, op_def: Any) -> Any:
        return LazyFormat(input, op_def)

    formats.FormatProgram.from_str = staticmethod(from_str)  # type: ignore[method-assign]
    _INSTALLED = True
    return True
