"""Compiled functions called from several Python threads (docs/threads.md).

A call holds the locks of the shared variables it reads or updates from the moment it
reads their values until it has stored its updates, so no other thread sees a
half-applied update (native code computes updates in the stored arrays, with the GIL
released) and no update is lost. The stress tests below run enough concurrent calls
that, without the locks, they fail on any machine; the deterministic ones use a `Print`
hook to stop a call in the middle. Every thread is joined with a timeout (a deadlock
fails the test instead of hanging it) and is a daemon.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote import In
from arignote.printing import Print

LINKERS = ["cvm", "py"]

N = 1 << 17
"""Elements of the stress tests' vectors: enough that native code releases the GIL
around the computation (`arignote.runtime.entry.GIL_RELEASE_ELEMENTS`)."""

JOIN_TIMEOUT = 60.0
"""Seconds the threads of a test may take together before it declares them hung (a
deadlock guard only)."""


def _mode(linker: str) -> arignote.Mode:
    return arignote.Mode(linker=linker)


@pytest.fixture(autouse=True)
def frequent_switches() -> Iterator[None]:
    """Let the interpreter switch threads every 10 µs (instead of 5 ms), so that Python
    code between reading a shared value and storing the update is interleaved often."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def run_threads(targets: Sequence[Callable[[], None]]) -> None:
    """Run each target in its own daemon thread, all at once; re-raise the first error
    a thread raised; fail if one is still running after `JOIN_TIMEOUT` (a deadlock)."""
    errors: list[BaseException] = []

    def guarded(target: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                target()
            except BaseException as error:  # noqa: BLE001 - handed to the test's thread
                errors.append(error)

        return run

    threads = [threading.Thread(target=guarded(t), daemon=True) for t in targets]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + JOIN_TIMEOUT
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    hung = [t.name for t in threads if t.is_alive()]
    assert not hung, f"threads still running after {JOIN_TIMEOUT} s (deadlock?): {hung}"
    if errors:
        raise errors[0]


def repeat(f: Callable[[], object], times: int) -> Callable[[], None]:
    def run() -> None:
        for _ in range(times):
            f()

    return run


def read_until(
    done: threading.Event, read: Callable[[], np.ndarray], seen: list[np.ndarray]
) -> Callable[[], None]:
    """A reader calling `read` until `done`, keeping every value that is not constant
    (a torn read: some elements updated, others not)."""

    def run() -> None:
        while not done.is_set():
            value = read()
            if value.min() != value.max():
                seen.append(value)

    return run


def writers_then_done(writers: Sequence[Callable[[], None]], done: threading.Event):
    """The writers, the last one to finish setting `done` (which stops the readers)."""
    remaining = [len(writers)]
    lock = threading.Lock()

    def wrap(writer: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                writer()
            finally:
                with lock:
                    remaining[0] -= 1
                    if remaining[0] == 0:
                        done.set()

        return run

    return [wrap(w) for w in writers]


# --- concurrent updaters lose nothing --------------------------------------------------


@pytest.mark.parametrize("linker", LINKERS)
def test_concurrent_increments_lose_nothing(linker: str) -> None:
    s = arignote.shared(np.zeros(N), name="s")
    inc = arignote.function([], [], updates=[(s, s + 1)], mode=_mode(linker))
    out = arignote.function([], s.sum(), updates=[(s, s + 1)], mode=_mode(linker))
    trusted = arignote.function([], [s[0]], updates=[(s, s + 1)], mode=_mode(linker))
    trusted.trust_input = True
    calls = 100
    run_threads([repeat(f, calls) for f in (inc, inc, out, trusted)])
    value = s.get_value()
    assert value.min() == value.max() == 4 * calls, (value.min(), value.max())


@pytest.mark.parametrize("linker", LINKERS)
def test_concurrent_input_updates_lose_nothing(linker: str) -> None:
    # the state of `In(update=...)` belongs to the function: it is locked the same way
    acc = T.dvector("acc")
    f = arignote.function(
        [In(acc, value=np.zeros(N), update=acc + 1)], acc.sum(), mode=_mode(linker)
    )
    calls = 100
    run_threads([repeat(f, calls) for _ in range(4)])
    value = f["acc"]
    assert value.min() == value.max() == 4 * calls, (value.min(), value.max())


# --- a reader never sees a half-applied update -----------------------------------------


@pytest.mark.parametrize("linker", LINKERS)
def test_readers_never_see_a_half_updated_vector(linker: str) -> None:
    s = arignote.shared(np.zeros(N), name="s")
    inc = arignote.function([], [], updates=[(s, s + 1)], mode=_mode(linker))
    read = arignote.function([], s * 1, mode=_mode(linker))
    done, torn, copies = threading.Event(), [], []
    writers = writers_then_done([repeat(inc, 150), repeat(inc, 150)], done)
    run_threads([*writers, read_until(done, read, torn), read_until(done, s.get_value, copies)])
    assert not torn, f"{len(torn)} reads saw a half-updated vector"
    assert not copies, f"{len(copies)} get_value() copies were half-updated"
    assert s.get_value().min() == 300


@pytest.mark.parametrize("linker", LINKERS)
def test_an_update_of_two_variables_is_atomic(linker: str) -> None:
    a = arignote.shared(np.zeros(N // 2), name="a")
    b = arignote.shared(np.zeros(N // 2), name="b")
    step = arignote.function([], [], updates=[(a, a + 1), (b, b + 1)], mode=_mode(linker))
    step_ba = arignote.function([], [], updates=[(b, b + 1), (a, a + 1)], mode=_mode(linker))
    # a - b is 0 everywhere unless a reader sees one variable updated and not the other
    read = arignote.function([], T.concatenate([a - b, [0.0]]), mode=_mode(linker))
    done, torn = threading.Event(), []
    writers = writers_then_done([repeat(step, 150), repeat(step_ba, 150)], done)
    run_threads([*writers, read_until(done, read, torn), read_until(done, read, torn)])
    assert not torn, f"{len(torn)} reads saw only one of two variables updated"
    assert a.get_value().min() == b.get_value().max() == 300


# --- deterministic: a print hook stops a call in the middle ----------------------------

SECOND_WAIT = 0.5
"""Seconds a paused call waits for a second thread's action to finish. It finishes at
once when nothing blocks it (without the locks: the test then fails); with the locks it
waits for the paused call, which goes on after this delay."""

SECOND_ACTIONS = {
    "call": (lambda f, s: f(), 2.0),
    "set_value": (lambda f, s: s.set_value(10.0), 10.0),
}


@pytest.mark.parametrize(
    ("linker", "action"), [("cvm", "call"), ("py", "call"), ("cvm", "set_value")]
)
def test_a_call_holds_its_variables_until_its_update_is_stored(linker: str, action: str) -> None:
    act, expected = SECOND_ACTIONS[action]
    s = arignote.shared(np.float64(0.0), name="s")
    second: list[threading.Thread] = []
    finished = threading.Event()

    def pause(op: object, value: np.ndarray) -> None:
        if second:
            return  # only the first call pauses
        thread = threading.Thread(target=lambda: (act(f, s), finished.set()), daemon=True)
        second.append(thread)
        thread.start()
        finished.wait(SECOND_WAIT)  # (the second thread waits for this call to end)

    new = Print("s", global_fn=pause)(s + 1)
    f = arignote.function([], [], updates=[(s, new)], mode=_mode(linker))
    run_threads([f])
    second[0].join(JOIN_TIMEOUT)
    assert not second[0].is_alive(), "the second thread is still blocked (deadlock?)"
    assert s.get_value() == expected  # the first call's update was not lost, nor the second's


@pytest.mark.parametrize("linker", LINKERS)
def test_calls_on_different_variables_run_in_parallel(linker: str) -> None:
    # each call waits inside its print for the other to be inside its own: this passes
    # only if neither waits for the other's locks
    meet = threading.Barrier(2, timeout=JOIN_TIMEOUT / 2)

    def update(name: str) -> arignote.Function:
        v = arignote.shared(np.zeros(3), name=name)
        new = Print(name, global_fn=lambda op, value: meet.wait())(v + 1)
        return arignote.function([], [], updates=[(v, new)], mode=_mode(linker))

    run_threads([update("a"), update("b")])  # a BrokenBarrierError if they did not meet
    assert not meet.broken


# --- functions without shared variables ------------------------------------------------


@pytest.mark.parametrize("linker", LINKERS)
def test_concurrent_calls_of_one_function(linker: str) -> None:
    # each call computes on its own: the interpreter's values live in one environment
    # per call, native code's descriptors in one frame per call
    x = T.dvector("x")
    f = arignote.function([x], [(x * 2).sum(), x + 1], mode=_mode(linker))
    wrong: list[tuple[float, float]] = []

    def worker(k: int) -> Callable[[], None]:
        value = np.full(1000, float(k))

        def run() -> None:
            for _ in range(100):
                total, plus = f(value)
                if total != 2000.0 * k or plus[0] != k + 1:
                    wrong.append((float(total), float(plus[0])))

        return run

    run_threads([worker(k) for k in range(4)])
    assert not wrong, wrong[:5]


def test_copied_and_pickled_shared_variables_get_locks_of_their_own() -> None:
    """The lock of a shared variable's value is not part of its state: `copy.deepcopy`
    and `pickle` (which the locks broke) give a variable with the same value and a lock
    of its own: a call updating the copy runs while another thread holds the
    original's lock."""
    import copy
    import pickle

    s = arignote.shared(np.arange(3.0), name="s")
    held, done = threading.Event(), threading.Event()

    def hold_the_original() -> None:
        with s._storage.lock:
            held.set()
            done.wait(60)

    holder = threading.Thread(target=hold_the_original, daemon=True)
    holder.start()
    assert held.wait(60)
    try:
        for other in (copy.deepcopy(s), pickle.loads(pickle.dumps(s))):
            np.testing.assert_array_equal(other._storage.value, [0.0, 1.0, 2.0])
            call = threading.Thread(
                target=arignote.function([], [], updates=[(other, other + 1)]), daemon=True
            )
            call.start()
            call.join(60)
            assert not call.is_alive(), "the copy waited for the original's lock"
            np.testing.assert_array_equal(other._storage.value, [1.0, 2.0, 3.0])
    finally:
        done.set()
        holder.join(60)
    np.testing.assert_array_equal(s.get_value(), [0.0, 1.0, 2.0])
