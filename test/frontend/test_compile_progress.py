"""The progress display of a long native compile (`config.compile_progress`)."""

from __future__ import annotations

import io
import threading

import numpy as np

import arignote
import arignote.tensor as T
from arignote.compile import progress as progress_module
from arignote.configuration import change_flags


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _compile(monkeypatch, stream: io.StringIO, shown: threading.Event) -> None:
    """Compile a small function with no delay before the display, stderr `stream`,
    and wait in the compile until the display had its chance to show."""
    monkeypatch.setattr(progress_module, "DELAY", 0.0)
    monkeypatch.setattr("sys.stderr", stream)
    show = progress_module.CompileProgress.show

    def show_and_signal(self):
        show(self)
        shown.set()

    monkeypatch.setattr(progress_module.CompileProgress, "show", show_and_signal)
    stage = progress_module.CompileProgress.stage

    def waiting_stage(self, name):
        stage(self, name)
        if name == "LLVM" and progress_module._wanted(stream):
            assert shown.wait(timeout=60), "the display did not start"

    monkeypatch.setattr(progress_module.CompileProgress, "stage", waiting_stage)
    x = T.dvector("x")
    with change_flags(compile_cache=False):
        f = arignote.function([x], x * 2 + 1)
    np.testing.assert_array_equal(f(np.arange(3.0)), [1.0, 3.0, 5.0])


def test_a_long_compile_shows_its_progress_on_a_terminal(monkeypatch):
    stream, shown = _Terminal(), threading.Event()
    _compile(monkeypatch, stream, shown)
    assert shown.is_set()
    assert "arignote: compiling" in stream.getvalue()
    assert "LLVM" in stream.getvalue()


def test_no_progress_when_stderr_is_not_a_terminal(monkeypatch):
    stream, shown = io.StringIO(), threading.Event()
    _compile(monkeypatch, stream, shown)
    assert not shown.is_set() and stream.getvalue() == ""


def test_no_progress_when_the_flag_is_off(monkeypatch):
    stream, shown = _Terminal(), threading.Event()
    with change_flags(compile_progress=False):
        _compile(monkeypatch, stream, shown)
    assert not shown.is_set() and stream.getvalue() == ""


def test_a_compile_shorter_than_the_delay_shows_nothing():
    """The timer is cancelled when the compile ends first."""
    stream = _Terminal()
    progress = progress_module.CompileProgress(["a"], stream)
    progress.stage("a")
    progress.close()
    progress.show()  # a timer firing after the end draws nothing
    assert progress.bar is None and stream.getvalue() == ""
