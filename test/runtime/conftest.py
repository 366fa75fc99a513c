"""Fixtures of the runtime tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module", params=["inline", "outlined"])
def entry_mode(request: pytest.FixtureRequest):
    """The module's tests with entry points of each kind (`arignote.runtime.entry`):
    each argument's code written out, and in helpers (`OUTLINE_FROM`, which functions of
    many arguments reach)."""
    from arignote.runtime import entry

    saved = entry.OUTLINE_FROM
    entry.OUTLINE_FROM = 10**9 if request.param == "inline" else 0
    try:
        yield request.param
    finally:
        entry.OUTLINE_FROM = saved
