"""Workload 7, memory: peak resident memory of one logreg step and one mlp step.

Each system runs in a fresh process (so libraries and caches of one do not count for
another), built by the logreg/mlp workloads' own row builders. After the step has run
three times, the process's resident-set high-water mark is reset
(`/proc/self/clear_refs`), `--steps` more steps run, and the report shows

- `peak/step`: the high-water mark minus the resident size before those steps — the
  memory one step needs on top of what the process already holds (temporaries, fresh
  outputs), the figure to compare with NumPy's;
- `rss`: the resident size before those steps (interpreter, libraries, compiled code,
  data, parameters).

glibc's malloc is told to map every block of 64 KiB or more separately
(`MALLOC_MMAP_THRESHOLD_`), so a temporary freed at the end of a step really leaves the
resident set, in every system alike, and the next step's temporaries show up again.
Linux only.

    python -m bench memory [--steps 20] [--workloads logreg,mlp]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

if __package__ in (None, ""):
    sys.path.insert(0, __file__.rsplit("/", 2)[0])

import numpy as np

from bench import common

SYSTEMS = ("numpy", "arignote", "jax", "pytensor", "torch")
PEER_ROWS = {"jax": "jax_row", "pytensor": "pytensor_row", "torch": "torch_row"}


def _status_kib(key: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {key}")


def peak_per_step(step, steps: int) -> tuple[int, int]:
    """(peak bytes above the resident size while `steps` steps run, resident bytes)."""
    for _ in range(3):
        step()
    before = _status_kib("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset VmHWM to the current resident size
    for _ in range(steps):
        step()
    return (_status_kib("VmHWM") - before) * 1024, before * 1024


def _numpy_step(workload: str, data):
    from bench import logreg, mlp

    if workload == "logreg":
        x, y, w0, b0 = data
        state = [w0, b0]

        def step():
            state[0], state[1], _, _ = logreg.numpy_step(x, y, state[0], state[1])
    else:
        x, y, params = data
        state = [params]

        def step():
            state[0], _ = mlp.numpy_step(x, y, *state[0])

    return step


def _build_step(workload: str, system: str):
    """The step function of `system` on `workload`, or None when the peer is missing."""
    from bench import logreg, mlp

    module = logreg if workload == "logreg" else mlp
    data = logreg.init(400, 784) if workload == "logreg" else mlp.init(128, np.float32)
    if system == "numpy":
        return _numpy_step(workload, data)
    builder = getattr(module, PEER_ROWS.get(system, "arignote_row"))
    captured = []
    common.step_probe = captured.append
    args = common.parser(__doc__).parse_args(["--repeats", "1"])
    row = builder(*data, args)
    common.step_probe = None
    return captured[0] if row is not None else None


def child(workload: str, system: str, steps: int) -> None:
    step = _build_step(workload, system)
    result = None if step is None else peak_per_step(step, steps)
    print(json.dumps({"result": result}))


def _measure(workload: str, system: str, steps: int) -> tuple[int, int] | None | str:
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="65536")
    cmd = [
        sys.executable,
        "-m",
        "bench",
        "memory",
        "--child",
        workload,
        system,
        "--steps",
        str(steps),
    ]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return f"failed: {(done.stderr.strip().splitlines() or ['?'])[-1][:80]}"
    return json.loads(done.stdout.strip().splitlines()[-1])["result"]


def _mib(n: int) -> str:
    return f"{n / 2**20:8.2f} MiB"


def _print_workload(workload: str, systems, steps: int) -> bool:
    print(
        f"# memory: {workload} step (as in `python -m bench {workload}`), peak over {steps} steps"
    )
    print(f"{'name':<26}  {'peak/step':>12}  {'ratio-to-numpy':>14}  {'rss':>12}")
    base = None
    ok = True
    for system in systems:
        got = _measure(workload, system, steps)
        if got is None or isinstance(got, str):
            print(f"# skipped: {system} ({got or 'not installed'})")
            ok = ok and system not in ("numpy", "arignote")
            continue
        peak, rss = got
        base = peak if base is None else base
        ratio = f"{peak / base:13.2f}x" if base else f"{'-':>14}"
        print(f"{system:<26}  {_mib(peak):>12}  {ratio}  {_mib(rss):>12}")
    return ok


def run(argv=None) -> bool:
    p = common.parser(__doc__)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--workloads", default="logreg,mlp")
    p.add_argument("--child", nargs=2, metavar=("WORKLOAD", "SYSTEM"), help=argparse_hidden())
    args = p.parse_args(argv)
    if args.child:
        child(*args.child, args.steps)
        return True
    systems = ("numpy", "arignote") if args.no_peers else SYSTEMS
    print(f"# machine: {common.machine()}")
    print(f"# versions: {common.versions()}")
    ok = True
    for workload in args.workloads.split(","):
        ok = _print_workload(workload, systems, args.steps) and ok
    return ok


def argparse_hidden() -> str:
    import argparse

    return argparse.SUPPRESS


def main(argv=None) -> None:
    if not run(argv):
        raise SystemExit("memory: numpy or arignote could not be measured")


if __name__ == "__main__":
    main()
