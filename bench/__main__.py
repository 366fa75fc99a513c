"""`python -m bench <workload> [options]`: run one workload of docs/benchmarks.md.

Workloads: logreg, elemwise, mlp, mlp-2010, rnn, compile, compile-scaling, overhead, memory,
vecmath, trig, lenet, mlp-dropout, mpi (`all` runs each in turn), and gpu (workloads 1-4
on a CUDA GPU against CuPy, JAX and PyTorch; not in `all`).
`python -m bench <workload> --help` lists a workload's options.
"""

from __future__ import annotations

import os
import sys

WORKLOADS = (
    "logreg",
    "elemwise",
    "mlp",
    "mlp-2010",
    "rnn",
    "compile",
    "compile-scaling",
    "overhead",
    "memory",
    "vecmath",
    "trig",
    "lenet",
    "mlp-dropout",
    "mpi",
)


def _dispatch(name: str, argv: list[str]) -> None:
    if name == "mlp-2010":
        from bench import mlp

        mlp.main_2010(argv)
    elif name == "compile-scaling":
        from bench import compile_scaling

        compile_scaling.main(argv)
    else:
        import importlib

        importlib.import_module(f"bench.{name.replace('-', '_')}").main(argv)


GPU_WORKLOADS = ("gpu",)


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in (*WORKLOADS, *GPU_WORKLOADS, "all"):
        print(__doc__.strip())
        raise SystemExit(2)
    name, argv = sys.argv[1], sys.argv[2:]
    if name == "mlp-2010":
        # one thread, as in the Theano paper: set before NumPy and OpenBLAS load
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = "1"
    if name == "all":
        import subprocess

        for w in WORKLOADS:
            subprocess.run([sys.executable, "-m", "bench", w, *argv], check=False)
            print()
        return
    _dispatch(name, argv)


if __name__ == "__main__":
    main()
