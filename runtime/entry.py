"""The fast call path: a CPython entry point, generated in LLVM IR, for a native function.

For a function `@f` with the native ABI of `arignote.runtime.native` (`f__shape` checks the
input shapes and gives the result shapes, `f` computes into caller-allocated buffers),
`entry_ir(...)` builds `@f__entry`, a `METH_FASTCALL` C function

    PyObject *f__entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs)

that does in machine code what `NativeFunction.__call__` does in Python:

1. checks each argument: exactly a `numpy.ndarray` (the type object's address), of the
   expected rank, element type (`descr->type_num`, in the host's byte order), with length 1
   on the input's broadcastable axes, strides that are whole elements and an aligned data
   pointer; reads the data pointer, dimensions and strides from the `PyArrayObject`;
2. fills the memref descriptors (on its own stack: calls are thread-safe), calls
   `f__shape`;
3. allocates the outputs with numpy's `PyArray_New` (from the `_ARRAY_API` capsule) --
   except an output computed in an input's buffer (`ArgSpec.donor`, see
   `arignote.runtime.native`), which is that input itself (a new reference) when it is
   C-contiguous, writable, of the output's shape and overlaps no other input's memory,
   and an output for which an array it returned at one of the two previous calls can be
   written again (see "Output reuse" below) --, calls `f` (releasing the GIL when the
   arrays are large), and
4. returns the single result, or a new list of the results; or, when `f` returned a
   negative status (a buffer it could not allocate, see `arignote.runtime.native`),
   releases the outputs and raises `MemoryError` (`ALLOCATION_FAILED`, through
   `PyErr_Format`: the message of the Python path).

The entry point is compiled without optimisation (`ENTRY_ATTRIBUTES`): tens of
milliseconds less in every cold compile, a few nanoseconds more per call.

Output reuse: `@f__kept<j>` and `@f__kept<j>_older` (globals `PyObject *`, NULL at first)
hold references to the arrays the entry point returned for output `j` at its last two
calls. A call takes one of them (the last first) instead of allocating when its reference
count is 1 (only the global holds it: the caller dropped it and no view, memoryview or
weak reference of it exists), it owns its data, is C-contiguous, aligned and writeable,
and has the output's element type, rank and new dimensions. Two are kept so that a loop
`r = f(x)`, which still holds the last result while the next call runs, reuses the one
before; a caller that drops each result reuses one buffer. A result the caller still
holds (or anything derived from it) is never overwritten, so reuse cannot be observed
except through the data pointer; it saves allocating and page-faulting a fresh buffer at
every call (large outputs are `mmap`-ed by malloc and unmapped when freed).
`release_kept(addresses)` drops the references (`NativeFunction.release_kept`, at
`Function.free()` and when the module is freed).

The code of one input (its checks and its memref descriptor) and of one output (its
donor, kept or new array) is an internal helper written once per kind of argument
(`@f__entry_read<k>`, `@f__entry_out<k>`, `@f__entry_fill`, `@f__entry_keep`,
`@f__entry_extent`) and called per argument: the entry point grows by a few calls per
argument, not by its checks (a 64-layer MLP's training step, 130 inputs and 129 outputs:
4,700 lines of IR built in 65 ms, against 31,700 lines in 330 ms written out per
argument).

When anything is unusual (a wrong argument count, a non-array, another dtype or rank, a
failed shape check, an output `PyArray_New` cannot allocate), it returns `None` (a new
reference) and touches nothing: the caller then takes the Python path, which converts
the arguments or raises the detailed error (a `MemoryError` for an output, also one
whose size overflows, where numpy raises `ValueError`).

The entry point reaches CPython and numpy only through external symbols named
`arignote_*` (`register_symbols()` binds them to this process's addresses with
`llvmlite.binding.add_symbol`), so its object code holds no process-specific address
and can be cached on disk. The struct offsets it reads are those of numpy's public
headers; `LAYOUT` checks them against live arrays at import and is None where they do
not hold (another Python implementation or numpy layout): there is no fast path then.

`FastEntry(address, owner)` wraps the entry as a Python callable (a `PyMethodDef` and
`PyCFunction_NewEx`); `owner` (the JIT module) stays alive as the function's `self`, and
the method definition lives in `bytes` objects that the callable itself holds
(`method_definition`).
"""

from __future__ import annotations

import ctypes
import sys
import weakref
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache

import llvmlite.ir as ir
import numpy as np

ENTRY_SUFFIX = "__entry"
"""`@f__entry` is the CPython entry point of `@f`."""

COUNTER_SUFFIX = "__fast_calls"
"""`@f__fast_calls` (an i64 global) counts the calls `@f__entry` completed."""

KEPT_SUFFIX = "__kept"
"""`@f__kept<j>` and `@f__kept<j>_older` (`PyObject *` globals) are the arrays
`@f__entry` returned for output `j` at its last call and at the call before, reused by
the next call when nothing else holds them."""


def kept_symbols(name: str, j: int) -> tuple[str, str]:
    """The globals keeping output `j` of `@name__entry`: the last array, the older one."""
    return f"{name}{KEPT_SUFFIX}{j}", f"{name}{KEPT_SUFFIX}{j}_older"


NPY_ARRAY_C_CONTIGUOUS = 0x0001
NPY_ARRAY_OWNDATA = 0x0004
NPY_ARRAY_ALIGNED = 0x0100
NPY_ARRAY_WRITEABLE = 0x0400
REUSABLE_FLAGS = (
    NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_OWNDATA | NPY_ARRAY_ALIGNED | NPY_ARRAY_WRITEABLE
)
"""The array flags a kept output must have to be written again."""

ALLOCATION_FAILED = (
    "{name}: out of memory: the native code could not allocate {bytes} bytes for a temporary buffer"
)
"""The `MemoryError` message of a native allocation of `bytes` bytes that `malloc`
refused (`@f` returned `-bytes`; see `arignote.runtime.native`)."""

ALLOCATION_TOO_LARGE = (
    "{name}: out of memory: the native code could not allocate a temporary buffer of at "
    "least {limit} bytes"
)
"""The message of a native allocation whose size does not fit the status (`@f`'s: 2**63
bytes or more, the sizes that overflow 64-bit arithmetic included; `@f__shape`'s: 2**31
bytes or more)."""


def _c_format(template: str, **fields: str) -> str:
    """`template` as a `PyErr_Format` format: its `%` escaped, `fields` filled in."""
    return template.replace("%", "%%").format(**fields)


GIL_RELEASE_ELEMENTS = 1 << 16
"""The entry point releases the GIL around the computation when its inputs and outputs
hold at least this many elements together (below, the release costs more than it frees)."""

METH_FASTCALL = 0x0080

OUTLINE_FROM = 8
"""The inputs and outputs from which the entry point calls a helper per argument instead
of writing each one's code out (see the module doc): a helper call costs a few
nanoseconds per argument at each call, which a function of a few small arrays notices
(`x + 1` on 10 floats, one input and one output: 169 -> 176 ns per call), and saves
its checks' code (about 240 instructions per argument) in each compile."""

ENTRY_ATTRIBUTES: tuple[str, ...] = ("noinline", "optnone")
"""The entry point's function attributes. `optnone` (which needs `noinline`) keeps the
O3 pipeline away from it and compiles it with fast instruction selection: it is
straight-line code (checks, calls, stores), which optimisation makes barely faster, while
its size grows with the arguments (the logreg step's: 950 lines of IR). On that step the
entry point's share of a cold compile (its IR built, parsed and linked, O3, code
generation) fell from 55 to 21 ms, for about 3 ns more per call with one input and one
output, 20–40 ns with its four and four (docs/benchmarks.md, compile time)."""

_PTR = ir.PointerType()
_I8 = ir.IntType(8)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)


# --- the layout of numpy's structs, checked against live arrays ----------------------------


@dataclass(frozen=True)
class Layout:
    """Byte offsets in `PyObject`, `PyArrayObject` and `PyArray_Descr`."""

    ob_refcnt: int = 0
    ob_type: int = 8
    data: int = 16
    nd: int = 24
    dimensions: int = 32
    strides: int = 40
    base: int = 48
    descr: int = 56
    flags: int = 64
    weakreflist: int = 72
    descr_byteorder: int = 26
    descr_type_num: int = 28


def _read(address: int, ctype: type) -> int:
    return ctype.from_address(address).value or 0


def _layout_holds(layout: Layout, array: np.ndarray) -> bool:
    base = id(array)
    ptr, i32, i64 = ctypes.c_void_p, ctypes.c_int32, ctypes.c_int64
    descr = _read(base + layout.descr, ptr)
    dims = _read(base + layout.dimensions, ptr)
    strides = _read(base + layout.strides, ptr)
    return (
        _read(base + layout.ob_type, ptr) == id(type(array))
        and _read(base + layout.data, ptr) == array.ctypes.data
        and _read(base + layout.nd, i32) == array.ndim
        and descr == id(array.dtype)
        and _read(base + layout.flags, i32) == array.flags.num
        and _read(descr + layout.descr_type_num, i32) == array.dtype.num
        and bytes([_read(descr + layout.descr_byteorder, ctypes.c_uint8)]).decode()
        == array.dtype.byteorder
        and all(_read(dims + 8 * k, i64) == n for k, n in enumerate(array.shape))
        and all(_read(strides + 8 * k, i64) == s for k, s in enumerate(array.strides))
        and _read(base + layout.base, ptr) == (0 if array.base is None else id(array.base))
        and _read(base + layout.flags, i32) == array.flags.num
        # (getrefcount counts its own argument too)
        and _read(base + layout.ob_refcnt, i64) == sys.getrefcount(array) - 1
    )


def _weakrefs_found(layout: Layout) -> bool:
    """`weakreflist` is NULL for an array without weak references, set with one."""
    probe = np.zeros(3)
    before = _read(id(probe) + layout.weakreflist, ctypes.c_void_p)
    ref = weakref.ref(probe)
    after = _read(id(probe) + layout.weakreflist, ctypes.c_void_p)
    return before == 0 and after != 0 and ref() is probe


def _layout() -> Layout | None:
    if sys.implementation.name != "cpython" or ctypes.sizeof(ctypes.c_void_p) != 8:
        return None
    layout = Layout()
    probes = [
        np.arange(6.0).reshape(2, 3),
        np.zeros((3, 4, 2), np.int8)[::-1, 1:, :1],
        np.arange(5, dtype=">i4")[::2],
        np.zeros((), bool),
    ]
    probes.append(probes[0][1:])  # a view: base set, OWNDATA clear
    holds = all(_layout_holds(layout, p) for p in probes) and _weakrefs_found(layout)
    return layout if holds else None


LAYOUT: Layout | None = _layout()
"""The verified layout, or None: no fast path in this process."""


# --- the process's CPython and numpy symbols ----------------------------------------------


def _pyapi(name: str) -> int:
    return ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value or 0


def _numpy_api() -> ctypes.Array:
    from numpy._core import _multiarray_umath

    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return (ctypes.c_void_p * 200).from_address(get(_multiarray_umath._ARRAY_API, None))


_PYARRAY_TYPE_INDEX = 2
_PYARRAY_NEW_INDEX = 93

_PyArrayNew = ctypes.PYFUNCTYPE(  # holds the GIL
    ctypes.py_object,
    ctypes.c_void_p,
    ctypes.c_int,
    ctypes.c_void_p,
    ctypes.c_int,
    ctypes.c_void_p,
    ctypes.c_void_p,
    ctypes.c_int,
    ctypes.c_int,
    ctypes.c_void_p,
)


def _check_pyarray_new(table: ctypes.Array) -> None:
    """`PyArray_New` at its index of the table makes a C-contiguous array (or raise)."""
    if table[_PYARRAY_TYPE_INDEX] != id(np.ndarray):
        raise RuntimeError("numpy's _ARRAY_API table does not start as expected")
    dims = (ctypes.c_int64 * 2)(2, 3)
    new = _PyArrayNew(table[_PYARRAY_NEW_INDEX])
    float32 = np.dtype(np.float32).num
    made = new(id(np.ndarray), 2, ctypes.addressof(dims), float32, None, None, 0, 0, None)
    if not (
        type(made) is np.ndarray
        and made.shape == (2, 3)
        and made.dtype == np.float32
        and made.flags.c_contiguous
    ):
        raise RuntimeError("numpy's PyArray_New is not at the expected index")


@cache
def process_symbols() -> dict[str, int]:
    """The addresses of the `arignote_*` symbols that entry points use."""
    table = _numpy_api()
    _check_pyarray_new(table)
    return {
        "arignote_Py_None": id(None),
        "arignote_PyArray_Type": id(np.ndarray),
        "arignote_PyArray_New": table[_PYARRAY_NEW_INDEX],
        "arignote_Py_IncRef": _pyapi("Py_IncRef"),
        "arignote_Py_DecRef": _pyapi("Py_DecRef"),
        "arignote_PyList_New": _pyapi("PyList_New"),
        "arignote_PyList_SetItem": _pyapi("PyList_SetItem"),
        "arignote_PyEval_SaveThread": _pyapi("PyEval_SaveThread"),
        "arignote_PyEval_RestoreThread": _pyapi("PyEval_RestoreThread"),
        "arignote_PyErr_Clear": _pyapi("PyErr_Clear"),
        "arignote_PyErr_Format": _pyapi("PyErr_Format"),
        "arignote_PyExc_MemoryError": id(MemoryError),
    }


@cache
def register_symbols() -> bool:
    """Bind the `arignote_*` symbols for the JIT once; False when there is no fast path."""
    if LAYOUT is None:
        return False
    import llvmlite.binding as llvm

    try:
        symbols = process_symbols()
    except (RuntimeError, AttributeError, ImportError):
        return False
    for name, address in symbols.items():
        llvm.add_symbol(name, address)
    return True


# --- the entry point in LLVM IR ------------------------------------------------------------


@dataclass(frozen=True)
class ArgSpec:
    """What the entry point checks of one input or allocates for one output."""

    type_nums: tuple[int, ...]
    """Accepted `descr->type_num` values (the first is the one outputs get)."""
    itemsize: int
    alignment: int
    rank: int
    static: tuple[tuple[int, int], ...] = ()
    """`(axis, length)` of the axes whose length is fixed (inputs only), e.g. the
    broadcastable axes (length 1)."""
    donor: int | None = None
    """(Outputs only) the input whose array may be this output's buffer."""


def arg_spec(dtype: np.dtype, shape: Sequence[int], donor: int | None = None) -> ArgSpec:
    """The `ArgSpec` of arrays of `dtype` and `shape` (-1 for an axis of any length):
    every numpy type number whose dtype equals `dtype` (e.g. both of int64's) is accepted.
    `donor`: for an output, the input whose buffer it may be computed in."""
    dtype = np.dtype(dtype)
    nums = [dtype.num] + sorted(
        {np.dtype(c).num for c in np.typecodes["All"] if np.dtype(c) == dtype} - {dtype.num}
    )
    static = tuple((k, n) for k, n in enumerate(shape) if n >= 0)
    return ArgSpec(tuple(nums), dtype.itemsize, dtype.alignment, len(shape), static, donor)


class _EntryBuilder:
    """Builds `@name__entry` into an `ir.Module` (see the module docstring)."""

    def __init__(
        self, name: str, inputs: Sequence[ArgSpec], outputs: Sequence[ArgSpec], err_words: int
    ):
        self.name, self.inputs, self.outputs = name, list(inputs), list(outputs)
        self.err_words = err_words
        self.layout = LAYOUT or Layout()
        self.module = ir.Module(name=name + ENTRY_SUFFIX)
        self.module.triple = ""
        m = self.module
        fn = ir.FunctionType

        def declare(sym: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
            return ir.Function(m, fn(ret, args), sym)

        self.incref = declare("arignote_Py_IncRef", ir.VoidType(), [_PTR])
        self.decref = declare("arignote_Py_DecRef", ir.VoidType(), [_PTR])
        self.list_new = declare("arignote_PyList_New", _PTR, [_I64])
        self.list_set = declare("arignote_PyList_SetItem", _I32, [_PTR, _I64, _PTR])
        self.save_thread = declare("arignote_PyEval_SaveThread", _PTR, [])
        self.restore_thread = declare("arignote_PyEval_RestoreThread", ir.VoidType(), [_PTR])
        self.err_clear = declare("arignote_PyErr_Clear", ir.VoidType(), [])
        err_format = fn(_PTR, [_PTR, _PTR], var_arg=True)
        self.err_format = ir.Function(m, err_format, "arignote_PyErr_Format")
        self.memory_error = ir.GlobalVariable(m, _I8, "arignote_PyExc_MemoryError")
        self.array_new = declare(
            "arignote_PyArray_New", _PTR, [_PTR, _I32, _PTR, _I32, _PTR, _PTR, _I32, _I32, _PTR]
        )
        self.none = ir.GlobalVariable(m, _I8, "arignote_Py_None")
        self.array_type = ir.GlobalVariable(m, _I8, "arignote_PyArray_Type")
        n_in, n_out = len(self.inputs), len(self.outputs)
        self.shape_fn = declare(name + "__shape", _I32, [_PTR] * (n_in + 2))
        self.compute_fn = declare(name, _I64, [_PTR] * (n_in + n_out))
        self.counter = ir.GlobalVariable(m, _I64, name + COUNTER_SUFFIX)
        self.counter.initializer = ir.Constant(_I64, 0)
        self.kept: list[tuple[ir.GlobalVariable, ir.GlobalVariable]] = []
        for j in range(n_out):
            pair = []
            for symbol in kept_symbols(name, j):
                slot = ir.GlobalVariable(m, _PTR, symbol)
                slot.initializer = ir.Constant(_PTR, None)
                pair.append(slot)
            self.kept.append((pair[0], pair[1]))
        self.entry = ir.Function(m, fn(_PTR, [_PTR, _PTR, _I64]), name + ENTRY_SUFFIX)
        for attribute in ENTRY_ATTRIBUTES:
            self.entry.attributes.add(attribute)
        self.entry.args[0].name, self.entry.args[1].name = "self", "args"
        self.entry.args[2].name = "nargs"
        self.b = ir.IRBuilder(self.entry.append_basic_block("entry"))
        self.fn = self.entry
        """The function being built: the entry point, or one of its helpers."""
        self.read: list[tuple[ir.Value, ir.Value]] = []
        """Per input read so far: its object and its memref descriptor."""
        self.fallback = self.entry.append_basic_block("fallback")
        self._helpers: dict[Hashable, ir.Function] = {}
        self.outline = n_in + n_out >= OUTLINE_FROM
        """Whether each argument's code is a call of a helper (see the module doc)."""
        self.count = self.words(1, "count") if self.outline else None
        """Where `@name__entry_read<k>` stores an input's element count (outlining)."""
        self.extents: ir.Value | None = None
        """The stack table of each input's byte extent `[lo, hi)` (`input_extents`)."""
        self.made = self.words(max(1, n_out), "made")
        """The outputs made so far, released on a failure path (`release_made`)."""
        self._release: ir.Function | None = None
        self._overlaps: ir.Function | None = None

    # small helpers: every address is an opaque `ptr` plus a byte offset

    def at(self, base: ir.Value, offset: int | ir.Value) -> ir.Value:
        if isinstance(offset, int):
            if offset == 0:
                return base
            offset = ir.Constant(_I64, offset)
        return self.b.gep(base, [offset], source_etype=_I8)

    def field(self, base: ir.Value, offset: int, ty: ir.Type, name: str = "") -> ir.Value:
        return self.b.load(self.at(base, offset), name=name, typ=ty)

    def put(self, value: ir.Value, base: ir.Value, offset: int) -> None:
        self.b.store(value, self.at(base, offset))

    def words(self, n: int, name: str) -> ir.Value:
        """A stack buffer of `n` 8-byte words (allocated as pointers: llvmlite gives an
        opaque `ptr`, which stores of any type accept), in the entry block: part of the
        fixed frame, not a dynamic allocation (the entry point is not optimised)."""
        block = self.b.block
        self.b.position_at_start(self.fn.entry_basic_block)
        words = self.b.alloca(_PTR, size=ir.Constant(_I64, n), name=name)
        self.b.position_at_end(block)
        return words

    def check(self, ok: ir.Value, label: str) -> None:
        """Continue in a new block when `ok`, else go to the fallback."""
        then = self.fn.append_basic_block(label)
        self.b.cbranch(ok, then, self.fallback)
        self.b.position_at_end(then)

    def any_equal(self, value: ir.Value, constants: Sequence[int], ty: ir.Type) -> ir.Value:
        result = None
        for c in constants:
            eq = self.b.icmp_signed("==", value, ir.Constant(ty, c))
            result = eq if result is None else self.b.or_(result, eq)
        assert result is not None
        return result

    # helpers: the code of one input or output, written once per kind of argument and
    # called per argument (written out per argument, the entry point of a 64-layer MLP's
    # training step, 130 inputs and 129 outputs, was 31,000 lines of IR: a third of a
    # second to build, parse and compile at each cold compile)

    def helper(
        self, key: Hashable, suffix: str, ret: ir.Type, args: list[ir.Type]
    ) -> tuple[ir.Function, bool]:
        """The internal function `@name__entry_<suffix>` made for `key`, and whether it is
        new (then its body is still to be built, with `inside`)."""
        fn = self._helpers.get(key)
        if fn is not None:
            return fn, False
        fn = ir.Function(
            self.module, ir.FunctionType(ret, args), f"{self.name}{ENTRY_SUFFIX}_{suffix}"
        )
        fn.linkage = "internal"
        for attribute in ENTRY_ATTRIBUTES:
            fn.attributes.add(attribute)
        self._helpers[key] = fn
        return fn, True

    @contextmanager
    def inside(self, fn: ir.Function, failed: ir.Value | None = None) -> Iterator[ir.IRBuilder]:
        """Build the body of the helper `fn` (its `check`s return `failed`), then go on
        where the builder was."""
        saved = self.b, self.fn, self.fallback
        self.fn = fn
        self.b = ir.IRBuilder(fn.append_basic_block("entry"))
        self.fallback = fn.append_basic_block("fallback")
        try:
            yield self.b
        finally:
            end = ir.IRBuilder(self.fallback)
            end.ret(failed) if failed is not None else end.unreachable()
            self.b, self.fn, self.fallback = saved

    # the parts of the entry point

    def build(self) -> ir.Module:
        b = self.b
        n = ir.Constant(_I64, len(self.inputs))
        self.check(b.icmp_signed("==", self.entry.args[2], n), "nargs_ok")
        descriptors, elements = [], ir.Constant(_I64, 0)
        for i, spec in enumerate(self.inputs):
            desc, count = self.read_input(i, spec)
            descriptors.append(desc)
            elements = b.add(elements, count)
        if any(spec.donor is not None for spec in self.outputs):
            self.extents = self.input_extents()
        dims = self.call_shape(descriptors)
        outputs, out_descriptors, count = self.allocate_outputs(dims)
        self.compute(descriptors + out_descriptors, b.add(elements, count), outputs)
        counted = b.add(b.load(self.counter, typ=_I64), ir.Constant(_I64, 1))
        b.store(counted, self.counter)
        for slots, obj in zip(self.kept, outputs, strict=True):
            self.keep(slots, obj)
        self.return_results(outputs)
        b.position_at_end(self.fallback)
        b.call(self.incref, [self.none])
        b.ret(self.none)
        return self.module

    def read_input(self, i: int, spec: ArgSpec) -> tuple[ir.Value, ir.Value]:
        """Check argument `i` against `spec` (`read_body`, in a helper when outlining);
        its memref descriptor and element count."""
        b = self.b
        obj = self.field(self.entry.args[1], 8 * i, _PTR, name=f"arg{i}")
        desc = self.words(3 + 2 * spec.rank, f"in{i}")
        self.read.append((obj, desc))
        if not self.outline:
            return desc, self.read_body(obj, desc, spec)
        key = ("read", spec.type_nums, spec.itemsize, spec.alignment, spec.rank, spec.static)
        fn, new = self.helper(key, f"read{len(self._helpers)}", _BOOL, [_PTR, _PTR, _PTR])
        if new:  # i1 @name__entry_read<k>(ptr %obj, ptr %desc, ptr %count): false if a check fails
            with self.inside(fn, ir.Constant(_BOOL, 0)) as hb:
                hb.store(self.read_body(fn.args[0], fn.args[1], spec), fn.args[2])
                hb.ret(ir.Constant(_BOOL, 1))
        assert self.count is not None
        self.check(b.call(fn, [obj, desc, self.count]), f"arg{i}_ok")
        return desc, b.load(self.count, typ=_I64)

    def read_body(self, obj: ir.Value, desc: ir.Value, spec: ArgSpec) -> ir.Value:
        """Check `obj` against `spec` (exactly a numpy array of the rank, element type
        and byte order, the static lengths, whole-element strides, an aligned data
        pointer; a failed check goes to the fallback), fill the memref descriptor
        `desc`; the element count."""
        b, lay = self.b, self.layout
        is_array = b.icmp_unsigned("==", self.field(obj, lay.ob_type, _PTR), self.array_type)
        self.check(is_array, "is_array")
        nd = self.field(obj, lay.nd, _I32)
        descr = self.field(obj, lay.descr, _PTR)
        type_num = self.field(descr, lay.descr_type_num, _I32)
        byteorder = self.field(descr, lay.descr_byteorder, _I8)
        foreign = ord(">" if sys.byteorder == "little" else "<")
        ok = b.and_(
            b.icmp_signed("==", nd, ir.Constant(_I32, spec.rank)),
            self.any_equal(type_num, spec.type_nums, _I32),
        )
        ok = b.and_(ok, b.icmp_signed("!=", byteorder, ir.Constant(_I8, foreign)))
        self.check(ok, "type_ok")
        data = self.field(obj, lay.data, _PTR)
        misaligned = b.and_(b.ptrtoint(data, _I64), ir.Constant(_I64, spec.alignment - 1))
        ok = b.icmp_signed("==", misaligned, ir.Constant(_I64, 0))
        dims_ptr = self.field(obj, lay.dimensions, _PTR)
        strides_ptr = self.field(obj, lay.strides, _PTR)
        self.fill_descriptor(desc, data)
        count: ir.Value = ir.Constant(_I64, 1)
        for k in range(spec.rank):
            dim = self.field(dims_ptr, 8 * k, _I64)
            stride = self.field(strides_ptr, 8 * k, _I64)
            for axis, length in spec.static:
                if axis == k:
                    ok = b.and_(ok, b.icmp_signed("==", dim, ir.Constant(_I64, length)))
            if spec.itemsize > 1:
                rest = b.and_(stride, ir.Constant(_I64, spec.itemsize - 1))
                ok = b.and_(ok, b.icmp_signed("==", rest, ir.Constant(_I64, 0)))
                stride = b.ashr(stride, ir.Constant(_I64, spec.itemsize.bit_length() - 1))
            self.put_size_stride(desc, spec.rank, k, dim, stride)
            count = b.mul(count, dim)
        self.check(ok, "layout_ok")
        return count

    def descriptor(self, rank: int, data: ir.Value, name: str) -> ir.Value:
        """A memref descriptor on the stack: `{data, data, 0, sizes[rank], strides[rank]}`
        (the sizes and strides are stored by `put_size_stride`)."""
        desc = self.words(3 + 2 * rank, name)
        self.fill_descriptor(desc, data)
        return desc

    def fill_descriptor(self, desc: ir.Value, data: ir.Value) -> None:
        """The first three words of the memref descriptor at `desc`."""
        self.put(data, desc, 0)
        self.put(data, desc, 8)
        self.put(ir.Constant(_I64, 0), desc, 16)

    def put_size_stride(
        self, desc: ir.Value, rank: int, k: int, size: ir.Value, stride: ir.Value
    ) -> None:
        self.put(size, desc, 24 + 8 * k)
        self.put(stride, desc, 24 + 8 * (rank + k))

    def vector_descriptor(self, buffer: ir.Value, length: int, name: str) -> ir.Value:
        """The descriptor of a rank-1 contiguous i64 vector at `buffer`."""
        desc = self.descriptor(1, buffer, name)
        self.put_size_stride(desc, 1, 0, ir.Constant(_I64, length), ir.Constant(_I64, 1))
        return desc

    def call_shape(self, descriptors: list[ir.Value]) -> ir.Value:
        """Call `@name__shape`; the `dims` buffer (fallback when a check fails)."""
        b = self.b
        n_dims = max(1, sum(s.rank for s in self.outputs))
        dims = self.words(n_dims, "dims")
        err = self.words(self.err_words, "err")
        dims_desc = self.vector_descriptor(dims, n_dims, "dims_desc")
        err_desc = self.vector_descriptor(err, self.err_words, "err_desc")
        code = b.call(self.shape_fn, [*descriptors, dims_desc, err_desc], name="code")
        self.check(b.icmp_signed("==", code, ir.Constant(_I32, 0)), "shape_ok")
        return dims

    def allocate_outputs(self, dims: ir.Value) -> tuple[list[ir.Value], list[ir.Value], ir.Value]:
        """Each output (`output_body`, then `fill_body`, in helpers when outlining; on a
        failed allocation, free those made and take the fallback); their objects, memref
        descriptors and total element count."""
        b = self.b
        objects: list[ir.Value] = []
        descriptors: list[ir.Value] = []
        count, offset = ir.Constant(_I64, 0), 0
        null, n = ir.Constant(_PTR, None), ir.Constant(_I64, len(self.read))
        for j, spec in enumerate(self.outputs):
            shape = self.at(dims, 8 * offset)
            donor, donor_desc, extents, a = null, null, null, ir.Constant(_I64, 0)
            if spec.donor is not None:
                assert self.extents is not None
                (donor, donor_desc), extents = self.read[spec.donor], self.extents
                a = ir.Constant(_I64, spec.donor)
            args = [shape, *self.kept[j], donor, donor_desc, extents, n, a]
            obj = self.output(spec, args, j)
            self.fallback_if_null(obj, objects)
            self.put(obj, self.made, 8 * j)
            objects.append(obj)
            desc = self.words(3 + 2 * spec.rank, f"out{j}_desc")
            rank = ir.Constant(_I64, spec.rank)
            if self.outline:
                fn, new = self.helper("fill", "fill", _I64, [_PTR, _PTR, _I64, _PTR])
                if new:  # i64 @name__entry_fill(ptr %obj, ptr %shape, i64 %rank, ptr %desc)
                    with self.inside(fn) as hb:
                        hb.ret(self.fill_body(*fn.args))
                elements = b.call(fn, [obj, shape, rank, desc])
            else:
                elements = self.fill_body(obj, shape, spec.rank, desc)
            count = b.add(count, elements)
            descriptors.append(desc)
            offset += spec.rank
        return objects, descriptors, count

    def output(self, spec: ArgSpec, args: list[ir.Value], j: int) -> ir.Value:
        """Output `j` (`output_body`; `args` its arguments): inline, the paths join in
        a phi; outlining, `ptr @name__entry_out<k>(ptr %shape, ptr %last, ptr %older,
        ptr %donor, ptr %donor_desc, ptr %extents, i64 %n, i64 %a)`, one per kind of
        output, returns."""
        donates = spec.donor is not None
        if self.outline:
            key = ("out", spec.rank, spec.type_nums[0], donates)
            fn, new = self.helper(key, f"out{len(self._helpers)}", _PTR, [_PTR] * 6 + [_I64] * 2)
            if new:
                with self.inside(fn) as hb:
                    self.output_body(spec, list(fn.args), hb.ret)
            return self.b.call(fn, args, name=f"out{j}")
        join = self.fn.append_basic_block(f"out{j}_ready")
        incoming: list[tuple[ir.Value, ir.Block]] = []

        def done(value: ir.Value) -> None:
            incoming.append((value, self.b.block))
            self.b.branch(join)

        self.output_body(spec, args, done)
        self.b.position_at_end(join)
        obj = self.b.phi(_PTR, name=f"out{j}")
        for value, block in incoming:
            obj.add_incoming(value, block)
        return obj

    def output_body(
        self, spec: ArgSpec, args: list[ir.Value], done: Callable[[ir.Value], object]
    ) -> None:
        """The array of an output of `spec`, of the dimensions at `shape`, ends each path
        through `done`: the donor input `donor` (input `a`, its descriptor `donor_desc`;
        a new reference) when the output has one and it `may_donate`, else the array
        kept in `last` or in `older` (whose slot it empties) that can be written again,
        else a new array, NULL when that cannot be allocated."""
        b, fn = self.b, self.fn
        shape, last, older, donor, donor_desc, extents, n, a = args
        sizes = [self.field(shape, 8 * k, _I64) for k in range(spec.rank)]
        if spec.donor is not None:
            ok = self.may_donate(donor, donor_desc, sizes, extents, n, a)
            donated = fn.append_basic_block("donated")
            not_donated = fn.append_basic_block("not_donated")
            b.cbranch(ok, donated, not_donated)
            b.position_at_end(donated)
            b.call(self.incref, [donor])
            done(donor)
            b.position_at_end(not_donated)
        for slot, label in ((last, "last"), (older, "older")):
            kept = b.load(slot, typ=_PTR, name=f"kept_{label}")
            check = fn.append_basic_block(f"{label}_check")
            otherwise = fn.append_basic_block(f"{label}_not")
            b.cbranch(b.icmp_unsigned("==", kept, ir.Constant(_PTR, None)), otherwise, check)
            b.position_at_end(check)
            self.check_reusable(kept, spec, sizes, otherwise)
            b.store(ir.Constant(_PTR, None), slot)  # the reference moves to the result
            done(kept)
            b.position_at_end(otherwise)
        new_args = [
            self.array_type,
            ir.Constant(_I32, spec.rank),
            shape,
            ir.Constant(_I32, spec.type_nums[0]),
            *[ir.Constant(_PTR, None)] * 2,
            ir.Constant(_I32, 0),
            ir.Constant(_I32, 0),
            ir.Constant(_PTR, None),
        ]
        done(b.call(self.array_new, new_args, name="new"))

    def fill_body(
        self, obj: ir.Value, shape: ir.Value, rank: int | ir.Value, desc: ir.Value
    ) -> ir.Value:
        """Fill the memref descriptor `desc` of the C-contiguous array `obj` of the
        `rank` dimensions at `shape` (written out for a known rank, else a loop); its
        element count."""
        b = self.b
        self.fill_descriptor(desc, self.field(obj, self.layout.data, _PTR))
        if isinstance(rank, int):
            stride: ir.Value = ir.Constant(_I64, 1)
            for k in reversed(range(rank)):
                size = self.field(shape, 8 * k, _I64)
                self.put_size_stride(desc, rank, k, size, stride)
                stride = b.mul(stride, size)
            return stride
        slot = self.words(1, "stride")
        b.store(ir.Constant(_I64, 1), slot)
        with _counted_loop(b, rank) as i:
            k = b.sub(b.sub(rank, ir.Constant(_I64, 1)), i)  # the last axis first
            size = b.load(self.at(shape, b.mul(k, _C8)), typ=_I64)
            inner = b.load(slot, typ=_I64)
            b.store(size, self.at(desc, b.add(_C24, b.mul(k, _C8))))
            b.store(inner, self.at(desc, b.add(_C24, b.mul(b.add(rank, k), _C8))))
            b.store(b.mul(inner, size), slot)
        return b.load(slot, typ=_I64)

    def check_reusable(
        self, obj: ir.Value, spec: ArgSpec, sizes: list[ir.Value], otherwise: ir.Block
    ) -> None:
        """Continue when the kept array `obj` can hold the new result, else go to
        `otherwise`: only the global holds it, it owns contiguous, aligned, writeable data
        of the output's element type, rank and dimensions, and has no base and no weak
        references. (Its dimensions are read only once its rank is known to match.)"""
        b, lay = self.b, self.layout
        null = ir.Constant(_PTR, None)
        ok = b.icmp_signed("==", self.field(obj, lay.ob_refcnt, _I64), ir.Constant(_I64, 1))
        flags = b.and_(self.field(obj, lay.flags, _I32), ir.Constant(_I32, REUSABLE_FLAGS))
        ok = b.and_(ok, b.icmp_signed("==", flags, ir.Constant(_I32, REUSABLE_FLAGS)))
        ok = b.and_(ok, b.icmp_unsigned("==", self.field(obj, lay.base, _PTR), null))
        ok = b.and_(ok, b.icmp_unsigned("==", self.field(obj, lay.weakreflist, _PTR), null))
        nd = self.field(obj, lay.nd, _I32)
        ok = b.and_(ok, b.icmp_signed("==", nd, ir.Constant(_I32, spec.rank)))
        descr = self.field(obj, lay.descr, _PTR)
        type_num = self.field(descr, lay.descr_type_num, _I32)
        ok = b.and_(ok, b.icmp_signed("==", type_num, ir.Constant(_I32, spec.type_nums[0])))
        byteorder = self.field(descr, lay.descr_byteorder, _I8)
        foreign = ord(">" if sys.byteorder == "little" else "<")
        ok = b.and_(ok, b.icmp_signed("!=", byteorder, ir.Constant(_I8, foreign)))
        self.check_or(ok, otherwise, "kept_rank_ok")
        if sizes:
            dims_ptr = self.field(obj, lay.dimensions, _PTR)
            ok = ir.Constant(ir.IntType(1), 1)
            for k, size in enumerate(sizes):
                ok = b.and_(ok, b.icmp_signed("==", self.field(dims_ptr, 8 * k, _I64), size))
            self.check_or(ok, otherwise, "kept_dims_ok")

    def check_or(self, ok: ir.Value, otherwise: ir.Block, label: str) -> None:
        """Continue in a new block when `ok`, else go to `otherwise`."""
        then = self.fn.append_basic_block(label)
        self.b.cbranch(ok, then, otherwise)
        self.b.position_at_end(then)

    def keep(self, slots: tuple[ir.GlobalVariable, ir.GlobalVariable], obj: ir.Value) -> None:
        """Make the `last` slot hold a reference to `obj`, the `older` slot the array
        `last` held, releasing the one `older` held (`@name__entry_keep` when outlining)."""
        if not self.outline:
            self.keep_body(obj, *slots)
            return
        fn, new = self.helper("keep", "keep", ir.VoidType(), [_PTR, _PTR, _PTR])
        if new:
            with self.inside(fn) as hb:
                self.keep_body(*fn.args)
                hb.ret_void()
        self.b.call(fn, [obj, *slots])

    def keep_body(self, obj: ir.Value, last: ir.Value, older: ir.Value) -> None:
        b = self.b
        b.call(self.incref, [obj])
        previous = b.load(last, typ=_PTR)
        dropped = b.load(older, typ=_PTR)
        b.store(obj, last)
        b.store(previous, older)
        with b.if_then(b.icmp_unsigned("!=", dropped, ir.Constant(_PTR, None))):
            b.call(self.decref, [dropped])

    def may_donate(
        self,
        obj: ir.Value,
        desc: ir.Value,
        sizes: list[ir.Value],
        extents: ir.Value,
        n: ir.Value,
        a: ir.Value,
    ) -> ir.Value:
        """Whether input `a` (its object `obj`, its descriptor `desc`) is C-contiguous,
        writable, of the dimensions `sizes`, and overlaps no other of the `n` inputs'
        memory (`@name__overlaps`, a loop over the table of `extents`: written out per
        pair, the test of every donor against every input made the entry point quadratic
        in the outputs)."""
        b = self.b
        wanted = ir.Constant(_I32, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_WRITEABLE)
        flags = self.field(obj, self.layout.flags, _I32)
        ok = b.icmp_signed("==", b.and_(flags, wanted), wanted)
        for k, size in enumerate(sizes):
            ok = b.and_(ok, b.icmp_signed("==", self.field(desc, 24 + 8 * k, _I64), size))
        overlaps = b.call(self.overlaps_function(), [extents, n, a])
        return b.and_(ok, b.not_(overlaps))

    def input_extents(self) -> ir.Value:
        """A stack table of two words per input: the first and one past the last byte
        it spans (the same, an empty range, when it has no element; `extent_body`, in
        `@name__entry_extent` when outlining)."""
        table = self.words(2 * len(self.read), "extents")
        for i, (_, desc) in enumerate(self.read):
            spec, out = self.inputs[i], self.at(table, 16 * i)
            size = ir.Constant(_I64, spec.itemsize)
            if not self.outline:
                self.extent_body(desc, spec.rank, size, out)
                continue
            fn, new = self.helper("extent", "extent", ir.VoidType(), [_PTR, _I64, _I64, _PTR])
            if new:
                with self.inside(fn) as hb:
                    self.extent_body(*fn.args)
                    hb.ret_void()
            self.b.call(fn, [desc, ir.Constant(_I64, spec.rank), size, out])
        return table

    def extent_body(
        self, desc: ir.Value, rank: int | ir.Value, itemsize: ir.Value, out: ir.Value
    ) -> None:
        """The bytes the array of the memref descriptor `desc` spans, `[lo, hi)` at
        `out` (`lo` twice when it has no element; written out for a known rank, else a
        loop). Its strides are in elements, whole ones (`read_body` checked the byte
        strides), so times `itemsize` they are the array's."""
        b = self.b
        zero, one = ir.Constant(_I64, 0), ir.Constant(_I64, 1)
        lo = b.ptrtoint(self.field(desc, 8, _PTR), _I64)
        hi = b.add(lo, itemsize)

        def axis(lo: ir.Value, hi: ir.Value, empty: ir.Value, dim: ir.Value, stride: ir.Value):
            span = b.mul(b.sub(dim, one), b.mul(stride, itemsize))
            lo = b.add(lo, b.select(b.icmp_signed("<", span, zero), span, zero))
            hi = b.add(hi, b.select(b.icmp_signed(">", span, zero), span, zero))
            return lo, hi, b.or_(empty, b.icmp_signed("==", dim, zero))

        empty: ir.Value = ir.Constant(_BOOL, 0)
        if isinstance(rank, int):
            for k in range(rank):
                dim = self.field(desc, 24 + 8 * k, _I64)
                stride = self.field(desc, 24 + 8 * (rank + k), _I64)
                lo, hi, empty = axis(lo, hi, empty, dim, stride)
        else:
            slots = [self.words(1, name) for name in ("lo", "hi", "empty")]
            for slot, value in zip(slots, (lo, hi, b.zext(empty, _I64)), strict=True):
                b.store(value, slot)
            with _counted_loop(b, rank) as k:
                dim = b.load(self.at(desc, b.add(_C24, b.mul(k, _C8))), typ=_I64)
                at_stride = b.add(_C24, b.mul(b.add(rank, k), _C8))
                stride = b.load(self.at(desc, at_stride), typ=_I64)
                was_empty = b.icmp_signed("!=", b.load(slots[2], typ=_I64), zero)
                values = axis(
                    b.load(slots[0], typ=_I64), b.load(slots[1], typ=_I64), was_empty, dim, stride
                )
                for slot, value in zip(slots, (*values[:2], b.zext(values[2], _I64)), strict=True):
                    b.store(value, slot)
            lo, hi = b.load(slots[0], typ=_I64), b.load(slots[1], typ=_I64)
            empty = b.icmp_signed("!=", b.load(slots[2], typ=_I64), zero)
        self.put(lo, out, 0)
        self.put(b.select(empty, lo, hi), out, 8)

    def overlaps_function(self) -> ir.Function:
        """`i1 @name__overlaps(ptr %extents, i64 %n, i64 %a)`: whether the range of
        entry `a` of the table meets that of another of its `n` entries (an empty range
        meets none)."""
        if self._overlaps is not None:
            return self._overlaps
        fn = ir.Function(
            self.module, ir.FunctionType(_BOOL, [_PTR, _I64, _I64]), self.name + "__overlaps"
        )
        fn.linkage = "internal"
        table, n, a = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        lo = b.load(b.gep(table, [b.mul(a, _C16)], source_etype=_I8), typ=_I64)
        hi = b.load(b.gep(table, [b.add(b.mul(a, _C16), _C8)], source_etype=_I8), typ=_I64)
        with _counted_loop(b, n) as i:
            other_lo = b.load(b.gep(table, [b.mul(i, _C16)], source_etype=_I8), typ=_I64)
            at_hi = b.add(b.mul(i, _C16), _C8)
            other_hi = b.load(b.gep(table, [at_hi], source_etype=_I8), typ=_I64)
            apart = b.or_(b.icmp_unsigned("<=", other_hi, lo), b.icmp_unsigned("<=", hi, other_lo))
            empty = b.or_(b.icmp_unsigned("==", lo, hi), b.icmp_unsigned("==", other_lo, other_hi))
            meets = b.and_(b.icmp_unsigned("!=", i, a), b.not_(b.or_(apart, empty)))
            with b.if_then(meets, likely=False):
                b.ret(ir.Constant(_BOOL, 1))
        b.ret(ir.Constant(_BOOL, 0))
        self._overlaps = fn
        return fn

    def release_made(self, count: int) -> None:
        """Release the first `count` outputs made (`@name__release`, a loop over
        `made`: written out at each failure path, the releases were quadratic in the
        outputs)."""
        if count == 0:
            return
        if self._release is None:
            fn = ir.Function(
                self.module, ir.FunctionType(ir.VoidType(), [_PTR, _I64]), self.name + "__release"
            )
            fn.linkage = "internal"
            made, n = fn.args
            b = ir.IRBuilder(fn.append_basic_block("entry"))
            with _counted_loop(b, n) as i:
                slot = b.gep(made, [b.mul(i, _C8)], source_etype=_I8)
                b.call(self.decref, [b.load(slot, typ=_PTR)])
            b.ret_void()
            self._release = fn
        self.b.call(self._release, [self.made, ir.Constant(_I64, count)])

    def unless_null(self, obj: ir.Value, made: list[ir.Value]) -> None:
        """Continue when `obj` is not NULL; else release `made` and return NULL."""
        then = self._release_if_null(obj, made, "alloc")
        self.b.ret(ir.Constant(_PTR, None))
        self.b.position_at_end(then)

    def fallback_if_null(self, obj: ir.Value, made: list[ir.Value]) -> None:
        """Continue when `obj` is not NULL; else release `made`, clear the error and
        take the fallback: the Python path allocates again and raises its own error
        (a `MemoryError`, also for a size that overflows)."""
        then = self._release_if_null(obj, made, "new")
        self.b.call(self.err_clear, [])
        self.b.branch(self.fallback)
        self.b.position_at_end(then)

    def _release_if_null(self, obj: ir.Value, made: list[ir.Value], what: str) -> ir.Block:
        """Branch on `obj` being NULL: the builder is left in the NULL branch, after the
        release of `made`; returns the block where `obj` is not NULL."""
        b = self.b
        failed = self.fn.append_basic_block(f"{what}_failed")
        then = self.fn.append_basic_block(f"{what}_ok")
        b.cbranch(b.icmp_unsigned("==", obj, ir.Constant(_PTR, None)), failed, then)
        b.position_at_end(failed)
        self.release_made(len(made))
        return then

    def compute(
        self, descriptors: list[ir.Value], elements: ir.Value, outputs: list[ir.Value]
    ) -> None:
        """Call `@name`, without the GIL when `elements` is large; when it reports a
        failed allocation, release `outputs` and raise `MemoryError`."""
        b = self.b
        big = b.icmp_signed(">=", elements, ir.Constant(_I64, GIL_RELEASE_ELEMENTS))
        incoming = []
        with b.if_else(big) as (released, held):
            with released:
                state = b.call(self.save_thread, [])
                incoming.append((b.call(self.compute_fn, descriptors), b.block))
                b.call(self.restore_thread, [state])
            with held:
                incoming.append((b.call(self.compute_fn, descriptors), b.block))
        status = b.phi(_I64, name="status")
        for value, block in incoming:
            status.add_incoming(value, block)
        with b.if_then(b.icmp_signed("!=", status, ir.Constant(_I64, 0)), likely=False):
            for obj in outputs:
                b.call(self.decref, [obj])
            self.raise_memory_error(status)

    def raise_memory_error(self, status: ir.Value) -> None:
        """Set the `MemoryError` of the negative `status` of `@name` and return NULL
        (the messages of `arignote.runtime.native.allocation_error`)."""
        b = self.b
        limit = 2**63
        texts = [
            _c_format(ALLOCATION_FAILED, name=self.name, bytes="%lld"),
            _c_format(ALLOCATION_TOO_LARGE, name=self.name, limit=str(limit)),
        ]
        size = max(len(t.encode()) for t in texts) + 1
        failed = self.c_string("failed", texts[0], size)
        too_large = self.c_string("too_large", texts[1], size)
        huge = b.icmp_signed("==", status, ir.Constant(_I64, -limit))
        text = b.select(huge, too_large, failed)
        b.call(self.err_format, [self.memory_error, text, b.neg(status)])
        b.ret(ir.Constant(_PTR, None))

    def c_string(self, label: str, text: str, size: int) -> ir.GlobalVariable:
        """A private constant string in the module, NUL-padded to `size` bytes (strings
        of one size have one type, which a `select` between them needs)."""
        data = bytearray(text.encode().ljust(size, b"\0"))
        array = ir.ArrayType(_I8, size)
        string = ir.GlobalVariable(self.module, array, f"{self.name}__{label}")
        string.global_constant = True
        string.linkage = "private"
        string.initializer = ir.Constant(array, data)
        return string

    def return_results(self, outputs: list[ir.Value]) -> None:
        b = self.b
        if len(outputs) == 1:
            b.ret(outputs[0])
            return
        result = b.call(self.list_new, [ir.Constant(_I64, len(outputs))], name="list")
        self.unless_null(result, outputs)
        for j, obj in enumerate(outputs):
            b.call(self.list_set, [result, ir.Constant(_I64, j), obj])  # steals obj
        b.ret(result)


_BOOL = ir.IntType(1)
_C8, _C16, _C24 = ir.Constant(_I64, 8), ir.Constant(_I64, 16), ir.Constant(_I64, 24)


@contextmanager
def _counted_loop(b: ir.IRBuilder, n: ir.Value) -> Iterator[ir.Value]:
    """`for (i = 0; i < n; i++) { <the with block> }` at `b`'s position; yields `i`,
    then leaves `b` after the loop."""
    head = b.append_basic_block("loop")
    body = b.append_basic_block("body")
    done = b.append_basic_block("done")
    start = b.block
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(_I64, name="i")
    i.add_incoming(ir.Constant(_I64, 0), start)
    b.cbranch(b.icmp_signed("<", i, n), body, done)
    b.position_at_end(body)
    yield i
    i.add_incoming(b.add(i, ir.Constant(_I64, 1)), b.block)
    b.branch(head)
    b.position_at_end(done)


def entry_ir(
    name: str, inputs: Sequence[ArgSpec], outputs: Sequence[ArgSpec], err_words: int = 3
) -> str:
    """The LLVM IR text of `@name__entry` (declaring `@name__shape` and `@name`, to be
    linked with them): returns the result itself when there is exactly one, else a list.
    `err_words`: the length of the shape function's `err` vector (`native.err_length`)."""
    return str(_EntryBuilder(name, inputs, outputs, err_words).build())


# --- the entry point as a Python callable --------------------------------------------------


_decref = ctypes.pythonapi.Py_DecRef
_decref.restype = None
_decref.argtypes = [ctypes.c_void_p]


def release_kept(addresses: Sequence[int]) -> None:
    """Drop the references that the kept-output globals at `addresses` hold (the
    caller holds the GIL; the arrays are freed unless someone else holds them)."""
    for address in addresses:
        slot = ctypes.c_void_p.from_address(address)
        obj, slot.value = slot.value, None
        if obj:
            _decref(obj)


class _PyMethodDef(ctypes.Structure):
    _fields_ = [
        ("ml_name", ctypes.c_char_p),
        ("ml_meth", ctypes.c_void_p),
        ("ml_flags", ctypes.c_int),
        ("ml_doc", ctypes.c_char_p),
    ]


_new_cfunction = ctypes.pythonapi.PyCFunction_NewEx
_new_cfunction.restype = ctypes.py_object
_new_cfunction.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.py_object]


def _bytes_address(data: bytes) -> int:
    """The address of the bytes of `data` (a `c_char_p` of a bytes object points into
    it; nothing is copied)."""
    return ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value or 0


def method_definition(name: bytes, address: int) -> tuple[int, tuple[bytes, bytes]]:
    """(the address of a `METH_FASTCALL` `PyMethodDef` of `name` and the C function at
    `address`, the objects that hold it).

    The C function object reads its definition up to its own deallocation (its name,
    its flags in `meth_dealloc`), so the definition must outlive it. It is held as the
    function's `__module__` (`m_module`, released last), in `bytes` objects: immutable,
    never moved, and not containers, which the garbage collector could clear. A ctypes
    structure in the owner's `__dict__` (this module's first design) was freed first
    when the collector broke a cycle through the owner: `tp_clear` empties the owner's
    `__dict__` while the function is still alive, and its deallocation then read freed
    memory (a crash, seen in the test suite inside unrelated code; the test is
    `test_fast_entry.py::test_the_method_definition_outlives_its_owners_dict`)."""
    definition = bytes(_PyMethodDef(name, address, METH_FASTCALL, None))  # ml_name -> name
    return _bytes_address(definition), (name, definition)


class FastEntry:
    """The entry point at `address` as a Python callable `call(*arrays)`, which returns
    the result(s) or None (then take the Python path).

    `owner` (what keeps the machine code alive; an object with a `__dict__`) becomes the
    C function's `self`, so the callable keeps it alive; the callable holds its method
    definition itself (`method_definition`). `kept_addresses` are those of the entry's
    `@f__kept<j>` and `@f__kept<j>_older` globals (`kept_symbols`).
    """

    def __init__(
        self,
        name: str,
        address: int,
        counter_address: int,
        owner: object,
        kept_addresses: Sequence[int] = (),
    ):
        definition, holder = method_definition((name + ENTRY_SUFFIX).encode(), address)
        self._counter = ctypes.c_int64.from_address(counter_address)
        self.owner = owner
        self.call = _new_cfunction(definition, owner, holder)
        self.kept_addresses = tuple(kept_addresses)
        """The addresses of the kept-output globals (see `release_kept`); their
        references are dropped when `owner` is freed."""
        if self.kept_addresses:
            weakref.finalize(owner, release_kept, self.kept_addresses).atexit = False

    def release_kept(self) -> None:
        """Drop the arrays the entry point keeps for reuse (see `release_kept`)."""
        release_kept(self.kept_addresses)

    @property
    def calls(self) -> int:
        """How many calls the entry point completed (fallbacks are not counted)."""
        return self._counter.value
