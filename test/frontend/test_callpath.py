"""The fast call of a function with state (`arignote.compile.callpath`): shared values
passed to the native entry point, updates stored after it, outputs returned as the general
path returns them; anything unusual takes the general path."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.compile.io import In
from arignote.compile.mode import Mode


def fast_calls(f: arignote.Function) -> int:
    return f._compiled.run.native.fast_entry.calls


def counter_function(outputs: str, mode: Mode | None = None):
    x = T.fvector("x")
    w = arignote.shared(np.zeros(3, np.float32), name="w")
    n = arignote.shared(np.int64(0), name="n")
    out = {"list": [x + w, (x * w).sum()], "single": x + w, "none": None}[outputs]
    f = arignote.function([x], out, updates=[(w, w + x), (n, n + 1)], mode=mode)
    return f, w, n


@pytest.mark.parametrize("outputs", ["list", "single", "none"])
def test_stateful_calls_take_the_closure(outputs: str) -> None:
    f, w, n = counter_function(outputs)
    assert f._direct is not None and f._direct is not f._entry
    a = np.array([1, 2, 3], np.float32)
    results = [f(a) for _ in range(3)]
    assert fast_calls(f) == 3
    np.testing.assert_array_equal(w.get_value(), 3 * a)
    assert n.get_value() == 3
    if outputs == "list":
        assert [type(r) for r in results] == [list] * 3 and all(len(r) == 2 for r in results)
        np.testing.assert_array_equal(results[1][0], 2 * a)  # computed from the old w
        assert results[2][1] == pytest.approx(float((a * 2 * a).sum()))
    elif outputs == "single":
        np.testing.assert_array_equal(results[0], a)
        np.testing.assert_array_equal(results[2], 3 * a)
    else:
        assert results == [[], [], []]


def test_unusual_calls_take_the_general_path() -> None:
    f, w, n = counter_function("list")
    a = np.array([1, 2, 3], np.float32)
    out = f(x=a)  # keywords
    np.testing.assert_array_equal(out[0], a)
    out = f([1, 1, 1])  # a list: converted
    np.testing.assert_array_equal(out[0], a + 1)
    with pytest.raises(TypeError, match="Bad input argument"):
        f(np.zeros(3, np.float64))  # float64 cannot be downcast safely
    w.set_value(np.ones(3, np.float32))  # a new stored value: read at the next call
    before = fast_calls(f)
    np.testing.assert_array_equal(f(a)[0], a + 1)
    assert fast_calls(f) == before + 1 and n.get_value() == 3
    np.testing.assert_array_equal(w.get_value(), a + 1)


def test_input_updates_and_interpreter_keep_the_general_path() -> None:
    x, s = T.fvector("x"), T.fscalar("s")
    f = arignote.function([x, In(s, value=np.float32(0), update=s + x.sum())], s + x.sum())
    assert f._direct is None
    assert f(np.ones(2, np.float32)) == 2 and f(np.ones(2, np.float32)) == 4
    g, w, _ = counter_function("list", Mode(linker="py"))
    assert g._direct is None
    g(np.ones(3, np.float32))
    np.testing.assert_array_equal(w.get_value(), np.ones(3))


def test_copies_with_swapped_state_have_their_own_closure() -> None:
    f, w, n = counter_function("single")
    w2 = arignote.shared(np.full(3, 10, np.float32), name="w2")
    g = f.copy(swap={w: w2})
    a = np.ones(3, np.float32)
    (out,) = g(a)  # a copy returns a list, as Theano's
    np.testing.assert_array_equal(out, [11, 11, 11])
    np.testing.assert_array_equal(w2.get_value(), [11, 11, 11])
    np.testing.assert_array_equal(w.get_value(), [0, 0, 0])
    np.testing.assert_array_equal(f(a), [1, 1, 1])


def test_many_shared_variables_take_the_closure() -> None:
    # one lock per shared variable: nested `try` blocks for 40 of them passed Python's
    # limit of 20 ("SyntaxError: too many statically nested blocks" from function())
    x = T.fvector("x")
    shared = [arignote.shared(np.full(2, i, np.float32), name=f"p{i}") for i in range(40)]
    f = arignote.function([x], x.sum(), updates=[(p, p + x) for p in shared])
    a = np.array([1, 2], np.float32)
    assert f(a) == pytest.approx(3.0) and f(a) == pytest.approx(3.0)
    assert fast_calls(f) == 2
    for i, p in enumerate(shared):
        np.testing.assert_array_equal(p.get_value(), i + 2 * a)


def test_locks_are_released_when_the_call_fails() -> None:
    from arignote.compile.callpath import stateful_call

    class Storage:
        value = np.zeros(1)

    class Lock:
        def __init__(self) -> None:
            self.held = 0

        def acquire(self) -> None:
            self.held += 1

        def release(self) -> None:
            self.held -= 1

    def failing_entry(*args):
        raise RuntimeError("boom")

    for n in (3, 40):  # nested try blocks, and the loop beyond their limit
        locks = [Lock() for _ in range(n)]
        call = stateful_call(failing_entry, [Storage()], [Storage()], 1, False, locks)
        with pytest.raises(RuntimeError, match="boom"):
            call()
        assert [lock.held for lock in locks] == [0] * n
