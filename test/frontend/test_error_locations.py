"""Run-time errors name the graph node and the user's source line (`ag.node`)."""

from __future__ import annotations

import re
import sys
from typing import Any

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.configuration import config
from arignote.graph import NODE_ATTRIBUTE

BACKENDS = ["py", "cvm"]


def _build() -> tuple[object, object, object, int]:
    x, y = T.vector("x"), T.vector("y")
    line = sys._getframe().f_lineno + 1
    z = x + y
    return x, y, z, line


def test_ops_carry_a_node_label() -> None:
    _, _, z, line = _build()
    label = z.owner.ir_op.attributes[NODE_ATTRIBUTE].data
    assert label == f"Elemwise{{add}} at test_error_locations.py:{line}"


@pytest.mark.parametrize("backend", BACKENDS)
def test_shape_mismatch_names_the_user_line(backend: str) -> None:
    x, y, z, line = _build()
    f = arignote.function([x, y], z, mode=arignote.Mode(linker=backend))
    with pytest.raises(ValueError) as info:
        f(np.ones(3), np.ones(4))
    message = str(info.value)
    assert f"test_error_locations.py:{line}" in message
    assert "Elemwise{add}" in message and "ag.add" in message
    assert "3" in message and "4" in message
    assert "The function's graph" not in message


@pytest.mark.parametrize("backend", BACKENDS)
def test_high_verbosity_adds_the_graph(backend: str) -> None:
    x, y, z, line = _build()
    f = arignote.function([x, y], z, mode=arignote.Mode(linker=backend))
    with config.change_flags(exception_verbosity="high"):
        with pytest.raises(ValueError) as info:
            f(np.ones(3), np.ones(4))
    message = str(info.value)
    assert f"test_error_locations.py:{line}" in message
    assert "The function's graph" in message
    assert arignote.printing.debugprint(f, file="str") in message


# --- every native shape check reads like the interpreter's --------------------------------
#
# Each case builds a graph whose op fails a run-time shape check on the given inputs; the
# failing op is created on the line after `_next_line()`. On both linkers the message
# names that line, gives the operands' shapes as numbers and shows no IR types or the
# `ag` operands' internal names; the native message is the interpreter's, word for word.

Case = tuple[list[Any], Any, int, tuple[Any, ...], tuple[str, ...]]

INTERNAL = re.compile(r"tensor<|memref<|!llvm|\b(alpha|beta|lhs|rhs|Z0|y0|r0|A has|x has)\b")


def _next_line() -> int:
    return sys._getframe(1).f_lineno + 1


def _elemwise() -> Case:
    x, y = T.vector("x"), T.vector("y")
    line = _next_line()
    z = x * 2.0 + y
    return [x, y], z, line, (np.ones(3), np.ones(4)), ("(3,) and (4,)", "dimension 0")


def _fused() -> Case:
    x, y = T.matrix("x"), T.matrix("y")
    line = _next_line()
    z = T.exp(x) * y + 1.0
    return [x, y], z, line, (np.ones((3, 2)), np.ones((3, 4))), ("(3, 2) and (3, 4)",)


def _switch() -> Case:
    c, x, y = T.vector("c"), T.vector("x"), T.vector("y")
    line = _next_line()
    z = T.switch(c > 0, x, y)
    return [c, x, y], z, line, (np.ones(3), np.ones(3), np.ones(4)), ("(3,), (3,) and (4,)",)


def _dot_vectors() -> Case:
    x, y = T.vector("x"), T.vector("y")
    line = _next_line()
    z = T.dot(x, y)
    return [x, y], z, line, (np.ones(2), np.ones(3)), ("(2,) and (3,)", "contracted")


def _gemv() -> Case:
    a, v = T.matrix("a"), T.vector("v")
    line = _next_line()
    z = T.dot(a, v)
    return [a, v], z, line, (np.ones((3, 2)), np.ones(3)), ("(3, 2) and (3,)",)


def _gemm() -> Case:
    a, b = T.matrix("a"), T.matrix("b")
    line = _next_line()
    z = T.dot(a, b)
    return [a, b], z, line, (np.ones((3, 2)), np.ones((3, 4))), ("(3, 2) and (3, 4)",)


def _gemm_transposed() -> Case:
    a, b = T.matrix("a"), T.matrix("b")
    line = _next_line()
    z = T.dot(a.T, b)
    return [a, b], z, line, (np.ones((3, 2)), np.ones((2, 4))), ("(2, 3) and (2, 4)",)


def _gemm_scaled() -> Case:
    a, b, c = T.matrix("a"), T.matrix("b"), T.matrix("c")
    line = _next_line()
    z = c + 2.0 * T.dot(a, b)
    args = (np.ones((3, 2)), np.ones((3, 4)), np.ones((3, 4)))
    return [a, b, c], z, line, args, ("(3, 2) and (3, 4)",)


def _gemm_accumulated() -> Case:
    a, b, c = T.matrix("a"), T.matrix("b"), T.matrix("c")
    line = _next_line()
    z = c + T.dot(a, b)
    args = (np.ones((3, 2)), np.ones((2, 4)), np.ones((3, 5)))
    return [a, b, c], z, line, args, ("(3, 5)", "(3, 4)")


def _gemv_accumulated() -> Case:
    a, v, c = T.matrix("a"), T.vector("v"), T.vector("c")
    line = _next_line()
    z = c - T.dot(a, v)
    return [a, v, c], z, line, (np.ones((3, 2)), np.ones(2), np.ones(4)), ("(4,)", "(3,)")


def _row_fused() -> Case:
    w, x, y = T.matrix("w"), T.vector("x"), T.vector("y")
    line = _next_line()
    g = T.dot(w, x) - y
    cost = (g**2).sum()
    gw, gx = arignote.grad(cost, [w, x])
    return [w, x, y], [cost, gx], line, (np.ones((3, 2)), np.ones(2), np.ones(4)), ("(4,)",)


def _reshape() -> Case:
    x = T.vector("x")
    line = _next_line()
    z = x.reshape((2, 3))
    return [x], z, line, (np.ones(5),), ("5 elements", "[2, 3]")


def _reshape_symbolic() -> Case:
    x, n = T.vector("x"), T.lscalar("n")
    line = _next_line()
    z = x.reshape((n, -1))
    return [x, n], z, line, (np.ones(7), 2), ("7 elements", "[2, -1]")


def _index() -> Case:
    x, i = T.vector("x"), T.lscalar("i")
    line = _next_line()
    z = x[i]
    return [x, i], z, line, (np.ones(5), 7), ("index 7", "size 5")


def _advanced_index() -> Case:
    x, i = T.vector("x"), T.lvector("i")
    line = _next_line()
    z = x[i]
    return [x, i], z, line, (np.ones(5), np.array([1, 7])), ("index 7", "size 5")


def _index_shapes() -> Case:
    x, i, j = T.matrix("x"), T.lvector("i"), T.lvector("j")
    line = _next_line()
    z = x[i, j]
    args = (np.ones((5, 5)), np.array([1, 2]), np.array([1, 2, 3]))
    return [x, i, j], z, line, args, ("[(2,), (3,)]",)


def _join() -> Case:
    x, y = T.matrix("x"), T.matrix("y")
    line = _next_line()
    z = T.concatenate([x, y], axis=0)
    return [x, y], z, line, (np.ones((2, 3)), np.ones((2, 4))), ("(2, 4)", "(2, 3)")


def _alloc() -> Case:
    x, n = T.vector("x"), T.lscalar("n")
    line = _next_line()
    z = T.alloc(x, n, 3)
    return [x, n], z, line, (np.ones(4), 2), ("(4,)", "(2, 3)")


def _alloc_negative() -> Case:
    x, n = T.scalar("x"), T.lscalar("n")
    line = _next_line()
    z = T.alloc(x, n, 3)
    return [x, n], z, line, (1.0, -1), ("(-1, 3)", "negative")


def _set_subtensor() -> Case:
    x, y = T.matrix("x"), T.vector("y")
    line = _next_line()
    z = T.set_subtensor(x[0], y)
    return [x, y], z, line, (np.ones((2, 3)), np.ones(4)), ("(4,)", "(3,)")


def _inc_subtensor() -> Case:
    x, y = T.vector("x"), T.vector("y")
    line = _next_line()
    z = T.inc_subtensor(x[1:3], y)
    return [x, y], z, line, (np.ones(5), np.ones(3)), ("(3,)", "(2,)")


def _scan_steps() -> Case:
    x, n = T.vector("x"), T.lscalar("n")
    line = _next_line()
    z, _ = arignote.scan(lambda a: a * 2, sequences=[x], n_steps=n)
    return [x, n], z, line, (np.ones(3), 5), ("3 rows", "5 steps")


def _scan_taps() -> Case:
    x = T.vector("x")
    line = _next_line()
    z, _ = arignote.scan(lambda a, b: a + b, sequences=[dict(input=x, taps=[0, 3])])
    return [x], z, line, (np.ones(2),), ("length 2", "taps span (3)")


def _scan_initial() -> Case:
    x, h = T.vector("x"), T.vector("h")
    line = _next_line()
    z, _ = arignote.scan(lambda a, p, q: a + p + q, [x], [dict(initial=h, taps=[-2, -1])])
    return [x, h], z, line, (np.ones(3), np.ones(1)), ("1 rows", "[-2, -1]")


def _scan_state() -> Case:
    x, h = T.vector("x"), T.vector("h")
    line = _next_line()
    z, _ = arignote.scan(lambda a, p: T.concatenate([p, p]) * a, [x], [h])
    return [x, h], z, line, (np.ones(3), np.ones(2)), ("(4,)", "(2,)")


def _max_of_empty() -> Case:
    x = T.matrix("x")
    line = _next_line()
    z = T.max(x, axis=0)
    return [x], z, line, (np.ones((0, 3)),), ("(0, 3)", "[0]")


def _argmax_of_empty() -> Case:
    x = T.matrix("x")
    line = _next_line()
    z = T.argmax(x, axis=1)
    return [x], z, line, (np.ones((2, 0)),), ("(2, 0)", "[1]")


SHAPE_CASES = {f.__name__.lstrip("_"): f for f in [
    _elemwise, _fused, _switch, _dot_vectors, _gemv, _gemm, _gemm_transposed, _gemm_scaled,
    _gemm_accumulated, _gemv_accumulated, _row_fused, _reshape, _reshape_symbolic, _index,
    _advanced_index, _index_shapes, _join, _alloc, _alloc_negative, _set_subtensor,
    _inc_subtensor, _scan_steps, _scan_taps, _scan_initial, _scan_state, _max_of_empty,
    _argmax_of_empty,
]}  # fmt: skip


def _message(case: str, linker: str) -> tuple[str, int]:
    inputs, outputs, line, args, _ = SHAPE_CASES[case]()
    f = arignote.function(inputs, outputs, mode=arignote.Mode(linker=linker))
    with pytest.raises(ValueError) as info:  # IndexOutOfBoundsError is a ValueError too
        f(*args)
    return str(info.value), line


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(SHAPE_CASES))
def test_shape_errors_show_shapes_and_the_user_line(case: str, backend: str) -> None:
    message, line = _message(case, backend)
    assert f"test_error_locations.py:{line}]" in message, message
    for fragment in SHAPE_CASES[case]()[4]:
        assert fragment in message, (fragment, message)
    assert INTERNAL.search(message) is None, message


@pytest.mark.parametrize("case", sorted(SHAPE_CASES))
def test_native_shape_errors_are_the_interpreters(case: str) -> None:
    assert _message(case, "cvm")[0] == _message(case, "py")[0]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("make", "value", "expected"),
    [
        (
            T.vector,
            np.ones((2, 2)),
            "wrong number of dimensions: expected 1, got 2 with shape (2, 2)",
        ),
        (T.ivector, np.ones(3), "cannot store a value of dtype float64 in a int32 input"),
        (T.row, np.ones((2, 3)), "expected (True, False), got shape (2, 3)"),
    ],
    ids=["rank", "dtype", "broadcastable"],
)
def test_input_errors_name_the_input(backend: str, make: Any, value: Any, expected: str) -> None:
    x = make("x")
    f = arignote.function([x], x * 2, mode=arignote.Mode(linker=backend))
    with pytest.raises(TypeError) as info:
        f(value)
    message = str(info.value)
    assert 'Bad input argument with name "x"' in message and "index 0" in message
    assert expected in message
    assert INTERNAL.search(message) is None, message
