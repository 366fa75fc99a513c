"""`arignote.compile.function_module`: Theano's module path for the compiled function's
class and the errors `function` raises (they live in `arignote.compile.function`)."""

from __future__ import annotations

from arignote.compile.function import Function, MissingInputError, UnusedInputError, function

__all__ = ["Function", "MissingInputError", "UnusedInputError", "function"]
