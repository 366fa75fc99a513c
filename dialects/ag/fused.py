"""`ag.fused`: a cluster of elementwise ops (and optionally one reduction) computed in
one loop nest.

The region is the cluster itself, cut out of the graph: its block arguments have the
types of the op's operands, its ops are ordinary `ag` ops *with their original tensor
types* (and their `ag.node` labels), and it ends with `ag.yield` of the op's results.
The region is meant to be evaluated *pointwise* over one iteration domain, so it may
hold only ops whose element `i` depends on element `i'` of their operands (with `i'`
the broadcast or dimshuffled index): splat constants, elementwise ops (binary, unary,
`select`, `cast`) and `dimshuffle`, plus at most one reduction as its last computing
op. Keeping the tensor types (instead of scalar block arguments, as Theano's
`Composite`) means the region verifies, interprets and shape-checks as the ops did
before fusion: the reference interpreter runs it on whole arrays, and `ag-to-loops`
replays the ops' shape rules for the same run-time checks and messages.

- Elementwise form: every yielded value has the *domain* type (the static shape of the
  first result); every other value of the region broadcasts to the domain.
- Reduction form: the region's last computing op is an `ag.reduce_*`, yielded first;
  the domain is the shape of its operand, and any other yielded value has the domain
  shape (an elementwise value computed in the same loop, also used elsewhere).

```mlir
%r = ag.fused %x, %y : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32> {
^bb0(%a: tensor<?xf32>, %b: tensor<?xf32>):
  %e = ag.exp %a : tensor<?xf32>
  %m = ag.mul %e, %b : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  ag.yield %m : tensor<?xf32>
}
```
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import DenseArrayBase, DenseIntOrFPElementsAttr, TensorType, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import IsolatedFromAbove, Pure
from xdsl.utils.exceptions import VerifyException

from arignote.dialects.ag.base import AgOperation, broadcast_shapes, shape_str
from arignote.dialects.ag.control import YieldOp
from arignote.dialects.ag.dominance import verify_region_uses
from arignote.dialects.ag.elementwise import (
    BinaryElementwiseOp,
    CastOp,
    ConstantOp,
    SelectOp,
    UnaryElementwiseOp,
)
from arignote.dialects.ag.layout import DimShuffleOp
from arignote.dialects.ag.reductions import ReduceOp

POINTWISE_OPS: tuple[type[Operation], ...] = (
    BinaryElementwiseOp,
    UnaryElementwiseOp,
    SelectOp,
    CastOp,
    DimShuffleOp,
)
"""The op classes (and bases) allowed in an `ag.fused` region besides splat constants
and one final reduction."""


def is_splat(op: ConstantOp) -> bool:
    """Whether every element of the constant is the same (a fill)."""
    value = op.value
    assert isinstance(value, DenseIntOrFPElementsAttr)
    data = value.data.data
    width = len(data) // max(1, len(value.get_values())) if data else 0
    return width == 0 or len({data[i : i + width] for i in range(0, len(data), width)}) <= 1


DESTROY_MAP_ATTRIBUTE = "ag.destroy_map"
"""An optional `i64` array attribute of pairs `[r, k, ...]`: result `r` of the op is
computed into the buffer of operand `k`, which the op destroys (Theano's
`destroy_map`; set by the `inplace` pass, honoured by `ag-to-loops`). The operand must
have the result's type and be dead after the op."""


def destroy_map(op: Operation) -> dict[int, int]:
    """The op's destroy map: result index → the index of the operand it overwrites."""
    attr = op.attributes.get(DESTROY_MAP_ATTRIBUTE)
    if not isinstance(attr, DenseArrayBase):
        return {}
    values = [int(v) for v in attr.get_values()]
    return dict(zip(values[::2], values[1::2], strict=True))


def set_destroy_map(op: Operation, pairs: Sequence[int]) -> None:
    """Sets the op's destroy map from `[r, k, ...]` pairs."""
    op.attributes[DESTROY_MAP_ATTRIBUTE] = DenseArrayBase.from_list(i64, list(pairs))


def verify_destroy_map(op: Operation) -> None:
    """VerifyException unless the op's destroy map pairs results with operands of the
    same type, each operand at most once."""
    attr = op.attributes.get(DESTROY_MAP_ATTRIBUTE)
    if attr is None:
        return
    if not isinstance(attr, DenseArrayBase) or attr.elt_type != i64 or len(attr) % 2:
        raise VerifyException(
            f"'{op.name}' op {DESTROY_MAP_ATTRIBUTE} must be an i64 array of (result, operand) "
            f"pairs, got {attr}"
        )
    pairs = destroy_map(op)
    if len(set(pairs.values())) != len(pairs):
        raise VerifyException(f"'{op.name}' op {DESTROY_MAP_ATTRIBUTE} destroys an operand twice")
    for r, k in pairs.items():
        if not (0 <= r < len(op.results) and 0 <= k < len(op.operands)):
            raise VerifyException(
                f"'{op.name}' op {DESTROY_MAP_ATTRIBUTE} pair ({r}, {k}) is out of range"
            )
        if op.results[r].type != op.operands[k].type:
            raise VerifyException(
                f"'{op.name}' op {DESTROY_MAP_ATTRIBUTE}: result #{r} ({op.results[r].type}) "
                f"cannot overwrite operand #{k} ({op.operands[k].type})"
            )


@irdl_op_definition
class FusedOp(AgOperation):
    """Elementwise ops (and optionally one reduction) fused into one loop nest; see the
    module doc. Theano shows it as `Elemwise{Composite{...}}`."""

    name = "ag.fused"

    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")

    assembly_format = "$inputs `:` type($inputs) `->` type($outputs) $body attr-dict"
    traits = traits_def(Pure(), IsolatedFromAbove())

    def __init__(
        self,
        inputs: Sequence[SSAValue],
        result_types: Sequence[Attribute],
        body: Region | Block,
    ):
        region = body if isinstance(body, Region) else Region(body)
        super().__init__(operands=[inputs], result_types=[result_types], regions=[region])

    # --- structure ---------------------------------------------------------------------

    @property
    def block(self) -> Block:
        block = self.body.block
        return block

    @property
    def terminator(self) -> YieldOp:
        last = self.block.last_op
        assert isinstance(last, YieldOp)
        return last

    @property
    def computing_ops(self) -> list[Operation]:
        """The region's ops except the terminator, in order."""
        return [op for op in self.block.ops if not isinstance(op, YieldOp)]

    @property
    def reduction(self) -> ReduceOp | None:
        """The final reduction of the reduction form, or None."""
        ops = self.computing_ops
        return ops[-1] if ops and isinstance(ops[-1], ReduceOp) else None

    @property
    def domain_type(self) -> TensorType:
        """The type whose shape the loop nest iterates over."""
        reduction = self.reduction
        t = reduction.input.type if reduction is not None else self.outputs[0].type
        assert isinstance(t, TensorType)
        return t

    def scalar_op_names(self) -> list[str]:
        """The distinct computing op names of the region (without `ag.`), in order;
        constants and dimshuffles are left out, as Theano's `Composite{add,mul}`."""
        names: dict[str, None] = {}
        for op in self.computing_ops:
            if isinstance(op, ConstantOp | DimShuffleOp | ReduceOp):
                continue
            names[op.name.removeprefix("ag.")] = None
        return list(names)

    # --- verification ------------------------------------------------------------------

    def _fail(self, message: str) -> VerifyException:
        return VerifyException(f"'{self.name}' op {message}")

    def verify_(self) -> None:
        if not self.inputs:
            raise self._fail("expects at least one operand")
        if not self.outputs:
            raise self._fail("expects at least one result")
        block = self.block
        arg_types = [a.type for a in block.args]
        operand_types = [o.type for o in self.inputs]
        if arg_types != operand_types:
            raise self._fail(
                f"region arguments {_types(arg_types)} must have the operand types "
                f"{_types(operand_types)}"
            )
        if not isinstance(block.last_op, YieldOp):
            raise self._fail("region must end with ag.yield")
        yielded = [v.type for v in self.terminator.values]
        result_types = [r.type for r in self.outputs]
        if yielded != result_types:
            raise self._fail(
                f"yields {_types(yielded)}, which must be the result types {_types(result_types)}"
            )
        verify_destroy_map(self)
        ops = self.computing_ops
        for op in ops[:-1] if self.reduction is not None else ops:
            self._verify_pointwise(op)
        if self.reduction is not None:
            self._verify_reduction_form()
        else:
            self._verify_elementwise_form()
        verify_region_uses(self)

    def _verify_pointwise(self, op: Operation) -> None:
        if isinstance(op, ConstantOp):
            if not is_splat(op):
                raise self._fail(f"region may only hold splat constants, got {op.value}")
            return
        if not isinstance(op, POINTWISE_OPS):
            raise self._fail(
                f"region may hold elementwise ops, dimshuffles, splat constants and one "
                f"final reduction, got {op.name}"
            )

    def _check_broadcasts(self, values: Sequence[SSAValue], domain: TensorType) -> None:
        """Every value an elementwise op reads must broadcast to the domain; a value read
        only by dimshuffles (`log(v.dimshuffle(0, 'x'))`) is placed by their patterns."""
        shape = domain.get_shape()
        for value in values:
            if value.uses and all(isinstance(u.operation, DimShuffleOp) for u in value.uses):
                continue
            t = value.type
            assert isinstance(t, TensorType)
            if len(t.get_shape()) > len(shape) or broadcast_shapes(t.get_shape(), shape) != shape:
                raise self._fail(
                    f"region value of type {t} does not broadcast to the domain {shape_str(shape)}"
                )

    def _verify_elementwise_form(self) -> None:
        domain = self.domain_type
        for r in self.outputs:
            if not isinstance(r.type, TensorType) or r.type.get_shape() != domain.get_shape():
                raise self._fail(
                    f"results must all have the domain shape {shape_str(domain.get_shape())}, "
                    f"got {r.type}"
                )
        values = [*self.block.args, *(v for op in self.computing_ops for v in op.results)]
        self._check_broadcasts(values, domain)

    def _verify_reduction_form(self) -> None:
        reduction = self.reduction
        assert reduction is not None
        first, *rest = self.terminator.values
        if first is not reduction.result or reduction.result in rest:
            raise self._fail("in the reduction form, the region must yield the reduction first")
        domain = self.domain_type.get_shape()
        for value in rest:
            t = value.type
            if not isinstance(t, TensorType) or t.get_shape() != domain:
                raise self._fail(
                    f"in the reduction form, results after the reduction must have the "
                    f"domain shape {shape_str(domain)}, got {t}"
                )
        others = [op for op in self.computing_ops if op is not reduction]
        values = [*self.block.args, *(v for op in others for v in op.results)]
        self._check_broadcasts(values, self.domain_type)


def _types(types: Sequence[Attribute]) -> str:
    return "(" + ", ".join(str(t) for t in types) + ")"
