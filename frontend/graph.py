"""Theano's graph API as a view over `ag` IR.

A `Variable` wraps one SSA value: an input is the argument of a detached block, every
other variable is the result of a detached `ag` operation built when the expression is
written. `Variable.owner` is an `Apply` view of that operation, whose `op` is a Theano-style
`Op` object (`Elemwise{add}`, `DimShuffle{1,0}`, `Sum{axis=(0,)}`, `Dot`, ...).
`arignote.function` later clones the operations it needs into one `func.func`.
"""

from __future__ import annotations

import os
import sys
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue

from arignote.configuration import config
from arignote.dialects import ag
from arignote.runtime.dtypes import constant_array, dense_attr

if TYPE_CHECKING:
    from arignote.tensor.type import TensorType

_VARIABLES: weakref.WeakValueDictionary[SSAValue, Variable] = weakref.WeakValueDictionary()
"""The frontend variable of each SSA value, so that `owner.inputs` gives back the very
variables the user holds."""


def _basic() -> Any:
    from arignote.tensor import basic

    return basic


def _subtensor() -> Any:
    from arignote.tensor import subtensor

    return subtensor


class Tag:
    """A free-form namespace attached to a variable (Theano's `var.tag`)."""

    def __repr__(self) -> str:
        return f"Tag({vars(self)})"


class Variable:
    """A symbolic tensor: the value of an input, a constant, or an operation's result."""

    def __init__(self, value: SSAValue, name: str | None = None):
        self.value = value
        self.name = name
        self.tag = Tag()
        _VARIABLES[value] = self

    # --- Theano's graph API ------------------------------------------------------------

    @property
    def type(self) -> TensorType:
        from arignote.tensor.type import TensorType  # the tensor package imports this module

        return TensorType.from_ir(self.value.type)

    @property
    def dtype(self) -> str:
        return self.type.dtype

    @property
    def ndim(self) -> int:
        return len(ag.tensor_type(self.value).get_shape())

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
        return self.name if self.name is not None else str(self)

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

    def sum(self, axis: Any = None, keepdims: bool = False, dtype: str | None = None) -> Variable:
        return _basic().sum(self, axis, keepdims, dtype)

    def prod(self, axis: Any = None, keepdims: bool = False, dtype: str | None = None) -> Variable:
        return _basic().prod(self, axis, keepdims, dtype)

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

    def take(self, indices: Any, axis: int | None = None) -> Variable:
        return _subtensor().take(self, indices, axis)

    # --- shapes, argmax/argmin, statistics (see arignote.tensor.basic) -----------------

    @property
    def shape(self) -> Any:
        """The symbolic shape: `x.shape[i]` is a 0-d int64 variable (`shape_i`)."""
        return _basic().shape(self)

    def argmax(self, axis: Any = None, keepdims: bool = False) -> Variable:
        return _basic().argmax(self, axis, keepdims)

    def argmin(self, axis: Any = None, keepdims: bool = False) -> Variable:
        return _basic().argmin(self, axis, keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False, dtype: str | None = None) -> Variable:
        return _basic().mean(self, axis, keepdims, dtype)

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
    var = _VARIABLES.get(value)
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


def _user_location() -> str | None:
    """`file.py:line` of the first stack frame outside arignote (None if there is none)."""
    frame = sys._getframe(2)
    while frame is not None and _is_internal_file(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return None
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"


def apply_op(op: Operation) -> Variable:
    """Wrap the single result of a freshly built op (and compute its test value when
    `config.compute_test_value` is on). The op gets an `ag.node` label naming its node
    and the user's source line, for run-time error messages."""
    if NODE_ATTRIBUTE not in op.attributes:
        where = _user_location()
        label = f"{op_view(op)} at {where}" if where else str(op_view(op))
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
    """A view of what an `ag` operation computes, named like Theano's op classes."""

    def __init__(self, ir_op: Operation):
        self.ir_op = ir_op

    @property
    def props(self) -> str:
        return ""

    @property
    def destroy_map(self) -> dict[int, list[int]]:
        """Theano's `destroy_map`: output index → the input indices it overwrites (set by
        the `inplace` pass; such an op is shown as `Elemwise{add}[(0, 1)]`)."""
        return {r: [k] for r, k in ag.destroy_map(self.ir_op).items()}

    _inplace_in_props = False
    """Whether the op shows a destroy map as `{inplace}` (Theano's `Gemm{inplace}`)
    instead of the pairs (`Elemwise{add}[(0, 1)]`)."""

    @property
    def view_map(self) -> dict[int, list[int]]:
        """Theano's `view_map`: output index → the input indices whose memory it may share
        (`{0: [0]}` for `Subtensor`: native code reads it through a strided view)."""
        return {r: [k] for r, k in ag.view_map(self.ir_op).items()}

    def __str__(self) -> str:
        props = self.props
        pairs = ag.destroy_map(self.ir_op)
        if pairs and self._inplace_in_props:
            props = f"{props},inplace" if props else "inplace"
        name = f"{type(self).__name__}{{{props}}}" if props else type(self).__name__
        if pairs and not self._inplace_in_props:
            name += "[" + ", ".join(f"({r}, {k})" for r, k in pairs.items()) + "]"
        return name

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and str(other) == str(self)

    def __hash__(self) -> int:
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


def _fused_view(ir_op: ag.FusedOp) -> Op:
    reduction = ir_op.reduction
    if reduction is None:
        return FusedElemwise(ir_op)
    base = _OP_VIEWS[type(reduction)]
    assert issubclass(base, CAReduce)
    return base(ir_op)


class Print(Op):
    """`Print{message}` (`ag.print`): shows its input each time it is computed."""

    @property
    def props(self) -> str:
        assert isinstance(self.ir_op, ag.PrintOp)
        return self.ir_op.message.data


_OP_VIEWS[ag.PrintOp] = Print


def op_view(ir_op: Operation) -> Op:
    """The Theano-style op object of an IR operation."""
    if isinstance(ir_op, ag.FusedOp):
        return _fused_view(ir_op)
    view = _OP_VIEWS.get(type(ir_op))
    if view is None:
        view = Elemwise if _is_elementwise(ir_op) else Op
    return view(ir_op)


def _is_elementwise(ir_op: Operation) -> bool:
    return isinstance(ir_op, ag.BinaryElementwiseOp | ag.UnaryElementwiseOp | ag.SelectOp)


class Apply:
    """One application of an op: `op`, `inputs` and `outputs` (Theano's `Apply` node)."""

    def __init__(self, ir_op: Operation):
        self.ir_op = ir_op

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
        return op.operands
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


def ancestors(values: Sequence[SSAValue], stop: Iterable[SSAValue] = ()) -> list[Operation]:
    """The operations that compute `values`, in topological order, not descending past
    the values in `stop` (iteratively: graphs can be deeper than Python's recursion
    limit)."""
    stopped = set(stop)  # SSA values hash by identity
    order: list[Operation] = []
    seen: set[int] = set()
    stack: list[tuple[Operation, bool]] = [
        (v.op, False) for v in reversed(values) if isinstance(v, OpResult) and v not in stopped
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
                isinstance(operand, OpResult)
                and operand not in stopped
                and id(operand.op) not in seen
            ):
                stack.append((operand.op, False))
    return order
