"""Theano's graph API as a view over `ag` IR.

A `Variable` wraps one SSA value: an input is the argument of a detached block, every
other variable is the result of a detached `ag` operation built when the expression is
written. `Variable.owner` is an `Apply` view of that operation, whose `op` is a Theano-style
`Op` object (`Elemwise{add}`, `DimShuffle{1,0}`, `Sum{axis=(0,)}`, `Dot`, ...).
`arignote.function` later clones the operations it needs into one `func.func`.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue

from arignote.configuration import config
from arignote.dialects import ag
from arignote.runtime.dtypes import constant_array, dense_attr
from arignote.variable_methods import TensorPyOperators

if TYPE_CHECKING:
    from arignote.tensor.type import TensorType

_VARIABLES: weakref.WeakValueDictionary[int, Variable] = weakref.WeakValueDictionary()
"""The frontend variable of each SSA value, so that `owner.inputs` gives back the very
variables the user holds (`remember`, `known_variable`). Keyed by the value's `id`,
not by the value: a key holds its value, with every op that uses it, for as long as the
entry lives, and a variable its own value keeps alive (a shared variable: its block
argument holds it, `arignote.compile.sharedvalue`) would then never die, nor any graph
built on it. The variable holds its value, so while an entry lives its `id` is that
value's (`known_variable` checks it all the same)."""


def remember(var: Variable) -> None:
    """Make `var` the variable `variable_of(var.value)` gives while `var` lives."""
    _VARIABLES[id(var.value)] = var


def known_variable(value: SSAValue) -> Variable | None:
    """The live variable remembered for `value`, if any."""
    var = _VARIABLES.get(id(value))
    return var if var is not None and var.value is value else None


def _basic() -> Any:
    from arignote.tensor import basic

    return basic


def _shape_ops() -> Any:
    from arignote.tensor import shape_ops

    return shape_ops


def _subtensor() -> Any:
    from arignote.tensor import subtensor

    return subtensor


class Tag:
    """A free-form namespace attached to a variable (Theano's `var.tag`)."""

    def __repr__(self) -> str:
        return f"Tag({vars(self)})"


class Variable(TensorPyOperators):
    """A symbolic tensor: the value of an input, a constant, or an operation's result."""

    def __init__(self, value: SSAValue, name: str | None = None):
        self.value = value
        self.name = name
        self.tag = Tag()
        remember(self)

    def __setstate__(self, state: dict[str, Any]) -> None:
        # An unpickled variable is again the variable of its (unpickled) SSA value.
        self.__dict__.update(state)
        remember(self)

    # --- Theano's graph API ------------------------------------------------------------

    _type_of_ir: tuple[Any, TensorType, str, int] | None = None
    """(IR type, its Theano type, dtype, ndim), kept with the IR type they were computed
    from (a rewrite may change it): each op built asks for them several times (dtype
    promotion, checks)."""

    def _typed(self) -> tuple[Any, TensorType, str, int]:
        ir_type = self.value.type
        cached = self._type_of_ir
        if cached is not None and cached[0] is ir_type:
            return cached
        from arignote.tensor.type import TensorType  # the tensor package imports this module

        result = TensorType.from_ir(ir_type)
        cached = self._type_of_ir = (ir_type, result, result.dtype, len(result.broadcastable))
        return cached

    @property
    def type(self) -> TensorType:
        return self._typed()[1]

    @property
    def dtype(self) -> str:
        return self._typed()[2]

    @property
    def ndim(self) -> int:
        return self._typed()[3]

    @property
    def broadcastable(self) -> tuple[bool, ...]:
        return self.type.broadcastable

    @property
    def owner(self) -> Apply | None:
        """The operation that computes this variable; None for inputs and constants."""
        if not isinstance(self.value, OpResult) or isinstance(self.value.op, ag.ConstantOp):
            return None
        return Apply(self.value.op)

    @property
    def index(self) -> int:
        return self.value.index if isinstance(self.value, OpResult) else 0

    def clone(self) -> Variable:
        """A new input variable of the same type and name."""
        return self.type(self.name)

    def eval(self, inputs_to_values: dict[Variable, Any] | None = None) -> np.ndarray:
        """Compute this variable's value, given values for the inputs it depends on."""
        from arignote.compile.function import eval_variable

        return eval_variable(self, inputs_to_values or {})

    def __repr__(self) -> str:
        text = self.name if self.name is not None else str(self)
        if config.print_test_value and hasattr(self.tag, "test_value"):
            text += "\n" + repr(self.tag.test_value)
        return text

    def __str__(self) -> str:
        if self.name is not None:
            return self.name
        owner = self.owner
        if owner is not None:
            return f"{owner.op}.{self.index}"
        return f"<{self.type}>"

    # --- operators and methods (see arignote.tensor.basic) ------------------------------

    def __add__(self, other: Any) -> Variable:
        return _basic().add(self, other)

    def __radd__(self, other: Any) -> Variable:
        return _basic().add(other, self)

    def __sub__(self, other: Any) -> Variable:
        return _basic().sub(self, other)

    def __rsub__(self, other: Any) -> Variable:
        return _basic().sub(other, self)

    def __mul__(self, other: Any) -> Variable:
        return _basic().mul(self, other)

    def __rmul__(self, other: Any) -> Variable:
        return _basic().mul(other, self)

    def __truediv__(self, other: Any) -> Variable:
        return _basic().true_div(self, other)

    def __rtruediv__(self, other: Any) -> Variable:
        return _basic().true_div(other, self)

    def __floordiv__(self, other: Any) -> Variable:
        return _basic().floor_div(self, other)

    def __rfloordiv__(self, other: Any) -> Variable:
        return _basic().floor_div(other, self)

    def __mod__(self, other: Any) -> Variable:
        return _basic().mod(self, other)

    def __rmod__(self, other: Any) -> Variable:
        return _basic().mod(other, self)

    def __pow__(self, other: Any) -> Variable:
        return _basic().pow(self, other)

    def __rpow__(self, other: Any) -> Variable:
        return _basic().pow(other, self)

    def __neg__(self) -> Variable:
        return _basic().neg(self)

    def __abs__(self) -> Variable:
        return _basic().abs(self)

    def __and__(self, other: Any) -> Variable:
        return _basic().and_(self, other)

    def __rand__(self, other: Any) -> Variable:
        return _basic().and_(other, self)

    def __or__(self, other: Any) -> Variable:
        return _basic().or_(self, other)

    def __ror__(self, other: Any) -> Variable:
        return _basic().or_(other, self)

    def __xor__(self, other: Any) -> Variable:
        return _basic().xor(self, other)

    def __rxor__(self, other: Any) -> Variable:
        return _basic().xor(other, self)

    def __invert__(self) -> Variable:
        return _basic().invert(self)

    def __lt__(self, other: Any) -> Variable:
        return _comparison(_basic().lt(self, other))

    def __le__(self, other: Any) -> Variable:
        return _comparison(_basic().le(self, other))

    def __gt__(self, other: Any) -> Variable:
        return _comparison(_basic().gt(self, other))

    def __ge__(self, other: Any) -> Variable:
        return _comparison(_basic().ge(self, other))

    @property
    def real(self) -> Variable:
        """The real part (`T.real`; the variable itself if it is not complex)."""
        return _basic().real(self)

    @property
    def imag(self) -> Variable:
        """The imaginary part (`T.imag`; zeros if the variable is not complex)."""
        return _basic().imag(self)

    def conj(self) -> Variable:
        """The complex conjugate (`T.conj`)."""
        return _basic().conj(self)

    @property
    def T(self) -> Variable:  # noqa: N802 - Theano's name
        return _basic().transpose(self)

    def transpose(self, *axes: int) -> Variable:
        return _basic().transpose(self, axes or None)

    def dimshuffle(self, *pattern: Any) -> Variable:
        return _basic().dimshuffle(self, *pattern)

    def astype(self, dtype: str) -> Variable:
        return _basic().cast(self, dtype)

    def sum(
        self,
        axis: Any = None,
        dtype: str | None = None,
        keepdims: bool = False,
        acc_dtype: str | None = None,
    ) -> Variable:
        return _basic().sum(self, axis, dtype, keepdims, acc_dtype)

    def prod(
        self,
        axis: Any = None,
        dtype: str | None = None,
        keepdims: bool = False,
        acc_dtype: str | None = None,
    ) -> Variable:
        return _basic().prod(self, axis, dtype, keepdims, acc_dtype)

    def max(self, axis: Any = None, keepdims: bool = False) -> Variable:
        return _basic().max(self, axis, keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> Variable:
        return _basic().min(self, axis, keepdims)

    def dot(self, other: Any) -> Variable:
        return _basic().dot(self, other)

    def __rmatmul__(self, other: Any) -> Variable:
        return _basic().dot(other, self)

    __matmul__ = dot

    # --- indexing and reshaping (see arignote.tensor.subtensor) --------------------------

    def __getitem__(self, key: Any) -> Variable:
        return _subtensor().getitem(self, key)

    def reshape(self, shape: Any, *more: Any, ndim: int | None = None) -> Variable:
        if more:
            shape = (shape, *more)
        return _subtensor().reshape(self, shape, ndim)

    def flatten(self, ndim: int = 1) -> Variable:
        return _subtensor().flatten(self, ndim)

    def take(self, indices: Any, axis: int | None = None, mode: str = "raise") -> Variable:
        return _subtensor().take(self, indices, axis, mode)

    # --- shapes, argmax/argmin, statistics (see arignote.tensor.basic) -----------------

    @property
    def shape(self) -> Any:
        """The symbolic shape: `x.shape[i]` is a 0-d int64 variable (`shape_i`)."""
        return _basic().shape(self)

    def argmax(self, axis: Any = None, keepdims: bool = False) -> Variable:
        return _basic().argmax(self, axis, keepdims)

    def argmin(self, axis: Any = None, keepdims: bool = False) -> Variable:
        return _basic().argmin(self, axis, keepdims)

    def mean(
        self,
        axis: Any = None,
        dtype: str | None = None,
        keepdims: bool = False,
        acc_dtype: str | None = None,
    ) -> Variable:
        return _basic().mean(self, axis, dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def var(
        self, axis: Any = None, ddof: int = 0, keepdims: bool = False, corrected: bool = False
    ) -> Variable:
        return _basic().var(self, axis, ddof, keepdims, corrected)

    def std(
        self, axis: Any = None, ddof: int = 0, keepdims: bool = False, corrected: bool = False
    ) -> Variable:
        return _basic().std(self, axis, ddof, keepdims, corrected)

    def clip(self, a_min: Any, a_max: Any) -> Variable:
        return _basic().clip(self, a_min, a_max)

    def round(self, mode: str | None = None) -> Variable:
        return _basic().round(self, mode)

    # --- shapes, creation and selection (see arignote.tensor.shape_ops) ----------------

    def nonzero(self, return_matrix: bool = False) -> Any:
        return _shape_ops().nonzero(self, return_matrix)

    def nonzero_values(self) -> Variable:
        return _shape_ops().nonzero_values(self)

    def any(self, axis: Any = None, keepdims: bool = False) -> Variable:
        return _shape_ops().any(self, axis, keepdims)

    def all(self, axis: Any = None, keepdims: bool = False) -> Variable:
        return _shape_ops().all(self, axis, keepdims)

    def ptp(self, axis: Any = None) -> Variable:
        return _shape_ops().ptp(self, axis)

    def repeat(self, repeats: Any, axis: int | None = None) -> Variable:
        return _shape_ops().repeat(self, repeats, axis)

    def squeeze(self) -> Variable:
        return _shape_ops().squeeze(self)

    def swapaxes(self, axis1: int, axis2: int) -> Variable:
        return _shape_ops().swapaxes(self, axis1, axis2)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Variable:
        return _shape_ops().diagonal(self, offset, axis1, axis2)

    def trace(self) -> Variable:
        return _shape_ops().trace(self)

    def ravel(self) -> Variable:
        return _subtensor().flatten(self)

    def choose(self, choices: Any, out: Any = None, mode: str = "raise") -> Variable:
        return _shape_ops().choose(self, choices, out, mode)

    # --- extra_ops and sort (issue 13 item 4; see arignote.tensor.sort, .extra_ops) ------

    def sort(self, axis: Any = -1, kind: str = "quicksort", order: Any = None) -> Variable:
        from arignote.tensor.sort import sort

        return sort(self, axis, kind, order)

    def argsort(self, axis: Any = -1, kind: str = "quicksort", order: Any = None) -> Variable:
        from arignote.tensor.sort import argsort

        return argsort(self, axis, kind, order)

    # Theano variables are hashed and compared by identity (`==` on tensors is not `eq`).
    __hash__ = object.__hash__

    def __iter__(self) -> Iterator[Any]:
        raise TypeError("a symbolic tensor cannot be iterated over")

    # Theano's rule: every variable is truthy (so `if not W:` checks for None), except
    # the result of `<`, `<=`, `>`, `>=`, whose truth would silently misread `a < b < c`.
    _is_nonzero = True

    def __bool__(self) -> bool:
        if self._is_nonzero:
            return True
        raise TypeError(
            "the result of a symbolic comparison has no truth value (Python's `a < b < c` "
            "or `if x < y:`); use arignote.ifelse or tensor.switch for conditions"
        )


class TensorConstant(Variable):
    """A constant tensor; `data` holds its value."""

    @property
    def data(self) -> np.ndarray:
        op = self.value.owner
        assert isinstance(op, ag.ConstantOp)
        return constant_array(op.value)

    def __str__(self) -> str:
        return self.name if self.name is not None else f"TensorConstant{{{self.data}}}"


def _comparison(result: Variable) -> Variable:
    """`result` marked as a comparison's, whose truth value is an error (Theano's rule)."""
    result._is_nonzero = False
    return result


def make_input(type: TensorType, name: str | None = None) -> Variable:
    """A new input variable: the argument of a fresh detached block."""
    block = Block(arg_types=[type.to_ir()])
    value = block.args[0]
    if name is not None and BlockArgument.is_valid_name(name):
        value.name_hint = name
    var = Variable(value, name)
    var.tag = _input_tag(var)
    return var


def make_constant(array: np.ndarray, name: str | None = None) -> TensorConstant:
    """A constant variable holding a copy of `array` (its static shape is the array's)."""
    return TensorConstant(ag.ConstantOp(dense_attr(array)).result, name)


def variable_of(value: SSAValue) -> Variable:
    """The frontend variable of an SSA value, made on first request."""
    var = known_variable(value)
    if var is not None:
        return var
    if isinstance(value, OpResult) and isinstance(value.op, ag.ConstantOp):
        return TensorConstant(value)
    # The user's variable is gone; its name survives in the IR.
    return Variable(value, value.name_hint)


NODE_ATTRIBUTE = "ag.node"
"""The string attribute naming an op's graph node and where the user built it
(`Elemwise{add} at prog.py:12`); run-time errors of the op quote it."""

_INTERNAL_FILES: dict[str, bool] = {}


def _is_internal_file(filename: str) -> bool:
    internal = _INTERNAL_FILES.get(filename)
    if internal is None:
        from arignote.testvalue import _is_internal

        internal = _INTERNAL_FILES[filename] = _is_internal(filename)
    return internal


def _user_frame() -> Any:
    """The first stack frame outside arignote (None if there is none)."""
    frame = sys._getframe(2)
    while frame is not None and _is_internal_file(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


LOCATION_SEPARATOR = " at "
"""What separates an `ag.node` label's view of the node from the user's source line."""


def node_label(view: str, where: str | None) -> str:
    """The `ag.node` label of a node seen as `view`, built at `where` (`file.py:12`, or
    None: the label is the view)."""
    return f"{view}{LOCATION_SEPARATOR}{where}" if where else view


def split_node_label(label: str) -> tuple[str, str | None]:
    """(view, source line) of an `ag.node` label (`node_label`); the line None when the
    label has none (what follows the last separator is not `file:line`)."""
    view, separator, where = label.rpartition(LOCATION_SEPARATOR)
    path, colon, line = where.rpartition(":")
    if not separator or not colon or not path or not line.isdigit():
        return label, None
    return view, where


def _user_location() -> str | None:
    """`file.py:line` of the first stack frame outside arignote (None if there is none)."""
    frame = _user_frame()
    if frame is None:
        return None
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"


@functools.cache
def _file_line(path: str, line: int) -> FileLineColLoc:
    """The MLIR location of a source line, made once per line (the loop building a
    network's layers gives its many ops the same few)."""
    return FileLineColLoc(StringAttr(path), IntAttr(line), IntAttr(0))


def locate(op: Operation) -> None:
    """Give `op` the user's source line as its MLIR location (`loc("prog.py":12:0)`)."""
    frame = _user_frame()
    if frame is not None:
        op.location = _file_line(frame.f_code.co_filename, frame.f_lineno)


def apply_op(op: Operation) -> Variable:
    """Wrap the single result of a freshly built op (and compute its test value when
    `config.compute_test_value` is on). The op gets an `ag.node` label naming its node
    and the user's source line, for run-time error messages, and that line as its MLIR
    location (`loc("prog.py":12:0)`, printed with debug info)."""
    if NODE_ATTRIBUTE not in op.attributes:
        frame = _user_frame()
        if frame is None:
            label = str(op_view(op))
        else:
            path, line = frame.f_code.co_filename, frame.f_lineno
            label = node_label(str(op_view(op)), f"{os.path.basename(path)}:{line}")
            op.location = _file_line(path, line)
        op.attributes[NODE_ATTRIBUTE] = StringAttr(label)
    var = Variable(op.results[0])
    if config.compute_test_value != "off":
        _compute_test_value(op, var)
    return var


def _input_tag(var: Variable) -> Tag:
    """An input's tag: it filters `tag.test_value` through the input's type."""
    from arignote.testvalue import TestValueTag

    return TestValueTag(var)


def _compute_test_value(op: Operation, var: Variable) -> None:
    from arignote.testvalue import compute_test_value

    compute_test_value(op, var)


# --- Theano-style views of operations ------------------------------------------------


class Op:
    """Theano's `Op`, in two roles.

    *A view* of what an `ag` operation computes, named like Theano's op classes
    (`Elemwise{add}`, `Dot`, ...): `Apply(ir_op).op`, made with the operation (`ir_op`).

    *The base class of a custom op* written in Python, as in Theano's tutorial "Creating
    a new Op": a subclass defines `make_node(*inputs)` returning `Apply(self, inputs,
    outputs)` (or the class attributes `itypes` and `otypes`, lists of types, which the
    default `make_node` checks the inputs against), `perform(node, inputs,
    output_storage)` storing each output array in `output_storage[k][0]`, and may define
    `grad(inputs, output_grads)`, `R_op`, `infer_shape(node, input_shapes)` and
    `__props__` (the attribute names that make two instances equal; without it an op
    equals only itself). Calling the op applies it: `DoubleOp()(x)`. The node runs in
    both linkers: the interpreter calls `perform`, natively compiled code calls back
    into Python for this node alone (see `arignote.compile.ops`).
    """

    ir_op: Any = None
    """The viewed `ag` operation (None for a custom op)."""

    __props__: tuple[str, ...] | None = None

    def __init__(self, ir_op: Operation | None = None):
        if ir_op is not None:
            self.ir_op = ir_op

    # --- custom ops: Theano's Op interface ---------------------------------------------

    default_output: int | None = None
    """The index of the output a call returns when the node has several (None: all)."""

    def make_node(self, *inputs: Any) -> Apply:
        """The node applying this op to `inputs`: checks them against `itypes` and makes
        outputs of `otypes` (a subclass without them defines its own `make_node`)."""
        from arignote.compile.ops import itypes_make_node

        return itypes_make_node(self, inputs)

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        node = self.make_node(*inputs, **kwargs)
        if not isinstance(node, Apply):
            raise TypeError(
                f"{type(self).__name__}.make_node must return an Apply, got {type(node).__name__}"
            )
        outputs = node.outputs
        if self.default_output is not None:
            return outputs[self.default_output]
        return outputs[0] if len(outputs) == 1 else outputs

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        raise NotImplementedError(f"{type(self).__name__} has no perform method")

    def _props(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__props__ or ())

    def _props_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__props__ or ()}

    def _custom_str(self) -> str:
        if not self.__props__:
            return type(self).__name__
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__props__)
        return f"{type(self).__name__}{{{shown}}}"

    # --- views -------------------------------------------------------------------------

    @property
    def props(self) -> str:
        return ""

    @property
    def destroy_map(self) -> dict[int, list[int]]:
        """Theano's `destroy_map`: output index → the input indices it overwrites (set by
        the `inplace` pass; such an op is shown as `Elemwise{add}[(0, 1)]`)."""
        if self.ir_op is None:
            return {}
        return {r: [k] for r, k in ag.destroy_map(self.ir_op).items()}

    _inplace_in_props = False
    """Whether the op shows a destroy map as `{inplace}` (Theano's `Gemm{inplace}`)
    instead of the pairs (`Elemwise{add}[(0, 1)]`)."""

    @property
    def view_map(self) -> dict[int, list[int]]:
        """Theano's `view_map`: output index → the input indices whose memory it may share
        (`{0: [0]}` for `Subtensor`: native code reads it through a strided view)."""
        if self.ir_op is None:
            return {}
        return {r: [k] for r, k in ag.view_map(self.ir_op).items()}

    def __str__(self) -> str:
        if self.ir_op is None:
            return self._custom_str()
        props = self.props
        pairs = ag.destroy_map(self.ir_op)
        if pairs and self._inplace_in_props:
            props = f"{props},inplace" if props else "inplace"
        name = f"{type(self).__name__}{{{props}}}" if props else type(self).__name__
        if pairs and not self._inplace_in_props:
            name += "[" + ", ".join(f"({r}, {k})" for r, k in pairs.items()) + "]"
        return name

    def __repr__(self) -> str:
        return str(self)

    def __eq__(self, other: object) -> bool:
        if self.ir_op is None:  # a custom op: equal by __props__, else only to itself
            if self.__props__ is None:
                return other is self
            return type(other) is type(self) and self._props() == other._props()  # type: ignore[attr-defined]
        return type(other) is type(self) and str(other) == str(self)

    def __hash__(self) -> int:
        if self.ir_op is None:
            if self.__props__ is None:
                return id(self)
            return hash((type(self), self._props()))
        return hash(str(self))


class Elemwise(Op):
    """An elementwise operation; `scalar_op` names what it computes per element."""

    @property
    def scalar_op(self) -> str:
        return self.ir_op.name.removeprefix("ag.")

    @property
    def props(self) -> str:
        return self.scalar_op


class DimShuffle(Op):
    @property
    def props(self) -> str:
        assert isinstance(self.ir_op, ag.DimShuffleOp)
        return ",".join("x" if p == ag.NEWAXIS else str(p) for p in self.ir_op.pattern_list)


class CAReduce(Op):
    """A reduction over some axes (`Sum`, `Prod`, `Max`, `Min`); after fusion, its
    operand may be computed in the same loop (`scalar_op` names what)."""

    @property
    def reduction(self) -> ag.ReduceOp:
        ir_op = self.ir_op
        reduction = ir_op.reduction if isinstance(ir_op, ag.FusedOp) else ir_op
        assert isinstance(reduction, ag.ReduceOp)
        return reduction

    @property
    def axis(self) -> tuple[int, ...]:
        return self.reduction.axes_list

    @property
    def props(self) -> str:
        if isinstance(self.ir_op, ag.FusedOp):
            names = ",".join(self.ir_op.scalar_op_names())
            return f"axis={self.axis},Composite{{{names}}}"
        return f"axis={self.axis}"


class Sum(CAReduce):
    pass


class Prod(CAReduce):
    pass


class Max(CAReduce):
    pass


class Min(CAReduce):
    pass


class Dot(Op):
    pass


class Cast(Elemwise):
    @property
    def props(self) -> str:
        from arignote.tensor.type import TensorType

        return f"cast{{{TensorType.from_ir(self.ir_op.results[0].type).dtype}}}"


class Subtensor(Op):
    """Basic indexing; `props` is the index expression (`?` for a symbolic entry)."""

    @property
    def props(self) -> str:
        assert isinstance(self.ir_op, ag.SubtensorBase)
        return self.ir_op.describe()


class IncSubtensor(Subtensor):
    @property
    def props(self) -> str:
        set_ = isinstance(self.ir_op, ag.SetSubtensorOp)
        return ("set" if set_ else "inc") + super().props


class AdvancedSubtensor(Op):
    pass


class AdvancedIncSubtensor(Op):
    @property
    def props(self) -> str:
        return "set" if isinstance(self.ir_op, ag.AdvancedSetSubtensorOp) else "inc"


class Reshape(Op):
    @property
    def props(self) -> str:
        assert isinstance(self.ir_op, ag.ReshapeOp)
        return f"{len(self.ir_op.shape_list)}"


class Join(Op):
    @property
    def props(self) -> str:
        assert isinstance(self.ir_op, ag.ConcatenateOp)
        return f"axis={self.ir_op.axis_value}"


class Alloc(Op):
    pass


class ARange(Op):
    pass


_OP_VIEWS: dict[type[Operation], type[Op]] = {
    ag.DimShuffleOp: DimShuffle,
    ag.ReduceSumOp: Sum,
    ag.ReduceProdOp: Prod,
    ag.ReduceMaxOp: Max,
    ag.ReduceMinOp: Min,
    ag.DotOp: Dot,
    ag.CastOp: Cast,
    # indexing, reshaping, joining and allocation
    ag.SubtensorOp: Subtensor,
    ag.SetSubtensorOp: IncSubtensor,
    ag.IncSubtensorOp: IncSubtensor,
    ag.AdvancedSubtensorOp: AdvancedSubtensor,
    ag.AdvancedSetSubtensorOp: AdvancedIncSubtensor,
    ag.AdvancedIncSubtensorOp: AdvancedIncSubtensor,
    ag.ReshapeOp: Reshape,
    ag.ConcatenateOp: Join,
    ag.AllocOp: Alloc,
    ag.ArangeOp: ARange,
}


# op library A: argmax/argmin and dim


class Argmax(Op):
    """`Argmax{axis=(...)}` (also used for argmin, named `Argmin`)."""

    @property
    def axis(self) -> tuple[int, ...]:
        assert isinstance(self.ir_op, ag.ArgReduceOp)
        return self.ir_op.axes_list

    @property
    def props(self) -> str:
        return f"axis={self.axis}"


class Argmin(Argmax):
    pass


class Shape_i(Op):  # noqa: N801 - Theano's name
    """`Shape_i{i}`: the length of axis `i`."""

    @property
    def props(self) -> str:
        assert isinstance(self.ir_op, ag.DimOp)
        return str(self.ir_op.axis_value)


_OP_VIEWS.update({ag.ArgMaxOp: Argmax, ag.ArgMinOp: Argmin, ag.DimOp: Shape_i})


# extra_ops and sort (issue 13 item 4): Theano's CumOp, SortOp, ArgSortOp, SearchsortedOp


class CumOp(Op):
    """`CumOp{axis, add}` (`ag.cumsum`) or `CumOp{axis, mul}` (`ag.cumprod`)."""

    @property
    def props(self) -> str:
        assert isinstance(self.ir_op, ag.CumulativeOp)
        mode = "add" if isinstance(self.ir_op, ag.CumSumOp) else "mul"
        return f"{self.ir_op.axis_value}, {mode}"


class SortOp(Op):
    """`SortOp{axis=i}` (`ag.sort`; also `ArgSortOp` for `ag.argsort`)."""

    @property
    def props(self) -> str:
        assert isinstance(self.ir_op, ag.AxisOp)
        return f"axis={self.ir_op.axis_value}"


class ArgSortOp(SortOp):
    pass


class SearchsortedOp(Op):
    """`SearchsortedOp{side}` (`ag.searchsorted`)."""

    @property
    def props(self) -> str:
        assert isinstance(self.ir_op, ag.SearchSortedOp)
        return self.ir_op.side.data


_OP_VIEWS.update(
    {
        ag.CumSumOp: CumOp,
        ag.CumProdOp: CumOp,
        ag.SortOp: SortOp,
        ag.ArgSortOp: ArgSortOp,
        ag.SearchSortedOp: SearchsortedOp,
    }
)


# specialize: BLAS-shaped products (Theano's Gemv/Gemm; `Used the cpu` checks these names)


class Gemv(Op):
    """`alpha * A·x [+ beta * y0]` (`ag.gemv`); `props` names a transposed `A`. Also the
    fused pair of `ag.gemv_pair` (`A·x`, then `alpha * Aᵀ·g [+ beta * r0]` with `g`
    computed row by row from `A·x`, in one pass over `A`), whose `props` are `A,A.T`.
    One that accumulates into its `y0` (`ag.destroy_map`) shows `inplace`."""

    _inplace_in_props = True

    @property
    def props(self) -> str:
        if isinstance(self.ir_op, ag.GemvPairOp):
            return "A,A.T"
        assert isinstance(self.ir_op, ag.GemvOp)
        return "A.T" if self.ir_op.transpose_a is not None else ""


class Gemm(Op):
    """`alpha * A·B [+ beta * Z0]` (`ag.gemm`); `props` names transposed operands, and
    `inplace` when it accumulates into `Z0`'s buffer (`ag.destroy_map`)."""

    _inplace_in_props = True

    @property
    def props(self) -> str:
        assert isinstance(self.ir_op, ag.GemmOp)
        flags = [("A.T", self.ir_op.transpose_a), ("B.T", self.ir_op.transpose_b)]
        return ",".join(name for name, flag in flags if flag is not None)


_OP_VIEWS.update({ag.GemvOp: Gemv, ag.GemmOp: Gemm, ag.GemvPairOp: Gemv})


GPU_TARGET_ATTRIBUTE = "arignote.target"
"""On the optimized `func.func` of a function compiled for the GPU: `"cuda"`."""

_GPU_CLASSES: dict[type[Op], type[Op]] = {}


def gpu_view_class(view: type[Op]) -> type[Op]:
    """`view` in a function compiled for the GPU: its subclass named `Gpu<name>`
    (Theano's `GpuGemv`, `GpuGemm`, `GpuElemwise`: programs tell where a function runs
    by these names)."""
    cls = _GPU_CLASSES.get(view)
    if cls is None:
        doc = f"`{view.__name__}` in a function compiled for the GPU."
        cls = _GPU_CLASSES[view] = type(f"Gpu{view.__name__}", (view,), {"__doc__": doc})
    return cls


GpuGemv = gpu_view_class(Gemv)
"""Gemv on the GPU (cuBLAS's gemv)."""
GpuGemm = gpu_view_class(Gemm)
"""Gemm on the GPU (cuBLAS's gemm)."""


def _on_gpu(ir_op: Operation) -> bool:
    parent = ir_op.parent_op()
    while parent is not None and not isinstance(parent, FuncOp):
        parent = parent.parent_op()
    return parent is not None and GPU_TARGET_ATTRIBUTE in parent.attributes


# fusion: a fused cluster is Theano's `Elemwise{Composite{...}}`; a reduction with a
# fused body keeps its reduction's view (`Sum{axis=(1,),Composite{exp,mul}}`).


class Composite:
    """The scalar op of a fused node: the distinct ops it computes, in order."""

    def __init__(self, names: Sequence[str]):
        self.names = tuple(names)

    def __str__(self) -> str:
        return f"Composite{{{','.join(self.names)}}}"

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Composite) and other.names == self.names

    def __hash__(self) -> int:
        return hash(self.names)


class FusedElemwise(Elemwise):
    """An `ag.fused` cluster of elementwise ops; its class is named `Elemwise`."""

    @property
    def scalar_op(self) -> Composite:  # pyright: ignore[reportIncompatibleMethodOverride]
        assert isinstance(self.ir_op, ag.FusedOp)
        return Composite(self.ir_op.scalar_op_names())

    @property
    def props(self) -> str:
        return str(self.scalar_op)


FusedElemwise.__name__ = "Elemwise"
FusedElemwise.__qualname__ = "Elemwise"


def _fused_view(ir_op: ag.FusedOp) -> type[Op]:
    reduction = ir_op.reduction
    if reduction is None:
        return FusedElemwise
    base = _OP_VIEWS[type(reduction)]
    assert issubclass(base, CAReduce)
    return base


class Print(Op):
    """`Print{message}` (`ag.print`): shows its input each time it is computed."""

    @property
    def props(self) -> str:
        assert isinstance(self.ir_op, ag.PrintOp)
        return self.ir_op.message.data


_OP_VIEWS[ag.PrintOp] = Print


class Allreduce(Op):
    """`Allreduce{mean}` (`ag.allreduce`): the sum or mean over the MPI processes."""

    @property
    def props(self) -> str:
        assert isinstance(self.ir_op, ag.AllreduceOp)
        return self.ir_op.reduction.data


_OP_VIEWS[ag.AllreduceOp] = Allreduce


CUSTOM_OPS: dict[int, Op] = {}
"""The custom op of each `ag.python_op` callback id (filled by `arignote.compile.ops`)."""


_GPU_VIEWED: frozenset[type[Op]] = frozenset({Elemwise, FusedElemwise, Gemv, Gemm})
"""The views named `Gpu<name>` in a function compiled for the GPU (`gpu_view_class`)."""


def op_view(ir_op: Operation) -> Op:
    """The Theano-style op object of an IR operation (for an `ag.python_op`, the user's
    custom op itself)."""
    if isinstance(ir_op, ag.FusedOp):
        view = _fused_view(ir_op)
    elif isinstance(ir_op, ag.PythonOp) and ir_op.callback_id in CUSTOM_OPS:
        return CUSTOM_OPS[ir_op.callback_id]
    else:
        view = _OP_VIEWS.get(type(ir_op))
        if view is None:
            view = Elemwise if _is_elementwise(ir_op) else Op
    if view in _GPU_VIEWED and _on_gpu(ir_op):
        view = gpu_view_class(view)
    return view(ir_op)


def _is_elementwise(ir_op: Operation) -> bool:
    return isinstance(ir_op, ag.BinaryElementwiseOp | ag.UnaryElementwiseOp | ag.SelectOp)


class Apply:
    """One application of an op: `op`, `inputs` and `outputs` (Theano's `Apply` node).

    `Apply(ir_op)` views an `ag` operation. `Apply(op, inputs, outputs)`, as a custom
    op's `make_node` returns it, applies the custom `op` to the variables `inputs`: it
    builds an `ag.python_op` whose results become the variables `outputs` (fresh
    variables of the output types, e.g. `x.type()`), which then have this node as owner.
    """

    def __init__(
        self,
        ir_op: Any,
        inputs: Sequence[Variable] | None = None,
        outputs: Sequence[Variable] | None = None,
    ):
        if isinstance(ir_op, Operation):
            if inputs is not None or outputs is not None:
                raise TypeError("Apply(ir_op) views an operation: it takes no inputs or outputs")
            self.ir_op = ir_op
            return
        from arignote.compile.ops import apply_custom_op

        self.ir_op = apply_custom_op(self, ir_op, inputs, outputs)

    @property
    def op(self) -> Op:
        return op_view(self.ir_op)

    @property
    def inputs(self) -> list[Variable]:
        return [variable_of(v) for v in graph_operands(self.ir_op)]

    @property
    def outputs(self) -> list[Variable]:
        return [variable_of(v) for v in self.ir_op.results]

    @property
    def out(self) -> Variable:
        return self.outputs[0]

    @property
    def nin(self) -> int:
        return len(self.ir_op.operands)

    @property
    def nout(self) -> int:
        return len(self.ir_op.results)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Apply) and other.ir_op is self.ir_op

    def __hash__(self) -> int:
        return id(self.ir_op)

    def __repr__(self) -> str:
        return f"{self.op}({', '.join(str(i) for i in self.inputs)})"


RegionInputs = Callable[[Operation], list[tuple[SSAValue, int | None]]]
"""The graph inputs of a region-carrying op, each with the index of the region that
uses it (None: the op itself, as an operand)."""

REGION_INPUTS: dict[type[Operation], RegionInputs] = {}
"""Region-carrying op class → its `RegionInputs` (filled by the modules defining the
frontend of such ops, e.g. `arignote.ifelse`)."""


def region_inputs(op: Operation) -> list[tuple[SSAValue, int | None]]:
    """The graph inputs of `op` with the region using each (see `RegionInputs`); an op
    without regions uses its operands itself."""
    rule = REGION_INPUTS.get(type(op)) if op.regions else None
    if rule is None:
        return [(v, None) for v in op.operands]
    return rule(op)


def graph_operands(op: Operation) -> Sequence[SSAValue]:
    """The inputs of `op` as Theano's graph sees them: its operands, and for a
    region-carrying op the values its regions take from outside (for `ag.if`: the
    condition, then each branch's results)."""
    if not op.regions or type(op) not in REGION_INPUTS:
        # a plain tuple (walks reverse it: the `operands` view and xDSL's tuple subclass
        # index in Python), copied in C from the op's own tuple
        return tuple(op._operands)
    return [v for v, _ in REGION_INPUTS[type(op)](op)]


def graph_inputs(outputs: Sequence[Variable]) -> list[Variable]:
    """The inputs (not constants) that `outputs` depend on, in first-seen order."""
    found: dict[SSAValue, None] = {}
    for op in ancestors([v.value for v in outputs]):
        for operand in graph_operands(op):
            if isinstance(operand, BlockArgument):
                found[operand] = None
    found.update({v.value: None for v in outputs if isinstance(v.value, BlockArgument)})
    return [variable_of(v) for v in found]


_WALKS: ContextVar[dict[tuple[Any, ...], list[Operation]] | None] = ContextVar(
    "_WALKS", default=None
)


@contextlib.contextmanager
def walks_remembered() -> Iterator[None]:
    """Within this block (of one thread), `ancestors` of the same values and stop
    values is computed once. For code that reads a graph several times without changing
    its operations (`function()` checks, collects and emits the same graph); operations
    built meanwhile are new ones and change no earlier walk. The values are held, so
    their identities stay theirs."""
    token = _WALKS.set({})
    try:
        yield
    finally:
        _WALKS.reset(token)


def remembered(key: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
    """`compute()`, computed once per `key` within `walks_remembered` (every time
    outside it): for other readings of an unchanged graph than `ancestors`. The key
    starts with a name of its own."""
    remembered = _WALKS.get()
    if remembered is None:
        return compute()
    if key not in remembered:
        remembered[key] = compute()
    return remembered[key]


def ancestors(values: Sequence[SSAValue], stop: Iterable[SSAValue] = ()) -> list[Operation]:
    """The operations that compute `values`, in topological order, not descending past
    the values in `stop` (iteratively: graphs can be deeper than Python's recursion
    limit)."""
    remembered = _WALKS.get()
    if remembered is None:
        return _ancestors(values, stop)
    key = (tuple(values), tuple(stop))
    order = remembered.get(key)
    if order is None:
        order = remembered[key] = _ancestors(values, key[1])
    return list(order)


def _ancestors(values: Sequence[SSAValue], stop: Iterable[SSAValue]) -> list[Operation]:
    # (This walk runs several times per `function()` over graphs of thousands of ops:
    # it keys by `id` and tests classes exactly, OpResult having no subclasses, to stay
    # off the slower generic paths.)
    stopped = {id(v) for v in stop}
    order: list[Operation] = []
    seen: set[int] = set()
    stack: list[tuple[Operation, bool]] = [
        (v.op, False) for v in reversed(values) if type(v) is OpResult and id(v) not in stopped
    ]
    while stack:
        op, expanded = stack.pop()
        if expanded:
            order.append(op)
            continue
        if id(op) in seen:
            continue
        seen.add(id(op))
        stack.append((op, True))
        for operand in reversed(graph_operands(op)):
            if (
                type(operand) is OpResult
                and id(operand) not in stopped
                and id(operand.op) not in seen
            ):
                stack.append((operand.op, False))
    return order


# shapes and indexing (issue 13 item 3)


class SpecifyShape(Op):
    """`SpecifyShape`: its input, checked to have a given shape."""


class Nonzero(Op):
    """`Nonzero` (flat positions): the row-major positions of the nonzero elements."""


class Assert(Op):
    """`Assert`: its input, after a run-time check of a condition."""


_OP_VIEWS.update({ag.SpecifyShapeOp: SpecifyShape, ag.AssertOp: Assert, ag.FlatNonzeroOp: Nonzero})


# pooling (issue 14 item 2, area pool): Theano's Pool, MaxPoolGrad, AveragePoolGrad,
# DownsampleFactorMaxGradGrad and MaxPoolRop


class Pool(Op):
    """`Pool{ignore_border=True, mode='max', ndim=2}` (`ag.pool`; also the views of the
    pooling gradients, named after Theano's classes)."""

    def _theano_name(self) -> str:
        op = self.ir_op
        if isinstance(op, ag.MaxPoolGradGradOp):
            return "MaxPoolRop" if op.first_only else "DownsampleFactorMaxGradGrad"
        if isinstance(op, ag.MaxPoolGradOp):
            return "MaxPoolGrad"
        return "AveragePoolGrad" if isinstance(op, ag.AveragePoolGradOp) else "Pool"

    @property
    def props(self) -> str:
        op = self.ir_op
        assert isinstance(op, ag.PoolBase)
        return f"ignore_border={op.ignore_border_value}, mode='{op.mode_value}', ndim={op.nd}"

    def __str__(self) -> str:
        return f"{self._theano_name()}{{{self.props}}}"


_OP_VIEWS.update({cls: Pool for cls in ag.POOL_OPS})
