"""A one-line progress display for a long native compile (`config.compile_progress`).

`compile_progress(stages)` is a context manager around one compile; its `stage(name)`
says which of the `stages` steps runs now. Nothing is shown unless the compile is still
running `DELAY` seconds after it started, `config.compile_progress` is on and stderr is
a terminal: a short compile, a log file or a notebook's captured stream see nothing.
Then a `tqdm` bar on stderr shows the step and the elapsed time (a timer thread starts
it: the compiling thread is in LLVM or in xDSL's passes, which let other threads run),
and is removed when the compile ends.

```python
with compile_progress(["lowering", "LLVM"]) as progress:
    progress.stage("lowering")
    ...
```
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from arignote.configuration import config

DELAY = 2.0
"""Seconds a compile runs before its progress shows."""


class CompileProgress:
    """The display of one compile (see the module docstring)."""

    def __init__(self, stages: Sequence[str], stream: Any):
        self.stages = list(stages)
        self.stream = stream
        self.current: str | None = None
        self.done = 0
        self.bar: Any = None
        self._lock = threading.Lock()
        self._closed = False

    def show(self) -> None:
        """Start the bar (from the timer thread), at the current step."""
        from tqdm import tqdm

        with self._lock:
            if self._closed:
                return
            self.bar = tqdm(
                total=len(self.stages),
                desc="arignote: compiling",
                file=self.stream,
                leave=False,
                bar_format="{desc} {n_fmt}/{total_fmt} [{elapsed}] {postfix}",
            )
            self.bar.update(self.done)
            self.bar.set_postfix_str(self.current or "")

    def stage(self, name: str) -> None:
        """Step `name` starts (the steps before it are done)."""
        with self._lock:
            if self.current is not None:
                self.done += 1
            self.current = name
            if self.bar is not None:
                self.bar.update(1)
                self.bar.set_postfix_str(name)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self.bar is not None:
                self.bar.close()
                self.bar = None


def _wanted(stream: Any) -> bool:
    """Whether a progress display may show on `stream`: the flag is on and it is a
    terminal."""
    if not config.compile_progress:
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):  # a closed or detached stream
        return False


@contextmanager
def compile_progress(stages: Sequence[str]) -> Iterator[CompileProgress]:
    """The progress of one compile of `stages` steps (module docstring)."""
    stream = sys.stderr
    progress = CompileProgress(stages, stream)
    timer = threading.Timer(DELAY, progress.show) if _wanted(stream) else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        yield progress
    finally:
        if timer is not None:
            timer.cancel()
            timer.join()
        progress.close()
