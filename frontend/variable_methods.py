"""The methods of Theano's tensor variables (`_tensor_py_operators` in
`theano/tensor/var.py`) that call a function of `arignote.tensor`: `x.norm(2)`,
`x.cumsum()`, `x.exp()`, ... `arignote.graph.Variable` inherits them; each looks its
function up when called (the tensor package imports the graph module, not the reverse).
The operators and the methods that build core ops are defined on `Variable` itself.
"""

from __future__ import annotations

import importlib
from typing import Any


def _tensor() -> Any:
    return importlib.import_module("arignote.tensor")


def _module(name: str) -> Any:
    return importlib.import_module(f"arignote.tensor.{name}")


def _elementwise(name: str) -> Any:
    def method(self: Any) -> Any:
        return getattr(_tensor(), name)(self)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"`arignote.tensor.{name}(self)`."
    return method


class TensorPyOperators:
    """Theano's `_tensor_py_operators` methods that delegate to `arignote.tensor`."""

    def transfer(self, target: str) -> Any:
        return _tensor().transfer(self, target)

    def copy(self, name: str | None = None) -> Any:
        """A new variable with this one's value (`tensor_copy`), named `name`."""
        copied = _tensor().tensor_copy(self)
        copied.name = name
        return copied

    def norm(self, L: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: N803
        """The `L`-norm over `axis` (all axes when None): `sum(|x| ** L) ** (1 / L)`;
        `L=inf` is the largest absolute value (Theano's `norm` method)."""
        T = _tensor()
        if L == 0:
            raise NotImplementedError("norm: L=0 is not a norm (Theano raises the same)")
        if L == float("inf"):
            return T.max(abs(self), axis=axis, keepdims=keepdims)
        return T.pow(T.sum(T.pow(abs(self), L), axis=axis, keepdims=keepdims), 1.0 / L)

    def get_scalar_constant_value(self) -> Any:
        return _tensor().get_scalar_constant_value(self)

    def zeros_like(self, dtype: str | None = None) -> Any:
        return _tensor().zeros_like(self, dtype=dtype)

    def ones_like(self, dtype: str | None = None) -> Any:
        return _tensor().ones_like(self, dtype=dtype)

    def cumsum(self, axis: Any = None) -> Any:
        return _module("extra_ops").cumsum(self, axis)

    def cumprod(self, axis: Any = None) -> Any:
        return _module("extra_ops").cumprod(self, axis)

    def searchsorted(self, v: Any, side: str = "left", sorter: Any = None) -> Any:
        return _module("extra_ops").searchsorted(self, v, side, sorter)

    def fill(self, value: Any) -> Any:
        return _tensor().fill(self, value)

    def compress(self, a: Any, axis: Any = None) -> Any:
        return _module("extra_ops").compress(self, a, axis=axis)

    def __divmod__(self, other: Any) -> Any:
        return _tensor().divmod(self, other)

    def __rdivmod__(self, other: Any) -> Any:
        return _tensor().divmod(other, self)

    def __ceil__(self) -> Any:
        return _tensor().ceil(self)

    def __floor__(self) -> Any:
        return _tensor().floor(self)

    def __trunc__(self) -> Any:
        return _tensor().trunc(self)

    arccos = _elementwise("arccos")
    arccosh = _elementwise("arccosh")
    arcsin = _elementwise("arcsin")
    arcsinh = _elementwise("arcsinh")
    arctan = _elementwise("arctan")
    arctanh = _elementwise("arctanh")
    ceil = _elementwise("ceil")
    cos = _elementwise("cos")
    cosh = _elementwise("cosh")
    exp = _elementwise("exp")
    floor = _elementwise("floor")
    log = _elementwise("log")
    sin = _elementwise("sin")
    sinh = _elementwise("sinh")
    sqrt = _elementwise("sqrt")
    tan = _elementwise("tan")
    tanh = _elementwise("tanh")
    trunc = _elementwise("trunc")
