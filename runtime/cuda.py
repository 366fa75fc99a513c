"""The CUDA runtime: kernels in PTX loaded with pycuda, host code on the CPU.

A GPU function is the host half of the GPU split (compiled for the CPU like any native
function, `arignote.runtime.cpu.NativeModule`) and a PTX module of kernels. The host code
calls back into this module through five symbols bound with `llvmlite.binding.add_symbol`:

* `arignote_gpu_launch(k, ctx, bytes, lower, upper)`: launch kernel `k` of the function
  being called on `[lower, upper)`; its parameters are `lower`, `upper` and the `bytes`
  of the context struct at `ctx` (`arignote.lowering.gpu.split`);
* `arignote_gpu_malloc(bytes)` / `arignote_gpu_free(pointer)`: device memory from a
  `pycuda.tools.DeviceMemoryPool` (a freed block is kept for the next allocation of its
  size class: no `cudaMalloc` per call in a training loop);
* `arignote_gpu_read(host, device, bytes)`: a scalar the host code needs (a loop bound,
  an `ifelse` condition) copied from device memory;
* `arignote_gpu_cblas_{s,d}{gemv,gemm}`: CBLAS's arguments, computed by cuBLAS (loaded
  from the CUDA toolkit or the `nvidia-cublas` wheel) on device pointers.

An exception raised in a callback cannot cross the native code: it is kept, the callback
returns an error status, and the call raises it when the host code returns.

Device arrays are `pycuda.gpuarray.GPUArray`s. `GpuFunction(...)(*arrays)` takes NumPy
arrays (copied to the device) or GPUArrays (used in place) and returns GPUArrays.

Requirements are checked when first needed (`require()`): pycuda importable (`pip install
"arignote[gpu]"`), a CUDA driver, and a GPU; `CudaUnavailableError` names what is missing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import math
import os
import struct
import sys
import threading
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

import numpy as np

from arignote.runtime.cpu import NativeModule, descriptor_struct
from arignote.runtime.native import (
    SHAPE_SUFFIX,
    TensorSpec,
    _spec,
    allocation_error,
    err_length,
    message_arity,
)


class CudaUnavailableError(RuntimeError):
    """What the GPU target needs is missing (pycuda, the driver, a GPU, cuBLAS)."""


THREADS_PER_BLOCK = 256
BLOCKS_PER_SM = 16
"""A launch of n iterations runs min(ceil(n / 256), 16 × multiprocessors) blocks of 256
threads; each thread strides over the grid (`entry_ir`)."""


class PycudaDevice:
    """A CUDA GPU through pycuda: its primary context, a memory pool, and launches."""

    emulated = False

    def __init__(self, device: str):
        try:
            import pycuda.driver as driver
        except ImportError as e:
            raise CudaUnavailableError(
                f"config.device={device!r} needs pycuda, which is not importable ({e}): "
                'install arignote with the gpu extra, pip install "arignote[gpu]", on a '
                "machine with the CUDA driver and toolkit"
            ) from e
        try:
            driver.init()
            count = driver.Device.count()
        except Exception as e:
            raise CudaUnavailableError(
                f"config.device={device!r}: the CUDA driver could not start ({e})"
            ) from e
        ordinal = _ordinal(device)
        if ordinal >= count:
            raise CudaUnavailableError(
                f"config.device={device!r}: this machine has {count} CUDA device(s)"
            )
        import pycuda.gpuarray as gpuarray
        from pycuda.tools import DeviceMemoryPool

        dev = driver.Device(ordinal)
        self.driver, self.gpuarray = driver, gpuarray
        self.context = dev.retain_primary_context()
        self.context.push()
        self.pool = DeviceMemoryPool()
        self.name = dev.name()
        self.capability: tuple[int, int] = dev.compute_capability()
        sms = dev.get_attribute(driver.device_attribute.MULTIPROCESSOR_COUNT)
        self.max_blocks = BLOCKS_PER_SM * sms

    def allocate(self, size: int) -> tuple[int, Any]:
        allocation = self.pool.allocate(size)
        return int(allocation), allocation

    def release(self, allocation: Any) -> None:
        allocation.free()

    def copy_to_host(self, host: int, device: int, size: int) -> None:
        self.driver.memcpy_dtoh((ctypes.c_char * size).from_address(host), device)

    def to_device(self, host: np.ndarray) -> Any:
        result = self.empty(host.shape, host.dtype)
        if host.size:
            result.set(host)
        return result

    def empty(self, shape: Sequence[int], dtype: np.dtype) -> Any:
        return self.gpuarray.GPUArray(tuple(shape), dtype, allocator=self.pool.allocate)

    def load(self, kernels: Sequence[str], ptx: str, host_ir: str) -> list[Any]:
        module = self.driver.module_from_buffer(ptx.encode())
        self._modules.append(module)
        return [module.get_function(k) for k in kernels]

    _modules: list[Any] = []

    def launch(self, kernel: Any, lower: int, upper: int, context: bytes) -> None:
        trips = upper - lower
        threads = min(THREADS_PER_BLOCK, trips)
        blocks = min(math.ceil(trips / threads), self.max_blocks)
        params = struct.pack("=qq", lower, upper) + context
        kernel._launch_kernel((blocks, 1, 1), (threads, 1, 1), params, 0, None)

    def synchronize(self) -> None:
        self.context.synchronize()

    def gemv(self, kind: str, *args: Any) -> None:
        _cublas_gemv(kind, *args)

    def gemm(self, kind: str, *args: Any) -> None:
        _cublas_gemm(kind, *args)

    def shutdown(self) -> None:
        self.context.synchronize()


_DEVICE: Any = None
_EMULATE: list[bool] = [os.environ.get("ARIGNOTE_CUDA_EMULATE") == "1"]
"""Whether the CPU emulation stands in for the GPU (`emulate()`; in a whole process with
the environment variable `ARIGNOTE_CUDA_EMULATE=1`, as the tests run programs)."""
_LOCK = threading.Lock()


def _ordinal(device: str) -> int:
    """`cuda` → 0, `cuda1` → 1, `gpu0` → 0."""
    for prefix in ("cuda", "gpu"):
        if device.startswith(prefix):
            rest = device[len(prefix) :]
            return int(rest) if rest else 0
    raise ValueError(f"config.device={device!r} is not a CUDA device (cuda, cuda0, cuda1, ...)")


def require(device: str = "cuda") -> Any:
    """The CUDA device `device` (`cuda`, `cuda0`, ...), initialized on first use (the
    CPU emulation of `arignote.runtime.cuda_emulator` while `emulate()` is on)."""
    global _DEVICE
    with _LOCK:
        if _DEVICE is not None:
            return _DEVICE
        if _EMULATE[0]:
            from arignote.runtime.cuda_emulator import EmulatedDevice

            _DEVICE = EmulatedDevice()
        else:
            _DEVICE = PycudaDevice(device)
            import atexit

            atexit.register(_shutdown)
        _register_symbols()
        return _DEVICE


class emulate:  # noqa: N801 - used as a context manager, like a function
    """`with emulate():` GPU functions run on the CPU emulation of the device
    (`arignote.runtime.cuda_emulator`): the same host code, kernel table, launches and
    device-memory calls, each kernel's task compiled for the CPU and run one iteration
    at a time. For tests on machines without a GPU."""

    def __enter__(self) -> Any:
        global _DEVICE
        self._saved = (_DEVICE, _EMULATE[0])
        _DEVICE, _EMULATE[0] = None, True
        return require()

    def __exit__(self, *exc: object) -> None:
        global _DEVICE
        _DEVICE, _EMULATE[0] = self._saved


def emulating() -> bool:
    return _EMULATE[0]


def _shutdown() -> None:
    """At exit: wait for the device; the context stays current, so that the device
    arrays Python frees afterwards (shared values, the pool) are freed in it."""
    device = _DEVICE
    if device is None:
        return
    try:
        device.shutdown()
    except Exception:  # the driver may already be shutting down
        pass


def available() -> bool:
    """Whether a CUDA device can be used here (pycuda, a driver and a GPU)."""
    try:
        require()
    except CudaUnavailableError:
        return False
    return True


# --- device arrays ------------------------------------------------------------------------


def is_device_array(value: object) -> bool:
    return type(value).__name__ == "GPUArray" and hasattr(value, "gpudata")


def to_device(array: Any) -> Any:
    """`array` as a GPUArray: a GPUArray as it is, anything else copied (C order)."""
    if is_device_array(array):
        return array
    return require().to_device(np.asarray(array, order="C"))


def to_host(array: Any) -> np.ndarray:
    """`array` as a NumPy array (a copy from the device for a GPUArray)."""
    if is_device_array(array):
        return array.get()
    return np.asarray(array)


def empty(shape: Sequence[int], dtype: np.dtype) -> Any:
    return require().empty(shape, dtype)


# --- callbacks from the host code ----------------------------------------------------------

_ALLOCATIONS: dict[int, Any] = {}
_CALLS = threading.local()
"""`function`: the GpuFunction whose host code runs on this thread; `error`: the first
exception a callback raised during the call."""


def _fail(e: BaseException) -> None:
    if getattr(_CALLS, "error", None) is None:
        _CALLS.error = e


def _malloc(size: int) -> int:
    if getattr(_CALLS, "error", None) is not None:
        return 0
    try:
        address, allocation = require().allocate(max(1, size))
    except Exception as e:  # out of device memory: nothing more runs in this call
        _fail(MemoryError(f"out of GPU memory: {size} bytes could not be allocated ({e})"))
        return 0
    _ALLOCATIONS[address] = allocation
    return address


def _free(address: int | None) -> None:
    if address:
        allocation = _ALLOCATIONS.pop(address, None)
        if allocation is not None:
            require().release(allocation)


def _read(host: int, device: int, size: int) -> None:
    if getattr(_CALLS, "error", None) is not None:
        ctypes.memset(host, 0, size)
        return
    try:
        require().copy_to_host(host, device, size)
    except Exception as e:
        _fail(e)
        ctypes.memset(host, 0, size)


def _launch(index: int, ctx: int, size: int, lower: int, upper: int) -> int:
    if getattr(_CALLS, "error", None) is not None:
        return -1  # after a failure (an allocation) nothing more runs
    try:
        function: GpuFunction = _CALLS.function
        if upper <= lower:
            return 1
        padded = max(8, (size + 7) // 8 * 8)
        context = ctypes.string_at(ctx, size) + b"\0" * (padded - size)
        require().launch(function.kernel(index), lower, upper, context)
        function.launches += 1
        return 1
    except Exception as e:
        _fail(e)
        return -1


_CBLAS_ROW_MAJOR, _CBLAS_NO_TRANS = 101, 111


@cache
def _cublas() -> tuple[ctypes.CDLL, ctypes.c_void_p]:
    """cuBLAS and a handle (created in the current context)."""
    candidates = []
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root:
            candidates += sorted(glob.glob(os.path.join(root, "lib64", "libcublas.so*")))
    for path in sys.path:
        candidates += sorted(glob.glob(os.path.join(path, "nvidia", "cu*", "lib", "libcublas.so*")))
        candidates += sorted(
            glob.glob(os.path.join(path, "nvidia", "cublas", "lib", "libcublas.so*"))
        )
    found = ctypes.util.find_library("cublas")
    if found:
        candidates.append(found)
    for candidate in candidates:
        try:
            library = ctypes.CDLL(candidate)
        except OSError:
            continue
        handle = ctypes.c_void_p()
        status = library.cublasCreate_v2(ctypes.byref(handle))
        if status != 0:
            raise CudaUnavailableError(f"cublasCreate failed with status {status} ({candidate})")
        return library, handle
    raise CudaUnavailableError(
        "the GPU target computes dot products with cuBLAS, which was not found: install the "
        "CUDA toolkit (set CUDA_HOME) or the nvidia-cublas wheel"
    )


def _cublas_op(trans: int) -> int:
    return 0 if trans == _CBLAS_NO_TRANS else 1


def _gemv(kind: str):
    def gemv(*args: Any) -> None:
        if getattr(_CALLS, "error", None) is not None:
            return
        try:
            require().gemv(kind, *args)
        except Exception as e:
            _fail(e)

    return gemv


def _gemm(kind: str):
    def gemm(*args: Any) -> None:
        if getattr(_CALLS, "error", None) is not None:
            return
        try:
            require().gemm(kind, *args)
        except Exception as e:
            _fail(e)

    return gemm


def _cublas_gemv(kind: str, order, trans, m, n, alpha, a, lda, x, incx, beta, y, incy) -> None:
    """CBLAS's `?gemv` on device pointers, by cuBLAS (column-major)."""
    scalar = ctypes.c_float if kind == "s" else ctypes.c_double
    library, handle = _cublas()
    op = _cublas_op(trans)
    if order == _CBLAS_ROW_MAJOR:  # a row-major M x N matrix is a column-major N x M
        op, m, n = 1 - op, n, m
    status = getattr(library, f"cublas{kind.upper()}gemv_v2")(
        handle, op, m, n, ctypes.byref(scalar(alpha)), ctypes.c_void_p(a), lda,
        ctypes.c_void_p(x), incx, ctypes.byref(scalar(beta)), ctypes.c_void_p(y), incy,
    )  # fmt: skip
    if status:
        raise RuntimeError(f"cublas{kind.upper()}gemv failed with status {status}")


def _cublas_gemm(kind: str, order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) -> None:
    """CBLAS's `?gemm` on device pointers, by cuBLAS (column-major)."""
    scalar = ctypes.c_float if kind == "s" else ctypes.c_double
    library, handle = _cublas()
    call = getattr(library, f"cublas{kind.upper()}gemm_v2")
    alpha_, beta_ = ctypes.byref(scalar(alpha)), ctypes.byref(scalar(beta))
    a_, b_, c_ = ctypes.c_void_p(a), ctypes.c_void_p(b), ctypes.c_void_p(c)
    if order == _CBLAS_ROW_MAJOR:  # C^T = op(B)^T op(A)^T in column-major terms
        status = call(
            handle, _cublas_op(tb), _cublas_op(ta), n, m, k, alpha_, b_, ldb, a_, lda,
            beta_, c_, ldc,
        )  # fmt: skip
    else:
        status = call(
            handle, _cublas_op(ta), _cublas_op(tb), m, n, k, alpha_, a_, lda, b_, ldb,
            beta_, c_, ldc,
        )  # fmt: skip
    if status:
        raise RuntimeError(f"cublas{kind.upper()}gemm failed with status {status}")


_I, _P, _F, _D, _L = (
    ctypes.c_int32,
    ctypes.c_void_p,
    ctypes.c_float,
    ctypes.c_double,
    ctypes.c_int64,
)


def _callbacks() -> dict[str, Any]:
    gemv = [_I, _I, _I, _I, None, _P, _I, _P, _I, None, _P, _I]
    gemm = [_I, _I, _I, _I, _I, _I, None, _P, _I, _P, _I, None, _P, _I]
    table: dict[str, Any] = {
        "arignote_gpu_launch": ctypes.CFUNCTYPE(_L, _L, _P, _L, _L, _L)(_launch),
        "arignote_gpu_malloc": ctypes.CFUNCTYPE(_P, _L)(_malloc),
        "arignote_gpu_free": ctypes.CFUNCTYPE(None, _P)(_free),
        "arignote_gpu_read": ctypes.CFUNCTYPE(None, _P, _P, _L)(_read),
    }
    for kind, scalar in (("s", _F), ("d", _D)):
        args = [scalar if t is None else t for t in gemv]
        table[f"arignote_gpu_cblas_{kind}gemv"] = ctypes.CFUNCTYPE(None, *args)(_gemv(kind))
        args = [scalar if t is None else t for t in gemm]
        table[f"arignote_gpu_cblas_{kind}gemm"] = ctypes.CFUNCTYPE(None, *args)(_gemm(kind))
    return table


_SYMBOLS: dict[str, Any] = {}


def _register_symbols() -> None:
    """Bind the callback symbols in llvmlite's process-wide symbol table (once)."""
    if _SYMBOLS:
        return
    import llvmlite.binding as llvm

    _SYMBOLS.update(_callbacks())
    for name, callback in _SYMBOLS.items():
        llvm.add_symbol(name, ctypes.cast(callback, ctypes.c_void_p).value)


# --- functions ------------------------------------------------------------------------------


class GpuFunction:
    """A GPU-compiled tensor function (see the module doc)."""

    def __init__(
        self,
        host: NativeModule,
        name: str,
        inputs: Sequence[Any],
        outputs: Sequence[Any],
        messages: Sequence[str],
        aliases: Mapping[int, int] | None,
        kernels: Sequence[str],
        ptx: str,
        shape_reads: Sequence[int] = (),
        host_ir: str = "",
    ):
        device = require()
        self.name = name
        self.inputs: list[TensorSpec] = [_spec(s) for s in inputs]
        self.outputs: list[TensorSpec] = [_spec(s) for s in outputs]
        self.messages = list(messages)
        self.aliases = dict(aliases or {})
        self.shape_reads = frozenset(shape_reads)
        """Inputs whose contents the shape function reads (a host copy is passed)."""
        self.ptx = ptx
        self.kernel_names = list(kernels)
        self.launches = 0
        """Kernel launches made by all calls so far."""
        self._host = host
        pointers = [ctypes.c_void_p] * len(self.inputs)
        self._shape_fn = ctypes.CFUNCTYPE(
            ctypes.c_int32, *pointers, ctypes.c_void_p, ctypes.c_void_p
        )(host.address(name + SHAPE_SUFFIX))
        outs = [ctypes.c_void_p] * len(self.outputs)
        self._compute_fn = ctypes.CFUNCTYPE(ctypes.c_int64, *pointers, *outs)(host.address(name))
        self._kernels = device.load(self.kernel_names, ptx, host_ir)

    def kernel(self, index: int) -> Any:
        return self._kernels[index]

    def __call__(self, *arrays: Any) -> list[Any]:
        if len(arrays) != len(self.inputs):
            raise TypeError(f"{self.name} takes {len(self.inputs)} arrays, got {len(arrays)}")
        device = require()
        on_device = [to_device(a) for a in arrays]
        keep: list[Any] = []
        shape_args = []
        for i, (spec, array) in enumerate(zip(self.inputs, on_device, strict=True)):
            if array.ndim != spec.rank:
                raise TypeError(
                    f"{self.name}: expected an array of rank {spec.rank}, got shape {array.shape}"
                )
            if i in self.shape_reads:
                host = np.asarray(to_host(arrays[i]), order="C")
                keep.append(host)
                shape_args.append(_host_descriptor(host, keep))
            else:
                shape_args.append(_device_descriptor(array, keep))
        n_dims = max(1, sum(s.rank for s in self.outputs))
        n_err = err_length(self.messages)
        dims = np.zeros(n_dims, np.int64)
        err = np.zeros(n_err, np.int64)
        code = self._shape_fn(
            *shape_args, _host_descriptor(dims, keep), _host_descriptor(err, keep)
        )
        if code != 0:
            self._raise_check(code, err)
        results, offset = [], 0
        for j, spec in enumerate(self.outputs):
            shape = tuple(int(d) for d in dims[offset : offset + spec.rank])
            offset += spec.rank
            donor = self.aliases.get(j)
            if (
                donor is not None
                and arrays[donor] is on_device[donor]
                and on_device[donor].shape == shape
            ):
                results.append(on_device[donor])  # the caller's device buffer, updated in place
            else:
                results.append(empty(shape, spec.dtype))
        compute_args = [_device_descriptor(a, keep) for a in on_device]
        compute_args += [_device_descriptor(r, keep) for r in results]
        _CALLS.function, _CALLS.error = self, None
        try:
            status = self._compute_fn(*compute_args)
        finally:
            error, _CALLS.function, _CALLS.error = _CALLS.error, None, None
        if error is not None:
            raise error
        if status:
            raise allocation_error(self.name, status, 64)
        device.synchronize()
        return results

    def _raise_check(self, code: int, err: np.ndarray) -> None:
        if code < 0:
            raise allocation_error(self.name, code, 32)
        if not 1 <= code <= len(self.messages):
            raise ValueError(f"{self.name}: shape check {code} failed")
        template = self.messages[code - 1]
        values = tuple(int(v) for v in err[1 : 1 + message_arity(template)])
        raise ValueError(template % values)


def _host_descriptor(array: np.ndarray, keep: list[Any]) -> int:
    itemsize = array.itemsize
    d = descriptor_struct(array.ndim)()
    d.allocated = d.aligned = array.ctypes.data
    d.offset = 0
    if array.ndim:
        d.sizes[:] = array.shape
        d.strides[:] = [s // itemsize for s in array.strides]
    keep.append(d)
    return ctypes.addressof(d)


def _device_descriptor(array: Any, keep: list[Any]) -> int:
    itemsize = array.dtype.itemsize
    d = descriptor_struct(array.ndim)()
    pointer = int(array.gpudata) if array.size else 0
    d.allocated = d.aligned = pointer
    d.offset = 0
    if array.ndim:
        d.sizes[:] = array.shape
        d.strides[:] = [s // itemsize for s in array.strides]
    keep.append(d)
    return ctypes.addressof(d)
