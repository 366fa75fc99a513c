"""Shared pieces of the neural-network training-step workloads (`lenet`, `mlp-dropout`).

Every system runs one SGD training step (forward, backward, parameter update) from the
same initial weights. Before anything is timed, each system's loss on its first call is
compared with a NumPy forward pass (for dropout, with the masks that system drew); a
mismatch beyond the float32 tolerance fails the workload. The report then has, per system:

- `median`: time per step, the median of `--repeats` timed repeats (`common.median_seconds`);
- `ratio`: that time over PyTorch eager's (over arignote's when PyTorch is absent);
- `cold`: the first call, as a user pays it: graph building, compilation (arignote's
  native code, `torch.compile`, JAX's jit, PyTensor's C code) and the first step;
- `peak/step`: memory one step needs above what the process already holds: the resident
  set's high-water mark (`VmHWM`, reset through `/proc/self/clear_refs`) over `--mem-steps`
  steps minus the resident size before them, measured in this process after the timing
  (libraries already loaded do not count); glibc's malloc maps every block of 64 KiB or
  more separately (`mallopt(M_MMAP_THRESHOLD)`), so a freed temporary leaves the resident
  set and the next step's temporaries show up again, for every system alike. Linux only
  (elsewhere `-`);
- `|loss-ref|`: the first-call loss against NumPy's.
"""

from __future__ import annotations

import ctypes
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from bench import common

_M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter number


@dataclass
class StepRow:
    """One system's measurements; `loss` is its first-call loss, `ref` NumPy's for it."""

    name: str
    seconds: float
    cold: float
    loss: float
    ref: float
    peak: int | None
    notes: str = ""


def separate_large_blocks() -> None:
    """Have glibc map blocks of 64 KiB or more on their own (see the module docstring)."""
    try:
        ctypes.CDLL("libc.so.6").mallopt(_M_MMAP_THRESHOLD, 65536)
    except (OSError, AttributeError):
        pass


def peak_step_bytes(step: Callable[[], object], steps: int) -> int | None:
    """The resident-set high-water mark over `steps` calls minus the size before them."""
    if not os.path.exists("/proc/self/clear_refs") or steps <= 0:
        return None
    from bench.memory import peak_per_step

    try:
        return peak_per_step(step, steps)[0]
    except OSError:
        return None


Check = Callable[[], tuple[float, float]]


def measure(
    name: str, build: Callable[[], tuple[Callable[[], object], Check] | None], args, notes: str = ""
) -> StepRow | None:
    """Build a system's step (timed as its cold cost), check it, time it, probe its memory.

    `build()` returns None when the system is not installed, else `(step, check)` after
    the step's first call; `check()` returns `(loss, ref)`: a loss the system computed and
    NumPy's loss for the same parameters, inputs (and dropout masks).
    """
    start = time.perf_counter()
    built = build()
    if built is None:
        return None
    cold = time.perf_counter() - start
    step, check = built
    loss, ref = check()
    seconds = common.median_seconds(step, args.repeats, args.number)
    peak = peak_step_bytes(step, args.mem_steps)
    return StepRow(name, seconds, cold, float(loss), float(ref), peak, notes)


def torch_threads_note() -> str:
    """`, N threads` for PyTorch's rows (empty when it is not installed)."""
    torch = common.optional_import("torch")
    return "" if torch is None else f", {torch.get_num_threads()} threads"


def parser(doc: str):
    p = common.parser(doc, repeats=5)
    p.add_argument(
        "--mem-steps",
        type=int,
        default=5,
        help="steps over which the memory high-water mark is taken (0: none)",
    )
    p.add_argument(
        "--peers",
        default="torch,torch.compile,jax,pytensor",
        help="comma-separated peers to run (when installed)",
    )
    p.add_argument(
        "--torch-threads",
        type=int,
        default=0,
        help="torch.set_num_threads (0: PyTorch's default, one per core)",
    )
    return p


def setup(args) -> None:
    """Before any system is built: malloc's mapping threshold, PyTorch's threads."""
    separate_large_blocks()
    if args.torch_threads > 0 and not args.no_peers:
        torch = common.optional_import("torch")
        if torch is not None:
            torch.set_num_threads(args.torch_threads)


def finish(ok: bool) -> None:
    if not ok:
        raise SystemExit("arignote did not run, or a system's loss differs from NumPy's")


def run_systems(builders: dict[str, Callable[[], StepRow | None]], args) -> tuple[list, list]:
    """The rows of arignote and of the peers asked for; a missing or failing system
    becomes a skip note (the report fails when it is arignote)."""
    rows, skipped = [], []
    wanted = ["arignote"] + ([] if args.no_peers else [p for p in args.peers.split(",") if p])
    for name in wanted:
        if name not in builders:
            raise SystemExit(f"--peers: unknown peer {name!r}; known: {', '.join(builders)}")
        try:
            row = builders[name]()
        except Exception as exc:  # noqa: BLE001 - a broken peer is skipped, not fatal
            skipped.append(f"{name} (failed: {type(exc).__name__}: {str(exc)[:100]})")
            continue
        if row is None:
            skipped.append(f"{name} (not installed)")
        else:
            rows.append(row)
    return rows, skipped


def _mib(n: int | None) -> str:
    return "-" if n is None else f"{n / 2**20:.2f} MiB"


def report(title: str, rows: list[StepRow], tol: float, skipped: list[str]) -> bool:
    """Print the table; True when every system's loss matched NumPy's within `tol`."""
    if not rows:
        print(f"# {title}: no system ran")
        for note in skipped:
            print(f"# skipped: {note}")
        return False
    base = next((r for r in rows if r.name == "torch eager"), rows[0])
    ok = not any(note.startswith("arignote ") for note in skipped)
    print(f"# {title}")
    print(f"# machine: {common.machine()}")
    print(f"# versions: {common.versions()}")
    print(
        f"# ratio: time per step over {base.name}'s; cold: first call incl. compilation; "
        "peak/step: resident high-water mark above the resident size"
    )
    print(
        f"{'name':<16}  {'median':>12}  {'ratio':>7}  {'cold':>10}  {'peak/step':>12}  "
        f"{'|loss-ref|':>10}  notes"
    )
    for row in rows:
        diff = abs(row.loss - row.ref)
        notes = row.notes
        if not diff <= tol * max(1.0, abs(row.ref)):
            ok = False
            notes = (notes + "; " if notes else "") + f"MISMATCH (tol {tol:g})"
        print(
            f"{row.name:<16}  {common._fmt_time(row.seconds):>12}  "
            f"{row.seconds / base.seconds:>6.2f}x  {row.cold:>9.2f}s  {_mib(row.peak):>12}  "
            f"{diff:>10.2e}  {notes}"
        )
    for note in skipped:
        print(f"# skipped: {note}")
    sys.stdout.flush()
    return ok
