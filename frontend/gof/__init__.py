"""`arignote.gof` (Theano's `theano.gof`): the graph classes under Theano's module path
(`theano.gof.Op`, `theano.gof.Apply`, `theano.gof.Variable`, ...), re-exported from
`arignote.graph`, where they are defined."""

from __future__ import annotations

from arignote.graph import Apply, Op, TensorConstant, Variable, graph_inputs

Constant = TensorConstant
PureOp = Op

__all__ = ["Apply", "Constant", "Op", "PureOp", "Variable", "graph_inputs"]
