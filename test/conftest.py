"""Test-suite settings: the on-disk compile cache is off, so that every test compiles
what it tests (the cache's own tests turn it on, with a temporary compiledir), and the IR is
verified again after the graph pipeline (`check_ir`).

Profiles made by tests (`profile=True`) are not printed when the process exits, as a
user's are: the report would follow pytest's summary line. The tests of that printing
run it in a subprocess.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from arignote.compile import profiling
from arignote.configuration import config

config.compile_cache = False
config.check_ir = True


@pytest.fixture(autouse=True)
def _no_profile_report_at_exit() -> Iterator[None]:
    yield
    for stats in profiling._AT_EXIT:
        stats.atexit_print = False
