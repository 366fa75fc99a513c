"""Output reuse: natively compiled code writes a call's results into the arrays it returned
at the previous call once the caller has dropped them (`arignote.runtime.entry`, "Output
reuse"), in the CPython entry point and in the Python call path alike. It must be
invisible: an array the caller still holds, a view of it, a weak reference to it, is
never overwritten; only the data pointer shows the reuse."""

from __future__ import annotations

import gc
import re
import threading
import weakref

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.compile.mode import Mode
from arignote.compile.profiling import ProfileStats


def pointer(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def fast_calls(f: arignote.Function) -> int:
    return f._compiled.run.native.fast_entry.calls


pytestmark = pytest.mark.usefixtures("entry_mode")


@pytest.fixture(scope="module")
def affine(entry_mode: str) -> arignote.Function:
    x = T.fvector("x")
    return arignote.function([x], x * 2 + 1)


# The two native call paths: the entry point (an ndarray of the input's type) and the
# Python path (a list, which the entry point leaves to the Python conversion).
PATHS = {
    "entry": lambda values: np.asarray(values, np.float32),
    "python": lambda values: list(values),
}


@pytest.mark.parametrize("path", PATHS)
def test_dropped_result_is_reused(affine: arignote.Function, path: str) -> None:
    arg = PATHS[path]([0.0, 1.0, 2.0, 3.0])
    before = fast_calls(affine)
    first = affine(arg)
    address = pointer(first)
    del first
    second = affine(arg)
    assert pointer(second) == address
    np.testing.assert_array_equal(second, [1, 3, 5, 7])
    assert fast_calls(affine) - before == (2 if path == "entry" else 0)


@pytest.mark.parametrize("path", PATHS)
def test_held_result_and_views_are_not_overwritten(affine: arignote.Function, path: str) -> None:
    first = affine(PATHS[path]([0.0, 1.0, 2.0, 3.0]))
    second = affine(PATHS[path]([10.0, 11.0, 12.0, 13.0]))
    assert pointer(second) != pointer(first)
    np.testing.assert_array_equal(first, [1, 3, 5, 7])
    view = second[1:]
    del second
    third = affine(PATHS[path]([5.0, 5.0, 5.0, 5.0]))
    np.testing.assert_array_equal(view, [23, 25, 27])
    np.testing.assert_array_equal(third, [11, 11, 11, 11])
    memory = memoryview(third)
    del third
    fourth = affine(PATHS[path]([0.0, 0.0, 0.0, 0.0]))
    np.testing.assert_array_equal(np.asarray(memory), [11, 11, 11, 11])
    np.testing.assert_array_equal(fourth, [1, 1, 1, 1])


@pytest.mark.parametrize("path", PATHS)
def test_weakly_referenced_or_altered_result_is_not_reused(
    affine: arignote.Function, path: str
) -> None:
    # (the checks are on what the caller sees: malloc may well hand a freed buffer out
    # again, so an equal data pointer alone proves nothing here)
    arg = PATHS[path]([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    first = affine(arg)
    ref = weakref.ref(first)
    del first
    second = affine(arg)
    assert ref() is not None  # kept as the older array, not written
    np.testing.assert_array_equal(ref(), [1, 3, 5, 7, 9, 11])
    del second
    affine(arg)
    assert ref() is None  # released two calls later
    second = affine(arg)
    second.flags.writeable = False
    del second
    third = affine(arg)
    assert third.flags.writeable
    third.shape = (2, 3)
    del third
    fourth = affine(arg)
    assert fourth.shape == (6,)
    fourth.dtype = np.int32
    del fourth
    fifth = affine(arg)
    assert fifth.dtype == np.float32
    np.testing.assert_array_equal(fifth, [1, 3, 5, 7, 9, 11])
    shorter = affine(PATHS[path]([1.0, 2.0]))  # another shape: a new array
    np.testing.assert_array_equal(shorter, [3, 5])


@pytest.mark.parametrize("path", PATHS)
def test_loop_holding_the_last_result_reuses_the_one_before(
    affine: arignote.Function, path: str
) -> None:
    arg = PATHS[path]([0.0, 1.0, 2.0])
    r = affine(arg)
    addresses = []
    for k in range(4):
        r = affine(PATHS[path]([float(k)] * 3))  # r is held while the next call runs
        addresses.append(pointer(r))
        np.testing.assert_array_equal(r, [2 * k + 1] * 3)
    # two buffers take turns
    assert addresses[2] == addresses[0] and addresses[3] == addresses[1]
    assert addresses[0] != addresses[1]


def test_result_passed_back_as_input(affine: arignote.Function) -> None:
    a = np.arange(5, dtype=np.float32)
    r, expected = affine(a), a * 2 + 1
    for _ in range(3):
        r = affine(r)  # the caller holds r during the call: not the output buffer
        expected = expected * 2 + 1
    np.testing.assert_array_equal(r, expected)
    np.testing.assert_array_equal(affine(affine(a)), (a * 2 + 1) * 2 + 1)


def test_free_and_collection_release_the_kept_arrays() -> None:
    x = T.fvector("x")
    f = arignote.function([x], [x + 1, x.sum()])
    a = np.arange(3, dtype=np.float32)
    refs = [weakref.ref(r) for r in f(a)]  # weakly referenced: kept, not reused
    assert all(r() is not None for r in refs)
    f.free()
    assert all(r() is None for r in refs)
    f.free()  # nothing kept: a no-op
    refs = [weakref.ref(r) for r in f(list(a))]  # the Python path keeps its own
    assert all(r() is not None for r in refs)
    del f
    gc.collect()
    assert all(r() is None for r in refs)


def test_multiple_outputs_scalars_and_updates() -> None:
    x = T.fmatrix("x")
    w = arignote.shared(np.zeros(3, np.float32), name="w")
    f = arignote.function([x], [x.sum(axis=0), x.max()], updates=[(w, w + x.sum(axis=0))])
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    outs = f(a)
    addresses = [pointer(o) for o in outs]
    del outs
    for k in range(2, 5):
        s, m = f(a)
        assert [pointer(s), pointer(m)] == addresses
        np.testing.assert_array_equal(s, [3, 5, 7])
        assert m == 5 and m.shape == ()
        np.testing.assert_array_equal(w.get_value(), k * np.array([3, 5, 7], np.float32))
        # the stored value (computed in place, or in a fresh buffer) is never an output's
        assert pointer(w.get_value(borrow=True)) not in addresses
        del s, m
    # a stored value the caller replaced and dropped is not written behind its back
    replaced = np.ones(3, np.float32)
    w.set_value(replaced, borrow=True)
    f(a)
    np.testing.assert_array_equal(replaced, [4, 6, 8])  # borrowed: updated in place
    w.set_value(np.zeros(3, np.float32))
    np.testing.assert_array_equal(replaced, [4, 6, 8])
    np.testing.assert_array_equal(f(a)[0], [3, 5, 7])
    np.testing.assert_array_equal(replaced, [4, 6, 8])


def test_interpreter_results_are_fresh() -> None:
    x = T.fvector("x")
    f = arignote.function([x], x * 2, mode=Mode(linker="py"))
    a = np.arange(3, dtype=np.float32)
    first = f(a)
    view = first[:2]
    second = f(a + 1)
    np.testing.assert_array_equal(first, [0, 2, 4])
    np.testing.assert_array_equal(view, [0, 2])
    np.testing.assert_array_equal(second, [2, 4, 6])
    f.free()  # nothing to release


def test_threads_get_their_own_results(affine: arignote.Function) -> None:
    errors = []

    def work(k: int) -> None:
        a = np.full(70_000, k, np.float32)  # large enough to release the GIL
        for _ in range(20):
            r = affine(a)
            if not (r == 2 * k + 1).all():
                errors.append(k)
            del r

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_entry_ir_keeps_two_arrays_per_output(entry_mode: str) -> None:
    from arignote.runtime import entry

    spec = entry.arg_spec(np.dtype(np.float32), [-1])
    text = entry.entry_ir("f", [spec], [spec, entry.arg_spec(np.dtype(np.float32), [])])
    for j in range(2):
        last, older = entry.kept_symbols("f", j)
        assert f'@"{last}" = global ptr null' in text
        assert f'@"{older}" = global ptr null' in text
        if entry_mode == "outlined":  # a helper given its two slots makes output j
            assert re.search(rf'call ptr @"f__entry_out\d+"\([^)]*@"{last}", ptr @"{older}"', text)
            assert re.search(rf'call void @"f__entry_keep"\([^)]*@"{last}", ptr @"{older}"', text)
        else:  # both slots are read for output j, then kept in
            assert text.count(f'load ptr, ptr @"{last}"') == 2  # (reused, then kept)
            assert text.count(f'load ptr, ptr @"{older}"') == 2
    for label in ("last", "older"):  # the helpers try both slots, then allocate
        assert f"{label}_check:" in text
    assert "arignote_PyArray_New" in text
    assert "f__kept2" not in text


def test_profiled_function_reuses_and_frees() -> None:
    x = T.fvector("x")
    f = arignote.function([x], x * 3, profile=ProfileStats(atexit_print=False))
    a = np.ones(4, np.float32)
    ref = weakref.ref(f(a))  # kept (weakly referenced: not reused)
    assert ref() is not None
    f.free()
    assert ref() is None
    first = f(a)
    address = pointer(first)
    del first
    assert pointer(f(a)) == address


@pytest.mark.parametrize("linker", ["py", "cvm"])
def test_borrowed_output_stays_valid(linker: str) -> None:
    from arignote.compile.io import Out

    x = T.fvector("x")
    f = arignote.function([x], Out(x * 2, borrow=True), mode=Mode(linker=linker))
    first = f(np.ones(3, np.float32))
    second = f(np.full(3, 5, np.float32))
    np.testing.assert_array_equal(first, [2, 2, 2])  # borrowing lets arignote overwrite
    np.testing.assert_array_equal(second, [10, 10, 10])  # it; it never does while held
