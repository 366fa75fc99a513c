"""Run-time shapes of `ag` values, and the checks that make them consistent.

A shape rule takes an `ag` op and the dimension lengths of its operands (`Dim`: an int
for a static length, an `index` SSA value otherwise) and returns the lengths of its
result and the checks the op needs at run time. The rules in `SHAPE_RULES` only *select*
operand dimensions, so they emit no IR; the rules in `VALUE_SHAPE_RULES` (the indexing,
reshape and allocation ops of `lowering/loops/ag_indexing.py`) may also read the values of 0-d
operands through a `ShapeContext` and emit index arithmetic. `ag-to-loops` uses the rules
twice: in `@f__shape`, which emits the checks, and in `@f`, which trusts them.

The checks follow `ag`'s rules: along each broadcast axis every operand dimension that
is not a static 1 must be equal (a dynamic dimension never broadcasts), `dot`'s
contracted dimensions must be equal, and `reduce_max`/`reduce_min` need every reduced
axis to be non-empty. A check's message is a `%`-format string with one `%d` per value
the check reports at run time. Messages read like the interpreter's (`runtime/interpreter.py`):
the op's label (its graph node and the user's source line), operand shapes as numbers
(`shape_text`: static lengths written in, dynamic ones reported), never IR types or the
`ag` operands' internal names.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from xdsl.builder import Builder
from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from arignote.dialects import ag
from arignote.lowering.loops.loop_utils import Buffer, Dim

NODE_ATTRIBUTE = "ag.node"
"""An optional string attribute on an `ag` op naming its graph node in messages."""


@dataclass(frozen=True)
class Check:
    """A run-time condition on dimensions.

    `kind == "equal"`: fails when `a != b`. `kind == "nonempty"`: fails when `b == 0`.
    `kind == "holds"`: fails when the `i1` value `ok` is false (`a` and `b` may then also
    be `i64` values). On failure the runtime reports `message % shown` (`shown` defaults
    to `(a, b)`; its values are lengths, `index` or integer SSA values).
    """

    message: str
    a: Dim
    b: Dim
    kind: Literal["equal", "nonempty", "holds"] = "equal"
    ok: SSAValue | None = None
    shown: tuple[Dim, ...] | None = None

    def __post_init__(self) -> None:
        if message_arity(self.message) != len(self.reported):
            count = len(self.reported)
            raise ValueError(f"the check message {self.message!r} must show {count} values")

    @property
    def reported(self) -> tuple[Dim, ...]:
        """The values the message is filled from, in order."""
        return (self.a, self.b) if self.shown is None else self.shown

    @property
    def is_static(self) -> bool:
        """Known to hold at compile time (the verifier already rejected static conflicts)."""
        return self.kind == "equal" and isinstance(self.a, int) and isinstance(self.b, int)


def message_arity(message: str) -> int:
    """How many values a check message takes (its `%d`s; `%%` is a literal `%`)."""
    return message.replace("%%", "").count("%")


def shape_text(dims: Sequence[Dim]) -> tuple[str, tuple[Dim, ...]]:
    """An operand's run-time shape for a check message, as NumPy prints it (`(3, %d)`,
    `(%d,)`, `()`): static lengths written in, a `%d` for each dynamic one; and the
    dynamic lengths, which the check reports."""
    texts = [str(d) if isinstance(d, int) else "%d" for d in dims]
    text = "(" + ", ".join(texts) + ("," if len(texts) == 1 else "") + ")"
    return text, tuple(d for d in dims if not isinstance(d, int))


def shapes_text(shapes: Sequence[Sequence[Dim]]) -> tuple[str, tuple[Dim, ...]]:
    """Several shapes as the interpreter lists them (`A and B`, `A, B and C`), and the
    dynamic lengths they report."""
    parts = [shape_text(dims) for dims in shapes]
    texts = [text for text, _ in parts]
    text = ", ".join(texts[:-1]) + " and " + texts[-1] if len(texts) > 1 else texts[0]
    return text, tuple(v for _, values in parts for v in values)


RuleResult = tuple[list[Dim], list[Check]]
"""A result's dimension lengths and the checks of the op."""

ShapeRule = Callable[[Operation, Sequence[Sequence[Dim]]], RuleResult]


class ShapeContext(Protocol):
    """What a *value* shape rule may use besides dimensions: the rule emits IR at
    `builder` (which `ag-to-loops` moves past each emitted check) and may read operand
    values. In `@f__shape`, an operand computed by the body is computed there first (into
    a temporary freed after the rule); in `@f` it is the operand's buffer. Checks are
    only wanted (`emit_checks`) in `@f__shape`."""

    builder: Builder
    emit_checks: bool

    def scalar(self, operand: int) -> SSAValue:
        """The value of the 0-d operand #`operand`, of its element type."""
        ...

    def value(self, operand: int) -> SSAValue:
        """The value of the 0-d integer operand #`operand`, as an `index`."""
        ...

    def buffer(self, operand: int) -> Buffer:
        """A buffer holding operand #`operand`."""
        ...


ValueShapeRule = Callable[[Operation, Sequence[Sequence[Dim]], ShapeContext], RuleResult]


def _type(t: Attribute) -> TensorType[Attribute]:
    assert isinstance(t, TensorType)
    return t


def op_label(op: Operation) -> str:
    """The op's name, with its `ag.node` label if any, escaped for `%` formatting."""
    node = op.attributes.get(NODE_ATTRIBUTE)
    label = op.name if not isinstance(node, StringAttr) else f"{op.name} [{node.data}]"
    return label.replace("%", "%%")


def broadcast_rule(op: Operation, dims: Sequence[Sequence[Dim]]) -> RuleResult:
    """NumPy broadcasting, right-aligned; static 1s stretch, all other lengths must agree.

    Along each axis the result takes a static length if an operand has one, else the
    first dynamic one; each later non-1 operand dimension is checked against the
    earlier one.
    """
    shapes = [_type(o.type).get_shape() for o in op.operands]
    rank = max(len(s) for s in shapes)
    result: list[Dim] = []
    checks: list[Check] = []
    for axis in range(rank):
        present = [
            d[axis - rank + len(d)]
            for d, s in zip(dims, shapes, strict=True)
            if axis - rank + len(s) >= 0 and s[axis - rank + len(s)] != 1
        ]
        statics = [d for d in present if isinstance(d, int)]
        result.append(statics[0] if statics else present[0] if present else 1)
        text, shown = shapes_text(dims)
        message = f"{op_label(op)}: operand shapes {text} do not match at dimension {axis}"
        pairs = [
            Check(message, a, b, shown=shown) for a, b in zip(present, present[1:], strict=False)
        ]
        checks += [c for c in pairs if not c.is_static]
    return result, checks


def same_rule(op: Operation, dims: Sequence[Sequence[Dim]]) -> RuleResult:
    """The result has the shape of the only operand."""
    return list(dims[0]), []


def constant_rule(op: Operation, dims: Sequence[Sequence[Dim]]) -> RuleResult:
    return list(_type(op.results[0].type).get_shape()), []


def dimshuffle_rule(op: Operation, dims: Sequence[Sequence[Dim]]) -> RuleResult:
    assert isinstance(op, ag.DimShuffleOp)
    return [1 if p == ag.NEWAXIS else dims[0][p] for p in op.pattern_list], []


def reduce_rule(op: Operation, dims: Sequence[Sequence[Dim]]) -> RuleResult:
    """Reduced axes disappear; a maximum or minimum needs non-empty reduced axes."""
    assert isinstance(op, ag.ReduceOp)
    axes = op.axes_list
    result = [d for axis, d in enumerate(dims[0]) if axis not in axes]
    if not isinstance(op, ag.ReduceMaxOp | ag.ReduceMinOp):
        return result, []
    return result, empty_axis_checks(op, axes, dims[0])


def empty_axis_checks(op: Operation, axes: Sequence[int], dims: Sequence[Dim]) -> list[Check]:
    """Each reduced axis of an operand of `dims` must be non-empty (as the interpreter
    says: `cannot reduce shape (0, 3) over axes [0]: an axis is empty`)."""
    text, shown = shape_text(dims)
    message = f"{op_label(op)}: cannot reduce shape {text} over axes {list(axes)}: an axis is empty"
    return [
        Check(message, axis, dims[axis], "nonempty", shown=shown)
        for axis in axes
        if not isinstance(dims[axis], int) or dims[axis] == 0
    ]


def contracted_dim(lhs: Sequence[Dim], rhs: Sequence[Dim]) -> Dim:
    """The length of `dot`'s contracted axis, preferring a static one."""
    return lhs[-1] if isinstance(lhs[-1], int) else rhs[0]


def dot_rule(op: Operation, dims: Sequence[Sequence[Dim]]) -> RuleResult:
    """`lhs[:-1] + rhs[1:]`; the contracted lengths `lhs[-1]` and `rhs[0]` must agree."""
    lhs, rhs = dims
    return [*lhs[:-1], *rhs[1:]], contracted_checks(op, lhs, rhs, lhs[-1], rhs[0])


def contracted_checks(
    op: Operation, lhs: Sequence[Dim], rhs: Sequence[Dim], a: Dim, b: Dim
) -> list[Check]:
    """`a == b`, the contracted lengths of a product of operands of shapes `lhs` and
    `rhs` (as the user wrote them: transposed where the op transposes)."""
    text, shown = shapes_text([lhs, rhs])
    message = f"{op_label(op)}: contracted dimensions of operand shapes {text} differ"
    check = Check(message, a, b, shown=shown)
    return [] if check.is_static else [check]


def accumulated_message(
    op: Operation, initial: Sequence[Dim], product: Sequence[Dim]
) -> tuple[str, tuple[Dim, ...]]:
    """The message of a check that a product's accumulated operand (`gemv`'s `y0`,
    `gemm`'s `Z0`) has the product's shape, and the lengths it reports."""
    (initial_text, initial_shown), (product_text, product_shown) = (
        shape_text(initial),
        shape_text(product),
    )
    message = (
        f"{op_label(op)}: the accumulated operand has shape {initial_text}, "
        f"the product {product_text}"
    )
    return message, (*initial_shown, *product_shown)


SHAPE_RULES: dict[type[Operation], ShapeRule] = {
    ag.ConstantOp: constant_rule,
    **{cls: broadcast_rule for cls in ag.BINARY_OPS},
    **{cls: same_rule for cls in ag.UNARY_OPS},
    ag.SelectOp: broadcast_rule,
    ag.CastOp: same_rule,
    ag.DimShuffleOp: dimshuffle_rule,
    **{cls: reduce_rule for cls in ag.REDUCE_OPS},
    ag.DotOp: dot_rule,
}
"""`ag` op class → its shape rule."""


# --- op library A: argmax/argmin, dim ----------------------------------------------------


def arg_reduce_rule(op: Operation, dims: Sequence[Sequence[Dim]]) -> RuleResult:
    """Reduced axes disappear; each must be non-empty."""
    assert isinstance(op, ag.ArgReduceOp)
    axes = op.axes_list
    result = [d for axis, d in enumerate(dims[0]) if axis not in axes]
    return result, empty_axis_checks(op, axes, dims[0])


def dim_rule(op: Operation, dims: Sequence[Sequence[Dim]]) -> RuleResult:
    """A 0-d result; no checks."""
    return [], []


SHAPE_RULES.update(
    {
        ag.ArgMaxOp: arg_reduce_rule,
        ag.ArgMinOp: arg_reduce_rule,
        ag.DimOp: dim_rule,
    }
)

VALUE_SHAPE_RULES: dict[type[Operation], ValueShapeRule] = {}
"""`ag` op class → its shape rule reading operand values through a `ShapeContext`
(filled by `arignote.lowering.loops.ag_indexing`)."""


def result_dims(
    op: Operation, operand_dims: Sequence[Sequence[Dim]], context: ShapeContext | None = None
) -> RuleResult:
    """The result's dimension lengths (static where its type is) and the op's checks.

    Ops with a value shape rule need `context`."""
    value_rule = VALUE_SHAPE_RULES.get(type(op))
    if value_rule is not None:
        if context is None:
            raise NotImplementedError(f"ag-to-loops: the shape of {op.name} needs operand values")
        dims, checks = value_rule(op, operand_dims, context)
    else:
        rule = SHAPE_RULES.get(type(op))
        if rule is None:
            raise NotImplementedError(f"ag-to-loops: no shape rule for {op.name}")
        dims, checks = rule(op, operand_dims)
    static = _type(op.results[0].type).get_shape()
    merged: list[Dim] = [d if s == ag.DYNAMIC else s for s, d in zip(static, dims, strict=True)]
    return merged, checks


MultiShapeRule = Callable[[Operation, Sequence[Sequence[Dim]]], tuple[list[list[Dim]], list[Check]]]

MULTI_RESULT_SHAPE_RULES: dict[type[Operation], MultiShapeRule] = {}
"""`ag` op class → its shape rule giving the dimensions of each of its results (ops
that may have several results, such as `ag.fused`; filled by `lowering/loops/ag_fused.py`)."""


MultiValueShapeRule = Callable[
    [Operation, Sequence[Sequence[Dim]], ShapeContext], tuple[list[list[Dim]], list[Check]]
]

MULTI_VALUE_SHAPE_RULES: dict[type[Operation], MultiValueShapeRule] = {}
"""`ag` op class → its shape rule giving the dimensions of each of its results from the
operands' values; it may emit IR at the context's builder (the LAPACK ops' `min(m, n)`,
filled by `lowering/loops/ag_lapack.py`; `ag.python_op`, whose shapes are known once it has
run, filled by `lowering/loops/ag_python.py`)."""
MULTI_RESULT_VALUE_SHAPE_RULES = MULTI_VALUE_SHAPE_RULES
"""The same table (the name `lowering/loops/ag_python.py` uses)."""


def results_dims(
    op: Operation, operand_dims: Sequence[Sequence[Dim]], context: ShapeContext | None = None
) -> tuple[list[list[Dim]], list[Check]]:
    """`result_dims` for every result of `op`: the dimension lengths of each result
    (static where its type is) and the op's checks."""
    value_rule = MULTI_VALUE_SHAPE_RULES.get(type(op))
    rule = MULTI_RESULT_SHAPE_RULES.get(type(op))
    if value_rule is not None:
        if context is None:
            raise NotImplementedError(f"ag-to-loops: the shape of {op.name} needs operand values")
        all_dims, checks = value_rule(op, operand_dims, context)
    elif rule is None:
        dims, checks = result_dims(op, operand_dims, context)
        return [dims], checks
    else:
        all_dims, checks = rule(op, operand_dims)
    merged = [
        [d if s == ag.DYNAMIC else s for s, d in zip(_type(r.type).get_shape(), dims, strict=True)]
        for r, dims in zip(op.results, all_dims, strict=True)
    ]
    return merged, checks
