"""The LAPACK-backed `ag` ops (`ag.matrix_inverse`, `ag.det`, `ag.cholesky`, `ag.solve`,
`ag.eigh`, `ag.eig`, `ag.svd`, `ag.qr`) in `ag-to-loops`: kernels that call LAPACKE.

Importing this module registers the ops' shape rules (`MULTI_RESULT_SHAPE_RULES`: a
matrix that must be square is checked at run time where its type does not say, as is
`ag.solve`'s `b` against `a`) and kernels (`MULTI_KERNELS`); `declare_lapack_functions`
adds the `func.func private` declarations of the functions a module calls
(`ag-to-loops` runs it at the end).

Each kernel copies its operands into fresh contiguous row-major buffers
(`memref.alloc`; LAPACK overwrites them, and the operands may have any strides), calls
`scipy_LAPACKE_<s|d><routine>` of the `scipy-openblas32` wheel (32-bit integers,
`LAPACK_ROW_MAJOR`, through `func.call` with `!llvm.ptr` arguments as `ag_blas` does),
then copies or post-processes the LAPACK buffers into the result buffers and frees them.
The routines: `getrf`+`getri` (inverse), `getrf` (determinant: the product of `U`'s
diagonal, negated for each row interchange), `potrf` (Cholesky; the other triangle is
zeroed), `gesv` / `trtrs` (solve), `syevd` (eigh), `geev` (eig), `gesdd` (svd),
`geqrf`+`orgqr` (qr).

LAPACK's `info` is checked after every call: when it is not 0 the kernel calls
`@arignote_lapack_error(%op : i64, %reason : i64, %info : i64)` (`%op` the op's index in
`ag.LAPACK_OPS`, `%reason` one of `ag.LAPACK_ERRORS`, `BAD_ARGUMENT` for a negative
`info`), which the runtime turns into `numpy.linalg.LinAlgError` raised when the native
call returns; the kernel then goes on (its results are then never seen).
`ag.cholesky {nan_on_error}` fills its result with NaNs instead. `ag.eig` reports
complex eigenvalues (a non-zero imaginary part) the same way.

```mlir
%inv = ag.matrix_inverse %a : tensor<?x?xf64> -> tensor<?x?xf64>
// becomes: copy %a into %t, then
%info = func.call @scipy_LAPACKE_dgetrf(%c101, %n, %n, %pt, %lda, %pipiv)
          : (i32, i32, i32, !llvm.ptr, i32, !llvm.ptr) -> i32
scf.if %failed { func.call @arignote_lapack_error(%c0, %c1, %info64) : (i64, i64, i64) -> () }
```
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, func, llvm, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    i8,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from arignote.dialects import ag
from arignote.dialects.ag import lapack
from arignote.lowering.loops.ag_kernels import MULTI_KERNELS, copy
from arignote.lowering.loops.ag_shapes import (
    MULTI_VALUE_SHAPE_RULES,
    Check,
    ShapeContext,
    op_label,
    shape_text,
    shapes_text,
)
from arignote.lowering.loops.loop_utils import (
    Buffer,
    Calls,
    Dim,
    as_index,
    declare_called_functions,
    for_loop,
    index_constant,
    load,
    loop_nest,
    store,
)

PREFIX = "scipy_LAPACKE_"
"""Every LAPACKE function the kernels call starts with this prefix."""

ERROR_CALLBACK = "arignote_lapack_error"
"""The runtime's callback for a LAPACK failure: `(op index, reason, info) -> ()`."""

ROW_MAJOR = 101
"""LAPACKE's `LAPACK_ROW_MAJOR`."""

PTR = llvm.LLVMPointerType()

# --- shape rules -------------------------------------------------------------------------

RuleResult = tuple[list[list[Dim]], list[Check]]


def _square_check(op: Operation, dims: Sequence[Dim]) -> list[Check]:
    text, shown = shape_text(dims)
    message = f"{op_label(op)}: expected a square matrix, got shape {text}"
    check = Check(message, dims[0], dims[1], shown=shown)
    return [] if check.is_static else [check]


def _static(d: Dim, e: Dim) -> Dim:
    """Of two lengths checked equal, the static one if any."""
    return d if isinstance(d, int) else e


def _min(b: Builder, m: Dim, n: Dim) -> Dim:
    if isinstance(m, int) and isinstance(n, int):
        return min(m, n)
    return b.insert(arith.MinSIOp(as_index(b, m), as_index(b, n))).result


def _square_rule(op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext) -> RuleResult:
    (a,) = dims
    n = _static(a[0], a[1])
    if isinstance(op, ag.DetOp):
        shapes: list[list[Dim]] = [[]]
    elif isinstance(op, ag.EighOp | ag.EigOp):
        shapes = [[n], [n, n]]
    else:
        shapes = [[n, n]]
    return shapes, _square_check(op, a)


def _solve_rule(op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext) -> RuleResult:
    a, b = dims
    checks = _square_check(op, a)
    text, shown = shapes_text([a, b])
    rows = Check(f"{op_label(op)}: a and b of shapes {text} do not match", a[0], b[0], shown=shown)
    if not rows.is_static:
        checks.append(rows)
    return [[_static(a[0], b[0]), *b[1:]]], checks


def _svd_rule(op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext) -> RuleResult:
    assert isinstance(op, ag.SvdOp)
    m, n = dims[0]
    k = _min(context.builder, m, n)
    if op.compute_uv is None:
        return [[k]], []
    if op.full_matrices is not None:
        return [[m, m], [k], [n, n]], []
    return [[m, k], [k], [k, n]], []


def _qr_rule(op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext) -> RuleResult:
    assert isinstance(op, ag.QrOp)
    m, n = dims[0]
    k = _min(context.builder, m, n)
    shapes: dict[str, list[list[Dim]]] = {
        "reduced": [[m, k], [k, n]],
        "complete": [[m, m], [m, n]],
        "r": [[k, n]],
        "raw": [[n, m], [k]],
    }
    return shapes[op.mode_value], []


# --- building blocks ---------------------------------------------------------------------


def _prefix(t: Attribute) -> str:
    return "s" if isinstance(t, Float32Type) else "d"


def _i32(b: Builder, value: SSAValue) -> SSAValue:
    return b.insert(arith.IndexCastOp(value, i32)).result


def _constant(b: Builder, value: int, t: Attribute) -> SSAValue:
    return b.insert(arith.ConstantOp(IntegerAttr(value, t))).result


def _char(b: Builder, letter: str) -> SSAValue:
    return _constant(b, ord(letter), i8)


def _lead(b: Builder, length: SSAValue) -> SSAValue:
    """A leading dimension: `max(1, length)` as i32 (LAPACK wants at least 1)."""
    return _i32(b, b.insert(arith.MaxSIOp(length, index_constant(b, 1))).result)


def _alloc(b: Builder, element: Attribute, lengths: Sequence[SSAValue]) -> Buffer:
    """A new contiguous buffer (freed by `_free`)."""
    t = MemRefType(element, [DYNAMIC_INDEX] * len(lengths))
    return Buffer(b.insert(memref.AllocOp(list(lengths), [], t)).memref, tuple(lengths))


def _copy_of(b: Builder, source: Buffer) -> Buffer:
    """A contiguous copy of `source`, for LAPACK to overwrite."""
    temp = _alloc(b, source.element_type, [as_index(b, d) for d in source.dims])
    copy(b, Buffer(source.memref, temp.dims), temp)
    return temp


def _free(b: Builder, *buffers: Buffer) -> None:
    for buffer in buffers:
        b.insert(memref.DeallocOp.get(buffer.memref))


def _pointer(b: Builder, buffer: Buffer) -> SSAValue:
    """The `!llvm.ptr` of a contiguous buffer's first element."""
    address = b.insert(memref.ExtractAlignedPointerAsIndexOp.get(buffer.memref)).aligned_pointer
    as_i64 = b.insert(arith.IndexCastOp(address, i64)).result
    return b.insert(llvm.IntToPtrOp(as_i64)).results[0]


def _call(
    b: Builder, op: Operation, routine: str, element: Attribute, args: Sequence[SSAValue]
) -> SSAValue:
    """`info = scipy_LAPACKE_<s|d><routine>(LAPACK_ROW_MAJOR, args...)`."""
    name = f"{PREFIX}{_prefix(element)}{routine}"
    all_args = [_constant(b, ROW_MAJOR, i32), *args]
    return b.insert(func.CallOp(name, all_args, [i32])).res[0]


def _if(b: Builder, condition: SSAValue, then: Callable[[Builder], None]) -> None:
    block = Block()
    inner = Builder(InsertPoint.at_end(block))
    then(inner)
    inner.insert(scf.YieldOp())
    b.insert(scf.IfOp(condition, [], Region(block)))


def _report(b: Builder, op: Operation, reason: int, info: SSAValue) -> None:
    """Calls the error callback with `reason` when `info != 0` (`BAD_ARGUMENT` when it
    is negative)."""
    zero = _constant(b, 0, i32)
    failed = b.insert(arith.CmpiOp(info, zero, "ne")).result
    negative = b.insert(arith.CmpiOp(info, zero, "slt")).result

    def then(inner: Builder) -> None:
        code = inner.insert(
            arith.SelectOp(
                negative,
                _constant(inner, lapack.BAD_ARGUMENT, i64),
                _constant(inner, reason, i64),
            )
        ).result
        which = _constant(inner, ag.LAPACK_OPS.index(type(op)), i64)  # pyright: ignore[reportArgumentType]
        wide = inner.insert(arith.ExtSIOp(info, i64)).result
        inner.insert(func.CallOp(ERROR_CALLBACK, [which, code, wide], []))

    _if(b, failed, then)


def _float(b: Builder, value: float, t: Attribute) -> SSAValue:
    return b.insert(arith.ConstantOp(FloatAttr(value, t))).result  # pyright: ignore[reportArgumentType]


def _fill_where(
    b: Builder,
    out: Buffer,
    source: Buffer,
    keep: Callable[[Builder, SSAValue, SSAValue], SSAValue],
    fill: SSAValue,
) -> None:
    """`out[i, j] = source[i, j] if keep(i, j) else fill` (a triangle of a LAPACK
    buffer)."""

    def body(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        value = load(inner, source, ivs)
        chosen = inner.insert(arith.SelectOp(keep(inner, ivs[0], ivs[1]), value, fill)).result
        store(inner, chosen, out, ivs)

    loop_nest(b, [as_index(b, d) for d in out.dims], body)


def _triangle(lower: bool) -> Callable[[Builder, SSAValue, SSAValue], SSAValue]:
    predicate = "sge" if lower else "sle"
    return lambda b, i, j: b.insert(arith.CmpiOp(i, j, predicate)).result


# --- kernels -----------------------------------------------------------------------------

Kernel = Callable[[Builder, Operation, Sequence[Buffer], Sequence[Buffer]], None]


def emit_inverse(b: Builder, op: Operation, outs: Sequence[Buffer], ins: Sequence[Buffer]) -> None:
    """`getrf` then `getri` on a copy; the copy becomes the result."""
    t = outs[0].element_type
    a = _copy_of(b, ins[0])
    n = as_index(b, a.dims[0])
    pivots = _alloc(b, i32, [n])
    n32, lead = _i32(b, n), _lead(b, n)
    info = _call(b, op, "getrf", t, [n32, n32, _pointer(b, a), lead, _pointer(b, pivots)])
    _report(b, op, lapack.SINGULAR, info)
    ok = b.insert(arith.CmpiOp(info, _constant(b, 0, i32), "eq")).result

    def invert(inner: Builder) -> None:
        again = _call(
            inner, op, "getri", t, [n32, _pointer(inner, a), lead, _pointer(inner, pivots)]
        )
        _report(inner, op, lapack.SINGULAR, again)

    _if(b, ok, invert)
    copy(b, a, outs[0])
    _free(b, a, pivots)


def emit_det(b: Builder, op: Operation, outs: Sequence[Buffer], ins: Sequence[Buffer]) -> None:
    """`getrf` on a copy; the product of `U`'s diagonal, negated per row interchange (a
    singular matrix has a zero there: no error)."""
    t = outs[0].element_type
    a = _copy_of(b, ins[0])
    n = as_index(b, a.dims[0])
    pivots = _alloc(b, i32, [n])
    n32 = _i32(b, n)
    info = _call(b, op, "getrf", t, [n32, n32, _pointer(b, a), _lead(b, n), _pointer(b, pivots)])
    negative = b.insert(arith.CmpiOp(info, _constant(b, 0, i32), "slt")).result
    _report_if(b, op, negative, info)

    def step(inner: Builder, i: SSAValue, carried: Sequence[SSAValue]) -> Sequence[SSAValue]:
        product = inner.insert(arith.MulfOp(carried[0], load(inner, a, [i, i]))).result
        row = inner.insert(arith.IndexCastOp(load(inner, pivots, [i]), i64)).result
        i1 = inner.insert(
            arith.AddiOp(inner.insert(arith.IndexCastOp(i, i64)).result, _constant(inner, 1, i64))
        ).result
        swapped = inner.insert(arith.CmpiOp(row, i1, "ne")).result
        negated = inner.insert(arith.NegfOp(product)).result
        return [inner.insert(arith.SelectOp(swapped, negated, product)).result]

    zero, one = index_constant(b, 0), index_constant(b, 1)
    (value,) = for_loop(b, zero, n, one, [_float(b, 1.0, t)], step)
    store(b, value, outs[0], [])
    _free(b, a, pivots)


def _report_if(b: Builder, op: Operation, condition: SSAValue, info: SSAValue) -> None:
    """The error callback (`BAD_ARGUMENT`) when `condition` holds."""

    def then(inner: Builder) -> None:
        which = _constant(inner, ag.LAPACK_OPS.index(type(op)), i64)  # pyright: ignore[reportArgumentType]
        code = _constant(inner, lapack.BAD_ARGUMENT, i64)
        wide = inner.insert(arith.ExtSIOp(info, i64)).result
        inner.insert(func.CallOp(ERROR_CALLBACK, [which, code, wide], []))

    _if(b, condition, then)


def emit_cholesky(b: Builder, op: Operation, outs: Sequence[Buffer], ins: Sequence[Buffer]) -> None:
    """`potrf` on a copy; the factor's triangle, zeros elsewhere (NaNs everywhere for
    `nan_on_error` when it fails)."""
    assert isinstance(op, ag.CholeskyOp)
    t = outs[0].element_type
    lower = op.lower is not None
    a = _copy_of(b, ins[0])
    n = as_index(b, a.dims[0])
    uplo = _char(b, "L" if lower else "U")
    info = _call(b, op, "potrf", t, [uplo, _i32(b, n), _pointer(b, a), _lead(b, n)])
    zero = _float(b, 0.0, t)
    if op.nan_on_error is None:
        _report(b, op, lapack.NOT_POSITIVE_DEFINITE, info)
        _fill_where(b, outs[0], a, _triangle(lower), zero)
    else:
        failed = b.insert(arith.CmpiOp(info, _constant(b, 0, i32), "ne")).result
        fill = b.insert(arith.SelectOp(failed, _float(b, float("nan"), t), zero)).result
        triangle = _triangle(lower)

        def keep(inner: Builder, i: SSAValue, j: SSAValue) -> SSAValue:
            ok = inner.insert(arith.XOrIOp(failed, _constant(inner, 1, failed.type))).result
            return inner.insert(arith.AndIOp(ok, triangle(inner, i, j))).result

        _fill_where(b, outs[0], a, keep, fill)
    _free(b, a)


def emit_solve(b: Builder, op: Operation, outs: Sequence[Buffer], ins: Sequence[Buffer]) -> None:
    """`gesv` (general, symmetric) or `trtrs` (triangular) on copies of `a` and `b`."""
    assert isinstance(op, ag.SolveOp)
    t = outs[0].element_type
    a, rhs = _copy_of(b, ins[0]), _copy_of(b, ins[1])
    n = as_index(b, a.dims[0])
    columns = as_index(b, rhs.dims[1]) if len(rhs.dims) == 2 else index_constant(b, 1)
    n32, nrhs = _i32(b, n), _i32(b, columns)
    structure = op.structure_value
    if structure.endswith("triangular"):
        uplo = _char(b, "L" if structure == "lower_triangular" else "U")
        args = [uplo, _char(b, "N"), _char(b, "N"), n32, nrhs, _pointer(b, a), _lead(b, n)]
        info = _call(b, op, "trtrs", t, [*args, _pointer(b, rhs), _lead(b, columns)])
        _report(b, op, lapack.SINGULAR, info)
        copy(b, rhs, outs[0])
        _free(b, a, rhs)
        return
    pivots = _alloc(b, i32, [n])
    args = [n32, nrhs, _pointer(b, a), _lead(b, n), _pointer(b, pivots)]
    info = _call(b, op, "gesv", t, [*args, _pointer(b, rhs), _lead(b, columns)])
    _report(b, op, lapack.SINGULAR, info)
    copy(b, rhs, outs[0])
    _free(b, a, rhs, pivots)


def emit_eigh(b: Builder, op: Operation, outs: Sequence[Buffer], ins: Sequence[Buffer]) -> None:
    """`syevd` on a copy: eigenvalues, and the eigenvectors in the copy's columns."""
    assert isinstance(op, ag.EighOp)
    t = outs[0].element_type
    a = _copy_of(b, ins[0])
    n = as_index(b, a.dims[0])
    w = _alloc(b, t, [n])
    uplo = _char(b, "U" if op.upper is not None else "L")
    args = [_char(b, "V"), uplo, _i32(b, n), _pointer(b, a), _lead(b, n), _pointer(b, w)]
    info = _call(b, op, "syevd", t, args)
    _report(b, op, lapack.EIG_NOT_CONVERGED, info)
    copy(b, w, outs[0])
    copy(b, a, outs[1])
    _free(b, a, w)


def emit_eig(b: Builder, op: Operation, outs: Sequence[Buffer], ins: Sequence[Buffer]) -> None:
    """`geev` on a copy: real parts of the eigenvalues and the right eigenvectors; an
    eigenvalue with a non-zero imaginary part is reported (`COMPLEX`)."""
    t = outs[0].element_type
    a = _copy_of(b, ins[0])
    n = as_index(b, a.dims[0])
    real, imaginary = _alloc(b, t, [n]), _alloc(b, t, [n])
    vectors = _alloc(b, t, [n, n])
    n32, lead = _i32(b, n), _lead(b, n)
    jobs = [_char(b, "N"), _char(b, "V"), n32, _pointer(b, a), lead]
    parts = [_pointer(b, real), _pointer(b, imaginary)]
    left = [_pointer(b, vectors), _constant(b, 1, i32)]  # not referenced (jobvl = 'N')
    info = _call(b, op, "geev", t, [*jobs, *parts, *left, _pointer(b, vectors), lead])
    _report(b, op, lapack.EIG_NOT_CONVERGED, info)
    _report_complex(b, op, imaginary, n)
    copy(b, real, outs[0])
    copy(b, vectors, outs[1])
    _free(b, a, real, imaginary, vectors)


def _report_complex(b: Builder, op: Operation, imaginary: Buffer, n: SSAValue) -> None:
    """The error callback (`COMPLEX`) when an imaginary part is not zero."""
    t = imaginary.element_type
    zero_value = _float(b, 0.0, t)
    found = _constant(b, 0, i32)

    def step(inner: Builder, i: SSAValue, carried: Sequence[SSAValue]) -> Sequence[SSAValue]:
        nonzero = inner.insert(arith.CmpfOp(load(inner, imaginary, [i]), zero_value, "une")).result
        flag = inner.insert(arith.ExtUIOp(nonzero, i32)).result
        return [inner.insert(arith.OrIOp(carried[0], flag)).result]

    (any_complex,) = for_loop(b, index_constant(b, 0), n, index_constant(b, 1), [found], step)

    def then(inner: Builder) -> None:
        which = _constant(inner, ag.LAPACK_OPS.index(type(op)), i64)  # pyright: ignore[reportArgumentType]
        code = _constant(inner, lapack.COMPLEX, i64)
        inner.insert(func.CallOp(ERROR_CALLBACK, [which, code, _constant(inner, 0, i64)], []))

    _if(b, b.insert(arith.CmpiOp(any_complex, found, "ne")).result, then)


def emit_svd(b: Builder, op: Operation, outs: Sequence[Buffer], ins: Sequence[Buffer]) -> None:
    """`gesdd` on a copy ('A' full, 'S' reduced, 'N' values only)."""
    assert isinstance(op, ag.SvdOp)
    t = ins[0].element_type
    a = _copy_of(b, ins[0])
    m, n = (as_index(b, d) for d in a.dims)
    if op.compute_uv is None:
        (s,) = (_alloc(b, t, [as_index(b, outs[0].dims[0])]),)
        u = vt = a  # not referenced (jobz = 'N')
        job, ldu, ldvt = "N", _constant(b, 1, i32), _constant(b, 1, i32)
    else:
        u, s, vt = (_alloc(b, t, [as_index(b, d) for d in out.dims]) for out in outs)
        job = "A" if op.full_matrices is not None else "S"
        ldu, ldvt = _lead(b, as_index(b, u.dims[1])), _lead(b, n)
    args = [_char(b, job), _i32(b, m), _i32(b, n), _pointer(b, a), _lead(b, n), _pointer(b, s)]
    info = _call(b, op, "gesdd", t, [*args, _pointer(b, u), ldu, _pointer(b, vt), ldvt])
    _report(b, op, lapack.SVD_NOT_CONVERGED, info)
    if op.compute_uv is None:
        copy(b, s, outs[0])
        _free(b, a, s)
        return
    for temp, out in zip((u, s, vt), outs, strict=True):
        copy(b, temp, out)
    _free(b, a, u, s, vt)


def emit_qr(b: Builder, op: Operation, outs: Sequence[Buffer], ins: Sequence[Buffer]) -> None:
    """`geqrf` on a copy, then `R` (the upper triangle), `Q` by `orgqr`, or the raw
    factors (`h` transposed, as NumPy gives it, and `tau`)."""
    assert isinstance(op, ag.QrOp)
    t = ins[0].element_type
    mode = op.mode_value
    a = _copy_of(b, ins[0])
    m, n = (as_index(b, d) for d in a.dims)
    k = b.insert(arith.MinSIOp(m, n)).result
    tau = _alloc(b, t, [k])
    info = _call(
        b, op, "geqrf", t, [_i32(b, m), _i32(b, n), _pointer(b, a), _lead(b, n), _pointer(b, tau)]
    )
    _report(b, op, lapack.BAD_ARGUMENT, info)
    zero = _float(b, 0.0, t)
    if mode == "raw":
        _transposed(b, a, outs[0])
        copy(b, tau, outs[1])
    else:
        r = outs[0] if mode == "r" else outs[1]
        _fill_where(b, r, Buffer(a.memref, r.dims), _triangle(False), zero)
    if mode in ("reduced", "complete"):
        columns = k if mode == "reduced" else m
        _emit_q(b, op, a, tau, outs[0], columns, k)
    _free(b, a, tau)


def _transposed(b: Builder, source: Buffer, out: Buffer) -> None:
    def body(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        store(inner, load(inner, source, [ivs[1], ivs[0]]), out, ivs)

    loop_nest(b, [as_index(b, d) for d in out.dims], body)


def _emit_q(
    b: Builder, op: Operation, a: Buffer, tau: Buffer, out: Buffer, columns: SSAValue, k: SSAValue
) -> None:
    """`Q`'s first `columns` columns by `orgqr` from the reflectors in `a`'s first `k`
    columns."""
    t = a.element_type
    m = as_index(b, a.dims[0])
    q = _alloc(b, t, [m, columns])
    zero = _float(b, 0.0, t)

    def fill(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        inside = inner.insert(arith.CmpiOp(ivs[1], k, "slt")).result
        # reads `a` only inside its first k columns (the select keeps the load in bounds
        # of the row: k <= n)
        column = inner.insert(arith.SelectOp(inside, ivs[1], index_constant(inner, 0))).result
        value = load(inner, a, [ivs[0], column])
        store(inner, inner.insert(arith.SelectOp(inside, value, zero)).result, q, ivs)

    loop_nest(b, [m, columns], fill)
    args = [_i32(b, m), _i32(b, columns), _i32(b, k), _pointer(b, q), _lead(b, columns)]
    info = _call(b, op, "orgqr", t, [*args, _pointer(b, tau)])
    _report(b, op, lapack.BAD_ARGUMENT, info)
    copy(b, q, out)
    _free(b, q)


def declare_lapack_functions(module: ModuleOp, calls: Calls | None = None) -> None:
    """Adds `func.func private` declarations of the LAPACKE functions and the error
    callback a module calls but does not declare."""
    declare_called_functions(
        module, lambda name: name.startswith(PREFIX) or name == ERROR_CALLBACK, calls
    )


MULTI_VALUE_SHAPE_RULES.update(
    {
        ag.MatrixInverseOp: _square_rule,
        ag.DetOp: _square_rule,
        ag.CholeskyOp: _square_rule,
        ag.EighOp: _square_rule,
        ag.EigOp: _square_rule,
        ag.SolveOp: _solve_rule,
        ag.SvdOp: _svd_rule,
        ag.QrOp: _qr_rule,
    }
)
MULTI_KERNELS.update(
    {
        ag.MatrixInverseOp: emit_inverse,
        ag.DetOp: emit_det,
        ag.CholeskyOp: emit_cholesky,
        ag.EighOp: emit_eigh,
        ag.EigOp: emit_eig,
        ag.SolveOp: emit_solve,
        ag.SvdOp: emit_svd,
        ag.QrOp: emit_qr,
    }
)
