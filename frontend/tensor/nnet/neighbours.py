"""Theano's `theano.tensor.nnet.neighbours`: `images2neibs`, `neibs2images` and the op
class `Images2Neibs`.

`images2neibs` is a composition of tensor operations, no op of its own: the image axes
are padded with zeros for `half` and `full`, the positions of each neighbourhood's rows
and columns are computed with `arange` (modulo the image's size for `wrap_centered`),
and one advanced-indexing gather with the two broadcast position arrays reads every
neighbourhood at once; a reshape makes the rows. Its gradient is therefore the
scatter-add of that gather (in every mode; Theano has one for `valid` and
`ignore_borders` only).

`neib_shape` and `neib_step` must be known when the graph is built (ints or constant
tensors). A `valid` (`half`, `full`) input whose image shape does not fit the
neighbourhoods raises `ValueError` when the function runs (Theano: `TypeError`), as a
`wrap_centered` image smaller than the neighbourhood does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph import TensorConstant, Variable
from arignote.tensor import basic as T
from arignote.tensor import subtensor as st
from arignote.tensor.shape_ops import check

__all__ = ["Images2Neibs", "images2neibs", "neibs2images"]

MODES = ("valid", "half", "full", "wrap_centered", "ignore_borders")
"""Theano's `Images2Neibs.BORDER_MODE` aliases."""


def _pair(value: Any, what: str) -> tuple[int, int]:
    """`neib_shape` or `neib_step` as two Python ints."""
    if isinstance(value, TensorConstant):
        value = value.data
    elif isinstance(value, Variable):
        _symbolic(value, what)
    elif isinstance(value, list | tuple) and any(isinstance(v, Variable) for v in value):
        value = [v.data if isinstance(v, TensorConstant) else _symbolic(v, what) for v in value]
    array = np.asarray(value)
    if array.dtype.kind not in "iu" or array.shape != (2,):
        raise TypeError(f"images2neibs: {what} must be two ints, got {value!r}")
    first, second = (int(v) for v in array)
    return first, second


def _symbolic(value: Any, what: str) -> Any:
    if isinstance(value, Variable):
        raise NotImplementedError(
            f"images2neibs: {what} must be known when the graph is built (ints or a "
            f"constant), got the symbolic {value}"
        )
    return value


class Images2Neibs:
    """Theano's `Images2Neibs(mode='valid')`: `Images2Neibs(mode)(ten4, neib_shape,
    neib_step=None)` is `images2neibs(ten4, neib_shape, neib_step, mode)`."""

    __props__ = ("mode",)

    def __init__(self, mode: str = "valid"):
        if mode not in MODES:
            raise NotImplementedError(
                f"Only modes {', '.join(MODES)} have been implemented for Images2Neibs"
            )
        self.mode = mode

    def __str__(self) -> str:
        return f"Images2Neibs{{{self.mode}}}"

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Images2Neibs) and other.mode == self.mode

    def __hash__(self) -> int:
        return hash((Images2Neibs, self.mode))

    def make_node(self, ten4: Any, neib_shape: Any, neib_step: Any = None) -> Any:
        return self(ten4, neib_shape, neib_step).owner

    def __call__(self, ten4: Any, neib_shape: Any, neib_step: Any = None) -> Variable:
        x = T.as_tensor_variable(ten4)
        if x.ndim != 4:
            raise TypeError(f"images2neibs: ten4 must be a 4-d tensor, got {x.ndim} dimensions")
        shape = _pair(neib_shape, "neib_shape")
        step = shape if neib_step is None else _pair(neib_step, "neib_step")
        if min(step) <= 0:
            raise ValueError(f"neib_step wrong step ; values <= 0. Got {list(step)}")
        if min(shape) <= 0:
            raise ValueError(f"neib_shape values <=0. Got {list(shape)}")
        if self.mode == "wrap_centered" and (shape[0] % 2 != 1 or shape[1] % 2 != 1):
            raise TypeError("Images2Neibs: in mode wrap_centered need patch with odd shapes")
        images, positions = _prepare(x, shape, step, self.mode)
        return _gather(images, shape, positions)


def _consistent(x: Variable, axis: int, shape: tuple[int, int], step: tuple[int, int], mode: str):
    """`x` after the run-time check that image axis `axis` fits `mode`'s neighbourhoods."""
    k = axis - 2
    h, c, s = x.shape[axis], shape[k], step[k]
    extent = {"valid": h - c, "half": h - c % 2, "full": h + c - 2}[mode]
    ok = T.and_(T.ge(h, c), T.eq(extent % s, 0))
    message = (
        f"neib_shape[{k}]={c}, neib_step[{k}]={s} and ten4.shape[{axis}] not consistent "
        f"(mode {mode!r})"
    )
    return check(x, ok, message)


def _pad_zeros(x: Variable, widths: tuple[int, int]) -> Variable:
    if widths == (0, 0):
        return x
    shape = [x.shape[0], x.shape[1], x.shape[2] + 2 * widths[0], x.shape[3] + 2 * widths[1]]
    inner = (slice(None), slice(None))
    region = inner + tuple(slice(w, w + x.shape[2 + k]) for k, w in enumerate(widths))
    return st.set_subtensor(T.zeros(shape, dtype=x.dtype)[region], x)


def _positions(count: Any, length: int, step: int, shift: int, wrap: Any = None) -> Variable:
    """`(count, length)` image positions: row `a` of neighbourhood position `i` is
    `a * step + i - shift` (modulo `wrap` when given)."""
    starts = T.dimshuffle(T.arange(count) * step, 0, "x")
    positions = starts + T.dimshuffle(T.arange(length) - shift, "x", 0)
    return positions if wrap is None else positions % wrap


def _prepare(
    x: Variable, shape: tuple[int, int], step: tuple[int, int], mode: str
) -> tuple[Variable, list[Variable]]:
    """The images to read (padded with zeros for `half` and `full`) and, per image axis,
    the positions of each neighbourhood's rows (columns)."""
    if mode == "wrap_centered":
        for axis in (2, 3):
            fits = T.ge(x.shape[axis], shape[axis - 2])
            message = (
                "Images2Neibs: in wrap_centered mode, don't support image shapes smaller "
                f"then the patch shapes: neib_shape={shape}"
            )
            x = check(x, fits, message)
        return x, [
            _positions(
                (x.shape[a] + step[a - 2] - 1) // step[a - 2],
                shape[a - 2],
                step[a - 2],
                shape[a - 2] // 2,
                x.shape[a],
            )
            for a in (2, 3)
        ]
    if mode != "ignore_borders":
        for axis in (2, 3):
            x = _consistent(x, axis, shape, step, mode)
    widths = {"half": (shape[0] // 2, shape[1] // 2), "full": (shape[0] - 1, shape[1] - 1)}
    padded = _pad_zeros(x, widths.get(mode, (0, 0)))
    counts = [T.maximum((padded.shape[a] - shape[a - 2]) // step[a - 2] + 1, 0) for a in (2, 3)]
    return padded, [_positions(counts[a - 2], shape[a - 2], step[a - 2], 0) for a in (2, 3)]


def _gather(x: Variable, shape: tuple[int, int], positions: list[Variable]) -> Variable:
    """Row `((n * C + s) * gc + a) * gd + b`, column `i * c + j` of the result is
    `x[n, s, rows[a, i], cols[b, j]]`: one gather with broadcast index arrays into
    `(n, s, a, b, i, j)`, then a reshape."""
    rows, cols = positions
    gathered = st.getitem(
        x,
        (
            slice(None),
            slice(None),
            T.dimshuffle(rows, 0, "x", 1, "x"),
            T.dimshuffle(cols, "x", 0, "x", 1),
        ),
    )
    count = x.shape[0] * x.shape[1] * rows.shape[0] * cols.shape[0]
    return st.reshape(gathered, T.stack([count, shape[0] * shape[1]]), ndim=2)


def images2neibs(
    ten4: Any, neib_shape: Any, neib_step: Any = None, mode: str = "valid"
) -> Variable:
    """The `neib_shape` neighbourhoods of the images of the 4-d `ten4` (`(batch,
    channel, row, column)`), taken every `neib_step` (default: `neib_shape`, disjoint),
    flattened into the rows of a matrix, in the order batch, channel, neighbourhood row,
    neighbourhood column (Theano's `images2neibs`). `mode`: `'valid'` (the image shape
    must fit exactly), `'ignore_borders'` (what does not fit is dropped), `'half'` and
    `'full'` (zero padding of `neib_shape // 2` or `neib_shape - 1` first),
    `'wrap_centered'` (neighbourhoods centred on every `neib_step`-th pixel, wrapping
    around the borders; odd `neib_shape`)."""
    return Images2Neibs(mode)(ten4, neib_shape, neib_step)


def neibs2images(neibs: Any, neib_shape: Any, original_shape: Any, mode: str = "valid") -> Variable:
    """The inverse of `images2neibs` with disjoint neighbourhoods (`neib_step` equal to
    `neib_shape`): the images of shape `original_shape` (4 entries) rebuilt from the
    neighbourhood matrix `neibs`, for modes `'valid'` and `'ignore_borders'` (the
    dropped border is zero). Theano's definition."""
    if mode not in ("valid", "ignore_borders"):
        raise NotImplementedError(f"neibs2images do not support mode={mode}")
    n = T.as_tensor_variable(neibs)
    r, c = _pair(neib_shape, "neib_shape")
    shape = T.as_tensor_variable(original_shape)
    h, w = shape[2], shape[3]
    grid_h, grid_w = h // r, w // c
    # rows (n, s, a, b) x columns (i, j) -> (n, s, a, i, b, j)
    blocks = st.reshape(n, T.stack([shape[0], shape[1], grid_h, grid_w, r, c]), ndim=6)
    images = T.dimshuffle(blocks, 0, 1, 2, 4, 3, 5)
    valid = st.reshape(images, T.stack([shape[0], shape[1], grid_h * r, grid_w * c]), ndim=4)
    if mode == "valid":
        return valid
    out = T.zeros(T.stack([shape[0], shape[1], h, w]), dtype=n.dtype)
    return st.set_subtensor(out[:, :, : grid_h * r, : grid_w * c], valid)
