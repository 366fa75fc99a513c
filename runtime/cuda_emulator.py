"""A CPU emulation of the CUDA device, for testing the GPU target without a GPU.

`arignote.runtime.cuda.emulate()` swaps it in for the pycuda device. Everything above
the device is what runs on a GPU: the GPU split's host code (compiled for the CPU as
always), its kernel table and launches, its device allocations and reads, its BLAS
calls. Below, "device memory" is host memory the emulator allocates, a kernel is its
task (`@f__par<k>`, the kernel entry's callee) compiled for the CPU, and a launch of
`[lower, upper)` runs the task on one iteration at a time, in reverse order (a kernel
whose iterations depended on their order would differ from the interpreter), as the
threads of a grid would.

Device arrays are `GPUArray`s of this module: the `get`/`set`/`gpudata`/`shape`/
`dtype`/`strides` of pycuda's, over a NumPy array.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

ALIGNMENT = 64

EMULATED_THREADS = 3
"""A strided task (its loop steps by the grid's thread count) runs as this many threads,
each from its own first index: the striding itself is exercised."""

LIBDEVICE = {"__nv_fmodf": "fmodf", "__nv_fmod": "fmod"}
"""The libdevice functions kernels call → the C library's functions the CPU runs."""

_LIBM = ctypes.CDLL(None)


class GPUArray:
    """An emulated device array (the subset of `pycuda.gpuarray.GPUArray` arignote uses)."""

    def __init__(self, array: np.ndarray):
        self._array = array

    shape = property(lambda self: self._array.shape)
    dtype = property(lambda self: self._array.dtype)
    strides = property(lambda self: self._array.strides)
    ndim = property(lambda self: self._array.ndim)
    size = property(lambda self: self._array.size)

    @property
    def gpudata(self) -> int:
        return self._array.ctypes.data

    def get(self) -> np.ndarray:
        return self._array.copy()

    def set(self, host: np.ndarray) -> None:
        self._array[...] = host

    def copy(self) -> GPUArray:
        return GPUArray(self._array.copy())

    def __repr__(self) -> str:
        return f"GPUArray(emulated, {self._array!r})"


def _aligned(size: int) -> tuple[int, np.ndarray]:
    buffer = np.empty(size + ALIGNMENT, np.uint8)
    start = -buffer.ctypes.data % ALIGNMENT
    return buffer.ctypes.data + start, buffer


class EmulatedDevice:
    """The device of `arignote.runtime.cuda` on the CPU (see the module doc)."""

    emulated = True
    name = "CPU emulation of a CUDA device"
    capability = (9, 0)
    max_blocks = 1

    def __init__(self) -> None:
        self._engines: list[Any] = []
        self._tasks: dict[int, Any] = {}
        self._allocations: dict[int, np.ndarray] = {}
        self._error: BaseException | None = None
        self._launches = 0
        self._timed: list[tuple[int, float]] | None = None
        self._in_use = self._peak = 0
        self._callbacks = self._make_callbacks()

    # --- what the host code calls (Python callbacks bound to the runtime's names) --------

    def _make_callbacks(self) -> dict[str, Any]:
        i32, ptr, i64 = ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64
        f32, f64 = ctypes.c_float, ctypes.c_double
        table: dict[str, Any] = {
            "arignote_gpu_launch": ctypes.CFUNCTYPE(i64, ptr, ptr, i64, i64, i64)(self._launch),
            "arignote_gpu_malloc": ctypes.CFUNCTYPE(ptr, i64)(self._malloc),
            "arignote_gpu_free": ctypes.CFUNCTYPE(None, ptr)(self._free),
            "arignote_gpu_read": ctypes.CFUNCTYPE(None, ptr, ptr, i64)(self._read),
        }
        for kind, scalar in (("s", f32), ("d", f64)):
            gemv = [i32, i32, i32, i32, scalar, ptr, i32, ptr, i32, scalar, ptr, i32]
            gemm = [i32, i32, i32, i32, i32, i32, scalar, ptr, i32, ptr, i32, scalar, ptr, i32]
            table[f"arignote_gpu_cblas_{kind}gemv"] = ctypes.CFUNCTYPE(None, *gemv)(
                self._blas_call(f"scipy_cblas_{kind}gemv", gemv)
            )
            table[f"arignote_gpu_cblas_{kind}gemm"] = ctypes.CFUNCTYPE(None, *gemm)(
                self._blas_call(f"scipy_cblas_{kind}gemm", gemm)
            )
        return table

    def _fail(self, e: BaseException) -> None:
        if self._error is None:
            self._error = e

    def _launch(self, kernel: int, ctx: int, size: int, lower: int, upper: int) -> int:
        if self._error is not None:
            return -1
        try:
            task, strided = self._tasks[kernel]
            buffer = ctypes.create_string_buffer(
                ctypes.string_at(ctx, size) if size else b"", max(1, size)
            )
            start = time.perf_counter()
            if strided:  # EMULATED_THREADS threads, each striding over the range
                for thread in range(EMULATED_THREADS - 1, -1, -1):
                    task(lower + thread, upper, EMULATED_THREADS, buffer)
            else:
                for i in range(upper - 1, lower - 1, -1):
                    task(i, i + 1, 0, buffer)
            if self._timed is not None:
                self._timed.append((kernel, time.perf_counter() - start))
            self._launches += 1
            return 1
        except Exception as e:
            self._fail(e)
            return -1

    def _malloc(self, size: int) -> int:
        if self._error is not None:
            return 0
        address, buffer = _aligned(max(1, size))
        self._allocations[address] = buffer
        self._in_use += buffer.nbytes
        self._peak = max(self._peak, self._in_use)
        return address

    def _free(self, address: int | None) -> None:
        if address:
            buffer = self._allocations.pop(address, None)
            if buffer is not None:
                self._in_use -= buffer.nbytes

    def start_profile(self) -> None:
        self._timed, self._peak = [], self._in_use

    def stop_profile(self) -> tuple[list[tuple[int, float]], int]:
        timed, self._timed = self._timed or [], None
        return timed, self._peak

    def _read(self, host: int, device: int, size: int) -> None:
        ctypes.memmove(host, device, size)

    def _blas_call(self, name: str, types: Sequence[Any]) -> Any:
        """The host BLAS's `name` (emulated device memory is host memory), found at its
        first call."""
        found: list[Any] = []

        def call(*args: Any) -> None:
            if self._error is not None:
                return
            try:
                if not found:
                    from arignote.runtime.blas import load_blas

                    found.append(getattr(ctypes.CDLL(load_blas()), name))
                found[0](*(t(a) for t, a in zip(types, args, strict=True)))
            except Exception as e:
                self._fail(e)

        return call

    def register_symbols(self, uses_blas: bool) -> None:
        import llvmlite.binding as llvm

        for name, callback in self._callbacks.items():
            llvm.add_symbol(name, ctypes.cast(callback, ctypes.c_void_p).value)

    def check(self) -> None:
        error, self._error = self._error, None
        if error is not None:
            raise error

    def launches(self) -> int:
        return self._launches

    def make_current(self) -> None:
        pass

    # --- memory and kernels ---------------------------------------------------------------

    def to_device(self, host: np.ndarray) -> GPUArray:
        return GPUArray(np.array(host, order="C", copy=True))

    def empty(self, shape: Sequence[int], dtype: np.dtype) -> GPUArray:
        return GPUArray(np.empty(tuple(shape), dtype))

    def load(
        self, kernels: Sequence[str], ptx: str, host_ir: str, strided: Sequence[bool] = ()
    ) -> list[int]:
        """The address of each kernel's task, compiled for the CPU from `host_ir` (the
        device module's LLVM IR without the entry points)."""
        import llvmlite.binding as llvm

        from arignote.runtime.cpu import _compile, _load, host_target_machine

        for name, libm in LIBDEVICE.items():
            if name in host_ir:
                llvm.add_symbol(name, ctypes.cast(getattr(_LIBM, libm), ctypes.c_void_p).value)
        machine = host_target_machine()
        module = llvm.parse_assembly(host_ir)
        module.triple = llvm.get_process_triple()
        _, _, object_code = _compile(str(module), (), machine)
        engine = _load(object_code, machine)
        self._engines.append(engine)
        task_type = ctypes.CFUNCTYPE(
            None, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p
        )
        addresses = []
        flags = [*strided, *[False] * len(kernels)]
        for kernel, is_strided in zip(kernels, flags, strict=False):
            address = engine.get_function_address(kernel.removesuffix("__kernel"))
            if not address:
                raise KeyError(f"no task for kernel {kernel}")
            self._tasks[address] = (task_type(address), is_strided)
            addresses.append(address)
        return addresses

    def synchronize(self) -> None:
        pass

    def shutdown(self) -> None:
        pass
