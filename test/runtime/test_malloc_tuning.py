"""`config.malloc_tuning` (`arignote.runtime.malloc_tuning`): once a function is compiled
natively, temporaries freed at the end of a call stay in the heap, so the next call does
not page-fault them in again; the user's own glibc tuning (environment) is left alone."""

from __future__ import annotations

import os
import subprocess
import sys

from arignote.runtime import malloc_tuning

# Four 1.6 MB blocks allocated, written and freed per step (an RNN step's temporaries):
# the minor page faults of 10 steps after a warm-up, in a fresh process.
PROGRAM = """
import resource, sys
import numpy as np
import arignote, arignote.tensor as T

arignote.config.compile_cache = False
arignote.config.malloc_tuning = sys.argv[1] == "on"
x = T.fvector("x")
f = arignote.function([x], x + 1)  # compiled natively: Mode.compile tunes malloc

def step():
    blocks = [np.ones(400_000, np.float32) for _ in range(4)]
    del blocks

step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(10):
    step()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def faults(flag: str, **env: str) -> int:
    environ = {k: v for k, v in os.environ.items() if k not in malloc_tuning.ENVIRONMENT}
    environ.update(env)
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, flag],
        capture_output=True,
        text=True,
        env=environ,
        check=True,
        timeout=120,
    )
    return int(done.stdout.split()[-1])


def test_freed_temporaries_are_not_faulted_in_again() -> None:
    if not malloc_tuning._glibc():  # another C library: nothing is tuned
        assert malloc_tuning.tune_malloc() is False
        return
    assert faults("off") > 1000  # 4 x 1.6 MB trimmed and faulted in at every step
    assert faults("on") < 50
    # the user's own setting wins: nothing is tuned
    assert faults("on", MALLOC_TRIM_THRESHOLD_="131072") > 1000


def test_left_alone_when_the_environment_tunes_malloc(monkeypatch) -> None:
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "65536")
    malloc_tuning.tune_malloc.cache_clear()
    try:
        assert malloc_tuning.tune_malloc() is False
    finally:
        malloc_tuning.tune_malloc.cache_clear()
