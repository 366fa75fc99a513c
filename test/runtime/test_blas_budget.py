"""`arignote.runtime.blas.ThreadBudget`: OpenBLAS's thread count follows the cores the
other processes leave free (a busy machine gets one thread, a quiet one all)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from arignote.runtime import blas, threadpool


class Machine:
    """A fake clock, /proc/stat busy time and process CPU time, advanced by hand."""

    def __init__(self) -> None:
        self.now = self.busy = self.own = 0.0

    def advance(self, seconds: float, others: float, own: float) -> None:
        """`seconds` pass; the other processes use `others` cores, this one `own`."""
        self.now += seconds
        self.busy += seconds * (others + own)
        self.own += seconds * own


def budget(machine: Machine, cores: int = 2) -> tuple[blas.ThreadBudget, list[int]]:
    calls: list[int] = []
    made = blas.ThreadBudget(
        calls.append,
        range(cores),
        busy=lambda: machine.busy,
        own=lambda: machine.own,
        clock=lambda: machine.now,
    )
    return made, calls


def test_busy_others_get_one_thread_and_a_quiet_machine_all() -> None:
    machine = Machine()
    made, calls = budget(machine)
    machine.advance(0.25, others=0.0, own=2.0)  # this process alone, on both cores
    assert made.look() == 2 and calls == []  # unchanged: OpenBLAS not called
    machine.advance(0.25, others=2.0, own=1.0)
    assert made.look() == 1  # the average of 0 and 2 cores taken: 1 left
    machine.advance(0.25, others=2.0, own=1.0)
    assert made.look() == 1 and calls == [1]
    machine.advance(0.25, others=0.0, own=1.5)
    assert made.look() == 1  # averaged with the busy look before: still 1
    machine.advance(0.25, others=0.1, own=2.0)
    assert made.look() == 2 and calls == [1, 2]


def test_never_below_one_nor_above_the_cores() -> None:
    machine = Machine()
    made, calls = budget(machine, cores=4)
    machine.advance(0.25, others=16.0, own=1.0)  # more than the machine: rounding, load
    assert made.look() == 1
    assert made.look() == 1  # no time passed: nothing measured
    machine.advance(0.25, others=0.0, own=0.5)
    machine.advance(0.0, others=0.0, own=0.0)
    assert made.look() == 1  # the average: 8 cores taken
    machine.advance(0.25, others=0.0, own=0.5)
    assert made.look() == 4 and calls == [1, 4]


def test_busy_seconds_reads_the_processes_cpus(tmp_path) -> None:
    stat = tmp_path / "stat"
    # user nice system idle iowait irq softirq steal: busy = all but idle and iowait
    stat.write_text(
        "cpu  900 0 100 5000 50 0 0 0 0 0\n"
        "cpu0 300 0 50 2000 10 5 5 0 0 0\n"
        "cpu1 600 0 50 3000 40 0 0 10 0 0\n"
        "intr 1 2 3\n"
    )
    ticks = os.sysconf("SC_CLK_TCK")
    assert blas._busy_seconds({0}, str(stat)) == pytest.approx(360 / ticks)
    assert blas._busy_seconds({1}, str(stat)) == pytest.approx(660 / ticks)
    assert blas._busy_seconds({0, 1}, str(stat)) == pytest.approx(1020 / ticks)


def test_a_thread_count_from_the_user_is_left_alone(monkeypatch) -> None:
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    assert blas.ThreadBudget.for_this_process(lambda n: None) is None


def test_no_budget_under_a_cpu_quota(monkeypatch) -> None:
    for name in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(threadpool, "cpu_quota", lambda: 2)
    assert blas.ThreadBudget.for_this_process(lambda n: None) is None


_LOADED = """
import threading
from arignote.runtime import blas
blas.load_blas()
print(sorted(t.name for t in threading.enumerate() if t.daemon))
"""


@pytest.mark.skipif(
    threadpool.usable_cores() < 2
    or threadpool.cpu_quota() is not None
    or not os.path.exists("/proc/stat"),
    reason="the budget runs on Linux, with 2 or more CPUs and no CPU quota",
)
def test_loading_the_library_starts_the_budget_unless_the_user_set_threads() -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("NUM_THREADS")}
    out = subprocess.run(
        [sys.executable, "-c", _LOADED], env=env, capture_output=True, text=True, check=True
    )
    assert "arignote-blas-budget" in out.stdout
    out = subprocess.run(
        [sys.executable, "-c", _LOADED],
        env=dict(env, OPENBLAS_NUM_THREADS="2"),
        capture_output=True,
        text=True,
        check=True,
    )
    assert "arignote-blas-budget" not in out.stdout
