"""The reference interpreter's pooling ops (`ag.pool`, `ag.max_pool_grad`,
`ag.average_pool_grad`, `ag.max_pool_grad_grad`; `dialects/ag/pool.py`) in NumPy.

The input is copied into a padded array large enough for every window (the padding
holds the reduction's identity, so it never wins a maximum nor adds to a sum), and a
window reduction is one strided slice per position inside the window: `prod(ws)`
whole-array NumPy operations, no Python loop over windows. A mask of the image's
positions (and, for `average_inc_pad`, of the padded image's) counts what each window
divides by and keeps the padding out of the maximum's ties.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls

from arignote.dialects import ag
from arignote.runtime.interpreter import Array, _label, _operands, _result


@dataclass(frozen=True)
class Geometry:
    """The windows of one op on an input of a given shape."""

    ws: tuple[int, ...]
    stride: tuple[int, ...]
    pad: tuple[int, ...]
    image: tuple[int, ...]
    """The lengths of the input's pooled axes."""
    pooled: tuple[int, ...]
    """The number of windows along each pooled axis."""

    @property
    def nd(self) -> int:
        return len(self.ws)

    @property
    def padded(self) -> tuple[int, ...]:
        """The extent of the padded array: the padded image, or more when a partial
        window passes its end (`ignore_border` false)."""
        return tuple(
            max(h + 2 * p, (o - 1) * s + w)
            for h, p, o, s, w in zip(
                self.image, self.pad, self.pooled, self.stride, self.ws, strict=True
            )
        )

    def image_slices(self) -> tuple[slice, ...]:
        return tuple(slice(p, p + h) for p, h in zip(self.pad, self.image, strict=True))

    def offsets(self) -> Iterator[tuple[slice, ...]]:
        """For each position inside a window (row-major), the slice of the padded array
        that it visits in every window."""
        for r in np.ndindex(*self.ws):
            yield tuple(
                slice(i, i + (o - 1) * s + 1, s) if o > 0 else slice(0, 0)
                for i, o, s in zip(r, self.pooled, self.stride, strict=True)
            )


def geometry(op: ag.PoolBase, shape: tuple[int, ...]) -> Geometry:
    nd = op.nd
    image = tuple(shape[len(shape) - nd :])
    pooled = op.pooled_shape(shape)[len(shape) - nd :]
    return Geometry(op.ws_list, op.stride_list, op.pad_list, image, tuple(pooled))


def _lead(x: Array, g: Geometry) -> tuple[slice, ...]:
    return (slice(None),) * (x.ndim - g.nd)


def padded(x: Array, g: Geometry, fill: float) -> Array:
    """`x` inside an array of the padded extent filled with `fill`."""
    out = np.full(x.shape[: x.ndim - g.nd] + g.padded, fill, dtype=x.dtype)
    out[_lead(x, g) + g.image_slices()] = x
    return out


def image_mask(g: Geometry, include_pad: bool) -> Array:
    """1 at the image's positions of the padded extent (with `include_pad`, at the
    padded image's), else 0."""
    mask = np.zeros(g.padded)
    if include_pad:
        mask[tuple(slice(0, h + 2 * p) for h, p in zip(g.image, g.pad, strict=True))] = 1
    else:
        mask[g.image_slices()] = 1
    return mask


def window_counts(g: Geometry, mode: str) -> Array:
    """What each window's sum is divided by (1 for `sum`), of the pooled shape."""
    if mode == "sum":
        return np.ones(g.pooled)
    mask = image_mask(g, mode == "average_inc_pad")
    return sum((mask[at] for at in g.offsets()), np.zeros(g.pooled))


def _lowest(dtype: np.dtype) -> float:
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def pool(x: Array, g: Geometry, mode: str) -> Array:
    lead = _lead(x, g)
    if mode == "max":
        p = padded(x, g, _lowest(x.dtype))
        out = np.full(x.shape[: x.ndim - g.nd] + g.pooled, _lowest(x.dtype), dtype=x.dtype)
        for at in g.offsets():
            np.maximum(out, p[lead + at], out=out)
        return out
    p = padded(x, g, 0)
    total = np.zeros(x.shape[: x.ndim - g.nd] + g.pooled, dtype=x.dtype)
    for at in g.offsets():
        total += p[lead + at]
    if mode == "sum":
        return total
    return (total / window_counts(g, mode)).astype(x.dtype)


def _crop(gx: Array, g: Geometry) -> Array:
    return np.ascontiguousarray(gx[_lead(gx, g) + g.image_slices()])


def max_pool_grad(x: Array, out: Array, gz: Array, g: Geometry) -> Array:
    lead, mask = _lead(x, g), image_mask(g, False).astype(bool)
    p = padded(x, g, 0)
    gx = np.zeros(p.shape, dtype=x.dtype)
    for at in g.offsets():
        hit = (p[lead + at] == out) & mask[at]
        gx[lead + at] += np.where(hit, gz, 0).astype(x.dtype)
    return _crop(gx, g)


def average_pool_grad(x: Array, gz: Array, g: Geometry, mode: str) -> Array:
    lead = _lead(x, g)
    share = (gz / window_counts(g, mode)).astype(x.dtype)
    gx = np.zeros(x.shape[: x.ndim - g.nd] + g.padded, dtype=x.dtype)
    for at in g.offsets():
        gx[lead + at] += share
    return _crop(gx, g)


def max_pool_grad_grad(x: Array, out: Array, e: Array, g: Geometry, first: bool) -> Array:
    lead, mask = _lead(x, g), image_mask(g, False).astype(bool)
    p, pe = padded(x, g, 0), padded(e, g, 0)
    total = np.zeros(out.shape, dtype=x.dtype)
    found = np.zeros(out.shape, dtype=bool)
    for at in g.offsets():
        hit = (p[lead + at] == out) & mask[at]
        if first:
            hit &= ~found
            found |= hit
        total += np.where(hit, pe[lead + at], 0).astype(x.dtype)
    return total


def _check_pooled(op: ag.PoolBase, what: str, value: Array, g: Geometry, x: Array) -> None:
    expected = x.shape[: x.ndim - g.nd] + g.pooled
    if value.shape != expected:
        raise ValueError(
            f"{_label(op)}: {what} has shape {value.shape}, the pooled input {expected}"
        )


@register_impls
class PoolFunctions(InterpreterFunctions):
    """The pooling ops, in NumPy."""

    @impl(ag.PoolOp)
    def run_pool(self, interpreter: Interpreter, op: ag.PoolOp, args: PythonValues):
        (x,) = _operands(op, args)
        with np.errstate(all="ignore"):
            return _result(op, pool(x, geometry(op, x.shape), op.mode_value))

    @impl(ag.MaxPoolGradOp)
    def run_max_pool_grad(
        self, interpreter: Interpreter, op: ag.MaxPoolGradOp, args: PythonValues
    ) -> PythonValues:
        x, out, gz = _operands(op, args)
        g = geometry(op, x.shape)
        _check_pooled(op, "the pooled output", out, g, x)
        _check_pooled(op, "the output gradient", gz, g, x)
        with np.errstate(all="ignore"):
            return _result(op, max_pool_grad(x, out, gz, g))

    @impl(ag.AveragePoolGradOp)
    def run_average_pool_grad(
        self, interpreter: Interpreter, op: ag.AveragePoolGradOp, args: PythonValues
    ) -> PythonValues:
        x, gz = _operands(op, args)
        g = geometry(op, x.shape)
        _check_pooled(op, "the output gradient", gz, g, x)
        with np.errstate(all="ignore"):
            return _result(op, average_pool_grad(x, gz, g, op.mode_value))

    @impl(ag.MaxPoolGradGradOp)
    def run_max_pool_grad_grad(
        self, interpreter: Interpreter, op: ag.MaxPoolGradGradOp, args: PythonValues
    ) -> PythonValues:
        x, out, e = _operands(op, args)
        g = geometry(op, x.shape)
        _check_pooled(op, "the pooled output", out, g, x)
        if e.shape != x.shape:
            raise ValueError(f"{_label(op)}: eval has shape {e.shape}, the input {x.shape}")
        with np.errstate(all="ignore"):
            return _result(op, max_pool_grad_grad(x, out, e, g, op.first_only))
