"""`ag.scan`: a loop over steps whose body is a region (Theano's `scan`).

The body is one block. Its arguments are, in order: for each sequence and each of its
taps, the sequence's row `t + tap - min_tap` at step `t` (the sequence type without its
leading dimension); for each fed-back output and each of its (negative) taps `-k`, the
output's value `k` steps earlier (the initial value's type without its leading
dimension); then the non-sequences, whole. The body ends with `ag.yield`, one value per
output. Each result stacks one output over the steps: `n_steps x <the yielded shape>` (only the
last step, `min(n_steps, 1)` rows, for the outputs listed in `last_only`; the `L` rows
of the initial value that the taps read, then the steps, `L + n_steps` rows, for the
fed-back outputs listed in `with_initial`, the history buffer the loop writes anyway:
the `scan-history` pass sets it so that the gradient's `concatenate(h0, hs)` costs
nothing).

With the unit property `until` (Theano's `until`, a repeat-until loop), the last yielded
value is a 0-d `i1` condition and the last result a 0-d `i64`, the number of steps run:
the loop stops after the first step whose condition is true (that step's outputs
included), or after `n_steps`. The other results still have `n_steps` rows (the bound:
buffers are sized before the loop runs, as Theano's are); rows past the count are
unspecified, and the frontend returns `result[:count]`. The count's `output_taps` entry
is empty.

An output with taps has an initial value (an operand) whose leading dimension is the
history: with `L = max |tap|`, rows `0..L-1` are the values before step 0, oldest first
(tap `-k` reads row `L - k` at step 0). An output without taps is not fed back.

The number of steps is the optional `n_steps` operand (a 0-d integer tensor) or, when it
is absent, the shortest sequence's length minus its tap span (`max_tap - min_tap`). At
run time every sequence must be long enough for `n_steps` steps, `n_steps` must not be
negative, each initial value must hold at least `L` rows, and the shape of a fed-back
output must stay the shape of its initial value.

The op is isolated from above: everything the body reads is a block argument.

```mlir
%ys = ag.scan sequences(%x : tensor<?x?xf64>) initials(%h0 : tensor<1x?xf64>)
    non_sequences(%w : tensor<?x?xf64>)
    attributes {sequence_taps = [array<i64: 0>], output_taps = [array<i64: -1>]}
    -> tensor<?x?xf64> {
^bb0(%xt: tensor<?xf64>, %h: tensor<?xf64>, %w: tensor<?x?xf64>):
  %a = ag.dot %w, %h : tensor<?x?xf64>, tensor<?xf64> -> tensor<?xf64>
  %s = ag.add %a, %xt : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
  ag.yield %s : tensor<?xf64>
}
```
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    IntegerType,
    TensorType,
    UnitAttr,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    ParsePropInAttrDict,
    irdl_op_definition,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import IsolatedFromAbove, Pure
from xdsl.utils.exceptions import VerifyException

from arignote.dialects.ag.base import DYNAMIC, AgOperation, tensor_of
from arignote.dialects.ag.control import YieldOp
from arignote.dialects.ag.dominance import verify_region_uses

TapsAttr = ArrayAttr[DenseArrayBase]


def taps_attr(taps: Sequence[Sequence[int]]) -> ArrayAttr[DenseArrayBase]:
    return ArrayAttr([DenseArrayBase.from_list(i64, list(t)) for t in taps])


def _taps(attr: ArrayAttr[DenseArrayBase]) -> list[tuple[int, ...]]:
    return [tuple(int(v) for v in a.get_values()) for a in attr.data]


def _tensor(op_name: str, what: str, t: Attribute) -> TensorType:
    if not isinstance(t, TensorType):
        raise VerifyException(f"'{op_name}' op {what} must be a ranked tensor, got {t}")
    return t


def row_type(t: TensorType) -> TensorType:
    """`t` without its leading dimension."""
    return tensor_of(t.element_type, t.get_shape()[1:])


def compatible(a: TensorType, b: TensorType) -> bool:
    """Same element type and rank, each dimension equal or dynamic in one of them."""
    if a.element_type != b.element_type or a.get_num_dims() != b.get_num_dims():
        return False
    return all(
        x == y or DYNAMIC in (x, y) for x, y in zip(a.get_shape(), b.get_shape(), strict=True)
    )


@irdl_op_definition
class ScanOp(AgOperation):
    """A loop over steps computing stacked outputs (see the module doc)."""

    name = "ag.scan"

    n_steps = opt_operand_def(TensorType)
    """The number of steps (0-d integer); absent: from the sequences' lengths."""
    sequences = var_operand_def(TensorType)
    """Tensors iterated over their leading dimension."""
    initials = var_operand_def(TensorType)
    """One per fed-back output: the values before step 0 along a leading dimension."""
    non_sequences = var_operand_def(TensorType)
    """Tensors passed whole to every step."""

    sequence_taps = prop_def(TapsAttr)
    """Per sequence, its taps (offsets >= its smallest, relative to the step)."""
    output_taps = prop_def(TapsAttr)
    """Per output, its negative taps; empty for an output that is not fed back."""
    last_only = opt_prop_def(DenseArrayBase)
    """Outputs of which only the last step is kept: their result holds `min(n, 1)`
    rows (set by `scan-last-step` when every use reads the last row only)."""
    until = opt_prop_def(UnitAttr)
    """A repeat-until loop: the last yielded value is the stop condition, the last result
    the number of steps run (see the module doc)."""
    with_initial = opt_prop_def(DenseArrayBase)
    """Fed-back outputs whose result starts with the `L` initial rows their taps read
    (`L + n` rows; set by `scan-history`)."""

    outputs = var_result_def(TensorType)
    body = region_def("single_block")

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    traits = traits_def(IsolatedFromAbove(), Pure())

    assembly_format = (
        "(`steps` `(` $n_steps^ `:` type($n_steps) `)`)?"
        " `sequences` `(` ($sequences^ `:` type($sequences))? `)`"
        " `initials` `(` ($initials^ `:` type($initials))? `)`"
        " `non_sequences` `(` ($non_sequences^ `:` type($non_sequences))? `)`"
        " attr-dict-with-keyword `->` type($outputs) $body"
    )

    def __init__(
        self,
        n_steps: SSAValue | None,
        sequences: Sequence[SSAValue],
        initials: Sequence[SSAValue],
        non_sequences: Sequence[SSAValue],
        sequence_taps: Sequence[Sequence[int]],
        output_taps: Sequence[Sequence[int]],
        result_types: Sequence[Attribute],
        body: Block,
    ):
        super().__init__(
            operands=[[n_steps] if n_steps is not None else [], sequences, initials, non_sequences],
            result_types=[result_types],
            properties={
                "sequence_taps": taps_attr(sequence_taps),
                "output_taps": taps_attr(output_taps),
            },
            regions=[Region(body)],
        )

    # --- accessors ---------------------------------------------------------------------

    @property
    def sequence_tap_lists(self) -> list[tuple[int, ...]]:
        return _taps(self.sequence_taps)

    @property
    def output_tap_lists(self) -> list[tuple[int, ...]]:
        return _taps(self.output_taps)

    @property
    def last_only_outputs(self) -> set[int]:
        """The outputs of which only the last step is kept."""
        if self.last_only is None:
            return set()
        return {int(v) for v in self.last_only.get_values()}

    @property
    def with_initial_outputs(self) -> set[int]:
        """The fed-back outputs whose result starts with their `L` initial rows."""
        if self.with_initial is None:
            return set()
        return {int(v) for v in self.with_initial.get_values()}

    def output_tap_arguments(self) -> dict[int, list[BlockArgument]]:
        """Fed-back output → the body arguments of its taps (they follow the sequences'
        arguments, output by output)."""
        args = list(self.body.block.args)
        position = sum(len(t) for t in self.sequence_tap_lists)
        result: dict[int, list[BlockArgument]] = {}
        for i in self.recurrent_outputs:
            count = len(self.output_tap_lists[i])
            result[i] = args[position : position + count]
            position += count
        return result

    def take_output_marks(self, old: ScanOp, kept: Sequence[int]) -> None:
        """Gives this scan, rebuilt from `old` with `old`'s outputs `kept` (in that order)
        first, `old`'s `last_only` and `with_initial` marks on those outputs and its
        discardable attributes (what a pass rebuilding a scan must keep)."""
        last = [kept.index(i) for i in sorted(old.last_only_outputs) if i in kept]
        if last:
            self.last_only = DenseArrayBase.from_list(i64, last)
        whole = [kept.index(i) for i in sorted(old.with_initial_outputs) if i in kept]
        if whole:
            self.with_initial = DenseArrayBase.from_list(i64, whole)
        self.attributes.update(old.attributes)

    @property
    def has_until(self) -> bool:
        """Whether the loop stops on a condition (the last result is the count)."""
        return self.until is not None

    @property
    def stepped_outputs(self) -> int:
        """The number of results stacked over the steps (all but the count of an `until`
        loop)."""
        return len(self.outputs) - (1 if self.has_until else 0)

    @property
    def recurrent_outputs(self) -> list[int]:
        """The indices of the outputs that are fed back (have taps)."""
        return [i for i, taps in enumerate(self.output_tap_lists) if taps]

    @property
    def yield_op(self) -> YieldOp:
        block = self.body.block
        assert isinstance(block.last_op, YieldOp)
        return block.last_op

    def expected_arg_types(self) -> list[Attribute]:
        """The body's argument types implied by the operands and the taps."""
        types: list[Attribute] = []
        for seq, taps in zip(self.sequences, self.sequence_tap_lists, strict=True):
            types += [row_type(_tensor(self.name, "a sequence", seq.type))] * len(taps)
        recurrent = [t for t in self.output_tap_lists if t]
        for init, taps in zip(self.initials, recurrent, strict=True):
            types += [row_type(_tensor(self.name, "an initial value", init.type))] * len(taps)
        return types + [v.type for v in self.non_sequences]

    # --- verifier ----------------------------------------------------------------------

    def verify_(self) -> None:
        self._verify_steps_and_taps()
        self._verify_body_arguments()
        self._verify_yield_and_results()
        verify_region_uses(self)

    def _verify_steps_and_taps(self) -> None:
        self._verify_n_steps()
        self._verify_sequences()
        self._verify_outputs()

    def _verify_n_steps(self) -> None:
        if self.n_steps is not None:
            t = _tensor(self.name, "n_steps", self.n_steps.type)
            if t.get_num_dims() != 0 or not isinstance(t.element_type, IntegerType):
                raise VerifyException(
                    f"'{self.name}' op n_steps must be a 0-d integer tensor, got {t}"
                )
        elif not self.sequences:
            raise VerifyException(f"'{self.name}' op needs n_steps when it has no sequences")

    def _verify_sequences(self) -> None:
        seq_taps = self.sequence_tap_lists
        if len(seq_taps) != len(self.sequences):
            raise VerifyException(
                f"'{self.name}' op has {len(self.sequences)} sequences but "
                f"{len(seq_taps)} sequence_taps entries"
            )
        for i, (seq, taps) in enumerate(zip(self.sequences, seq_taps, strict=True)):
            if not taps:
                raise VerifyException(f"'{self.name}' op sequence #{i} has no taps")
            if _tensor(self.name, f"sequence #{i}", seq.type).get_num_dims() < 1:
                raise VerifyException(f"'{self.name}' op sequence #{i} must have rank >= 1")

    def _verify_outputs(self) -> None:
        out_taps = self.output_tap_lists
        if len(out_taps) != len(self.outputs):
            raise VerifyException(
                f"'{self.name}' op has {len(self.outputs)} results but {len(out_taps)} "
                "output_taps entries"
            )
        recurrent = [t for t in out_taps if t]
        if len(recurrent) != len(self.initials):
            raise VerifyException(
                f"'{self.name}' op has {len(recurrent)} outputs with taps but "
                f"{len(self.initials)} initial values"
            )
        for i, taps in enumerate(out_taps):
            if any(k >= 0 for k in taps):
                raise VerifyException(
                    f"'{self.name}' op output #{i} has taps {list(taps)}; output taps "
                    "must be negative"
                )
        if any(not 0 <= i < len(out_taps) for i in self.last_only_outputs):
            raise VerifyException(
                f"'{self.name}' op last_only names outputs {sorted(self.last_only_outputs)}, "
                f"but it has {len(out_taps)}"
            )
        for i in sorted(self.with_initial_outputs):
            if not 0 <= i < len(out_taps) or not out_taps[i] or i in self.last_only_outputs:
                raise VerifyException(
                    f"'{self.name}' op with_initial names output #{i}, which is not a fed-back "
                    "output (or is in last_only)"
                )
        for i, init in enumerate(self.initials):
            if _tensor(self.name, f"initial value #{i}", init.type).get_num_dims() < 1:
                raise VerifyException(
                    f"'{self.name}' op initial value #{i} must have a leading (history) dimension"
                )

    def _verify_until(self, condition: Attribute) -> None:
        cond = _tensor(self.name, "the until condition", condition)
        count = _tensor(self.name, "the step count", self.outputs[-1].type)
        if cond != tensor_of(i1, []):
            raise VerifyException(
                f"'{self.name}' op with until yields a condition of type {cond}, expected "
                "tensor<i1> (its last yielded value)"
            )
        if count != tensor_of(i64, []):
            raise VerifyException(
                f"'{self.name}' op with until has a last result of type {count}, expected "
                "tensor<i64> (the number of steps run)"
            )
        if self.output_tap_lists[-1]:
            raise VerifyException(f"'{self.name}' op with until: the count cannot have taps")
        if len(self.outputs) - 1 in self.last_only_outputs | self.with_initial_outputs:
            raise VerifyException(f"'{self.name}' op with until: the count is not stacked")

    def _verify_body_arguments(self) -> None:
        expected = self.expected_arg_types()
        got = [a.type for a in self.body.block.args]
        if len(got) != len(expected):
            raise VerifyException(
                f"'{self.name}' op body has {len(got)} arguments, expected {len(expected)} "
                "(one per sequence tap, one per output tap, one per non-sequence)"
            )
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            if e != g:
                raise VerifyException(
                    f"'{self.name}' op body argument #{i} has type {g}, expected {e}"
                )

    def _verify_yield_and_results(self) -> None:
        last = self.body.block.last_op
        if not isinstance(last, YieldOp):
            raise VerifyException(f"'{self.name}' op body must end with ag.yield")
        yielded = [v.type for v in last.values]
        if len(yielded) != len(self.outputs):
            raise VerifyException(
                f"'{self.name}' op body yields {len(yielded)} values, expected "
                f"{len(self.outputs)} (one per result)"
            )
        if self.has_until:
            self._verify_until(yielded[-1])
        states = iter(row_type(_tensor(self.name, "", i.type)) for i in self.initials)
        for i, (taps, y, result) in enumerate(
            zip(self.output_tap_lists, yielded, self.outputs, strict=True)
        ):
            if i == self.stepped_outputs:
                break  # the condition and the count, checked above
            y = _tensor(self.name, f"yielded value #{i}", y)
            if taps:
                state = next(states)
                if not compatible(state, y):
                    raise VerifyException(
                        f"'{self.name}' op output #{i} yields {y} but its state (the initial "
                        f"value's rows) has type {state}"
                    )
            r = _tensor(self.name, f"result #{i}", result.type)
            if r.get_num_dims() != y.get_num_dims() + 1 or not compatible(row_type(r), y):
                expected = tensor_of(y.element_type, [DYNAMIC, *y.get_shape()])
                raise VerifyException(
                    f"'{self.name}' op result #{i} has type {r}, expected {expected} "
                    "(the yielded type stacked over the steps)"
                )
