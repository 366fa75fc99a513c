"""`arignote.clone`: copy a graph, substituting some variables (Theano's `theano.clone`).

Variables are views of detached `ag` ops, so a substitution rebuilds, with
`op.clone(value_mapper=...)`, exactly the ops that depend on a replaced variable; every
other op (and every variable the user holds) is shared between the old graph and the new
one. `function(givens=...)` uses the same rebuild.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from xdsl.ir import BlockArgument, Operation, SSAValue

from arignote.graph import Variable, ancestors, graph_operands, variable_of


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
    """One checked pair: `key` must be a variable; a non-variable `value` becomes a shared
    variable (as in Theano); both must have the same type."""
    if not isinstance(key, Variable):
        raise TypeError(f"{what}: the variables to replace must be Variables, got {key!r}")
    if not isinstance(value, Variable):
        from arignote.compile.sharedvalue import shared

        value = shared(value)
    if key.type != value.type:
        raise TypeError(
            f"{what}: cannot replace {key} of type {key.type} by {value} of type "
            f"{value.type}; the types must be the same (cast the replacement, or "
            "build it with the same broadcastable pattern)"
        )
    return key, value


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
