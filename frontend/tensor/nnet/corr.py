"""Theano's `theano.tensor.nnet.corr`: `CorrMM`, `CorrMM_gradWeights`,
`CorrMM_gradInputs`, the 2-d correlation ops of Theano's CPU backend (filters not
flipped), as callables over `abstract_conv`'s graphs (the same `ag` conv ops).

`CorrMM(border_mode, subsample, filter_dilation, num_groups, unshared)(img, kern)`;
`CorrMM_gradWeights(...)(img, topgrad, shape=None)` and
`CorrMM_gradInputs(...)(kern, topgrad, shape=None)`, `shape` the spatial lengths of the
filters or the input, computed from the other shapes when omitted (which needs unit
strides and no `'half'` border, as in Theano).
"""

from __future__ import annotations

from typing import Any

from arignote.graph import Variable
from arignote.tensor import basic
from arignote.tensor.nnet import abstract_conv as ac

__all__ = ["BaseCorrMM", "CorrMM", "CorrMM_gradInputs", "CorrMM_gradWeights"]


class BaseCorrMM:
    """The parameters of a correlation (Theano's `BaseCorrMM`)."""

    convdim = 2
    name = "CorrMM"

    def __init__(
        self,
        border_mode: Any = "valid",
        subsample: Any = None,
        filter_dilation: Any = None,
        num_groups: int = 1,
        unshared: bool = False,
        openmp: Any = None,
    ):
        d = self.convdim
        self.border_mode = border_mode
        self.subsample = tuple(subsample) if subsample is not None else (1,) * d
        self.filter_dilation = tuple(filter_dilation) if filter_dilation is not None else (1,) * d
        self.num_groups, self.unshared = num_groups, unshared
        self._params()  # check the arguments now

    def _params(self) -> Any:
        return ac._Conv(
            type(self).__name__,
            self.convdim,
            self.border_mode,
            self.subsample,
            self.filter_dilation,
            self.num_groups,
            self.unshared,
        )

    def _implicit(self, what: str) -> None:
        if any(s != 1 for s in self.subsample) or self.border_mode == "half":
            raise ValueError(
                f"{type(self).__name__}: shape must be given if subsample != (1, 1) or "
                f'border_mode == "half" ({what})'
            )


class CorrMM(BaseCorrMM):
    """`CorrMM(...)(img, kern)`: the correlation of `img` with `kern`."""

    def __call__(self, img: Any, kern: Any) -> Variable:
        return ac._conv(self._params(), img, kern, None, None, False)


class CorrMM_gradWeights(BaseCorrMM):
    """`CorrMM_gradWeights(...)(img, topgrad, shape=None)`: the filters' gradient."""

    def __call__(self, img: Any, topgrad: Any, shape: Any = None) -> Variable:
        c = self._params()
        if shape is None:
            self._implicit("the kernel lengths")
            x, gy = basic.as_tensor_variable(img), basic.as_tensor_variable(topgrad)
            shape = [
                ac.get_conv_gradweights_shape_1axis(
                    basic.shape_i(x, 2 + i),
                    basic.shape_i(gy, 2 + i),
                    c.modes[i],
                    1,
                    c.dilation[i],
                )
                for i in range(self.convdim)
            ]
            shape = [basic.cast(s, "int64") for s in shape]
        return ac._grad_weights(c, img, topgrad, (None, None, *shape), None, False)


class CorrMM_gradInputs(BaseCorrMM):
    """`CorrMM_gradInputs(...)(kern, topgrad, shape=None)`: the input's gradient."""

    def __call__(self, kern: Any, topgrad: Any, shape: Any = None) -> Variable:
        c = self._params()
        if shape is None:
            self._implicit("the input lengths")
            w, gy = basic.as_tensor_variable(kern), basic.as_tensor_variable(topgrad)
            shape = [
                ac.get_conv_gradinputs_shape_1axis(
                    basic.shape_i(w, 2 + i),
                    basic.shape_i(gy, 2 + i),
                    c.modes[i],
                    1,
                    c.dilation[i],
                )
                for i in range(self.convdim)
            ]
        return ac._grad_inputs(c, topgrad, kern, (None, None, *shape), None, False)
