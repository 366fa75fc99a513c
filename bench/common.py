"""Shared pieces of the benchmark suite: timing, the machine and versions, the report.

Every workload builds a list of `Row`s (one per system: its median seconds per call, the
arrays it computed, notes) and hands it to `report`, which prints one line per system in
the BENCHMARKS.md format `name  median  ratio-to-numpy  max|diff|  notes`, the machine and
the versions, and fails when a system's numbers differ from NumPy's beyond the tolerance.
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

PEERS = ("jax", "jaxlib", "pytensor", "torch", "numexpr", "numba")


@dataclass
class Row:
    name: str
    seconds: float
    result: Sequence[np.ndarray] | None = None
    notes: str = ""
    max_diff: float | None = field(default=None, init=False)


def optional_import(name: str):
    """The module `name`, or None when it is not installed (a peer that is skipped)."""
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - a broken peer install counts as missing
        return None


step_probe: Callable[[Callable[[], object]], None] | None = None
"""When set (by `bench.memory`), `median_seconds` hands each system's step to it and
times nothing: the memory workload reuses the other workloads' row builders."""


def median_seconds(fn: Callable[[], object], repeats: int, number: int = 0) -> float:
    """Median over `repeats` of the mean time of `number` calls of `fn` (seconds/call).

    `number=0` picks it so that one repeat takes about 50 ms (at least 1 call).
    """
    if step_probe is not None:
        step_probe(fn)
        return float("nan")
    fn()  # warm up
    if number <= 0:
        start = time.perf_counter()
        fn()
        once = max(time.perf_counter() - start, 1e-7)
        number = max(1, min(100000, int(0.05 / once)))
    times = []
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times)


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> str:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{cpu_model()}, {cores} cores, {platform.system()} {platform.machine()}"


def versions() -> str:
    import llvmlite

    import arignote

    parts = [
        f"python {platform.python_version()}",
        f"numpy {np.__version__}",
        f"arignote {getattr(arignote, '__version__', '?')}",
        f"llvmlite {llvmlite.__version__}",
    ]
    for name in PEERS:
        mod = sys.modules.get(name)
        if mod is not None:
            parts.append(f"{name} {getattr(mod, '__version__', '?')}")
    return ", ".join(parts)


def max_abs_diff(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> float:
    worst = 0.0
    for x, y in zip(a, b, strict=True):
        x = np.asarray(x, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if x.shape != y.shape:
            return float("inf")
        if x.size:
            d = np.abs(x - y)
            worst = max(worst, float(np.max(np.where(np.isnan(d), np.inf, d))))
    return worst


def _fmt_time(s: float) -> str:
    if s >= 1:
        return f"{s:8.3f} s "
    if s >= 1e-3:
        return f"{s * 1e3:8.3f} ms"
    if s >= 1e-6:
        return f"{s * 1e6:8.2f} us"
    return f"{s * 1e9:8.0f} ns"


def report(
    title: str,
    rows: list[Row],
    tol: float,
    skipped: Sequence[str] = (),
    value: Callable[[float], str] | None = None,
) -> bool:
    """Print the table; True when every system matched NumPy (the first row) within tol.

    `value` formats a median differently (e.g. examples per second); by default a time.
    """
    base = rows[0]
    ok = True
    print(f"# {title}")
    print(f"# machine: {machine()}")
    print(f"# versions: {versions()}")
    print(f"{'name':<26}  {'median':>12}  {'ratio-to-numpy':>14}  {'max|diff|':>10}  notes")
    for row in rows:
        notes = row.notes
        if row.result is not None and base.result is not None:
            row.max_diff = max_abs_diff(base.result, row.result)
            if not row.max_diff <= tol:
                ok = False
                notes = (notes + "; " if notes else "") + f"MISMATCH (tol {tol:g})"
        diff = "-" if row.max_diff is None else f"{row.max_diff:10.2e}"
        shown = value(row.seconds) if value else _fmt_time(row.seconds)
        print(
            f"{row.name:<26}  {shown:>12}  {row.seconds / base.seconds:>13.2f}x  "
            f"{diff:>10}  {notes}"
        )
    for note in skipped:
        print(f"# skipped: {note}")
    return ok


def parser(doc: str, repeats: int = 7) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--repeats", type=int, default=repeats, help="timed repeats (median)")
    p.add_argument(
        "--number", type=int, default=0, help="calls per repeat (0: about 50 ms per repeat)"
    )
    p.add_argument("--no-peers", action="store_true", help="only NumPy and arignote")
    return p


def finish(ok: bool) -> None:
    if not ok:
        raise SystemExit("some system computed different numbers than NumPy")
