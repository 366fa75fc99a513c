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
from collections.abc import Sequence
from typing import Any

import numpy as np

ALIGNMENT = 64

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

    def allocate(self, size: int) -> tuple[int, Any]:
        return _aligned(size)

    def release(self, allocation: Any) -> None:
        pass  # the buffer goes with its last reference

    def copy_to_host(self, host: int, device: int, size: int) -> None:
        ctypes.memmove(host, device, size)

    def to_device(self, host: np.ndarray) -> GPUArray:
        return GPUArray(np.array(host, order="C", copy=True))

    def empty(self, shape: Sequence[int], dtype: np.dtype) -> GPUArray:
        return GPUArray(np.empty(tuple(shape), dtype))

    def load(self, kernels: Sequence[str], ptx: str, host_ir: str) -> list[Any]:
        """Each kernel's task, compiled for the CPU from `host_ir` (the device module's
        LLVM IR without the entry points)."""
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
        tasks = []
        for kernel in kernels:
            address = engine.get_function_address(kernel.removesuffix("__kernel"))
            if not address:
                raise KeyError(f"no task for kernel {kernel}")
            tasks.append(task_type(address))
        return tasks

    def launch(self, kernel: Any, lower: int, upper: int, context: bytes) -> None:
        buffer = ctypes.create_string_buffer(context, len(context))
        for i in range(upper - 1, lower - 1, -1):
            kernel(i, i + 1, 0, buffer)

    def synchronize(self) -> None:
        pass

    def gemv(self, kind: str, *args: Any) -> None:
        _blas(f"scipy_cblas_{kind}gemv", kind, (4, 9), (5, 7, 10), args)

    def gemm(self, kind: str, *args: Any) -> None:
        _blas(f"scipy_cblas_{kind}gemm", kind, (6, 11), (7, 9, 12), args)

    def shutdown(self) -> None:
        pass


def _blas(
    name: str, kind: str, scalars: tuple[int, ...], pointers: tuple[int, ...], args: Sequence[Any]
) -> None:
    """The host BLAS's `name` on `args` (emulated device memory is host memory)."""
    from arignote.runtime.blas import load_blas

    library = ctypes.CDLL(load_blas())
    scalar = ctypes.c_float if kind == "s" else ctypes.c_double
    converted = []
    for k, value in enumerate(args):
        if k in scalars:
            converted.append(scalar(value))
        elif k in pointers:
            converted.append(ctypes.c_void_p(value))
        else:
            converted.append(ctypes.c_int32(value))
    getattr(library, name)(*converted)
