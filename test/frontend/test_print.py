"""`arignote.printing.Print`: the value passes through and is printed each time the
compiled code computes it, natively (through the callback) and in the interpreter."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.printing import Print

LINKERS = ["cvm", "py"]


def _mode(linker: str) -> arignote.Mode:
    return arignote.Mode(linker=linker)


@pytest.mark.parametrize("linker", LINKERS)
def test_print_returns_value_and_prints_each_call(linker: str, capfd) -> None:
    x = T.dvector("x")
    f = arignote.function([x], Print("x")(x) * 2, mode=_mode(linker))
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [2.0, 4.0])
    np.testing.assert_array_equal(f(np.array([3.0])), [6.0])
    assert capfd.readouterr().out == "x __str__ = [1. 2.]\nx __str__ = [3.]\n"


@pytest.mark.parametrize("linker", LINKERS)
def test_print_attrs_dtypes_and_strides(linker: str, capfd) -> None:
    m = T.fmatrix("m")
    n = T.iscalar("n")
    printed = Print("m.T", ("shape", "sum", "__str__"))(m.T)
    f = arignote.function([m, n], [printed + 1, Print("n")(n)], mode=_mode(linker))
    value = np.arange(6, dtype=np.float32).reshape(2, 3)
    out, count = f(value[:, ::-1], np.int32(7))  # a strided view as input
    np.testing.assert_array_equal(out, value[:, ::-1].T + 1)
    assert count == 7
    expected_m = str(value[:, ::-1].T)
    assert capfd.readouterr().out == (
        f"m.T shape = (3, 2)\nm.T sum = 15.0\nm.T __str__ = {expected_m}\nn __str__ = 7\n"
    )


@pytest.mark.parametrize("linker", LINKERS)
def test_identical_prints_are_not_merged(linker: str, capfd) -> None:
    x = T.dvector("x")
    f = arignote.function([x], Print("p")(x) + Print("p")(x), mode=_mode(linker))
    f(np.array([1.0]))
    assert capfd.readouterr().out == "p __str__ = [1.]\np __str__ = [1.]\n"
    assert sum(op.name == "ag.print" for op in f.maker.fgraph.func.body.ops) == 2


def test_unused_print_is_not_compiled(capfd) -> None:
    x = T.dvector("x")
    Print("unused")(x)
    f = arignote.function([x], x + 1)
    f(np.array([1.0]))
    assert capfd.readouterr().out == ""


@pytest.mark.parametrize("linker", LINKERS)
def test_grad_passes_through(linker: str, capfd) -> None:
    x = T.dvector("x")
    cost = (Print("x")(x) ** 2).sum()
    g = arignote.grad(cost, x)
    f = arignote.function([x], g, mode=_mode(linker))
    np.testing.assert_allclose(f(np.array([1.0, -2.0])), [2.0, -4.0])
    assert capfd.readouterr().out == "x __str__ = [ 1. -2.]\n"


def test_print_views_and_errors() -> None:
    x = T.dvector("x")
    y = Print("hello")(x)
    assert str(y.owner.op) == "Print{hello}"
    assert "Print{hello}" in arignote.printing.debugprint(y, file="str")
    with pytest.raises(ValueError, match="'nope' is not an attribute of numpy.ndarray"):
        Print("x", ("nope",))
    with pytest.raises(TypeError, match="attrs must be a sequence of strings"):
        Print("x", "shape")
    with pytest.raises(TypeError, match="message must be a string"):
        Print(3)  # type: ignore[arg-type]


@pytest.mark.parametrize("linker", LINKERS)
def test_print_in_a_branch_prints_only_when_it_runs(linker: str, capfd) -> None:
    from arignote.ifelse import ifelse

    c = T.dscalar("c")
    x = T.dvector("x")
    z = ifelse(c, Print("then")(x) * 2, Print("else")(x) - 1)
    f = arignote.function([c, x], z, mode=_mode(linker))
    np.testing.assert_array_equal(f(1.0, np.array([1.0])), [2.0])
    assert capfd.readouterr().out == "then __str__ = [1.]\n"
    np.testing.assert_array_equal(f(0.0, np.array([3.0])), [2.0])
    assert capfd.readouterr().out == "else __str__ = [3.]\n"


def test_print_is_not_compile_cached() -> None:
    """The callback ids in a print's native code belong to this process: no cache key."""
    from arignote.compile import codecache
    from arignote.configuration import change_flags

    x = T.dvector("x")
    f = arignote.function([x], Print("x")(x) + 1)
    g = arignote.function([x], x + 1)
    with change_flags(compile_cache=True):  # only to ask for the keys
        assert codecache.cache_key(f.mode, f.module, f.mode.graph_pipeline()) is None
        assert codecache.cache_key(g.mode, g.module, g.mode.graph_pipeline()) is not None


# --- global_fn, and exceptions raised while printing ----------------------------------


class HookError(Exception):
    pass


def _raise(op: Print, value: np.ndarray) -> None:
    raise HookError(f"{op.message}: {value.tolist()}")


# Two ways a print raises: its `global_fn`, or an attribute that fails on the value
# (`item()` of an array of more than one element).
RAISING = {
    "global_fn": (lambda: Print("p", global_fn=_raise), HookError, "p: \\[2.0, 4.0\\]"),
    "attr": (lambda: Print("p", attrs=("item",)), ValueError, "size 1"),
}


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("how", RAISING)
def test_print_error_propagates_and_stores_no_update(linker: str, how: str, capfd) -> None:
    make, error, match = RAISING[how]
    s = arignote.shared(np.zeros(2), name="s")
    x = T.dvector("x")
    y = Print("after")(make()(x * 2) + 1)  # the print after the failing one never shows
    f = arignote.function([x], y.sum(), updates=[(s, s + y)], mode=_mode(linker))
    stored = s.get_value(borrow=True)
    with pytest.raises(error, match=match):
        f(np.array([1.0, 2.0]))
    assert s.get_value(borrow=True) is stored  # no update stored ...
    np.testing.assert_array_equal(stored, [0.0, 0.0])  # ... nor computed in place
    assert capfd.readouterr().out == ""
    g = arignote.function([x], (x + 1).sum(), updates=[(s, s + x)], mode=_mode(linker))
    assert g(np.array([1.0, 2.0])) == 5.0  # nothing left pending for the next call
    np.testing.assert_array_equal(s.get_value(), [1.0, 2.0])


@pytest.mark.parametrize("linker", LINKERS)
def test_print_error_in_a_scan_step(linker: str) -> None:
    def fail_at_3(op: Print, value: np.ndarray) -> None:
        if value == 3.0:
            raise HookError("step value 3")

    h = arignote.shared(np.float64(0.0), name="h")
    xs = T.dvector("xs")
    total, _ = arignote.scan(
        lambda v, acc: Print("acc", global_fn=fail_at_3)(acc + v), sequences=xs, outputs_info=h
    )
    f = arignote.function([xs], total[-1], updates=[(h, total[-1])], mode=_mode(linker))
    np.testing.assert_array_equal(f(np.array([1.0, 1.0])), 2.0)
    assert h.get_value() == 2.0
    with pytest.raises(HookError, match="step value 3"):
        f(np.array([0.5, 0.5, 5.0]))  # 2.5, 3.0: raises at the second step
    assert h.get_value() == 2.0


@pytest.mark.parametrize("linker", LINKERS)
def test_global_fn_gets_the_op_and_a_copy_of_the_value(linker: str) -> None:
    seen: list[tuple[str, list[float]]] = []

    def record(op: Print, value: np.ndarray) -> None:
        seen.append((op.message, value.tolist()))
        value[...] = -1.0  # the print's own copy: the result is unchanged

    x = T.dvector("x")
    f = arignote.function([x], Print("x", global_fn=record)(x) * 2, mode=_mode(linker))
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [2.0, 4.0])
    assert seen == [("x", [1.0, 2.0])]
    with pytest.raises(TypeError, match="global_fn must be a function"):
        Print("x", global_fn="not callable")  # type: ignore[arg-type]
