"""Allocations that cannot be made are `MemoryError`s, on both linkers, never a crash.

Native code checks every buffer it allocates (`arignote.lowering.llvm.checked_alloc`): a size
that overflows 64-bit arithmetic and a request `malloc` refuses both end the call with a
`MemoryError`, after freeing what the call had allocated. The crashing programs run in a
child process (before the fix they died of SIGSEGV), under an address-space limit
(`RLIMIT_AS`) a little above what the child has mapped: a large request is then refused
on any machine, whatever its memory and overcommit policy, and nothing large is ever
touched.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.compile.mode import Mode

LINKERS = ["py", "cvm"]

_LIMIT = """
import resource


def limit_address_space(extra):
    # the child may map `extra` more bytes: larger requests fail (malloc returns NULL)
    with open("/proc/self/statm") as f:
        mapped = int(f.read().split()[0]) * resource.getpagesize()
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    resource.setrlimit(resource.RLIMIT_AS, (mapped + extra, hard))
"""


def _run_child(body: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    code = _LIMIT + textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout
    )


_ISSUE_PROGRAMS = """
import numpy as np

import arignote
import arignote.tensor as T
from arignote.configuration import config

config.compile_cache = False
mode = arignote.Mode(linker={linker!r})
n = T.lscalar("n")
zeros_sum = arignote.function([n], T.zeros((n, n)).sum(), mode=mode)
v = T.dvector("v")
outer_dot = arignote.function([v], T.dot(v.dimshuffle(0, "x") * v.dimshuffle("x", 0), v), mode=mode)
# the shape function itself computes the outer product, to know the result's length
length = T.cast(T.dot(v.dimshuffle(0, "x") * v.dimshuffle("x", 0), v).sum(), "int64")
shaped = arignote.function([v], T.zeros((length,)), mode=mode)
big = np.ones(60000)
limit_address_space(1 << 30)
for name, call in [
    ("zeros 100000", lambda: zeros_sum(100000)),
    ("zeros 2**32", lambda: zeros_sum(2**32)),
    ("outer 60000", lambda: outer_dot(big)),
    ("shape 60000", lambda: shaped(big)),
]:
    try:
        call()
        print(name, "no error")
    except MemoryError as e:
        print(name, "MemoryError", e)
# nothing was left half done: the same functions work on small inputs
print("after", float(zeros_sum(3)), outer_dot(np.arange(3.0)).tolist(), len(shaped(np.ones(2))))
"""


@pytest.mark.parametrize("linker", LINKERS)
def test_issue_programs_raise_memory_error(linker: str) -> None:
    """Regression (issue 12): `T.zeros((n, n)).sum()` for n = 100000 (80 GB) and
    n = 2**32 (n * n * 8 overflows int64), and the 28.8 GB outer product of a 60000
    vector, crashed native code with SIGSEGV (the 2**32 one also the interpreter's
    ValueError); each is a MemoryError, and the functions still work afterwards."""
    done = _run_child(_ISSUE_PROGRAMS.format(linker=linker))
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    lines = done.stdout.splitlines()
    assert len(lines) == 5, done.stdout
    for line in lines[:4]:
        assert "MemoryError" in line, line
    if linker == "cvm":
        assert "could not allocate 80000000000 bytes" in lines[0]
        assert "at least 9223372036854775808 bytes" in lines[1]
        assert "could not allocate 28800000000 bytes" in lines[2]
        assert "at least 2147483648 bytes" in lines[3]  # (the shape function's i32 status)
    assert lines[4] == "after 0.0 [0.0, 5.0, 10.0] 4", lines[4]


_LEAK_PROGRAM = """
import ctypes

import numpy as np
from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.cf import Cf
from xdsl.dialects.func import Func
from xdsl.dialects.memref import MemRef
from xdsl.dialects.scf import Scf
from xdsl.parser import Parser
from xdsl.passes import PassPipeline

from arignote.lowering.pipelines import LLVM_LOWERING
from arignote.lowering.registry import get_all_passes
from arignote.runtime.cpu import NativeModule, memref_descriptor

TEXT = '''
func.func @{name}(%small: index, %rows: index, %cols: index, %out: memref<f64>) -> {status}
    attributes {{arignote.alloc_status}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f64
  %a = memref.alloc(%small) : memref<?xf64>
  scf.for %i = %c0 to %small step %c1 {{
    memref.store %one, %a[%i] : memref<?xf64>
  }}
  %first = memref.load %a[%c0] : memref<?xf64>
  memref.store %first, %out[] : memref<f64>
  scf.for %j = %c0 to %c1 step %c1 {{
    %b = memref.alloc(%rows, %cols) : memref<?x?xf64>
    scf.for %i = %c0 to %rows step %c1 {{
      memref.store %one, %b[%i, %c0] : memref<?x?xf64>
    }}
    scf.for %i = %c0 to %rows step %c1 {{
      %x = memref.load %b[%i, %c0] : memref<?x?xf64>
      %acc = memref.load %out[] : memref<f64>
      %y = arith.addf %x, %acc : f64
      memref.store %y, %out[] : memref<f64>
    }}
    memref.dealloc %b : memref<?x?xf64>
  }}
  memref.dealloc %a : memref<?xf64>
  %ok = arith.constant 0 : {status}
  return %ok : {status}
}}
'''
ctx = Context()
for dialect in (Builtin, Func, Arith, MemRef, Scf, Cf):
    ctx.load_dialect(dialect)
text = TEXT.format(name="f64_status", status="i64") + TEXT.format(name="f32_status", status="i32")
module = Parser(ctx, text).parse_module()
PassPipeline.parse_spec(get_all_passes(), "PIPELINE_SPEC" + LLVM_LOWERING).apply(ctx, module)
native = NativeModule(module)
import sys
calls = [line.split("(")[0].strip() for line in str(module).splitlines() if "llvm.call @" in line]
print(*calls, file=sys.stderr)
out = np.zeros(())
descriptor = memref_descriptor(out)
args = [ctypes.c_int64] * 3 + [ctypes.c_void_p]
f64_fn = ctypes.CFUNCTYPE(ctypes.c_int64, *args)(native.address("f64_status"))
f32_fn = ctypes.CFUNCTYPE(ctypes.c_int32, *args)(native.address("f32_status"))


def f64(*sizes):
    return f64_fn(*sizes, ctypes.addressof(descriptor))


def f32(*sizes):
    return f32_fn(*sizes, ctypes.addressof(descriptor))


small = 8 << 20  # 64 MiB, written: a leak would exhaust the limit within a few calls
limit_address_space(256 << 20)
print(*[f64(small, 1 << 20, 1 << 20) for _ in range(40)])
print(f64(small, 2**32, 2**32), f64(small, 2**62, 2**62), f64(1, 0, 0), f64(small, 3, 3), out)
print(f32(small, 1 << 20, 1 << 20), f32(small, 1, 1 << 27))
"""


@pytest.mark.parametrize(
    ("kernels", "helpers"),
    [(False, False), (False, True), (True, True)],
    ids=["glue", "glue-helpers", "kernels"],
)
def test_failed_allocation_frees_what_the_function_holds(kernels: bool, helpers: bool) -> None:
    """A function with `arignote.alloc_status` returns -bytes for the allocation that
    failed after freeing the 64 MiB buffer it held: 40 calls in a 256 MiB address-space
    budget all fail on the 8 TiB buffer (a leak would make the 64 MiB one fail by the
    fourth); a size that overflows, or does not fit an i32 status, is the minimum.
    With `helpers` (`HELPER_MIN_ALLOCATIONS` set to 1: a glue with many buffers), the
    function allocates through the glue's helpers (`@arignote_alloc`). With
    `outline-kernels` the nest that allocates the big buffer is a kernel of its own,
    which calls `malloc` itself: its failure returns the same status from the function,
    which frees its own."""
    spec = "outline-kernels," if kernels else ""
    program = _LEAK_PROGRAM.replace("PIPELINE_SPEC", spec)
    if helpers:
        program = program.replace(
            "ctx = Context()\n",
            "from arignote.lowering.llvm import checked_alloc\n"
            "checked_alloc.HELPER_MIN_ALLOCATIONS = 1\nctx = Context()\n",
        )
    done = _run_child(program, timeout=120)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    repeated, sizes, narrow = done.stdout.splitlines()
    assert repeated.split() == [str(-(8 << 40))] * 40
    assert sizes.split() == [str(-(2**63)), str(-(2**63)), "0", "0", "4.0"]
    assert narrow.split() == [str(-(2**31)), str(-(1 << 30))]
    assert ("llvm.call @f64_status__k" in done.stderr) == kernels
    assert ("llvm.call @arignote_alloc" in done.stderr) == helpers
    # the helper's `malloc` or the two of each of the two functions, and the kernel's own
    assert done.stderr.count("llvm.call @malloc") == (1 if helpers else 4) + kernels


@pytest.mark.parametrize("linker", LINKERS)
def test_output_whose_size_overflows_is_a_memory_error(linker: str) -> None:
    """A result of 2**32 x 2**32 float64 (2**67 bytes): `MemoryError` (NumPy's own
    allocation raised `ValueError` there, through the entry point and the interpreter)."""
    n = T.lscalar("n")
    f = arignote.function([n], T.zeros((n, n)), mode=Mode(linker=linker))
    with pytest.raises(MemoryError, match="out of memory"):
        f(2**32)
    assert f(2).shape == (2, 2)


@pytest.mark.parametrize("linker", LINKERS)
def test_arange_whose_size_overflows_is_a_memory_error(linker: str) -> None:
    n = T.lscalar("n")
    f = arignote.function([n], T.arange(n), mode=Mode(linker=linker))
    with pytest.raises(MemoryError, match="out of memory"):
        f(2**62)
    np.testing.assert_array_equal(f(3), [0, 1, 2])
