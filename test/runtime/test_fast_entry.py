"""The fast call path (`arignote.runtime.entry`): a compiled function's CPython entry point
checks ndarrays, allocates the outputs and runs the native code without Python; anything
unusual takes the Python path, whose results and errors are unchanged."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.runtime import entry


def fast_calls(f: arignote.Function) -> int:
    """How many calls of `f` completed in its native entry point."""
    return f._compiled.run.native.fast_entry.calls


pytestmark = pytest.mark.usefixtures("entry_mode")

DEFAULT_OUTLINE_FROM = entry.OUTLINE_FROM


@pytest.fixture(scope="module")
def add(entry_mode: str) -> arignote.Function:
    x, y = T.fvector("x"), T.fvector("y")
    return arignote.function([x, y], x + y)


def test_layout_verified_and_symbols_bound() -> None:
    assert entry.LAYOUT is not None  # CPython with numpy's documented structs
    assert entry.register_symbols()
    symbols = entry.process_symbols()
    assert symbols["arignote_PyArray_Type"] == id(np.ndarray)
    assert all(symbols.values())


def test_fast_path_used(add: arignote.Function) -> None:
    a, b = np.arange(4, dtype=np.float32), np.ones(4, np.float32)
    before = fast_calls(add)
    for _ in range(5):
        np.testing.assert_array_equal(add(a, b), a + 1)
    assert fast_calls(add) == before + 5
    # int64 has two numpy type numbers ('l' and 'q'): both take the fast path
    i = T.lvector("i")
    g = arignote.function([i], i * 2)
    q = np.arange(3, dtype="q")
    np.testing.assert_array_equal(g(q), [0, 2, 4])
    np.testing.assert_array_equal(g(np.arange(3)), [0, 2, 4])
    assert fast_calls(g) == 2


def test_unusual_arguments_take_the_python_path(add: arignote.Function) -> None:
    a = np.arange(4, dtype=np.float32)
    before = fast_calls(add)
    np.testing.assert_array_equal(add([0, 1, 2, 3], a), 2 * a)  # a list: converted
    np.testing.assert_array_equal(add(x=a, y=a), 2 * a)  # keywords
    swapped = a.astype(">f4")  # another byte order
    np.testing.assert_array_equal(add(swapped, a), 2 * a)
    misaligned = np.frombuffer(b"\0" + a.tobytes(), np.float32, 4, offset=1)
    assert not misaligned.flags.aligned
    np.testing.assert_array_equal(add(misaligned, a), 2 * a)

    class Sub(np.ndarray):
        pass

    np.testing.assert_array_equal(add(a.view(Sub), a), 2 * a)
    assert fast_calls(add) == before


def test_errors_are_those_of_the_python_path(add: arignote.Function) -> None:
    a = np.zeros(3, np.float32)
    before = fast_calls(add)
    with pytest.raises(ValueError, match=r"ag.add .*shapes \(3,\) and \(4,\) do not match at dim"):
        add(a, np.zeros(4, np.float32))
    with pytest.raises(TypeError, match='Bad input argument with name "x" .* index 0.*float64'):
        add(np.zeros(3), a)
    with pytest.raises(TypeError, match="wrong number of dimensions: expected 1, got 2"):
        add(np.zeros((3, 1), np.float32), a)
    with pytest.raises(
        TypeError, match="Too many parameter passed to arignote function: it has 2 inputs, got 3 "
    ):
        add(a, a, a)
    with pytest.raises(TypeError, match="Missing required input: y"):
        add(a)
    assert fast_calls(add) == before


def test_broadcastable_axes_are_checked() -> None:
    row, m = T.frow("row"), T.fmatrix("m")
    f = arignote.function([row, m], row + m)
    r, big = np.ones((1, 3), np.float32), np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(f(r, big), r + big)
    assert fast_calls(f) == 1
    with pytest.raises(TypeError, match="broadcastable"):
        f(big, big)
    assert fast_calls(f) == 1


def test_strided_and_reversed_inputs(add: arignote.Function) -> None:
    base = np.arange(24, dtype=np.float32)
    before = fast_calls(add)
    for x, y in [
        (base[::-2], base[::2]),
        (base[3:9], base[::-1][:6]),
        (base.reshape(4, 6)[:, 2], base.reshape(4, 6)[::-1, 0]),
        (base[:0], base[5:5]),
    ]:
        np.testing.assert_array_equal(add(x, y), x + y)
    assert fast_calls(add) == before + 4
    m = T.fmatrix("m")
    g = arignote.function([m], m * 2)
    grid = base.reshape(4, 6)
    for view in (grid.T, grid[::-1, ::-3], grid[:, :0]):
        np.testing.assert_array_equal(g(view), view * 2)
    assert fast_calls(g) == 3


def test_refcounts_do_not_leak(add: arignote.Function) -> None:
    a, b = np.arange(4, dtype=np.float32), np.ones(4, np.float32)
    counts = sys.getrefcount(a), sys.getrefcount(b)
    for _ in range(1000):
        out = add(a, b)
    assert (sys.getrefcount(a), sys.getrefcount(b)) == counts
    # `out`, getrefcount's argument and the entry's kept reference (output reuse)
    assert sys.getrefcount(out) == 3
    x = T.fvector("x")
    pair = arignote.function([x], [x + 1, x * 2])
    for _ in range(1000):
        outs = pair(a)
    assert sys.getrefcount(a) == counts[0]
    # + the list, + the kept reference
    assert type(outs) is list and [sys.getrefcount(o) for o in outs] == [4, 4]
    call = add._entry
    nones = sys.getrefcount(None)
    for _ in range(1000):
        assert call(a, "not an array") is None  # the fallback sentinel: a new reference
    assert abs(sys.getrefcount(None) - nones) < 100


def test_outputs_updates_and_shared_variables() -> None:
    x = T.fvector("x")
    acc = arignote.shared(np.zeros(3, np.float32), name="acc")
    f = arignote.function([x], [acc * 1, x + acc], updates=[(acc, acc + x)])
    a = np.ones(3, np.float32)
    old = acc.get_value(borrow=True)
    first, second = f(a)  # outputs computed from the old value
    np.testing.assert_array_equal(first, [0, 0, 0])
    np.testing.assert_array_equal(second, [1, 1, 1])
    new = acc.get_value(borrow=True)
    assert new is old  # the update is computed in the stored array (inplace-update)
    np.testing.assert_array_equal(new, [1, 1, 1])
    np.testing.assert_array_equal(f(a)[0], [1, 1, 1])
    assert fast_calls(f) == 2
    single = arignote.function([x], [x * 3])  # a list of one output stays a list
    got = single(a)
    assert type(got) is list and len(got) == 1
    np.testing.assert_array_equal(got[0], 3 * a)
    none = arignote.function([x], None, updates=[(acc, acc - x)])
    assert none(a) == []
    np.testing.assert_array_equal(acc.get_value(), [1, 1, 1])


def test_scalar_and_bool_inputs() -> None:
    s, v = T.dscalar("s"), T.bvector("v")
    f = arignote.function([s, v], [s * 2, T.eq(v, 0)])
    two, zeros = f(np.float64(1.5), np.array([0, 1], np.int8))  # a numpy scalar: converted
    assert two.shape == () and two == 3.0
    np.testing.assert_array_equal(zeros, [True, False])
    two, zeros = f(np.array(2.0), np.array([1, 0], np.int8))
    assert two == 4.0 and fast_calls(f) == 1


def test_large_arrays_release_the_gil() -> None:
    x = T.dvector("x")
    f = arignote.function([x], T.exp(x).sum())
    n = entry.GIL_RELEASE_ELEMENTS
    a = np.linspace(0, 1, n)
    results: list[np.ndarray] = []
    threads = [threading.Thread(target=lambda: results.append(f(a))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4
    for r in results:
        np.testing.assert_allclose(r, np.exp(a).sum(), rtol=1e-12)
    assert fast_calls(f) == 4


def test_interpreter_has_no_fast_path() -> None:
    x = T.fvector("x")
    f = arignote.function([x], x + 1, mode=arignote.Mode(linker="py"))
    assert f._entry is None
    np.testing.assert_array_equal(f(np.zeros(2, np.float32)), [1, 1])


def test_entry_ir_is_portable() -> None:
    """The entry point reaches CPython and numpy through named symbols only: its IR holds
    no address of this process (so its object code can be cached on disk)."""
    spec = entry.arg_spec(np.dtype(np.float64), [-1, 1])
    text = entry.entry_ir("f", [spec, spec], [entry.arg_spec(np.dtype(np.int64), [-1])])
    assert 'define ptr @"f__entry"(ptr %"self", ptr %"args", i64 %"nargs")' in text
    for symbol in ("f__shape", "f", "arignote_PyArray_New", "arignote_PyArray_Type"):
        assert f'@"{symbol}"' in text
    assert "inttoptr" not in text
    for address in entry.process_symbols().values():
        assert str(address) not in text
    assert spec.type_nums == (np.dtype(np.float64).num,) and spec.static == ((1, 1),)
    int64s = {np.dtype(c).num for c in "lq" if np.dtype(c) == np.int64}  # 'l', 'q' on Linux
    assert set(entry.arg_spec(np.dtype(np.int64), []).type_nums) == int64s


@pytest.mark.slow
def test_entry_outlives_its_function() -> None:
    import gc

    x = T.fvector("x")
    call = arignote.function([x], x * 3)._entry  # the Function itself is dropped
    gc.collect()
    np.testing.assert_array_equal(call(np.ones(2, np.float32)), [3, 3])


_OWNER_CLEARED = """
import ctypes, gc
import numpy as np
import arignote, arignote.tensor as T
x = T.vector("x")
f = arignote.function([x], x + 1)
f(np.ones(3))
entry = f._compiled.run.native.fast_entry
call, owner = entry.call, entry.owner
name = call.__name__
del f, entry
gc.collect()
owner.__dict__.clear()  # what the collector's tp_clear does to an owner in a cycle
gc.collect()
reuse = [ctypes.create_string_buffer(b"A" * 31) for _ in range(1000)]  # freed blocks
print(call.__name__ == name, name)
del call  # its deallocation reads the definition's flags
gc.collect()
print("freed")
"""


def test_the_method_definition_outlives_its_owners_dict() -> None:
    """The entry's C function object reads its `PyMethodDef` until it is freed. When the
    garbage collector breaks a cycle through the owner (the JIT module), it empties the
    owner's `__dict__` first; the definition must not live there. It did, and the suite
    crashed now and then in whatever ran next (a use after free, found with valgrind).
    A new process: the bug is a segmentation fault."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", _OWNER_CLEARED], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "fn_main__entry", "freed"], done.stdout


def test_the_method_definition_is_held_by_the_callable(add: arignote.Function) -> None:
    """The definition lies in the bytes the C function object holds itself (its
    `__module__`), which the collector cannot clear."""
    import ctypes

    call = add._compiled.run.native.fast_entry.call
    name, definition = call.__module__
    # PyCFunctionObject: refcount, type, m_ml, ...
    m_ml = ctypes.c_void_p.from_address(id(call) + 2 * ctypes.sizeof(ctypes.c_void_p)).value
    assert m_ml == entry._bytes_address(definition)
    assert len(definition) == ctypes.sizeof(entry._PyMethodDef)
    assert ctypes.c_void_p.from_address(m_ml).value == entry._bytes_address(name)
    assert name == call.__name__.encode()


def test_donor_overlap_is_decided_per_byte_range() -> None:
    """The entry point computes an output in its donor input only when the donor's bytes
    and every other input's are disjoint (or one is empty), whatever their strides: the
    byte extents of the `apart` helper, against numpy's `may_share_memory`."""
    from arignote.compile.mode import native_function
    from arignote.dialects import ag

    a, b = T.dvector("a"), T.dvector("b")
    module = arignote.function([a, b], a * 2, on_unused_input="ignore").module.clone()
    fn = next(iter(module.ops))
    ag.set_result_pairs(fn, ag.INPLACE_RESULTS_ATTRIBUTE, {0: 1})  # a * 2 may go into b
    call = native_function(module, fn.sym_name.data).fast_entry.call
    base = np.arange(12.0)
    cases = [
        (base[0:3], base[2:5]),  # one shared element
        (base[0:3], base[3:6]),  # adjacent
        (base[2::-1], base[3:6]),  # reversed, adjacent
        (base[6:0:-2], base[1:4]),  # reversed with a stride, interleaved
        (base[0:9:4], base[9:12]),  # strided, past the end
        (base[5:5], base[3:3]),  # both empty: nothing to overlap
    ]
    for x, donor in cases:
        x_before, donor_before = x.copy(), donor.copy()
        result = call(x, donor)
        np.testing.assert_array_equal(result, x_before * 2)
        donated = result is donor
        assert donated == (len(x) == len(donor) and not np.may_share_memory(x, donor))
        if not donated:
            np.testing.assert_array_equal(donor, donor_before)


def test_entry_point_is_not_optimized(entry_mode: str) -> None:
    """The entry point and its helpers carry `ENTRY_ATTRIBUTES` (`optnone`: no O3
    pipeline for them in each compile), and each one's stack buffers are all in its
    entry block (a fixed frame). Helpers are made only when outlining."""
    import re

    spec = entry.arg_spec(np.dtype(np.float32), [-1, -1])
    out = entry.arg_spec(np.dtype(np.float32), [-1], donor=1)
    text = entry.entry_ir("f", [spec, entry.arg_spec(np.dtype(np.float32), [-1])], [out, out])
    assert "optnone" in entry.ENTRY_ATTRIBUTES and "noinline" in entry.ENTRY_ATTRIBUTES
    bodies = re.findall(r'^define [^@]*@"([^"]+)"\((.*)$\n((?:.*\n)*?)^}', text, re.M)
    names = {name for name, _, _ in bodies}
    assert "f__entry" in names
    assert ("f__entry_keep" in names) == (entry_mode == "outlined")
    allocas = 0
    for name, header, body in bodies:
        if not name.startswith("f__entry"):  # the loops of @f__overlaps and @f__release
            continue
        assert all(a in header for a in entry.ENTRY_ATTRIBUTES), name
        first_block = body[: body.index("\n", body.index("br ")) if "br " in body else None]
        assert body.count(" = alloca ") == first_block.count(" = alloca "), name
        allocas += body.count(" = alloca ")
    assert allocas > 0


def test_functions_of_many_arguments_outline(monkeypatch: pytest.MonkeyPatch) -> None:
    """By default (`OUTLINE_FROM`) the entry point of a function of a few arguments
    writes their code out (no call per argument), one of many calls helpers."""
    monkeypatch.setattr(entry, "OUTLINE_FROM", DEFAULT_OUTLINE_FROM)
    spec = entry.arg_spec(np.dtype(np.float32), [-1])
    for n, outlined in ((1, False), (entry.OUTLINE_FROM, True)):
        text = entry.entry_ir("f", [spec] * n, [spec] * n)
        assert ('@"f__entry_keep"' in text) == outlined, n


def _entry_instructions(n: int) -> int:
    """The instructions of the entry point of a function of `n + 1` matrix inputs and
    `n` matrix outputs, each computed in the buffer of input `j` (an SGD update of `n`
    parameters: what a deep network's training step is)."""
    spec = entry.arg_spec(np.dtype(np.float32), [-1, -1])
    outputs = [entry.arg_spec(np.dtype(np.float32), [-1, -1], j) for j in range(n)]
    text = entry.entry_ir("f", [spec] * (n + 1), outputs)
    return sum(1 for line in text.splitlines() if line.startswith("  "))


def test_entry_ir_is_linear_in_the_outputs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each donated output's overlap test against every other input, and the release of
    the outputs made so far on each failure path, were written out: an entry point
    quadratic in the outputs (1.2 s of a 32-layer MLP's compile for 65 outputs). Then
    each input's checks and each output's allocation were written out per argument (241
    instructions per input and output: a 64-layer MLP's step had an entry point of
    31,000 lines of IR, a third of a second of its cold compile); they are helpers
    written once per kind of argument. Counted: the instructions per output and input
    stay bounded as they grow, and few (by default: `OUTLINE_FROM`)."""
    monkeypatch.setattr(entry, "OUTLINE_FROM", DEFAULT_OUTLINE_FROM)
    small, large = _entry_instructions(8), _entry_instructions(64)
    assert large / 64 <= 1.3 * small / 8, (small, large)
    assert (large - small) / 56 <= 40, (small, large)  # (8 and 64 arguments outline)
