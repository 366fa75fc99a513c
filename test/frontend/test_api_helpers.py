"""Small public helpers of Theano's modules: printing (`min_informative_str`,
`var_descriptor`, `hex_digest`, `default_printer`, `leaf_printer`), modes
(`FAST_RUN`, `FAST_COMPILE`, `register_mode`), profiling (`print_global_stats`) and
`nanguardmode` (`contains_nan`, `contains_inf`, `flatten`)."""

from __future__ import annotations

import io

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.compile import mode as mode_module
from arignote.compile import nanguardmode, profiling
from arignote.printing import (
    default_printer,
    hex_digest,
    leaf_printer,
    min_informative_str,
    var_descriptor,
)


def _graph() -> tuple[arignote.Variable, arignote.Variable]:
    x, y = T.dvectors("x", "y")
    z = (x + y) * x
    return T.exp(z) + z, x


def test_min_informative_str_tags_each_node_once() -> None:
    w, _ = _graph()
    assert min_informative_str(w).splitlines() == [
        "A. Elemwise{add}", " B. Elemwise{exp}", "  C. Elemwise{mul}",
        "   D. Elemwise{add}", "    E. x", "    F. y", "   <E>", " <C>",
    ]
    assert min_informative_str(T.dvector("named"), indent_level=2) == "  A. named"


def test_var_descriptor_is_one_line_without_addresses() -> None:
    w, _ = _graph()
    assert var_descriptor(w) == (
        "A=Elemwise{add}(B=Elemwise{exp}(C=Elemwise{mul}(D=Elemwise{add}(E=x,F=y),<E>)),<C>)"
    )
    v, _ = _graph()
    assert var_descriptor(v) == var_descriptor(w)  # the same computation, the same text


def test_deep_graphs_do_not_recurse() -> None:
    x = T.dscalar("x")
    y = x
    for _ in range(3000):  # deeper than Python's recursion limit
        y = y + 1
    assert min_informative_str(y).count("Elemwise{add}") == 3000
    assert var_descriptor(y).startswith("A=Elemwise{add}(B=Elemwise{add}(")


def test_hex_digest_and_printers() -> None:
    a = np.arange(6.0).reshape(2, 3)
    assert hex_digest(a).endswith("|strides=[24,8]|shape=[2,3]")
    assert hex_digest(a) != hex_digest(a.T.copy()) and hex_digest(a) == hex_digest(a.copy())
    with pytest.raises(TypeError, match="numpy.ndarray"):
        hex_digest([1, 2])
    w, x = _graph()
    assert default_printer.process(w) == arignote.pp(w)
    assert leaf_printer.process(x) == "x"


def test_predefined_and_registered_modes() -> None:
    assert mode_module.FAST_RUN.linker == "cvm" and mode_module.FAST_COMPILE.optimizer
    x = T.dscalar("x")
    name = "test_api_helpers_mode"
    mode_module.register_mode(name, arignote.Mode(linker="py"))
    try:
        assert arignote.function([x], x * 2, mode=name)(3.0) == 6.0
        assert mode_module.get_mode(name).linker == "py"
        with pytest.raises(ValueError, match="already taken"):
            mode_module.register_mode("FAST_RUN", arignote.Mode())
    finally:
        del mode_module._NAMED[name]


def test_print_global_stats_sums_the_profiles() -> None:
    x = T.dvector("x")
    stats = profiling.ProfileStats(atexit_print=False)
    f = arignote.function([x], x * 2, profile=stats)
    f(np.ones(3))
    out = io.StringIO()
    profiling.print_global_stats(file=out)
    text = out.getvalue()
    assert "Global stats: Time elasped since arignote import" in text
    assert "Time spent in arignote functions" in text and "linker =" in text


def test_nanguard_helpers() -> None:
    assert nanguardmode.contains_nan(np.array([1.0, np.nan]))
    assert not nanguardmode.contains_nan(np.array([1.0, np.inf]))
    assert nanguardmode.contains_inf(np.array([1.0, -np.inf]))
    assert not nanguardmode.contains_inf(np.arange(3))
    assert nanguardmode.flatten([1, (2, [3, [4]]), 5]) == [1, 2, 3, 4, 5]
    assert nanguardmode.flatten(7) == [7]


def test_ops_carry_the_users_source_line_as_their_location() -> None:
    x = T.dvector("x")
    line = test_ops_carry_the_users_source_line_as_their_location.__code__.co_firstlineno + 3
    y = T.exp(x) * 2  # built on `line`
    f = arignote.function([x], y)
    text = f.dump_ir("emitted", debuginfo=True)
    assert f'loc("{__file__}":{line}:0)' in text
    assert "loc(" not in f.dump_ir("emitted")  # debug info only when asked


def test_theano_module_paths_of_compile() -> None:
    import io as _io

    from arignote.compile import debugmode, function_module
    from arignote.compile.io import In, Out, SymbolicInput, SymbolicOutput

    assert function_module.Function is arignote.compile.Function
    assert issubclass(function_module.UnusedInputError, Exception)
    assert issubclass(In, SymbolicInput) and issubclass(Out, SymbolicOutput)
    for error in ("BadOptimization", "BadThunkOutput", "BadDestroyMap", "BadViewMap",
                  "StochasticOrder", "InvalidValueError"):
        assert issubclass(getattr(debugmode, error), debugmode.DebugModeError), error
    x = T.dvector("x")
    out = _io.StringIO()
    debugmode.debugprint(x * 2, file=out)
    assert out.getvalue().startswith("Elemwise{mul}")
