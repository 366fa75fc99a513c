"""`arignote.compile.ops` (Theano's `theano.compile.ops`): custom ops written in Python
(`as_op`, `FromFunctionOp`, and the machinery behind `arignote.Op` subclasses), the
utility ops `ViewOp` and `DeepCopyOp`, and the shape ops (`shape`, `shape_i`, `Shape_i`).

A custom op's node is an `ag.python_op` (`arignote.dialects.ag.python`) whose callback id
names the Python code computing its outputs: `perform(node, inputs, output_storage)`
called with fresh copies of the input arrays, each output checked to be an array of its
variable's dtype (a value of the same kind is converted, as `numpy.asarray(v, dtype)`)
and number of dimensions. The reference interpreter calls it as it runs the node;
natively compiled code calls back into Python for this node alone (taking the GIL only
there, the rest of the function stays native): the code runs when the function
computes the shapes of its results (see `arignote.lowering.loops.ag_python`), before any
other node runs. An exception raised by `perform` propagates out of the call of the
compiled function as is, and the call stores no update. The gradient of a custom op is
its `grad(inputs, output_grads)`; `R_op` is not needed (`arignote.gradient.Rop` derives
the R operator from `grad`); `infer_shape` is accepted and not needed either (the shapes
come from the outputs `perform` computed). A function holding a custom op is not put in
the compile cache (its code refers to this process's callbacks).

```python
import numpy
import arignote
import arignote.tensor as T
from arignote.compile.ops import as_op

@as_op(itypes=[T.dvector], otypes=[T.dvector])
def twice(a):
    return a * 2

x = T.dvector("x")
f = arignote.function([x], twice(x) + 1)
assert numpy.allclose(f(numpy.arange(3.0)), [1.0, 3.0, 5.0])
```
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import BlockArgument

from arignote.compile.sharedvalue import shared_of
from arignote.dialects import ag
from arignote.graph import (
    CUSTOM_OPS,
    NODE_ATTRIBUTE,
    Apply,
    Op,
    Shape_i,
    Variable,
    _user_location,
    node_label,
    remember,
    variable_of,
)
from arignote.tensor.basic import as_tensor_variable, shape, shape_i
from arignote.tensor.type import TensorType

__all__ = [
    "DeepCopyOp",
    "FromFunctionOp",
    "Shape_i",
    "ViewOp",
    "as_op",
    "deep_copy_op",
    "register_deep_copy_op_c_code",
    "register_shape_c_code",
    "register_shape_i_c_code",
    "register_view_op_c_code",
    "shape",
    "shape_i",
    "view_op",
]


# --- applying a custom op ---------------------------------------------------------------


def as_type(t: Any, what: str) -> TensorType:
    """`t` as a `TensorType`: a type, or a variable constructor such as `T.dmatrix`."""
    if isinstance(t, TensorType):
        return t
    if callable(t):
        made = t()
        if isinstance(made, Variable):
            return made.type
    raise TypeError(f"{what} has to be a list of arignote types (e.g. T.dmatrix), got {t!r}")


def itypes_make_node(op: Op, inputs: Sequence[Any]) -> Apply:
    """The default `make_node` (Theano's): the inputs must have the types `op.itypes`;
    the outputs are new variables of the types `op.otypes`."""
    itypes = getattr(op, "itypes", None)
    otypes = getattr(op, "otypes", None)
    if itypes is None or otypes is None:
        raise NotImplementedError(
            f"{type(op).__name__}: define make_node, or the class attributes itypes and otypes"
        )
    in_types = [as_type(t, "itypes") for t in itypes]
    if len(inputs) != len(in_types):
        raise ValueError(f"We expected {len(in_types)} inputs but got {len(inputs)}.")
    variables = [as_tensor_variable(x) for x in inputs]
    if any(v.type != t for v, t in zip(variables, in_types, strict=True)):
        raise TypeError(
            f"We expected inputs of types '{in_types}' but got types "
            f"'{[v.type for v in variables]}'"
        )
    return Apply(op, variables, [as_type(t, "otypes")() for t in otypes])


def _check_variables(values: Any, what: str, op: Op) -> list[Variable]:
    if not isinstance(values, list | tuple) or not all(isinstance(v, Variable) for v in values):
        raise TypeError(f"Apply({op}, ...): {what} must be a list of variables, got {values!r}")
    return list(values)


def apply_custom_op(node: Apply, op: Any, inputs: Any, outputs: Any) -> ag.PythonOp:
    """The `ag.python_op` applying the custom `op` to `inputs`; the variables `outputs`
    become its results (see `Apply`)."""
    if not isinstance(op, Op):
        raise TypeError(f"Apply: op must be an arignote.Op, got {type(op).__name__}")
    ins = _check_variables(inputs, "inputs", op)
    outs = _check_variables(outputs, "outputs", op)
    for out in outs:
        fresh = isinstance(out.value, BlockArgument) and shared_of(out.value) is None
        if not fresh or any(out is v for v in ins):
            raise ValueError(
                f"Apply({op}, ...): output {out} must be a new variable (e.g. x.type()), "
                "not an input, a constant or the result of another node"
            )
    in_types = [(v.type.numpy_dtype, v.ndim) for v in ins]
    out_types = [(v.type.numpy_dtype, v.ndim) for v in outs]
    from arignote.runtime.pyops import register

    ident = register(_performer(op, node), str(op), in_types, out_types)
    CUSTOM_OPS[ident] = op
    ir_op = ag.PythonOp([v.value for v in ins], [v.type.to_ir() for v in outs], ident, str(op))
    where = _user_location()
    ir_op.attributes[NODE_ATTRIBUTE] = StringAttr(node_label(str(op), where))
    for out, result in zip(outs, ir_op.results, strict=True):
        out.value = result
        remember(out)
    return ir_op


def _performer(op: Op, node: Apply) -> Callable[[list[np.ndarray]], list[np.ndarray]]:
    """The code of a node: `op.perform` with fresh output storage, each output converted
    to its variable's dtype."""

    def perform(arrays: list[np.ndarray]) -> list[np.ndarray]:
        storage: list[list[Any]] = [[None] for _ in node.ir_op.results]
        op.perform(node, arrays, storage)
        results = []
        for k, (cell, result) in enumerate(zip(storage, node.ir_op.results, strict=True)):
            results.append(_output(op, k, cell[0], variable_of(result).type))
        return results

    return perform


def _output(op: Op, k: int, value: Any, t: TensorType) -> np.ndarray:
    if value is None:
        raise ValueError(f"{op}: perform stored no value in output_storage[{k}][0]")
    array = np.asarray(value)
    dtype = t.numpy_dtype
    if array.dtype != dtype:
        if not np.can_cast(array.dtype, dtype, "same_kind"):
            raise TypeError(
                f"{op}: output {k} has dtype {array.dtype}, expected {dtype} (the type of "
                f"the output variable, {t})"
            )
        array = array.astype(dtype)
    return array


def custom_op_of(ir_op: ag.PythonOp) -> Op:
    """The custom op an `ag.python_op` applies."""
    op = CUSTOM_OPS.get(ir_op.callback_id)
    if op is None:
        raise RuntimeError(
            f"{ir_op.label.data}: this custom op was not applied in this process (a graph "
            "holding a custom op was unpickled?)"
        )
    return op


def _python_ops(values: Sequence[Any]) -> list[ag.PythonOp]:
    from arignote.compile.clone import needed_ops

    return [op for op in needed_ops(values) if isinstance(op, ag.PythonOp)]


def custom_ops_of(values: Sequence[Any]) -> dict[int, Op]:
    """The custom op of each `ag.python_op` computing `values` (SSA values), by callback
    id: what a pickled function carries to register them again (`register_custom_ops`)."""
    return {op.callback_id: custom_op_of(op) for op in _python_ops(values)}


def register_custom_ops(values: Sequence[Any], ops: dict[int, Op]) -> None:
    """Gives each `ag.python_op` computing `values` (an unpickled graph, whose callback
    ids are another process's) a new callback id running its custom op `ops[old id]`."""
    from xdsl.dialects.builtin import IntegerAttr, i64

    from arignote.runtime.pyops import register

    renamed: dict[int, int] = {}
    for ir_op in _python_ops(values):
        old = ir_op.callback_id
        if old not in renamed:
            op, node = ops[old], Apply(ir_op)
            in_types = [
                (variable_of(v).type.numpy_dtype, variable_of(v).ndim) for v in ir_op.operands
            ]
            out_types = [
                (variable_of(v).type.numpy_dtype, variable_of(v).ndim) for v in ir_op.results
            ]
            renamed[old] = register(_performer(op, node), str(op), in_types, out_types)
            CUSTOM_OPS[renamed[old]] = op
        ir_op.callback = IntegerAttr(renamed[old], i64)


def _grad_rule(
    ir_op: Any, inputs: list[Variable], outputs: list[Variable], output_grads: list[Variable]
) -> list[Any]:
    """The gradient of a custom op: its `grad(inputs, output_grads)`."""
    op = custom_op_of(ir_op)
    grad = getattr(op, "grad", None)
    if grad is None:
        raise NotImplementedError(f"grad: the custom op {op} defines no grad method")
    terms = grad(inputs, output_grads)
    from arignote.gradient import NullType

    # an undefined gradient (`grad_undefined`) stays one: `grad` raises if it is needed
    return [t if isinstance(t, Variable | NullType) else None for t in terms]


def _register_grad() -> None:
    from arignote.tensor.grad_rules import RULES

    RULES[ag.PythonOp] = _grad_rule


_register_grad()


# --- as_op --------------------------------------------------------------------------------


def _load_back(module: str, name: str) -> Any:
    import importlib

    return getattr(importlib.import_module(module), name)


class FromFunctionOp(Op):
    """An op computing its outputs with a Python function (what `as_op` makes). It has no
    gradient; two are equal when they wrap the same function."""

    def __init__(
        self,
        fn: Callable[..., Any],
        itypes: Sequence[Any],
        otypes: Sequence[Any],
        infer_shape: Callable[..., Any] | None,
    ):
        self._fn = fn
        self.itypes = list(itypes)
        self.otypes = list(otypes)
        self._infer_shape = infer_shape
        if infer_shape is not None:
            self.infer_shape = infer_shape

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._fn == other._fn  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(type(self)) ^ hash(self._fn)

    def __str__(self) -> str:
        return f"FromFunctionOp{{{getattr(self._fn, '__name__', self._fn)}}}"

    def perform(self, node: Apply, inputs: Sequence[Any], outputs: list[list[Any]]) -> None:
        outs = self._fn(*inputs)
        if not isinstance(outs, list | tuple):
            outs = (outs,)
        if len(outs) != len(outputs):
            raise ValueError(
                f"{self}: the function returned {len(outs)} values, expected {len(outputs)}"
            )
        for cell, value in zip(outputs, outs, strict=True):
            cell[0] = value

    def __reduce__(self) -> Any:
        # As Theano: pickled by reference to the decorated function's module attribute.
        module, name = self._fn.__module__, self._fn.__name__
        try:
            obj = _load_back(module, name)
        except (ImportError, KeyError, AttributeError):
            raise pickle.PicklingError(
                f"Can't pickle as_op(), not found as {module}.{name}"
            ) from None
        if obj is not self:
            raise pickle.PicklingError(f"Can't pickle as_op(), not the object at {module}.{name}")
        return _load_back, (module, name)


def as_op(
    itypes: Any, otypes: Any, infer_shape: Callable[..., Any] | None = None
) -> Callable[[Callable[..., Any]], FromFunctionOp]:
    """Decorator turning a function of NumPy arrays into an op (Theano's `as_op`):
    `itypes` and `otypes` are the types (or lists of types) of its inputs and outputs,
    `infer_shape(node, input_shapes)` optionally gives the output shapes. The function
    must return new arrays (no views of or changes to its inputs). The op has no
    gradient."""
    itypes = list(itypes) if isinstance(itypes, list | tuple) else [itypes]
    otypes = list(otypes) if isinstance(otypes, list | tuple) else [otypes]
    for t in itypes:
        as_type(t, "itypes")
    for t in otypes:
        as_type(t, "otypes")
    if infer_shape is not None and not callable(infer_shape):
        raise TypeError("infer_shape needs to be a callable")

    def make_op(fn: Callable[..., Any]) -> FromFunctionOp:
        return FromFunctionOp(fn, itypes, otypes, infer_shape)

    return make_op


# --- ViewOp, DeepCopyOp -----------------------------------------------------------------


class ViewOp(Op):
    """Returns its input (Theano's `ViewOp`, an identity used internally by Theano);
    the gradient passes through."""

    __props__ = ()
    view_map = {0: [0]}  # noqa: RUF012 - Theano's class attribute
    c_code_and_version: dict[Any, Any] = {}  # noqa: RUF012

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        output_storage[0][0] = inputs[0]

    def infer_shape(self, node: Apply, input_shapes: Sequence[Any]) -> Sequence[Any]:
        return input_shapes

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Variable]:
        return list(output_grads)


view_op = ViewOp()


class DeepCopyOp(Op):
    """Returns a copy of its input (Theano's `DeepCopyOp`); the gradient passes
    through."""

    __props__ = ()
    c_code_and_version: dict[Any, Any] = {}  # noqa: RUF012

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        output_storage[0][0] = np.array(inputs[0], copy=True)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Variable]:
        return list(output_grads)


deep_copy_op = DeepCopyOp()


# Theano's registries of C code per type: recorded as Theano does; arignote generates
# its code from the `ag` IR, so nothing reads them.


def register_view_op_c_code(type: Any, code: str, version: Any = ()) -> None:
    """Records C code for `ViewOp` on `type` (unused: arignote emits no C)."""
    ViewOp.c_code_and_version[type] = (code, version)


def register_deep_copy_op_c_code(typ: Any, code: str, version: Any = ()) -> None:
    """Records C code for `DeepCopyOp` on `typ` (unused: arignote emits no C)."""
    DeepCopyOp.c_code_and_version[typ] = (code, version)


_SHAPE_C_CODE: dict[Any, Any] = {}


def register_shape_c_code(type: Any, code: str, version: Any = ()) -> None:
    """Records C code for `Shape` on `type` (unused: arignote emits no C)."""
    _SHAPE_C_CODE[("shape", type)] = (code, version)


def register_shape_i_c_code(typ: Any, code: str, check_input: Any, version: Any = ()) -> None:
    """Records C code for `Shape_i` on `typ` (unused: arignote emits no C)."""
    _SHAPE_C_CODE[("shape_i", typ)] = (code, check_input, version)


_FROM_TENSOR = ("Shape", "SpecifyShape", "specify_shape", "Rebroadcast")
"""Names Theano defines in `theano.compile.ops` that arignote defines with the tensor
functions (where they exist)."""


def __getattr__(name: str) -> Any:
    if name in _FROM_TENSOR:
        import arignote.tensor

        if hasattr(arignote.tensor, name):
            return getattr(arignote.tensor, name)
    raise AttributeError(f"module 'arignote.compile.ops' has no attribute {name!r}")
