"""`arignote.compile.gcpause`: the collector is paused while function() compiles."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.compile import mode as mode_module
from arignote.compile.gcpause import gc_paused


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_paused_then_restored(collector_on):
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():  # nested
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_restored_after_an_exception(collector_on):
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError("compile failed")
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled(collector_on):
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()


def test_overlapping_compiles_in_threads(collector_on):
    """The collector comes back when the last of two overlapping pauses ends."""
    first_in, second_done = threading.Event(), threading.Event()
    seen = []

    def first():
        with gc_paused():
            first_in.set()
            second_done.wait(5)
            seen.append(gc.isenabled())

    thread = threading.Thread(target=first)
    thread.start()
    first_in.wait(5)
    with gc_paused():
        pass
    seen.append(gc.isenabled())  # the first pause still runs
    second_done.set()
    thread.join(5)
    assert seen == [False, False]
    assert gc.isenabled()


def test_function_compiles_with_the_collector_paused(collector_on, monkeypatch):
    states = []
    real = mode_module.Mode.compile

    def spy(self, module, symbol, graph=None):
        states.append(gc.isenabled())
        return real(self, module, symbol, graph)

    monkeypatch.setattr(mode_module.Mode, "compile", spy)
    x = T.dvector("x")
    f = arignote.function([x], x * 2)
    assert states == [False]
    assert gc.isenabled()
    np.testing.assert_allclose(f(np.arange(3.0)), [0.0, 2.0, 4.0])
