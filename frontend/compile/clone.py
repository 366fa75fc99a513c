"""`arignote.clone`: copy a graph, substituting some variables (Theano's `theano.clone`).

Variables are views of detached `ag` ops, so a substitution rebuilds, with
`op.clone(value_mapper=...)`, exactly the ops that depend on a replaced variable; every
other op (and every variable the user holds) is shared between the old graph and the new
one. `function(givens=...)` uses the same rebuild.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.ir import BlockArgument, Operation, SSAValue

from arignote.dialects.ag import DYNAMIC
from arignote.dialects.ag import value_shape as _ir_shape
from arignote.graph import Variable, ancestors, graph_operands, variable_of


def value_shape_of(var: Variable) -> tuple[int, ...]:
    """The static shape of `var`'s IR type (`ag.DYNAMIC` for an unknown length)."""
    return _ir_shape(var.value)


def replacement_pairs(replace: Any, what: str = "replace") -> list[tuple[Any, Any]]:
    """`replace` (a dict, a list of pairs or None) as a list of pairs."""
    if replace is None:
        return []
    if isinstance(replace, Mapping):
        return list(replace.items())
    if isinstance(replace, list | tuple):
        pairs = []
        for item in replace:
            if not isinstance(item, list | tuple) or len(item) != 2:
                raise TypeError(f"{what}: expected (variable, replacement) pairs, got {item!r}")
            pairs.append((item[0], item[1]))
        return pairs
    raise ValueError(
        f"{what} is neither a dictionary, list, tuple or None! The value provided is "
        f"{replace!r}, of type {type(replace).__name__}"
    )


def check_replacement(key: Any, value: Any, what: str = "replace") -> tuple[Variable, Variable]:
    """One checked pair, by Theano's rule for `givens` (`Type.filter_variable`): `key`
    must be a variable; a non-variable `value` becomes a shared variable; the
    replacement must have the key's dtype and number of dimensions, and be broadcastable
    wherever the key is (a replacement broadcastable where the key is not is converted,
    as Theano's `patternbroadcast` does). Shapes are not part of a type: a replacement
    whose lengths are known when the graph is built (a constant) is converted to the
    key's unknown lengths; only a key whose own lengths are fixed (a constant) needs a
    replacement of those lengths. Anything else is a TypeError naming both."""
    if not isinstance(key, Variable):
        raise TypeError(f"{what}: the variables to replace must be Variables, got {key!r}")
    shown = None
    if not isinstance(value, Variable):
        from arignote.compile.sharedvalue import shared

        shown = _value_text(value)
        value = shared(value)
    problem = _type_problem(key, value)
    if problem is not None:
        raise TypeError(
            f"{what}: cannot replace {key} of type {key.type} by {shown or value} of type "
            f"{value.type}: {problem}"
        )
    return key, _fit_shape(key, value, what, shown or str(value))


def _value_text(value: Any) -> str:
    array = np.asarray(value)
    return f"a value of shape {array.shape} and dtype {array.dtype}"


def _type_problem(key: Variable, value: Variable) -> str | None:
    """Why `value` cannot replace `key` (Theano's `TensorType.convert_variable` rule),
    or None."""
    if value.type == key.type:
        return None
    if value.dtype != key.dtype:
        return f"the dtypes differ ({key.dtype} and {value.dtype}; cast the replacement)"
    if value.ndim != key.ndim:
        return f"the numbers of dimensions differ ({key.ndim} and {value.ndim})"
    lost = [
        axis
        for axis, (k, v) in enumerate(zip(key.broadcastable, value.broadcastable, strict=True))
        if k and not v
    ]
    if lost:
        return (
            f"dimension {lost[0]} is broadcastable in the replaced variable but not in the "
            "replacement (build the replacement with the same broadcastable pattern)"
        )
    return None


def _shape_text(shape: Sequence[int]) -> str:
    texts = ["?" if n == DYNAMIC else str(n) for n in shape]
    return "(" + ", ".join(texts) + ("," if len(texts) == 1 else "") + ")"


def _fit_shape(key: Variable, value: Variable, what: str, shown: str) -> Variable:
    """`value` with the key's IR type: lengths the key leaves unknown are forgotten
    (through a reshape to the value's own lengths), so that the graph rebuilt on it has
    the types it was built with."""
    key_shape, value_shape = value_shape_of(key), value_shape_of(value)
    if key_shape == value_shape:
        return value
    for k, v in zip(key_shape, value_shape, strict=True):
        if k != DYNAMIC and k != v:
            unknown = " (? is a length known only at run time)" if v == DYNAMIC else ""
            raise TypeError(
                f"{what}: cannot replace {key} of shape {_shape_text(key_shape)}, fixed "
                f"when its graph was built, by {shown} of shape {_shape_text(value_shape)}"
                f"{unknown}"
            )
    shape = [value.shape[axis] if k == DYNAMIC else k for axis, k in enumerate(key_shape)]
    return value.reshape(shape)


def needed_ops(values: Sequence[SSAValue], stop: Iterable[SSAValue] = ()) -> list[Operation]:
    """The operations computing `values`, in topological order, without descending past
    the values in `stop`."""
    return ancestors(values, stop)


def rebuild(
    values: Sequence[SSAValue],
    replace: Mapping[SSAValue, SSAValue],
    share_inputs: bool = True,
) -> list[SSAValue]:
    """`values` recomputed with each key of `replace` replaced by its value.

    Only the operations that depend on a replaced value are cloned (detached, like any
    expression the user writes); the replacements are not themselves substituted. With
    `share_inputs=False` every free input is replaced by a new input of the same type
    and name (shared variables by a clone sharing their storage), so the result shares
    no input with the original graph.
    """
    if not replace and share_inputs:
        return list(values)  # nothing is replaced: no op is cloned
    mapping: dict[SSAValue, SSAValue] = dict(replace)
    ops = needed_ops(values, mapping)
    if not share_inputs:
        for value in [*values, *(o for op in ops for o in graph_operands(op))]:
            if isinstance(value, BlockArgument) and value not in mapping:
                mapping[value] = variable_of(value).clone().value
    for op in ops:
        if any(operand in mapping for operand in graph_operands(op)):
            new = op.clone(value_mapper=mapping)
            for old, result in zip(op.results, new.results, strict=True):
                mapping[old] = result
    return [mapping.get(v, v) for v in values]


def clone(
    output: Any,
    replace: Any = None,
    strict: bool = True,
    share_inputs: bool = True,
    copy_inputs: Any = None,
) -> Any:
    """A copy of `output` (a variable or a list of variables) with the substitutions of
    `replace` (a dict or a list of pairs `(variable, replacement)`), Theano's
    `theano.clone`.

    `share_inputs=False` makes new input variables (shared variables become clones
    sharing their storage). Replacements must have the type of the variable they replace
    (`strict=False` with a different type is not supported).
    """
    if copy_inputs is not None:
        share_inputs = copy_inputs
    pairs = [check_replacement(k, v, "clone") for k, v in replacement_pairs(replace, "clone")]
    single = isinstance(output, Variable)
    outputs = [output] if single else list(output)
    for out in outputs:
        if not isinstance(out, Variable):
            raise TypeError(f"clone: expected Variables to clone, got {out!r}")
    replace_values = {k.value: v.value for k, v in pairs}
    new = rebuild([o.value for o in outputs], replace_values, share_inputs)
    result = [variable_of(v) for v in new]
    return result[0] if single else result
