"""GPU functions in the compile cache: the host code's object, the PTX and the kernel table
are stored under a key that includes the device's architecture; a second process loads
them (no lowering, no LLVM, no PTX made) and still shows `GpuGemv` in its graph. Run on
the emulated device, in fresh processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROGRAM = """
import sys, numpy as np, arignote, arignote.tensor as T
from arignote.compile import codecache
arignote.config.compiledir = sys.argv[1]
arignote.config.compile_cache = True
arignote.config.device = sys.argv[2]
x, v = T.vector("x"), T.matrix("v")
f = arignote.function([x, v], [T.dot(v, x) * 2, x.sum()])
out = f(np.arange(3.0), np.ones((2, 3)))
names = sorted({n.op.__class__.__name__ for n in f.maker.fgraph.toposort()})
print(out[0].tolist(), float(out[1]), names, sorted(codecache.stats().items()))
"""


def _run(tmp_path: Path, device: str) -> str:
    env = dict(os.environ, ARIGNOTE_CUDA_EMULATE="1")
    env.pop("ARIGNOTE_FLAGS", None)
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(tmp_path), device],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_gpu_function_is_stored_and_loaded(tmp_path: Path) -> None:
    first = _run(tmp_path, "cuda")
    assert first == "[6.0, 6.0] 3.0 ['GpuGemv', 'Sum'] [('miss', 1), ('store', 1)]"
    second = _run(tmp_path, "cuda")
    assert second == "[6.0, 6.0] 3.0 ['GpuGemv', 'Sum'] [('hit', 1)]"
    # the same graph for the CPU is another entry
    cpu = _run(tmp_path, "cpu")
    assert cpu.startswith("[6.0, 6.0] 3.0") and "('miss', 1)" in cpu and "GpuGemv" not in cpu
