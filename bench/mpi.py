"""Workload mpi: data-parallel MLP throughput and allreduce bandwidth on MPI processes.

`python -m bench mpi` launches the measurements itself with the `mpiexec` of the `mpi`
extra (one thread a process: OPENBLAS_NUM_THREADS=1 and arignote's thread pool off,
`ARIGNOTE_FLAGS=openmp=False`):

1. **throughput**: one SGD step of the MLP of `bench mlp` (784-500-10, tanh, softmax
   cross-entropy, float64) with `--batch` examples *per process* and its gradients
   averaged by `distributed.average_gradients`, on 1 process without MPI, then on 1, 2
   (and `--procs`) processes under `mpiexec`; examples/s of the whole job (processes ×
   batch / median step time of rank 0, the steps synchronised by the allreduces) and the
   speed-up over the single process without MPI;
2. **bandwidth**: on 2 processes, a compiled `distributed.allreduce(x, "sum")` of a
   float64 vector of each size against mpi4py's own `comm.Allreduce(MPI.IN_PLACE, x)`
   (the `osu_allreduce`-style measurement of the library): median time per call and
   bus bandwidth `2 (n - 1) / n × bytes / time` (the bytes each process moves in a ring
   allreduce, as the OSU and NCCL tests report it). arignote's call includes copying the
   operand into a fresh result and the Python call.

    python -m bench mpi [--batch 128] [--steps 30] [--procs 1,2] [--sizes 1e3,1e5,1e7]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, __file__.rsplit("/", 2)[0])

import numpy as np  # noqa: E402

from bench.common import machine, versions  # noqa: E402

SIZES = (784, 500, 10)
LR = 0.1
DEFAULT_BYTES = "8e3,6.4e4,5.12e5,4e6,3.2e7"


def _mlp_step(batch: int):
    import arignote
    import arignote.tensor as T
    from arignote import distributed
    from arignote.tensor.nnet import softmax

    rng = np.random.default_rng(0)
    n_in, n_hid, n_out = SIZES
    w1 = arignote.shared(rng.standard_normal((n_in, n_hid)) * np.sqrt(1.0 / n_in), "w1")
    b1 = arignote.shared(np.zeros(n_hid), "b1")
    w2 = arignote.shared(rng.standard_normal((n_hid, n_out)) * np.sqrt(1.0 / n_hid), "w2")
    b2 = arignote.shared(np.zeros(n_out), "b2")
    params = [w1, b1, w2, b2]
    distributed.broadcast(params)
    x, y = T.matrix("x"), T.matrix("y")
    p = softmax(T.dot(T.tanh(T.dot(x, w1) + b1), w2) + b2)
    cost = -T.mean(T.sum(y * T.log(p), axis=1))
    grads = distributed.average_gradients(arignote.grad(cost, params))
    updates = [(v, v - LR * g) for v, g in zip(params, grads, strict=True)]
    step = arignote.function([x, y], cost, updates=updates, name="train")
    data = rng.standard_normal((batch, n_in))
    labels = np.eye(n_out)[rng.integers(0, n_out, size=batch)]
    return lambda: step(data, labels)


def _median_step(fn, steps: int) -> float:
    from arignote import distributed

    fn()
    fn()  # warm up (the first call also compares the graphs)
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    # every rank reports rank 0's figure: the allreduces keep the steps in lockstep
    return float(np.median(times)) if distributed.rank() == 0 else float("nan")


def worker_throughput(batch: int, steps: int) -> None:
    from arignote import distributed

    distributed.init(timeout=120)
    seconds = _median_step(_mlp_step(batch), steps)
    if distributed.rank() == 0:
        print(json.dumps({"procs": distributed.size(), "seconds": seconds}), flush=True)


def worker_bandwidth(sizes: list[int], steps: int) -> None:
    from mpi4py import MPI

    import arignote
    import arignote.tensor as T
    from arignote import distributed

    distributed.init(timeout=120)
    comm = MPI.COMM_WORLD
    x = T.vector("x")
    reduce = arignote.function([x], distributed.allreduce(x, "sum"), name="allreduce")
    rows = []
    for nbytes in sizes:
        buf = np.ones(max(1, nbytes // 8))
        ours = _median_step(lambda b=buf: reduce(b), steps)
        theirs = _median_step(lambda b=buf: comm.Allreduce(MPI.IN_PLACE, b), steps)
        rows.append({"bytes": buf.nbytes, "arignote": ours, "mpi4py": theirs})
    if comm.Get_rank() == 0:
        print(json.dumps({"procs": comm.Get_size(), "rows": rows}), flush=True)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", ARIGNOTE_FLAGS="openmp=False")
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
    return env


def _mpiexec() -> str:
    beside = Path(sys.executable).parent / "mpiexec"
    if beside.exists():
        return str(beside)
    import shutil

    found = shutil.which("mpiexec")
    if found is None:
        raise SystemExit('bench mpi needs mpiexec: pip install "arignote[mpi]"')
    return found


def _run(procs: int | None, args: list[str]) -> dict:
    command = [sys.executable, "-m", "bench.mpi", *args]
    if procs is not None:
        command = [_mpiexec(), "-n", str(procs), *command]
    out = subprocess.run(command, capture_output=True, text=True, env=_env(), timeout=900)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode != 0 or not lines:
        raise SystemExit(f"{' '.join(command)} failed:\n{out.stdout}\n{out.stderr}")
    return json.loads(lines[-1])


def _throughput(batch: int, steps: int, procs: list[int]) -> None:
    print(
        f"MLP {'-'.join(map(str, SIZES))} float64 step, batch {batch} per process, "
        "one thread per process"
    )
    print(f"{'processes':<22}{'step (ms)':>10}{'examples/s':>12}{'speed-up':>10}")
    base = None
    for n in [None, *procs]:
        result = _run(n, ["--worker", "throughput", "--batch", str(batch), "--steps", str(steps)])
        rate = result["procs"] * batch / result["seconds"]
        base = rate if base is None else base
        label = "1 (no mpiexec)" if n is None else f"{n} (mpiexec)"
        print(f"{label:<22}{result['seconds'] * 1e3:>10.2f}{rate:>12.0f}{rate / base:>9.2f}x")


def _bus(nbytes: int, procs: int, seconds: float) -> float:
    return 2 * (procs - 1) / procs * nbytes / seconds / 1e9


def _bandwidth(sizes: list[int], steps: int) -> None:
    result = _run(
        2, ["--worker", "bandwidth", "--sizes", ",".join(map(str, sizes)), "--steps", str(steps)]
    )
    procs = result["procs"]
    print(
        f"\nallreduce (sum, float64) on {procs} processes: median time per call and bus "
        "bandwidth 2(n-1)/n*bytes/time"
    )
    print(f"{'bytes':>10}{'arignote (us)':>15}{'GB/s':>8}{'mpi4py (us)':>13}{'GB/s':>8}")
    for row in result["rows"]:
        ours, theirs = row["arignote"], row["mpi4py"]
        print(
            f"{row['bytes']:>10}{ours * 1e6:>15.1f}{_bus(row['bytes'], procs, ours):>8.2f}"
            f"{theirs * 1e6:>13.1f}{_bus(row['bytes'], procs, theirs):>8.2f}"
        )


def _parse(argv: list[str]):
    import argparse

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=128, help="examples per process")
    p.add_argument("--steps", type=int, default=30, help="timed steps (median)")
    p.add_argument("--procs", default="1,2", help="process counts under mpiexec")
    p.add_argument("--sizes", default=DEFAULT_BYTES, help="allreduce message sizes (bytes)")
    p.add_argument("--skip-bandwidth", action="store_true")
    p.add_argument("--worker", choices=("throughput", "bandwidth"), help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = _parse(sys.argv[1:] if argv is None else argv)
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    if args.worker == "throughput":
        return worker_throughput(args.batch, args.steps)
    if args.worker == "bandwidth":
        return worker_bandwidth(sizes, args.steps)
    print(f"machine: {machine()}\nversions: {versions()}\n")
    _throughput(args.batch, args.steps, [int(n) for n in args.procs.split(",")])
    if not args.skip_bandwidth:
        _bandwidth(sizes, args.steps)


if __name__ == "__main__":
    main()
