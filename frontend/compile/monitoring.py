"""NanGuardMode and MonitorMode: modes that watch every node as it runs (Theano's
`theano.compile.nanguardmode.NanGuardMode` and `theano.compile.monitormode.MonitorMode`).

Both optimize like `Mode` (the optimizer given, `config.optimizer` by default) and run
the optimized graph with the reference interpreter, whose per-op `listeners`
(`runtime/interpreter.py`) see the values of every node: native code computes a whole
function at once and has no per-node values to show. The nodes are those of
`f.maker.fgraph.toposort()` (constants are not nodes), numbered in that order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.interpreter import Interpreter
from xdsl.ir import Operation

from arignote.compile.mode import Mode, interpret

if TYPE_CHECKING:
    from arignote.compile.mode import Run

BIG = 1e10
"""NanGuardMode's `big_is_error` threshold on absolute values (Theano's)."""


def _nodes(module: ModuleOp) -> dict[Operation, int]:
    """The nodes of `module`'s function (its ops but constants and the return, with the
    ops inside the branches of an `ifelse` but not their `ag.yield`; an `ag.fused` is one
    node, as in `f.maker.fgraph`), numbered."""
    from arignote.dialects import ag

    func = module.ops.first
    assert isinstance(func, FuncOp)
    skipped = ag.ConstantOp | ReturnOp | ag.YieldOp
    ops = [
        op
        for op in func.walk()
        if op is not func
        and not isinstance(op, skipped)
        and not isinstance(op.parent_op(), ag.FusedOp)
    ]
    return {op: i for i, op in enumerate(ops)}


def _apply(op: Operation) -> Any:
    from arignote.graph import Apply

    return Apply(op)


def _node_text(op: Operation) -> str:
    try:
        return f"{op.name}: {_apply(op)!r}"
    except Exception:
        return op.name


# --- NanGuardMode -----------------------------------------------------------------------------


class NanGuardError(AssertionError):
    """A NaN, an Inf or a big value (|x| > 1e10) where NanGuardMode forbids it. An
    AssertionError, as Theano raises. `problems` lists what was found ("NaN", "Inf",
    "Big value"); `node` is the `Apply` view of the node whose output holds it (None for
    an input of the graph), `index` its position in the toposort, `value` the value."""

    def __init__(
        self,
        problems: Sequence[str],
        value: np.ndarray,
        node: Any = None,
        index: int | None = None,
        where: str = "",
        inputs: Sequence[Any] = (),
    ):
        self.problems, self.value, self.node, self.index = list(problems), value, node, index
        lines = [f"{p} detected" for p in problems]
        if node is not None:
            lines.append(f"NanGuardMode found an error in the output of node #{index}: {where}")
            lines.append(f"  inputs: {', '.join(_summary(v) for v in inputs)}")
        else:
            lines.append(f"NanGuardMode found an error in an input of the graph: {where}")
        lines.append(f"  value: {_summary(value)}")
        super().__init__("\n".join(lines))


def _summary(value: Any) -> str:
    if not isinstance(value, np.ndarray):
        return repr(value)
    text = np.array2string(value, threshold=20, edgeitems=3).replace("\n", " ")
    return f"{text} (shape={value.shape}, dtype={value.dtype})"


class NanGuardMode(Mode):
    """Raise `NanGuardError` (an AssertionError) at the first node whose output holds a
    NaN (`nan_is_error`), an Inf (`inf_is_error`) or an absolute value above 1e10
    (`big_is_error`), naming the node; the inputs of the graph are checked first. Runs
    the optimized graph on the reference interpreter (see the module docstring)."""

    def __init__(
        self,
        nan_is_error: bool | None = None,
        inf_is_error: bool | None = None,
        big_is_error: bool | None = None,
        optimizer: Any = "default",
        linker: Any = None,
    ):
        super().__init__(linker="py", optimizer=optimizer)
        self.nan_is_error = True if nan_is_error is None else bool(nan_is_error)
        self.inf_is_error = True if inf_is_error is None else bool(inf_is_error)
        self.big_is_error = True if big_is_error is None else bool(big_is_error)

    def problems(self, value: Any) -> list[str]:
        """What NanGuardMode objects to in `value` ([] when nothing)."""
        value = np.asarray(value)
        found = []
        if value.dtype.kind in "fc" and value.size:
            with np.errstate(all="ignore"):
                if self.nan_is_error and np.isnan(value).any():
                    found.append("NaN")
                if self.inf_is_error and np.isinf(value).any():
                    found.append("Inf")
        if self.big_is_error and value.dtype.kind in "iufc" and value.size:
            finite = value[np.isfinite(value)] if value.dtype.kind in "fc" else value
            if finite.size and np.abs(finite).max() > BIG:
                found.append("Big value")
        return found

    def link(self, module: ModuleOp, optimized: ModuleOp, symbol: str) -> Run:
        guard = _NanGuard(self, _nodes(optimized))
        run = interpret(optimized, symbol, [guard])
        func = optimized.ops.first
        assert isinstance(func, FuncOp)
        names = [a.name_hint for a in func.body.block.args]

        def call(arrays: list[np.ndarray]) -> list[np.ndarray]:
            for i, (value, name) in enumerate(zip(arrays, names, strict=True)):
                found = self.problems(value)
                if found:
                    where = f"input #{i}" + (f" ({name})" if name else "")
                    raise NanGuardError(found, np.asarray(value), where=where)
            return run(arrays)

        return call


class _NanGuard(Interpreter.Listener):
    def __init__(self, mode: NanGuardMode, nodes: dict[Operation, int]):
        self.mode, self.nodes = mode, nodes
        self.args: tuple[Any, ...] = ()

    def will_interpret_op(self, op: Operation, args: tuple[Any, ...]) -> None:
        if op in self.nodes:
            self.args = args

    def did_interpret_op(self, op: Operation, results: tuple[Any, ...]) -> None:
        index = self.nodes.get(op)
        if index is None:
            return
        for value in results:
            found = self.mode.problems(value)
            if found:
                raise NanGuardError(
                    found, np.asarray(value), _apply(op), index, _node_text(op), self.args
                )


# --- MonitorMode ---------------------------------------------------------------------------------


class NodeThunk:
    """What MonitorMode's callbacks receive as `fn` (Theano's thunk): `inputs` and
    `outputs` are lists of one-element cells, `fn.inputs[k][0]` the value of input `k`
    and `fn.outputs[k][0]` that of output `k` (None before the node ran). Calling it does
    nothing: the interpreter computes the node between `pre_func` and `post_func`."""

    def __init__(self, node: Any, inputs: Sequence[Any], n_outputs: int):
        self.node = node
        self.inputs: list[list[Any]] = [[v] for v in inputs]
        self.outputs: list[list[Any]] = [[None] for _ in range(n_outputs)]

    def __call__(self) -> None:
        return None


Callback = Callable[[int, Any, NodeThunk], Any]


class MonitorMode(Mode):
    """Call `pre_func(i, node, fn)` before and `post_func(i, node, fn)` after each node:
    `i` is the node's index in `f.maker.fgraph.toposort()`, `node` its `Apply` view and
    `fn` a `NodeThunk` with the node's input values (`fn.inputs[k][0]`) and, in
    `post_func`, its output values (`fn.outputs[k][0]`). Runs the optimized graph on
    the reference interpreter (see the module docstring)."""

    def __init__(
        self,
        pre_func: Callback | None = None,
        post_func: Callback | None = None,
        optimizer: Any = "default",
        linker: Any = None,
    ):
        super().__init__(linker="py", optimizer=optimizer)
        self.pre_func = pre_func
        self.post_func = post_func

    def eval(self, i: int, node: Any, fn: NodeThunk) -> None:
        """Theano's hook around one node: pre_func, the node, post_func."""
        if self.pre_func is not None:
            self.pre_func(i, node, fn)
        fn()
        if self.post_func is not None:
            self.post_func(i, node, fn)

    def link(self, module: ModuleOp, optimized: ModuleOp, symbol: str) -> Run:
        return interpret(optimized, symbol, [_Monitor(self, _nodes(optimized))])


class _Monitor(Interpreter.Listener):
    def __init__(self, mode: MonitorMode, nodes: dict[Operation, int]):
        self.mode, self.nodes = mode, nodes
        self.current: dict[Operation, NodeThunk] = {}

    def will_interpret_op(self, op: Operation, args: tuple[Any, ...]) -> None:
        index = self.nodes.get(op)
        if index is None:
            return
        thunk = NodeThunk(_apply(op), list(args), len(op.results))
        self.current[op] = thunk
        if self.mode.pre_func is not None:
            self.mode.pre_func(index, thunk.node, thunk)

    def did_interpret_op(self, op: Operation, results: tuple[Any, ...]) -> None:
        thunk = self.current.pop(op, None)
        if thunk is None:
            return
        for cell, value in zip(thunk.outputs, results, strict=True):
            cell[0] = value
        if self.mode.post_func is not None:
            self.mode.post_func(self.nodes[op], thunk.node, thunk)
