"""The text of a profile (`ProfileStats.summary()`), laid out as Theano's.

The global section (calls, time in `Function.__call__`, in the compiled code and in
the nodes; compile time split into optimizer, validate and linker time), then the
Class, Ops and Apply sections, each sorted by time with the columns of SPEC §6 and cut
after `n_ops` / `n_apply` rows ("... (remaining N ... account for X%)"), then the memory
profile (`config.profile_memory`) and the optimizer profile (`config.profile_optimizer`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from arignote.configuration import config

if TYPE_CHECKING:
    import numpy as np

    from arignote.compile.profiling import ProfileStats


@dataclass
class _Row:
    """One row of the Class or Ops section: the nodes of one class or op."""

    name: str
    time: float = 0.0
    calls: int = 0
    applies: int = 0


def _percent(part: float, whole: float) -> float:
    return 100.0 * part / whole if whole > 0 else 0.0


def _global_section(stats: ProfileStats, out: TextIO, node_time: float) -> None:
    call = stats.fct_call_time
    print("Function profiling", file=out)
    print("==================", file=out)
    print(f"  Message: {stats.message}", file=out)
    print(f"  Time in {stats.fct_callcount} calls to Function.__call__: {call:e}s", file=out)
    if stats.vm_call_time:
        vm = stats.vm_call_time
        print(f"  Time in Function.fn.__call__: {vm:e}s ({_percent(vm, call):.3f}%)", file=out)
    print(f"  Time in thunks: {node_time:e}s ({_percent(node_time, call):.3f}%)", file=out)
    if stats.no_node_times:
        print(f"  (no per-node times: {stats.no_node_times})", file=out)
    print(f"  Total compile time: {stats.compile_time:e}s", file=out)
    print(f"    Number of Apply nodes: {len(stats.nodes)}", file=out)
    print(f"    Optimizer time: {stats.optimizer_time:e}s", file=out)
    print(f"       Validate time: {stats.validate_time:e}s", file=out)
    print(
        f"    Linker time (includes lowering, LLVM code generation and compiling): "
        f"{stats.linker_time:e}s",
        file=out,
    )
    print("", file=out)


def _grouped(stats: ProfileStats, times: np.ndarray, calls: np.ndarray, key: str) -> list[_Row]:
    rows: dict[str, _Row] = {}
    for node, t, c in zip(stats.nodes, times, calls, strict=True):
        name = getattr(node, key)
        row = rows.setdefault(name, _Row(name))
        row.time += float(t)
        row.calls += int(c)
        row.applies += 1
    return sorted(rows.values(), key=lambda r: -r.time)


def _grouped_section(
    title: str, rows: list[_Row], kind: str, total: float, limit: int, out: TextIO
) -> None:
    heading, plural = {"Class": ("Class", "Classes"), "Op": ("Ops", "Ops")}[title]
    print(heading, file=out)
    print("---", file=out)
    print(
        f"<% time> <sum %> <apply time> <time per call> <type> <#call> <#apply> <{title} name>",
        file=out,
    )
    cumulated = 0.0
    for row in rows[:limit]:
        cumulated += row.time
        per_call = row.time / row.calls if row.calls else 0.0
        print(
            f"  {_percent(row.time, total):5.1f}%   {_percent(cumulated, total):5.1f}%"
            f"   {row.time:9.3f}s   {per_call:10.2e}s   {kind:>3}  {row.calls:7d}"
            f"  {row.applies:6d}   {row.name}",
            file=out,
        )
    rest = rows[limit:]
    rest_time = sum(r.time for r in rest)
    print(
        f"   ... (remaining {len(rest)} {plural} account for "
        f"{_percent(rest_time, total):6.2f}%({rest_time:.2f}s) of the runtime)",
        file=out,
    )
    print("", file=out)


def _apply_section(
    stats: ProfileStats, times: np.ndarray, calls: np.ndarray, limit: int, out: TextIO
) -> None:
    total = float(times.sum())
    order = sorted(range(len(stats.nodes)), key=lambda k: -float(times[k]))
    print("Apply", file=out)
    print("------", file=out)
    print("<% time> <sum %> <apply time> <time per call> <#call> <id> <Apply name>", file=out)
    cumulated = 0.0
    for k in order[:limit]:
        t, c = float(times[k]), int(calls[k])
        cumulated += t
        per_call = t / c if c else 0.0
        print(
            f"  {_percent(t, total):5.1f}%   {_percent(cumulated, total):5.1f}%"
            f"   {t:9.3f}s   {per_call:10.2e}s  {c:7d}  {k:4d}   {stats.nodes[k].apply}",
            file=out,
        )
    rest_time = sum(float(times[k]) for k in order[limit:])
    print(
        f"   ... (remaining {len(order[limit:])} Apply instances account for "
        f"{_percent(rest_time, total):.2f}%({rest_time:.2f}s) of the runtime)",
        file=out,
    )
    print("", file=out)


def _size(n: int) -> str:
    return f"{n}B ({n / 1024:.1f}KB)"


def _memory_section(stats: ProfileStats, sizes: np.ndarray, out: TextIO) -> None:
    print("Memory Profile", file=out)
    print("---", file=out)
    print("    Max peak memory of intermediates and outputs (largest sizes seen)", file=out)
    print(f"        CPU: {_size(stats.peak_memory())}", file=out)
    print("", file=out)
    print("    <Sum apply outputs (bytes)> <Apply outputs types> <Apply node>", file=out)
    order = sorted(range(len(stats.nodes)), key=lambda k: -int(sizes[k]))
    shown = [k for k in order if int(sizes[k]) >= config.profiling.min_memory_size]
    for k in shown[: config.profiling.n_apply]:
        node = stats.nodes[k]
        print(f"     {int(sizes[k]):>10d}B  {node.shape}  {node.apply}", file=out)
    rest = len(stats.nodes) - min(len(shown), config.profiling.n_apply)
    print(f"   ... (remaining {rest} Apply nodes are smaller or not shown)", file=out)
    print("", file=out)


def _gpu_section(stats: ProfileStats, out: TextIO, n_apply: int) -> None:
    """Per kernel of the GPU functions: GPU time (CUDA events), launches, what it is."""
    rows = []
    peak = 0
    for part in stats._parts():
        if part.gpu is not None:
            peak = max(peak, part.gpu.peak_bytes)
            rows += [(name, *entry) for name, entry in part.gpu.kernels.items()]
    total = sum(seconds for *_, seconds in rows)
    launches = sum(count for _, _, count, _ in rows)
    print("GPU kernels", file=out)
    print("-----------", file=out)
    print(f"  Time on the GPU: {total:e}s in {launches} launches (CUDA events)", file=out)
    print(
        "  <% time> <sum %> <kernel time> <time per launch> <launches> <kernel> <computes>",
        file=out,
    )
    cumulative = 0.0
    rows.sort(key=lambda row: -row[3])
    for name, source, count, seconds in rows[:n_apply]:
        cumulative += seconds
        print(
            f"  {_percent(seconds, total):6.1f}%  {_percent(cumulative, total):6.1f}%"
            f"  {seconds:.3e}s  {seconds / max(count, 1):.3e}s  {count:6d}  {name}  {source}",
            file=out,
        )
    if len(rows) > n_apply:
        print(f"   ... (remaining {len(rows) - n_apply} kernels not shown)", file=out)
    if config.profile_memory:
        print(
            f"  Peak GPU memory in use (the device pool's high-water mark): {_size(peak)}", file=out
        )
    print("", file=out)


def _optimizer_section(stats: ProfileStats, out: TextIO) -> None:
    print("Optimizer Profile", file=out)
    print("-----------------", file=out)
    total = sum(r.time for r in stats.optimizer_profile)
    print(f"  graph passes: {total:e}s", file=out)
    print("  <time> <% time> <ops created> <ops erased> <pass>", file=out)
    for record in stats.optimizer_profile:
        print(
            f"  {record.time:e}s  {_percent(record.time, total):5.1f}%"
            f"  {record.created:6d}  {record.erased:6d}   {record.name}",
            file=out,
        )
    print("", file=out)


def write_summary(stats: ProfileStats, out: TextIO, n_ops: int, n_apply: int) -> None:
    """Write the report of `stats` to `out`, listing at most `n_ops` classes and ops and
    `n_apply` nodes."""
    times, calls, sizes = stats.node_counters()
    node_time = float(times.sum())
    _global_section(stats, out, node_time)
    kind = stats.linker or "?"
    _grouped_section(
        "Class", _grouped(stats, times, calls, "op_class"), kind, node_time, n_ops, out
    )
    _grouped_section("Op", _grouped(stats, times, calls, "op"), kind, node_time, n_ops, out)
    _apply_section(stats, times, calls, n_apply, out)
    if any(part.gpu is not None for part in stats._parts()):
        _gpu_section(stats, out, n_apply)
    if config.profile_memory:
        _memory_section(stats, sizes, out)
    if stats.optimizer_profile:
        _optimizer_section(stats, out)
