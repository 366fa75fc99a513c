"""Theano's `theano.tensor.nnet.corr3d`: `Corr3dMM`, `Corr3dMM_gradWeights`,
`Corr3dMM_gradInputs`, the 3-d versions of `nnet.corr`'s correlations (filters not
flipped), over `abstract_conv`'s graphs."""

from __future__ import annotations

from arignote.tensor.nnet import corr

__all__ = ["BaseCorr3dMM", "Corr3dMM", "Corr3dMM_gradInputs", "Corr3dMM_gradWeights"]


class BaseCorr3dMM(corr.BaseCorrMM):
    """The parameters of a 3-d correlation (Theano's `BaseCorr3dMM`)."""

    convdim = 3


class Corr3dMM(BaseCorr3dMM, corr.CorrMM):
    """`Corr3dMM(...)(img, kern)`: the 3-d correlation of `img` with `kern`."""


class Corr3dMM_gradWeights(BaseCorr3dMM, corr.CorrMM_gradWeights):
    """`Corr3dMM_gradWeights(...)(img, topgrad, shape=None)`: the filters' gradient."""


class Corr3dMM_gradInputs(BaseCorr3dMM, corr.CorrMM_gradInputs):
    """`Corr3dMM_gradInputs(...)(kern, topgrad, shape=None)`: the input's gradient."""
