"""`stabilize`: rewrite numerically fragile `ag` expressions into stable equivalents.

Accepts any module with `ag` ops on tensors and leaves `ag` ops on tensors. Each pattern
replaces an expression by one that computes the same function without overflow,
underflow to zero followed by a log, or cancellation:

| before                               | after                        |
|--------------------------------------|------------------------------|
| `1 / (1 + exp(e))`                   | `sigmoid(-e)`                |
| `1 - sigmoid(x)`                     | `sigmoid(-x)`                |
| `log(sigmoid(x))`                    | `-softplus(-x)`              |
| `log(1 + exp(x))`, `log1p(exp(x))`   | `softplus(x)`                |
| `log(1 - x)`                         | `log1p(-x)`                  |
| `log(1 + x)`                         | `log1p(x)`                   |
| `exp(x) - 1`                         | `expm1(x)`                   |
| `-(-x)`                              | `x`                          |
| `log(softmax(x))`, its gradient      | see `softmax_xent`           |

A rewrite applies only when the result keeps the original's type (a constant that
broadcasts the expression to a larger shape blocks it). With these, the logistic
regression's cross-entropy `-y*log(p) - (1-y)*log(1-p)` with `p = 1/(1+exp(-z))` becomes
`y*softplus(-z) + (1-y)*softplus(z)`: finite wherever `p` saturates.

```mlir
// before
%e = ag.exp %x : tensor<?xf32>
%d = ag.add %one, %e : tensor<f32>, tensor<?xf32> -> tensor<?xf32>
%p = ag.div %one, %d : tensor<f32>, tensor<?xf32> -> tensor<?xf32>
// after
%n = ag.neg %x : tensor<?xf32>
%p = ag.sigmoid %n : tensor<?xf32>
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriteWalker

from arignote.lowering.graph.stable_forms import STABILIZE_PATTERNS
from arignote.lowering.rewriting import DispatchingApplier


@dataclass(frozen=True)
class StabilizePass(ModulePass):
    """Rewrites log(sigmoid), 1/(1+exp), exp-1 and similar into numerically stable forms."""

    name = "stabilize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(DispatchingApplier(STABILIZE_PATTERNS)).rewrite_module(op)
