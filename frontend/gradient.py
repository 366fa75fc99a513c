"""Symbolic differentiation (Theano's `theano.gradient`): `grad`, `Lop`, `Rop`,
`jacobian`, `hessian` and the numeric checker `verify_grad`.

`grad` is reverse-mode differentiation over the `ag` operations the cost depends on: it
walks them in reverse topological order, sums the gradient terms reaching each SSA value,
and calls the rule of each operation (`arignote.tensor.grad_rules.RULES`, one per op
class) to get the terms for its inputs. Rules build their results with the ordinary
tensor functions, so a gradient is more `ag` IR, compiled like any other expression.
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, StringAttr, f64, i64
from xdsl.ir import Operation, SSAValue

from arignote.configuration import config
from arignote.graph import Variable, ancestors, graph_operands, variable_of
from arignote.tensor import basic as T
from arignote.tensor.grad_rules import RULES, is_float, reduce_to
from arignote.tensor.type import TensorType

__all__ = [
    "DisconnectedInputError",
    "DisconnectedType",
    "GradientError",
    "Lop",
    "NullType",
    "NullTypeGradError",
    "Rop",
    "consider_constant",
    "disconnected_grad",
    "grad",
    "grad_clip",
    "grad_not_implemented",
    "grad_scale",
    "grad_undefined",
    "hessian",
    "jacobian",
    "numeric_grad",
    "subgraph_grad",
    "undefined_grad",
    "verify_grad",
    "zero_grad",
]


class DisconnectedInputError(ValueError):
    """`grad` was asked for the gradient with respect to a variable the cost does not
    depend on, with `disconnected_inputs='raise'`."""


class NullTypeGradError(TypeError):
    """`grad` met a gradient that is undefined or not implemented (a `NullType`) on the
    way to a `wrt`, with `null_gradients='raise'` (Theano's class, a `TypeError`)."""


class NullType:
    """An undefined gradient (Theano's `NullType`): what `grad_undefined` and
    `grad_not_implemented` return and what an op without a gradient rule sends to its
    inputs. `why_null` says which op and input. `NullType(why)()` is the marker itself
    (Theano's spelling makes a variable of the type); it is not a variable and cannot be
    compiled: `grad` raises `NullTypeGradError` with `why_null` when such a term reaches
    a `wrt`, or returns the marker with `null_gradients='return'`."""

    def __init__(self, why_null: str = "(no explanation given)"):
        self.why_null = why_null

    def __call__(self) -> NullType:
        return self

    def __repr__(self) -> str:
        return f"NullType({self.why_null!r})"


def grad_not_implemented(op: Any, x_pos: int, x: Any, comment: str = "") -> NullType:
    """The gradient of input `x_pos` (`x`) of `op` that nobody implemented (Theano's
    `grad_not_implemented`): a `NullType`; `grad` raises `NullTypeGradError` naming the
    op when it reaches a `wrt`."""
    return NullType(
        f"This variable is Null because the grad method for input {x_pos} ({x}) of the "
        f"{_op_name(op)} op is not implemented. {comment}"
    )


def grad_undefined(op: Any, x_pos: int, x: Any, comment: str = "") -> NullType:
    """The gradient of input `x_pos` (`x`) of `op` that is mathematically undefined
    (Theano's `grad_undefined`): a `NullType`."""
    return NullType(
        f"This variable is Null because the grad method for input {x_pos} ({x}) of the "
        f"{_op_name(op)} op is mathematically undefined. {comment}"
    )


def _op_name(op: Any) -> str:
    if isinstance(op, Operation):
        node = op.attributes.get("ag.node")
        label = getattr(node, "data", None)
        return f"{op.name} ({label})" if label else op.name
    return str(op)


class DisconnectedType:
    """What `grad(..., return_disconnected='Disconnected')` returns for a variable the
    cost does not depend on (Theano's `DisconnectedType()()`, here a plain marker: it is
    not a variable and cannot be compiled)."""

    def __init__(self, variable: Variable):
        self.variable = variable

    def __repr__(self) -> str:
        return f"DisconnectedType({self.variable})"


def _format_as(using_list: bool, using_tuple: bool, values: list[Any]) -> Any:
    if using_list:
        return list(values)
    if using_tuple:
        return tuple(values)
    assert len(values) == 1
    return values[0]


def _float_zeros_like(x: Variable) -> Variable:
    """Zeros of `x`'s shape in `x`'s dtype if it is a float, else in floatX (a gradient
    is never integer-valued, Theano's `_float_zeros_like`)."""
    return T.zeros_like(x, dtype=x.dtype if is_float(x) else config.floatX)


def _float_ones_like(x: Variable) -> Variable:
    return T.ones_like(x, dtype=x.dtype if is_float(x) else config.floatX)


def _handle_disconnected(var: Variable, disconnected_inputs: str) -> None:
    message = (
        "grad method was asked to compute the gradient with respect to a variable that "
        "is not part of the computational graph of the cost, or is used only by a "
        f"non-differentiable operator: {var}"
    )
    if disconnected_inputs == "ignore":
        return
    if disconnected_inputs == "warn":
        warnings.warn(message, stacklevel=3)
        return
    if disconnected_inputs == "raise":
        raise DisconnectedInputError(message)
    raise ValueError(
        "Invalid value for keyword 'disconnected_inputs', valid values are "
        "'ignore', 'warn' and 'raise'."
    )


def _sum_terms(terms: list[Variable], var: Variable) -> Variable:
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return reduce_to(total, var)


def grad(
    cost: Variable | None,
    wrt: Any,
    consider_constant: Sequence[Variable] | None = None,
    disconnected_inputs: str = "raise",
    add_names: bool = True,
    known_grads: dict[Variable, Variable] | None = None,
    return_disconnected: str = "zero",
    null_gradients: str = "raise",
) -> Any:
    """Symbolic gradient of the scalar `cost` with respect to `wrt` (one variable, or a
    list or tuple of variables: the result has the same form).

    * `consider_constant`: variables not to differentiate through.
    * `disconnected_inputs`: for a `wrt` the cost does not depend on, 'raise'
      (`DisconnectedInputError`), 'warn' or 'ignore'; such a gradient is zero.
    * `known_grads`: a dict from variables to their gradients, for when the gradient on
      some intermediate variables is known (the cost may then be None).
    * `return_disconnected`: what to return for a disconnected `wrt`: 'zero' (zeros of
      its shape), 'None', or 'Disconnected' (a `DisconnectedType` marker).

    A float variable's gradient has its dtype. An integer or bool variable gets zeros of
    dtype floatX; integer and bool results (comparisons, `floor_div`, casts to integers)
    pass no gradient, as in Theano.
    """
    if null_gradients not in ("raise", "return"):
        raise ValueError(f"null_gradients must be 'raise' or 'return', got {null_gradients!r}")
    cost = _check_grad_args(cost, wrt, known_grads, disconnected_inputs, return_disconnected)
    using_list, using_tuple = isinstance(wrt, list), isinstance(wrt, tuple)
    wrt_list = _wrt_list(wrt)

    if not known_grads and not consider_constant:
        cost = _stabilized(cost, wrt_list)
    nulls: dict[SSAValue, NullType] = {}
    terms, outputs = _seed_terms(cost, known_grads, nulls)
    ops = _graph_ops(outputs, consider_constant)
    # The values that depend on a `wrt`: only their gradients are needed.
    wrt_values = {v.value for v in wrt_list}
    needed: set[SSAValue] = set(wrt_values)
    for op in ops:
        if any(o in needed for o in graph_operands(op)):
            needed.update(op.results)
    # A `wrt` is connected when an operation on a path to the outputs uses it.
    used = {o for op in ops for o in graph_operands(op) if o in needed}
    connected = {v for v in wrt_values if v in used or v in terms or v in nulls}
    _backpropagate(ops, terms, needed, nulls)

    results = [
        _wrt_result(var, cost, terms, nulls, add_names, null_gradients)
        if var.value in connected
        else _disconnected(var, disconnected_inputs, return_disconnected)
        for var in wrt_list
    ]
    return _format_as(using_list, using_tuple, results)


def _disconnected(var: Variable, disconnected_inputs: str, return_disconnected: str) -> Any:
    _handle_disconnected(var, disconnected_inputs)
    return _disconnected_result(var, return_disconnected)


def _wrt_result(
    var: Variable,
    cost: Variable | None,
    terms: dict[SSAValue, list[Variable]],
    nulls: dict[SSAValue, NullType],
    add_names: bool,
    null_gradients: str,
) -> Any:
    """The gradient of the connected `var`: its terms summed, a `NullType` (or
    `NullTypeGradError`), or zeros for an integer variable."""
    if var.value in nulls:
        if null_gradients == "raise":
            raise NullTypeGradError("tensor.grad encountered a NaN. " + nulls[var.value].why_null)
        return nulls[var.value]
    found = terms.get(var.value)
    if not found or not is_float(var):
        return _float_zeros_like(var)
    g = _sum_terms(found, var)
    if add_names and g.name is None and g.owner is not None:
        _add_name(g, cost, var)
    return g


def _graph_ops(
    outputs: Sequence[Variable], consider_constant: Sequence[Variable] | None
) -> list[Operation]:
    """The operations the outputs depend on, not looking past `consider_constant` nor
    past the results of `disconnected_grad` (whose inputs are disconnected)."""
    if consider_constant is not None and not isinstance(consider_constant, list | tuple):
        raise TypeError(
            "consider_constant must be an iterable collection, got " + str(type(consider_constant))
        )
    for elem in consider_constant or ():
        if not isinstance(elem, Variable):
            raise TypeError(
                f"Elements of consider_constant must be variables, but got {type(elem)}"
            )
    stops = [v.value for v in consider_constant or ()]
    roots = [v.value for v in outputs]
    ops = ancestors(roots, stops)
    cut = [op.results[0] for op in ops if _override(op) == "disconnected"]
    return ancestors(roots, stops + cut) if cut else ops


def _wrt_list(wrt: Any) -> list[Variable]:
    wrt_list = list(wrt) if isinstance(wrt, list | tuple) else [wrt]
    for elem in wrt_list:
        if not isinstance(elem, Variable):
            raise TypeError(f"Expected Variable, got {elem} of type {type(elem)}")
    return wrt_list


def _stabilized(cost: Variable | None, wrt: Sequence[Variable]) -> Variable | None:
    """`cost` rewritten by the `stabilize` patterns, so that the gradient is taken of the
    stable form (`log(1 - sigmoid(z))` differentiates as `-sigmoid(z)`, finite where the
    sigmoid saturates) — the same function, differentiated without overflow.

    The rewrite works on a copy of the operations it may change: those a pattern is
    made for (or that hold one in their regions) and every operation that uses their
    results, down to the cost. The rest
    (an MLP's layers below its loss) are shared with the cost as written, so the
    gradient and the cost read one copy of them. Every `wrt` that is an input keeps its
    identity. When a `wrt` is an intermediate value, the cost is left as written (a
    rewrite could remove that value).
    """
    from xdsl.dialects.func import ReturnOp
    from xdsl.ir import Block, BlockArgument
    from xdsl.pattern_rewriter import PatternRewriteWalker

    from arignote.lowering.graph.stable_forms import STABILIZE_PATTERNS
    from arignote.lowering.rewriting import DispatchingApplier

    if cost is None or not all(isinstance(v.value, BlockArgument) for v in wrt):
        return cost
    applier = DispatchingApplier(STABILIZE_PATTERNS)
    mapping: dict[SSAValue, SSAValue] = {}
    block = Block()
    for op in ancestors([cost.value]):
        # copied: an op a pattern is for (or holding one in its regions, a scan's step),
        # or one reading a copied value (the patterns only read the operations below the
        # op they rewrite)
        if any(applier.patterns_for(type(inner)) for inner in op.walk()) or any(
            v in mapping for v in graph_operands(op)
        ):
            block.add_op(op.clone(value_mapper=mapping))
    if cost.value not in mapping:
        return cost
    # the anchor (a terminator: never dead code) keeps the cost alive through the
    # rewrites and tells where it ends up
    anchor = ReturnOp(mapping[cost.value])
    block.add_op(anchor)
    walker = PatternRewriteWalker(applier)
    changed = walker.rewrite_module(_holder(block))
    new_cost = anchor.operands[0]
    anchor.detach()
    anchor.erase()
    for op in list(block.ops):
        op.detach()
    return variable_of(new_cost) if changed else cost


def _holder(block: Any) -> Any:
    """A module around `block`, so that a rewrite walker can visit its operations."""
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.ir import Region

    return ModuleOp(Region(block))


def _add_name(g: Variable, cost: Variable | None, var: Variable) -> None:
    """Theano's `add_names`: the gradient is named `(d<cost>/d<var>)` when both are named."""
    if cost is not None and cost.name is not None and var.name is not None:
        g.name = f"(d{cost.name}/d{var.name})"


def _check_grad_args(
    cost: Any,
    wrt: Any,
    known_grads: dict[Variable, Variable] | None,
    disconnected_inputs: str,
    return_disconnected: str,
) -> Variable | None:
    if cost is None and known_grads is None:
        raise AssertionError("cost and known_grads can't both be None.")
    if cost is not None:
        if not isinstance(cost, Variable):
            cost = T.as_tensor_variable(cost)
        if cost.ndim != 0:
            raise TypeError("cost must be a scalar.")
    if isinstance(wrt, set):
        raise TypeError(
            "wrt must not be a set. sets have no defined iteration order, so we can't "
            "return gradients in a matching order."
        )
    if return_disconnected not in ("zero", "None", "Disconnected"):
        raise ValueError(
            f"return_disconnected must be 'zero', 'None' or 'Disconnected', "
            f"got {return_disconnected!r}"
        )
    if disconnected_inputs not in ("ignore", "warn", "raise"):
        raise ValueError(
            "Invalid value for keyword 'disconnected_inputs', valid values are "
            "'ignore', 'warn' and 'raise'."
        )
    return cost


def _seed_terms(
    cost: Variable | None,
    known_grads: dict[Variable, Any] | None,
    nulls: dict[SSAValue, NullType],
) -> tuple[dict[SSAValue, list[Variable]], list[Variable]]:
    """The initial gradient terms (1 for the cost, then the known gradients) and the
    variables they belong to. As in Theano, a known gradient may be a `NullType` (it
    goes to `nulls`) or a `DisconnectedType` (no term)."""
    terms: dict[SSAValue, list[Variable]] = {}
    outputs: list[Variable] = []
    known = dict(known_grads or {})
    if cost is not None:
        outputs.append(cost)
        seed = known.pop(cost, None)
        seed = _float_ones_like(cost) if seed is None else T.as_tensor_variable(seed)
        terms[cost.value] = [T.cast(seed, cost.dtype) if is_float(cost) else seed]
    for var, g in known.items():
        if isinstance(g, DisconnectedType):
            continue
        if isinstance(g, NullType):
            outputs.append(var)
            nulls.setdefault(var.value, g)
            continue
        g = T.as_tensor_variable(g)
        if not is_float(g):
            raise TypeError(
                "Gradients must always be NullType, DisconnectedType, or continuous, but "
                f"grad was given a known_grad of type {g.type}"
            )
        outputs.append(var)
        terms.setdefault(var.value, []).append(g)
    return terms, outputs


def _backpropagate(
    ops: list[Operation],
    terms: dict[SSAValue, list[Variable]],
    needed: set[SSAValue],
    nulls: dict[SSAValue, NullType],
) -> None:
    """Visit `ops` in reverse topological order, adding to `terms` the gradient terms
    each op's rule gives its `needed` float inputs. An undefined gradient (`NullType`,
    from a rule or from an op without one) goes to `nulls` and is passed on unchanged to
    the inputs of the ops it reaches, as Theano does."""
    for op in reversed(ops):
        operands = graph_operands(op)
        if not any(o in needed and is_float(variable_of(o)) for o in operands):
            continue
        out_vars = [variable_of(r) for r in op.results]
        pairs = list(zip(op.results, out_vars, strict=True))
        null = next((nulls[r] for r in op.results if r in nulls), None)
        if null is None and not any(r in terms and is_float(v) for r, v in pairs):
            continue  # integer/bool results, or results the outputs do not use
        in_vars = [variable_of(o) for o in operands]
        in_grads = _input_grads(op, in_vars, out_vars, pairs, terms, null)
        for operand, var, g in zip(operands, in_vars, in_grads, strict=True):
            if g is None or operand not in needed or not is_float(var):
                continue
            if isinstance(g, NullType):
                nulls.setdefault(operand, g)
                continue
            terms.setdefault(operand, []).append(reduce_to(g, var))


def _input_grads(
    op: Operation,
    in_vars: list[Variable],
    out_vars: list[Variable],
    pairs: list[tuple[SSAValue, Variable]],
    terms: dict[SSAValue, list[Variable]],
    null: NullType | None,
) -> list[Any]:
    """The gradient terms of `op`'s inputs: its rule applied to the summed gradients of
    its results, or `null` for every input when a result's gradient is undefined."""
    if null is not None:
        return [null] * len(in_vars)
    override = _override(op)
    rule = _OVERRIDE_RULES[override] if override is not None else RULES.get(type(op))
    if rule is None:
        return [grad_not_implemented(op, i, v) for i, v in enumerate(in_vars)]
    out_grads = [_sum_terms(terms[r], v) if r in terms else _float_zeros_like(v) for r, v in pairs]
    in_grads = rule(op, in_vars, out_vars, out_grads)
    if len(in_grads) != len(in_vars):
        raise ValueError(f"the gradient rule of {op.name} returned the wrong number of terms")
    return list(in_grads)


def _disconnected_result(var: Variable, return_disconnected: str) -> Any:
    if return_disconnected == "zero":
        return _float_zeros_like(var)
    if return_disconnected == "None":
        return None
    return DisconnectedType(var)


# --- gradient markers --------------------------------------------------------------------

GRAD_OVERRIDE = "ag.grad_override"
"""The attribute of a marker: a same-type `ag.cast` (the identity, which `canonicalize`
removes, so markers cost nothing at run time) whose gradient is not the identity's:
"zero", "disconnected", "undefined", "clip" or "scale"."""

GRAD_ARGS = "ag.grad_args"
"""The attribute of a "clip" or "scale" marker whose bounds or multiplier are numbers:
them, as an f64 array (they travel with the IR: copies and pickles keep them)."""

GRAD_PAYLOAD = "ag.grad_payload"
"""The attribute of a "clip" or "scale" marker whose bounds or multiplier include a
variable: its key in `_PAYLOADS` (a copy of the marker in this process keeps it)."""

_PAYLOADS: dict[int, tuple[Any, ...]] = {}


def _override(op: Operation) -> str | None:
    attr = op.attributes.get(GRAD_OVERRIDE)
    return attr.data if isinstance(attr, StringAttr) else None


def _marker(x: Any, kind: str, payload: tuple[Any, ...] = ()) -> Variable:
    from arignote.dialects import ag
    from arignote.graph import apply_op
    from arignote.runtime.dtypes import element_type

    v = T.as_tensor_variable(x)
    op = ag.CastOp(v.value, element_type(np.dtype(v.dtype)))
    op.attributes[GRAD_OVERRIDE] = StringAttr(kind)
    if payload and all(isinstance(p, int | float | np.number) for p in payload):
        op.attributes[GRAD_ARGS] = DenseArrayBase.from_list(f64, [float(p) for p in payload])
    elif payload:
        key = len(_PAYLOADS)
        _PAYLOADS[key] = payload
        op.attributes[GRAD_PAYLOAD] = IntegerAttr(key, i64)
    return apply_op(op)


def _payload(op: Operation) -> tuple[Any, ...]:
    numbers = op.attributes.get(GRAD_ARGS)
    if isinstance(numbers, DenseArrayBase):
        return tuple(float(v) for v in numbers.get_values())
    attr = op.attributes[GRAD_PAYLOAD]
    assert isinstance(attr, IntegerAttr)
    return _PAYLOADS[attr.value.data]


def zero_grad(x: Any) -> Variable:
    """`x`, whose gradient is zero (Theano's `zero_grad`): the value is unchanged, but
    no gradient flows back through it; variables reached only through it are connected
    with a zero gradient."""
    return _marker(x, "zero")


def consider_constant(x: Any) -> Variable:
    """Deprecated (as in Theano): `zero_grad(x)`, with a `DeprecationWarning`."""
    warnings.warn(
        "consider_constant() is deprecated, use zero_grad() or disconnected_grad() instead.",
        DeprecationWarning,
        stacklevel=2,
    )
    return _marker(x, "zero")


def disconnected_grad(x: Any) -> Variable:
    """`x`, through which the cost is not connected to `x`'s inputs (Theano's
    `disconnected_grad`): a variable reached only through it is disconnected
    (`grad(..., disconnected_inputs=...)` decides), and the gradient graph stops there."""
    return _marker(x, "disconnected")


def undefined_grad(x: Any) -> Variable:
    """`x`, whose gradient is undefined (Theano's `undefined_grad`): `grad` with respect
    to a variable reached through it raises `NullTypeGradError`."""
    return _marker(x, "undefined")


def grad_clip(x: Any, lower_bound: Any, upper_bound: Any) -> Variable:
    """`x`, whose gradient is clipped to `[lower_bound, upper_bound]` elementwise
    (Theano's `grad_clip`)."""
    if isinstance(lower_bound, int | float) and isinstance(upper_bound, int | float):
        if not upper_bound >= lower_bound:
            raise AssertionError(
                f"grad_clip: upper_bound ({upper_bound}) must be >= lower_bound ({lower_bound})"
            )
    return _marker(x, "clip", (lower_bound, upper_bound))


def grad_scale(x: Any, multiplier: Any) -> Variable:
    """`x`, whose gradient is multiplied by `multiplier` (a number or a tensor; Theano's
    `grad_scale`: -1 reverses it)."""
    return _marker(x, "scale", (multiplier,))


def _zero_rule(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    return [T.zeros_like(gz[0])]


def _undefined_rule(
    op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]
):
    return [grad_undefined("UndefinedGrad", 0, inputs[0])]


def _clip_rule(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    lower, upper = _payload(op)
    return [T.clip(gz[0], lower, upper)]


def _scale_rule(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    (multiplier,) = _payload(op)
    return [gz[0] * multiplier]


_OVERRIDE_RULES: dict[str, Callable[..., list[Any]]] = {
    "zero": _zero_rule,
    "undefined": _undefined_rule,
    "clip": _clip_rule,
    "scale": _scale_rule,
}


def subgraph_grad(
    wrt: list[Variable],
    end: list[Variable],
    start: dict[Variable, Variable] | None = None,
    cost: Variable | None = None,
    details: bool = False,
) -> tuple[list[Any], ...]:
    """The gradients with respect to `wrt` and `end` of `cost` and of the known
    gradients `start`, not backpropagating past `end` (Theano's `subgraph_grad`):
    returns `(wrt_grads, end_grads)`, and with `details` also the gradients with respect
    to `wrt` and `end` from `start` and from `cost` separately (None where not given).
    Disconnected variables get zeros."""
    if cost is None and start is None:
        raise AssertionError("subgraph_grad: cost and start can't both be None.")
    if not isinstance(end, list):
        raise AssertionError("subgraph_grad: end must be a list of variables")
    if not isinstance(wrt, list):
        raise AssertionError("subgraph_grad: wrt must be a list of variables")
    if start is not None and not isinstance(start, dict):
        raise AssertionError("subgraph_grad: start must be a dict from variables to gradients")
    params = list(dict.fromkeys([*wrt, *end]))
    start_grads = cost_grads = None
    if start is not None:
        start_grads = list(
            grad(
                None, params, known_grads=start, consider_constant=end, disconnected_inputs="ignore"
            )
        )
    if cost is not None:
        cost_grads = list(grad(cost, params, consider_constant=end, disconnected_inputs="ignore"))
    if start_grads is None:
        grads = cost_grads
    elif cost_grads is None:
        grads = start_grads
    else:
        grads = [a + b for a, b in zip(start_grads, cost_grads, strict=True)]
    assert grads is not None
    by_param = dict(zip(params, grads, strict=True))
    wrt_grads = [by_param[v] for v in wrt]
    end_grads = [by_param[v] for v in end]
    if details:
        return wrt_grads, end_grads, start_grads, cost_grads
    return wrt_grads, end_grads


# --- L and R operators -------------------------------------------------------------------


def Lop(  # noqa: N802 - Theano's name
    f: Any,
    wrt: Any,
    eval_points: Any,
    consider_constant: Sequence[Variable] | None = None,
    disconnected_inputs: str = "raise",
) -> Any:
    """The vector-Jacobian product: for each `wrt[j]`,
    `sum_i eval_points[i] * d f[i] / d wrt[j]` (summed over all elements of `f[i]`).
    The result has the form of `wrt` (a variable, a list or a tuple)."""
    fs = list(f) if isinstance(f, list | tuple) else [f]
    points = list(eval_points) if isinstance(eval_points, list | tuple) else [eval_points]
    if len(fs) != len(points):
        raise ValueError(f"Lop: {len(fs)} expressions but {len(points)} evaluation points")
    known = {}
    for fi, p in zip(fs, points, strict=True):
        p = T.as_tensor_variable(p)
        if p.ndim != fi.ndim:
            raise ValueError(
                f"Lop: the evaluation point {p} has {p.ndim} dimensions, the expression "
                f"{fi} has {fi.ndim}"
            )
        known[fi] = T.cast(p, fi.dtype) if is_float(fi) else p
    using_list = isinstance(wrt, list)
    using_tuple = isinstance(wrt, tuple)
    ws = list(wrt) if using_list or using_tuple else [wrt]
    rval = grad(
        None,
        ws,
        consider_constant=consider_constant,
        disconnected_inputs=disconnected_inputs,
        known_grads=known,
    )
    return _format_as(using_list, using_tuple, rval)


def Rop(  # noqa: N802 - Theano's name
    f: Any,
    wrt: Any,
    eval_points: Any,
    disconnected_outputs: str = "raise",
    return_disconnected: str = "zero",
) -> Any:
    """The Jacobian-vector product: for each `f[i]`,
    `sum_j d f[i] / d wrt[j] * eval_points[j]` (the directional derivative of `f` along
    `eval_points`). The result has the form of `f`.

    Forward mode, as Theano's: the ops between `wrt` and `f` are visited in topological
    order, each computing the tangent of its results from its inputs' tangents with its
    R rule (`arignote.tensor.rop_rules`: elementwise ops, linear ops, `dot`). An op
    without one (`reduce_prod`, `reduce_max`, `scan`, `if`, ...) gets the
    double-L-operator trick on that op alone: with a placeholder `u` for its results,
    its gradient rule gives `J^T u`, and the gradient of `<J^T u, v>` with respect to
    `u` is `J v`. An `f[i]` that does not depend on `wrt` (or only through integer
    results) is disconnected: `DisconnectedInputError` with `disconnected_outputs=
    'raise'`, a warning with 'warn'; its result is then zeros, None or a
    `DisconnectedType` per `return_disconnected`.
    """
    using_list = isinstance(f, list)
    using_tuple = isinstance(f, tuple)
    fs = list(f) if using_list or using_tuple else [f]
    ws = list(wrt) if isinstance(wrt, list | tuple) else [wrt]
    points = list(eval_points) if isinstance(eval_points, list | tuple) else [eval_points]
    if len(ws) != len(points):
        raise ValueError("`wrt` must be the same length as `eval_points`.")
    if disconnected_outputs not in ("ignore", "warn", "raise"):
        raise ValueError(
            "Invalid value for keyword 'disconnected_inputs', valid values are "
            "'ignore', 'warn' and 'raise'."
        )
    if return_disconnected.lower() not in ("zero", "none", "disconnected"):
        raise ValueError(
            "Invalid value for keyword 'return_disconnected', valid values are "
            "'zero', 'None' and 'Disconnected'."
        )
    tangents = _seed_tangents(ws, points)
    _forward(fs, ws, tangents)
    results = [
        _cast_like(tangents[fi.value], fi)
        if fi.value in tangents
        else _rop_disconnected(fi, disconnected_outputs, return_disconnected)
        for fi in fs
    ]
    return _format_as(using_list, using_tuple, results)


def _seed_tangents(ws: list[Variable], points: list[Any]) -> dict[SSAValue, Variable]:
    tangents: dict[SSAValue, Variable] = {}
    for i, (w, p) in enumerate(zip(ws, points, strict=True)):
        if not isinstance(w, Variable):
            w = T.as_tensor_variable(w)
        p = T.as_tensor_variable(p)
        if w.ndim != p.ndim:
            raise ValueError(
                f"Element {i} of wrt/eval_point have mismatched dimensionality: "
                f"{w.ndim} versus {p.ndim}"
            )
        if is_float(w):  # (an integer wrt has no tangent: Rop is undefined there)
            tangents[w.value] = T.cast(p, w.dtype)
    return tangents


def _forward(fs: list[Variable], ws: list[Variable], tangents: dict[SSAValue, Variable]) -> None:
    """The tangents of the values between `ws` and `fs`, in topological order."""
    from arignote.tensor.rop_rules import r_rule

    for op in ancestors([fi.value for fi in fs], [w.value for w in ws]):
        operands = graph_operands(op)
        vs = [tangents.get(o) for o in operands]
        if all(v is None for v in vs):
            continue
        outs = [variable_of(r) for r in op.results]
        if not any(is_float(o) for o in outs):
            continue  # comparisons, integer results: no tangent
        ins = [variable_of(o) for o in operands]
        rule = r_rule(op) if _override(op) is None else _marker_r
        found = rule(op, ins, outs, vs) if rule is not None else None
        if found is None:
            found = _r_by_double_lop(op, ins, outs, vs)
        for result, out, t in zip(op.results, outs, found, strict=True):
            if t is not None and is_float(out):
                tangents[result] = t


def _marker_r(op: Operation, ins: list[Variable], outs: list[Variable], vs: list[Any]) -> list:
    """Theano's R_op of the markers: `zero_grad` zeros, `disconnected_grad` and
    `undefined_grad` none, `grad_clip` and `grad_scale` the identity's (a view)."""
    kind = _override(op)
    if kind == "zero":
        return [T.zeros_like(outs[0])]
    if kind in ("disconnected", "undefined"):
        return [None]
    return [vs[0]]


def _r_by_double_lop(
    op: Operation, ins: list[Variable], outs: list[Variable], vs: list[Any]
) -> list[Any]:
    """`J v` for one op from its gradient rule: `J^T u` for placeholders `u` of its
    float results, paired with `v`, differentiated with respect to `u` (linear in `u`);
    the placeholders are then replaced by zeros of the results' shapes (the rules may
    read a gradient's shape, never its values, in what remains)."""
    from arignote.compile.clone import rebuild
    from arignote.scan_module import _placeholder

    rule = RULES.get(type(op))
    if rule is None:
        raise NotImplementedError(f"Rop: {_op_name(op)} has neither an R rule nor a gradient rule")
    us = [_placeholder(o.value.type, "rop_u") if is_float(o) else None for o in outs]
    gz = [u if u is not None else _float_zeros_like(o) for u, o in zip(us, outs, strict=True)]
    terms = rule(op, ins, outs, gz)
    pairing = None
    for x, term, v in zip(ins, terms, vs, strict=True):
        if term is None or v is None or isinstance(term, NullType) or not is_float(x):
            continue
        part = T.sum(reduce_to(term, x) * T.cast(v, x.dtype))
        pairing = part if pairing is None else pairing + part
    live = [u for u in us if u is not None]
    if pairing is None or not live:
        return [None] * len(outs)
    jv = grad(pairing, live, disconnected_inputs="ignore", return_disconnected="None")
    replace = {u.value: T.zeros_like(o).value for u, o in zip(us, outs, strict=True) if u}
    found = [g.value for g in jv if g is not None]
    rebuilt = iter(rebuild(found, replace))
    by_u = {
        u.value: (variable_of(next(rebuilt)) if g is not None else None)
        for u, g in zip(live, jv, strict=True)
    }
    return [by_u[u.value] if u is not None else None for u in us]


def _cast_like(t: Variable, fi: Variable) -> Variable:
    return T.cast(t, fi.dtype) if is_float(fi) else t


def _rop_disconnected(fi: Variable, disconnected_outputs: str, return_disconnected: str) -> Any:
    message = (
        "Rop method was asked to compute the gradient with respect to a variable that is "
        "not part of the computational graph of variables in wrt, or is used only by a "
        f"non-differentiable operator: {fi}"
    )
    if disconnected_outputs == "raise":
        raise DisconnectedInputError(message)
    if disconnected_outputs == "warn":
        warnings.warn(message, stacklevel=3)
    kind = return_disconnected.lower()
    if kind == "zero":
        return T.zeros_like(fi)
    return None if kind == "none" else DisconnectedType(fi)


# --- Jacobian and Hessian ----------------------------------------------------------------


def jacobian(
    expression: Variable,
    wrt: Any,
    consider_constant: Sequence[Variable] | None = None,
    disconnected_inputs: str = "raise",
) -> Any:
    """The Jacobian of the vector `expression` with respect to `wrt`: for each `wrt[j]`,
    a tensor of shape `(len(expression),) + wrt[j].shape`. A scalar expression gives
    `grad(expression, wrt)`. The result has the form of `wrt`.

    As Theano, row `i` is computed at run time by a `scan` over `arange(len(expression))`:
    its step is `Lop(expression, wrt, onehot_i)` (Theano's `grad(expression[i], wrt)`;
    the one-hot vector keeps the step's shapes independent of `i`, so the loop compiles
    natively). What does not depend on `i` (the forward values, most of the backward
    graph) is computed once, before the loop.
    """
    if not isinstance(expression, Variable):
        raise TypeError("jacobian expects a Variable as `expression`")
    if expression.ndim > 1:
        raise ValueError(
            "jacobian expects a 1 dimensional variable as `expression`. If not use "
            "flatten to make it a vector"
        )
    using_list = isinstance(wrt, list)
    using_tuple = isinstance(wrt, tuple)
    ws = list(wrt) if using_list or using_tuple else [wrt]
    if expression.ndim == 0:
        return _format_as(
            using_list,
            using_tuple,
            grad(expression, ws, consider_constant, disconnected_inputs),
        )
    rows = _rows_by_scan(expression, ws, consider_constant, disconnected_inputs)
    return _format_as(using_list, using_tuple, rows)


def _rows_by_scan(
    expression: Variable,
    ws: list[Variable],
    consider_constant: Sequence[Variable] | None,
    disconnected_inputs: str,
) -> list[Variable]:
    from arignote.scan_module import scan
    from arignote.tensor.subtensor import arange

    n = T.shape_i(expression, 0)
    dtype = expression.dtype if is_float(expression) else config.floatX

    def row(i: Variable, *_: Variable) -> list[Variable]:
        onehot = T.cast(T.eq(arange(n, dtype="int64"), i), dtype)
        result = Lop(
            expression,
            ws,
            onehot,
            consider_constant=consider_constant,
            disconnected_inputs=disconnected_inputs,
        )
        return list(result)

    jacobs, updates = scan(
        row,
        sequences=arange(n, dtype="int64"),
        non_sequences=[expression, *ws],
        return_list=True,
    )
    assert not updates
    return jacobs


def hessian(
    cost: Variable,
    wrt: Any,
    consider_constant: Sequence[Variable] | None = None,
    disconnected_inputs: str = "raise",
) -> Any:
    """The Hessian of the scalar `cost` with respect to each vector in `wrt`:
    `jacobian(grad(cost, w), w)`, by a `scan` over `w`'s elements as in Theano (a `w`
    connected to the cost but not to its gradient, as in a linear cost, gets zeros)."""
    if not isinstance(cost, Variable):
        raise TypeError("hessian expects a Variable as `cost`")
    if cost.ndim != 0:
        raise TypeError("hessian: cost must be a scalar.")
    using_list = isinstance(wrt, list)
    using_tuple = isinstance(wrt, tuple)
    ws = list(wrt) if using_list or using_tuple else [wrt]
    results = []
    for w in ws:
        if not isinstance(w, Variable) or w.ndim != 1:
            raise ValueError("hessian expects a (list of) 1 dimensional variable as `wrt`")
        g = grad(
            cost, w, consider_constant=consider_constant, disconnected_inputs=disconnected_inputs
        )
        (h,) = _rows_by_scan(g, [w], consider_constant, "ignore")
        results.append(h)
    return _format_as(using_list, using_tuple, results)


# --- numeric verification ---------------------------------------------------------------


class GradientError(AssertionError):
    """The symbolic and numeric gradients differ beyond both tolerances
    (`verify_grad.E_grad`)."""

    def __init__(
        self,
        arg: int,
        err_pos: int,
        shape: tuple[int, ...],
        val1: float,
        val2: float,
        abs_err: float,
        rel_err: float,
        abs_tol: float,
        rel_tol: float,
    ):
        super().__init__()
        self.arg = arg
        self.err_pos = err_pos
        self.shape = shape
        self.val1 = val1
        self.val2 = val2
        self.abs_err = abs_err
        self.rel_err = rel_err
        self.abs_tol = abs_tol
        self.rel_tol = rel_tol

    def __str__(self) -> str:
        return (
            "GradientError: numeric gradient and analytic gradient exceed tolerance:\n"
            f"        At position {self.err_pos} of argument {self.arg} with shape "
            f"{self.shape},\n"
            f"            val1 = {self.val1:f}      ,  val2 = {self.val2:f}\n"
            f"            abs. error = {self.abs_err:f},  abs. tolerance = {self.abs_tol:f}\n"
            f"            rel. error = {self.rel_err:f},  rel. tolerance = {self.rel_tol:f}"
        )


class numeric_grad:  # noqa: N801 - Theano's name
    """Central finite differences of a scalar function of several arrays."""

    type_eps = {"float64": 1e-7, "float32": 3e-4}
    """Theano's default step per dtype."""

    def __init__(
        self,
        f: Callable[..., float],
        pt: Sequence[np.ndarray],
        eps: float | None = None,
        out_type: str | None = None,
    ):
        if out_type is not None and str(out_type).startswith("complex"):
            raise TypeError(f"numeric_grad: complex outputs ({out_type}) are not supported")
        if eps is None:
            eps = builtins.max(self.type_eps[str(p.dtype)] for p in pt)
        self.gf = []
        point = [p.copy() for p in pt]
        for p in point:
            g = np.zeros(p.shape, dtype=np.float64)
            flat = p.reshape(-1)
            gflat = g.reshape(-1)
            for i in range(flat.size):
                orig = flat[i]
                flat[i] = orig + eps
                plus = float(f(*point))
                flat[i] = orig - eps
                minus = float(f(*point))
                flat[i] = orig
                gflat[i] = (plus - minus) / (2 * eps)
            self.gf.append(g)

    @staticmethod
    def abs_rel_err(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Elementwise `|a - b|` and `|a - b| / (|a| + |b|)` (the denominator at least
        1e-8)."""
        abs_err = np.abs(a - b)
        return abs_err, abs_err / np.maximum(np.abs(a) + np.abs(b), 1e-8)

    def max_err(
        self, g_pt: Sequence[np.ndarray], abs_tol: float, rel_tol: float
    ) -> tuple[int, int, float, float]:
        """The argument and flat position where `min(abs_err / abs_tol, rel_err /
        rel_tol)` is largest, with the absolute and relative errors there."""
        best = (-1.0, 0, 0, 0.0, 0.0)
        for i, (a, b) in enumerate(zip(g_pt, self.gf, strict=True)):
            if a.shape != b.shape:
                raise ValueError(
                    f"argument element {i} has wrong shape {a.shape} (expected {b.shape})"
                )
            abs_err, rel_err = self.abs_rel_err(np.asarray(a, np.float64), b)
            if abs_err.size == 0:
                continue
            scaled = np.minimum(abs_err / abs_tol, rel_err / rel_tol).reshape(-1)
            # NaN anywhere is the worst error.
            scaled = np.where(np.isnan(scaled), np.inf, scaled)
            pos = int(np.argmax(scaled))
            if scaled[pos] > best[0]:
                best = (
                    float(scaled[pos]),
                    i,
                    pos,
                    float(abs_err.reshape(-1)[pos]),
                    float(rel_err.reshape(-1)[pos]),
                )
        return best[1], best[2], best[3], best[4]


_TYPE_TOL = {"float32": 1e-2, "float64": 1e-4}


def _single_output(o: Any) -> Variable:
    """`verify_grad`'s `fun(*inputs)`, checked to be one float tensor (Theano's errors)."""
    if isinstance(o, list):
        raise NotImplementedError("cant (yet) autotest gradient of fun with multiple outputs")
    if isinstance(o, tuple):
        raise TypeError(
            "It seems like you are trying to use verify_grad on an op or a function "
            "which outputs a list: there should be a single (array-like) output instead"
        )
    o = T.as_tensor_variable(o)
    if not is_float(o):
        raise TypeError(f"verify_grad: the output of `fun` must be a float tensor, got {o.type}")
    return o


def _uniform(rng: Any, shape: tuple[int, ...]) -> np.ndarray:
    if isinstance(rng, np.random.Generator):
        return rng.random(shape)
    return np.asarray(rng.rand(*shape))


def verify_grad(
    fun: Callable[..., Variable],
    pt: Sequence[Any],
    n_tests: int = 2,
    rng: Any = None,
    eps: float | None = None,
    out_type: Any = None,
    abs_tol: float | None = None,
    rel_tol: float | None = None,
    mode: Any = None,
    cast_to_output_type: bool = False,
    no_debug_ref: bool = True,
) -> None:
    """Check `grad` of `fun` at the point `pt` against finite differences (Theano's
    `theano.gradient.verify_grad`).

    `fun` takes one symbolic variable per array of `pt` (of the array's dtype, broadcastable
    where its length is 1) and returns one tensor `o`. The checked cost is
    `sum(o * r)` for a random projection `r` (uniform in [0.5, 1.5), drawn from `rng`'s
    `rand` — a `RandomState`, `numpy.random` or a `Generator`; float64, or float32 for a
    float32 output with `cast_to_output_type`); the symbolic gradient, compiled with
    `arignote.function(mode=mode)`, is compared with central finite differences of step
    `eps` (`numeric_grad`; `out_type` is its output dtype, complex refused), `n_tests`
    times with new projections. Unlike Theano, `rng=None` is allowed (a
    `RandomState(42)`: Theano's `unittest_tools.verify_grad` default). Raises
    `verify_grad.E_grad` (`GradientError`) when some element exceeds both `abs_tol` and
    `rel_tol` (defaults 1e-4 for float64, 1e-2 for float32).
    """
    from arignote.compile import Mode, function

    pt = [np.array(p) for p in pt]
    for i, p in enumerate(pt):
        if p.dtype.name not in ("float32", "float64"):
            raise TypeError(
                f"verify_grad can work only with floating point inputs, but input {i} "
                f"has dtype {p.dtype}."
            )
    if rng is None:
        rng = np.random.RandomState(42)
    if abs_tol is None:
        abs_tol = builtins.max(_TYPE_TOL[p.dtype.name] for p in pt)
    if rel_tol is None:
        rel_tol = builtins.max(_TYPE_TOL[p.dtype.name] for p in pt)

    inputs = [
        TensorType(p.dtype, tuple(s == 1 for s in p.shape))(f"input_{i}") for i, p in enumerate(pt)
    ]
    o = _single_output(fun(*inputs))
    # The projection is an input, so that one compiled function serves every test; its
    # shape is the output's, found by running the interpreter once.
    shape_fn = function(inputs, o, mode=Mode(linker="py"), on_unused_input="ignore")
    o_shape = np.shape(shape_fn(*pt))
    # float64 as Theano's, unless cast_to_output_type and a float32 output
    r_dtype = o.dtype if cast_to_output_type and o.dtype == "float32" else "float64"
    projection = TensorType(r_dtype, o.broadcastable)("random_projection")
    cost = T.sum(o * projection)
    grads = grad(cost, inputs, disconnected_inputs="ignore")
    fn = function([*inputs, projection], [cost, *grads], mode=mode, on_unused_input="ignore")

    for test_num in range(n_tests):
        r = (_uniform(rng, o_shape) + 0.5).astype(r_dtype)
        analytic = [np.asarray(g) for g in fn(*[p.copy() for p in pt], r)[1:]]
        numeric = numeric_grad(lambda *xs, r=r: fn(*xs, r)[0], pt, eps, out_type)
        arg, pos, abs_err, rel_err = numeric.max_err(analytic, abs_tol, rel_tol)
        if not (abs_err <= abs_tol or rel_err <= rel_tol):  # NaN fails too
            raise verify_grad.E_grad(
                arg,
                pos,
                analytic[arg].shape,
                float(analytic[arg].reshape(-1)[pos]),  # val1, as Theano's
                float(numeric.gf[arg].reshape(-1)[pos]),
                abs_err,
                rel_err,
                abs_tol,
                rel_tol,
            )
        del test_num


verify_grad.E_grad = GradientError  # type: ignore[attr-defined]
