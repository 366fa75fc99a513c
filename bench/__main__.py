"""`python -m bench <workload> [options]`: run one workload of docs/benchmarks.md.

Workloads: logreg, elemwise, mlp, mlp-2010, rnn, compile, compile-scaling, overhead, memory,
vecmath, trig, lenet, mlp-dropout, mpi (`all` runs each in turn), and gpu (workloads 1-4
on a CUDA GPU against CuPy, JAX and PyTorch; not in `all`).
`python -m bench <workload> --help` lists a workload's options.

`--load N` (before or among a workload's options) runs the workload beside N processes
that keep a core busy each (a shared machine: the threads of arignote's pool and of
OpenBLAS then compete with them); the table's header says so.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

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


BUSY = "while True: pass"
"""What each competing process of `--load` runs."""


def take_load(argv: list[str]) -> tuple[int, list[str]]:
    """(N of `--load N`, the other arguments); ValueError for a bad N."""
    if "--load" not in argv:
        return 0, argv
    at = argv.index("--load")
    if at + 1 >= len(argv) or not argv[at + 1].isdigit():
        raise ValueError("--load needs a number of busy processes, e.g. --load 2")
    return int(argv[at + 1]), argv[:at] + argv[at + 2 :]


@contextmanager
def competing_load(count: int) -> Iterator[list[subprocess.Popen]]:
    """`count` processes busy on a core each while the block runs, then stopped."""
    busy = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(count)]
    try:
        if count:
            print(f"# competing load: {count} busy process{'es' if count > 1 else ''}")
        yield busy
    finally:
        for process in busy:
            process.kill()
        for process in busy:
            process.wait()


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in (*WORKLOADS, *GPU_WORKLOADS, "all"):
        print(__doc__.strip())
        raise SystemExit(2)
    name = sys.argv[1]
    try:
        load, argv = take_load(sys.argv[2:])
    except ValueError as e:
        raise SystemExit(f"bench: {e}") from None
    with competing_load(load):
        _run(name, argv)


def _run(name: str, argv: list[str]) -> None:
    if name == "mlp-2010":
        # one thread, as in the Theano paper: set before NumPy and OpenBLAS load
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = "1"
    if name == "all":
        for w in WORKLOADS:
            subprocess.run([sys.executable, "-m", "bench", w, *argv], check=False)
            print()
        return
    _dispatch(name, argv)


if __name__ == "__main__":
    main()
