"""Theano's `theano.tensor.basic` helpers that read a graph rather than build one, and
small compositions: constant extraction, vector lengths, scalar/tensor conversions,
`tensor_copy`, `transfer` and `cov`.

They are re-exported by `arignote.tensor.basic` and `arignote.tensor`.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from arignote.graph import TensorConstant, Variable
from arignote.tensor import basic as _basic
from arignote.tensor.subtensor import concatenate


class NotScalarConstantError(TypeError):
    """`get_scalar_constant_value` of a variable whose value is not a known constant
    scalar (Theano's exception, a `TypeError` subclass there too)."""


def _constant_data(v: Any) -> np.ndarray | None:
    if isinstance(v, TensorConstant):
        return np.asarray(v.data)
    if isinstance(v, np.ndarray | np.generic | int | float | bool):
        return np.asarray(v)
    return None


def get_scalar_constant_value(
    orig_v: Any,
    elemwise: bool = True,
    only_process_constants: bool = False,
    max_recur: int = 10,
) -> np.ndarray:
    """The value of `orig_v` when it is a constant with a single element (a number, a
    NumPy scalar or array of one element, a `TensorConstant`), as a 0-d array;
    otherwise `NotScalarConstantError`. arignote folds constants while building the
    graph, so an expression of constants is itself a constant here."""
    data = _constant_data(orig_v)
    if data is None or data.size != 1:
        raise NotScalarConstantError(f"{orig_v!r} is not a constant scalar")
    return data.reshape(())


def extract_constant(x: Any, elemwise: bool = True, only_process_constants: bool = False) -> Any:
    """`get_scalar_constant_value(x)` when it has one, else `x` itself (as a tensor
    variable when it is a Python or NumPy value)."""
    try:
        return get_scalar_constant_value(x, elemwise, only_process_constants)
    except NotScalarConstantError:
        return x if isinstance(x, Variable) else _basic.as_tensor_variable(x)


def get_vector_length(v: Any) -> int:
    """The length of the 1-d variable `v` when the graph fixes it (a constant, a static
    dimension, a `shape` of a variable of known rank); `TypeError` for a variable that
    is not 1-d, `ValueError` when the length is only known at run time."""
    if isinstance(v, _basic.SymbolicShape):
        return len(v)
    v = _basic.as_tensor_variable(v)
    if v.ndim != 1:
        raise TypeError(f"get_vector_length: argument must be a vector, got {v.ndim}-d {v}")
    data = _constant_data(v)
    if data is not None:
        return int(data.shape[0])
    static = v.value.type.get_shape()[0]
    if static >= 0:
        return int(static)
    raise ValueError(f"length not known: {v}")


def tensor_from_scalar(s: Any) -> Variable:
    """A 0-d tensor of the scalar `s` (arignote's scalars are 0-d tensors already)."""
    return _require_0d(_basic.as_tensor_variable(s), "tensor_from_scalar")


def scalar_from_tensor(t: Any) -> Variable:
    """The scalar of the 0-d tensor `t` (the same variable in arignote)."""
    return _require_0d(_basic.as_tensor_variable(t), "scalar_from_tensor")


def _require_0d(v: Variable, where: str) -> Variable:
    if v.ndim != 0:
        raise TypeError(f"{where}: expected a 0-d variable, got {v.ndim}-d {v}")
    return v


def tensor_copy(x: Any) -> Variable:
    """A new variable with the value of `x` (Theano's `tensor_copy`, an identity op)."""
    x = _basic.as_tensor_variable(x)
    return _basic.second(x, x)


GPU_TARGETS = re.compile(r"gpu\d*|cuda\d*|dev\d+")


def transfer(var: Any, target: str | None) -> Variable:
    """`var` on `target` (Theano's `transfer`): as a function output, `'cpu'` makes the
    function return it as a NumPy array, a GPU target (`'gpu'`, `'cuda'`, `'cuda<N>'`,
    `'dev<N>'`, or None: the device of `config.device`) keeps it on the device, a
    `pycuda.gpuarray.GPUArray`, when the function runs on the GPU (on the CPU it is a
    NumPy array: there is no device). The value is the same variable's."""
    variable = _basic.as_tensor_variable(var)
    if target == "cpu":
        return variable
    if target is not None and not GPU_TARGETS.fullmatch(target):
        raise ValueError(
            f"transfer: can't transfer to target {target!r}; known targets: 'cpu', 'gpu', "
            "'cuda', 'cuda<N>', 'dev<N>', None"
        )
    on_device = object.__new__(type(variable))
    on_device.__dict__.update(variable.__dict__)  # the same SSA value, not re-registered
    on_device.transfer_target = "gpu"
    return on_device


def cov(
    m: Any,
    y: Any = None,
    rowvar: bool = True,
    bias: bool = False,
    ddof: int | None = None,
    fweights: Any = None,
    aweights: Any = None,
) -> Variable:
    """The covariance matrix of the variables in the rows (or columns, `rowvar=False`)
    of the 2-d `m` (and `y`), as `numpy.cov`: normalised by `N - 1` (`N` with
    `bias=True`, `N - ddof` when `ddof` is given), with optional integer frequency
    weights `fweights` and observation weights `aweights`."""
    T = _basic
    x = T.as_tensor_variable(m)
    if x.ndim != 2:
        raise ValueError(f"cov: m must be 2-d (variables x observations), got {x.ndim}-d")
    if not rowvar:
        x = x.T
    if y is not None:
        other = T.as_tensor_variable(y)
        x = concatenate([x, other if rowvar else other.T], axis=0)
    if x.dtype not in ("float32", "float64"):
        x = T.cast(x, "float64")
    ddof = (0 if bias else 1) if ddof is None else ddof
    weights = _cov_weights(fweights, aweights, x)
    if weights is None:
        n = T.cast(x.shape[1], x.dtype)
        centered = x - x.mean(axis=1, keepdims=True)
        return T.dot(centered, centered.T) / (n - ddof)
    total = weights.sum()
    mean = T.dot(x, weights) / total
    centered = x - mean.dimshuffle(0, "x")
    if aweights is None:
        norm = total - ddof
    else:
        a = T.cast(T.as_tensor_variable(aweights), x.dtype)
        norm = total - ddof * (weights * a).sum() / total
    return T.dot(centered * weights.dimshuffle("x", 0), centered.T) / norm


def _cov_weights(fweights: Any, aweights: Any, x: Variable) -> Variable | None:
    T = _basic
    weights = None
    for given in (fweights, aweights):
        if given is None:
            continue
        w = T.cast(T.as_tensor_variable(given), x.dtype)
        weights = w if weights is None else weights * w
    return weights
