"""`specialize`: `ag.dot` → the BLAS-shaped `ag.gemv` / `ag.gemm`, with the scaling and
accumulation around a product folded into them (Theano's `Gemv`/`Gemm` rewrites).

Accepts any module with `ag` ops on tensors and leaves `ag` ops on tensors. One pattern
per source op; f32 and f64 only (BLAS has no integer products):

| before                                       | after                                     |
|----------------------------------------------|-------------------------------------------|
| `dot(A, x)` (matrix·vector)                  | `gemv(1, A, x)`                           |
| `dot(x, A)` (vector·matrix)                  | `gemv(1, A, x) {transpose_a}`             |
| `dot(A, B)` (matrix·matrix)                  | `gemm(1, A, B)`                           |
| `dot(dimshuffle{1,0}(A), ...)`, likewise `B` | the transposition as `transpose_a/_b`     |
| `gemv(α, A, x) * s`, `s * gemv(α, A, x)`     | `gemv(α·s, A, x)` (`s` 0-d; α·s = s if α = 1) |
| `gemv(α, A, x) + v`, `v + gemv(α, A, x)`     | `gemv(α, A, x, 1, v)`                     |
| `v - gemv(α, A, x)`                          | `gemv(-α, A, x, 1, v)` (-α = -1 if α = 1) |
| `gemv(α, A, x) - v`                          | `gemv(α, A, x, -1, v)`                    |

and the same for `gemm`. `dot(A, x) * s + v` thus becomes `gemv(s, A, x, 1, v)`. A
transposition is free for BLAS (a flag), so it is never materialized. A product is
folded into a `mul`/`add`/`sub` only when it has no other use (else it would be computed
twice), `v` has exactly the product's type (no broadcasting: BLAS accumulates into a
vector or matrix of the result's shape), and the result keeps the original's type.

```mlir
// before
%p = ag.dot %a, %x : tensor<?x?xf32>, tensor<?xf32> -> tensor<?xf32>
%s = ag.mul %p, %alpha : tensor<?xf32>, tensor<f32> -> tensor<?xf32>
%y = ag.add %s, %v : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
// after
%one = ag.constant dense<1.000000e+00> : tensor<f32>
%y = ag.gemv %alpha, %a, %x, %one, %v : tensor<f32>, tensor<?x?xf32>, tensor<?xf32>,
       tensor<f32>, tensor<?xf32> -> tensor<?xf32>
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from arignote.dialects import ag
from arignote.lowering.graph.stable_forms import defining, is_one
from arignote.lowering.rewriting import DispatchingApplier

Blas = ag.GemvOp | ag.GemmOp


def _scalar_constant(ops: list[Operation], value: float, element: Attribute) -> SSAValue:
    attr = DenseIntOrFPElementsAttr.from_list(TensorType(element, []), [value])
    op = ag.ConstantOp(attr)
    ops.append(op)
    return op.result


def _untransposed(value: SSAValue) -> tuple[SSAValue, bool]:
    """`(A, True)` when `value` is `dimshuffle{1,0}(A)`, else `(value, False)`."""
    op = defining(value, ag.DimShuffleOp)
    if isinstance(op, ag.DimShuffleOp) and op.pattern_list == (1, 0):
        return op.input, True
    return value, False


def _replace(rewriter: PatternRewriter, op: Operation, ops: list[Operation]) -> None:
    """Replace `op` by `ops` (the last computes the result) if the type is kept."""
    result = ops[-1].results[0]
    if result.type == op.results[0].type:
        for name, attr in op.attributes.items():  # e.g. `ag.node`, for messages
            ops[-1].attributes.setdefault(name, attr)
        rewriter.replace(op, ops, [result])


class DotToBlas(RewritePattern):
    """`dot` of a matrix and a vector (either order) → `gemv`; of matrices → `gemm`;
    a `dimshuffle{1,0}` operand becomes a transposition flag."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.DotOp, rewriter: PatternRewriter, /):
        lhs_t, rhs_t = ag.tensor_type(op.lhs), ag.tensor_type(op.rhs)
        if not ag.is_float(lhs_t.element_type):
            return
        ranks = (lhs_t.get_num_dims(), rhs_t.get_num_dims())
        ops: list[Operation] = []
        if ranks == (2, 1):
            a, trans = _untransposed(op.lhs)
            one = _scalar_constant(ops, 1.0, lhs_t.element_type)
            ops.append(ag.GemvOp(one, a, op.rhs, transpose_a=trans))
        elif ranks == (1, 2):
            a, trans = _untransposed(op.rhs)
            one = _scalar_constant(ops, 1.0, lhs_t.element_type)
            ops.append(ag.GemvOp(one, a, op.lhs, transpose_a=not trans))
        elif ranks == (2, 2):
            a, trans_a = _untransposed(op.lhs)
            b, trans_b = _untransposed(op.rhs)
            one = _scalar_constant(ops, 1.0, lhs_t.element_type)
            ops.append(ag.GemmOp(one, a, b, transpose_a=trans_a, transpose_b=trans_b))
        else:
            return
        _replace(rewriter, op, ops)


def _product(value: SSAValue) -> Blas | None:
    """The `gemv`/`gemm` without accumulation defining `value`, if it has no other use."""
    op = defining(value, ag.GemvOp) or defining(value, ag.GemmOp)
    if isinstance(op, ag.GemvOp | ag.GemmOp) and not op.acc and value.has_one_use():
        return op
    return None


def _rebuild(
    op: Blas, alpha: SSAValue, beta: SSAValue | None = None, initial: SSAValue | None = None
) -> Operation:
    """`op` with another alpha and an accumulation."""
    if isinstance(op, ag.GemvOp):
        return ag.GemvOp(alpha, op.a, op.b, beta, initial, transpose_a=op.transpose_a is not None)
    return ag.GemmOp(
        alpha,
        op.a,
        op.b,
        beta,
        initial,
        transpose_a=op.transpose_a is not None,
        transpose_b=op.transpose_b is not None,
    )


class ScaleProduct(RewritePattern):
    """`gemv(α, ...) * s` or `s * gemv(α, ...)` (s 0-d) → `gemv(α·s, ...)`; also gemm."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.MulOp, rewriter: PatternRewriter, /):
        for product_value, scale in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            product = _product(product_value)
            scale_t = scale.type
            if product is None or not isinstance(scale_t, TensorType):
                continue
            if scale_t != product.alpha.type:
                continue
            ops: list[Operation] = []
            alpha = scale
            if not is_one(product.alpha):
                mul = ag.MulOp(product.alpha, scale)
                ops.append(mul)
                alpha = mul.result
            ops.append(_rebuild(product, alpha))
            _replace(rewriter, op, ops)
            return


def _accumulate(
    rewriter: PatternRewriter,
    op: Operation,
    product: Blas,
    initial: SSAValue,
    negate_product: bool,
    beta_value: float,
) -> None:
    if initial.type != product.result.type:
        return
    ops: list[Operation] = []
    element = product.result.type.element_type  # pyright: ignore[reportAttributeAccessIssue]
    alpha = product.alpha
    if negate_product and is_one(alpha):
        alpha = _scalar_constant(ops, -1.0, element)
    elif negate_product:
        neg = ag.NegOp(alpha)
        ops.append(neg)
        alpha = neg.result
    beta = _scalar_constant(ops, beta_value, element)
    ops.append(_rebuild(product, alpha, beta, initial))
    _replace(rewriter, op, ops)


class AccumulateSum(RewritePattern):
    """`gemv(α, ...) + v` or `v + gemv(α, ...)` → `gemv(α, ..., 1, v)`; also gemm."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.AddOp, rewriter: PatternRewriter, /):
        for product_value, other in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            product = _product(product_value)
            if product is not None and other.type == product.result.type:
                _accumulate(rewriter, op, product, other, False, 1.0)
                return


class AccumulateDifference(RewritePattern):
    """`v - gemv(α, ...)` → `gemv(-α, ..., 1, v)`; `gemv(α, ...) - v` →
    `gemv(α, ..., -1, v)`; also gemm."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.SubOp, rewriter: PatternRewriter, /):
        if (product := _product(op.rhs)) is not None:
            _accumulate(rewriter, op, product, op.lhs, True, 1.0)
        elif (product := _product(op.lhs)) is not None:
            _accumulate(rewriter, op, product, op.rhs, False, -1.0)


SPECIALIZE_PATTERNS: tuple[RewritePattern, ...] = (
    DotToBlas(),
    ScaleProduct(),
    AccumulateSum(),
    AccumulateDifference(),
)


@dataclass(frozen=True)
class SpecializePass(ModulePass):
    """Rewrites float ag.dot into ag.gemv / ag.gemm, folding scaling, accumulation and
    transposition into them."""

    name = "specialize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(DispatchingApplier(SPECIALIZE_PATTERNS)).rewrite_module(op)
