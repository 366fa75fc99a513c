"""The CUDA runtime: kernels in PTX, host code on the CPU calling the driver directly.

A GPU function is the host half of the GPU split (compiled for the CPU like any native
function, `arignote.runtime.cpu.NativeModule`, with the split's launcher linked in) and a
PTX module of kernels. The host code launches kernels, allocates device memory, reads
device scalars and calls cuBLAS through the functions of `arignote.runtime.cuda_native`
(machine code calling the CUDA driver and cuBLAS: no Python between two launches). Its
kernel table (`<f>__gpu_kernels`) holds the `CUfunction` of each launch site, filled when
the PTX module is loaded (`cuModuleLoadData`, which JIT-compiles the PTX for the GPU).

pycuda provides the device arrays (`pycuda.gpuarray.GPUArray`) of inputs, outputs and
shared variables, and the copies between host and device; their memory comes from the
device's stream-ordered pool (`cuMemAllocAsync`, `DeviceBuffer`), like the host code's
temporaries. The device's primary context is made current on each calling thread with
the driver API (pycuda's context stack stays empty, so nothing depends on the order in
which Python frees objects at exit). `GpuFunction(...)(*arrays)` takes NumPy arrays (copied
to the device) or GPUArrays (used in place) and returns GPUArrays.

The device is a `PycudaDevice`, or, in tests, the CPU emulation of
`arignote.runtime.cuda_emulator` (`emulate()`, or `ARIGNOTE_CUDA_EMULATE=1` in the
environment): the same host code and kernel table, its kernels run on the CPU.

Requirements are checked when first needed (`require()`): pycuda importable (`pip install
"arignote[gpu]"`), a CUDA driver, and a GPU; `CudaUnavailableError` names what is missing.
A CUDA call that fails while a function runs stops its remaining launches; the call then
raises `CudaError` (`MemoryError` for device memory that could not be allocated).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import sys
import threading
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from arignote.runtime.cpu import NativeModule
from arignote.runtime.native import (
    NativeFunction,
    TensorSpec,
    _Frame,
    _spec,
    abi_functions,
    allocation_error,
)


class CudaUnavailableError(RuntimeError):
    """What the GPU target needs is missing (pycuda, the driver, a GPU, cuBLAS)."""


class CudaError(RuntimeError):
    """A CUDA call failed while a GPU function ran."""


BLOCKS_PER_SM = 16
"""A launch of n iterations runs min(ceil(n / 256), 16 × multiprocessors) blocks of up
to 256 threads; each thread strides over the grid (`arignote.lowering.gpu.split`)."""

_CUDA_ERROR_OUT_OF_MEMORY = 2
_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4
_MEMPOOL_ATTR_USED_MEM_HIGH = 8


def _ordinal(device: str) -> int:
    """`cuda` → 0, `cuda1` → 1, `gpu0` → 0."""
    for prefix in ("cuda", "gpu"):
        if device.startswith(prefix):
            rest = device[len(prefix) :]
            return int(rest) if rest else 0
    raise ValueError(f"config.device={device!r} is not a CUDA device (cuda, cuda0, cuda1, ...)")


@cache
def _cublas_library() -> ctypes.CDLL | None:
    """cuBLAS from the CUDA toolkit or the `nvidia-cublas` wheel, or None."""
    candidates = []
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root:
            candidates += sorted(glob.glob(os.path.join(root, "lib64", "libcublas.so*")))
    for path in sys.path:
        for pattern in ("nvidia/cu*/lib/libcublas.so*", "nvidia/cublas/lib/libcublas.so*"):
            candidates += sorted(glob.glob(os.path.join(path, pattern)))
    found = ctypes.util.find_library("cublas")
    if found:
        candidates.append(found)
    for candidate in candidates:
        try:
            return ctypes.CDLL(candidate)
        except OSError:
            continue
    return None


class PycudaDevice:
    """A CUDA GPU: pycuda's primary context and device arrays, the native runtime."""

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

        dev = driver.Device(ordinal)
        self.driver, self.gpuarray = driver, gpuarray
        self.name = dev.name()
        self.capability: tuple[int, int] = dev.compute_capability()
        sms = dev.get_attribute(driver.device_attribute.MULTIPROCESSOR_COUNT)
        self.max_blocks = BLOCKS_PER_SM * sms
        self.libcuda = ctypes.CDLL("libcuda.so.1")
        self._device = ctypes.c_int()
        self._call("cuDeviceGet", ctypes.byref(self._device), ordinal)
        self.context = ctypes.c_void_p()
        self._call("cuDevicePrimaryCtxRetain", ctypes.byref(self.context), self._device)
        self._call("cuCtxPushCurrent_v2", self.context)
        self._threads = {threading.get_ident()}
        self._keep_freed_memory()
        self._native: Any = None
        self._cublas: ctypes.c_void_p | None = None
        self._modules: list[ctypes.c_void_p] = []
        self._templates: dict[tuple[tuple[int, ...], np.dtype], Any] = {}

    def _call(self, name: str, *args: Any) -> None:
        result = getattr(self.libcuda, name)(*args)
        if result != 0:
            raise CudaUnavailableError(f"{name} failed with CUDA error {result}")

    def _keep_freed_memory(self) -> None:
        """Have the device's memory pool (of `cuMemAllocAsync`) keep what is freed."""
        pool = ctypes.c_void_p()
        self._pool: ctypes.c_void_p | None = None
        if self.libcuda.cuDeviceGetDefaultMemPool(ctypes.byref(pool), self._device) != 0:
            return
        self._pool = pool
        threshold = ctypes.c_uint64(2**64 - 1)
        self.libcuda.cuMemPoolSetAttribute(
            pool, _MEMPOOL_ATTR_RELEASE_THRESHOLD, ctypes.byref(threshold)
        )

    def make_current(self) -> None:
        """The device's (primary) context current on this thread (once per thread)."""
        ident = threading.get_ident()
        if ident not in self._threads:
            self._call("cuCtxSetCurrent", self.context)
            self._threads.add(ident)

    # --- the native runtime ----------------------------------------------------------------

    def register_symbols(self, uses_blas: bool) -> None:
        """Bind the host code's `arignote_gpu_*` to the native runtime (compiled once)."""
        import llvmlite.binding as llvm

        from arignote.runtime import cuda_native

        if uses_blas and self._cublas is None:
            self._cublas = self._create_cublas()
        if self._native is None:
            for name in cuda_native.DRIVER_FUNCTIONS:
                llvm.add_symbol(
                    name, ctypes.cast(getattr(self.libcuda, name), ctypes.c_void_p).value
                )
            library = _cublas_library()
            for name in cuda_native.CUBLAS_FUNCTIONS:
                function = getattr(library, name) if library is not None else _NO_CUBLAS
                llvm.add_symbol(name, ctypes.cast(function, ctypes.c_void_p).value)
            self._native = _compile_native(cuda_native.NATIVE_IR)
            self._word("max_blocks").value = self.max_blocks
            self._status = self._word("status")
            self._launches = self._word("launches")
            self._cublas_slot = self._word("cublas", ctypes.c_void_p)
            self._event_slots = self._word("events", ctypes.c_void_p)
            self._event_kernel_slots = self._word("event_kernels", ctypes.c_void_p)
            self._event_capacity = self._word("event_capacity")
            self._event_count = self._word("event_count")
        if self._cublas is not None:
            self._cublas_slot.value = self._cublas.value
        for name in cuda_native.EXPORTED:
            llvm.add_symbol(name, self._native.get_function_address(name))

    def _word(self, name: str, ctype: Any = ctypes.c_int64) -> Any:
        """The native runtime's global `arignote_gpu_<name>`, read and written in place."""
        return ctype.from_address(self._native.get_global_value_address(f"arignote_gpu_{name}"))

    def _create_cublas(self) -> ctypes.c_void_p:
        library = _cublas_library()
        if library is None:
            raise CudaUnavailableError(
                "the GPU target computes dot products with cuBLAS, which was not found: "
                "install the CUDA toolkit (set CUDA_HOME) or the nvidia-cublas wheel"
            )
        handle = ctypes.c_void_p()
        status = library.cublasCreate_v2(ctypes.byref(handle))
        if status != 0:
            raise CudaUnavailableError(f"cublasCreate failed with status {status}")
        return handle

    def load(
        self, kernels: Sequence[str], ptx: str, host_ir: str, strided: Sequence[bool] = ()
    ) -> list[int]:
        """The `CUfunction` of each kernel of `ptx` (loaded with `cuModuleLoadData`)."""
        module = ctypes.c_void_p()
        source = ctypes.create_string_buffer(ptx.encode())
        result = self.libcuda.cuModuleLoadData(ctypes.byref(module), source)
        if result != 0:
            raise CudaError(f"cuModuleLoadData failed with error {result} (the PTX was rejected)")
        self._modules.append(module)
        handles = []
        for name in kernels:
            function = ctypes.c_void_p()
            result = self.libcuda.cuModuleGetFunction(ctypes.byref(function), module, name.encode())
            if result != 0:
                raise CudaError(f"cuModuleGetFunction({name}) failed with error {result}")
            handles.append(function.value)
        return handles

    def check(self) -> None:
        """Raise what failed in the host code's CUDA calls since the last check."""
        status = self._status.value
        if status:
            from arignote.runtime.cuda_native import describe

            self._status.value = 0
            if -status == 2000 + _CUDA_ERROR_OUT_OF_MEMORY:
                raise MemoryError(f"out of GPU memory: {describe(status)}")
            raise CudaError(describe(status))

    def launches(self) -> int:
        return self._launches.value if self._native is not None else 0

    # --- profiling ---------------------------------------------------------------------------

    EVENT_CAPACITY = 4096
    """Launches a profiled call times at most (CUDA event pairs)."""

    def start_profile(self) -> None:
        """Time the launches from now on (`cuEventRecord` pairs in the native launcher)
        and reset the device pool's high-water mark of used memory."""
        if not hasattr(self, "_events"):
            self._events = (ctypes.c_void_p * (2 * self.EVENT_CAPACITY))()
            for k in range(2 * self.EVENT_CAPACITY):
                event = ctypes.c_void_p()
                self._call("cuEventCreate", ctypes.byref(event), 0)
                self._events[k] = event.value
            self._event_kernels = (ctypes.c_void_p * self.EVENT_CAPACITY)()
        self._event_slots.value = ctypes.addressof(self._events)
        self._event_kernel_slots.value = ctypes.addressof(self._event_kernels)
        self._event_capacity.value = self.EVENT_CAPACITY
        self._event_count.value = 0
        if self._pool is not None:
            zero = ctypes.c_uint64(0)
            self.libcuda.cuMemPoolSetAttribute(
                self._pool, _MEMPOOL_ATTR_USED_MEM_HIGH, ctypes.byref(zero)
            )

    def stop_profile(self) -> tuple[list[tuple[int, float]], int]:
        """The (kernel, seconds) of each launch timed since `start_profile` (after waiting
        for the device), and the pool's peak of used device memory in bytes."""
        self._event_slots.value = None
        count = self._event_count
        self.synchronize()
        timed = []
        milliseconds = ctypes.c_float()
        for j in range(count.value):
            start, end = self._events[2 * j], self._events[2 * j + 1]
            self._call("cuEventElapsedTime", ctypes.byref(milliseconds), start, end)
            timed.append((self._event_kernels[j], milliseconds.value / 1000.0))
        count.value = 0
        peak = ctypes.c_uint64(0)
        if self._pool is not None:
            self.libcuda.cuMemPoolGetAttribute(
                self._pool, _MEMPOOL_ATTR_USED_MEM_HIGH, ctypes.byref(peak)
            )
        return timed, peak.value

    # --- arrays --------------------------------------------------------------------------

    def to_device(self, host: np.ndarray) -> Any:
        result = self.empty(host.shape, host.dtype)
        if host.size:
            result.set(host)
        return result

    def empty(self, shape: Sequence[int], dtype: np.dtype) -> Any:
        """A new GPUArray: a copy of the cached array object of that shape and dtype
        (pycuda's constructor queries the device each time, ~15 µs) with fresh memory."""
        key = (tuple(shape), np.dtype(dtype))
        template = self._templates.get(key)
        if template is None:
            template = self.gpuarray.GPUArray(key[0], key[1], allocator=self.allocate, gpudata=0)
            if len(self._templates) < 1024:
                self._templates[key] = template
        # (not `copy.copy`: pycuda registers a pickling reduction for GPUArray, which
        # `copy.copy` uses, and it copies the device data back to the host)
        array = object.__new__(type(template))
        array.__dict__.update(template.__dict__)
        array.gpudata = self.allocate(array.nbytes) if array.size else None
        return array

    def allocate(self, size: int) -> DeviceBuffer:
        """`size` bytes of device memory (from the device's pool, `cuMemAllocAsync`)."""
        address = ctypes.c_uint64()
        result = self.libcuda.cuMemAllocAsync(ctypes.byref(address), ctypes.c_size_t(size), None)
        if result == _CUDA_ERROR_OUT_OF_MEMORY:
            raise MemoryError(f"out of GPU memory: {size} bytes could not be allocated")
        if result != 0:
            raise CudaError(f"cuMemAllocAsync failed with error {result}")
        return DeviceBuffer(address.value, size, self.libcuda)

    def synchronize(self) -> None:
        result = self.libcuda.cuCtxSynchronize()
        if result != 0:
            raise CudaError(f"the GPU reported error {result} (cuCtxSynchronize)")

    def shutdown(self) -> None:
        """At exit: wait for the device. The context stays current: device arrays freed
        later (at interpreter teardown) are freed in it; pycuda's own context stack, which
        aborts the process if not empty at its cleanup, is never used."""
        self.libcuda.cuCtxSynchronize()


class DeviceBuffer(int):
    """Device memory of a GPUArray (its `gpudata`: an `int`, the address, as pycuda's
    copies take it), freed with `cuMemFreeAsync` when the array goes (where the context
    is gone, at the very end of the process, the error is ignored: the driver reclaims
    it)."""

    def __new__(cls, address: int, size: int, libcuda: ctypes.CDLL) -> DeviceBuffer:
        self = super().__new__(cls, address)
        self.size, self._libcuda = size, libcuda
        return self

    def __del__(self) -> None:
        try:
            self._libcuda.cuMemFreeAsync(ctypes.c_uint64(int(self)), None)
        except Exception:  # noqa: BLE001 - at interpreter teardown
            pass


@ctypes.CFUNCTYPE(ctypes.c_int)
def _NO_CUBLAS() -> int:  # noqa: N802 - bound in place of cuBLAS where there is none
    return 1  # CUBLAS_STATUS_NOT_INITIALIZED


def _compile_native(text: str) -> Any:
    """An MCJIT engine of the native runtime's LLVM IR (kept for the process)."""
    from arignote.runtime.cpu import _compile, _load, host_target_machine

    machine = host_target_machine()
    _, _, object_code = _compile(text, (), machine)
    engine = _load(object_code, machine)
    _ENGINES.append(engine)
    return engine


_ENGINES: list[Any] = []
_DEVICE: Any = None
_EMULATE: list[bool] = [os.environ.get("ARIGNOTE_CUDA_EMULATE") == "1"]
"""Whether the CPU emulation stands in for the GPU (`emulate()`; in a whole process with
the environment variable `ARIGNOTE_CUDA_EMULATE=1`, as the tests run programs)."""
_LOCK = threading.Lock()


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
        return _DEVICE


class emulate:  # noqa: N801 - used as a context manager, like a function
    """`with emulate():` GPU functions run on the CPU emulation of the device
    (`arignote.runtime.cuda_emulator`): the same host code, kernel table and launches,
    each kernel's task compiled for the CPU. For tests on machines without a GPU."""

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
    device = _DEVICE
    if device is None or device.emulated:
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


def launches() -> int:
    """Kernel launches made in this process so far (by the current device)."""
    return require().launches()


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


# --- functions ------------------------------------------------------------------------------


class KernelProfile:
    """What a profiled GPU function's kernels took: per kernel, its launches and GPU
    seconds (CUDA events around each launch), and the peak of device memory in use."""

    def __init__(self) -> None:
        self.kernels: dict[str, list[Any]] = {}
        """Kernel name → [source, launches, seconds]."""
        self.peak_bytes = 0

    def add(self, name: str, source: str, seconds: float) -> None:
        entry = self.kernels.setdefault(name, [source, 0, 0.0])
        entry[1] += 1
        entry[2] += seconds

    @property
    def total(self) -> float:
        return sum(entry[2] for entry in self.kernels.values())


class GpuFunction:
    """A GPU-compiled tensor function (see the module doc): `module` is the compiled host
    code of the GPU split (with its launcher), `table` its kernel table's symbol
    (`compile` and `from_object` make the module)."""

    def __init__(
        self,
        module: NativeModule,
        table: str,
        name: str,
        inputs: Sequence[Any],
        outputs: Sequence[Any],
        messages: Sequence[str],
        aliases: Mapping[int, int] | None,
        kernels: Sequence[str],
        ptx: str,
        shape_reads: Sequence[int] = (),
        host_ir: str = "",
        uses_blas: bool = False,
        sources: Sequence[str] = (),
        strided: Sequence[bool] = (),
    ):
        device = self.device = require()
        self.name = name
        self.inputs: list[TensorSpec] = [_spec(s) for s in inputs]
        self.outputs: list[TensorSpec] = [_spec(s) for s in outputs]
        self.messages = list(messages)
        self.aliases = dict(aliases or {})
        self.shape_reads = frozenset(shape_reads)
        """Inputs whose contents the shape function reads (a host copy is passed)."""
        self.ptx = ptx
        self.kernel_names = list(kernels)
        self.kernel_sources = list(sources)
        self.kernel_strided = list(strided)
        self.table, self.uses_blas, self.host_ir = table, uses_blas, host_ir
        self._host = module
        handles = device.load(self.kernel_names, ptx, host_ir, self.kernel_strided)
        if handles:
            slots = (ctypes.c_void_p * len(handles)).from_address(self._host.global_address(table))
            slots[:] = handles
        self._kernel_of = {
            handle: (name.removesuffix("__kernel"), source)
            for handle, name, source in zip(
                handles, self.kernel_names, [*sources, *["?"] * len(handles)], strict=False
            )
        }
        self.profile: KernelProfile | None = None
        """When set, each call adds its kernels' GPU times to it."""
        self._shape_fn, self._compute_fn = abi_functions(module, name, inputs, outputs)
        self._lock = threading.Lock()
        self._frame = _Frame(self)
        self._array_type = type(device.empty((0,), np.dtype(np.float32)))

    def __call__(self, *arrays: Any) -> list[Any]:
        if len(arrays) != len(self.inputs):
            raise TypeError(f"{self.name} takes {len(self.inputs)} arrays, got {len(arrays)}")
        device = self.device
        device.make_current()
        on_device = [a if type(a) is self._array_type else to_device(a) for a in arrays]
        values = self._input_values(on_device)
        with self._lock:  # one frame; the native runtime's status word is per process
            frame = self._frame
            buffer = frame.buffer
            keep = self._pack_shape_inputs(frame, values, arrays)
            code = self._shape_fn(*frame.shape_args)
            del keep
            if code != 0:
                self._raise_check(code, buffer, frame.err_offset)
            if self.shape_reads:
                frame.inputs.pack_into(buffer, 0, *values)  # the device arrays again
            results = self._results(
                frame.dims.unpack_from(buffer, frame.dims_offset), arrays, on_device
            )
            out: list[int] = []
            for result in results:
                _device_values(out, result)
            if out:
                frame.outputs.pack_into(buffer, frame.outputs_offset, *out)
            profile = self.profile
            if profile is not None:
                device.start_profile()
            status = self._compute_fn(*frame.compute_args)
            if profile is not None:
                self._record(profile, *device.stop_profile())
            device.check()
        if status:
            raise allocation_error(self.name, status, 64)
        device.synchronize()
        return results

    @classmethod
    def compile(cls, host: ModuleOp, launcher: str, *args: Any, **kwargs: Any) -> GpuFunction:
        """Compile the host module `host` (with the split's `launcher` IR linked in) for
        the CPU, load the kernels; `args`/`kwargs`: the constructor's after `module`."""
        require().register_symbols(kwargs.get("uses_blas", False))
        return cls(NativeModule(host, [launcher]), *args, **kwargs)

    @classmethod
    def from_object(cls, object_code: bytes, *args: Any, **kwargs: Any) -> GpuFunction:
        """A function of the compile cache: the host module's object code (made by
        `compile` in this or another process on this host) and what it was made with."""
        require().register_symbols(kwargs.get("uses_blas", False))
        return cls(NativeModule.from_object(object_code, False), *args, **kwargs)

    @property
    def object_code(self) -> bytes:
        return self._host.object_code

    @property
    def imports(self) -> tuple[str, ...] | None:
        return self._host.imports

    def _input_values(self, on_device: Sequence[Any]) -> list[int]:
        """The descriptor fields of the device inputs (their ranks checked)."""
        values: list[int] = []
        for spec, array in zip(self.inputs, on_device, strict=True):
            if array.ndim != spec.rank:
                raise TypeError(
                    f"{self.name}: expected an array of rank {spec.rank}, got shape {array.shape}"
                )
            _device_values(values, array)
        return values

    def _pack_shape_inputs(self, frame: Any, values: list[int], arrays: Sequence[Any]) -> list[Any]:
        """The inputs' descriptors for the shape function: device arrays, except host
        copies of those whose contents it reads (kept alive by the returned list)."""
        if not self.shape_reads:
            frame.inputs.pack_into(frame.buffer, 0, *values)
            return []
        keep, shape_values = [], []
        for i, array in enumerate(arrays):
            if i in self.shape_reads:
                host = np.asarray(to_host(array), order="C")
                keep.append(host)
                _host_values(shape_values, host)
            else:
                _device_values(shape_values, to_device(array))
        frame.inputs.pack_into(frame.buffer, 0, *shape_values)
        return keep

    def _record(self, profile: KernelProfile, timed: list[tuple[int, float]], peak: int) -> None:
        for handle, seconds in timed:
            name, source = self._kernel_of.get(handle, (hex(handle), "?"))
            profile.add(name, source, seconds)
        profile.peak_bytes = max(profile.peak_bytes, peak)

    def _results(
        self, dims: Sequence[int], arrays: Sequence[Any], on_device: Sequence[Any]
    ) -> list[Any]:
        """The output buffers: a donor input's device array (updated in place), else new."""
        results, offset = [], 0
        for j, spec in enumerate(self.outputs):
            shape = tuple(dims[offset : offset + spec.rank])
            offset += spec.rank
            donor = self.aliases.get(j)
            if (
                donor is not None
                and arrays[donor] is on_device[donor]
                and on_device[donor].shape == shape
            ):
                results.append(on_device[donor])
            else:
                results.append(empty(shape, spec.dtype))
        return results

    _raise_check = NativeFunction._raise_check


def _host_values(values: list[int], array: np.ndarray) -> None:
    """Appends the memref descriptor fields of the host array `array`."""
    pointer = array.ctypes.data
    values += (pointer, pointer, 0, *array.shape)
    values += [s // array.itemsize for s in array.strides]


def _device_values(values: list[int], array: Any) -> None:
    """Appends the memref descriptor fields of the device array `array`."""
    pointer = int(array.gpudata) if array.size else 0
    itemsize = array.dtype.itemsize
    values += (pointer, pointer, 0, *array.shape)
    values += [s // itemsize for s in array.strides]
