"""Calling a function compiled by `ag-to-loops` and the LLVM lowering, from NumPy.

The native ABI (see `arignote.lowering.loops.ag_to_loops`) of a tensor function `@f` with
inputs `x0..xn` and results `r0..rm` is two C functions taking pointers to MLIR-style
memref descriptors:

* `int32 f__shape(x0*, ..., xn*, dims*, err*)`: checks the input shapes, writes the
  dimensions of all results (concatenated, in result order) into the `i64` vector `dims`
  and returns 0; or writes `[check_id, v1, ..., vn]` into the `i64` vector `err` and
  returns the 1-based `check_id`, whose message (`ag.checks[check_id - 1]`, a `%`-format
  string with `n` `%d`s) is filled with `(v1, ..., vn)`; `err` has room for the message
  with the most (`err_length`).
* `int64 f(x0*, ..., xn*, r0*, ..., rm*)`: computes the results into caller-allocated
  contiguous buffers of the shapes that `f__shape` returned and returns 0.

Both check every buffer they allocate (`arignote.lowering.llvm.checked_alloc`): when `malloc`
refuses one, or its size overflows, they free what they allocated and return a negative
status, `-bytes` (the type's minimum when the size does not fit it), which becomes a
`MemoryError` (`allocation_error`). So native code raises `MemoryError` where NumPy does:
when the C allocator refuses a request (under Linux's default overcommit heuristic, one
larger than the memory and swap there are) or its size overflows.

A function may pair results with inputs (`aliases`, from the `ag.inplace_results` of the
`inplace-update` pass): result `r` may then be computed in input `a`'s own buffer. The
caller passes `a`'s array as `r`'s buffer (and returns it as the result) when it is a
C-contiguous, writable array of `r`'s shape that shares no memory with another input;
otherwise a fresh buffer, as for any result.

Code that calls back into Python (`ag.print`, see `arignote.runtime.printing`, and
`ag.python_op`, see `arignote.runtime.pyops`) runs on to
its end even when a callback raises; the call then raises that exception and its
results are dropped. Such a function never computes a result in an input's buffer and
has no CPython entry point (every call comes through `NativeFunction.__call__`, which
raises the exception): a call that raises leaves its inputs, and so the shared
variables, unchanged.
"""

from __future__ import annotations

import ctypes
import math
import struct
import sys
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np
from numpy.typing import DTypeLike
from xdsl.dialects.builtin import ModuleOp, TensorType

from arignote.runtime.cpu import NativeModule, as_native_array, data_pointer
from arignote.runtime.dtypes import IndexOutOfBoundsError, numpy_dtype
from arignote.runtime.entry import (
    ALLOCATION_FAILED,
    ALLOCATION_TOO_LARGE,
    COUNTER_SUFFIX,
    ENTRY_SUFFIX,
    FastEntry,
    arg_spec,
    entry_ir,
    kept_symbols,
    register_symbols,
)
from arignote.runtime.printing import clear_pending, raise_pending
from arignote.runtime.pyops import clear as clear_pyop_outputs

SHAPE_SUFFIX = "__shape"
CHECKS_ATTRIBUTE = "ag.checks"


@dataclass(frozen=True)
class TensorSpec:
    """The element dtype and rank of one input or output."""

    dtype: np.dtype
    rank: int


SpecLike = TensorSpec | TensorType | tuple[DTypeLike, int]
"""A `TensorSpec`, an `ag` tensor type, or a `(dtype, rank)` pair."""


def _spec(spec: SpecLike) -> TensorSpec:
    if isinstance(spec, TensorSpec):
        return spec
    if isinstance(spec, TensorType):
        return TensorSpec(numpy_dtype(spec.element_type), spec.get_num_dims())
    dtype, rank = spec
    return TensorSpec(np.dtype(dtype), rank)


def check_messages(module: object, name: str) -> list[str]:
    """The `ag.checks` messages of `@name__shape` in an xDSL module (before or after
    lowering to `llvm`, if the attribute survived)."""
    from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr
    from xdsl.traits import SymbolTable

    assert isinstance(module, ModuleOp)
    shape_fn = SymbolTable.lookup_symbol(module, name + SHAPE_SUFFIX)
    if shape_fn is None:
        raise KeyError(f"no function @{name}{SHAPE_SUFFIX} in the module")
    checks = shape_fn.attributes.get(CHECKS_ATTRIBUTE)
    if not isinstance(checks, ArrayAttr):
        return []
    return [m.data for m in checks.data if isinstance(m, StringAttr)]


class NativeFunction:
    """A JIT-compiled tensor function, called on NumPy arrays.

    `inputs` and `outputs` give each tensor's dtype and rank (as `TensorSpec`s, `ag`
    tensor types or `(dtype, rank)` pairs); `messages` are the shape function's
    `ag.checks`. Inputs are assumed to have been validated (dtype, rank, static-1
    dimensions) by the caller; any strides are accepted.

    Calls reuse preallocated descriptor memory; a call made while another is running
    (from another thread, or re-entrantly) uses its own, so calls are thread-safe.
    A function keeps the results of its last two calls and writes the next call's
    results into them when the caller has dropped them (`release_kept` frees them).
    """

    def __init__(
        self,
        module: NativeModule,
        name: str,
        inputs: Sequence[SpecLike],
        outputs: Sequence[SpecLike],
        messages: Sequence[str],
        aliases: Mapping[int, int] | None = None,
        calls_back: bool = False,
    ):
        self.name = name
        self.inputs = [_spec(s) for s in inputs]
        self.outputs = [_spec(s) for s in outputs]
        self.messages = list(messages)
        self.calls_back = calls_back
        """Whether the code calls back into Python (prints): then a call raises what a
        callback raised, and no result is computed in an input's buffer (module doc)."""
        self.aliases: dict[int, int] = {} if calls_back else dict(aliases or {})
        """Result index → the input whose buffer it may be computed in (module doc)."""
        self._module = module  # keeps the JIT-ed code alive
        self._shape_fn, self._compute_fn = abi_functions(module, name, inputs, outputs)
        self._lock = threading.Lock()
        self._frame = _Frame(self)
        self.fast_entry: FastEntry | None = None
        """The module's CPython entry point `@name__entry`, when it has one (see
        `arignote.runtime.entry`; `compile_function` adds it unless the code calls
        back)."""
        self._kept: list[list[np.ndarray | None]] = [[None, None] for _ in self.outputs]
        """Per output, the results of the last two calls made with `_frame` (the last
        first), reused by the next one when nothing else holds them (as the entry point
        does, see `arignote.runtime.entry`)."""
        try:
            entry, counter = module.address(name + ENTRY_SUFFIX), name + COUNTER_SUFFIX
            kept = [
                module.global_address(symbol)
                for j in range(len(outputs))
                for symbol in kept_symbols(name, j)
            ]
            self.fast_entry = FastEntry(name, entry, module.global_address(counter), module, kept)
        except KeyError:
            pass

    def release_kept(self) -> None:
        """Drop the results kept for reuse by the next call (of both call paths)."""
        with self._lock:
            self._kept = [[None, None] for _ in self.outputs]
        if self.fast_entry is not None:
            self.fast_entry.release_kept()

    @property
    def native_module(self) -> NativeModule:
        """The JIT-compiled module holding the code (and any globals it defines)."""
        return self._module

    def __call__(self, *arrays: np.ndarray) -> list[np.ndarray]:
        if len(arrays) != len(self.inputs):
            raise TypeError(f"{self.name} takes {len(self.inputs)} arrays, got {len(arrays)}")
        # The preallocated frame, unless another thread (or a re-entrant call) is using
        # it: then a fresh one for this call.
        frame = self._frame if self._lock.acquire(False) else None
        if self.calls_back:
            clear_pending()
            clear_pyop_outputs()
        try:
            results = self._call(frame if frame is not None else _Frame(self), arrays)
        except Exception:
            # A custom op that raised wrote zero dimensions, which a later shape check
            # may reject: the op's own exception is the one to report.
            if self.calls_back:
                raise_pending()
            raise
        finally:
            if frame is not None:
                self._lock.release()
        if self.calls_back:
            raise_pending()  # what a print callback raised during the call, if anything
        return results

    def _call(self, frame: _Frame, arrays: tuple[np.ndarray, ...]) -> list[np.ndarray]:
        values: list[int] = []
        natives = []  # keeps converted copies alive until the calls return
        for spec, array in zip(self.inputs, arrays, strict=True):
            array = _native(array)
            if array.ndim != spec.rank:
                raise TypeError(
                    f"{self.name}: expected an array of rank {spec.rank}, got shape {array.shape}"
                )
            natives.append(array)
            _descriptor_values(values, array)
        frame.inputs.pack_into(frame.buffer, 0, *values)
        code = self._shape_fn(*frame.shape_args)
        if code != 0:
            self._raise_check(code, frame.buffer, frame.err_offset)
        dims = frame.dims.unpack_from(frame.buffer, frame.dims_offset)
        reuse = frame is self._frame  # the lock is held: the kept arrays are this call's
        results = self._results(dims, natives, arrays, reuse)
        values = []
        for result in results:
            _descriptor_values(values, result)
        if values:
            frame.outputs.pack_into(frame.buffer, frame.outputs_offset, *values)
        status = self._compute_fn(*frame.compute_args)
        if status:
            raise allocation_error(self.name, status, 64)
        del natives
        if reuse:
            for slots, result in zip(self._kept, results, strict=True):
                slots[:] = result, slots[0]
        return results

    def _results(
        self,
        dims: Sequence[int],
        natives: Sequence[np.ndarray],
        arrays: Sequence[object],
        reuse: bool,
    ) -> list[np.ndarray]:
        """The buffers of the results of the dimensions `dims`: a donor input's own
        array, a kept one (when `reuse`), else a new one."""
        results, offset = [], 0
        for j, spec in enumerate(self.outputs):
            shape = tuple(dims[offset : offset + spec.rank])
            offset += spec.rank
            donor = self.aliases.get(j)
            if donor is not None and _may_donate(natives, arrays, donor, shape):
                results.append(natives[donor])
                continue
            result = self._take_kept(j, shape) if reuse else None
            results.append(_empty(self.name, shape, spec.dtype) if result is None else result)
        return results

    def _take_kept(self, j: int, shape: tuple[int, ...]) -> np.ndarray | None:
        """A kept array of output `j` (the last first) that nothing else references and
        that can hold a result of `shape` (see `arignote.runtime.entry`, "Output
        reuse"), taken out of its slot; else None."""
        slots = self._kept[j]
        for k in range(2):
            kept = slots[k]
            # only the slot, `kept` and getrefcount's argument refer to it: the caller
            # dropped it, and no view (its base), memoryview or ctypes object holds it
            if kept is not None and sys.getrefcount(kept) == 3 and self._fits(j, kept, shape):
                slots[k] = None
                return kept
        return None

    def _fits(self, j: int, kept: np.ndarray, shape: tuple[int, ...]) -> bool:
        flags = kept.flags
        return (
            kept.shape == shape
            and kept.base is None
            and flags.owndata
            and flags.c_contiguous
            and flags.writeable
            and flags.aligned
            and kept.dtype == self.outputs[j].dtype
            and not weakref.getweakrefcount(kept)
        )

    def _raise_check(self, code: int, buffer: ctypes.Array, err_offset: int) -> NoReturn:
        """The ValueError (or IndexOutOfBoundsError) of failed shape check `code`."""
        if code < 0:
            raise allocation_error(self.name, code, 32)
        if not 1 <= code <= len(self.messages):
            raise ValueError(f"{self.name}: shape check {code} failed")
        template = self.messages[code - 1]
        values = struct.unpack_from(f"={message_arity(template)}q", buffer, err_offset + _WORD)
        message = template % values
        if "is out of bounds for axis" in message:
            raise IndexOutOfBoundsError(message)
        raise ValueError(message)


def abi_functions(
    module: NativeModule, name: str, inputs: Sequence[Any], outputs: Sequence[Any]
) -> tuple[Any, Any]:
    """`@name__shape` and `@name` of `module` (the native ABI, see the module doc) as
    ctypes functions taking descriptor addresses: the shape function's (inputs, dims,
    err) → `i32` status, the compute function's (inputs, outputs) → `i64` status."""
    pointers = [ctypes.c_void_p] * len(inputs)
    shape_type = ctypes.CFUNCTYPE(ctypes.c_int32, *pointers, ctypes.c_void_p, ctypes.c_void_p)
    compute_type = ctypes.CFUNCTYPE(ctypes.c_int64, *pointers, *[ctypes.c_void_p] * len(outputs))
    return shape_type(module.address(name + SHAPE_SUFFIX)), compute_type(module.address(name))


def allocation_error(name: str, status: int, bits: int) -> MemoryError:
    """The `MemoryError` of a negative `bits`-bit status of `@name` or `@name__shape`:
    `-status` bytes could not be allocated (see `arignote.lowering.llvm.checked_alloc`)."""
    limit = 2 ** (bits - 1)
    if status == -limit:
        return MemoryError(ALLOCATION_TOO_LARGE.format(name=name, limit=limit))
    return MemoryError(ALLOCATION_FAILED.format(name=name, bytes=-status))


def _empty(name: str, shape: Sequence[int], dtype: np.dtype) -> np.ndarray:
    """`np.empty(shape, dtype)` for a result of `@name`; `MemoryError` also when its
    byte size overflows (where NumPy raises `ValueError`)."""
    size = math.prod(shape) * dtype.itemsize
    if size > sys.maxsize:
        raise MemoryError(
            f"{name}: out of memory: a result of shape {tuple(shape)} and dtype {dtype} "
            f"needs {size} bytes, more than a process can address"
        )
    return np.empty(shape, dtype)


def compile_function(
    module: ModuleOp | Callable[[Callable[[], Sequence[str]]], NativeModule],
    name: str,
    inputs: Sequence[TensorType],
    outputs: Sequence[TensorType],
    messages: Sequence[str],
    aliases: Mapping[int, int] | None = None,
    glue_o0_minsize: int | None = None,
    kernel_cache: str | None = None,
) -> NativeFunction:
    """Compile the `llvm`-dialect `module` holding `@name` and `@name__shape` (lowered
    from a function of tensors of types `inputs` -> `outputs`) with a CPython entry
    point `@name__entry` (when this process supports one), and wrap it. `aliases`:
    result index → the input whose buffer it may be computed in (module doc).
    `glue_o0_minsize`: the glue size from which it is compiled apart, unoptimised
    (`arignote.runtime.cpu.split_ir_texts`; None: `SPLIT_GLUE_INSTRUCTIONS`).
    `kernel_cache`: the directory of the kernel cache (`arignote.runtime.kernelcache`;
    None: none). `module` may also be a function that compiles the code with the entry
    points' IR texts that the function it is given makes (a function compiled in parts,
    which never calls back: `calls_back`; it makes them once its other process is at
    work)."""
    calls_back = _calls_back(module) if isinstance(module, ModuleOp) else False
    aliases = {} if calls_back else dict(aliases or {})

    def entries() -> list[str]:
        if not register_symbols() or calls_back:
            return []
        specs = [arg_spec(numpy_dtype(t.element_type), t.get_shape()) for t in inputs]
        results = [
            arg_spec(numpy_dtype(t.element_type), t.get_shape(), aliases.get(j))
            for j, t in enumerate(outputs)
        ]
        return [entry_ir(name, specs, results, err_length(messages))]

    if isinstance(module, ModuleOp):
        native = NativeModule(module, entries(), glue_o0_minsize, kernel_cache)
    else:
        native = module(entries)
    return NativeFunction(native, name, inputs, outputs, messages, aliases, calls_back)


def _calls_back(module: ModuleOp) -> bool:
    """Whether the `llvm`-dialect `module` declares a print or custom-op callback or the
    LAPACK or MPI error callback (module doc)."""
    from xdsl.dialects import llvm

    return calls_back([op.sym_name.data for op in module.ops if isinstance(op, llvm.FuncOp)])


def calls_back(names: Iterable[str]) -> bool:
    """Whether a module whose functions are `names` (declared or defined) calls back
    into Python: a print or custom-op callback, or the LAPACK or MPI error callback."""
    from arignote.runtime.lapack import SYMBOL as LAPACK_SYMBOL
    from arignote.runtime.mpi import SYMBOL as MPI_SYMBOL
    from arignote.runtime.printing import SYMBOL_PREFIX
    from arignote.runtime.pyops import SYMBOL_PREFIX as PYOP_PREFIX

    return any(
        name.startswith((SYMBOL_PREFIX, PYOP_PREFIX)) or name in (LAPACK_SYMBOL, MPI_SYMBOL)
        for name in names
    )


_WORD = 8  # every descriptor field is a pointer or an int64


def message_arity(message: str) -> int:
    """How many values a check message takes (its `%d`s; `%%` is a literal `%`), as
    `arignote.lowering.loops.ag_shapes.message_arity` counts them."""
    return message.replace("%%", "").count("%")


def err_length(messages: Sequence[str]) -> int:
    """The length of the `err` vector for checks with these messages: the check's id and
    the most values a message takes (at least 3 words, as before values were counted)."""
    return max([3, *(1 + message_arity(m) for m in messages)])


def _descriptor_format(rank: int) -> str:
    return "QQq" + "q" * (2 * rank)


class _Frame:
    """The memory of one call of a `NativeFunction`: one int64 buffer holding the input
    and output memref descriptors, the descriptors of the `dims` and `err` vectors of
    the shape function, and those vectors; the argument addresses are computed once.

    A `NativeFunction` reuses one frame for its calls, and makes a fresh one for a call
    made while that one is in use (another thread, or a re-entrant call)."""

    def __init__(self, fn: NativeFunction):
        in_words = [3 + 2 * s.rank for s in fn.inputs]
        out_words = [3 + 2 * s.rank for s in fn.outputs]
        n_dims = max(1, sum(s.rank for s in fn.outputs))
        self.outputs_offset = _WORD * sum(in_words)
        dims_desc = self.outputs_offset + _WORD * sum(out_words)
        err_desc = dims_desc + _WORD * 5
        self.dims_offset = err_desc + _WORD * 5
        self.err_offset = self.dims_offset + _WORD * n_dims
        n_err = err_length(fn.messages)
        self.buffer = (ctypes.c_int64 * (self.err_offset // _WORD + n_err))()
        base = ctypes.addressof(self.buffer)
        struct.pack_into(
            "=QQqqq", self.buffer, dims_desc, *[base + self.dims_offset] * 2, 0, n_dims, 1
        )
        struct.pack_into(
            "=QQqqq", self.buffer, err_desc, *[base + self.err_offset] * 2, 0, n_err, 1
        )
        self.inputs = struct.Struct("=" + "".join(_descriptor_format(s.rank) for s in fn.inputs))
        self.outputs = struct.Struct("=" + "".join(_descriptor_format(s.rank) for s in fn.outputs))
        self.dims = struct.Struct(f"={n_dims}q")
        in_addresses = list(base + _WORD * n for n in _starts(in_words))
        out_addresses = list(base + self.outputs_offset + _WORD * n for n in _starts(out_words))
        self.shape_args = (*in_addresses, base + dims_desc, base + err_desc)
        self.compute_args = (*in_addresses, *out_addresses)


def _may_donate(
    natives: Sequence[np.ndarray], arrays: Sequence[object], donor: int, shape: Sequence[int]
) -> bool:
    """Whether input `donor` may serve as the buffer of a result of `shape`: the caller's
    own array (not a converted copy), C-contiguous, writable, of that shape, sharing no
    memory with another input."""
    array = natives[donor]
    if array is not arrays[donor] or array.shape != tuple(shape):
        return False
    if not (array.flags.c_contiguous and array.flags.writeable):
        return False
    return not any(
        i != donor and np.may_share_memory(array, other) for i, other in enumerate(natives)
    )


def _starts(sizes: Sequence[int]) -> list[int]:
    starts, total = [], 0
    for size in sizes:
        starts.append(total)
        total += size
    return starts


def _native(array: object) -> np.ndarray:
    """`array` itself when it is a native-order ndarray whose strides are whole elements;
    else `as_native_array(array)`."""
    if type(array) is np.ndarray and array.dtype.isnative:
        itemsize = array.itemsize
        for stride in array.strides:
            if stride % itemsize:
                return as_native_array(array)
        return array
    return as_native_array(array)


def _descriptor_values(values: list[int], array: np.ndarray) -> None:
    """Appends the memref descriptor fields of `array` (see `memref_descriptor`)."""
    pointer = data_pointer(array)
    itemsize = array.itemsize
    values += (pointer, pointer, 0)
    values += array.shape
    values += [stride // itemsize for stride in array.strides]
