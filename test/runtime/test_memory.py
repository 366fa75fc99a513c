"""Compiling and dropping functions returns their memory: the function, its native code
and its execution engine are collected, and the native memory of the compile (LLVM's pass
pipeline, modules and contexts) is freed, so that a process compiling functions all day
keeps a bounded resident set.

The resident-set checks run in a new process (the measure is not disturbed by what other
tests leave behind) and give back glibc's free memory (`malloc_trim`) before each reading,
so that only memory still in use counts. Their bounds are several times what is left per
compile (about 9 KB over the first 50 compiles: bounded caches filling up, the pass
instrumentation llvmlite's `PassBuilder` never frees) and far below what a leaked pass
pipeline costs (each compile lost about 85 KB before its pass manager was freed).

To measure a longer run: `python test/runtime/test_memory.py 500`.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import weakref

import numpy as np

import arignote
import arignote.tensor as T
from arignote.configuration import change_flags

RETAINED = """
import ctypes, gc, json, sys
import numpy as np, psutil
import arignote, arignote.tensor as T
from arignote.configuration import config
import llvmlite.binding as llvm
from arignote.runtime import cpu

config.compile_cache = False
try:
    trim = ctypes.CDLL(None).malloc_trim  # glibc: free memory back to the system
except AttributeError:
    trim = lambda pad: 0
a = np.ones(10, np.float32)

def resident():
    gc.collect()
    trim(0)
    return psutil.Process().memory_info().rss

def compile_one(i):
    x = T.fvector("x")
    f = arignote.function([x], x * 2 + float(i % 7))
    f(a)

def growth(step, warm, count):
    for i in range(warm):
        step(i)
    before = resident()
    for i in range(count):
        step(i)
    return (resident() - before) / count

compiles, llvm_runs = int(sys.argv[1]), int(sys.argv[2])
compile_one(0)
x = T.fvector("x")
llvm_ir = arignote.function([x], T.exp(x) * 3)._compiled.run.native.native_module.llvm_ir
optimize = lambda i: cpu._optimize(llvm.parse_assembly(llvm_ir), cpu.host_target_machine())
print(json.dumps({"function": growth(compile_one, 10, compiles),
                  "llvm": growth(optimize, 10, llvm_runs) if llvm_runs else 0.0}))
"""


def retained_per_compile(compiles: int, llvm_runs: int) -> dict[str, float]:
    """Bytes of resident memory kept per `arignote.function` compile (over `compiles`)
    and per run of the LLVM O3 pipeline on one module (over `llvm_runs`), in a new
    process."""
    env = dict(os.environ, ARIGNOTE_FLAGS="compile_cache=False")
    env.pop("ARIGNOTERC", None)
    done = subprocess.run(
        [sys.executable, "-c", RETAINED, str(compiles), str(llvm_runs)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_compiles_return_native_memory() -> None:
    """40 compiles and 100 runs of the O3 pipeline after a warm-up keep well under 25 KB
    and 10 KB each (a leaked O3 pass manager alone is about 30 KB per run)."""
    kept = retained_per_compile(40, 100)
    assert kept["llvm"] < 10_000, f"{kept['llvm'] / 1024:.1f} KB kept per O3 pipeline run"
    assert kept["function"] < 25_000, f"{kept['function'] / 1024:.1f} KB kept per compile"


def test_dropped_functions_are_collected() -> None:
    """A function dropped by its user is collected with its native function, module and
    MCJIT engine (nothing in arignote keeps them: their code and memory go with them)."""
    refs = []
    with change_flags(compile_cache=False):
        for i in range(3):
            x = T.fvector("x")
            f = arignote.function([x], x * 2 + float(i))
            np.testing.assert_array_equal(f(np.ones(2, np.float32)), 2.0 + i)
            native = f._compiled.run.native
            module = native.native_module
            refs += [weakref.ref(o) for o in (f, native, module, module._engine)]
            del f, native, module, x
    gc.collect()
    assert [r for r in refs if r() is not None] == []


def test_a_dropped_graph_its_shared_variables_and_their_ir_are_collected() -> None:
    """Once a program drops a training function, its graph and its shared variables,
    nothing of them stays: not the variables (a shared variable's block argument holds
    it, and arignote's table of variables once held the block argument), not the graph's
    ops, not the compile's `llvm`-dialect module (its function lookups and descriptor
    slots were remembered by the module's own ops)."""
    from xdsl.dialects.builtin import ModuleOp

    def modules() -> set[int]:
        return {id(o) for o in gc.get_objects() if type(o) is ModuleOp}

    def train(refs: list[weakref.ref]) -> None:
        x = T.dmatrix("x")
        w = arignote.shared(np.ones((3, 3)), name="w")
        cost = T.tanh(T.dot(x, w)).sum()
        (g,) = arignote.grad(cost, [w])
        f = arignote.function([x], cost, updates=[(w, w - 0.1 * g)])
        f(np.ones((2, 3)))
        refs += [weakref.ref(o) for o in (f, w, x, cost, g, cost.value.op, g.value.op)]

    with change_flags(compile_cache=False):
        train([])  # (the caches of a first compile)
        gc.collect()
        before = modules()
        refs: list[weakref.ref] = []
        for _ in range(3):
            train(refs)
        gc.collect()
    assert [r() for r in refs if r() is not None] == []
    assert modules() <= before


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    kept = retained_per_compile(count, 0)
    print(f"{kept['function'] / 1024:.1f} KB of resident memory kept per compile ({count})")
