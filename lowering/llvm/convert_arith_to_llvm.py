"""`convert-arith-to-llvm`: scalar `arith` ops to the `llvm` dialect.

Accepts any IR; rewrites every scalar `arith` op (constants, integer and float arithmetic,
comparisons, `select`, the casts, `index_cast`, min/max, `floordivsi`) into `llvm` ops on
converted types: `index` becomes `i64`. Operands whose producers are not converted yet
are reached through `builtin.unrealized_conversion_cast`, and results are cast back to
their original type for unconverted users; `reconcile-unrealized-casts` removes the
pairs once every dialect is converted.

Ops the xDSL `llvm` dialect lacks are emitted as `llvm.call_intrinsic`:
`fptosi`/`fptoui` become the saturating `llvm.fpto{s,u}i.sat.*` (no poison on out-of-range
values), `maximumf`/`minimumf` the NaN-propagating `llvm.maximum/minimum.*`, and the
integer min/max `llvm.{s,u}{max,min}.*`. The `fastmath` flags of `addf`/`subf`/`mulf`/`divf`
are kept. `uitofp` is expanded with `sitofp`. Integer
division and remainder stay UB on a zero divisor, as in `arith`: the producer guards.
Vector operands are not supported.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import (
    AnyFloat,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    i1,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from arignote.lowering.llvm.llvm_utils import (
    DirectLowering,
    append,
    constant,
    convert_type,
    integer_attr,
    llvm_constant,
    llvm_fastmath,
    replace_op,
    to_llvm_all,
)
from arignote.lowering.op_builder import build
from arignote.lowering.rewriting import DispatchingApplier

_BINARY_OPS: dict[type[Operation], type[Operation]] = {
    arith.AddiOp: llvm.AddOp,
    arith.SubiOp: llvm.SubOp,
    arith.MuliOp: llvm.MulOp,
    arith.DivSIOp: llvm.SDivOp,
    arith.DivUIOp: llvm.UDivOp,
    arith.RemSIOp: llvm.SRemOp,
    arith.RemUIOp: llvm.URemOp,
    arith.AndIOp: llvm.AndOp,
    arith.OrIOp: llvm.OrOp,
    arith.XOrIOp: llvm.XOrOp,
    arith.ShLIOp: llvm.ShlOp,
    arith.ShRSIOp: llvm.AShrOp,
    arith.ShRUIOp: llvm.LShrOp,
    arith.AddfOp: llvm.FAddOp,
    arith.SubfOp: llvm.FSubOp,
    arith.MulfOp: llvm.FMulOp,
    arith.DivfOp: llvm.FDivOp,
    arith.MaxnumfOp: llvm.VectorFMaxOp,
    arith.MinnumfOp: llvm.VectorFMinOp,
}

_INTRINSIC_BINARY_OPS: dict[type[Operation], str] = {
    arith.MaximumfOp: "llvm.maximum",
    arith.MinimumfOp: "llvm.minimum",
    arith.MaxSIOp: "llvm.smax",
    arith.MinSIOp: "llvm.smin",
    arith.MaxUIOp: "llvm.umax",
    arith.MinUIOp: "llvm.umin",
}

_CAST_OPS: dict[type[Operation], type[Operation]] = {
    arith.ExtSIOp: llvm.SExtOp,
    arith.ExtUIOp: llvm.ZExtOp,
    arith.TruncIOp: llvm.TruncOp,
    arith.SIToFPOp: llvm.SIToFPOp,
    arith.ExtFOp: llvm.FPExtOp,
    arith.TruncFOp: llvm.FPTruncOp,
    arith.BitcastOp: llvm.BitcastOp,
}

_FP_TO_INT_OPS: dict[type[Operation], str] = {
    arith.FPToSIOp: "llvm.fptosi.sat",
    arith.FPToUIOp: "llvm.fptoui.sat",
}


def intrinsic_suffix(type_: Attribute) -> str:
    """LLVM's overload suffix of a scalar type: `i32`, `f64`, ..."""
    if isinstance(type_, IntegerType):
        return f"i{type_.width.data}"
    if isinstance(type_, IndexType):
        return "i64"
    if isinstance(type_, AnyFloat):
        return f"f{type_.bitwidth}"
    raise NotImplementedError(f"no intrinsic suffix for type {type_}")


def _bit_width(type_: Attribute) -> int:
    if isinstance(type_, IndexType):
        return 64
    assert isinstance(type_, IntegerType), type_
    return type_.width.data


class ConstantLowering(RewritePattern):
    """`arith.constant` → `llvm.mlir.constant` (index constants become i64)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.ConstantOp, rewriter: PatternRewriter, /):
        value = op.value
        type_ = convert_type(op.result.type)
        if isinstance(value, IntegerAttr):
            same = value.type == type_  # index constants become i64 ones
            attr: Attribute = value if same else integer_attr(value.value.data, type_)
        elif isinstance(value, FloatAttr):
            attr = value
        else:
            raise NotImplementedError(f"arith.constant of {value} is not supported")
        ops: list[Operation] = []
        result = llvm_constant(attr, type_, ops)
        if result.name_hint is None:  # a constant shared in the function gets the first name
            result.name_hint = op.result.name_hint
        replace_op(rewriter, op, ops, result)


_FLOAT_ARITH_OPS: dict[type[Operation], type[llvm.AbstractFloatArithOp]] = {
    arith.AddfOp: llvm.FAddOp,
    arith.SubfOp: llvm.FSubOp,
    arith.MulfOp: llvm.FMulOp,
    arith.DivfOp: llvm.FDivOp,
}


class FastMathFloatLowering(RewritePattern):
    """`arith.addf/subf/mulf/divf` with `fastmath` flags → the `llvm` op with the same
    flags (`reassoc` on a reduction's accumulation lets LLVM vectorise it). Without
    flags the ops go through the plain table."""

    op_types = tuple(_FLOAT_ARITH_OPS)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        llvm_op = _FLOAT_ARITH_OPS.get(type(op))
        flags = getattr(op, "fastmath", None)
        if llvm_op is None or flags is None or not flags.data:
            return
        ops: list[Operation] = []
        lhs, rhs = to_llvm_all(op.operands, ops)
        result = append(ops, build(llvm_op, lhs, rhs, llvm_fastmath(flags.data)))
        replace_op(rewriter, op, ops, result)


class IntrinsicBinaryOpLowering(RewritePattern):
    """NaN-propagating float min/max and integer min/max → `llvm.call_intrinsic`."""

    op_types = tuple(_INTRINSIC_BINARY_OPS)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        base = _INTRINSIC_BINARY_OPS.get(type(op))
        if base is None:
            return
        ops: list[Operation] = []
        lhs, rhs = to_llvm_all(op.operands, ops)
        name = f"{base}.{intrinsic_suffix(lhs.type)}"
        result = append(ops, build(llvm.CallIntrinsicOp, name, [lhs, rhs], [lhs.type]))
        replace_op(rewriter, op, ops, result)


class NegfLowering(RewritePattern):
    """`arith.negf` → `llvm.fneg`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.NegfOp, rewriter: PatternRewriter, /):
        ops: list[Operation] = []
        result = append(ops, build(llvm.FNegOp, op.operand))
        replace_op(rewriter, op, ops, result)


class CmpiLowering(RewritePattern):
    """`arith.cmpi` → `llvm.icmp` (the predicate numbering is the same)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CmpiOp, rewriter: PatternRewriter, /):
        ops: list[Operation] = []
        lhs, rhs = to_llvm_all((op.lhs, op.rhs), ops)
        predicate = integer_attr(op.predicate.value.data, i64)
        result = append(ops, build(llvm.ICmpOp, lhs, rhs, predicate))
        replace_op(rewriter, op, ops, result)


class CmpfLowering(RewritePattern):
    """`arith.cmpf` → `llvm.fcmp`; the constant predicates `false`/`true` → constants."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CmpfOp, rewriter: PatternRewriter, /):
        predicate = op.predicate.value.data
        ops: list[Operation] = []
        if predicate in (0, 15):  # llvmlite cannot print `fcmp false` / `fcmp true`
            result = constant(int(predicate == 15), i1, ops)
        else:
            attr = integer_attr(predicate, i64)
            result = append(ops, build(llvm.FCmpOp, op.lhs, op.rhs, attr))
        replace_op(rewriter, op, ops, result)


class SelectLowering(RewritePattern):
    """`arith.select` → `llvm.select`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.SelectOp, rewriter: PatternRewriter, /):
        ops: list[Operation] = []
        cond, lhs, rhs = to_llvm_all((op.cond, op.lhs, op.rhs), ops)
        result = append(ops, build(llvm.SelectOp, cond, lhs, rhs))
        replace_op(rewriter, op, ops, result)


class CastLowering(RewritePattern):
    """Casts with a direct `llvm` counterpart (see `_CAST_OPS`)."""

    op_types = tuple(_CAST_OPS)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        llvm_op = _CAST_OPS.get(type(op))
        if llvm_op is None:
            return
        ops: list[Operation] = []
        (source,) = to_llvm_all(op.operands, ops)
        target = convert_type(op.results[0].type)
        result = append(ops, llvm_op(source, target))  # pyright: ignore[reportCallIssue]
        replace_op(rewriter, op, ops, result)


class FPToIntLowering(RewritePattern):
    """`arith.fptosi/fptoui` → saturating `llvm.fpto{s,u}i.sat.<int>.<float>`."""

    op_types = tuple(_FP_TO_INT_OPS)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        base = _FP_TO_INT_OPS.get(type(op))
        if base is None:
            return
        source = op.operands[0]
        target = convert_type(op.results[0].type)
        name = f"{base}.{intrinsic_suffix(target)}.{intrinsic_suffix(source.type)}"
        ops: list[Operation] = []
        result = append(ops, build(llvm.CallIntrinsicOp, name, [source], [target]))
        replace_op(rewriter, op, ops, result)


class UIToFPLowering(RewritePattern):
    """`arith.uitofp` → `zext` + `sitofp`; for 64-bit sources, a halve-and-double select."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.UIToFPOp, rewriter: PatternRewriter, /):
        ops: list[Operation] = []
        (source,) = to_llvm_all((op.input,), ops)
        target = op.result.type
        if _bit_width(source.type) < 64:
            wide = append(ops, build(llvm.ZExtOp, source, i64))
            result = append(ops, build(llvm.SIToFPOp, wide, target))
            replace_op(rewriter, op, ops, result)
            return
        # Values with the top bit set: convert (x >> 1 | x & 1), which rounds the same,
        # then double it.
        one = constant(1, i64, ops)
        half = append(ops, build(llvm.LShrOp, source, one))
        sticky = append(ops, build(llvm.AndOp, source, one))
        halved = append(ops, build(llvm.OrOp, half, sticky))
        halved_fp = append(ops, build(llvm.SIToFPOp, halved, target))
        doubled = append(ops, build(llvm.FAddOp, halved_fp, halved_fp))
        direct = append(ops, build(llvm.SIToFPOp, source, target))
        zero = constant(0, i64, ops)
        slt = integer_attr(llvm.ICmpPredicateFlag.SLT.to_int(), i64)
        negative = append(ops, build(llvm.ICmpOp, source, zero, slt))
        result = append(ops, build(llvm.SelectOp, negative, doubled, direct))
        replace_op(rewriter, op, ops, result)


class IndexCastLowering(RewritePattern):
    """`arith.index_cast` → `sext`/`trunc` to or from i64, or nothing when widths match."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.IndexCastOp, rewriter: PatternRewriter, /):
        ops: list[Operation] = []
        (source,) = to_llvm_all((op.input,), ops)
        target = convert_type(op.result.type)
        source_width, target_width = _bit_width(source.type), _bit_width(target)
        result: SSAValue = source
        if target_width < source_width:
            result = append(ops, build(llvm.TruncOp, source, target))
        elif target_width > source_width:
            result = append(ops, build(llvm.SExtOp, source, target))
        replace_op(rewriter, op, ops, result)


class FloorDivSILowering(RewritePattern):
    """`arith.floordivsi` → `sdiv`, corrected by -1 when the remainder's sign differs."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.FloorDivSIOp, rewriter: PatternRewriter, /):
        ops: list[Operation] = []
        lhs, rhs = to_llvm_all((op.lhs, op.rhs), ops)
        type_ = lhs.type
        quotient = append(ops, build(llvm.SDivOp, lhs, rhs))
        remainder = append(ops, build(llvm.SRemOp, lhs, rhs))
        zero = constant(0, type_, ops)
        ne = integer_attr(llvm.ICmpPredicateFlag.NE.to_int(), i64)
        slt = integer_attr(llvm.ICmpPredicateFlag.SLT.to_int(), i64)
        inexact = append(ops, build(llvm.ICmpOp, remainder, zero, ne))
        rem_negative = append(ops, build(llvm.ICmpOp, remainder, zero, slt))
        rhs_negative = append(ops, build(llvm.ICmpOp, rhs, zero, slt))
        signs_differ = append(ops, build(llvm.XOrOp, rem_negative, rhs_negative))
        adjust = append(ops, build(llvm.AndOp, inexact, signs_differ))
        minus_one = constant(-1, type_, ops)
        lowered = append(ops, build(llvm.AddOp, quotient, minus_one))
        result = append(ops, build(llvm.SelectOp, adjust, lowered, quotient))
        replace_op(rewriter, op, ops, result)


ARITH_PATTERNS: tuple[RewritePattern, ...] = (
    ConstantLowering(),
    FastMathFloatLowering(),
    DirectLowering(_BINARY_OPS),
    IntrinsicBinaryOpLowering(),
    NegfLowering(),
    CmpiLowering(),
    CmpfLowering(),
    SelectLowering(),
    CastLowering(),
    FPToIntLowering(),
    UIToFPLowering(),
    IndexCastLowering(),
    FloorDivSILowering(),
)
"""The patterns of `convert-arith-to-llvm`, in the order they are tried (stateless)."""


class ConvertArithToLLVMPass(ModulePass):
    """Rewrite scalar `arith` ops into `llvm` ops; `index` becomes `i64`."""

    name = "convert-arith-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(DispatchingApplier(ARITH_PATTERNS)).rewrite_module(op)
