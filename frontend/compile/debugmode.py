"""DebugMode: every graph rewrite checked at compile time, the optimized function checked
against the reference interpreter at every call, and a difference traced to the graph
pass that made it (Theano's `theano.compile.debugmode`).

Compile time: the mode's graph pipeline runs one pass at a time (`apply_pass`); the IR
before and after each pass is run by the reference interpreter on the same random inputs
of the function's types (small shapes; every dynamic dimension has the same length so
that dynamic dimensions broadcast); different results raise `BadOptimization` naming the
pass, with both IR texts and both values. When no trial shape runs on the IR before the
pass (a constant index or reshape that needs other lengths), that pass is not checked.

Call time: the reference interpreter runs the *unoptimized* module and native code the
optimized one (with `check_c_code=False`, the interpreter), on the same arguments (the
interpreter on copies):

- an argument array that the native call changed → `BadDestroyMap`, unless the optimized
  function declares that a result may be computed in that argument's buffer
  (`ag.inplace_results`, the `inplace-update` pass) and the result is that buffer;
- an output that differs beyond the tolerance of its dtype (float32: rtol 1e-4 and atol
  1e-5; float64: rtol 1e-10 and atol 1e-12; integers and bools exactly; NaNs must sit at
  the same places) → the graph pipeline is replayed on the unoptimized module, one pass
  at a time, and the IR after each pass run by the interpreter on the call's arguments:
  the first pass after which a result differs from the unoptimized graph's raises
  `BadOptimization` (a rewrite wrong only for some inputs, which the random inputs of
  the compile-time check missed). When every pass keeps the results, the difference
  comes from the lowering: `BadThunkOutput`, naming the output and, found by compiling
  each node of the optimized graph alone and running it on the interpreter's values of
  its inputs, the first node whose native code disagrees with the interpreter. The
  replay runs only for a call whose results differ;
- with `check_isfinite` (the default, as Theano's `config.DebugMode.check_finite`), a NaN
  or Inf in a native output → `InvalidValueError` naming the first node of the optimized
  graph (run by the interpreter) that produced one.

The call returns the optimized function's outputs. `config.exception_verbosity='high'`
prints whole arrays in the messages instead of summaries.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.interpreter import Interpreter
from xdsl.ir import Block, Operation, Region

from arignote.compile.mode import (
    Mode,
    _on_gpu,
    compile_native,
    interpret,
    ops_without_native_lowering,
)
from arignote.configuration import config
from arignote.dialects import ag

if TYPE_CHECKING:
    from arignote.compile.mode import Run

TOLERANCES: dict[str, tuple[float, float]] = {
    "float32": (1e-4, 1e-5),
    "float64": (1e-10, 1e-12),
}
"""dtype → (rtol, atol) of DebugMode's comparisons; other dtypes compare exactly."""

TRIAL_LENGTHS = (3, 4, 6, 1)
"""The lengths tried for every dynamic dimension of the random inputs of the pass checks."""


# --- exceptions -----------------------------------------------------------------------------


def debugprint(*args: Any, **kwargs: Any) -> Any:
    """Theano's `theano.compile.debugmode.debugprint`: `arignote.printing.debugprint`."""
    from arignote.printing import debugprint as _debugprint

    return _debugprint(*args, **kwargs)


class DebugModeError(Exception):
    """Base class of the errors DebugMode raises."""


class BadOptimization(DebugModeError):
    """A graph pass changed what the function computes.

    `reason` is the pass name; `old_graph` / `new_graph` the module text before / after
    it; `old_r_val` / `new_r_val` the two values of output number `r`; `inputs` the
    inputs used: random ones at compile time, the call's arguments at call time
    (`at_call`). `max_diff` is the largest absolute difference between the two values
    (inf where a NaN meets a number; None when their shapes differ) and `max_diff_index`
    where it is; `removed_nodes` / `added_nodes` describe the nodes only the graph
    before / after the pass has (a node whose inputs changed is in both)."""

    def __init__(
        self,
        reason: str,
        r: int,
        old_r_val: Any,
        new_r_val: Any,
        old_graph: str,
        new_graph: str,
        inputs: Sequence[np.ndarray],
        detail: str = "",
        *,
        at_call: bool = False,
        r_name: str = "",
        changed_nodes: tuple[list[str], list[str]] = ([], []),
        tolerances: Mapping[str, tuple[float, float]] | None = None,
    ):
        self.reason, self.r = reason, r
        self.old_r_val, self.new_r_val = old_r_val, new_r_val
        self.old_graph, self.new_graph = old_graph, new_graph
        self.inputs, self.at_call = list(inputs), at_call
        self.removed_nodes, self.added_nodes = changed_nodes
        self.max_diff, self.max_diff_index = max_difference(old_r_val, new_r_val)
        output = r_name or f"output #{r} of the function"
        inputs_kind = "the call's arguments" if at_call else "random"
        lines = [
            f"BadOptimization: the graph pass {reason!r} changed {output}"
            + (f" ({detail})" if detail else ""),
            *_how_found(at_call),
            *_difference_lines(self, TOLERANCES if tolerances is None else tolerances),
            *_node_lines("removed", self.removed_nodes),
            *_node_lines("added", self.added_nodes),
            f"  inputs ({inputs_kind}): {_show_list(self.inputs)}",
            f"  value before {reason}: {_show(old_r_val)}",
            f"  value after {reason}:  {_show(new_r_val)}",
            f"  IR before {reason}:",
            _indent(old_graph),
            f"  IR after {reason}:",
            _indent(new_graph),
        ]
        super().__init__("\n".join(lines))


def _how_found(at_call: bool) -> list[str]:
    if not at_call:
        return []
    return [
        "  found at call time: the optimized function differed from the unoptimized graph;",
        "  the graph pipeline, replayed pass by pass on the call's arguments, differs first",
        "  after this pass",
    ]


def _difference_lines(
    err: BadOptimization, tolerances: Mapping[str, tuple[float, float]]
) -> list[str]:
    if err.max_diff is None:
        return []
    line = f"  max |difference| {_short(err.max_diff)} at index {err.max_diff_index}"
    old, new = np.asarray(err.old_r_val), np.asarray(err.new_r_val)
    if old.ndim or new.ndim:
        i = err.max_diff_index
        line += f": {_short(old[i].item())} before, {_short(new[i].item())} after"
    rtol, atol = tolerances.get(old.dtype.name, (0.0, 0.0))
    exact = old.dtype.kind not in "fc" or (rtol, atol) == (0.0, 0.0)
    tolerance = "compared exactly" if exact else f"rtol {rtol!r}, atol {atol!r}"
    return [f"{line} ({old.dtype.name}: {tolerance})"]


def _short(value: Any) -> str:
    """A number as a message shows it: floats with 8 significant digits."""
    if not isinstance(value, float):
        return repr(value)
    text = f"{value:.8g}"
    return text if any(c in text for c in ".eni") else text + ".0"  # 6.0, not 6


_NODES_SHOWN = 8
"""How many removed / added nodes a BadOptimization message lists."""


def _node_lines(what: str, nodes: Sequence[str]) -> list[str]:
    if not nodes:
        return []
    lines = [f"  nodes the pass {what}:"]
    lines += [f"    {node}" for node in nodes[:_NODES_SHOWN]]
    if len(nodes) > _NODES_SHOWN:
        lines.append(f"    ... and {len(nodes) - _NODES_SHOWN} more")
    return lines


class BadThunkOutput(DebugModeError):
    """The optimized function and the reference interpreter disagree on an output, and
    no graph pass made the difference.

    `r` is the output's index and `r_name` its description; `node` (an `Apply` view of
    the optimized graph, or None) the first node whose native code disagrees with the
    interpreter; `val1` the interpreter's value (`thunk1`), `val2` the optimized
    function's (`thunk2`: native code, or the interpreter with `check_c_code=False`);
    `inputs_val` the call's arguments."""

    thunk1 = "reference interpreter (unoptimized graph)"
    thunk2 = "native code (optimized graph)"

    def __init__(
        self,
        r: int,
        r_name: str,
        val1: Any,
        val2: Any,
        inputs_val: Sequence[np.ndarray],
        node: Any = None,
        node_text: str = "",
        node_vals: tuple[Any, Any] | None = None,
        *,
        passes_agree: bool = False,
        native: bool = True,
    ):
        self.r, self.r_name, self.val1, self.val2 = r, r_name, val1, val2
        self.inputs_val, self.node = list(inputs_val), node
        if not native:
            self.thunk2 = "reference interpreter (optimized graph)"
        tested = "native code" if native else "the optimized graph"
        lines = [
            f"BadThunkOutput: {r_name} differs between the reference interpreter and {tested}",
            f"  {self.thunk1}: {_show(val1)}",
            f"  {self.thunk2}: {_show(val2)}",
        ]
        if passes_agree:
            lines.append(
                "  no graph pass changed the result (replayed pass by pass on these inputs):"
                " the difference comes from the lowering"
            )
        if node_text:
            lines.append(f"  first node whose native code differs: {node_text}")
            if node_vals is not None:
                lines.append(f"    interpreter: {_show(node_vals[0])}")
                lines.append(f"    native:      {_show(node_vals[1])}")
        elif native:
            lines.append("  no single node of the optimized graph differs on its own")
        lines.append(f"  inputs: {_show_list(self.inputs_val)}")
        super().__init__("\n".join(lines))


class BadDestroyMap(DebugModeError):
    """Native code overwrote an input array (no arignote op declares that it does).

    `idx` is the argument's index, `name` its description, `old_val` / `new_val` its
    value before / after the call."""

    def __init__(self, idx: int, name: str, old_val: Any, new_val: Any):
        self.idx, self.name, self.old_val, self.new_val = idx, name, old_val, new_val
        super().__init__(
            f"BadDestroyMap: native code modified {name}, which no op declares it destroys\n"
            f"  before the call: {_show(old_val)}\n"
            f"  after the call:  {_show(new_val)}"
        )


class BadViewMap(DebugModeError):
    """A result of the compiled function shares memory with an argument or with another
    result, which no op declares (arignote's results are fresh arrays, except a result
    computed in an argument's buffer by a declared in-place update). `output_idx` is the
    result, `in_alias_idx` / `out_alias_idx` the argument / other result it aliases."""

    def __init__(
        self,
        output_idx: int,
        what: str,
        in_alias_idx: int | None = None,
        out_alias_idx: int | None = None,
    ):
        self.output_idx, self.in_alias_idx, self.out_alias_idx = (
            output_idx,
            in_alias_idx,
            out_alias_idx,
        )
        super().__init__(f"BadViewMap: result {output_idx} shares memory with {what}")


class StochasticOrder(DebugModeError):
    """The graph passes gave different graphs when run again on the same graph (a pass
    whose result depends on iteration order, hashing or memory addresses)."""

    def __init__(self, first: str, other: str, run: int):
        self.first, self.other = first, other
        lines = [f"StochasticOrder: optimizing the same graph again (run {run}) gave another graph"]
        lines += _difference_text(first, other)
        super().__init__("\n".join(lines))


def _difference_text(first: str, other: str) -> list[str]:
    import difflib

    diff = difflib.unified_diff(
        first.splitlines(), other.splitlines(), "first", "again", lineterm="", n=1
    )
    return ["  " + line for line in list(diff)[:40]]


class InvalidValueError(DebugModeError):
    """A NaN or Inf where `check_isfinite` forbids it. `node` is the `Apply` view of the
    node that produced it (None if not found), `v` the value."""

    def __init__(self, what: str, v: Any, node: Any = None, node_text: str = ""):
        self.r, self.v, self.node = what, v, node
        where = f"\n  produced first by node {node_text}" if node_text else ""
        super().__init__(
            f"InvalidValueError: {what} contains NaN or Inf: {_show(v)}{where}\n"
            "  (DebugMode(check_isfinite=False) allows them)"
        )


# --- values ----------------------------------------------------------------------------------


def _show(value: Any) -> str:
    if not isinstance(value, np.ndarray):
        return repr(value)
    if config.exception_verbosity == "high":
        return f"shape={value.shape} dtype={value.dtype} {np.array2string(value, threshold=10**9)}"
    return f"shape={value.shape} dtype={value.dtype} " + np.array2string(
        value, threshold=20, edgeitems=3
    ).replace("\n", " ")


def _show_list(values: Sequence[Any]) -> str:
    return "[" + ", ".join(_show(v) for v in values) + "]"


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def values_match(
    a: Any, b: Any, tolerances: Mapping[str, tuple[float, float]] = TOLERANCES
) -> bool:
    """Whether two results agree: same dtype and shape; floats within the dtype's
    (rtol, atol) with NaNs in the same places; everything else exactly."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind in "fc":
        rtol, atol = tolerances.get(a.dtype.name, (0.0, 0.0))
        with np.errstate(all="ignore"):
            return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))
    return bool(np.array_equal(a, b))


_REAL_PAIRS = {x + y for x in "biuf" for y in "biuf"}
"""The pairs of dtype kinds `max_difference` compares (bool, integers, floats)."""


def max_difference(a: Any, b: Any) -> tuple[float | None, tuple[int, ...] | None]:
    """The largest absolute difference between two results of one shape and where it
    is: 0 where both are equal (NaN and NaN, inf and inf included), inf where only one
    is NaN (or the infinities differ). (None, None) for values of different shapes, no
    elements, or not numbers (a missing value)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.size == 0 or a.dtype.kind + b.dtype.kind not in _REAL_PAIRS:
        return None, None
    with np.errstate(all="ignore"):
        x, y = a.astype(np.float64), b.astype(np.float64)
        same = (x == y) | (np.isnan(x) & np.isnan(y))
        diff = np.where(same, 0.0, np.abs(x - y))
        diff = np.where(np.isnan(diff), np.inf, diff)
    index = np.unravel_index(int(np.argmax(diff)), diff.shape)
    return float(diff[index]), tuple(int(i) for i in index)


def first_mismatch(
    expected: Sequence[Any], got: Sequence[Any], tolerances: Mapping[str, tuple[float, float]]
) -> int | None:
    """The index of the first result of `got` that does not match `expected`
    (`values_match`), or None."""
    for r, (a, b) in enumerate(zip(expected, got, strict=True)):
        if not values_match(a, b, tolerances):
            return r
    return None


def _same_array(a: np.ndarray, b: np.ndarray) -> bool:
    return (
        a.dtype == b.dtype
        and a.shape == b.shape
        and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    )


def random_inputs(func: FuncOp, length: int, rng: np.random.Generator) -> list[np.ndarray]:
    """One random array per argument of `func`: static dimensions as typed, every dynamic
    dimension `length`; floats in [-1, 1), integers in [-3, 3], random bools."""
    from arignote.dialects import ag
    from arignote.runtime.dtypes import numpy_dtype

    arrays = []
    for t in func.function_type.inputs.data:
        assert isinstance(t, TensorType)
        shape = tuple(length if d == ag.DYNAMIC else d for d in t.get_shape())
        dtype = numpy_dtype(t.element_type)
        if dtype.kind == "f":
            value = rng.uniform(-1.0, 1.0, shape)
        elif dtype.kind == "b":
            value = rng.integers(0, 2, shape).astype(bool)
        else:
            value = rng.integers(-3, 4, shape)
        arrays.append(np.asarray(value, dtype=dtype))
    return arrays


def _inplace_results(module: ModuleOp) -> dict[int, int]:
    """The `ag.inplace_results` of the module's function: result → argument."""
    f = module.ops.first
    return ag.result_pairs(f, ag.INPLACE_RESULTS_ATTRIBUTE) if isinstance(f, FuncOp) else {}


def _symbol(module: ModuleOp) -> str:
    func = module.ops.first
    assert isinstance(func, FuncOp)
    return func.sym_name.data


def _input_names(module: ModuleOp) -> list[str]:
    func = module.ops.first
    assert isinstance(func, FuncOp)
    names = []
    for i, arg in enumerate(func.body.block.args):
        hint = f" ({arg.name_hint})" if arg.name_hint else ""
        names.append(f"input #{i}{hint}")
    return names


def _output_names(module: ModuleOp) -> list[str]:
    func = module.ops.first
    assert isinstance(func, FuncOp)
    ret = func.body.block.last_op
    assert isinstance(ret, ReturnOp)
    names = []
    for i, value in enumerate(ret.arguments):
        hint = f" ({value.name_hint})" if value.name_hint else ""
        names.append(f"output #{i}{hint} of @{func.sym_name.data}")
    return names


def _node_text(op: Operation) -> str:
    from arignote.graph import Apply

    try:
        return f"{op.name}: {Apply(op)!r}"
    except Exception:
        return op.name


def _apply(op: Operation) -> Any:
    from arignote.graph import Apply

    return Apply(op)


class _Recorder(Interpreter.Listener):
    """Keeps a copy of the operand and result values of every `ag` op interpreted."""

    def __init__(self) -> None:
        self.values: dict[Operation, tuple[list[np.ndarray], list[np.ndarray]]] = {}
        self.order: list[Operation] = []
        self._args: dict[Operation, list[np.ndarray]] = {}

    def will_interpret_op(self, op: Operation, args: tuple[Any, ...]) -> None:
        if op.name.startswith("ag."):
            self._args[op] = [np.array(a, copy=True) for a in args]

    def did_interpret_op(self, op: Operation, results: tuple[Any, ...]) -> None:
        if op in self._args:
            self.values[op] = (self._args.pop(op), [np.array(r, copy=True) for r in results])
            self.order.append(op)


def _record(module: ModuleOp, arrays: Sequence[np.ndarray]) -> _Recorder:
    recorder = _Recorder()
    interpret(module, _symbol(module), [recorder])([np.array(a, copy=True) for a in arrays])
    return recorder


def single_op_module(op: Operation) -> ModuleOp:
    """A module whose `@fn_node` takes `op`'s operands and returns its results."""
    block = Block(arg_types=[v.type for v in op.operands])
    mapping = dict(zip(op.operands, block.args, strict=True))
    new = op.clone(value_mapper=mapping)
    block.add_op(new)
    block.add_op(ReturnOp(*new.results))
    signature = ([v.type for v in op.operands], [r.type for r in new.results])
    return ModuleOp([FuncOp("fn_node", signature, Region(block))])


def _graph_nodes(module: ModuleOp) -> Counter[str]:
    """The description of every op of `module` that is a node of the graph (constants,
    terminators and the function itself are not), counted."""
    skip = (ModuleOp, FuncOp, ReturnOp, ag.YieldOp, ag.ConstantOp)
    return Counter(_node_where(op) for op in module.walk() if not isinstance(op, skip))


def _node_where(op: Operation) -> str:
    """`_node_text` and the user's source line that built the op (its `ag.node`)."""
    from xdsl.dialects.builtin import StringAttr

    label = op.attributes.get("ag.node")
    where = label.data.partition(" at ")[2] if isinstance(label, StringAttr) else ""
    return _node_text(op) + (f" at {where}" if where else "")


def changed_nodes(before: ModuleOp, after: ModuleOp) -> tuple[list[str], list[str]]:
    """The nodes only `before` has and those only `after` has, described as
    `op name: Theano view` (a node whose inputs a pass replaced is in both)."""
    old, new = _graph_nodes(before), _graph_nodes(after)
    return sorted((old - new).elements()), sorted((new - old).elements())


def apply_pass(module: ModuleOp, item: str) -> ModuleOp:
    """A verified copy of `module` after the one graph pass `item` (a pass-spec item)."""
    from arignote.lowering.driver import apply_pipeline, make_context

    after = module.clone()
    apply_pipeline(make_context(), after, item)
    after.verify()
    return after


# --- the mode -------------------------------------------------------------------------------


class DebugMode(Mode):
    """Theano's DebugMode: optimizer `optimizer` (default "fast_run") with every graph
    pass checked at compile time, the optimized function compared with the unoptimized
    graph on the reference interpreter at every call, and a call-time difference traced
    to the graph pass that made it (see the module docstring). The optimized function
    runs as native code, or with `check_c_code=False` (Theano's "no C code") on the
    reference interpreter; `config.linker` has no effect. Theano's other arguments are
    accepted and have no effect."""

    def __init__(
        self,
        optimizer: Any = "fast_run",
        stability_patience: Any = None,
        check_c_code: Any = None,
        check_py_code: Any = None,
        check_isfinite: bool | None = None,
        check_preallocated_output: Any = None,
        require_matching_strides: Any = None,
        linker: Any = None,
        tolerances: Mapping[str, tuple[float, float]] | None = None,
    ):
        native = check_c_code is None or bool(check_c_code)
        super().__init__(linker="cvm" if native else "py", optimizer=optimizer)
        self.stability_patience = 2 if stability_patience is None else int(stability_patience)
        """How many times the graph passes run on each graph (the results must agree,
        else StochasticOrder); Theano's default is 10, arignote's 2."""
        self.check_isfinite = True if check_isfinite is None else bool(check_isfinite)
        self.tolerances = dict(TOLERANCES if tolerances is None else tolerances)

    # --- compile time: each graph pass checked --------------------------------------------

    def graph_passes(self) -> list[str]:
        """The items of `graph_pipeline()`: the passes `optimize` runs one at a time."""
        from arignote.lowering.pipelines import split_pass_spec

        return split_pass_spec(self.graph_pipeline())

    def optimize(self, module: ModuleOp) -> ModuleOp:
        current = module
        for item in self.graph_passes():
            after = apply_pass(current, item)
            self.check_pass(item, current, after)
            current = after
        self.check_stable(module, current)
        return current

    def check_stable(self, module: ModuleOp, optimized: ModuleOp) -> None:
        """Raise StochasticOrder unless the graph passes, run again on `module`
        (`stability_patience - 1` more times), give the same IR as `optimized`."""
        first = str(optimized)
        for run in range(2, self.stability_patience + 1):
            again = module
            for item in self.graph_passes():
                again = apply_pass(again, item)
            if str(again) != first:
                raise StochasticOrder(first, str(again), run)

    def check_pass(self, name: str, before: ModuleOp, after: ModuleOp) -> None:
        """Raise BadOptimization unless `before` and `after` compute the same results on
        random inputs (the first trial length that `before` runs on)."""
        func = before.ops.first
        assert isinstance(func, FuncOp)
        rng = np.random.default_rng(0)
        for length in TRIAL_LENGTHS:
            inputs = random_inputs(func, length, rng)
            try:
                old = interpret(before, _symbol(before))([a.copy() for a in inputs])
            except Exception:
                continue  # these lengths do not suit the graph; try the next ones
            error, _ = pass_difference(name, before, after, inputs, old, old, self.tolerances)
            if error is not None:
                raise error
            return

    # --- call time: the optimized function against the unoptimized graph -------------

    def _on_device(self, optimized: ModuleOp, symbol: str) -> Run | None:
        """With `config.device=cuda`: the GPU function to check against the interpreter
        (None when it cannot run on the GPU: then the CPU's native code is checked)."""
        run = self.link_gpu(optimized, symbol)
        return None if run is None else _gpu_results(run)

    def link(self, module: ModuleOp, optimized: ModuleOp, symbol: str) -> Run:
        """The checking callable; `optimized` must be `self.optimize(module)` (its call-
        time replay runs `graph_passes()` again on `module`)."""
        reference = interpret(module, symbol)
        native = not self.uses_interpreter and not ops_without_native_lowering(optimized)
        tested = self._on_device(optimized, symbol) if native and _on_gpu() else None
        if tested is None:
            tested = compile_native(optimized, symbol) if native else interpret(optimized, symbol)
        passes = tuple(self.graph_passes())
        return _DebugRun(self, reference, tested, module, optimized, passes, native)


def _gpu_results(run: Run) -> Run:
    """A GPU function's run returning NumPy arrays (DebugMode compares them)."""
    from arignote.runtime.cuda import to_host

    def tested(arrays: list[np.ndarray]) -> list[np.ndarray]:
        return [to_host(r) for r in run(arrays)]

    tested.gpu = run.gpu  # type: ignore[attr-defined]
    return tested


def pass_difference(
    name: str,
    before: ModuleOp,
    after: ModuleOp,
    inputs: Sequence[np.ndarray],
    reference: Sequence[Any],
    old: Sequence[Any],
    tolerances: Mapping[str, tuple[float, float]],
    *,
    at_call: bool = False,
    output_names: Sequence[str] = (),
) -> tuple[BadOptimization | None, list[np.ndarray]]:
    """Run `after` (the IR after graph pass `name`; `before` the IR before it, whose
    results were `old`) on `inputs` with the interpreter. Returns the BadOptimization
    to raise when its results differ from `reference` (or it fails), else None; and
    its results."""

    def error(r: int, new_r_val: Any, detail: str = "") -> BadOptimization:
        return BadOptimization(
            name,
            r,
            old[r] if r < len(old) else None,
            new_r_val,
            str(before),
            str(after),
            inputs,
            detail,
            at_call=at_call,
            r_name=output_names[r] if r < len(output_names) else "",
            changed_nodes=changed_nodes(before, after),
            tolerances=tolerances,
        )

    try:
        new = interpret(after, _symbol(after))([np.array(a, copy=True) for a in inputs])
    except Exception as e:
        failed = error(0, None, f"the IR after it fails where the IR before runs: {_what(e)}")
        failed.__cause__ = e
        return failed, []
    if len(new) != len(reference):
        return error(0, new, f"{len(reference)} results before, {len(new)} after"), new
    r = first_mismatch(reference, new, tolerances)
    return (None if r is None else error(r, new[r])), new


def _what(e: Exception) -> str:
    return f"{type(e).__name__}: {e}"


class _DebugRun:
    """One DebugMode function: runs both, compares, returns the tested results."""

    def __init__(
        self,
        mode: DebugMode,
        reference: Run,
        tested: Run,
        module: ModuleOp,
        optimized: ModuleOp,
        passes: tuple[str, ...],
        native: bool,
    ):
        self.mode = mode
        self.reference = reference
        self.tested = tested
        self.module = module
        self.optimized = optimized
        self.passes = passes
        """The graph passes that made `optimized` from `module`, in order."""
        self.native = native
        """Whether `tested` is native code (else the interpreter on `optimized`)."""
        self.input_names = _input_names(module)
        self.output_names = _output_names(module)
        self.destroyed = {a: r for r, a in _inplace_results(optimized).items()}

    def __call__(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        arrays = [np.asarray(a) for a in arrays]
        originals = [np.array(a, copy=True) for a in arrays]
        expected = self.reference([np.array(a, copy=True) for a in arrays])
        results = self.tested(arrays)
        for i, (before, after) in enumerate(zip(originals, arrays, strict=True)):
            if not _same_array(before, after) and not self._declared(i, after, results):
                raise BadDestroyMap(i, self.input_names[i], before, np.array(after, copy=True))
        self._check_views(arrays, results)
        r = first_mismatch(expected, results, self.mode.tolerances)
        if r is not None:
            self._differs(r, expected, results[r], originals)
        if self.mode.check_isfinite:
            for r, value in enumerate(results):
                if value.dtype.kind == "f" and not np.isfinite(value).all():
                    self._invalid(self.output_names[r], value, originals)
        return results

    def _check_views(self, arrays: list[np.ndarray], results: list[np.ndarray]) -> None:
        """BadViewMap for a result that shares memory with an argument (other than the
        declared in-place one) or with another result."""
        for r, value in enumerate(results):
            if not isinstance(value, np.ndarray) or value.size == 0:
                continue
            for i, argument in enumerate(arrays):
                if self.destroyed.get(i) != r and np.shares_memory(value, argument):
                    raise BadViewMap(r, f"argument {i} ({self.input_names[i]})", in_alias_idx=i)
            for other in range(r):
                if isinstance(results[other], np.ndarray) and np.shares_memory(
                    value, results[other]
                ):
                    raise BadViewMap(r, f"result {other}", out_alias_idx=other)

    def _declared(self, i: int, after: np.ndarray, results: list[np.ndarray]) -> bool:
        """Whether argument `i` was overwritten by the result declared to take its buffer
        (`ag.inplace_results`)."""
        r = self.destroyed.get(i)
        return r is not None and np.shares_memory(after, results[r])

    def _differs(self, r: int, expected: list[np.ndarray], got: Any, inputs: list[np.ndarray]):
        """Output `r` differs: raise BadOptimization for the graph pass that made the
        difference, else BadThunkOutput."""
        culprit, replayed = self.replay(inputs, expected)
        if culprit is not None:
            raise culprit
        self._bad_output(r, expected[r], got, inputs, passes_agree=replayed)

    def replay(
        self, inputs: list[np.ndarray], expected: list[np.ndarray]
    ) -> tuple[BadOptimization | None, bool]:
        """Apply the graph passes to the unoptimized module again, one at a time, and
        run the IR after each on `inputs` with the interpreter, up to the first whose
        results differ from `expected` (the unoptimized graph's): its BadOptimization.
        Returns (None, True) when no pass changes the results; (None, False) when the
        replay itself failed."""
        current, old = self.module, expected
        try:
            for item in self.passes:
                after = apply_pass(current, item)
                culprit, old = pass_difference(
                    item,
                    current,
                    after,
                    inputs,
                    expected,
                    old,
                    self.mode.tolerances,
                    at_call=True,
                    output_names=self.output_names,
                )
                if culprit is not None:
                    return culprit, True
                current = after
        except Exception:  # tracing is best effort; the difference itself is certain
            return None, False
        return None, True

    def _culprit_node(self, inputs: list[np.ndarray]) -> tuple[Operation | None, Any]:
        """The first node of the optimized graph whose native code, run alone on the
        interpreter's values of its operands, differs from the interpreter, with both
        values."""
        recorder = _record(self.optimized, inputs)
        for op in recorder.order:
            if op.regions or isinstance(op, ag.YieldOp):
                continue  # control flow: the ops of its regions are checked alone
            args, expected = recorder.values[op]
            got = compile_native(single_op_module(op), "fn_node")([a.copy() for a in args])
            for e, g in zip(expected, got, strict=True):
                if not values_match(e, g, self.mode.tolerances):
                    return op, (e, g)
        return None, None

    def _bad_output(
        self, r: int, a: Any, b: Any, inputs: list[np.ndarray], passes_agree: bool
    ) -> None:
        culprit: Operation | None = None
        vals: tuple[Any, Any] | None = None
        if self.native:
            try:
                culprit, vals = self._culprit_node(inputs)
            except Exception:  # localizing is best effort; the mismatch itself is certain
                pass
        raise BadThunkOutput(
            r,
            self.output_names[r],
            a,
            b,
            inputs,
            _apply(culprit) if culprit is not None else None,
            _node_text(culprit) if culprit is not None else "",
            vals,
            passes_agree=passes_agree,
            native=self.native,
        )

    def _invalid(self, what: str, value: np.ndarray, inputs: list[np.ndarray]) -> None:
        culprit = None
        try:
            recorder = _record(self.optimized, inputs)
            for op in recorder.order:
                if op.name == "ag.constant":
                    continue
                if any(
                    v.dtype.kind == "f" and not np.isfinite(v).all() for v in recorder.values[op][1]
                ):
                    culprit = op
                    break
        except Exception:
            pass
        raise InvalidValueError(
            what,
            value,
            _apply(culprit) if culprit is not None else None,
            _node_text(culprit) if culprit is not None else "",
        )
