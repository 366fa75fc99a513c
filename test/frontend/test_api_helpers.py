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
        "A. Elemwise{add}",
        " B. Elemwise{exp}",
        "  C. Elemwise{mul}",
        "   D. Elemwise{add}",
        "    E. x",
        "    F. y",
        "   <E>",
        " <C>",
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
    for error in (
        "BadOptimization",
        "BadThunkOutput",
        "BadDestroyMap",
        "BadViewMap",
        "StochasticOrder",
        "InvalidValueError",
    ):
        assert issubclass(getattr(debugmode, error), debugmode.DebugModeError), error
    x = T.dvector("x")
    out = _io.StringIO()
    debugmode.debugprint(x * 2, file=out)
    assert out.getvalue().startswith("Elemwise{mul}")


@pytest.mark.parametrize("backend", ["py", "cvm"])
def test_theanos_advanced_indexing_functions(backend: str) -> None:
    from arignote.tensor import subtensor as S

    x, y = T.dvector("x"), T.dvector("y")
    i = T.lvector("i")
    m = T.dmatrix("m")
    outputs = [
        S.advanced_subtensor1(x, i),
        S.advanced_inc_subtensor1(x, y, i),
        S.advanced_set_subtensor1(x, y, i),
        S.advanced_subtensor(m, i, slice(1, 3)),
        S.advanced_inc_subtensor(m, 1.0, slice(None), i),
        S.advanced_set_subtensor(m, 0.0, i),
        S.advanced_boolean_subtensor(x, x > 1),
    ]
    f = arignote.function([x, y, i, m], outputs, mode=arignote.Mode(linker=backend))
    a, b = np.arange(4.0), np.array([10.0, 20.0])
    idx, mat = np.array([1, 1]), np.arange(12.0).reshape(3, 4)
    inc = a.copy()
    np.add.at(inc, idx, b)
    setv = a.copy()
    setv[idx] = b
    inc_m = mat.copy()
    np.add.at(inc_m, (slice(None), idx), 1.0)
    set_m = mat.copy()
    set_m[idx] = 0.0
    expected = [a[idx], inc, setv, mat[idx, 1:3], inc_m, set_m, a[a > 1]]
    for got, want in zip(f(a, b, idx, mat), expected, strict=True):
        np.testing.assert_array_equal(got, want)


def test_unsupported_indexing_raises_theanos_errors() -> None:
    from arignote.tensor import subtensor as S

    x = T.dvector("x")
    with pytest.raises(S.AdvancedIndexingError, match="newaxis"):
        x[None, T.lvector()]
    with pytest.raises(S.AdvancedBooleanIndexingError, match="0-d boolean"):
        x[True]
    assert issubclass(S.AdvancedIndexingError, NotImplementedError)


def test_function_dump_reproduces_the_function(tmp_path) -> None:
    import pickle

    x = T.dvector("x")
    w = arignote.shared(np.ones(3), name="w")
    path = str(tmp_path / "f.pkl")
    arignote.function_dump(path, [x], (x * w).sum(), updates=[(w, w + 1)], name="dumped")
    with open(path, "rb") as f:
        arguments = pickle.load(f)
    assert arguments["name"] == "dumped" and arguments["on_unused_input"] is None
    g = arignote.function(**arguments)
    assert g(np.arange(3.0)) == 3.0


def test_boolean_inc_and_set_and_where() -> None:
    from arignote.tensor import subtensor as S

    x = T.dvector("x")
    f = arignote.function(
        [x],
        [
            S.advanced_boolean_inc_subtensor(x, 1.0, x > 1),
            S.advanced_boolean_set_subtensor(x, 0.0, x > 1),
            T.where(x > 1, x, -x),
        ],
    )
    a = np.arange(4.0)
    inc, setv, where = f(a)
    np.testing.assert_array_equal(inc, np.where(a > 1, a + 1, a))
    np.testing.assert_array_equal(setv, np.where(a > 1, 0.0, a))
    np.testing.assert_array_equal(where, np.where(a > 1, a, -a))


def test_numeric_grad_is_central_differences() -> None:
    from arignote.gradient import numeric_grad

    def cost(a: np.ndarray) -> float:
        return float((a**3).sum())

    point = np.array([1.0, 2.0])
    estimate = numeric_grad(cost, [point])
    np.testing.assert_allclose(estimate.gf[0], 3 * point**2, rtol=1e-6)
