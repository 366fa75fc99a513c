"""Theano's module paths and top-level names (`theano.pp`, `theano.dot`, `theano.Param`,
`theano.compile.nanguardmode`, ...) and the calling conventions of `theano.function`
(keyword arguments by input name, functions without outputs)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.configuration import change_flags


def test_top_level_pp_and_dot() -> None:
    x, y = T.dvectors("x", "y")
    assert arignote.pp(x + y) == arignote.printing.pp(x + y)
    f = arignote.function([x, y], arignote.dot(x, y))
    assert f(np.array([1.0, 2.0]), np.array([3.0, 4.0])) == 11.0


def test_param_is_a_deprecated_in() -> None:
    x, y = T.dscalars("x", "y")
    with pytest.warns(DeprecationWarning, match="Param class is deprecated"):
        p = arignote.Param(y, default=1.0, name="why")
    assert isinstance(p, arignote.In)
    f = arignote.function([x, p], x + y)
    assert f(2.0) == 3.0
    assert f(2.0, why=5.0) == 7.0


def test_get_default_mode_follows_config_mode() -> None:
    from arignote.compile import get_default_mode
    from arignote.compile.mode import get_default_mode as from_mode
    from arignote.compile.mode import get_mode

    assert from_mode is get_default_mode
    with change_flags(mode="FAST_COMPILE"):
        assert get_default_mode().optimizer == get_mode("FAST_COMPILE").optimizer
    with change_flags(mode="DebugMode"):
        assert isinstance(get_default_mode(), arignote.DebugMode)


@pytest.mark.parametrize(
    ("module", "names"),
    [
        ("nanguardmode", ["NanGuardMode"]),
        ("monitormode", ["MonitorMode", "detect_nan"]),
        ("debugmode", ["DebugMode"]),
        ("profiling", ["ProfileStats"]),
        ("function", ["function"]),
        ("io", ["In", "Out"]),
        ("mode", ["Mode", "get_mode", "get_default_mode"]),
        ("sharedvalue", ["shared", "SharedVariable"]),
        ("ops", ["shape", "shape_i", "Shape_i"]),
    ],
)
def test_theano_compile_module_paths(module: str, names: list[str]) -> None:
    mod = importlib.import_module(f"arignote.compile.{module}")
    for name in names:
        assert hasattr(mod, name), f"arignote.compile.{module}.{name}"


def test_module_path_modes_are_the_top_level_ones() -> None:
    from arignote.compile.monitormode import MonitorMode
    from arignote.compile.nanguardmode import NanGuardMode

    assert NanGuardMode is arignote.NanGuardMode
    assert MonitorMode is arignote.MonitorMode


def test_detect_nan_reports_the_node(capsys: pytest.CaptureFixture[str]) -> None:
    from arignote.compile.monitormode import MonitorMode, detect_nan

    x = T.dvector("x")
    f = arignote.function([x], T.log(x) * 2, mode=MonitorMode(post_func=detect_nan))
    f(np.array([1.0, 2.0]))
    assert "NaN detected" not in capsys.readouterr().out
    f(np.array([-1.0, 2.0]))
    out = capsys.readouterr().out
    assert "*** NaN detected ***" in out
    assert "Inputs :" in out and "Outputs:" in out


def test_ops_shape_i() -> None:
    from arignote.compile.ops import shape_i

    m = T.dmatrix("m")
    f = arignote.function([m], shape_i(m, 1))
    assert f(np.zeros((2, 5))) == 5


# --- calls by input name ----------------------------------------------------------------


def test_keywords_by_variable_name() -> None:
    x, y = T.dscalars("x", "y")
    f = arignote.function([x, y], x - 2 * y)
    assert f(x=5.0, y=1.0) == 3.0
    assert f(y=1.0, x=5.0) == 3.0
    assert f(5.0, y=2.0) == 1.0


def test_keyword_errors_are_theanos() -> None:
    x, y = T.dscalars("x", "y")
    f = arignote.function([x, y], x - y)
    with pytest.raises(TypeError, match="^Multiple values for input: x$"):
        f(1.0, x=2.0)
    with pytest.raises(
        TypeError, match=r"^Unknown input or state: z\. The function has 2 named inputs \(x, y\)\.$"
    ):
        f(1.0, z=2.0)
    with pytest.raises(TypeError, match="^Missing required input: y$"):
        f(1.0)
    with pytest.raises(TypeError, match="^Too many parameter passed to arignote function"):
        f(1.0, 2.0, y=3.0)


def test_unknown_keyword_describes_unnamed_inputs() -> None:
    x = T.dscalar("x")
    u = T.dscalar()
    f = arignote.function([x, u], x + u)
    with pytest.raises(TypeError, match=r"1 named input \(x\), and 1 unnamed input which"):
        f(1.0, w=2.0)
    g = arignote.function([u], u * 2)
    with pytest.raises(TypeError, match="single input variable which has no name"):
        g(w=2.0)


def test_ambiguous_keyword() -> None:
    a, b = T.dscalar("a"), T.dscalar("a")
    f = arignote.function([a, b], a - b)
    assert f(3.0, 1.0) == 2.0
    with pytest.raises(TypeError, match="^Ambiguous name: a - please check"):
        f(3.0, a=1.0)


# --- functions without outputs ----------------------------------------------------------


@pytest.mark.parametrize("outputs", [[], None])
def test_no_outputs_returns_empty_list(outputs: list | None) -> None:
    x = T.dscalar("x")
    s = arignote.shared(0.0, name="s")
    f = arignote.function([x], outputs, updates=[(s, s + x)])
    assert f(2.0) == []
    assert f(x=3.0) == []
    assert s.get_value() == 5.0
