"""Theano's `theano.tensor.signal.pool`: `pool_2d`, `pool_3d`, `max_pool_2d_same_size`
and the op classes `Pool`, `PoolGrad`, `MaxPoolGrad`, `AveragePoolGrad`,
`DownsampleFactorMaxGradGrad` and `MaxPoolRop`.

Each op class builds one `ag` pooling op (`ag.pool`, `ag.max_pool_grad`,
`ag.average_pool_grad`, `ag.max_pool_grad_grad`; see `dialects/ag/pool.py` for the
windows and modes), which the interpreter runs in NumPy and native code runs as loops
parallel over the leading (batch, channel) axes. Gradients and R-operators are Theano's:
a max pool's gradient is `MaxPoolGrad` (every position equal to a window's maximum gets
the window's gradient), its second derivative `DownsampleFactorMaxGradGrad`; the linear
modes' gradient is `AveragePoolGrad`, whose own gradient is the pool again.

`ws`, `stride` and `pad` must be known when the graph is built (Python or NumPy
integers, or constant tensors): they are the op's parameters, as the window of a
compiled loop. A symbolic window is a `NotImplementedError`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.dialects import ag
from arignote.graph import TensorConstant, Variable, apply_op
from arignote.tensor import basic as T

__all__ = [
    "AveragePoolGrad",
    "DownsampleFactorMaxGradGrad",
    "MaxPoolGrad",
    "MaxPoolRop",
    "Pool",
    "PoolGrad",
    "max_pool_2d_same_size",
    "pool_2d",
    "pool_3d",
]

_WHAT = {
    "ws": "Pool downsample parameters must be ints.",
    "stride": "Stride parameters must be ints.",
    "pad": "Padding parameters must be ints.",
}


def _parameter(value: Any, what: str, nd: int) -> tuple[int, ...]:
    """`ws`, `stride` or `pad` as `nd` Python ints (TypeError for non-integers, as
    Theano; NotImplementedError for a symbolic one)."""
    if isinstance(value, TensorConstant):
        value = value.data
    elif isinstance(value, Variable):
        raise NotImplementedError(
            f"pool: {what} must be known when the graph is built (ints or a constant), "
            f"got the symbolic {value}"
        )
    elif isinstance(value, list | tuple) and any(isinstance(v, Variable) for v in value):
        value = [_parameter(v, what, 1)[0] if isinstance(v, Variable) else v for v in value]
    array = np.asarray(value)
    if array.dtype.kind not in "iu":
        raise TypeError(_WHAT[what])
    if array.ndim == 0 and nd == 1:
        array = array.reshape(1)
    if array.shape != (nd,):
        raise ValueError(f"pool: {what} must have {nd} entries (one per pooled axis), got {value}")
    return tuple(int(v) for v in array)


def _deprecated(new: Any, old: Any, names: tuple[str, str], default: Any = None) -> Any:
    """Theano's handling of a deprecated parameter `old` of the parameter `new`."""
    new_name, old_name = names
    if old is None:
        return new
    if new is not None and new != default:
        quote = "'" if new_name != "pad" else ""
        raise ValueError(
            _BOTH.get(old_name)
            or f"You can't provide a tuple value to both '{old_name}' and {quote}{new_name}"
            f"{quote}.  Please provide a value only to {new_name}."
        )
    warnings.warn(
        f"DEPRECATION: the '{old_name}' parameter is not going to exist anymore as it is "
        f"going to be replaced by the parameter '{new_name}'.",
        stacklevel=4,
    )
    return old


_BOTH = {
    "ds": "You can't provide a tuple value to both 'ws' and 'ds'. Please provide a value "
    "only to 'ws'.",
    "st": "You can't provide a tuple value to both 'st and 'stride'. Please provide a value "
    "only to 'stride'.",
}


def _window_arguments(
    ws: Any, stride: Any, pad: Any, old: tuple[Any, Any, Any], nd: int
) -> tuple[Any, Any, Any]:
    ds, st, padding = old
    ws = _deprecated(ws, ds, ("ws", "ds"))
    if ws is None:
        raise ValueError("You must provide a tuple value for the window size.")
    stride = _deprecated(stride, st, ("stride", "st"))
    if padding is not None and pad not in (None, (0,) * nd):
        raise ValueError(
            "You can't provide a tuple value to both 'padding' and pad.  Please provide a "
            "value only to pad."
        )
    pad = _deprecated(None, padding, ("pad", "padding")) if padding is not None else pad
    return ws, stride, pad


def _ignore_border_default(ignore_border: Any, name: str, nd: int) -> bool:
    if ignore_border is not None:
        return bool(ignore_border)
    zeros = "(" + ", ".join(["0"] * nd) + ")"
    warnings.warn(
        f"{name}() will have the parameter ignore_border default value changed to True "
        "(currently False). To have consistent behavior with all Theano version, "
        "explicitly add the parameter ignore_border=True. On the GPU, using "
        "ignore_border=True is needed to use cuDNN. When using ignore_border=False and not "
        "using cuDNN, the only GPU combination supported is when `ws == stride and pad == "
        f"{zeros} and mode == 'max'`. Otherwise, the convolution will be executed on CPU.",
        stacklevel=3,
    )
    return False


def _pool_nd(
    nd: int, input: Any, args: tuple[Any, Any, Any, Any, str], old: tuple[Any, Any, Any]
) -> Variable:
    ws, ignore_border, stride, pad, mode = args
    ws, stride, pad = _window_arguments(ws, stride, pad, old, nd)
    x = T.as_tensor_variable(input)
    name = f"pool_{nd}d"
    if x.ndim < nd:
        raise NotImplementedError(f"{name} requires a dimension >= {nd}")
    border = _ignore_border_default(ignore_border, name, nd)
    return Pool(border, ndim=nd, mode=mode)(x, ws, stride, pad)


def pool_2d(
    input: Any,
    ws: Any = None,
    ignore_border: bool | None = None,
    stride: Any = None,
    pad: Any = (0, 0),
    mode: str = "max",
    ds: Any = None,
    st: Any = None,
    padding: Any = None,
) -> Variable:
    """Pools the last two axes of `input` (rank >= 2) over windows of `ws` (Theano's
    `pool_2d`): `mode` is `'max'`, `'sum'`, `'average_inc_pad'` or `'average_exc_pad'`;
    `stride` defaults to `ws`; `pad` adds zeros on both sides (needs `ignore_border`);
    `ignore_border=None` warns and means False (a partial window at the end is kept).
    `ds`, `st` and `padding` are the deprecated names of `ws`, `stride` and `pad`."""
    return _pool_nd(2, input, (ws, ignore_border, stride, pad, mode), (ds, st, padding))


def pool_3d(
    input: Any,
    ws: Any = None,
    ignore_border: bool | None = None,
    stride: Any = None,
    pad: Any = (0, 0, 0),
    mode: str = "max",
    ds: Any = None,
    st: Any = None,
    padding: Any = None,
) -> Variable:
    """`pool_2d` over the last three axes of `input` (rank >= 3)."""
    return _pool_nd(3, input, (ws, ignore_border, stride, pad, mode), (ds, st, padding))


def max_pool_2d_same_size(input: Any, patch_size: Any) -> Variable:
    """`input` with every element that is not the maximum of its non-overlapping
    `patch_size` window set to zero (ties all kept); the shape is unchanged. Theano's
    definition: `MaxPoolGrad(True)(input, out, out, patch_size)` with `out = Pool(True)(input,
    patch_size)`."""
    output = Pool(True)(input, patch_size)
    return MaxPoolGrad(True)(input, output, output, patch_size)


# --- out_shape -------------------------------------------------------------------------


def _out_length(v: Any, ws: int, stride: int, ignore_border: bool) -> Any:
    """The number of windows along an axis of padded length `v` (an int or variable)."""
    if not isinstance(v, Variable):
        return ag.pooled_length(int(v), ws, stride, 0, ignore_border)
    if ignore_border:
        return v // stride if ws == stride else T.maximum((v - ws) // stride + 1, 0)
    if stride >= ws:
        return (v - 1) // stride + 1
    return T.maximum(0, (v - 1 - ws + stride) // stride) + 1


def out_shape(
    imgshape: Sequence[Any],
    ws: Any = None,
    ignore_border: bool = False,
    stride: Any = None,
    pad: Any = None,
    ndim: int = 2,
    ds: Any = None,
    st: Any = None,
    padding: Any = None,
) -> list[Any]:
    """The shape of the pool of an input of shape `imgshape` (ints or scalar
    variables): the leading entries kept, the last `ndim` pooled (Theano's
    `Pool.out_shape`)."""
    ndim = 2 if ndim is None else ndim
    ws, stride, pad = _window_arguments(ws, stride, pad, (ds, st, padding), ndim)
    if len(imgshape) < ndim:
        raise TypeError(f"imgshape must have at least {ndim} dimensions")
    ws = _parameter(ws, "ws", ndim)
    stride = ws if stride is None else _parameter(stride, "stride", ndim)
    pad = (0,) * ndim if pad is None else _parameter(pad, "pad", ndim)
    lead = list(imgshape[: len(imgshape) - ndim])
    lengths = [
        _out_length(imgshape[len(lead) + i] + 2 * pad[i], ws[i], stride[i], ignore_border)
        for i in range(ndim)
    ]
    return lead + lengths


# --- the op classes --------------------------------------------------------------------


class _PoolOpBase:
    """What Theano's pooling ops share: `__props__` equality and the window checks."""

    __props__: tuple[str, ...] = ("ignore_border", "mode", "ndim")
    ignore_border: bool
    mode: str
    ndim: int

    out_shape = staticmethod(out_shape)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and all(
            getattr(self, k) == getattr(other, k) for k in self.__props__
        )

    def __hash__(self) -> int:
        return hash((type(self), *(getattr(self, k) for k in self.__props__)))

    def __str__(self) -> str:
        shown = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__props__)
        return f"{type(self).__name__}{{{shown}}}"

    __repr__ = __str__

    def _window(
        self, ws: Any, stride: Any, pad: Any, check_pad: bool = True
    ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        nd = self.ndim
        ws_ = _parameter(ws, "ws", nd)
        stride_ = ws_ if stride is None else _parameter(stride, "stride", nd)
        pad_ = (0,) * nd if pad is None else _parameter(pad, "pad", nd)
        for name, values in (("ws", ws_), ("stride", stride_)):
            if min(values) < 1:
                raise ValueError(f"{type(self).__name__}: {name} must be positive, got {values}")
        if check_pad and max(pad_) != 0 and not self.ignore_border:
            raise NotImplementedError("padding works only with ignore_border=True")
        if check_pad and any(p >= w for p, w in zip(pad_, ws_, strict=True)):
            raise NotImplementedError("padding must be smaller than strides")
        try:
            ag.check_pool_parameters(ws_, stride_, pad_, self.ignore_border)
        except ValueError as e:
            raise ValueError(f"{type(self).__name__}: {e}") from e
        return ws_, stride_, pad_

    def _input(self, x: Any, what: str = "x") -> Variable:
        v = T.as_tensor_variable(x)
        if v.ndim < self.ndim:
            raise TypeError(
                f"{type(self).__name__}: {what} must have at least {self.ndim} dimensions, "
                f"got {v.ndim}"
            )
        return v

    def make_node(self, *inputs: Any, **kwargs: Any) -> Any:
        return self(*inputs, **kwargs).owner

    def __call__(self, *inputs: Any, **kwargs: Any) -> Variable:
        raise NotImplementedError


def _check_mode(mode: str, allowed: Sequence[str], owner: str) -> str:
    if mode == "max_deterministic":  # Theano: max pooling is deterministic on the CPU
        mode = "max"
    if mode not in allowed:
        if owner == "Pool":
            raise ValueError(
                "Pool mode parameter only support 'max', 'sum', 'average_inc_pad' and "
                f"'average_exc_pad'. Got {mode}"
            )
        raise ValueError(
            f"{owner} mode parameter only support {', '.join(repr(m) for m in allowed)}. Got {mode}"
        )
    return mode


def _float_input(v: Variable, owner: str, what: str) -> Variable:
    if v.dtype not in ("float32", "float64"):
        raise TypeError(f"{owner}: {what} must be float32 or float64, got {v.dtype}")
    return v


class Pool(_PoolOpBase):
    """Theano's `Pool(ignore_border=False, mode='max', ndim=2)`: `Pool(...)(x, ws,
    stride=None, pad=None)` pools the last `ndim` axes of `x` (an `ag.pool`)."""

    def __init__(
        self, ignore_border: bool = False, mode: str = "max", ndim: int = 2, openmp: Any = None
    ):
        self.ignore_border = bool(ignore_border)
        self.mode = _check_mode(mode, ag.POOL_MODES, "Pool")
        self.ndim = ndim

    def __call__(self, x: Any, ws: Any, stride: Any = None, pad: Any = None) -> Variable:
        v = self._input(x)
        window = self._window(ws, stride, pad)
        if self.mode.startswith("average") and v.dtype not in ("float32", "float64"):
            # Theano averages integers in float and stores the mean in x's dtype
            mean = apply_op(
                ag.PoolOp(T.cast(v, "float64").value, *window, self.ignore_border, self.mode)
            )
            return T.cast(mean, v.dtype)
        return apply_op(ag.PoolOp(v.value, *window, self.ignore_border, self.mode))


class PoolGrad(_PoolOpBase):
    """Theano's base class of the pooling gradients (`MaxPoolGrad`, `AveragePoolGrad`)."""

    def __init__(self, ignore_border: bool, mode: str = "max", ndim: int = 2, openmp: Any = None):
        self.ignore_border = bool(ignore_border)
        self.mode = _check_mode(mode, ag.POOL_MODES, "Pool")
        self.ndim = ndim


class MaxPoolGrad(PoolGrad):
    """`MaxPoolGrad(ignore_border, ndim=2)(x, maxout, gz, ws, stride=None, pad=None)`:
    the gradient of a max pool (`ag.max_pool_grad`): `gz` goes to every position of a
    window equal to its maximum `maxout`."""

    def __init__(self, ignore_border: bool, ndim: int = 2, openmp: Any = None):
        super().__init__(ignore_border, "max", ndim)

    def __call__(
        self, x: Any, maxout: Any, gz: Any, ws: Any, stride: Any = None, pad: Any = None
    ) -> Variable:
        v = _float_input(self._input(x), "MaxPoolGrad", "x")
        out = T.cast(self._input(maxout, "maxout"), v.dtype)
        g = T.cast(self._input(gz, "gz"), v.dtype)
        window = self._window(ws, stride, pad, check_pad=False)
        return apply_op(ag.MaxPoolGradOp(v.value, out.value, g.value, *window, self.ignore_border))


class AveragePoolGrad(PoolGrad):
    """`AveragePoolGrad(ignore_border, mode='average_inc_pad', ndim=2)(x, gz, ws,
    stride=None, pad=None)`: the gradient of a `sum` or average pool
    (`ag.average_pool_grad`); `x` gives the shape."""

    def __init__(self, ignore_border: bool, mode: str = "average_inc_pad", ndim: int = 2):
        self.ignore_border = bool(ignore_border)
        self.mode = _check_mode(mode, ag.AVERAGE_MODES, "AveragePoolGrad")
        self.ndim = ndim

    def __call__(
        self, x: Any, gz: Any, ws: Any, stride: Any = None, pad: Any = None, dummy: Any = None
    ) -> Variable:
        v = _float_input(self._input(x), "AveragePoolGrad", "x")
        g = T.cast(self._input(gz, "gz"), v.dtype)
        window = self._window(ws, stride, pad, check_pad=False)
        return apply_op(
            ag.AveragePoolGradOp(v.value, g.value, *window, self.ignore_border, self.mode)
        )


class DownsampleFactorMaxGradGrad(_PoolOpBase):
    """`DownsampleFactorMaxGradGrad(ignore_border, mode='max', ndim=2)(x, maxout, gz,
    ws, stride=None, pad=None)`: per window, the sum of `gz` (shaped like `x`) over the
    positions equal to the maximum `maxout` (`ag.max_pool_grad_grad`, ties "all"): the
    gradient of `MaxPoolGrad` and the R-operator of a max pool."""

    def __init__(self, ignore_border: bool, mode: str = "max", ndim: int = 2, openmp: Any = None):
        self.ignore_border = bool(ignore_border)
        self.mode = _check_mode(mode, ("max",), "DownsampleFactorMaxGradGrad")
        self.ndim = ndim

    def __call__(
        self, x: Any, maxout: Any, gz: Any, ws: Any, stride: Any = None, pad: Any = None
    ) -> Variable:
        v = _float_input(self._input(x), type(self).__name__, "x")
        out = T.cast(self._input(maxout, "maxout"), v.dtype)
        g = T.cast(self._input(gz, "gz"), v.dtype)
        window = self._window(ws, stride, pad)
        op = ag.MaxPoolGradGradOp(v.value, out.value, g.value, *window, self.ignore_border)
        return apply_op(op)


class MaxPoolRop(_PoolOpBase):
    """`MaxPoolRop(ignore_border=False, mode='max', ndim=2)(x, eval_point, ws,
    stride=None, pad=None)`: per window of `x`, `eval_point` at the window's first
    maximum (row-major), in `eval_point`'s dtype (`ag.max_pool_grad_grad`, ties
    "first")."""

    def __init__(
        self, ignore_border: bool = False, mode: str = "max", ndim: int = 2, openmp: Any = None
    ):
        self.ignore_border = bool(ignore_border)
        self.mode = _check_mode(mode, ("max",), "MaxPoolRop")
        self.ndim = ndim

    def __call__(self, x: Any, eval_point: Any, ws: Any, stride: Any = None, pad: Any = None):
        v = _float_input(self._input(x), "MaxPoolRop", "x")
        e = self._input(eval_point, "eval_point")
        window = self._window(ws, stride, pad)
        out = apply_op(ag.PoolOp(v.value, *window, self.ignore_border, "max"))
        ev = T.cast(e, v.dtype)
        op = ag.MaxPoolGradGradOp(
            v.value, out.value, ev.value, *window, self.ignore_border, ties="first"
        )
        return T.cast(apply_op(op), e.dtype)


# --- gradients and R-operators (registered with the other rules) -------------------------


def window_of(op: ag.PoolBase) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    return op.ws_list, op.stride_list, op.pad_list


def pool_grad(op: Any, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    """Theano's `Pool.L_op`: `MaxPoolGrad` for a max pool, else `AveragePoolGrad`."""
    assert isinstance(op, ag.PoolOp)
    x, window, border = inputs[0], window_of(op), op.ignore_border_value
    g = T.cast(gz[0], x.dtype)
    if op.mode_value == "max":
        grad = ag.MaxPoolGradOp(x.value, outputs[0].value, g.value, *window, border)
    else:
        grad = ag.AveragePoolGradOp(x.value, g.value, *window, border, op.mode_value)
    return [apply_op(grad)]


def max_pool_grad_grad(op: Any, inputs: list[Variable], outputs: list[Variable], gz: list[Any]):
    """Theano's `MaxPoolGrad.grad`: zeros for `x` and `maxout`, and
    `DownsampleFactorMaxGradGrad(x, maxout, ggx)` for `gz`."""
    assert isinstance(op, ag.MaxPoolGradOp)
    x, out, _ = inputs
    gg = T.cast(gz[0], x.dtype)
    rule = ag.MaxPoolGradGradOp(
        x.value, out.value, gg.value, *window_of(op), op.ignore_border_value
    )
    return [T.zeros_like(x), T.zeros_like(out), apply_op(rule)]


def average_pool_grad_grad(op: Any, inputs: list[Variable], outputs: list[Variable], gz: list[Any]):
    """Theano's `AveragePoolGrad.grad`: zeros for `x`, the pool of `ggx` for `gz`."""
    assert isinstance(op, ag.AveragePoolGradOp)
    x = inputs[0]
    gg = T.cast(gz[0], x.dtype)
    pooled = ag.PoolOp(gg.value, *window_of(op), op.ignore_border_value, op.mode_value)
    return [T.zeros_like(x), apply_op(pooled)]


def grad_grad_grad(op: Any, inputs: list[Variable], outputs: list[Variable], gz: list[Any]):
    """Theano's `DownsampleFactorMaxGradGrad.grad`: zeros for `x` and `maxout`,
    `MaxPoolGrad(x, maxout, gz)` for the evaluation point. (`MaxPoolRop` has none.)"""
    assert isinstance(op, ag.MaxPoolGradGradOp)
    if op.first_only:
        raise NotImplementedError("MaxPoolRop has no gradient (as in Theano)")
    x, out, _ = inputs
    g = T.cast(gz[0], x.dtype)
    rule = ag.MaxPoolGradOp(x.value, out.value, g.value, *window_of(op), op.ignore_border_value)
    return [T.zeros_like(x), T.zeros_like(out), apply_op(rule)]


def pool_r_op(op: Any, inputs: list[Variable], outputs: list[Variable], vs: list[Any]):
    """Theano's `Pool.R_op`: the pool of the tangent for the linear modes, else
    `DownsampleFactorMaxGradGrad(x, pool(x), tangent)`."""
    assert isinstance(op, ag.PoolOp)
    if vs[0] is None:
        return [None]
    x, window, border = inputs[0], window_of(op), op.ignore_border_value
    v = T.cast(vs[0], x.dtype)
    if op.mode_value != "max":
        return [apply_op(ag.PoolOp(v.value, *window, border, op.mode_value))]
    rule = ag.MaxPoolGradGradOp(x.value, outputs[0].value, v.value, *window, border)
    return [apply_op(rule)]


GRAD_RULES = {
    ag.PoolOp: pool_grad,
    ag.MaxPoolGradOp: max_pool_grad_grad,
    ag.AveragePoolGradOp: average_pool_grad_grad,
    ag.MaxPoolGradGradOp: grad_grad_grad,
}
"""The gradient rules of the pooling ops (merged into `grad_rules.RULES`)."""
