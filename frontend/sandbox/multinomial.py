"""Theano's `theano.sandbox.multinomial`: `MultinomialFromUniform` and
`ChoiceFromUniform`, which turn uniform samples into multinomial draws (what
`MRG_RandomStreams.multinomial` and `.choice` use).

Both are compositions: the running sums of a row of `pvals` (in float64, as Theano's C
code) against a uniform `u` give the outcome, the first `m` whose running sum exceeds
`u` (the count of running sums `<= u`; none if no sum exceeds `u`). Uniform
`c * N + i` (`N` rows) is row `i`'s draw number `c`, Theano's order. Without
replacement, the chosen outcome's probability becomes 0 and the row is renormalised
before the next draw (a `scan` over the draws when their number is symbolic).
"""

from __future__ import annotations

from typing import Any

from arignote.graph import Variable
from arignote.tensor import basic as T
from arignote.tensor import subtensor as S


def _outcomes(cumulative: Variable, u: Variable) -> Variable:
    """For running sums `(..., K)` and uniforms `(...)`: the count of sums `<= u`
    (`K` when none exceeds `u`)."""
    below = T.le(cumulative, u.dimshuffle(*range(u.ndim), "x"))
    return T.sum(T.cast(below, "int64"), axis=-1)


def _matrices(pvals: Any, unis: Any) -> tuple[Variable, Variable]:
    p, u = T.as_tensor_variable(pvals), T.as_tensor_variable(unis)
    if p.ndim != 2:
        raise NotImplementedError("pvals ndim should be 2", p.ndim)
    if u.ndim != 1:
        raise NotImplementedError("unis ndim should be 1", u.ndim)
    return p, u


class MultinomialFromUniform:
    """`MultinomialFromUniform(odtype)(pvals, unis, n=1)`: for each row of `pvals`, the
    counts of its `n` outcomes drawn with `unis` (`pvals.shape[0] * n` uniforms), of
    `odtype` (`'auto'`: pvals' dtype)."""

    __props__ = ("odtype",)

    def __init__(self, odtype: str):
        self.odtype = odtype

    def __str__(self) -> str:
        return f"{type(self).__name__}{{{self.odtype}}}"

    def __call__(self, pvals: Any, unis: Any, n: Any = 1) -> Variable:
        p, u = _matrices(pvals, unis)
        odtype = p.dtype if self.odtype == "auto" else self.odtype
        rows, outcomes = T.shape(p)[0], T.shape(p)[1]
        cumulative = T.cumsum(T.cast(p, "float64"), axis=1)
        draws = S.reshape(T.cast(u, "float64"), T.stack([T.cast(n, "int64"), rows]), ndim=2)
        chosen = _outcomes(cumulative.dimshuffle("x", 0, 1), draws)  # (n, N)
        hits = T.eq(chosen.dimshuffle(0, 1, "x"), T.arange(outcomes).dimshuffle("x", "x", 0))
        return T.cast(T.sum(T.cast(hits, "int64"), axis=0), odtype)


class ChoiceFromUniform(MultinomialFromUniform):
    """`ChoiceFromUniform(odtype, replace=False)(pvals, unis, n=1)`: for each row of
    `pvals`, `n` outcomes (an `N x n` matrix of `odtype`, `'auto'`: int64) drawn with
    `unis`; -1 where no running sum exceeds the uniform."""

    __props__ = ("odtype", "replace")

    def __init__(self, odtype: str, replace: bool = False, *args: Any, **kwargs: Any):
        super().__init__(odtype)
        self.replace = replace

    def __call__(self, pvals: Any, unis: Any, n: Any = 1) -> Variable:
        p, u = _matrices(pvals, unis)
        odtype = "int64" if self.odtype == "auto" else self.odtype
        count = T.cast(T.as_tensor_variable(n), "int64")
        rows = T.shape(p)[0]
        draws = S.reshape(u, T.stack([count, rows]), ndim=2)
        columns = _draw_columns(T.cast(p, "float64"), draws, count, self.replace)
        return T.cast(columns.T, odtype)


def _choose(p: Variable, u: Variable, replace: bool) -> tuple[Variable, Variable]:
    """One draw for each row of `p` with uniforms `u`: the outcomes (-1 for none) and
    the probabilities for the next draw."""
    outcomes = T.shape(p)[1]
    chosen = _outcomes(T.cumsum(p, axis=1), T.cast(u, "float64"))
    found = T.lt(chosen, outcomes)
    picked = T.switch(found, chosen, -1)
    if replace:
        return picked, p
    taken = T.eq(T.arange(outcomes).dimshuffle("x", 0), chosen.dimshuffle(0, "x"))
    kept = T.switch(taken, 0.0, p)
    total = T.sum(kept, axis=1, keepdims=True)
    return picked, T.switch(found.dimshuffle(0, "x"), kept / total, p)


def _draw_columns(p: Variable, draws: Variable, count: Variable, replace: bool) -> Variable:
    """The `n x N` outcomes of the draws (rows of `draws`), one after the other."""
    from arignote.scan_module import scan

    def step(u: Variable, probabilities: Variable) -> tuple[Variable, Variable]:
        return _choose(probabilities, u, replace)

    (picked, _), _updates = scan(step, sequences=[draws], outputs_info=[None, p])
    return picked
