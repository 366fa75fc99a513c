"""Workload mpi: data-parallel MLP throughput and allreduce bandwidth on MPI processes.

`python -m bench mpi` launches the measurements itself with the `mpiexec` of the `mpi`
extra (one thread a process: OPENBLAS_NUM_THREADS=1 and arignote's thread pool off,
`ARIGNOTE_FLAGS=openmp=False`):

1. **throughput**: one SGD step of the MLP of `bench mlp` (784-500-10, tanh, softmax
   cross-entropy, float32 unless `--dtype`) with `--batch` examples *per process* (128,
   `bench mlp`'s, and 1024) and its gradients
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

Figure bars are labelled `<processes>/b<batch>`, `1*` the process without mpiexec.

    python -m bench mpi [--batch 128,1024] [--dtype float32] [--steps 30] [--procs 1,2]
                        [--sizes 8e3,...] [--svg FILE]
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


def _mlp_step(batch: int, dtype: str):
    import arignote
    import arignote.tensor as T
    from arignote import distributed
    from arignote.tensor.nnet import softmax

    rng = np.random.default_rng(0)
    n_in, n_hid, n_out = SIZES
    w1 = rng.standard_normal((n_in, n_hid)) * np.sqrt(1.0 / n_in)
    w2 = rng.standard_normal((n_hid, n_out)) * np.sqrt(1.0 / n_hid)
    w1, w2 = arignote.shared(w1.astype(dtype), "w1"), arignote.shared(w2.astype(dtype), "w2")
    b1 = arignote.shared(np.zeros(n_hid, dtype), "b1")
    b2 = arignote.shared(np.zeros(n_out, dtype), "b2")
    params = [w1, b1, w2, b2]
    distributed.broadcast(params)
    x, y = T.matrix("x", dtype=dtype), T.matrix("y", dtype=dtype)
    p = softmax(T.dot(T.tanh(T.dot(x, w1) + b1), w2) + b2)
    cost = -T.mean(T.sum(y * T.log(p), axis=1))
    grads = distributed.average_gradients(arignote.grad(cost, params))
    updates = [(v, v - LR * g) for v, g in zip(params, grads, strict=True)]
    step = arignote.function([x, y], cost, updates=updates, name="train")
    data = rng.standard_normal((batch, n_in)).astype(dtype)
    labels = np.eye(n_out, dtype=dtype)[rng.integers(0, n_out, size=batch)]
    return lambda: step(data, labels)


def _median_step(fn, steps: int, best: bool = False) -> float:
    """Rank 0's median (or, with `best`, least) time of a call of `fn`."""
    from arignote import distributed

    fn()
    fn()  # warm up (the first call also compares the graphs)
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    # every rank reports rank 0's figure: the allreduces keep the steps in lockstep
    value = min(times) if best else float(np.median(times))
    return value if distributed.rank() == 0 else float("nan")


def worker_throughput(batch: int, steps: int, dtype: str) -> None:
    from arignote import distributed

    distributed.init(timeout=120)
    step = _mlp_step(batch, dtype)
    seconds, best = _median_step(step, steps), _median_step(step, steps, best=True)
    if distributed.rank() == 0:
        result = {"procs": distributed.size(), "seconds": seconds, "best": best}
        print(json.dumps(result), flush=True)


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


def _throughput(
    batch: int, steps: int, procs: list[int], dtype: str, with_batch: bool
) -> list[tuple[str, float]]:
    print(
        f"MLP {'-'.join(map(str, SIZES))} {dtype} step, batch {batch} per process, "
        "one thread per process"
    )
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(
        f"{'processes':<18}{'step (ms)':>10}{'examples/s':>12}{'speed-up':>10}"
        f"{'best step':>11}{'best ex/s':>11}{'speed-up':>10}"
    )
    base = best_base = None
    rows = []
    for n in [None, *procs]:
        args = ["--batch", str(batch), "--steps", str(steps), "--dtype", dtype]
        result = _run(n, ["--worker", "throughput", *args])
        rate = result["procs"] * batch / result["seconds"]
        best = result["procs"] * batch / result["best"]
        base, best_base = base or rate, best_base or best
        label = "1 (no mpiexec)" if n is None else f"{n} (mpiexec)"
        label = f"{label}, b{batch}" if with_batch else label
        print(
            f"{label:<18}{result['seconds'] * 1e3:>10.2f}{rate:>12.0f}{rate / base:>9.2f}x"
            f"{result['best'] * 1e3:>11.2f}{best:>11.0f}{best / best_base:>9.2f}x"
        )
        rows.append((f"{'1*' if n is None else n}/b{batch}", rate))
    return rows


def _bus(nbytes: int, procs: int, seconds: float) -> float:
    return 2 * (procs - 1) / procs * nbytes / seconds / 1e9


def _bandwidth(sizes: list[int], steps: int) -> list[tuple[int, float, float]]:
    result = _run(
        2, ["--worker", "bandwidth", "--sizes", ",".join(map(str, sizes)), "--steps", str(steps)]
    )
    procs = result["procs"]
    print(
        f"\nallreduce (sum, float64) on {procs} processes: median time per call and bus "
        "bandwidth 2(n-1)/n*bytes/time"
    )
    print(f"{'bytes':>10}{'arignote (us)':>15}{'GB/s':>8}{'mpi4py (us)':>13}{'GB/s':>8}")
    rows = []
    for row in result["rows"]:
        nbytes, ours, theirs = row["bytes"], row["arignote"], row["mpi4py"]
        rows.append((nbytes, _bus(nbytes, procs, ours), _bus(nbytes, procs, theirs)))
        print(
            f"{nbytes:>10}{ours * 1e6:>15.1f}{rows[-1][1]:>8.2f}"
            f"{theirs * 1e6:>13.1f}{rows[-1][2]:>8.2f}"
        )
    return rows


# --- the figure (plain SVG: no plotting library needed) -----------------------------------


def _svg_bars(rows: list[tuple[str, float]]) -> list[str]:
    """Throughput bars in the left panel (x 45..290, y 50..250)."""
    top = max(rate for _, rate in rows)
    out = ['<text x="170" y="24" text-anchor="middle">MLP step: examples/s</text>']
    width = 230 / len(rows)
    for k, (label, rate) in enumerate(rows):
        h, x = 190 * rate / top, 55 + k * width
        middle = x + width * 0.35
        out.append(
            f'<rect x="{x:.0f}" y="{250 - h:.0f}" width="{width * 0.7:.0f}" '
            f'height="{h:.0f}" fill="#4a7ab5"/>'
        )
        out.append(
            f'<text x="{middle:.0f}" y="{245 - h:.0f}" text-anchor="middle">{rate:.0f}</text>'
        )
        out.append(f'<text x="{middle:.0f}" y="266" text-anchor="middle">{label}</text>')
    return out


def _svg_lines(rows: list[tuple[int, float, float]]) -> list[str]:
    """Bus bandwidth against the message size (log scale) in the right panel."""
    import math

    top = max(max(a, b) for _, a, b in rows) * 1.1
    lo, hi = math.log10(rows[0][0]), math.log10(rows[-1][0])

    def x_of(nbytes: int) -> float:
        return 375 + 250 * (math.log10(nbytes) - lo) / max(hi - lo, 1e-9)

    def point(nbytes: int, gbs: float) -> str:
        return f"{x_of(nbytes):.0f},{250 - 200 * gbs / top:.0f}"

    out = ['<text x="505" y="24" text-anchor="middle">allreduce bus bandwidth, GB/s</text>']
    for col, colour, name in ((1, "#c0392b", "arignote"), (2, "#27ae60", "mpi4py")):
        points = " ".join(point(r[0], r[col]) for r in rows)
        out.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="380" y="{44 + 14 * col}" fill="{colour}">{name}</text>')
    for nbytes, _, _ in rows:
        out.append(f'<text x="{x_of(nbytes):.0f}" y="266" text-anchor="middle">{nbytes:.0e}</text>')
    out.append(f'<text x="362" y="54" text-anchor="end">{top:.1f}</text>')
    out.append('<text x="505" y="282" text-anchor="middle">bytes</text>')
    return out


def write_svg(path: str, bars: list[tuple[str, float]], lines: list[tuple[int, float, float]]):
    """A two-panel SVG figure of the measurements."""
    body = [*_svg_bars(bars), *(_svg_lines(lines) if lines else [])]
    axes = '<path d="M45 250 H300 M365 250 H640 M365 250 V40" stroke="black"/>'
    head = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="660" height="290" '
        'font-family="sans-serif" font-size="10">'
    )
    Path(path).write_text(head + axes + "".join(body) + "</svg>\n")


def _parse(argv: list[str]):
    import argparse

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", default="128,1024", help="examples per process (a list)")
    p.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    p.add_argument("--steps", type=int, default=30, help="timed steps (median)")
    p.add_argument("--procs", default="1,2", help="process counts under mpiexec")
    p.add_argument("--sizes", default=DEFAULT_BYTES, help="allreduce message sizes (bytes)")
    p.add_argument("--skip-bandwidth", action="store_true")
    p.add_argument("--svg", help="also draw the results into this SVG file")
    p.add_argument("--worker", choices=("throughput", "bandwidth"), help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = _parse(sys.argv[1:] if argv is None else argv)
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    if args.worker == "throughput":
        return worker_throughput(int(args.batch), args.steps, args.dtype)
    if args.worker == "bandwidth":
        return worker_bandwidth(sizes, args.steps)
    print(f"machine: {machine()}\nversions: {versions()}\n")
    procs, batches = [int(n) for n in args.procs.split(",")], args.batch.split(",")
    bars = []
    for batch in batches:
        bars += _throughput(int(batch), args.steps, procs, args.dtype, len(batches) > 1)
    lines = [] if args.skip_bandwidth else _bandwidth(sizes, args.steps)
    if args.svg:
        write_svg(args.svg, bars, lines)


if __name__ == "__main__":
    main()
