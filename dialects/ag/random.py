"""Random numbers (issue 14): `ag.mrg_uniform`, L'Ecuyer's MRG31k3p generator as
Theano's `theano.sandbox.rng_mrg.mrg_uniform` computes it.

A generator state is a value like any other: an `n x 6` `i32` matrix, one row per
stream (`x11 x12 x13 x21 x22 x23`, the two order-3 recurrences). `ag.mrg_uniform`
takes a state and a sample shape and returns the advanced state and the samples, so a
draw is a pure op (a shared variable and its `default_update` carry the state from call
to call, as in Theano).

Sample `i` (row-major over the sample shape) comes from stream `i mod n`, each stream
advancing once per sample it gives: Theano's order. One step of a stream, in 32-bit
two's-complement arithmetic (sums may wrap; the wrap is what the `< 0` tests catch):

    y1 = ((x12 & 511) << 22) + (x12 >> 9) + ((x13 & 16777215) << 7) + (x13 >> 24)
    if y1 < 0 or y1 >= M1: y1 -= M1;   y1 += x13;   if y1 < 0 or y1 >= M1: y1 -= M1
    (x11, x12, x13) = (y1, x11, x12)
    y1 = ((x21 & 65535) << 15) + 21069 * (x21 >> 16);   if y1 < 0 or y1 >= M2: y1 -= M2
    y2 = ((x23 & 65535) << 15) + 21069 * (x23 >> 16);   if y2 < 0 or y2 >= M2: y2 -= M2
    y2 += x23;   if y2 < 0 or y2 >= M2: y2 -= M2
    y2 += y1;    if y2 < 0 or y2 >= M2: y2 -= M2
    (x21, x22, x23) = (y2, x21, x22)
    sample = (x11 - x21 + (M1 if x11 <= x21 else 0)) * NORM

with `M1 = 2**31 - 1`, `M2 = 2**31 - 21069`. The integer in `1..M1` becomes a float as
Theano's C code does: for `f64` exactly, times `NORM = 2**-31`; for `f32` rounded to
`f32`, times the `f32` constant `4.6566126e-10` (slightly below `2**-31`, so no sample
is 1.0). Samples lie in the open interval (0, 1).

```mlir
%state2, %u = ag.mrg_uniform %state[%n] {shape = array<i64: -9223372036854775808, 3>}
    : tensor<?x6xi32>, tensor<i64> -> tensor<?x6xi32>, tensor<?x3xf32>
```
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import DenseArrayBase, TensorType, f32, f64, i32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from arignote.dialects.ag.base import DYNAMIC, AgOperation, Shape, i64_array, tensor_of, tensor_type
from arignote.dialects.ag.indexing import (
    DYNAMIC_VALUE,
    _array_values,
    _check_dynamic_operands,
)

M1 = 2147483647
"""The first recurrence's modulus, `2**31 - 1`."""
M2 = 2147462579
"""The second recurrence's modulus, `2**31 - 21069`."""
NORM_F64 = 4.656612873077392578125e-10
"""`2**-31`: the `f64` samples are `k * NORM_F64` for `k` in `1..M1`."""
NORM_F32 = 4.6566126e-10
"""Theano's `f32` constant (as an `f32`): the `f32` samples are `f32(k) * f32(NORM_F32)`."""


def sample_shape(name: str, entries: Sequence[int]) -> Shape:
    """The static sample shape of `entries` (`DYNAMIC_VALUE` for a run-time length;
    ValueError naming `name` for a negative length)."""
    if any(e < 0 and e != DYNAMIC_VALUE for e in entries):
        raise ValueError(f"{name}: shape {list(entries)} has a negative length")
    return tuple(DYNAMIC if e == DYNAMIC_VALUE else e for e in entries)


@irdl_op_definition
class MrgUniformOp(AgOperation):
    """Samples of `shape` uniform on (0, 1) from the MRG31k3p streams of `rstate`
    (one row per stream), and the streams' new state (Theano's `mrg_uniform`; the
    algorithm is in the module docstring). `shape` has one entry per sample axis, a
    length or DYNAMIC_VALUE (the next `dynamic` operand, a 0-d `i64`).

    ```mlir
    %s2, %u = ag.mrg_uniform %s[%n] {shape = array<i64: -9223372036854775808>}
        : tensor<?x6xi32>, tensor<i64> -> tensor<?x6xi32>, tensor<?xf64>
    ```
    """

    name = "ag.mrg_uniform"

    rstate = operand_def(TensorType)
    """The streams' state: `n x 6` `i32`, `n >= 1` (lengths checked at run time where
    the type does not fix them)."""
    dynamic = var_operand_def(TensorType)
    """The run-time sample lengths, in the order of `shape`'s DYNAMIC_VALUE entries."""
    shape = prop_def(DenseArrayBase)
    """The sample shape: a length or DYNAMIC_VALUE per axis."""

    new_rstate = result_def(TensorType)
    """The state after the draw (each stream advanced once per sample it gave)."""
    sample = result_def(TensorType)
    """The samples, `f32` or `f64`."""

    assembly_format = (
        "$rstate `[` $dynamic `]` attr-dict `:` type($rstate) (`,` type($dynamic)^)? "
        "`->` type($new_rstate) `,` type($sample)"
    )
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    def __init__(
        self,
        rstate: SSAValue | Operation,
        shape: Sequence[int],
        dynamic: Sequence[SSAValue | Operation] = (),
        dtype: Attribute = f64,
    ):
        state = SSAValue.get(rstate)
        result = sample_shape(self.name, shape)
        super().__init__(
            operands=[state, [SSAValue.get(d) for d in dynamic]],
            properties={"shape": i64_array(shape)},
            result_types=[state.type, tensor_of(dtype, result)],
        )

    @property
    def shape_list(self) -> tuple[int, ...]:
        return _array_values(self, "shape")

    def verify_(self) -> None:
        st = self.rstate.type
        if not (isinstance(st, TensorType) and st.element_type == i32 and _is_state(st)):
            raise VerifyException(
                f"'{self.name}' op rstate must be an i32 matrix of 6 columns, got {st}"
            )
        if self.new_rstate.type != st:
            raise VerifyException(
                f"'{self.name}' op new_rstate must have rstate's type {st}, "
                f"got {self.new_rstate.type}"
            )
        self._verify_sample()

    def _verify_sample(self) -> None:
        entries = self.shape_list
        try:
            shape = sample_shape(self.name, entries)
        except ValueError as e:
            raise VerifyException(f"'{self.name}' op {str(e).split(': ', 1)[1]}") from e
        if entries.count(DYNAMIC_VALUE) != len(self.dynamic):
            raise VerifyException(
                f"'{self.name}' op has {len(self.dynamic)} dynamic operands but its shape "
                f"names {entries.count(DYNAMIC_VALUE)}"
            )
        _check_dynamic_operands(self, "length", self.dynamic)
        t = tensor_type(self.sample)
        if t.element_type not in (f32, f64) or tuple(t.get_shape()) != shape:
            expected = "x".join("?" if d == DYNAMIC else str(d) for d in shape)
            raise VerifyException(
                f"'{self.name}' op sample must be a tensor<{expected}{'x' if shape else ''}"
                f"f32> or f64, got {t}"
            )


def _is_state(t: TensorType) -> bool:
    """A matrix of 6 columns (a shared variable's dynamic columns are checked at run
    time) with a row or more."""
    shape = t.get_shape()
    return len(shape) == 2 and shape[1] in (6, DYNAMIC) and shape[0] != 0


@irdl_op_definition
class MrgBinomialOp(AgOperation):
    """A 0/1 mask of `shape`: `cast(u < p)` for the uniforms `u` that `ag.mrg_uniform`
    draws in `uniform_type` from the same streams (same order, same new state), compared
    in `p`'s type (`u` widened to f64 if `p` is f64), cast to the mask's element type
    (Theano's `binomial` with `n = 1` and a scalar `p`). The uniforms are never stored:
    the comparison is fused into the generating loop (dropout masks).

    ```mlir
    %s2, %m = ag.mrg_binomial %s, %p[%n] {shape = array<i64: -9223372036854775808>,
        uniform_type = f32} : tensor<?x?xi32>, tensor<f32>, tensor<i64>
        -> tensor<?x?xi32>, tensor<?xf32>
    ```
    """

    name = "ag.mrg_binomial"

    rstate = operand_def(TensorType)
    """The streams' state, as `ag.mrg_uniform`'s."""
    p = operand_def(TensorType)
    """The probability of a 1: a 0-d `f32` or `f64` (at least `uniform_type`)."""
    dynamic = var_operand_def(TensorType)
    """The run-time sample lengths, in the order of `shape`'s DYNAMIC_VALUE entries."""
    shape = prop_def(DenseArrayBase)
    """The mask shape: a length or DYNAMIC_VALUE per axis."""
    uniform_type = prop_def(Attribute)
    """The type the uniforms are drawn in (`f32` or `f64`, Theano's conversion)."""

    new_rstate = result_def(TensorType)
    sample = result_def(TensorType)
    """The mask: 0 or 1, of any numeric or bool element type."""

    assembly_format = (
        "$rstate `,` $p `[` $dynamic `]` attr-dict `:` type($rstate) `,` type($p) "
        "(`,` type($dynamic)^)? `->` type($new_rstate) `,` type($sample)"
    )
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    def __init__(
        self,
        rstate: SSAValue | Operation,
        p: SSAValue | Operation,
        shape: Sequence[int],
        dynamic: Sequence[SSAValue | Operation] = (),
        uniform_type: Attribute = f64,
        dtype: Attribute = f64,
    ):
        state = SSAValue.get(rstate)
        result = sample_shape(self.name, shape)
        super().__init__(
            operands=[state, SSAValue.get(p), [SSAValue.get(d) for d in dynamic]],
            properties={"shape": i64_array(shape), "uniform_type": uniform_type},
            result_types=[state.type, tensor_of(dtype, result)],
        )

    @property
    def shape_list(self) -> tuple[int, ...]:
        return _array_values(self, "shape")

    def verify_(self) -> None:
        _verify_state(self, self.rstate.type, self.new_rstate.type)
        _verify_shape(self, self.shape_list, self.dynamic, tensor_type(self.sample))
        if self.uniform_type not in (f32, f64):
            raise VerifyException(
                f"'{self.name}' op uniform_type must be f32 or f64, got {self.uniform_type}"
            )
        pt = self.p.type
        wide_enough = pt == tensor_of(f64, []) or (
            pt == tensor_of(f32, []) and self.uniform_type == f32
        )
        if not wide_enough:
            raise VerifyException(
                f"'{self.name}' op p must be a 0-d f32 or f64 tensor at least as wide as "
                f"uniform_type {self.uniform_type}, got {pt}"
            )


def _verify_state(op: Operation, st: Attribute, new: Attribute) -> None:
    if not (isinstance(st, TensorType) and st.element_type == i32 and _is_state(st)):
        raise VerifyException(f"'{op.name}' op rstate must be an i32 matrix of 6 columns, got {st}")
    if new != st:
        raise VerifyException(f"'{op.name}' op new_rstate must have rstate's type {st}, got {new}")


def _verify_shape(
    op: Operation, entries: Sequence[int], dynamic: Sequence[SSAValue], t: TensorType
) -> None:
    try:
        shape = sample_shape(op.name, entries)
    except ValueError as e:
        raise VerifyException(f"'{op.name}' op {str(e).split(': ', 1)[1]}") from e
    if list(entries).count(DYNAMIC_VALUE) != len(dynamic):
        raise VerifyException(
            f"'{op.name}' op has {len(dynamic)} dynamic operands but its shape "
            f"names {list(entries).count(DYNAMIC_VALUE)}"
        )
    _check_dynamic_operands(op, "length", dynamic)
    if tuple(t.get_shape()) != shape:
        expected = "x".join("?" if d == DYNAMIC else str(d) for d in shape)
        raise VerifyException(f"'{op.name}' op sample must have shape <{expected}>, got {t}")


RANDOM_OPS: tuple[type[IRDLOperation], ...] = (MrgUniformOp, MrgBinomialOp)
"""The random-number ops."""
