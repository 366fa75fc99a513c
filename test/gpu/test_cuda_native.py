"""The native half of the CUDA runtime (`arignote.runtime.cuda_native`), on the CPU: its
LLVM IR compiled with the driver and cuBLAS functions replaced by fakes written here, which
record what they are given (a launch's grid and parameters) or compute on host memory
(cuBLAS's column-major products, so that the CBLAS → cuBLAS translation is checked
against NumPy)."""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import pytest

from arignote.runtime import cuda_native
from arignote.runtime.cpu import _compile, _load, host_target_machine

P, I32, I64 = ctypes.c_void_p, ctypes.c_int32, ctypes.c_int64
LAUNCHES: list[dict[str, Any]] = []
RESULTS = {"launch": 0, "alloc": 0}


def _launch(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra) -> int:  # noqa: ANN001
    slots = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))
    LAUNCHES.append(
        {
            "kernel": f,
            "grid": (gx, gy, gz),
            "block": (bx, by, bz),
            "lower": ctypes.c_int64.from_address(slots[0]).value,
            "upper": ctypes.c_int64.from_address(slots[1]).value,
            "ctx": slots[2],
        }
    )
    return RESULTS["launch"]


RECORDED: list[int] = []


def _record(event, stream) -> int:  # noqa: ANN001
    RECORDED.append(event)
    return 0


def _alloc(slot, size, stream) -> int:  # noqa: ANN001
    if RESULTS["alloc"]:
        return RESULTS["alloc"]
    ctypes.c_uint64.from_address(slot).value = 0x1000 + size
    return 0


def _free(address, stream) -> int:  # noqa: ANN001
    return 0


def _dtoh(host, device, size) -> int:  # noqa: ANN001
    ctypes.memmove(host, device, size)
    return 0


def _matrix(address: int, rows: int, cols: int, ld: int, dtype: type) -> np.ndarray:
    """A column-major `rows x cols` matrix with leading dimension `ld` at `address`."""
    flat = np.ctypeslib.as_array(
        ctypes.cast(address, ctypes.POINTER(np.ctypeslib.as_ctypes_type(dtype))), (ld * cols,)
    )
    return np.lib.stride_tricks.as_strided(flat, (rows, cols), (flat.itemsize, ld * flat.itemsize))


def _op(a: np.ndarray, op: int) -> np.ndarray:
    return a if op == 0 else a.T


def _gemv(dtype: type):  # noqa: ANN202
    scalar = ctypes.c_float if dtype == np.float32 else ctypes.c_double

    def gemv(handle, op, m, n, alpha, a, lda, x, incx, beta, y, incy) -> int:  # noqa: ANN001
        a_ = _matrix(a, m, n, lda, dtype)
        rows, cols = (m, n) if op == 0 else (n, m)
        x_ = np.ctypeslib.as_array(
            ctypes.cast(x, ctypes.POINTER(np.ctypeslib.as_ctypes_type(dtype))), (cols,)
        )
        y_ = np.ctypeslib.as_array(
            ctypes.cast(y, ctypes.POINTER(np.ctypeslib.as_ctypes_type(dtype))), (rows,)
        )
        al = ctypes.cast(alpha, ctypes.POINTER(scalar))[0]
        be = ctypes.cast(beta, ctypes.POINTER(scalar))[0]
        y_[:] = al * (_op(a_, op) @ x_) + be * y_
        return 0

    return gemv


def _gemm(dtype: type):  # noqa: ANN202
    scalar = ctypes.c_float if dtype == np.float32 else ctypes.c_double

    def gemm(handle, opa, opb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) -> int:  # noqa: ANN001
        a_ = _matrix(a, *((m, k) if opa == 0 else (k, m)), lda, dtype)
        b_ = _matrix(b, *((k, n) if opb == 0 else (n, k)), ldb, dtype)
        c_ = _matrix(c, m, n, ldc, dtype)
        al = ctypes.cast(alpha, ctypes.POINTER(scalar))[0]
        be = ctypes.cast(beta, ctypes.POINTER(scalar))[0]
        c_[:] = al * (_op(a_, opa) @ _op(b_, opb)) + be * c_
        return 0

    return gemm


_GEMV_ARGS = [P, I32, I32, I32, P, P, I32, P, I32, P, P, I32]
_GEMM_ARGS = [P, I32, I32, I32, I32, I32, P, P, I32, P, I32, P, P, I32]
FAKES = {
    "cuLaunchKernel": ctypes.CFUNCTYPE(I32, P, *[ctypes.c_uint32] * 7, P, P, P)(_launch),
    "cuEventRecord": ctypes.CFUNCTYPE(I32, P, P)(_record),
    "cuMemAllocAsync": ctypes.CFUNCTYPE(I32, P, I64, P)(_alloc),
    "cuMemFreeAsync": ctypes.CFUNCTYPE(I32, ctypes.c_uint64, P)(_free),
    "cuMemcpyDtoH_v2": ctypes.CFUNCTYPE(I32, P, ctypes.c_uint64, I64)(_dtoh),
    "cublasSgemv_v2": ctypes.CFUNCTYPE(I32, *_GEMV_ARGS)(_gemv(np.float32)),
    "cublasDgemv_v2": ctypes.CFUNCTYPE(I32, *_GEMV_ARGS)(_gemv(np.float64)),
    "cublasSgemm_v2": ctypes.CFUNCTYPE(I32, *_GEMM_ARGS)(_gemm(np.float32)),
    "cublasDgemm_v2": ctypes.CFUNCTYPE(I32, *_GEMM_ARGS)(_gemm(np.float64)),
}


@pytest.fixture(scope="module")
def native() -> Any:
    """The native runtime compiled against the fakes (its names prefixed `test_`, so
    that nothing else in the process binds to them)."""
    import llvmlite.binding as llvm

    text = cuda_native.NATIVE_IR
    for name, fake in FAKES.items():
        text = text.replace(f"@{name}(", f"@test_{name}(")
        llvm.add_symbol(f"test_{name}", ctypes.cast(fake, ctypes.c_void_p).value)
    for name in cuda_native.EXPORTED:
        text = text.replace(f"@{name}(", f"@test_{name}(")
    text = text.replace("@arignote_gpu_", "@test_arignote_gpu_")
    machine = host_target_machine()
    engine = _load(_compile(text, (), machine)[2], machine)

    class Native:
        def function(self, name: str, *types: Any) -> Any:
            return ctypes.CFUNCTYPE(*types)(engine.get_function_address(f"test_{name}"))

        def word(self, name: str, ctype: Any = ctypes.c_int64) -> Any:
            return ctype.from_address(engine.get_global_value_address(f"test_{name}"))

    n = Native()
    n.engine = engine
    n.word("arignote_gpu_max_blocks").value = 2112
    n.word("arignote_gpu_cublas", ctypes.c_void_p).value = 0x5EED
    return n


def _launcher(native: Any) -> Any:
    return native.function("arignote_gpu_launch", I64, P, P, I64, I64, I64)


@pytest.mark.parametrize(
    ("lower", "upper", "grid", "block"),
    [(0, 1, 1, 1), (0, 10, 1, 10), (5, 1005, 4, 256), (0, 10_000_000, 2112, 256)],
)
def test_launch_geometry_and_parameters(
    native: Any, lower: int, upper: int, grid: int, block: int
) -> None:
    LAUNCHES.clear()
    ctx = ctypes.create_string_buffer(24)
    before = native.word("arignote_gpu_launches").value
    assert _launcher(native)(0xABC, ctypes.addressof(ctx), 24, lower, upper) == 1
    (launch,) = LAUNCHES
    assert launch["kernel"] == 0xABC
    assert launch["grid"] == (grid, 1, 1) and launch["block"] == (block, 1, 1)
    assert (launch["lower"], launch["upper"], launch["ctx"]) == (
        lower,
        upper,
        ctypes.addressof(ctx),
    )
    assert native.word("arignote_gpu_launches").value == before + 1


def test_empty_range_launches_nothing(native: Any) -> None:
    LAUNCHES.clear()
    assert _launcher(native)(0xABC, None, 0, 7, 7) == 1
    assert LAUNCHES == []


def test_a_failure_is_kept_and_stops_what_follows(native: Any) -> None:
    status = native.word("arignote_gpu_status")
    malloc = native.function("arignote_gpu_malloc", P, I64)
    assert malloc(100) == 0x1000 + 100
    RESULTS["alloc"] = 2  # CUDA_ERROR_OUT_OF_MEMORY
    try:
        assert malloc(1 << 40) is None
    finally:
        RESULTS["alloc"] = 0
    assert status.value == -2002
    assert cuda_native.describe(status.value) == "cuMemAllocAsync failed with error 2"
    LAUNCHES.clear()
    assert _launcher(native)(0xABC, None, 0, 0, 10) == -1  # nothing runs after a failure
    assert malloc(8) is None
    assert LAUNCHES == []
    status.value = 0
    RESULTS["launch"] = 700
    try:
        assert _launcher(native)(0xABC, None, 0, 0, 10) == 1
    finally:
        RESULTS["launch"] = 0
    assert cuda_native.describe(status.value) == "cuLaunchKernel failed with error 700"
    status.value = 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("trans", [111, 112])
def test_cblas_gemv_row_major_as_cublas(native: Any, dtype: type, trans: int) -> None:
    kind, scalar = ("s", ctypes.c_float) if dtype == np.float32 else ("d", ctypes.c_double)
    gemv = native.function(
        f"arignote_gpu_cblas_{kind}gemv",
        None,
        I32,
        I32,
        I32,
        I32,
        scalar,
        P,
        I32,
        P,
        I32,
        scalar,
        P,
        I32,
    )
    rng = np.random.default_rng(1)
    a = rng.standard_normal((5, 9)).astype(dtype)  # row-major, lda 9
    x = rng.standard_normal(5 if trans == 112 else 9).astype(dtype)
    y = rng.standard_normal(9 if trans == 112 else 5).astype(dtype)
    want = 2.0 * ((a.T if trans == 112 else a) @ x) + 0.5 * y
    gemv(101, trans, 5, 9, 2.0, a.ctypes.data, 9, x.ctypes.data, 1, 0.5, y.ctypes.data, 1)
    np.testing.assert_allclose(y, want, rtol=1e-5)


@pytest.mark.parametrize(("ta", "tb"), [(111, 111), (112, 111), (111, 112), (112, 112)])
def test_cblas_gemm_row_major_as_cublas(native: Any, ta: int, tb: int) -> None:
    gemm = native.function(
        "arignote_gpu_cblas_dgemm",
        None,
        I32,
        I32,
        I32,
        I32,
        I32,
        I32,
        ctypes.c_double,
        P,
        I32,
        P,
        I32,
        ctypes.c_double,
        P,
        I32,
    )
    rng = np.random.default_rng(2)
    m, n, k = 4, 6, 3
    a = rng.standard_normal((k, m) if ta == 112 else (m, k))
    b = rng.standard_normal((n, k) if tb == 112 else (k, n))
    c = rng.standard_normal((m, n))
    want = 1.5 * ((a.T if ta == 112 else a) @ (b.T if tb == 112 else b)) - c
    gemm(
        101,
        ta,
        tb,
        m,
        n,
        k,
        1.5,
        a.ctypes.data,
        a.shape[1],
        b.ctypes.data,
        b.shape[1],
        -1.0,
        c.ctypes.data,
        n,
    )
    np.testing.assert_allclose(c, want, rtol=1e-12)


def test_profiling_records_an_event_pair_around_each_launch(native: Any) -> None:
    """With the event table set, each launch records events 2j and 2j + 1 around the
    kernel and logs the kernel; past the capacity, launches run unrecorded."""
    events = (ctypes.c_void_p * 4)(0x10, 0x11, 0x20, 0x21)
    kernels = (ctypes.c_void_p * 2)()
    native.word("arignote_gpu_events", ctypes.c_void_p).value = ctypes.addressof(events)
    native.word("arignote_gpu_event_kernels", ctypes.c_void_p).value = ctypes.addressof(kernels)
    native.word("arignote_gpu_event_capacity").value = 2
    count = native.word("arignote_gpu_event_count")
    count.value = 0
    RECORDED.clear()
    LAUNCHES.clear()
    try:
        for kernel in (0xA, 0xB, 0xC):
            assert _launcher(native)(kernel, None, 0, 0, 100) == 1
    finally:
        native.word("arignote_gpu_events", ctypes.c_void_p).value = None
    assert [launch["kernel"] for launch in LAUNCHES] == [0xA, 0xB, 0xC]
    assert RECORDED == [0x10, 0x11, 0x20, 0x21]
    assert list(kernels) == [0xA, 0xB] and count.value == 2


def test_output_arrays_are_copies_of_a_cached_array_object() -> None:
    """`PycudaDevice.empty` builds each shape's GPUArray once (pycuda's constructor queries
    the device) and copies it with fresh memory; checked with a stand-in for pycuda's
    class that counts its constructions (pycuda 2026.1's keeps everything in `__dict__`)."""
    import copyreg

    from arignote.runtime.cuda import PycudaDevice

    class FakeGPUArray:
        built = 0

        def __init__(self, shape, dtype, allocator=None, gpudata=None):  # noqa: ANN001
            FakeGPUArray.built += 1
            self.shape, self.dtype = tuple(shape), np.dtype(dtype)
            self.size = int(np.prod(self.shape))
            self.nbytes = self.size * self.dtype.itemsize
            self.gpudata = allocator(self.nbytes) if gpudata is None and self.size else gpudata

    def get(array: FakeGPUArray) -> None:
        raise AssertionError("copied from the device (cuMemcpyDtoH of the template)")

    # as pycuda registers GPUArray's reduction (`copy.copy` would call it, and its
    # `get()` of the template's null memory failed on a GPU: "cuMemcpyDtoH failed")
    copyreg.pickle(FakeGPUArray, lambda a: (FakeGPUArray, (get(a),)))

    device = object.__new__(PycudaDevice)
    device.gpuarray = type("FakeModule", (), {"GPUArray": FakeGPUArray})
    device._templates = {}
    addresses = iter(range(0x1000, 0x100000, 0x1000))
    device.allocate = lambda size: next(addresses)
    a = device.empty((2, 3), np.float32)
    b = device.empty((2, 3), np.float32)
    c = device.empty((0,), np.float64)
    assert FakeGPUArray.built == 2  # one per shape and dtype
    assert (a.shape, a.nbytes, b.shape) == ((2, 3), 24, (2, 3))
    assert a.gpudata != b.gpudata and a.gpudata and c.gpudata is None
