"""Test-suite settings: the on-disk compile cache is off, so that every test compiles
what it tests (the cache's own tests turn it on, with a temporary compiledir), and the IR is
verified again after the graph pipeline (`check_ir`).

Profiles made by tests (`profile=True`) are not printed when the process exits, as a
user's are: the report would follow pytest's summary line. The tests of that printing
run it in a subprocess.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from arignote.compile import profiling
from arignote.configuration import config

config.compile_cache = False
config.check_ir = True


SEEDS = Path(__file__).resolve().parents[1] / "examples" / "theano_tutorial"
"""The user's seed programs."""

RunSeed = Callable[..., "subprocess.CompletedProcess[str]"]


def _run_seed(
    program: str | Path, flags: str | None = None, timeout: int = 300, **env: str
) -> subprocess.CompletedProcess[str]:
    """`program` (a seed's file name, or a path) run by a new Python with
    `ARIGNOTE_FLAGS=flags` when given and the variables `env`; it must exit with 0."""
    environ = dict(os.environ, **env)
    if flags is not None:
        environ["ARIGNOTE_FLAGS"] = flags
    path = program if isinstance(program, Path) else SEEDS / program
    result = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, env=environ, timeout=timeout
    )
    assert result.returncode == 0, result.stderr
    return result


@pytest.fixture
def run_seed() -> RunSeed:
    """Runs a seed program in a new process (`_run_seed`)."""
    return _run_seed


@pytest.fixture(autouse=True)
def _no_profile_report_at_exit() -> Iterator[None]:
    yield
    for stats in profiling._AT_EXIT:
        stats.atexit_print = False
