"""`arignote.ifelse`: Theano's lazy conditional.

    from arignote.ifelse import ifelse

    z = ifelse(T.lt(a, b), T.mean(x), T.mean(y))

`ifelse(condition, then_branch, else_branch)` computes only the branch the condition
selects, in every backend and mode, where `tensor.switch` computes both branches
elementwise and then picks. The expression is an `ag.if` op whose regions yield the
branches' values; when a function is compiled, the operations used only by one branch
move into that branch's region (`arignote.compile.regions`), so they run only when
the branch is taken. Operations that other parts of the graph (the condition, the other
branch, another output) also use stay outside and always run.

In a graph view the node's op is an `IfElse` (printed `if{}` as in Theano); its inputs
are the condition, then the values of the then branch, then those of the else branch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation, SSAValue

from arignote.configuration import config
from arignote.dialects import ag
from arignote.graph import (
    _OP_VIEWS,
    REGION_INPUTS,
    Op,
    Variable,
    apply_op,
)
from arignote.tensor import basic as T

NAME_ATTRIBUTE = "ag.ifelse_name"
"""The optional `name` given to `ifelse`, kept on the `ag.if` op for its graph view."""


class IfElse(Op):
    """The op of an `ifelse` node (`if{}`, or `if{name}`), a view of an `ag.if`."""

    @property
    def n_outs(self) -> int:
        return len(self.ir_op.results)

    @property
    def name(self) -> str | None:
        attr = self.ir_op.attributes.get(NAME_ATTRIBUTE)
        return attr.data if isinstance(attr, StringAttr) else None

    def __str__(self) -> str:
        return f"if{{{self.name or ''}}}"

    __repr__ = __str__


def _if_inputs(op: Operation) -> list[tuple[SSAValue, int | None]]:
    """The graph inputs of an `ag.if`: its condition, then each region's results."""
    assert isinstance(op, ag.IfOp)
    return [
        (op.condition, None),
        *((v, 0) for v in op.then_yield.values),
        *((v, 1) for v in op.else_yield.values),
    ]


_OP_VIEWS[ag.IfOp] = IfElse
REGION_INPUTS[ag.IfOp] = _if_inputs


def _as_branch(value: Any, other: Any) -> Variable:
    """A branch value as a variable; a non-variable (a number, an array) takes the type
    of the other branch's variable when there is one (Theano's `filter_variable`)."""
    if isinstance(value, Variable):
        return value
    if isinstance(other, Variable):
        array = np.asarray(value, dtype=other.dtype)
        if array.ndim == other.ndim:
            return T.constant(array, dtype=other.dtype)
    return T.as_tensor_variable(value)


def _check_pair(i: int, then: Variable, other: Variable) -> None:
    if then.type != other.type:
        raise TypeError(
            "The two branches should have identical types, but they are "
            f"{then.type} and {other.type} respectively (output {i}). This error could "
            "be raised if for instance you have two branch of different broadcastable "
            "pattern, or different dtypes (cast one branch with `.astype`)."
        )


def _branches(then_branch: Any, else_branch: Any) -> tuple[list[Variable], list[Variable]]:
    thens = list(then_branch) if isinstance(then_branch, list | tuple) else [then_branch]
    elses = list(else_branch) if isinstance(else_branch, list | tuple) else [else_branch]
    if len(thens) != len(elses):
        raise ValueError(
            "The number of values on the `then` branch should have the same number of "
            f"variables as the `else` branch : (variables on `then` {len(thens)}, "
            f"variables on `else` {len(elses)})"
        )
    if not thens:
        raise ValueError("ifelse: the branches must have at least one value each")
    new_thens: list[Variable] = []
    new_elses: list[Variable] = []
    for i, (t, e) in enumerate(zip(thens, elses, strict=True)):
        t, e = _as_branch(t, e), _as_branch(e, t)
        _check_pair(i, t, e)
        new_thens.append(t)
        new_elses.append(e)
    return new_thens, new_elses


def _condition(condition: Any) -> Variable:
    c = T.as_tensor_variable(condition)
    if c.ndim > 0:
        raise TypeError(
            "Condition given to the op has to be a scalar with 0 standing for False, "
            f"anything else for True (got {c} of type {c.type})"
        )
    return c


def ifelse(condition: Any, then_branch: Any, else_branch: Any, name: str | None = None) -> Any:
    """`then_branch` if the scalar `condition` is nonzero, else `else_branch`, computing
    only the selected branch (Theano's `theano.ifelse.ifelse`).

    The branches are one value each or lists/tuples of the same length; the values at
    the same position must have the same type (dtype and broadcastable pattern; a
    number or array given for one takes the other's dtype). Where their static lengths
    differ (a constant of 3 elements and a vector), the result's length is dynamic. The
    result is one variable, or a list/tuple of variables like `then_branch`. `name`
    names the node (`if{name}`).
    """
    c = _condition(condition)
    thens, elses = _branches(then_branch, else_branch)
    op = ag.IfOp.with_yields(c.value, [v.value for v in thens], [v.value for v in elses])
    if name is not None:
        op.attributes[NAME_ATTRIBUTE] = StringAttr(str(name))
    first = apply_op(op)
    outputs = [first, *(Variable(r) for r in op.results[1:])]
    if config.compute_test_value != "off":
        _set_test_values(c, thens, elses, outputs)
    if isinstance(then_branch, list):
        return outputs
    if isinstance(then_branch, tuple):
        return tuple(outputs)
    return outputs[0]


def _set_test_values(
    c: Variable, thens: Sequence[Variable], elses: Sequence[Variable], outputs: list[Variable]
) -> None:
    """The outputs' test values: those of the branch the condition's test value takes
    (the other branch's test values are not needed, as at run time)."""
    from arignote.testvalue import _BY_VALUE, get_test_value

    try:
        taken = thens if bool(np.asarray(get_test_value(c))) else elses
        values = [get_test_value(v) for v in taken]
    except AttributeError:
        return  # missing test values were already reported when the inputs were built
    for out, value in zip(outputs, values, strict=True):
        out.tag.test_value = value
        _BY_VALUE[out.value] = value


# --- gradient (the rule is `grad_rules._if`) ------------------------------------------------


def zeros_of(v: Variable) -> Variable:
    """Zeros of `v`'s type: a constant when its shape is static (then the zeros need not
    compute `v`), else zeros of its run-time shape."""
    shape = ag.tensor_type(v.value).get_shape()
    if ag.DYNAMIC not in shape:
        return T.constant(np.zeros(shape, dtype=v.dtype), dtype=v.dtype)
    return T.zeros_like(v)


__all__ = ["IfElse", "ifelse"]
