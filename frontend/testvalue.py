"""Test values (Theano's `x.tag.test_value` and `config.compute_test_value`).

A test value is a NumPy array standing for a variable's run-time value. Set on an input
(`x.tag.test_value = array`) it is filtered through the input's type (a `TypeError` when
it does not fit). With `config.compute_test_value` other than 'off', every operation
built on operands that have test values is run at once by the reference interpreter on
them, and the result becomes the output's `tag.test_value`; so a shape mismatch shows up
at the line that builds the expression, not when the compiled function is called.

When an operand has no test value, or the computation fails, 'ignore' skips the output's
test value, 'warn' warns and 'raise' raises; the message names the user's source line
that built the expression (the first stack frame outside arignote).
"""

from __future__ import annotations

import sys
import warnings
import weakref
from functools import cache
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.ir import Operation, SSAValue

import arignote.tensor  # noqa: F401 - first: `arignote.graph` imported first is a cycle
from arignote.configuration import config
from arignote.graph import Tag

if TYPE_CHECKING:
    from arignote.graph import Variable


class TestValueError(ValueError):
    """A test value is missing, or computing one failed (compute_test_value='raise')."""

    __test__ = False  # not a pytest test class


class TestValueWarning(UserWarning):
    """A test value is missing, or computing one failed (compute_test_value='warn')."""

    __test__ = False


_BY_VALUE: weakref.WeakKeyDictionary[SSAValue, Any] = weakref.WeakKeyDictionary()
"""The test value of each SSA value that has one: a `Variable` the user no longer holds
is made anew (with an empty tag) when a graph walk meets its value again."""


class TestValueTag(Tag):
    """The `tag` of an input variable: `tag.test_value` is filtered through the
    variable's type when set (Theano's `type.filter`)."""

    __test__ = False

    def __init__(self, variable: Variable):
        object.__setattr__(self, "_variable_type", variable.type)
        object.__setattr__(self, "_ssa_value", weakref.ref(variable.value))

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "test_value":
            try:
                value = self._variable_type.filter(value)
            except TypeError as e:
                raise TypeError(f"test value of type {self._variable_type}: {e}") from None
            ssa_value = self._ssa_value()
            if ssa_value is not None:
                _BY_VALUE[ssa_value] = value
        object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        return f"Tag({ {k: v for k, v in vars(self).items() if not k.startswith('_')} })"

    # Pickling (a pickled function or graph holds its inputs): the value itself travels
    # (the pickle's copy of the graph holds it too), the weak reference is made again.
    def __getstate__(self) -> dict[str, Any]:
        state = dict(vars(self))
        state["_ssa_value"] = self._ssa_value()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        ssa_value = state.pop("_ssa_value")
        object.__setattr__(self, "_variable_type", state.pop("_variable_type"))
        object.__setattr__(self, "_ssa_value", lambda: None)
        if ssa_value is not None:
            object.__setattr__(self, "_ssa_value", weakref.ref(ssa_value))
        for name, value in state.items():
            setattr(self, name, value)


_MISSING = object()


def get_test_value(var: Variable) -> Any:
    """The test value of `var`: a constant's data, a shared variable's value, or
    `var.tag.test_value`; `AttributeError` when it has none."""
    from arignote.graph import TensorConstant

    if isinstance(var, TensorConstant):
        return var.data
    value = getattr(var.tag, "test_value", _MISSING)
    if value is not _MISSING:
        return value
    get_value = getattr(var, "get_value", None)
    if callable(get_value):
        return get_value(borrow=True)
    value = _BY_VALUE.get(var.value, _MISSING)
    if value is not _MISSING:
        return value
    raise AttributeError(f"{var} has no test value")


@cache
def _interpreter() -> Any:
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.interpreter import Interpreter

    from arignote.runtime.interpreter import AgFunctions

    interpreter = Interpreter(ModuleOp([]))
    interpreter.register_implementations(AgFunctions())
    return interpreter


@cache
def _supported() -> frozenset[type[Operation]]:
    from arignote.runtime.interpreter import AgFunctions

    return frozenset(t for t, _ in AgFunctions._impls())


@cache
def _package_dirs() -> tuple[str, ...]:
    import arignote
    import arignote.dialects
    import arignote.lowering
    import arignote.runtime

    modules = (arignote, arignote.dialects, arignote.lowering, arignote.runtime)
    return tuple(str(Path(m.__file__).resolve().parent) for m in modules if m.__file__)


def _is_internal(filename: str) -> bool:
    try:
        path = str(Path(filename).resolve())
    except OSError:
        return False
    return any(path == d or path.startswith(d + "/") for d in _package_dirs())


def user_frame() -> tuple[FrameType | None, int]:
    """The first stack frame outside arignote, and its `warnings.warn` stacklevel."""
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and _is_internal(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    return frame, level


def _where(frame: FrameType | None) -> str:
    if frame is None:
        return ""
    import linecache

    filename, lineno = frame.f_code.co_filename, frame.f_lineno
    text = linecache.getline(filename, lineno).strip()
    where = f'\n  the expression was built at File "{filename}", line {lineno}, in '
    where += frame.f_code.co_name
    return where + (f"\n    {text}" if text else "")


def _describe(values: list[Any]) -> str:
    parts = [
        f"{np.asarray(v).dtype}{list(np.shape(v))}" if not isinstance(v, str) else v for v in values
    ]
    return "\n  operand test values (dtype[shape]): " + ", ".join(parts)


def _fail(message: str, mode: str, error: BaseException | None = None) -> None:
    frame, level = user_frame()
    message += _where(frame)
    if mode == "warn":
        warnings.warn(message, TestValueWarning, stacklevel=level)
        return
    exc: BaseException
    if isinstance(error, ValueError | TypeError | ArithmeticError | IndexError):
        try:
            exc = type(error)(message)
        except Exception:
            exc = TestValueError(message)
    else:
        exc = TestValueError(message)
    raise exc from error


def compute_test_value(op: Operation, output: Variable) -> None:
    """Set `output.tag.test_value` to the value of `op` (just built) on its operands'
    test values, as `config.compute_test_value` says."""
    mode = config.compute_test_value
    if mode == "off" or type(op) not in _supported():
        return
    from arignote.graph import Apply, variable_of

    inputs = [variable_of(v) for v in op.operands]
    args = []
    for i, var in enumerate(inputs):
        try:
            value = get_test_value(var)
            args.append(var.type.filter(value))
        except AttributeError:
            if mode != "ignore":
                _fail(
                    f"Cannot compute the test value of {Apply(op)!r}: input {i} ({var}) has "
                    "no test value; set its tag.test_value",
                    mode,
                )
            return
        except TypeError as e:
            if mode != "ignore":
                _fail(
                    f"Cannot compute the test value of {Apply(op)!r}: input {i} ({var}): {e}",
                    mode,
                    e,
                )
            return
    try:
        (result,) = _interpreter().run_op(op, tuple(args))
    except Exception as e:
        if mode != "ignore":
            message = f"Cannot compute the test value of {Apply(op)!r}: {e}"
            if config.exception_verbosity == "high":
                message += _describe(args)
            _fail(message, mode, e)
        return
    output.tag.test_value = result
    _BY_VALUE[output.value] = result
