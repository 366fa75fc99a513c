"""`arignote.compile.nanguardmode`: Theano's module path for `NanGuardMode` (the mode
lives in `arignote.compile.monitoring`)."""

from __future__ import annotations

from arignote.compile.monitoring import BIG, NanGuardError, NanGuardMode

__all__ = ["BIG", "NanGuardError", "NanGuardMode"]
