"""The callback behind `ag.print` in native code (see `arignote.lowering.loops.ag_print`).

`register_print(message, attrs, dtype, rank)` gives a print its callback id (the
frontend stores it in the op's `callback` property before lowering). Native code calls
the symbol `arignote_print_<element>_<rank>(id, descriptor*)`; every such symbol is the
one ctypes callback here, registered in the JIT with `llvm.add_symbol` by
`register_print_symbols` (run by `NativeModule` on the LLVM IR it compiles). The
callback reads the memref descriptor, copies the value into a NumPy array and prints
`<message> <attr> = <value>` for each attribute, as Theano's `Print` does, or hands the
array to the print's hook (`Print(global_fn=...)`, registered with `register_hook`).

An exception cannot unwind through native code: the callback catches whatever the
printing or the hook raises and keeps it as the calling thread's pending error; the
prints after it in the same call are skipped, and the runtime raises the error when the
native call returns (`raise_pending`, called by `NativeFunction`, which also never lets
such code compute a result in an input's buffer: a call that raises changes nothing).
The interpreter, which runs the prints as Python, simply lets the exception propagate.
"""

from __future__ import annotations

import ctypes
import re
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

SYMBOL_PREFIX = "arignote_print_"
_SYMBOL = re.compile(r"\b" + SYMBOL_PREFIX + r"\w+")


@dataclass(frozen=True)
class PrintSpec:
    """What one print shows: its message and attributes, for values of dtype and rank;
    `hook`, when not -1, the id of the function called with the value instead."""

    message: str
    attrs: tuple[str, ...]
    dtype: np.dtype
    rank: int
    hook: int = -1


_PRINTS: list[PrintSpec] = []
_HOOKS: list[Callable[[np.ndarray], object]] = []
_LOCK = threading.Lock()


def register_print(
    message: str, attrs: Sequence[str], dtype: Any, rank: int, hook: int = -1
) -> int:
    """A new callback id for a print of `message` showing `attrs` of values of that
    dtype and rank (or calling hook `hook`, when not -1)."""
    with _LOCK:
        _PRINTS.append(PrintSpec(message, tuple(attrs), np.dtype(dtype), rank, hook))
        return len(_PRINTS) - 1


def register_hook(fn: Callable[[np.ndarray], object]) -> int:
    """The id of a new print hook: `fn(value)` is called instead of printing the
    attributes."""
    with _LOCK:
        _HOOKS.append(fn)
        return len(_HOOKS) - 1


def show(spec: PrintSpec, value: np.ndarray) -> None:
    """Print `value` as `spec` says: `<message> <attr> = <value>` per attribute, or call
    its hook with `value`."""
    if spec.hook != -1:
        _HOOKS[spec.hook](value)
        return
    for attr in spec.attrs:
        shown = getattr(value, attr)
        if callable(shown):
            shown = shown()
        print(spec.message, attr, "=", shown)
    sys.stdout.flush()


def _array(spec: PrintSpec, address: int) -> np.ndarray:
    """A copy of the array whose memref descriptor is at `address`."""
    words = (ctypes.c_int64 * (3 + 2 * spec.rank)).from_address(address)
    aligned, offset = words[1], words[2]
    shape = tuple(words[3 : 3 + spec.rank])
    strides = tuple(s * spec.dtype.itemsize for s in words[3 + spec.rank :])
    if 0 in shape:
        return np.empty(shape, spec.dtype)
    span = sum((n - 1) * abs(s) for n, s in zip(shape, strides, strict=True))
    base = aligned + offset * spec.dtype.itemsize
    raw = (ctypes.c_char * (span + spec.dtype.itemsize)).from_address(base)
    flat = np.frombuffer(raw, spec.dtype)
    return np.lib.stride_tricks.as_strided(flat, shape, strides).copy()


class _Pending(threading.local):
    error: BaseException | None = None


_PENDING = _Pending()
"""Per thread, the exception a print callback raised during the native call running."""


def raise_pending() -> None:
    """Raise (and forget) the exception a print callback raised on this thread during
    the native call that just returned, if any."""
    error = _PENDING.error
    if error is not None:
        _PENDING.error = None
        raise error


def pending_error() -> BaseException | None:
    """The exception a callback raised on this thread during the running native call."""
    return _PENDING.error


def set_pending_error(error: BaseException) -> None:
    """Keep `error` (raised by a callback: it cannot unwind through native code) for
    `raise_pending` after the native call (the callbacks of custom ops use it too)."""
    _PENDING.error = error


def clear_pending() -> None:
    """Forget any exception left pending on this thread (before a native call)."""
    _PENDING.error = None


def _callback(ident: int, descriptor: int) -> None:
    if _PENDING.error is not None:
        return  # an earlier print of this call raised: the call's result is discarded
    try:
        if not 0 <= ident < len(_PRINTS):
            raise RuntimeError(f"ag.print: unregistered callback id {ident}")
        spec = _PRINTS[ident]
        show(spec, _array(spec, descriptor))
    except BaseException as error:  # noqa: BLE001 - raised by raise_pending after the call
        _PENDING.error = error


_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p)(_callback)
_REGISTERED: set[str] = set()


def register_print_symbols(llvm_ir: str) -> None:
    """Makes every `arignote_print_*` symbol that `llvm_ir` mentions resolve to the
    callback, for MCJIT."""
    import llvmlite.binding as llvm

    address = ctypes.cast(_CALLBACK, ctypes.c_void_p).value
    for name in set(_SYMBOL.findall(llvm_ir)) - _REGISTERED:
        llvm.add_symbol(name, address)
        _REGISTERED.add(name)
