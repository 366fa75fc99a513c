"""`OpFromGraph` (Theano's `theano.compile.builders`): a graph used as an op.

`OpFromGraph(inputs, outputs)` encapsulates the graph from `inputs` to `outputs`;
applying it to other variables gives that graph on them. Without gradient overrides the
graph is inlined into the caller (as Theano's `inline=True` does; arignote compiles the
whole function as one graph either way, so `inline=False` changes nothing there): the
caller's function optimizes and compiles it natively with the rest, and its gradient is
the gradient of the inlined graph. Shared variables of the inner graph are read (and
their default updates applied) like any other.

With `grad_overrides` or `lop_overrides` the op is one node of the caller's graph, a
custom op (see `arignote.compile.ops`) whose `perform` runs the inner graph compiled on
its own (natively: a call from the caller's native code back into Python, which calls
the inner function's native code), so that its gradient can be the override:

- `'default'`: the gradient of the inner graph;
- a callable `f(inputs, output_grads)` (grad) or `f(inputs, outputs, output_grads)`
  (lop) returning one gradient per input, or an `OpFromGraph` taking the same;
- a list with one entry per input: `'default'`, a callable or `OpFromGraph` returning
  that input's gradient, or `None` / a `DisconnectedType` (no gradient: zeros).

`rop_overrides` and `connection_pattern` are accepted; `arignote.gradient.Rop` derives
the R operator from the gradient. `**kwargs` (Theano passes them to the inner
`function`) are accepted for the compiled inner function (`mode`).

```python
import arignote
from arignote import OpFromGraph, function, tensor

x, y, z = tensor.scalars("xyz")
e = x + y * z
op = OpFromGraph([x, y, z], [e])
e2 = op(x, y, z) + op(z, y, x)
fn = function([x, y, z], [e2])
assert fn(1.0, 2.0, 3.0)[0] == 7.0 + 5.0
```
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph import Apply, Op, TensorConstant, Variable

__all__ = ["OpFromGraph"]


def _as_list(values: Any, what: str) -> list[Variable]:
    if not isinstance(values, list | tuple):
        raise TypeError(f"{what} must be list, got {type(values).__name__}")
    for v in values:
        if not isinstance(v, Variable):
            raise TypeError(f"{what}: inputs and outputs must be Variable instances, got {v!r}")
    return list(values)


class OpFromGraph(Op):
    """The graph from `inputs` to `outputs` as an op (see the module doc)."""

    def __init__(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        inline: bool = False,
        lop_overrides: Any = "default",
        grad_overrides: Any = "default",
        rop_overrides: Any = "default",
        connection_pattern: Any = None,
        name: str | None = None,
        **kwargs: Any,
    ):
        if not isinstance(outputs, list):
            raise TypeError(f"outputs must be list, got {type(outputs)}")
        self.inputs = _as_list(inputs, "inputs")
        self.outputs = _as_list(outputs, "outputs")
        for v in self.inputs:
            if isinstance(v, TensorConstant) or v.owner is not None:
                raise TypeError(f"OpFromGraph: the input {v} must be a free variable")
        if not isinstance(grad_overrides, str) and not isinstance(lop_overrides, str):
            raise ValueError("lop_overrides and grad_overrides are mutually exclusive")
        self.inline = inline
        self.name = name
        self.kwargs = kwargs
        self.rop_overrides = rop_overrides
        self.connection_pattern = connection_pattern
        self._lop_type = "grad" if isinstance(lop_overrides, str) else "lop"
        self._overrides = grad_overrides if self._lop_type == "grad" else lop_overrides
        _check_overrides(self._overrides, len(self.inputs))
        self._fn: Any = None

    def __str__(self) -> str:
        return self.name or f"OpFromGraph{{inline={self.inline}}}"

    @property
    def _as_node(self) -> bool:
        return not (isinstance(self._overrides, str) and self._overrides == "default")

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        args = self._arguments(inputs)
        if self._as_node:
            return super().__call__(*args)
        from arignote.compile.clone import clone

        results = clone(self.outputs, replace=list(zip(self.inputs, args, strict=True)))
        return results[0] if len(results) == 1 else results

    def _arguments(self, inputs: Sequence[Any]) -> list[Variable]:
        from arignote.compile.function import filter_variable

        if len(inputs) != len(self.inputs):
            raise TypeError(f"{self}: expected {len(self.inputs)} inputs, got {len(inputs)}")
        return [
            arg if isinstance(arg, Variable) else filter_variable(inner, arg, f"{self}")
            for inner, arg in zip(self.inputs, inputs, strict=True)
        ]

    # --- as a node (gradient overrides) --------------------------------------------------

    def make_node(self, *inputs: Any) -> Apply:
        args = self._arguments(inputs)
        for inner, arg in zip(self.inputs, args, strict=True):
            if arg.type != inner.type:
                raise TypeError(
                    f"{self}: an input of type {inner.type} got {arg} of type {arg.type}"
                )
        return Apply(self, args, [o.type() for o in self.outputs])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        if self._fn is None:
            from arignote.compile.function import function

            mode = self.kwargs.get("mode")
            outputs = list(self.outputs)
            self._fn = function(self.inputs, outputs, mode=mode, on_unused_input="ignore")
        for cell, value in zip(output_storage, self._fn(*inputs), strict=True):
            cell[0] = np.asarray(value)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        overrides = self._overrides
        if isinstance(overrides, list):
            return [
                self._one_grad(k, entry, inputs, output_grads) for k, entry in enumerate(overrides)
            ]
        if isinstance(overrides, str):
            return self._default_grads(inputs, output_grads)
        return list(self._call_override(overrides, inputs, output_grads))

    def _call_override(
        self, fn: Any, inputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> Any:
        if self._lop_type == "lop":
            outputs = self(*inputs)
            outputs = outputs if isinstance(outputs, list) else [outputs]
            if isinstance(fn, OpFromGraph):
                return _listed(fn(*inputs, *outputs, *output_grads))
            return fn(list(inputs), outputs, list(output_grads))
        if isinstance(fn, OpFromGraph):
            return _listed(fn(*inputs, *output_grads))
        return fn(list(inputs), list(output_grads))

    def _one_grad(
        self, k: int, entry: Any, inputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> Any:
        if isinstance(entry, str):
            return self._default_grads(inputs, output_grads)[k]
        if entry is None or not callable(entry):
            return None  # DisconnectedType / NullType: no gradient
        result = self._call_override(entry, inputs, output_grads)
        return result[0] if isinstance(result, list | tuple) else result

    def _default_grads(
        self, inputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list[Variable]:
        """The gradient of the inner graph, on the node's inputs."""
        from arignote.compile.clone import clone
        from arignote.gradient import grad

        known = {
            o: g for o, g in zip(self.outputs, output_grads, strict=True) if o.dtype in _FLOATS
        }
        grads = grad(None, self.inputs, known_grads=known, disconnected_inputs="ignore")
        return clone(grads, replace=list(zip(self.inputs, inputs, strict=True)))


_FLOATS = ("float16", "float32", "float64", "complex64", "complex128")


def _listed(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def _check_overrides(overrides: Any, n_inputs: int) -> None:
    if isinstance(overrides, str):
        if overrides != "default":
            raise ValueError(f"gradient override should be 'default', got {overrides!r}")
        return
    if isinstance(overrides, list):
        if len(overrides) != n_inputs:
            raise ValueError(f"expect overrider with {n_inputs} inputs, got {len(overrides)}")
        return
    if not callable(overrides):
        raise TypeError(
            "L_op/gradient override should be (single or list of) 'default' | "
            f"OpFromGraph | callable | DisconnectedType, got {overrides!r}"
        )
