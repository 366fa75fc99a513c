"""The GPU runtime's native half: what the host code calls, in machine code.

The host code of a GPU function (`arignote.lowering.gpu.split`) calls

* `arignote_gpu_launch(kernel, ctx, bytes, lower, upper) -> i64`: `cuLaunchKernel` of
  the `CUfunction` `kernel` on `[lower, upper)` (min(n, 256) threads a block, at most
  `arignote_gpu_max_blocks` blocks; the kernel's parameters are pointers to `lower`,
  `upper` and the context struct at `ctx`);
* `arignote_gpu_malloc(bytes) -> ptr` / `arignote_gpu_free(ptr)`: `cuMemAllocAsync` /
  `cuMemFreeAsync` on the default stream (the device's memory pool, which the runtime
  tells to keep freed memory: no `cudaMalloc` per call in a training loop);
* `arignote_gpu_read(host, device, bytes)`: `cuMemcpyDtoH`;
* `arignote_gpu_cblas_{s,d}{gemv,gemm}(...)`: CBLAS's arguments (row-major) turned into
  cuBLAS's column-major call on the handle `arignote_gpu_cublas`.

Profiling: while `arignote_gpu_events` points to `2 × capacity` CUDA events, a launch
records the next pair around the kernel (`cuEventRecord`) and logs the kernel's handle in
`arignote_gpu_event_kernels`; the runtime reads the times after the call
(`cuEventElapsedTime`, per kernel: `arignote.runtime.cuda.KernelProfile`).

They are one small LLVM module (`NATIVE_IR`), compiled once per process for the host and
bound to these names with `llvmlite.binding.add_symbol`, so that the host code calls them
directly: a launch costs what `cuLaunchKernel` costs, not a trip through Python.

Errors: the first failing call stores a negative code in `arignote_gpu_status` (`-(1000
× what + result)`, `what` from `WHAT`), and every call after it does nothing (a launch
returns -1, an allocation null); the runtime reads and clears the status when the host
code returns and raises `CudaError` naming the call and CUDA's error code.
"""

from __future__ import annotations

WHAT = {1: "cuLaunchKernel", 2: "cuMemAllocAsync", 3: "cuMemFreeAsync", 4: "cuMemcpyDtoH",
        5: "cuBLAS"}  # fmt: skip

DRIVER_FUNCTIONS = (
    "cuLaunchKernel",
    "cuEventRecord",
    "cuMemAllocAsync",
    "cuMemFreeAsync",
    "cuMemcpyDtoH_v2",
)
CUBLAS_FUNCTIONS = ("cublasSgemv_v2", "cublasDgemv_v2", "cublasSgemm_v2", "cublasDgemm_v2")

EXPORTED = (
    "arignote_gpu_launch",
    "arignote_gpu_malloc",
    "arignote_gpu_free",
    "arignote_gpu_read",
    "arignote_gpu_cblas_sgemv",
    "arignote_gpu_cblas_dgemv",
    "arignote_gpu_cblas_sgemm",
    "arignote_gpu_cblas_dgemm",
)

_FAIL = """
  %failed{n} = icmp ne i32 %r{n}, 0
  br i1 %failed{n}, label %fail{n}, label %ok{n}
fail{n}:
  %r64_{n} = zext i32 %r{n} to i64
  %code{n} = add i64 %r64_{n}, {base}
  %neg{n} = sub i64 0, %code{n}
  store i64 %neg{n}, ptr @arignote_gpu_status
  br label %ok{n}
ok{n}:"""


def _fail(n: int, what: int) -> str:
    return _FAIL.format(n=n, base=1000 * what)


def _blas_prologue(scalar: str) -> str:
    """A BLAS adapter's first block: nothing after a failure; `alpha` and `beta` in
    memory (cuBLAS takes them by pointer)."""
    return f"""entry:
  %st = load i64, ptr @arignote_gpu_status
  %bad = icmp ne i64 %st, 0
  br i1 %bad, label %done, label %go
go:
  %alpha.addr = alloca {scalar}
  %beta.addr = alloca {scalar}
  store {scalar} %alpha, ptr %alpha.addr
  store {scalar} %beta, ptr %beta.addr
"""


def _gemv(kind: str, scalar: str) -> str:
    return f"""
define void @arignote_gpu_cblas_{kind}gemv(i32 %order, i32 %trans, i32 %m, i32 %n, {scalar} %alpha,
    ptr %a, i32 %lda, ptr %x, i32 %incx, {scalar} %beta, ptr %y, i32 %incy) {{
{_blas_prologue(scalar)}  %notrans = icmp eq i32 %trans, 111
  %op = select i1 %notrans, i32 0, i32 1
  %row = icmp eq i32 %order, 101
  %flipped = sub i32 1, %op
  %op2 = select i1 %row, i32 %flipped, i32 %op
  %m2 = select i1 %row, i32 %n, i32 %m
  %n2 = select i1 %row, i32 %m, i32 %n
  %h = load ptr, ptr @arignote_gpu_cublas
  %r0 = call i32 @cublas{kind.upper()}gemv_v2(ptr %h, i32 %op2, i32 %m2, i32 %n2, ptr %alpha.addr,
      ptr %a, i32 %lda, ptr %x, i32 %incx, ptr %beta.addr, ptr %y, i32 %incy){_fail(0, 5)}
  br label %done
done:
  ret void
}}
"""


def _gemm_call(n: int, kind: str, order: str) -> str:
    """`cublas?gemm` with CBLAS's operands in `order` (`a, b` or `b, a`): a row-major
    C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T."""
    first, second = order.split(", ")
    ops = {"a": "%opa", "b": "%opb"}
    dims = "i32 %m, i32 %n" if first == "a" else "i32 %n, i32 %m"
    return f"""
  %r{n} = call i32 @cublas{kind.upper()}gemm_v2(ptr %h, i32 {ops[first]}, i32 {ops[second]}, {dims},
      i32 %k, ptr %alpha.addr, ptr %{first}, i32 %ld{first}, ptr %{second}, i32 %ld{second},
      ptr %beta.addr, ptr %c, i32 %ldc){_fail(n, 5)}
  br label %done"""


def _gemm(kind: str, scalar: str) -> str:
    return f"""
define void @arignote_gpu_cblas_{kind}gemm(i32 %order, i32 %ta, i32 %tb, i32 %m, i32 %n, i32 %k,
    {scalar} %alpha, ptr %a, i32 %lda, ptr %b, i32 %ldb, {scalar} %beta, ptr %c, i32 %ldc) {{
{_blas_prologue(scalar)}  %na = icmp eq i32 %ta, 111
  %opa = select i1 %na, i32 0, i32 1
  %nb = icmp eq i32 %tb, 111
  %opb = select i1 %nb, i32 0, i32 1
  %h = load ptr, ptr @arignote_gpu_cublas
  %row = icmp eq i32 %order, 101
  br i1 %row, label %rowmajor, label %colmajor
rowmajor:{_gemm_call(0, kind, "b, a")}
colmajor:{_gemm_call(1, kind, "a, b")}
done:
  ret void
}}
"""


NATIVE_IR = (
    """
@arignote_gpu_status = global i64 0
@arignote_gpu_launches = global i64 0
@arignote_gpu_events = global ptr null
@arignote_gpu_event_kernels = global ptr null
@arignote_gpu_event_capacity = global i64 0
@arignote_gpu_event_count = global i64 0
@arignote_gpu_max_blocks = global i64 1
@arignote_gpu_cublas = global ptr null

declare i32 @cuLaunchKernel(ptr, i32, i32, i32, i32, i32, i32, i32, ptr, ptr, ptr)
declare i32 @cuEventRecord(ptr, ptr)
declare i32 @cuMemAllocAsync(ptr, i64, ptr)
declare i32 @cuMemFreeAsync(i64, ptr)
declare i32 @cuMemcpyDtoH_v2(ptr, i64, i64)
declare i32 @cublasSgemv_v2(ptr, i32, i32, i32, ptr, ptr, i32, ptr, i32, ptr, ptr, i32)
declare i32 @cublasDgemv_v2(ptr, i32, i32, i32, ptr, ptr, i32, ptr, i32, ptr, ptr, i32)
declare i32 @cublasSgemm_v2(ptr, i32, i32, i32, i32, i32, ptr, ptr, i32, ptr, i32, ptr, ptr, i32)
declare i32 @cublasDgemm_v2(ptr, i32, i32, i32, i32, i32, ptr, ptr, i32, ptr, i32, ptr, ptr, i32)

define i64 @arignote_gpu_launch(ptr %kernel, ptr %ctx, i64 %bytes, i64 %lower, i64 %upper) {
entry:
  %st = load i64, ptr @arignote_gpu_status
  %bad = icmp ne i64 %st, 0
  br i1 %bad, label %skip, label %go
go:
  %n = sub i64 %upper, %lower
  %none = icmp sle i64 %n, 0
  br i1 %none, label %done, label %launch
launch:
  %small = icmp slt i64 %n, 256
  %threads = select i1 %small, i64 %n, i64 256
  %round = add i64 %n, %threads
  %round1 = sub i64 %round, 1
  %need = udiv i64 %round1, %threads
  %max = load i64, ptr @arignote_gpu_max_blocks
  %few = icmp ult i64 %need, %max
  %blocks = select i1 %few, i64 %need, i64 %max
  %lower.addr = alloca i64
  %upper.addr = alloca i64
  store i64 %lower, ptr %lower.addr
  store i64 %upper, ptr %upper.addr
  %params = alloca [3 x ptr]
  %p1 = getelementptr [3 x ptr], ptr %params, i64 0, i64 1
  %p2 = getelementptr [3 x ptr], ptr %params, i64 0, i64 2
  store ptr %lower.addr, ptr %params
  store ptr %upper.addr, ptr %p1
  store ptr %ctx, ptr %p2
  %b32 = trunc i64 %blocks to i32
  %t32 = trunc i64 %threads to i32
  %events = load ptr, ptr @arignote_gpu_events
  %recorded = load i64, ptr @arignote_gpu_event_count
  %capacity = load i64, ptr @arignote_gpu_event_capacity
  %profiling = icmp ne ptr %events, null
  %room = icmp slt i64 %recorded, %capacity
  %record = and i1 %profiling, %room
  %slot = mul i64 %recorded, 2
  %start.addr = getelementptr ptr, ptr %events, i64 %slot
  %slot1 = add i64 %slot, 1
  %end.addr = getelementptr ptr, ptr %events, i64 %slot1
  br i1 %record, label %record_start, label %run
record_start:
  %start = load ptr, ptr %start.addr
  %rs = call i32 @cuEventRecord(ptr %start, ptr null)
  br label %run
run:
  %r0 = call i32 @cuLaunchKernel(ptr %kernel, i32 %b32, i32 1, i32 1, i32 %t32, i32 1, i32 1,
      i32 0, ptr null, ptr %params, ptr null)
  %count = load i64, ptr @arignote_gpu_launches
  %count1 = add i64 %count, 1
  store i64 %count1, ptr @arignote_gpu_launches"""
    + _fail(0, 1)
    + """
  br i1 %record, label %record_end, label %done
record_end:
  %end = load ptr, ptr %end.addr
  %re = call i32 @cuEventRecord(ptr %end, ptr null)
  %log = load ptr, ptr @arignote_gpu_event_kernels
  %logged = getelementptr ptr, ptr %log, i64 %recorded
  store ptr %kernel, ptr %logged
  %recorded1 = add i64 %recorded, 1
  store i64 %recorded1, ptr @arignote_gpu_event_count
  br label %done
done:
  ret i64 1
skip:
  ret i64 -1
}

define ptr @arignote_gpu_malloc(i64 %bytes) {
entry:
  %st = load i64, ptr @arignote_gpu_status
  %bad = icmp ne i64 %st, 0
  br i1 %bad, label %skip, label %go
go:
  %slot = alloca i64
  store i64 0, ptr %slot
  %r0 = call i32 @cuMemAllocAsync(ptr %slot, i64 %bytes, ptr null)"""
    + _fail(0, 2)
    + """
  %address = load i64, ptr %slot
  %p = inttoptr i64 %address to ptr
  ret ptr %p
skip:
  ret ptr null
}

define void @arignote_gpu_free(ptr %p) {
entry:
  %null = icmp eq ptr %p, null
  br i1 %null, label %done, label %go
go:
  %address = ptrtoint ptr %p to i64
  %r0 = call i32 @cuMemFreeAsync(i64 %address, ptr null)"""
    + _fail(0, 3)
    + """
  br label %done
done:
  ret void
}

define void @arignote_gpu_read(ptr %host, ptr %device, i64 %bytes) {
entry:
  %st = load i64, ptr @arignote_gpu_status
  %bad = icmp ne i64 %st, 0
  br i1 %bad, label %done, label %go
go:
  %address = ptrtoint ptr %device to i64
  %r0 = call i32 @cuMemcpyDtoH_v2(ptr %host, i64 %address, i64 %bytes)"""
    + _fail(0, 4)
    + """
  br label %done
done:
  ret void
}
"""
    + _gemv("s", "float")
    + _gemv("d", "double")
    + _gemm("s", "float")
    + _gemm("d", "double")
)


def describe(status: int) -> str:
    """What the negative status `status` of `arignote_gpu_status` says."""
    code = -status
    what, result = divmod(code, 1000)
    return f"{WHAT.get(what, 'a CUDA call')} failed with error {result}"
