"""Workload 5, compile: the logreg training function, from building the graph to the first
result, in a new Python process (the median of `--repeats` processes, 3 by default).

Each child process imports its library first (timed separately, reported as `import`)
and makes the data (not timed), then builds the seed's logreg graph (shared weights,
`grad`, updates), compiles it and runs one step: that span is the compile time. JAX (jit
of the step) and PyTensor run the same way when installed.

arignote runs twice: "cold", each process with a new, empty `compiledir` (the whole
compiler runs, and the result is stored), and "warm cache", each process with a
`compiledir` that a first process filled (the native code is loaded from disk). The
modules arignote imports on first use (the compile machinery, the gradient, llvmlite,
and the lowering passes with the xDSL dialects whose ops they build: `arith`, `math`,
`memref`, `scf`, `cf`, `llvm`, defined when imported) are imported, and timed
("first-use imports" in the notes), before the span starts: a process pays them once,
whatever it compiles, as it pays `import arignote`. The notes split the span into the
graph build (`grad` included) and `function()` plus the first call.

    python -m bench compile [--repeats 3]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile

if __package__ in (None, ""):
    sys.path.insert(0, __file__.rsplit("/", 2)[0])

from bench.common import Row, optional_import, parser, report

PRELUDE = """
import time, json
t0 = time.perf_counter()
import numpy as np
"""

DATA = """
t_import = time.perf_counter()
rng = np.random.default_rng(0)
x = rng.standard_normal((400, 784)).astype(np.float32)
y = rng.integers(0, 2, size=400).astype(np.float32)
w0 = (rng.standard_normal(784) * 0.01).astype(np.float32)
t1 = time.perf_counter()
"""

CHILDREN = {
    "arignote": """
import arignote, arignote.tensor as T
"""
    + DATA
    + """
# what arignote imports on first use (shared variables and function(), grad and its
# stabilize patterns, test values, the compile cache and the JIT, the lowering to loops
# and to LLVM with the xDSL dialects they build, the reference interpreter that folds
# constants)
import arignote.compile, arignote.gradient, arignote.lowering.graph.stabilize, arignote.testvalue
import arignote.runtime.cache, arignote.compile.callpath, arignote.runtime.interpreter
import arignote.lowering.loops.ag_to_loops, arignote.lowering.llvm.convert_to_llvm
t_lazy, c_lazy = time.perf_counter(), time.thread_time()
xs, ys = T.fmatrix("x"), T.fvector("y")
w = arignote.shared(w0, name="w")
b = arignote.shared(np.float32(0.0), name="b")
p_1 = 1 / (1 + T.exp(-T.dot(xs, w) - b))
xent = -ys * T.log(p_1) - (1 - ys) * T.log(1 - p_1)
cost = xent.mean() + 0.01 * (w**2).sum()
gw, gb = arignote.grad(cost, [w, b])
t_build = time.perf_counter()
train = arignote.function([xs, ys], [p_1 > 0.5, xent],
                          updates=[(w, w - 0.1 * gw), (b, b - 0.1 * gb)])
train(x, y)
t2, c2 = time.perf_counter(), time.thread_time()
from arignote.compile.codecache import stats
extra = {"lazy_import": t_lazy - t1, "build": t_build - t_lazy, "function": t2 - t_build,
         "cpu": c2 - c_lazy, "cache": dict(stats())}
t1 = t_lazy
""",
    "jax": """
import jax, jax.numpy as jnp
"""
    + DATA
    + """
def loss(w, b, x, y):
    z = x @ w + b
    xent = y * jax.nn.softplus(-z) + (1 - y) * jax.nn.softplus(z)
    return xent.mean() + 0.01 * (w**2).sum(), (z > 0, xent)
@jax.jit
def step(w, b, x, y):
    (gw, gb), aux = jax.grad(loss, argnums=(0, 1), has_aux=True)(w, b, x, y)
    return w - 0.1 * gw, b - 0.1 * gb, aux
w = jnp.asarray(w0)
jax.block_until_ready(step(w, jnp.float32(0), x, y))
t2 = time.perf_counter()
""",
    "pytensor": """
import pytensor, pytensor.tensor as pt
"""
    + DATA
    + """
xs, ys = pt.fmatrix("x"), pt.fvector("y")
w = pytensor.shared(w0, name="w")
b = pytensor.shared(np.float32(0.0), name="b")
z = pt.dot(xs, w) + b
xent = ys * pt.softplus(-z) + (1 - ys) * pt.softplus(z)
cost = xent.mean() + 0.01 * (w**2).sum()
gw, gb = pytensor.grad(cost, [w, b])
lr = np.float32(0.1)
train = pytensor.function([xs, ys], [z > 0, xent], updates=[(w, w - lr * gw), (b, b - lr * gb)])
train(x, y)
t2 = time.perf_counter()
""",
}

EPILOGUE = """
print(json.dumps({"import": t_import - t0, "compile": t2 - t1, **globals().get("extra", {})}))
"""


def child_times(name: str, compiledir: str | None = None) -> dict:
    code = PRELUDE + CHILDREN[name] + EPILOGUE
    env = dict(os.environ)
    if compiledir is not None:
        flags = env.get("ARIGNOTE_FLAGS", "")
        env["ARIGNOTE_FLAGS"] = ",".join(filter(None, [flags, f"compiledir={compiledir}"]))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(name: str, repeats: int, warm: bool | None = None) -> dict[str, float]:
    """Median times of `repeats` child processes; for arignote (`warm` not None) each
    cold child gets a new empty compiledir, warm children share one filled first."""
    runs = []
    with tempfile.TemporaryDirectory(prefix="arignote-bench-") as tmp:
        if warm:
            child_times(name, tmp)  # fills the cache
        for i in range(max(1, repeats)):
            compiledir = None if warm is None else tmp if warm else os.path.join(tmp, str(i))
            runs.append(child_times(name, compiledir))
    if warm is not None:
        expected = {"hit": 1} if warm else {"miss": 1, "store": 1}
        if any(r["cache"] != expected for r in runs):
            raise SystemExit(f"compile: unexpected cache events {[r['cache'] for r in runs]}")
    keys = [k for k in runs[0] if k != "cache"]
    return {k: statistics.median(r[k] for r in runs) for k in keys}


def arignote_notes(times: dict[str, float], warm: bool) -> str:
    return (
        f"{'warm cache' if warm else 'cold, empty compiledir'}: graph build "
        f"{times['build'] * 1e3:.0f} ms + function() and first call "
        f"{times['function'] * 1e3:.0f} ms (main thread CPU time of the span "
        f"{times['cpu'] * 1e3:.0f} ms); import {times['import'] * 1e3:.0f} ms "
        f"+ first-use imports {times['lazy_import'] * 1e3:.0f} ms"
    )


def run(argv=None) -> bool:
    p = parser(__doc__, repeats=3)
    args = p.parse_args(argv)
    names = ["arignote"]
    skipped = []
    if not args.no_peers:
        for peer in ("jax", "pytensor"):
            if optional_import(peer) is None:
                skipped.append(f"{peer} (not installed)")
            else:
                names.append(peer)
    rows = []
    for warm in (False, True):
        times = measure("arignote", args.repeats, warm)
        label = "arignote warm cache" if warm else "arignote"
        rows.append(Row(label, times["compile"], None, arignote_notes(times, warm)))
    for name in names[1:]:
        times = measure(name, args.repeats)
        notes = f"build -> first result, new process; import {times['import'] * 1e3:.0f} ms"
        rows.append(Row(name, times["compile"], None, notes))
    title = (
        f"compile: logreg train function, build -> first result in a new process, "
        f"median of {args.repeats} processes (ratio column: to arignote)"
    )
    return report(title, rows, tol=0.0, skipped=skipped)


def main(argv=None) -> None:
    run(argv)


if __name__ == "__main__":
    main()
