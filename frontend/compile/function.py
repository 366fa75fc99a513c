"""`arignote.function`: compile a graph into a callable when it is defined.

`function()` first settles the graph: `givens` substitutions are applied by rebuilding
the ops that depend on them (`arignote.compile.clone.rebuild`), explicit updates and the
`default_update` of every shared variable the graph reads are collected. The resulting
graph is cloned into one `func.func` of `ag` ops whose arguments are the explicit inputs
followed by the shared variables it reads, and whose results are the outputs followed by
the new values of the updated shared variables (then of `In(..., update=...)` inputs).
That function is handed to the reference interpreter (`linker="py"`) or optimized,
lowered to LLVM and compiled to native code.

A call checks every argument against its input's type (a `TypeError` naming the
input), appends the current values of the shared variables, runs the code, and only then
stores the updated values: every output and every new value is computed from the old
values. Storing an update swaps a reference and copies nothing; native code usually
returns the stored array itself, having computed the new value in it (`ag.updates` on
the emitted function lets the `inplace-update` pass do so, see `sharedvalue`). Native
code also writes a call's outputs into the arrays of its previous calls when the caller
has dropped them (see `Function.free`).
"""

from __future__ import annotations

import functools
import re
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.traits import IsTerminator

from arignote.compile import codecache
from arignote.compile.clone import check_replacement, needed_ops, rebuild, replacement_pairs
from arignote.compile.device import check_device
from arignote.compile.gcpause import gc_paused
from arignote.compile.io import In, Out
from arignote.compile.mode import Mode, get_mode
from arignote.compile.regions import emit_ops
from arignote.compile.sharedvalue import (
    SharedVariable,
    StateLock,
    _Storage,
    filter_value,
    holding,
    ordered_locks,
    shared_of,
)
from arignote.configuration import config
from arignote.dialects import ag
from arignote.graph import (
    Apply,
    TensorConstant,
    Variable,
    ancestors,
    graph_operands,
    remembered,
    variable_of,
    walks_remembered,
)
from arignote.tensor.type import TensorType


class MissingInputError(Exception):
    """An output depends on an input variable that is not among the function's inputs."""


class UnusedInputError(Exception):
    """An input that no output depends on."""


_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def emit_function(
    inputs: Sequence[Variable], outputs: Sequence[Variable], name: str = "main"
) -> ModuleOp:
    """One `func.func @name` computing `outputs` from `inputs`, in a new module."""
    return _emit(
        [v.value for v in inputs], [v.name for v in inputs], [v.value for v in outputs], name
    )


def _emit(
    args: Sequence[SSAValue],
    names: Sequence[str | None],
    results: Sequence[SSAValue],
    name: str,
) -> ModuleOp:
    arg_types = [v.type for v in args]
    block = Block(arg_types=arg_types)
    mapping: dict[SSAValue, SSAValue] = {}
    for value, arg_name, arg in zip(args, names, block.args, strict=True):
        mapping[value] = arg
        if arg_name is not None and BlockArgument.is_valid_name(arg_name):
            arg.name_hint = arg_name
    for op in ancestors(list(results)):
        for operand in graph_operands(op):
            if operand not in mapping and isinstance(operand, BlockArgument):
                raise MissingInputError(
                    f"an input of the graph is missing from the function's inputs: "
                    f"{_describe(operand)} (used by {op.name})"
                )
    emit_ops(block, results, mapping)
    for value in results:
        if value not in mapping:
            raise MissingInputError(
                f"the output {variable_of(value)} is an input that is not among the "
                "function's inputs"
            )
    returned = [mapping[v] for v in results]
    block.add_op(ReturnOp(*returned))
    func = FuncOp(name, (arg_types, [r.type for r in returned]), Region(block))
    return ModuleOp([func])


def _describe(value: SSAValue) -> str:
    var = variable_of(value)
    return f"{var} of type {var.type}"


# --- argument checking ---------------------------------------------------------------


def _check_inputs(inputs: Sequence[Any], allow_input_downcast: bool | None) -> list[In]:
    result: list[In] = []
    for i, param in enumerate(inputs):
        if isinstance(param, In):
            inp = param
        elif isinstance(param, Variable):
            inp = In(param, allow_downcast=allow_input_downcast)
        else:
            raise TypeError(
                f"function: inputs[{i}] must be a symbolic variable or an In, "
                f"got {type(param).__name__}"
            )
        var = inp.variable
        if isinstance(var, SharedVariable):
            raise TypeError(
                f"Cannot use a shared variable ({var}) as explicit input. Consider "
                "substituting a non-shared variable via the `givens` parameter"
            )
        if isinstance(var, TensorConstant) or var.owner is not None:
            raise TypeError(
                f"function: inputs[{i}] ({var}) is computed from other "
                "variables or is a constant; inputs must be free variables"
            )
        if any(var is other.variable for other in result):
            raise ValueError(f"function: the input {var} appears more than once")
        result.append(inp)
    return result


def _check_outputs(outputs: Any) -> tuple[list[Out], bool]:
    from arignote.tensor.basic import as_tensor_variable

    if outputs is None:
        return [], False
    single = not isinstance(outputs, list | tuple)
    result = []
    for out in [outputs] if single else list(outputs):
        if isinstance(out, Out):
            result.append(Out(as_tensor_variable(out.variable), out.borrow))
        else:
            result.append(Out(as_tensor_variable(out)))
    return result, single


class TransferWarning(UserWarning):
    """`config.warn_transfers`: a GPU function copied an array between host and GPU."""


def _warn_transfer(fn: Any, what: str, array: Any, direction: str) -> None:
    from arignote.testvalue import user_frame

    _, level = user_frame()
    name = f" {fn.name}" if fn.name else ""
    shape, dtype = getattr(array, "shape", ()), getattr(array, "dtype", "?")
    size = int(np.prod(shape)) * np.dtype(dtype).itemsize if dtype != "?" else 0
    warnings.warn(
        f"function{name}: {what} ({dtype}, shape {tuple(shape)}, {size} bytes) copied {direction}",
        TransferWarning,
        stacklevel=level,
    )


def filter_variable(type_var: Variable, value: Any, what: str) -> Variable:
    """`value` as a variable of exactly the type of `type_var` (Theano's
    `filter_variable(..., allow_convert=False)`): a variable must have that type; any
    other value becomes a constant of it."""
    from arignote.graph import make_constant

    if not isinstance(value, Variable):
        try:
            return make_constant(filter_value(type_var.type, value))
        except TypeError as e:
            raise TypeError(
                f"{what}: the value {value!r} cannot be stored in {type_var}: {e}"
            ) from None
    if value.type != type_var.type:
        hint = ""
        if value.dtype == type_var.dtype:
            hint = (
                " If the difference is related to the broadcast pattern, rebuild the "
                "expression so that it has the same broadcastable dimensions."
            )
        raise TypeError(
            f"{what}: an update must have the same type as the original shared variable "
            f"(shared_var={type_var}, shared_var.type={type_var.type}, update_val={value}, "
            f"update_val.type={value.type}).{hint}"
        )
    return value


def _pairs(value: Any, what: str) -> list[tuple[Any, Any]]:
    if value is None:
        return []
    if not isinstance(value, Mapping | list | tuple):
        raise TypeError(f"{what} must be a list, a tuple or a dict, got {type(value).__name__}")
    return replacement_pairs(value, what)


def _shared_read(values: Sequence[SSAValue]) -> list[SharedVariable]:
    """The shared variables the graphs of `values` read, in first-seen order."""
    return list(remembered(("shared_read", tuple(values)), lambda: _find_shared(values)))


def _find_shared(values: Sequence[SSAValue]) -> list[SharedVariable]:
    found: dict[int, SharedVariable] = {}
    for op in needed_ops(values):
        for operand in graph_operands(op):
            sv = shared_of(operand)
            if sv is not None:
                found.setdefault(id(sv), sv)
    for value in values:
        sv = shared_of(value)
        if sv is not None:
            found.setdefault(id(sv), sv)
    return list(found.values())


def _used_values(values: Sequence[SSAValue]) -> set[int]:
    used = {id(v) for v in values}
    for op in needed_ops(values):
        used.update(id(o) for o in graph_operands(op))
    return used


# --- the compiled function -------------------------------------------------------------


@dataclass
class _Plan:
    """Everything a `Function` is compiled from, after givens and default updates."""

    ins: list[In]
    outs: list[Out]
    out_values: list[SSAValue]
    updates: list[tuple[SharedVariable, SSAValue]]
    input_updates: list[tuple[int, SSAValue]]
    single: bool
    mode: Mode
    name: str | None
    defaults: list[Any] = field(default_factory=list)
    profile: Any = None
    """The `ProfileStats` of a profiled function (`arignote.compile.profiling`)."""
    return_device: bool = False
    """On a GPU (config.device=cuda): return the outputs as device arrays."""

    def device_outputs(self) -> list[bool]:
        """Per output, whether a GPU function returns it as a device array: with
        `return_device`, or when it is a variable's `transfer('gpu')`."""
        return [
            self.return_device or getattr(o.variable, "transfer_target", None) == "gpu"
            for o in self.outs
        ]

    def results(self) -> list[SSAValue]:
        return self.out_values + [v for _, v in self.updates] + [v for _, v in self.input_updates]


def _update_pairs(
    plan: _Plan, shared_args: Sequence[SharedVariable], arg_types: Sequence[Attribute]
) -> dict[int, int]:
    """Each updated shared variable's result index and argument index, for the function
    whose arguments have `arg_types` (the `inplace-update` pass may then compute the
    result over the old value)."""
    n_in, n_out = len(plan.ins), len(plan.out_values)
    position = {id(sv): n_in + i for i, sv in enumerate(shared_args)}
    # An update with more static dimensions than its variable (`w + numpy.ones(5)` for a
    # vector `w`) has another IR type: it is stored by copy, not computed in place.
    return {
        n_out + j: position[id(sv)]
        for j, (sv, value) in enumerate(plan.updates)
        if id(sv) in position and value.type == arg_types[position[id(sv)]]
    }


class _Compiled:
    """The code of a plan: the callable running it, and the emitted module (made on
    first use when the native code came from the compile cache, whose key
    `codecache.graph_text` reads from the graph itself)."""

    def __init__(self, plan: _Plan):
        symbol = "fn_" + (
            plan.name if plan.name is not None and _SYMBOL.fullmatch(plan.name) else "main"
        )
        results = plan.results()
        self.shared_args = _shared_read(results)
        args = [i.variable.value for i in plan.ins] + [s.value for s in self.shared_args]
        names = [i.variable.name for i in plan.ins] + [s.name for s in self.shared_args]
        pairs = _update_pairs(plan, self.shared_args, [a.type for a in args])
        self._emission = (args, names, results, symbol, pairs)
        self._module: ModuleOp | None = None
        start = time.perf_counter()
        with gc_paused():  # (arignote.compile.gcpause: the IR's cycles are collected after)
            if plan.profile is not None:
                from arignote.compile.profiling import compile_profiled

                self._optimized, self.run = compile_profiled(
                    plan.mode, self.module, symbol, plan.profile
                )
            else:
                graph = self.graph_text() if codecache.cacheable(plan.mode) else None
                self.run, self._optimized = plan.mode.compile(
                    self._emit if graph is not None else self.module, symbol, graph
                )
            if self._module is not None:  # (a graph_text key: no allreduce)
                self.run = _checked_collectives(self.run, self._module, symbol)
        self.compile_time = time.perf_counter() - start

    def graph_text(self) -> str | None:
        """The compile-cache key text of the graph (`codecache.graph_text`)."""
        args, _, results, symbol, pairs = self._emission
        return codecache.graph_text(args, results, symbol, pairs)

    def _emit(self) -> ModuleOp:
        if self._module is None:
            args, names, results, symbol, pairs = self._emission
            self._module = _emit(args, names, results, symbol)
            f = self._module.ops.first
            assert isinstance(f, FuncOp)
            ag.set_result_pairs(f, ag.UPDATES_ATTRIBUTE, pairs)
        return self._module

    @property
    def module(self) -> ModuleOp:
        """The emitted module (`ag.updates` on its function)."""
        return self._emit()

    @property
    def optimized(self) -> ModuleOp:
        """The module after the mode's graph pipeline (computed on first use when the
        native code came from the compile cache)."""
        if not isinstance(self._optimized, ModuleOp):
            self._optimized = self._optimized()
        return self._optimized


_MISSING = object()
_AMBIGUOUS: Any = object()
"""The index of a name that several inputs have: passing it by keyword is an error."""


def _input_names(ins: Sequence[In]) -> dict[str, Any]:
    """Input name -> index in the inputs, `_AMBIGUOUS` for a name several inputs share."""
    names: dict[str, Any] = {}
    for k, inp in enumerate(ins):
        if inp.name is not None:
            names[inp.name] = _AMBIGUOUS if inp.name in names else k
    return names


def _plural(n: int) -> str:
    return "s" if n > 1 else ""


def inputs_info(named: Sequence[str], n_unnamed: int) -> str:
    """A description of the named and unnamed inputs of a function, for the error of
    an unknown keyword argument (Theano's `get_info_on_inputs`)."""
    hint = "(use 'name=...' in a variable's constructor to give it a name)"
    if not named and not n_unnamed:
        return "The function is supposed to have no input."
    if not named and n_unnamed == 1:
        return (
            "The function has a single input variable which has no name, and thus "
            f"cannot be assigned through a keyword argument {hint}."
        )
    if not named:
        return (
            f"The function has {n_unnamed} inputs, but none of them is named, and thus "
            f"they cannot be assigned through keyword arguments {hint}."
        )
    text = f"The function has {len(named)} named input{_plural(len(named))} ({', '.join(named)})"
    if not n_unnamed:
        return text + "."
    return (
        f"{text}, and {n_unnamed} unnamed input{_plural(n_unnamed)} which thus cannot be "
        f"accessed through keyword argument{_plural(n_unnamed)} {hint}."
    )


def _nodes(ops: Iterable[Operation]) -> Iterator[Operation]:
    for op in ops:
        # a fused cluster is one node (Theano's Composite); ag.gemv_pair's region is its
        # per-row scalar code: neither region holds nodes of the graph
        if not isinstance(op, ag.FusedOp | ag.GemvPairOp):
            for region in op.regions:
                yield from _nodes(region.ops)
        if not op.has_trait(IsTerminator) and not isinstance(op, ag.ConstantOp):
            yield op


class FunctionGraph:
    """The optimized graph of a function as Theano shows it (`f.maker.fgraph`): a view
    of the `func.func` after the mode's graph pipeline."""

    def __init__(self, module: ModuleOp):
        func = module.ops.first
        assert isinstance(func, FuncOp)
        self.func = func

    def toposort(self) -> list[Apply]:
        """The nodes in execution order (constants are not nodes, as in Theano); the
        nodes inside the branches of an `ifelse` come before it, as in Theano's graph."""
        return [Apply(op) for op in _nodes(self.func.body.ops)]

    @property
    def apply_nodes(self) -> set[Apply]:
        return set(self.toposort())

    @property
    def inputs(self) -> list[Variable]:
        return [variable_of(a) for a in self.func.body.block.args]

    @property
    def outputs(self) -> list[Variable]:
        ret = self.func.body.block.last_op
        assert isinstance(ret, ReturnOp)
        return [variable_of(v) for v in ret.arguments]

    def __repr__(self) -> str:
        return f"FunctionGraph({', '.join(map(str, self.outputs))})"


class FunctionMaker:
    """What compiled a function; `fgraph` is its optimized graph."""

    def __init__(self, compiled: _Compiled):
        self._compiled = compiled
        self._fgraph: FunctionGraph | None = None

    @property
    def fgraph(self) -> FunctionGraph:
        if self._fgraph is None:
            self._fgraph = FunctionGraph(self._compiled.optimized)
        return self._fgraph


def _fast_check(t: Any) -> tuple[np.dtype, int, tuple[int, ...]] | None:
    """(dtype, rank, broadcastable axes) of a plain `TensorType` input, whose `filter`
    passes an ndarray matching them through unchanged; None for any other type."""
    if type(t) is not TensorType:
        return None
    return np.dtype(t.dtype), t.ndim, tuple(a for a, b in enumerate(t.broadcastable) if b)


def _checked_collectives(run: Any, module: ModuleOp, symbol: str) -> Any:
    """`run`, made to compare the graph across the processes of an MPI job before its
    first call when the function communicates (`arignote.distributed`)."""
    if not any(isinstance(op, ag.AllreduceOp) for op in module.walk()):
        return run
    from arignote.compile.codecache import ir_text
    from arignote.distributed import FirstCallCheck, graph_digest

    return FirstCallCheck(run, graph_digest(ir_text(module)), symbol)


class Function:
    """A compiled function: call it with one value per input (positionally or by
    input name; inputs with a default value may be left out); it returns one array, or a
    list when `outputs` was a list. Each call then stores the new values of the updated
    shared variables."""

    profile: Any = None
    """The `ProfileStats` of a profiled function (`function(..., profile=True)`), else
    None."""

    def __init__(
        self,
        plan: _Plan,
        allow_input_downcast: bool | None = None,
        compiled: _Compiled | None = None,
        swap: Mapping[SharedVariable, SharedVariable] | None = None,
    ):
        self._plan = plan
        self._compiled = compiled if compiled is not None else _Compiled(plan)
        self._allow_downcast = allow_input_downcast
        self.name = plan.name
        self.mode = plan.mode
        self.inputs = [i.variable for i in plan.ins]
        self.outputs = [variable_of(v) for v in plan.out_values]
        self.maker = FunctionMaker(self._compiled)
        self.compile_time = self._compiled.compile_time
        self.trust_input = False
        self._single = plan.single
        self._types = [v.type for v in self.inputs]
        self._defaults = list(plan.defaults)
        self._names = _input_names(plan.ins)
        self._implicit = [i for i, inp in enumerate(plan.ins) if inp.implicit]
        # The shared variables this function reads and updates, after `copy(swap=...)`:
        # original variable -> the variable whose value is used.
        self._swap: dict[SharedVariable, SharedVariable] = dict(swap or {})
        self._arg_storage: list[_Storage] = [
            self._bound(sv)._storage for sv in self._compiled.shared_args
        ]
        self._update_storage: list[_Storage] = [self._bound(sv)._storage for sv, _ in plan.updates]
        self._n_out = len(plan.outs)
        self._input_update_index = [i for i, _ in plan.input_updates]
        # The locks a call holds (docs/threads.md): those of the shared variables it reads
        # and updates, and one over the `In(update=...)` values, which are the function's.
        own = [StateLock()] if self._input_update_index else []
        self._locks = ordered_locks([*self._arg_storage, *self._update_storage, *own])
        self._held = holding(self._locks)
        self._on_device = getattr(self._compiled.run, "on_device", False)
        """Whether the function runs on a GPU (config.device=cuda): its shared values are
        passed as device arrays and its results come back as device arrays."""
        self._return_device = plan.return_device
        self._device_outputs = plan.device_outputs()
        self._entry, self._direct = self._fast_entry()

    def _fast_entry(self) -> tuple[Callable[..., Any] | None, Callable[..., Any] | None]:
        """The native code's CPython entry point (`arignote.runtime.entry`), if it has
        one, and what `__call__` tries first: the entry point itself when its result is
        exactly what a call returns (no shared variables, no updates), else the closure
        of `arignote.compile.callpath` that passes the shared values and stores the
        updates (no `In(update=)` inputs)."""
        native = getattr(self._compiled.run, "native", None)
        fast = getattr(native, "fast_entry", None)
        if any(inp.implicit for inp in self._plan.ins):
            return None, None  # a call must check that it provides no implicit input
        if fast is None or any(_fast_check(t) is None for t in self._types):
            return None, None  # another input type may filter values its own way
        entry = fast.call
        n_results = len(self._plan.results())
        plain = not (self._arg_storage or self._update_storage or self._input_update_index)
        same_shape = self._single == (n_results == 1)  # one array, or a list of them
        if plain and same_shape:
            return entry, entry
        if self._input_update_index:
            return entry, None
        from arignote.compile.callpath import stateful_call

        read, updated, locks = self._arg_storage, self._update_storage, self._locks
        return entry, stateful_call(entry, read, updated, self._n_out, self._single, locks)

    def _bound(self, sv: SharedVariable) -> SharedVariable:
        return self._swap.get(sv, sv)

    @property
    def module(self) -> ModuleOp:
        """The `ag` module `function()` emitted (before the graph rewrites)."""
        return self._compiled.module

    @property
    def shared_variables(self) -> list[SharedVariable]:
        """The shared variables read or updated by this function (after any swap)."""
        found: dict[int, SharedVariable] = {}
        for sv in [*self._compiled.shared_args, *(s for s, _ in self._plan.updates)]:
            bound = self._bound(sv)
            found.setdefault(id(bound), bound)
        return list(found.values())

    @property
    def updates(self) -> list[tuple[SharedVariable, Variable]]:
        """The `(shared variable, new value)` pairs applied after each call (explicit
        updates, then default updates)."""
        return [(self._bound(sv), variable_of(v)) for sv, v in self._plan.updates]

    # --- calling ---------------------------------------------------------------------

    def _convert(self, index: int, value: Any) -> np.ndarray:
        inp = self._plan.ins[index]
        allow = inp.allow_downcast
        try:
            return filter_value(self._types[index], value, inp.strict, allow)
        except TypeError as e:
            var = self.inputs[index]
            label = f' with name "{var.name}"' if var.name else ""
            fname = f' with name "{self.name}"' if self.name else ""
            raise TypeError(
                f"Bad input argument{label} to arignote function{fname} at index "
                f"{index} (0-based): {e}"
            ) from None

    def _bind(self, args: Sequence[Any], kwargs: dict[str, Any]) -> list[Any]:
        """The input values of a call: positional arguments in order, then keyword
        arguments by input name, then default values (Theano's rules and messages)."""
        n = len(self.inputs)
        if not kwargs and len(args) == n and not self._implicit:
            return list(args)
        if len(args) + len(kwargs) > n:
            raise TypeError(
                f"Too many parameter passed to arignote function: it has {n} inputs, "
                f"got {len(args)} positional and {len(kwargs)} keyword arguments"
            )
        values: list[Any] = list(args) + [_MISSING] * (n - len(args))
        for key, value in kwargs.items():
            index = self._keyword_index(key)
            if values[index] is not _MISSING:
                raise TypeError(f"Multiple values for input: {self.inputs[index]}")
            values[index] = value
        self._check_implicit(values)
        missing = []
        for i, v in enumerate(values):
            if v is _MISSING:
                if self._defaults[i] is _MISSING:
                    missing.append(str(self.inputs[i]))
                else:
                    values[i] = self._defaults[i]
        if missing:
            plural = "s" if len(missing) > 1 else ""
            raise TypeError(f"Missing required input{plural}: {', '.join(missing)}")
        return values

    def _check_implicit(self, values: list[Any]) -> None:
        """A call provides no value for an implicit input (Theano's rule)."""
        for i in self._implicit:
            if values[i] is not _MISSING:
                raise TypeError(f"Tried to provide value for implicit input: {self.inputs[i]}")

    def _keyword_index(self, key: str) -> int:
        index = self._names.get(key)
        if index is None:
            raise TypeError(f"Unknown input or state: {key}. {self._inputs_info()}")
        if index is _AMBIGUOUS:
            raise TypeError(
                f"Ambiguous name: {key} - please check the names of the inputs of your "
                "function for duplicates."
            )
        return index

    def _inputs_info(self) -> str:
        """Which inputs can be given by keyword (Theano's `get_info_on_inputs`)."""
        named = [i.name for i in self._plan.ins if i.name is not None]
        return inputs_info(named, len(self._plan.ins) - len(named))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # The fast path: the native entry point checks positional ndarrays of exactly
        # the inputs' types, allocates the outputs and runs; it returns None for
        # anything else, which then takes the path below (conversions, errors).
        direct = self._direct
        if direct is not None and not kwargs:
            result = direct(*args)
            if result is not None:
                return result
        return self._call(args, kwargs)

    def _call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The general path, holding the locks of the function's state (if any) from
        reading the shared values to storing the updates."""
        held = self._held
        if held is None:
            return self._call_holding(args, kwargs)
        held.acquire()
        try:
            return self._call_holding(args, kwargs)
        finally:
            held.release()

    def _call_holding(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        entry = self._entry
        if entry is not None and self._direct is None and not kwargs:
            result = entry(*args, *[s.value for s in self._arg_storage])
            if result is not None:
                return self._finish([result] if isinstance(result, np.ndarray) else result)
        values = self._bind(args, kwargs)
        arrays = values if self.trust_input else self._checked(values)
        if self._on_device and config.warn_transfers:
            for var, array in zip(self.inputs, arrays, strict=False):
                if type(array).__name__ != "GPUArray":
                    _warn_transfer(self, f"input {var}", array, "from the host to the GPU")
        if self._arg_storage:
            if self._on_device:  # shared values stay on the GPU between calls
                arrays += [s.device_value() for s in self._arg_storage]
            else:
                arrays += [s.value for s in self._arg_storage]
        return self._finish(self._run(arrays))

    def _finish(self, results: list[np.ndarray]) -> Any:
        """Store the updates; the outputs as a call returns them (a GPU function's as
        NumPy arrays, unless it was compiled with `return_device=True`)."""
        n = self._n_out
        if self._update_storage or self._input_update_index:
            self._store_updates(results[n:])
        if self._on_device:
            results = self._outputs_on_host(results[:n])
        if self._single:
            return results[0]
        return results[:n]

    def _outputs_on_host(self, outputs: list[Any]) -> list[Any]:
        """A GPU function's outputs: copied to NumPy arrays except those to stay on the
        device (`return_device`, `transfer('gpu')`); with `config.warn_transfers`, each
        copy is a `TransferWarning`."""
        from arignote.runtime.cuda import to_host

        results = []
        for keep, output in zip(self._device_outputs, outputs, strict=True):
            if keep:
                results.append(output)
                continue
            if config.warn_transfers:
                _warn_transfer(self, f"output {len(results)}", output, "from the GPU to the host")
            results.append(to_host(output))
        return results

    def _checked(self, values: list[Any]) -> list[Any]:
        """The arrays for `values`: an ndarray of exactly an input's dtype and rank, with
        length 1 on its broadcastable dimensions, is used as is; anything else goes
        through `_convert` (conversion, or the TypeError naming the input)."""
        checks = self.__dict__.get("_fast_checks")
        if checks is None:
            checks = self.__dict__["_fast_checks"] = [_fast_check(t) for t in self._types]
        arrays = []
        for i, (value, check) in enumerate(zip(values, checks, strict=True)):
            if (
                check is not None
                and type(value) is np.ndarray
                and value.dtype == check[0]
                and value.ndim == check[1]
                and all(value.shape[axis] == 1 for axis in check[2])
            ):
                arrays.append(value)
            elif self._on_device and type(value).__name__ == "GPUArray":
                arrays.append(self._device_input(i, value, check))
            else:
                arrays.append(self._convert(i, value))
        return arrays

    def _device_input(self, i: int, value: Any, check: Any) -> Any:
        """A device array given to a GPU function: used as it is when it has exactly
        the input's dtype, rank and broadcastable lengths (device arrays are not
        converted)."""
        if check is None or (
            value.dtype == check[0]
            and value.ndim == check[1]
            and all(value.shape[axis] == 1 for axis in check[2])
        ):
            return value
        var = self.inputs[i]
        raise TypeError(
            f"Bad input argument {var} to arignote function at index {i} (0-based): a device "
            f"array of dtype {value.dtype} and shape {value.shape} where {self._types[i]} is "
            "expected (device arrays are not converted)"
        )

    def _run(self, arrays: list[Any]) -> list[np.ndarray]:
        """Run the compiled code; with exception_verbosity=high a run-time error also
        shows the function's graph."""
        try:
            return self._compiled.run(arrays)
        except ValueError as error:
            from arignote.configuration import config

            if config.exception_verbosity != "high":
                raise
            from arignote.printing import debugprint

            graph = debugprint(self, file="str")
            raise ValueError(f"{error}\n\nThe function's graph:\n{graph}") from error

    def _store_updates(self, new_values: list[np.ndarray]) -> None:
        """Store the updated values (shared variables, then `In(update=)` defaults)."""
        k = len(self._update_storage)
        for storage, value in zip(self._update_storage, new_values[:k], strict=True):
            storage.value = value
        for index, value in zip(self._input_update_index, new_values[k:], strict=True):
            self._defaults[index] = value

    def free(self) -> None:
        """Release the memory the function keeps between calls (Theano's
        `Function.free`): natively compiled code keeps the arrays it returned at its
        last two calls and writes the next call's results into them once the caller has
        dropped them (never into an array the caller, or a view of it, still holds);
        `free()` drops them."""
        native = getattr(self._compiled.run, "native", None)
        release = getattr(native, "release_kept", None)
        if release is not None:
            release()

    # --- default values ----------------------------------------------------------------

    def _input_index(self, item: Any) -> int:
        if isinstance(item, str):
            if item in self._names:
                return self._keyword_index(item)
        else:
            for i, var in enumerate(self.inputs):
                if var is item:
                    return i
        raise KeyError(f"function has no input {item!r}")

    def __getitem__(self, item: Any) -> Any:
        """The default value of an input (by name or variable); None if it has none."""
        value = self._defaults[self._input_index(item)]
        return None if value is _MISSING else value

    def __setitem__(self, item: Any, value: Any) -> None:
        """Set the default value of an input (by name or variable)."""
        index = self._input_index(item)
        self._defaults[index] = self._convert(index, value)

    # --- copy ------------------------------------------------------------------------

    def copy(
        self,
        share_memory: bool = False,
        swap: Mapping[SharedVariable, SharedVariable] | None = None,
        delete_updates: bool = False,
        name: str | None = None,
        profile: Any = None,
    ) -> Function:
        """A copy of this function (Theano's `Function.copy`).

        `swap` maps shared variables of this function to shared variables of the same
        type that the copy reads and updates instead. `delete_updates=True` compiles a
        copy without updates. `share_memory` is accepted; a copy shares the compiled code,
        and with it the results kept for reuse (see `free`), so there is nothing else to
        share. As Theano's, the copy returns its outputs as a list, also when this function
        returns a single output (Theano's tutorial shows `[array(0)]`).
        """
        current = {id(sv): sv for sv in self.shared_variables}
        swap = dict(swap or {})
        for key, value in swap.items():
            if not isinstance(key, SharedVariable):
                raise TypeError(f"copy: keys of swap must be SharedVariables, got {key!r}")
            if not isinstance(value, SharedVariable):
                raise TypeError(f"copy: values of swap must be SharedVariables, got {value!r}")
            if id(key) not in current:
                raise ValueError(f"SharedVariable: {key.name or key} not found")
            if key.type != value.type:
                raise TypeError(
                    f"copy: type of the given SharedVariable {value} ({value.type}) "
                    f"conflicts with the original {key} ({key.type})"
                )
        originals = {*self._compiled.shared_args, *(sv for sv, _ in self._plan.updates)}
        new_swap = {}
        for sv in originals:
            bound = self._bound(sv)
            bound = swap.get(bound, bound)
            if bound is not sv:
                new_swap[sv] = bound
        if name is None and self.name:
            name = self.name + " copy"
        plan = replace(
            self._plan, name=name, defaults=list(self._defaults), profile=None, single=False
        )
        compiled: _Compiled | None = self._compiled
        if delete_updates and (plan.updates or plan.input_updates):
            plan.updates, plan.input_updates = [], []
            plan.name = self._plan.name  # keeps the symbol; the name is set below
            compiled = None
        copy = Function(plan, self._allow_downcast, compiled, new_swap)
        copy.name = name
        return copy

    # --- pickling --------------------------------------------------------------------

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """A function pickles as what it was compiled from (its graph, inputs, outputs,
        updates, mode, default values and the shared variables it reads, with their
        values); unpickling compiles it again, which the compile cache makes a disk
        read when the same code was compiled before (in any process). A profiled
        function unpickles unprofiled."""
        from arignote.compile.ops import custom_ops_of

        plan = replace(self._plan, profile=None, defaults=[])
        defaults = [(d is not _MISSING, None if d is _MISSING else d) for d in self._defaults]
        state = {
            "plan": plan,
            "defaults": defaults,
            "allow_downcast": self._allow_downcast,
            "swap": list(self._swap.items()),
            "name": self.name,
            "trust_input": self.trust_input,
            "custom_ops": custom_ops_of(plan.results()),
        }
        return _unpickle_function, (state,)

    def __repr__(self) -> str:
        return f"<arignote.Function {self.name or ''} ({len(self.inputs)} inputs)>"

    def dump_ir(self, stage: str = "optimized", debuginfo: bool = False) -> str:
        """The IR text of this function at `stage`: "emitted", "optimized", "loops",
        "llvm-dialect" or "llvm" (LLVM IR), with each op's source line when `debuginfo`;
        see `arignote.printing.dump_ir`."""
        from arignote.printing import dump_ir

        return dump_ir(self, stage, debuginfo)


def _unpickle_function(state: dict[str, Any]) -> Function:
    """The function `Function.__reduce__` pickled, compiled again."""
    from arignote.compile.ops import register_custom_ops

    plan: _Plan = state["plan"]
    register_custom_ops(plan.results(), state["custom_ops"])
    plan.defaults = [value if has else _MISSING for has, value in state["defaults"]]
    fn = Function(plan, state["allow_downcast"], None, dict(state["swap"]))
    fn.name = state["name"]
    fn.trust_input = state["trust_input"]
    return fn


def _optimize(module: ModuleOp, mode: Mode) -> ModuleOp:
    """A copy of `module` after the mode's graph pipeline (the module itself if none)."""
    return mode.optimize(module)


def _compile(
    module: ModuleOp, symbol: str, mode: Mode
) -> Callable[[list[np.ndarray]], list[np.ndarray]]:
    """The callable running `module` as `mode`'s linker does (see `Mode.link`)."""
    return mode.link(module, module, symbol)


# --- function() ------------------------------------------------------------------------


def _walks_remembered(fn: Callable[..., Function]) -> Callable[..., Function]:
    """`fn`, reading the graph with `walks_remembered` (it checks, collects and emits
    the same graph several times)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Function:
        with walks_remembered():
            return fn(*args, **kwargs)

    return wrapper


@_walks_remembered
def function(
    inputs: Sequence[Any],
    outputs: Any = None,
    mode: Any = None,
    updates: Any = None,
    givens: Any = None,
    no_default_updates: Any = False,
    accept_inplace: bool = False,
    name: str | None = None,
    rebuild_strict: bool = True,
    allow_input_downcast: bool | None = None,
    profile: Any = None,
    on_unused_input: str | None = None,
    return_device: bool = False,
) -> Function:
    """Compile a function from `inputs` (variables or `In`) to `outputs` (one variable
    or `Out`, a list of them, or None).

    `updates`: `(shared variable, new value)` pairs or a dict, stored after each call,
    every new value computed from the old values. `givens`: `(variable, replacement)`
    pairs or a dict substituted in the graph before compiling. `no_default_updates`:
    True, or a list of shared variables whose `default_update` is not applied.
    The graph is compiled now, not at the first call. `mode` is a `Mode`, a mode name
    ("FAST_RUN", "FAST_COMPILE") or None for `config.mode`. `profile`: True, a name
    or a `ProfileStats` profiles the function (`f.profile`, see
    `arignote.compile.profiling`); None follows `config.profile`. `accept_inplace` and
    `rebuild_strict` are accepted and have no effect. `return_device=True`: on a GPU
    (`config.device=cuda`) the outputs are returned as device arrays
    (`pycuda.gpuarray.GPUArray`), not copied to NumPy arrays.
    """
    check_device("function()")
    if on_unused_input is None:
        on_unused_input = "raise"
    if on_unused_input not in ("raise", "warn", "ignore"):
        raise ValueError(
            f"function: on_unused_input must be 'raise', 'warn' or 'ignore', "
            f"got {on_unused_input!r}"
        )
    if not isinstance(inputs, list | tuple):
        raise TypeError(
            f"function: inputs must be a list of variables, got {type(inputs).__name__}"
        )
    ins = _check_inputs(inputs, allow_input_downcast)
    outs, single = _check_outputs(outputs)
    replace = _collect_givens(givens, ins)
    update_pairs = _collect_updates(updates)
    input_update_pairs = [
        (i, filter_variable(inp.variable, inp.update, f"In({inp.variable}).update"))
        for i, inp in enumerate(ins)
        if inp.update is not None
    ]
    values = (
        [o.variable.value for o in outs]
        + [v.value for _, v in update_pairs]
        + [v.value for _, v in input_update_pairs]
    )
    rebuilt = rebuild(values, replace)
    n_out, n_up = len(outs), len(update_pairs)
    out_values = rebuilt[:n_out]
    plan_updates = [
        (sv, v) for (sv, _), v in zip(update_pairs, rebuilt[n_out : n_out + n_up], strict=True)
    ]
    plan_input_updates = [
        (i, v) for (i, _), v in zip(input_update_pairs, rebuilt[n_out + n_up :], strict=True)
    ]
    _add_default_updates(rebuilt, plan_updates, replace, no_default_updates)
    results = out_values + [v for _, v in plan_updates] + [v for _, v in plan_input_updates]
    _check_unused(ins, results, on_unused_input)
    plan = _Plan(
        ins,
        outs,
        out_values,
        plan_updates,
        plan_input_updates,
        single,
        get_mode(mode),
        name,
        [_default_value(inp) for inp in ins],
        return_device=return_device,
    )
    if profile is None and not config.profile:
        return Function(plan, allow_input_downcast)
    from arignote.compile.profiling import ProfiledFunction, profile_for

    plan.profile = profile_for(profile, name)
    if plan.profile is None:
        return Function(plan, allow_input_downcast)
    fn = ProfiledFunction(plan, allow_input_downcast)
    fn.profile = plan.profile
    return fn


def _collect_givens(givens: Any, ins: Sequence[In]) -> dict[SSAValue, SSAValue]:
    """The substitution `givens` describes, checked."""
    replace: dict[SSAValue, SSAValue] = {}
    explicit = {id(i.variable) for i in ins}
    for key, value in _pairs(givens, "givens"):
        key, value = check_replacement(key, value, "givens")
        if id(key) in explicit:
            raise RuntimeError(
                f"You are trying to replace variable '{key}' through the `givens` "
                "parameter, but this variable is an input to your function. Replacing "
                "inputs is currently forbidden because it has no effect. One way to "
                "modify an input `x` to a function evaluating f(x) is to define a new "
                "input `y` and use `arignote.function([y], f(x), givens={x: g(y)})`. "
                "Another solution consists in using `arignote.clone`, e.g. like this: "
                "`arignote.function([x], arignote.clone(f(x), replace={x: g(x)}))`."
            )
        if key.value in replace:
            raise ValueError(f"givens: {key} is replaced more than once")
        replace[key.value] = value.value
    return replace


def _collect_updates(updates: Any) -> list[tuple[SharedVariable, Variable]]:
    """The explicit updates, checked: shared targets, each once, values of their type."""
    pairs: list[tuple[SharedVariable, Variable]] = []
    for target, value in _pairs(updates, "updates"):
        if not isinstance(target, SharedVariable):
            raise TypeError(f"update target must be a SharedVariable, got {target!r}")
        if any(target is t for t, _ in pairs):
            raise ValueError(f"this shared variable already has an update expression: {target}")
        pairs.append((target, filter_variable(target, value, "updates")))
    return pairs


def _check_unused(ins: Sequence[In], results: Sequence[SSAValue], on_unused_input: str) -> None:
    used = _used_values(results)
    unused = [i.variable for i in ins if id(i.variable.value) not in used]
    if not unused or on_unused_input == "ignore":
        return
    names = ", ".join(map(str, unused))
    if on_unused_input == "raise":
        raise UnusedInputError(
            f"function: inputs {names} are not used to compute the outputs (pass "
            "on_unused_input='ignore' to allow this)"
        )
    warnings.warn(f"function: inputs {names} are not used to compute the outputs", stacklevel=3)


def _default_value(inp: In) -> Any:
    if inp.value is None:
        return _MISSING
    if isinstance(inp.value, Variable):
        raise TypeError(f"In({inp.variable}): the default value must be a value, not a variable")
    return filter_value(inp.variable.type, inp.value, inp.strict, inp.allow_downcast)


def _add_default_updates(
    values: list[SSAValue],
    updates: list[tuple[SharedVariable, SSAValue]],
    replace: Mapping[SSAValue, SSAValue],
    no_default_updates: Any,
) -> None:
    """Append the `default_update` of every shared variable the graph reads (including
    the graphs of default updates themselves) that has no update yet."""
    if no_default_updates is True:
        return
    excluded = {id(v) for v in (no_default_updates or [])}
    updated = {id(sv) for sv, _ in updates}
    pending = list(values)
    seen: set[int] = set()
    while pending:
        scan, pending = pending, []
        for sv in _shared_read(scan):
            if id(sv) in seen:
                continue
            seen.add(id(sv))
            default = getattr(sv, "default_update", None)
            if default is None or id(sv) in excluded or id(sv) in updated:
                continue
            value = filter_variable(sv, default, f"default_update of {sv}")
            [new] = rebuild([value.value], replace)
            updates.append((sv, new))
            updated.add(id(sv))
            pending.append(new)


def eval_variable(var: Variable, inputs_to_values: dict[Variable, Any]) -> Any:
    """`var.eval(inputs_to_values)`: compile (once per set of inputs and mode) and run
    the function from the given inputs to `var`."""
    if not isinstance(inputs_to_values, dict):
        raise TypeError(
            f"eval: inputs_to_values must be a dict of variables to values, got "
            f"{type(inputs_to_values).__name__}"
        )
    cache: dict[Any, Function] = var.__dict__.setdefault("_fn_cache", {})
    inputs = tuple(sorted(inputs_to_values, key=id))
    key = (inputs, repr(get_mode(None)))
    fn = cache.get(key)
    if fn is None:
        fn = cache[key] = function(list(inputs), var)
    return fn(*[inputs_to_values[v] for v in inputs])


def function_dump(
    filename: str,
    inputs: Sequence[Any],
    outputs: Any = None,
    mode: Any = None,
    updates: Any = None,
    givens: Any = None,
    no_default_updates: Any = False,
    accept_inplace: bool = False,
    name: str | None = None,
    rebuild_strict: bool = True,
    allow_input_downcast: bool | None = None,
    profile: Any = None,
    on_unused_input: str | None = None,
    extra_tag_to_remove: Any = None,
) -> None:
    """Pickle the arguments of a `function` call to `filename` instead of compiling, to
    reproduce a compilation elsewhere (Theano's `function_dump`):
    `arignote.function(**pickle.load(open(filename, "rb")))` compiles the same function.
    `extra_tag_to_remove` is accepted for Theano's signature (arignote's variables carry
    no tags that would keep the pickle from loading)."""
    import pickle

    arguments = {
        "inputs": inputs,
        "outputs": outputs,
        "mode": mode,
        "updates": updates,
        "givens": givens,
        "no_default_updates": no_default_updates,
        "accept_inplace": accept_inplace,
        "name": name,
        "rebuild_strict": rebuild_strict,
        "allow_input_downcast": allow_input_downcast,
        "profile": profile,
        "on_unused_input": on_unused_input,
    }
    with open(filename, "wb") as f:
        pickle.dump(arguments, f, protocol=pickle.HIGHEST_PROTOCOL)
