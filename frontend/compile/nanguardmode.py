"""`arignote.compile.nanguardmode`: Theano's module path for `NanGuardMode` (the mode
lives in `arignote.compile.monitoring`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from arignote.compile.monitoring import BIG, NanGuardError, NanGuardMode

__all__ = ["BIG", "NanGuardError", "NanGuardMode", "contains_inf", "contains_nan", "flatten"]


def flatten(l: Any) -> list[Any]:  # noqa: E741 - Theano's argument name
    """The objects of the nested lists/tuples `l`, in order, as one list (a non-list is
    a list of itself). Walks the nesting with a stack, not recursion."""
    if not isinstance(l, list | tuple):
        return [l]
    flat: list[Any] = []
    stack = [iter(l)]
    while stack:
        item = next(stack[-1], _END)
        if item is _END:
            stack.pop()
        elif isinstance(item, list | tuple):
            stack.append(iter(item))
        else:
            flat.append(item)
    return flat


_END = object()


def _floats(arr: Any) -> np.ndarray | None:
    array = np.asarray(arr)
    return array if array.dtype.kind in "fc" else None


def contains_nan(arr: Any, node: Any = None, var: Any = None) -> bool:
    """Whether the array `arr` holds a NaN (integers never do). `node` and `var` are
    accepted for Theano's signature (they name where the array comes from)."""
    array = _floats(arr)
    return array is not None and bool(np.isnan(array).any())


def contains_inf(arr: Any, node: Any = None, var: Any = None) -> bool:
    """Whether the array `arr` holds +inf or -inf (integers never do)."""
    array = _floats(arr)
    return array is not None and bool(np.isinf(array).any())
