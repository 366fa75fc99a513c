"""`ag.gemv` / `ag.gemm` in `ag-to-loops`: shape rules and kernels that call CBLAS.

Importing this module registers its rules in `ag_shapes.SHAPE_RULES` and its kernels in
`ag_kernels.KERNELS`; `declare_blas_functions` adds the `func.func private` declarations
of the BLAS functions a module calls (`ag-to-loops` runs it at the end).

The kernels call `scipy_cblas_{s,d}gemv` / `scipy_cblas_{s,d}gemm` of the
`scipy-openblas32` wheel (32-bit integers; the runtime loads the library) through
`func.call`, always in row-major order (`CblasRowMajor`):

- **pointers**: `memref.extract_aligned_pointer_as_index` plus the descriptor's offset
  (`memref.extract_strided_metadata`) times the element size, turned into `!llvm.ptr`
  with `llvm.inttoptr`;
- **matrices** of any strides: BLAS needs one unit stride and a leading dimension. A
  matrix whose column stride is 1 (or has at most one column) and whose row stride is at
  least its column count is passed as is, `lda` = row stride; one whose row stride is 1
  is passed as its transpose (column-major), flipping the `trans` flag; any other (a
  `[:, ::2]` slice, negative or zero strides) is first copied into a contiguous
  temporary. The temporary is always allocated, with zero rows and columns when no
  copy is needed (then the copy loop runs no iteration), so no branch holds a memref.
  Contiguous intermediates (identity layout) need none of this;
- **vectors**: `incx` = the stride; a vector of stride <= 0 (and length > 1) is copied;
- the result buffer is dense (`incy = 1`, `ldc = N`): a contiguous buffer or a row of
  one (with the view's offset); with an accumulation the
  initial value is copied into it first and BLAS scales it by `beta`, without one
  `beta = 0` (BLAS then never reads the result buffer);
- an empty contracted dimension is handled here, not by BLAS (OpenBLAS's gemv returns
  early without writing `y`): the result is then `beta * initial`, or zeros.

Sizes must fit in 32 bits (the library's integers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects import arith, func, llvm, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    Float32Type,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    f32,
    f64,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue

from arignote.dialects import ag
from arignote.lowering.llvm.llvm_utils import integer_attr
from arignote.lowering.loops import ag_scalar, parallel_loops
from arignote.lowering.loops.ag_kernels import KERNELS, copy
from arignote.lowering.loops.ag_shapes import (
    SHAPE_RULES,
    Check,
    RuleResult,
    accumulated_message,
    contracted_checks,
)
from arignote.lowering.loops.loop_utils import (
    Buffer,
    Calls,
    Dim,
    as_index,
    first_calls,
    index_constant,
    load,
    store,
)
from arignote.lowering.op_builder import build

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112
"""CBLAS's `CblasRowMajor`, `CblasNoTrans` and `CblasTrans`."""

PTR = llvm.LLVMPointerType()


def _gemv_signature(t: Attribute) -> list[Attribute]:
    # order, trans, M, N, alpha, A, lda, x, incx, beta, y, incy
    return [i32, i32, i32, i32, t, PTR, i32, PTR, i32, t, PTR, i32]


def _gemm_signature(t: Attribute) -> list[Attribute]:
    # order, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc
    return [i32, i32, i32, i32, i32, i32, t, PTR, i32, PTR, i32, t, PTR, i32]


BLAS_FUNCTIONS: dict[str, list[Attribute]] = {
    "scipy_cblas_sgemv": _gemv_signature(f32),
    "scipy_cblas_dgemv": _gemv_signature(f64),
    "scipy_cblas_sgemm": _gemm_signature(f32),
    "scipy_cblas_dgemm": _gemm_signature(f64),
}
"""The BLAS functions the kernels call → their argument types (all return void)."""


def _prefix(t: Attribute) -> str:
    return "s" if isinstance(t, Float32Type) else "d"


# --- shape rules -----------------------------------------------------------------------


def _used(dims: Sequence[Dim], transpose: bool) -> tuple[Dim, Dim]:
    return (dims[1], dims[0]) if transpose else (dims[0], dims[1])


def _equal(checks: list[Check], check: Check) -> Dim:
    """Keep `check` (of `a == b`) unless it holds statically; the static one of `a` and
    `b`, if any."""
    if not check.is_static:
        checks.append(check)
    return check.a if isinstance(check.a, int) else check.b


def _accumulated_checks(
    op: Operation, product: Sequence[Dim], initial: Sequence[Dim]
) -> tuple[list[Dim], list[Check]]:
    """The accumulated operand must have the product's shape (the interpreter's
    message); the lengths, static ones preferred."""
    message, shown = accumulated_message(op, initial, product)
    checks: list[Check] = []
    lengths = [
        _equal(checks, Check(message, p, i, shown=shown))
        for p, i in zip(product, initial, strict=True)
    ]
    return lengths, checks


def gemv_rule(op: Operation, dims: Sequence[Sequence[Dim]]) -> RuleResult:
    """`[rows of op(A)]`; `op(A)`'s columns must equal `len(x)`, `len(y0)` its rows."""
    assert isinstance(op, ag.GemvOp)
    rows, cols = _used(dims[1], op.transpose_a is not None)
    checks = contracted_checks(op, [rows, cols], dims[2], cols, dims[2][0])
    if not op.acc:
        return [rows], checks
    lengths, acc_checks = _accumulated_checks(op, [rows], dims[4])
    return lengths, checks + acc_checks


def gemm_rule(op: Operation, dims: Sequence[Sequence[Dim]]) -> RuleResult:
    """`[rows of op(A), columns of op(B)]`; the contracted lengths and `Z0`'s shape must
    agree."""
    assert isinstance(op, ag.GemmOp)
    m, k = _used(dims[1], op.transpose_a is not None)
    k2, n = _used(dims[2], op.transpose_b is not None)
    checks = contracted_checks(op, [m, k], [k2, n], k, k2)
    if not op.acc:
        return [m, n], checks
    lengths, acc_checks = _accumulated_checks(op, [m, n], dims[4])
    return lengths, checks + acc_checks


# --- kernels ---------------------------------------------------------------------------


def _i32(b: Builder, value: SSAValue) -> SSAValue:
    return b.insert(build(arith.IndexCastOp, value, i32)).result


def _i32_constant(b: Builder, value: int) -> SSAValue:
    return b.insert(build(arith.ConstantOp, integer_attr(value, i32))).result


def _cmp(b: Builder, lhs: SSAValue, rhs: SSAValue, predicate: str) -> SSAValue:
    return b.insert(build(arith.CmpiOp, lhs, rhs, predicate)).result


def _and(b: Builder, *values: SSAValue) -> SSAValue:
    result = values[0]
    for v in values[1:]:
        result = b.insert(build(arith.AndIOp, result, v)).result
    return result


def _or(b: Builder, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    return b.insert(build(arith.OrIOp, lhs, rhs)).result


def _select(b: Builder, cond: SSAValue, a: SSAValue, c: SSAValue) -> SSAValue:
    return b.insert(build(arith.SelectOp, cond, a, c)).result


def _max1(b: Builder, value: SSAValue) -> SSAValue:
    return b.insert(build(arith.MaxSIOp, value, index_constant(b, 1))).result


def _element_size(t: Attribute) -> int:
    return 4 if isinstance(t, Float32Type) else 8


def _address(b: Builder, buffer: SSAValue, offset: SSAValue | None) -> SSAValue:
    """The address (as `index`) of the element at `offset` from the aligned pointer."""
    pointer = b.insert(memref.ExtractAlignedPointerAsIndexOp.get(buffer)).aligned_pointer
    if offset is None:
        return pointer
    t = buffer.type
    assert isinstance(t, MemRefType)
    size = index_constant(b, _element_size(t.get_element_type()))
    delta = b.insert(arith.MuliOp(offset, size)).result
    return b.insert(arith.AddiOp(pointer, delta)).result


def _pointer(b: Builder, address: SSAValue) -> SSAValue:
    """An `index` address as `!llvm.ptr`."""
    as_i64 = b.insert(arith.IndexCastOp(address, i64)).result
    return b.insert(llvm.IntToPtrOp(as_i64)).results[0]


def _result_address(b: Builder, out: Buffer) -> SSAValue:
    """The result's address: a contiguous buffer, or a dense view into one (a row of
    `ag.scan`'s stacked output), whose descriptor offset is then added."""
    if _is_contiguous(out):
        return _address(b, out.memref, None)
    return _address(b, out.memref, _metadata(b, out)[0])


def _is_contiguous(buffer: Buffer) -> bool:
    return isinstance(buffer.type.layout, NoneAttr)


def _metadata(b: Builder, buffer: Buffer) -> tuple[SSAValue, Sequence[SSAValue]]:
    """The offset and strides of a strided memref."""
    meta = b.insert(memref.ExtractStridedMetaDataOp(buffer.memref))
    return meta.offset, meta.strides


def _temporary(b: Builder, source: Buffer, lengths: Sequence[SSAValue]) -> Buffer:
    """A contiguous buffer of `lengths` (zeros when no copy is wanted), holding `source`."""
    t = MemRefType(source.element_type, [DYNAMIC_INDEX] * len(lengths))
    temp = Buffer(b.insert(memref.AllocOp(list(lengths), [], t)).memref, tuple(lengths))
    copy(b, Buffer(source.memref, tuple(lengths)), temp)
    return temp


@dataclass
class _Operand:
    """A BLAS operand: its address, leading dimension or increment, whether its memory
    holds it transposed (column-major), and the temporary to free after the call."""

    address: SSAValue
    lead: SSAValue
    flipped: SSAValue | bool
    temporary: SSAValue | None = None


def _matrix(b: Builder, buffer: Buffer) -> _Operand:
    """A matrix operand in row-major terms (see the module doc)."""
    rows, cols = (as_index(b, d) for d in buffer.dims)
    if _is_contiguous(buffer):
        return _Operand(_address(b, buffer.memref, None), _max1(b, cols), False)
    offset, (s0, s1) = _metadata(b, buffer)
    one = index_constant(b, 1)
    rows_le1, cols_le1 = _cmp(b, rows, one, "sle"), _cmp(b, cols, one, "sle")
    row_ok = _and(
        b,
        _or(b, _cmp(b, s1, one, "eq"), cols_le1),
        _or(b, rows_le1, _cmp(b, s0, _max1(b, cols), "sge")),
    )
    col_ok = _and(
        b,
        _or(b, _cmp(b, s0, one, "eq"), rows_le1),
        _or(b, cols_le1, _cmp(b, s1, _max1(b, rows), "sge")),
    )
    row_lead = _select(b, rows_le1, _max1(b, cols), s0)
    col_lead = _select(b, cols_le1, _max1(b, rows), s1)
    direct = _or(b, row_ok, col_ok)
    zero = index_constant(b, 0)
    temp = _temporary(b, buffer, [_select(b, direct, zero, rows), _select(b, direct, zero, cols)])
    flipped = _and(b, direct, b.insert(arith.XOrIOp(row_ok, _true(b))).result)
    lead = _select(b, row_ok, row_lead, _select(b, col_ok, col_lead, _max1(b, cols)))
    address = _select(b, direct, _address(b, buffer.memref, offset), _address(b, temp.memref, None))
    return _Operand(address, lead, flipped, temp.memref)


def _true(b: Builder) -> SSAValue:
    return b.insert(arith.ConstantOp(IntegerAttr(1, i1))).result


def _vector(b: Builder, buffer: Buffer) -> _Operand:
    """A vector operand: its address and increment (copied when the stride is <= 0)."""
    (length,) = (as_index(b, d) for d in buffer.dims)
    if _is_contiguous(buffer):
        return _Operand(_address(b, buffer.memref, None), index_constant(b, 1), False)
    offset, (stride,) = _metadata(b, buffer)
    one, zero = index_constant(b, 1), index_constant(b, 0)
    short = _cmp(b, length, one, "sle")
    direct = _or(b, short, _cmp(b, stride, zero, "sgt"))
    temp = _temporary(b, buffer, [_select(b, direct, zero, length)])
    increment = _select(b, direct, _select(b, short, one, stride), one)
    address = _select(b, direct, _address(b, buffer.memref, offset), _address(b, temp.memref, None))
    return _Operand(address, increment, False, temp.memref)


def _flag(b: Builder, transpose: bool, flipped: SSAValue | bool) -> SSAValue:
    """`CblasTrans` when exactly one of the op's transposition and the memory's holds."""
    if isinstance(flipped, bool):
        return _i32_constant(b, TRANS if transpose != flipped else NO_TRANS)
    when_flipped, otherwise = (NO_TRANS, TRANS) if transpose else (TRANS, NO_TRANS)
    return _select(b, flipped, _i32_constant(b, when_flipped), _i32_constant(b, otherwise))


def _stored_dims(b: Builder, buffer: Buffer, flipped: SSAValue | bool) -> tuple[SSAValue, SSAValue]:
    """Rows and columns of the row-major matrix in memory (swapped when flipped)."""
    rows, cols = (as_index(b, d) for d in buffer.dims)
    if isinstance(flipped, bool):
        return (cols, rows) if flipped else (rows, cols)
    return _select(b, flipped, cols, rows), _select(b, flipped, rows, cols)


def _prepare_result(
    b: Builder, op: ag.GemvOp | ag.GemmOp, out: Buffer, ins: Sequence[Buffer], k: SSAValue
) -> tuple[SSAValue, SSAValue]:
    """Copy the initial value into `out`; for an empty contracted dimension set `out` to
    `beta * initial` (or zeros). Returns BLAS's `beta` and whether `k` is 0 (the caller
    then passes BLAS zero rows, so that it does nothing: OpenBLAS's gemm would scale the
    result by `beta` once more)."""
    t = out.element_type
    zero_value = ag_scalar.constant(b, 0, t)
    beta = load(b, ins[3], []) if op.acc else zero_value
    if op.acc:
        _copy_unless_same(b, op, ins[4], out)
    empty = _cmp(b, k, index_constant(b, 0), "eq")
    zero = index_constant(b, 0)
    bounds = [as_index(b, d) for d in out.dims]
    bounds[0] = _select(b, empty, bounds[0], zero)

    def scale(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        if op.acc:
            mul = ag_scalar.BINARY[ag.MulOp]
            value = mul(inner, beta, load(inner, out, ivs))
        else:
            value = zero_value
        store(inner, value, out, ivs)

    parallel_loops.independent_nest(b, bounds, scale)
    return beta, empty


def _copy_unless_same(b: Builder, op: Operation, source: Buffer, out: Buffer) -> None:
    """`out = source`; when the op computes over `source` (`ag.destroy_map`, set by the
    `inplace-update` pass: `out` may then be `source`'s own buffer) the copy runs no
    iteration if both start at the same address."""
    if ag.destroy_map(op).get(0) != ag.INITIAL_OPERAND:
        copy(b, source, out)
        return
    offset = None if _is_contiguous(source) else _metadata(b, source)[0]
    same = _cmp(b, _address(b, source.memref, offset), _result_address(b, out), "eq")
    zero = index_constant(b, 0)
    rows = _select(b, same, zero, as_index(b, out.dims[0]))
    copy(
        b,
        Buffer(source.memref, (rows, *source.dims[1:])),
        Buffer(out.memref, (rows, *out.dims[1:])),
    )


def _unless(b: Builder, empty: SSAValue, length: SSAValue) -> SSAValue:
    """`length`, or 0 when the contracted dimension is empty."""
    return _select(b, empty, index_constant(b, 0), length)


def _free(b: Builder, operands: Sequence[_Operand]) -> None:
    for operand in operands:
        if operand.temporary is not None:
            b.insert(memref.DeallocOp.get(operand.temporary))


def emit_gemv(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """`out = alpha * op(A)·x [+ beta * y0]` by `cblas_?gemv`."""
    assert isinstance(op, ag.GemvOp)
    transpose = op.transpose_a is not None
    a_buf, x_buf = ins[1], ins[2]
    k = as_index(b, a_buf.dims[0 if transpose else 1])
    beta, empty = _prepare_result(b, op, out, ins, k)
    alpha = load(b, ins[0], [])
    a, x = _matrix(b, a_buf), _vector(b, x_buf)
    rows, cols = (_unless(b, empty, d) for d in _stored_dims(b, a_buf, a.flipped))
    y = _result_address(b, out)
    args = [
        _i32_constant(b, ROW_MAJOR),
        _flag(b, transpose, a.flipped),
        _i32(b, rows),
        _i32(b, cols),
        alpha,
        _pointer(b, a.address),
        _i32(b, a.lead),
        _pointer(b, x.address),
        _i32(b, x.lead),
        beta,
        _pointer(b, y),
        _i32_constant(b, 1),
    ]
    b.insert(func.CallOp(f"scipy_cblas_{_prefix(out.element_type)}gemv", args, []))
    _free(b, [a, x])


def emit_gemm(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """`out = alpha * op(A)·op(B) [+ beta * Z0]` by `cblas_?gemm`."""
    assert isinstance(op, ag.GemmOp)
    trans_a, trans_b = op.transpose_a is not None, op.transpose_b is not None
    a_buf, b_buf = ins[1], ins[2]
    k = as_index(b, a_buf.dims[0 if trans_a else 1])
    beta, empty = _prepare_result(b, op, out, ins, k)
    alpha = load(b, ins[0], [])
    a, c = _matrix(b, a_buf), _matrix(b, b_buf)
    m, n = (as_index(b, d) for d in out.dims)
    m = _unless(b, empty, m)
    z = _result_address(b, out)
    args = [
        _i32_constant(b, ROW_MAJOR),
        _flag(b, trans_a, a.flipped),
        _flag(b, trans_b, c.flipped),
        _i32(b, m),
        _i32(b, n),
        _i32(b, k),
        alpha,
        _pointer(b, a.address),
        _i32(b, a.lead),
        _pointer(b, c.address),
        _i32(b, c.lead),
        beta,
        _pointer(b, z),
        _i32(b, _max1(b, n)),
    ]
    b.insert(func.CallOp(f"scipy_cblas_{_prefix(out.element_type)}gemm", args, []))
    _free(b, [a, c])


def declare_blas_functions(module: ModuleOp, calls: Calls | None = None) -> None:
    """Adds `func.func private @scipy_cblas_...` for each BLAS function called but not
    declared (`calls`: the module's `loop_utils.first_calls`, when the caller has them)."""
    declared = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
    if calls is None:
        calls = first_calls(module)
    called = {name for name in calls if name in BLAS_FUNCTIONS}
    for name in sorted(called - declared):
        module.body.block.add_op(func.FuncOp.external(name, BLAS_FUNCTIONS[name], []))


SHAPE_RULES.update({ag.GemvOp: gemv_rule, ag.GemmOp: gemm_rule})
KERNELS.update({ag.GemvOp: emit_gemv, ag.GemmOp: emit_gemm})
