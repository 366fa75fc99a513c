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
