"""`arignote.tensor.nnet`: neural-network functions (Theano's `theano.tensor.nnet`).

The functions live in Theano's submodules: `nnet.sigm` (sigmoid, softplus and their
approximations), `nnet.nnet` (activations, softmax, the cross-entropies, `h_softmax`,
`confusion_matrix`), `nnet.bn` (batch normalization) and `nnet.blocksparse`
(block-sparse products); this package exports them as Theano's does. See docs/nnet.md.
"""

from __future__ import annotations

# nnet functions (issue 14): Theano's nnet.nnet, nnet.sigm, nnet.bn, nnet.blocksparse
from arignote.tensor.nnet import blocksparse, bn, nnet, sigm
from arignote.tensor.nnet.bn import batch_normalization
from arignote.tensor.nnet.nnet import (
    CrossentropyCategorical1Hot,
    CrossentropyCategorical1HotGrad,
    CrossentropySoftmax1HotWithBiasDx,
    CrossentropySoftmaxArgmax1HotWithBias,
    LogSoftmax,
    Prepend_scalar_constant_to_each_row,
    Prepend_scalar_to_each_row,
    Softmax,
    SoftmaxGrad,
    SoftmaxWithBias,
    binary_crossentropy,
    categorical_crossentropy,
    confusion_matrix,
    crossentropy_categorical_1hot,
    crossentropy_categorical_1hot_grad,
    crossentropy_softmax_1hot,
    crossentropy_softmax_1hot_with_bias,
    crossentropy_softmax_1hot_with_bias_dx,
    crossentropy_softmax_argmax_1hot_with_bias,
    crossentropy_softmax_max_and_argmax_1hot,
    crossentropy_softmax_max_and_argmax_1hot_with_bias,
    crossentropy_to_crossentropy_with_softmax,
    crossentropy_to_crossentropy_with_softmax_with_bias,
    elu,
    graph_merge_softmax_with_crossentropy_softmax,
    h_softmax,
    logsoftmax,
    logsoftmax_op,
    prepend_0_to_each_row,
    prepend_1_to_each_row,
    prepend_scalar_to_each_row,
    relu,
    selu,
    sigmoid_binary_crossentropy,
    softmax,
    softmax_grad,
    softmax_graph,
    softmax_op,
    softmax_simplifier,
    softmax_with_bias,
    softsign,
)
from arignote.tensor.nnet.sigm import (
    hard_sigmoid,
    scalar_sigmoid,
    sigmoid,
    sigmoid_inplace,
    softplus,
    ultra_fast_sigmoid,
)

__all__ = [
    "CrossentropyCategorical1Hot",
    "CrossentropyCategorical1HotGrad",
    "CrossentropySoftmax1HotWithBiasDx",
    "CrossentropySoftmaxArgmax1HotWithBias",
    "LogSoftmax",
    "Prepend_scalar_constant_to_each_row",
    "Prepend_scalar_to_each_row",
    "Softmax",
    "SoftmaxGrad",
    "SoftmaxWithBias",
    "batch_normalization",
    "binary_crossentropy",
    "blocksparse",
    "bn",
    "categorical_crossentropy",
    "confusion_matrix",
    "crossentropy_categorical_1hot",
    "crossentropy_categorical_1hot_grad",
    "crossentropy_softmax_1hot",
    "crossentropy_softmax_1hot_with_bias",
    "crossentropy_softmax_1hot_with_bias_dx",
    "crossentropy_softmax_argmax_1hot_with_bias",
    "crossentropy_softmax_max_and_argmax_1hot",
    "crossentropy_softmax_max_and_argmax_1hot_with_bias",
    "crossentropy_to_crossentropy_with_softmax",
    "crossentropy_to_crossentropy_with_softmax_with_bias",
    "elu",
    "graph_merge_softmax_with_crossentropy_softmax",
    "h_softmax",
    "hard_sigmoid",
    "logsoftmax",
    "logsoftmax_op",
    "nnet",
    "prepend_0_to_each_row",
    "prepend_1_to_each_row",
    "prepend_scalar_to_each_row",
    "relu",
    "scalar_sigmoid",
    "selu",
    "sigm",
    "sigmoid",
    "sigmoid_binary_crossentropy",
    "sigmoid_inplace",
    "softmax",
    "softmax_grad",
    "softmax_graph",
    "softmax_op",
    "softmax_simplifier",
    "softmax_with_bias",
    "softplus",
    "softsign",
    "ultra_fast_sigmoid",
]

# --- convolution (issue 14, conv) --------------------------------------------------------

from typing import Any  # noqa: E402

from arignote.graph import Variable  # noqa: E402
from arignote.tensor.nnet import abstract_conv  # noqa: E402
from arignote.tensor.nnet.abstract_conv import (  # noqa: E402
    conv2d_grad_wrt_inputs,
    conv3d,
    separable_conv2d,
)

__all__ += [
    "abstract_conv",
    "conv2d",
    "conv2d_grad_wrt_inputs",
    "conv2d_transpose",
    "conv3d",
    "separable_conv2d",
]


def conv2d(
    input: Any,
    filters: Any,
    input_shape: Any = None,
    filter_shape: Any = None,
    border_mode: Any = "valid",
    subsample: Any = (1, 1),
    filter_flip: bool = True,
    image_shape: Any = None,
    filter_dilation: Any = (1, 1),
    num_groups: int = 1,
    unshared: bool = False,
    **kwargs: Any,
) -> Variable:
    """Theano's `nnet.conv2d`: `abstract_conv.conv2d` (see docs/nnet_conv.md), with the
    deprecated `image_shape` alias of `input_shape`; other keyword arguments are
    ignored with a warning, `imshp_logical`/`kshp_logical` are a ValueError."""
    import warnings

    if "imshp_logical" in kwargs or "kshp_logical" in kwargs:
        raise ValueError(
            "Keyword arguments 'imshp_logical' and 'kshp_logical' for conv2d are not "
            "supported anymore"
        )
    if kwargs:
        warnings.warn(
            f"{list(kwargs)} are now deprecated in `tensor.nnet.abstract_conv.conv2d` "
            "interface and will be ignored.",
            stacklevel=2,
        )
    if image_shape is not None:
        warnings.warn(
            "The `image_shape` keyword argument to `tensor.nnet.conv2d` is deprecated, it "
            "has been renamed to `input_shape`.",
            stacklevel=2,
        )
        if input_shape is not None:
            raise ValueError("input_shape and image_shape should not be provided at the same time.")
        input_shape = image_shape
    return abstract_conv.conv2d(
        input,
        filters,
        input_shape,
        filter_shape,
        border_mode,
        subsample,
        filter_flip,
        filter_dilation,
        num_groups,
        unshared,
    )


def conv2d_transpose(
    input: Any,
    filters: Any,
    output_shape: Any,
    filter_shape: Any = None,
    border_mode: Any = "valid",
    input_dilation: Any = (1, 1),
    filter_flip: bool = True,
    filter_dilation: Any = (1, 1),
    num_groups: int = 1,
    unshared: bool = False,
) -> Variable:
    """The transposed convolution: the gradient of `conv2d` with respect to its input,
    `input` taking the output gradient's place; `filters` are `(input channels, output
    channels, rows, columns)` and `input_dilation` is the forward `subsample`."""
    return abstract_conv.conv2d_grad_wrt_inputs(
        output_grad=input,
        filters=filters,
        input_shape=output_shape,
        filter_shape=filter_shape,
        border_mode=border_mode,
        subsample=input_dilation,
        filter_flip=filter_flip,
        filter_dilation=filter_dilation,
        num_groups=num_groups,
        unshared=unshared,
    )


# --- pooling and neighbours (issue 14 item 2, area pool): Theano's submodule
# theano.tensor.nnet.neighbours (images2neibs, neibs2images, Images2Neibs) ---
from arignote.tensor.nnet import neighbours  # noqa: E402, F401
