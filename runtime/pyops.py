"""The Python code behind `ag.python_op` (custom ops), for the interpreter and native code.

The frontend registers each custom op's node once (`register`): a function computing
the node's output arrays from its input arrays, with the dtypes and ranks of both. The
interpreter calls it (`run`). Native code calls it through three ctypes callbacks (see
`arignote.lowering.loops.ag_python`), the only places where it takes the GIL:

- `arignote_pyop_run_<n>_<sig>(id, in_1*, ..., in_n*, dims*)`, in `@f__shape`: reads the
  `n` input memref descriptors, runs the node, keeps its outputs in this thread's queue
  for `id` and writes their dimensions (concatenated) into `dims`;
- `arignote_pyop_dims(id, dims*)`, in `@f`: takes the oldest kept outputs of `id` and
  writes their dimensions again (`@f` allocates the buffers from them);
- `arignote_pyop_fetch_<m>_<sig>(id, out_1*, ..., out_m*)`: copies the outputs taken
  into the `m` buffers (in `@f__shape`, when a later shape needs the op's values, the
  outputs of the run just made).

Every such symbol is resolved to the callback of its arity (`register_symbols`, run by
`NativeModule` on the LLVM IR it compiles); `<sig>` only keeps the declarations of
different operand types apart.

An exception cannot unwind through native code: a callback catches what the node
raises and keeps it as the thread's pending error (`arignote.runtime.printing`), writes
zero dimensions, and the runtime raises it when the native call returns. `clear`
empties the thread's queues before a native call.
"""

from __future__ import annotations

import ctypes
import re
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from arignote.runtime.printing import pending_error, set_pending_error

SYMBOL_PREFIX = "arignote_pyop_"
_SYMBOL = re.compile(r"\b" + SYMBOL_PREFIX + r"(run|fetch|dims)(?:_(\d+)\w*)?\b")

Perform = Callable[[list[np.ndarray]], list[np.ndarray]]


@dataclass(frozen=True)
class NodeSpec:
    """A registered node: its code and the dtypes and ranks of its inputs and outputs."""

    perform: Perform
    label: str
    in_types: tuple[tuple[np.dtype, int], ...]
    out_types: tuple[tuple[np.dtype, int], ...]


_NODES: list[NodeSpec] = []
_LOCK = threading.Lock()


def register(
    perform: Perform,
    label: str,
    in_types: Sequence[tuple[Any, int]],
    out_types: Sequence[tuple[Any, int]],
) -> int:
    """The id of a new node computing outputs of `out_types` ((dtype, rank) pairs) from
    inputs of `in_types` with `perform`."""
    spec = NodeSpec(
        perform,
        label,
        tuple((np.dtype(d), r) for d, r in in_types),
        tuple((np.dtype(d), r) for d, r in out_types),
    )
    with _LOCK:
        _NODES.append(spec)
        return len(_NODES) - 1


def node(ident: int) -> NodeSpec:
    """The node registered as `ident` (RuntimeError naming it when there is none)."""
    if not 0 <= ident < len(_NODES):
        raise RuntimeError(
            f"ag.python_op: no custom op is registered as {ident} in this process (a graph "
            "holding a custom op was loaded from another process?)"
        )
    return _NODES[ident]


def run(ident: int, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The outputs of node `ident` for the input `arrays`, checked against its types."""
    spec = node(ident)
    outputs = spec.perform(list(arrays))
    if len(outputs) != len(spec.out_types):
        raise ValueError(
            f"{spec.label}: perform produced {len(outputs)} outputs, expected {len(spec.out_types)}"
        )
    for k, (value, (dtype, rank)) in enumerate(zip(outputs, spec.out_types, strict=True)):
        if not isinstance(value, np.ndarray) or value.dtype != dtype or value.ndim != rank:
            got = (
                f"{value.dtype} array of rank {value.ndim}"
                if isinstance(value, np.ndarray)
                else type(value).__name__
            )
            raise TypeError(
                f"{spec.label}: output {k} must be a {dtype} array of rank {rank}, got {got}"
            )
    return outputs


# --- native callbacks ------------------------------------------------------------------


class _Queues(threading.local):
    def __init__(self) -> None:
        self.kept: dict[int, deque[list[np.ndarray]]] = {}
        """Per node, the outputs of its runs in `@f__shape` that `@f` has not taken."""
        self.current: dict[int, list[np.ndarray]] = {}
        """Per node, the outputs `@f` is computing now (taken by the dims callback)."""


_QUEUES = _Queues()


def clear() -> None:
    """Forget the outputs kept on this thread (before a native call)."""
    _QUEUES.kept.clear()
    _QUEUES.current.clear()


def _words(address: int, rank: int) -> Any:
    return (ctypes.c_int64 * (3 + 2 * rank)).from_address(address)


def _view(address: int, dtype: np.dtype, rank: int) -> np.ndarray:
    """A NumPy view of the memref whose descriptor is at `address`."""
    words = _words(address, rank)
    aligned, offset = words[1], words[2]
    shape = tuple(words[3 : 3 + rank])
    strides = tuple(s * dtype.itemsize for s in words[3 + rank :])
    if 0 in shape:
        return np.empty(shape, dtype)
    low = sum((n - 1) * s for n, s in zip(shape, strides, strict=True) if s < 0)
    high = sum((n - 1) * s for n, s in zip(shape, strides, strict=True) if s > 0)
    base = aligned + offset * dtype.itemsize
    raw = (ctypes.c_char * (high - low + dtype.itemsize)).from_address(base + low)
    flat = np.frombuffer(raw, dtype)
    return np.lib.stride_tricks.as_strided(flat[-low // dtype.itemsize :], shape, strides)


def _write_dims(address: int, outputs: Sequence[np.ndarray]) -> None:
    dims = [n for value in outputs for n in value.shape]
    if dims:
        target = _view(address, np.dtype(np.int64), 1)
        target[: len(dims)] = dims


def _run_callback(ident: int, *pointers: int) -> None:
    *inputs, dims = pointers
    if pending_error() is not None:
        return  # an earlier callback of this call raised: the call's results are dropped
    try:
        spec = node(ident)
        pairs = zip(inputs, spec.in_types, strict=True)
        arrays = [_view(p, dtype, rank).copy() for p, (dtype, rank) in pairs]
        outputs = run(ident, arrays)
        _QUEUES.kept.setdefault(ident, deque()).append(outputs)
        _write_dims(dims, outputs)
    except BaseException as error:  # noqa: BLE001 - raised by the runtime after the call
        set_pending_error(error)


def _dims_callback(ident: int, dims: int) -> None:
    queue = _QUEUES.kept.get(ident)
    if not queue:
        return  # the node raised (pending error) and wrote zero dimensions
    outputs = _QUEUES.current[ident] = queue.popleft()
    _write_dims(dims, outputs)


def _fetch_callback(ident: int, *pointers: int) -> None:
    # In `@f`, the outputs the dims callback took; in `@f__shape` (when a later shape
    # needs this op's values), those of the run just made.
    outputs = _QUEUES.current.get(ident)
    if outputs is None:
        queue = _QUEUES.kept.get(ident)
        if not queue:
            return  # the node raised (pending error) and wrote zero dimensions
        outputs = queue[-1]
    try:
        for p, value in zip(pointers, outputs, strict=True):
            np.copyto(_view(p, value.dtype, value.ndim), value)
    except BaseException as error:  # noqa: BLE001 - raised by the runtime after the call
        set_pending_error(error)


_CALLBACKS: dict[tuple[str, int], Any] = {}
"""(kind, number of memref arguments) → its ctypes callback, kept alive for the process."""

_FUNCTIONS = {"run": _run_callback, "fetch": _fetch_callback, "dims": _dims_callback}


def _callback(kind: str, arity: int) -> Any:
    key = (kind, arity)
    fn = _CALLBACKS.get(key)
    if fn is None:
        ctype = ctypes.CFUNCTYPE(None, ctypes.c_int64, *[ctypes.c_void_p] * arity)
        fn = _CALLBACKS[key] = ctype(_FUNCTIONS[kind])
    return fn


_REGISTERED: set[str] = set()


def register_symbols(llvm_ir: str) -> None:
    """Makes every `arignote_pyop_*` symbol that `llvm_ir` mentions resolve to the
    callback of its kind and arity, for MCJIT."""
    import llvmlite.binding as llvm

    for match in _SYMBOL.finditer(llvm_ir):
        name = match.group(0)
        if name in _REGISTERED:
            continue
        kind = match.group(1)
        arity = 1 if kind == "dims" else int(match.group(2))
        address = ctypes.cast(_callback(kind, arity), ctypes.c_void_p).value
        llvm.add_symbol(name, address)
        _REGISTERED.add(name)
