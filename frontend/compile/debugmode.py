"""DebugMode: every graph rewrite checked at compile time, native code checked against
the reference interpreter at every call (Theano's `theano.compile.debugmode`).

Compile time: the mode's graph pipeline runs one pass at a time
(`lowering.driver.apply_pipeline` with one pass); the IR before and after each pass is
run by the reference interpreter on the same random inputs of the function's types
(small shapes; every dynamic dimension has the same length so that dynamic dimensions
broadcast); different results raise `BadOptimization` naming the pass, with both IR texts
and both values. When no trial shape runs on the IR before the pass (a constant index or
reshape that needs other lengths), that pass is not checked.

Call time: the reference interpreter runs the *unoptimized* module and native code the
optimized one, on the same arguments (the interpreter on copies):

- an argument array that the native call changed → `BadDestroyMap`, unless the optimized
  function declares that a result may be computed in that argument's buffer
  (`ag.inplace_results`, the `inplace-update` pass) and the result is that buffer;
- an output that differs beyond the tolerance of its dtype (float32: rtol 1e-4 and atol
  1e-5; float64: rtol 1e-10 and atol 1e-12; integers and bools exactly; NaNs must sit at
  the same places) → `BadThunkOutput`, naming the output and, found by compiling each node
  of the optimized graph alone and running it on the interpreter's values of its inputs,
  the first node whose native code disagrees with the interpreter;
- with `check_isfinite` (the default, as Theano's `config.DebugMode.check_finite`), a NaN
  or Inf in a native output → `InvalidValueError` naming the first node of the optimized
  graph (run by the interpreter) that produced one.

The call returns the native outputs. `config.exception_verbosity='high'` prints whole
arrays in the messages instead of summaries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.interpreter import Interpreter
from xdsl.ir import Block, Operation, Region

from arignote.compile.mode import Mode, compile_native, interpret, ops_without_native_lowering
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


class DebugModeError(Exception):
    """Base class of the errors DebugMode raises."""


class BadOptimization(DebugModeError):
    """A graph pass changed what the function computes.

    `reason` is the pass name; `old_graph` / `new_graph` the module text before / after
    it; `old_r_val` / `new_r_val` the two values of output number `r`; `inputs` the
    random inputs used."""

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
    ):
        self.reason, self.r = reason, r
        self.old_r_val, self.new_r_val = old_r_val, new_r_val
        self.old_graph, self.new_graph = old_graph, new_graph
        self.inputs = list(inputs)
        lines = [
            f"BadOptimization: the graph pass {reason!r} changed output #{r} of the function"
            + (f" ({detail})" if detail else ""),
            f"  inputs (random): {_show_list(self.inputs)}",
            f"  value before {reason}: {_show(old_r_val)}",
            f"  value after {reason}:  {_show(new_r_val)}",
            f"  IR before {reason}:",
            _indent(old_graph),
            f"  IR after {reason}:",
            _indent(new_graph),
        ]
        super().__init__("\n".join(lines))


class BadThunkOutput(DebugModeError):
    """Native code and the reference interpreter disagree on an output.

    `r` is the output's index and `r_name` its description; `node` (an `Apply` view of
    the optimized graph, or None) the first node whose native code disagrees with the
    interpreter; `val1` the interpreter's value (`thunk1`), `val2` native code's
    (`thunk2`); `inputs_val` the call's arguments."""

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
    ):
        self.r, self.r_name, self.val1, self.val2 = r, r_name, val1, val2
        self.inputs_val, self.node = list(inputs_val), node
        lines = [
            f"BadThunkOutput: {r_name} differs between the reference interpreter and native code",
            f"  {self.thunk1}: {_show(val1)}",
            f"  {self.thunk2}: {_show(val2)}",
        ]
        if node_text:
            lines.append(f"  first node whose native code differs: {node_text}")
            if node_vals is not None:
                lines.append(f"    interpreter: {_show(node_vals[0])}")
                lines.append(f"    native:      {_show(node_vals[1])}")
        else:
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


# --- the mode -------------------------------------------------------------------------------


class DebugMode(Mode):
    """Theano's DebugMode: optimizer `optimizer` (default "fast_run") with every graph
    pass checked at compile time, native code compared with the reference interpreter at
    every call (see the module docstring). The linker is fixed (native code and the
    interpreter); Theano's other arguments are accepted and have no effect."""

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
        super().__init__(linker="cvm", optimizer=optimizer)
        self.check_isfinite = True if check_isfinite is None else bool(check_isfinite)
        self.tolerances = dict(TOLERANCES if tolerances is None else tolerances)

    # --- compile time: each graph pass checked --------------------------------------------

    def optimize(self, module: ModuleOp) -> ModuleOp:
        from arignote.lowering.driver import apply_pipeline, make_context
        from arignote.lowering.pipelines import split_pass_spec

        current = module
        for item in split_pass_spec(self.graph_pipeline()):
            after = current.clone()
            apply_pipeline(make_context(), after, item)
            after.verify()
            self.check_pass(item, current, after)
            current = after
        return current

    def check_pass(self, name: str, before: ModuleOp, after: ModuleOp) -> None:
        """Raise BadOptimization unless `before` and `after` compute the same results on
        random inputs (the first trial length that `before` runs on)."""
        func = before.ops.first
        assert isinstance(func, FuncOp)
        symbol = func.sym_name.data
        rng = np.random.default_rng(0)
        for length in TRIAL_LENGTHS:
            inputs = random_inputs(func, length, rng)
            try:
                old = interpret(before, symbol)([a.copy() for a in inputs])
            except Exception:
                continue  # these lengths do not suit the graph; try the next ones
            try:
                new = interpret(after, symbol)([a.copy() for a in inputs])
            except Exception as e:
                raise BadOptimization(
                    name,
                    0,
                    old[0] if old else None,
                    None,
                    str(before),
                    str(after),
                    inputs,
                    f"the IR after it fails where the IR before runs: {type(e).__name__}: {e}",
                ) from e
            if len(old) != len(new):
                raise BadOptimization(
                    name,
                    0,
                    old,
                    new,
                    str(before),
                    str(after),
                    inputs,
                    f"{len(old)} results before, {len(new)} after",
                )
            for r, (a, b) in enumerate(zip(old, new, strict=True)):
                if not values_match(a, b, self.tolerances):
                    raise BadOptimization(name, r, a, b, str(before), str(after), inputs)
            return

    # --- call time: native code against the reference interpreter --------------------

    def link(self, module: ModuleOp, optimized: ModuleOp, symbol: str) -> Run:
        reference = interpret(module, symbol)
        if ops_without_native_lowering(optimized):
            tested = interpret(optimized, symbol)
        else:
            tested = compile_native(optimized, symbol)
        return _DebugRun(self, reference, tested, module, optimized)


class _DebugRun:
    """One DebugMode function: runs both, compares, returns the native results."""

    def __init__(
        self, mode: DebugMode, reference: Run, tested: Run, module: ModuleOp, optimized: ModuleOp
    ):
        self.mode = mode
        self.reference = reference
        self.tested = tested
        self.module = module
        self.optimized = optimized
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
        for r, (a, b) in enumerate(zip(expected, results, strict=True)):
            if not values_match(a, b, self.mode.tolerances):
                self._bad_output(r, a, b, originals)
        if self.mode.check_isfinite:
            for r, value in enumerate(results):
                if value.dtype.kind == "f" and not np.isfinite(value).all():
                    self._invalid(self.output_names[r], value, originals)
        return results

    def _declared(self, i: int, after: np.ndarray, results: list[np.ndarray]) -> bool:
        """Whether argument `i` was overwritten by the result declared to take its buffer
        (`ag.inplace_results`)."""
        r = self.destroyed.get(i)
        return r is not None and np.shares_memory(after, results[r])

    def _bad_output(self, r: int, a: Any, b: Any, inputs: list[np.ndarray]) -> None:
        culprit: Operation | None = None
        vals: tuple[Any, Any] | None = None
        try:
            recorder = _record(self.optimized, inputs)
            for op in recorder.order:
                if op.regions or isinstance(op, ag.YieldOp):
                    continue  # control flow: the ops of its regions are checked alone
                args, expected = recorder.values[op]
                got = compile_native(single_op_module(op), "fn_node")([a_.copy() for a_ in args])
                for e, g in zip(expected, got, strict=True):
                    if not values_match(e, g, self.mode.tolerances):
                        culprit, vals = op, (e, g)
                        break
                if culprit is not None:
                    break
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
