"""`arignote.tensor.nnet.blocksparse`: Theano's block-sparse products (issue 14).

The blocks a batch row uses are gathered by advanced indexing and contracted with
elementwise products and sums (gradients from the ordinary rules; `sparse_block_outer`
accumulates repeated blocks, as an increment at repeated indices does):

- `sparse_block_gemv(o, W, h, inputIdx, outputIdx)`: `o[b, j] + sum_i h[b, i] ·
  W[inputIdx[b, i], outputIdx[b, j]]`;
- `sparse_block_outer(o, x, y, xIdx, yIdx, alpha)`: `o` with `alpha * outer(x[b, i],
  y[b, j])` added to block `o[xIdx[b, i], yIdx[b, j]]`;
- `sparse_block_dot(W, h, inputIdx, b, outputIdx)`: `sparse_block_gemv` on the biases
  `b[outputIdx]`.
"""

from __future__ import annotations

from typing import Any

from arignote.graph import Op, Variable
from arignote.tensor import basic


def _T() -> Any:  # noqa: N802
    import arignote.tensor as T

    return T


class SparseBlockGemv(Op):
    """Theano's op (`sparse_block_gemv`): see the module docstring. Shapes: `o`
    (batch, oWin, oSize), `W` (iBlocks, oBlocks, iSize, oSize), `h` (batch, iWin,
    iSize), `inputIdx` (batch, iWin), `outputIdx` (batch, oWin)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def __call__(  # type: ignore[override]
        self,
        o: Any,
        W: Any,
        h: Any,
        inputIdx: Any,
        outputIdx: Any,  # noqa: N803
    ) -> Variable:
        o, W, h = (basic.as_tensor_variable(v) for v in (o, W, h))
        i_idx, o_idx = basic.as_tensor_variable(inputIdx), basic.as_tensor_variable(outputIdx)
        _ranks(
            ("o", o, 3), ("W", W, 4), ("h", h, 3), ("inputIdx", i_idx, 2), ("outputIdx", o_idx, 2)
        )
        blocks = W[i_idx.dimshuffle(0, 1, "x"), o_idx.dimshuffle(0, "x", 1)]
        # blocks: (batch, iWin, oWin, iSize, oSize)
        products = basic.mul(h.dimshuffle(0, 1, "x", 2, "x"), blocks)
        return basic.add(o, basic.sum(products, axis=(1, 3)))


class SparseBlockOuter(Op):
    """Theano's op (`sparse_block_outer`): see the module docstring. Shapes: `o`
    (xBlocks, yBlocks, xSize, ySize), `x` (batch, xWin, xSize), `y` (batch, yWin,
    ySize), `xIdx` (batch, xWin), `yIdx` (batch, yWin); `alpha` a scalar (1 if None)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def __call__(  # type: ignore[override]
        self,
        o: Any,
        x: Any,
        y: Any,
        xIdx: Any,
        yIdx: Any,
        alpha: Any = None,  # noqa: N803
    ) -> Variable:
        o, x, y = (basic.as_tensor_variable(v) for v in (o, x, y))
        xi, yi = basic.as_tensor_variable(xIdx), basic.as_tensor_variable(yIdx)
        _ranks(("o", o, 4), ("x", x, 3), ("y", y, 3), ("xIdx", xi, 2), ("yIdx", yi, 2))
        outer = basic.mul(x.dimshuffle(0, 1, "x", 2, "x"), y.dimshuffle(0, "x", 1, "x", 2))
        if alpha is not None:
            outer = basic.mul(alpha, outer)
        index = (xi.dimshuffle(0, 1, "x"), yi.dimshuffle(0, "x", 1))
        return _T().inc_subtensor(o[index], basic.cast(outer, o.dtype))


def _ranks(*specs: tuple[str, Variable, int]) -> None:
    for what, v, ndim in specs:
        if v.ndim != ndim:
            raise TypeError(f"{what} must be a {ndim}-d tensor, got {v.type}")


sparse_block_gemv = SparseBlockGemv(False)
sparse_block_gemv_inplace = SparseBlockGemv(True)
sparse_block_outer = SparseBlockOuter(False)
sparse_block_outer_inplace = SparseBlockOuter(True)


def sparse_block_dot(
    W: Any,
    h: Any,
    inputIdx: Any,
    b: Any,
    outputIdx: Any,  # noqa: N803 - Theano's names
) -> Variable:
    """The block-sparse product of `h` with the blocks of `W` its rows select, plus the
    biases `b[outputIdx]`: `(batch, oWin, oSize)`. A 2-d `h` (one window) and 1-d
    indices are given a window axis first, as Theano's."""
    h = basic.as_tensor_variable(h)
    input_idx = basic.as_tensor_variable(inputIdx)
    output_idx = basic.as_tensor_variable(outputIdx)
    if input_idx.ndim == h.ndim - 1 == 1:
        h = h.dimshuffle("x", 0, 1)
        input_idx = input_idx.dimshuffle("x", 0)
        output_idx = output_idx.dimshuffle("x", 0)
    o = basic.as_tensor_variable(b).take(output_idx, axis=0)
    return sparse_block_gemv(o, W, h, input_idx, output_idx)
