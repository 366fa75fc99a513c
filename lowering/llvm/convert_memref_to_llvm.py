"""`convert-memref-to-llvm`: ranked memrefs to MLIR's descriptor struct in the `llvm` dialect.

Accepts `memref.alloc`, `memref.alloca`, `memref.dealloc`, `memref.load`, `memref.store`,
`memref.dim`, ranked-to-ranked `memref.cast`, `memref.subview`, `memref.reinterpret_cast`,
`memref.extract_aligned_pointer_as_index` and `memref.extract_strided_metadata` on
memrefs of any rank (0 included) with an identity or `strided<[...], offset: ...>`
layout (any mix of static and dynamic entries). Leaves `llvm` ops; memref values are reached through
`builtin.unrealized_conversion_cast` to and from the descriptor struct (see
`arignote.lowering.llvm.llvm_utils`), which `reconcile-unrealized-casts` removes once the
functions are converted too.

- An element's address is `aligned_ptr + (offset + sum_k index_k * stride_k)` elements;
  static strides and offsets come from the type, dynamic ones from the descriptor.
- `memref.alloc` (identity layout only) calls `malloc(bytes + alignment - 1)` and rounds
  the pointer up to `alignment` (the op's, or 64 bytes); the descriptor keeps the
  `malloc` pointer as its allocated pointer, which `memref.dealloc` hands to `free`.
  Strides are row-major, computed from the sizes. The byte count saturates at
  `2**64 - 1` instead of wrapping, and in a function with `arignote.alloc_status` a null
  pointer ends the function with a status (see `arignote.lowering.llvm.checked_alloc`).
- `i1` elements are bytes in memory (as numpy's `bool`): stored as `zext` to `i8`, loaded
  as `i8` then `trunc`.

`malloc` and `free` are declared once per module.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.context import Context
from xdsl.dialects import arith, llvm, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    UnrealizedConversionCastOp,
    i1,
    i8,
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

from arignote.lowering.llvm.checked_alloc import (
    FREE_HELPER,
    HEADER_BYTES,
    align_up,
    as_i64,
    byte_count,
    checked_malloc,
    data_start,
    define_helpers,
    helper_malloc,
    saturating_add,
    split_at_exits,
    status_function,
    untrack,
    uses_helpers,
)
from arignote.lowering.llvm.llvm_utils import (
    ALLOC_ALIGNMENT,
    PTR,
    add_index,
    append,
    call,
    constant,
    declare_function,
    descriptor_type,
    element_byte_size,
    extract,
    from_llvm,
    insert,
    integer_attr,
    mul_index,
    replace_op,
    to_llvm,
    to_llvm_all,
)
from arignote.lowering.op_builder import build
from arignote.lowering.rewriting import DispatchingApplier

Index = int | SSAValue
"""An i64 quantity known statically (int) or at run time (SSA value)."""


def _memref_type(value: SSAValue) -> MemRefType:
    type_ = value.type
    if not isinstance(type_, MemRefType):
        raise NotImplementedError(f"only ranked memrefs are supported, got {type_}")
    return type_  # pyright: ignore[reportUnknownVariableType]


def _memory_type(element_type: Attribute) -> Attribute:
    """The type an element has in memory: `i1` is a byte."""
    return i8 if element_type == i1 else element_type


def _materialize(value: Index, ops: list[Operation]) -> SSAValue:
    return constant(value, i64, ops) if isinstance(value, int) else value


def _mul(lhs: Index, rhs: Index, ops: list[Operation]) -> Index:
    if isinstance(lhs, int) and isinstance(rhs, int):
        return lhs * rhs
    if lhs == 1 or rhs == 1:
        return rhs if lhs == 1 else lhs
    return mul_index(_materialize(lhs, ops), _materialize(rhs, ops), ops)


def _add(lhs: Index, rhs: Index, ops: list[Operation]) -> Index:
    if isinstance(lhs, int) and isinstance(rhs, int):
        return lhs + rhs
    if lhs == 0 or rhs == 0:
        return rhs if lhs == 0 else lhs
    return add_index(_materialize(lhs, ops), _materialize(rhs, ops), ops)


def element_pointer(
    descriptor: SSAValue,
    type_: MemRefType,
    indices: Sequence[SSAValue],
    ops: list[Operation],
) -> SSAValue:
    """Address of element `indices` (i64 values) of the memref `descriptor` of `type_`."""
    strides = type_.get_strides()
    if strides is None:
        raise NotImplementedError(f"layout of {type_} is not strided")
    static_offset = type_.get_offset()
    linear: Index = static_offset
    if static_offset is None:
        linear = extract(descriptor, [2], i64, ops)
    for dim, (index, stride) in enumerate(zip(indices, strides, strict=True)):
        if stride is None:
            stride = extract(descriptor, [4, dim], i64, ops)
        linear = _add(linear, _mul(index, stride, ops), ops)
    aligned = extract(descriptor, [1], PTR, ops)
    if linear == 0:
        return aligned
    element = _memory_type(type_.get_element_type())
    offset = _materialize(linear, ops)
    gep = build(llvm.GEPOp.from_mixed_indices, aligned, [offset], element, inbounds=True)
    return append(ops, gep)


def build_descriptor(
    type_: MemRefType,
    allocated: SSAValue,
    aligned: SSAValue,
    sizes: Sequence[Index],
    strides: Sequence[Index],
    ops: list[Operation],
) -> SSAValue:
    """A descriptor struct with offset 0 and the given pointers, sizes and strides."""
    descriptor = append(ops, build(llvm.UndefOp, descriptor_type(type_)))
    descriptor = insert(descriptor, allocated, [0], ops)
    descriptor = insert(descriptor, aligned, [1], ops)
    descriptor = insert(descriptor, constant(0, i64, ops), [2], ops)
    for dim, (size, stride) in enumerate(zip(sizes, strides, strict=True)):
        descriptor = insert(descriptor, _materialize(size, ops), [3, dim], ops)
        descriptor = insert(descriptor, _materialize(stride, ops), [4, dim], ops)
    return descriptor


def row_major(
    type_: MemRefType, dynamic_sizes: Sequence[SSAValue], ops: list[Operation]
) -> tuple[list[Index], list[Index], Index]:
    """Sizes, row-major strides and element count of an identity-layout allocation."""
    if not isinstance(type_.layout, NoneAttr):
        raise NotImplementedError(f"allocation of non-identity layout {type_}")
    dynamic = iter(to_llvm_all(dynamic_sizes, ops))
    sizes: list[Index] = [next(dynamic) if s < 0 else s for s in type_.get_shape()]
    strides: list[Index] = []
    count: Index = 1
    for size in reversed(sizes):
        strides.insert(0, count)
        count = _mul(count, size, ops)
    return sizes, strides, count


def constant_index(value: SSAValue) -> int | None:
    """The value of `value` when it is a constant, looking through conversion casts."""
    owner = value.owner
    while isinstance(owner, UnrealizedConversionCastOp):
        owner = owner.inputs[0].owner
    if isinstance(owner, arith.ConstantOp | llvm.ConstantOp):
        attr = owner.value
        if isinstance(attr, IntegerAttr):
            return attr.value.data
    return None


class AllocLowering(RewritePattern):
    """`memref.alloc` → `malloc` of padded bytes, aligned pointer, descriptor."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.AllocOp, rewriter: PatternRewriter, /):
        type_ = _memref_type(op.memref)
        ops: list[Operation] = []
        sizes, strides, count = row_major(type_, op.dynamic_sizes, ops)
        alignment = ALLOC_ALIGNMENT
        if isinstance(op.alignment, IntegerAttr):
            alignment = op.alignment.value.data
        element_bytes = element_byte_size(type_.get_element_type())
        function = status_function(op)
        if function is not None and uses_helpers(function):
            allocated, aligned = helper_malloc(
                rewriter, op, function, sizes, element_bytes, alignment, ops
            )
            descriptor = build_descriptor(type_, allocated, aligned, sizes, strides, ops)
            replace_op(rewriter, op, ops, descriptor)
            return
        nbytes = byte_count(sizes, element_bytes, ops)
        header = 0 if function is None else HEADER_BYTES
        padded = saturating_add(nbytes, header + alignment - 1, ops)
        declare_function(rewriter, op, "malloc", [i64], PTR)
        if function is None:
            allocated = call("malloc", [as_i64(padded, ops)], PTR, ops)
            assert allocated is not None
        else:
            allocated = checked_malloc(rewriter, op, function, nbytes, padded, ops)
        start = data_start(allocated, function is not None, ops)
        aligned = align_up(start, alignment - 1, ops)
        descriptor = build_descriptor(type_, allocated, aligned, sizes, strides, ops)
        replace_op(rewriter, op, ops, descriptor)


class AllocaLowering(RewritePattern):
    """`memref.alloca` → `llvm.alloca` of the element count, descriptor."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.AllocaOp, rewriter: PatternRewriter, /):
        type_ = _memref_type(op.memref)
        ops: list[Operation] = []
        sizes, strides, count = row_major(type_, op.dynamic_sizes, ops)
        alignment = ALLOC_ALIGNMENT
        if isinstance(op.alignment, IntegerAttr):
            alignment = op.alignment.value.data
        element = _memory_type(type_.get_element_type())
        pointer = append(ops, build(llvm.AllocaOp, _materialize(count, ops), element, alignment))
        descriptor = build_descriptor(type_, pointer, pointer, sizes, strides, ops)
        replace_op(rewriter, op, ops, descriptor)


class DeallocLowering(RewritePattern):
    """`memref.dealloc` → `free` of the allocated pointer."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.DeallocOp, rewriter: PatternRewriter, /):
        ops: list[Operation] = []
        descriptor = to_llvm(op.memref, ops)
        allocated = extract(descriptor, [0], PTR, ops)
        function = status_function(op)
        if function is not None and uses_helpers(function):
            define_helpers(rewriter, op)
            call(FREE_HELPER, [allocated], None, ops)
            replace_op(rewriter, op, ops, None)
            return
        if function is not None:
            untrack(allocated, ops)
        declare_function(rewriter, op, "free", [PTR])
        call("free", [allocated], None, ops)
        replace_op(rewriter, op, ops, None)


class LoadLowering(RewritePattern):
    """`memref.load` → address computation + `llvm.load`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.LoadOp, rewriter: PatternRewriter, /):
        type_ = _memref_type(op.memref)
        ops: list[Operation] = []
        descriptor = to_llvm(op.memref, ops)
        indices = to_llvm_all(op.indices, ops)
        pointer = element_pointer(descriptor, type_, indices, ops)
        element = type_.get_element_type()
        result = append(ops, build(llvm.LoadOp, pointer, _memory_type(element)))
        if element == i1:
            result = append(ops, build(llvm.TruncOp, result, i1))
        replace_op(rewriter, op, ops, result)


class StoreLowering(RewritePattern):
    """`memref.store` → address computation + `llvm.store`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.StoreOp, rewriter: PatternRewriter, /):
        type_ = _memref_type(op.memref)
        ops: list[Operation] = []
        value, descriptor = to_llvm_all((op.value, op.memref), ops)
        indices = to_llvm_all(op.indices, ops)
        pointer = element_pointer(descriptor, type_, indices, ops)
        if value.type == i1:
            value = append(ops, build(llvm.ZExtOp, value, i8))
        ops.append(build(llvm.StoreOp, value, pointer))
        replace_op(rewriter, op, ops, None)


class DimLowering(RewritePattern):
    """`memref.dim` → a static size, a descriptor field, or a select over the fields."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.DimOp, rewriter: PatternRewriter, /):
        type_ = _memref_type(op.source)
        shape = type_.get_shape()
        ops: list[Operation] = []
        dim = constant_index(op.index)
        if dim is not None and shape[dim] >= 0:
            replace_op(rewriter, op, ops, constant(shape[dim], i64, ops))
            return
        descriptor = to_llvm(op.source, ops)
        if dim is not None:
            replace_op(rewriter, op, ops, extract(descriptor, [3, dim], i64, ops))
            return
        (index,) = to_llvm_all((op.index,), ops)
        eq = integer_attr(llvm.ICmpPredicateFlag.EQ.to_int(), i64)
        result = extract(descriptor, [3, 0], i64, ops)
        for k in range(1, len(shape)):
            is_k = append(ops, build(llvm.ICmpOp, index, constant(k, i64, ops), eq))
            size = extract(descriptor, [3, k], i64, ops)
            result = append(ops, build(llvm.SelectOp, is_k, size, result))
        replace_op(rewriter, op, ops, result)


class CastLowering(RewritePattern):
    """Ranked `memref.cast` → nothing: both sides share one descriptor type."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.CastOp, rewriter: PatternRewriter, /):
        source, dest = _memref_type(op.source), _memref_type(op.dest)
        if source.get_num_dims() != dest.get_num_dims():
            raise NotImplementedError(f"memref.cast from {source} to {dest}")
        ops: list[Operation] = []
        replace_op(rewriter, op, ops, to_llvm(op.source, ops))


class ExtractAlignedPointerLowering(RewritePattern):
    """`memref.extract_aligned_pointer_as_index` → `ptrtoint` of the aligned pointer."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: memref.ExtractAlignedPointerAsIndexOp, rewriter: PatternRewriter, /
    ):
        ops: list[Operation] = []
        descriptor = to_llvm(op.source, ops)
        aligned = extract(descriptor, [1], PTR, ops)
        replace_op(rewriter, op, ops, append(ops, build(llvm.PtrToIntOp, aligned, i64)))


class ExtractStridedMetadataLowering(RewritePattern):
    """`memref.extract_strided_metadata` → the descriptor's fields (static ones as
    constants); the base buffer is a rank-0 descriptor of the same pointers."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.ExtractStridedMetaDataOp, rewriter: PatternRewriter, /):
        type_ = _memref_type(op.source)
        strides = type_.get_strides()
        if strides is None:
            raise NotImplementedError(f"layout of {type_} is not strided")
        ops: list[Operation] = []
        descriptor = to_llvm(op.source, ops)
        base_type = _memref_type(op.base_buffer)
        allocated = extract(descriptor, [0], PTR, ops)
        aligned = extract(descriptor, [1], PTR, ops)
        base = build_descriptor(base_type, allocated, aligned, [], [], ops)
        offset: Index | None = type_.get_offset()
        if offset is None:
            offset = extract(descriptor, [2], i64, ops)
        sizes: list[Index] = [
            s if s >= 0 else extract(descriptor, [3, k], i64, ops)
            for k, s in enumerate(type_.get_shape())
        ]
        stride_values: list[Index] = [
            s if s is not None else extract(descriptor, [4, k], i64, ops)
            for k, s in enumerate(strides)
        ]
        values = [base, *(_materialize(v, ops) for v in (offset, *sizes, *stride_values))]
        results = [from_llvm(v, r.type, ops) for v, r in zip(values, op.results, strict=True)]
        rewriter.replace(op, ops, results)


def _mixed(static: Sequence[int], dynamic: Sequence[SSAValue], ops: list[Operation]) -> list[Index]:
    """A subview's offsets, sizes or strides: static entries as ints, dynamic ones as
    i64 values."""
    values = iter(to_llvm_all(dynamic, ops))
    return [next(values) if v == DYNAMIC_INDEX else v for v in static]


class SubviewLowering(RewritePattern):
    """`memref.subview` → a descriptor of the same buffer: offset `offset + sum_k
    offset_k * stride_k`, the given sizes, strides `stride_k * step_k`. A rank-reducing
    subview drops the leading dimensions (each must have size 1)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.SubviewOp, rewriter: PatternRewriter, /):
        source, result = _memref_type(op.source), _memref_type(op.result)
        strides = source.get_strides()
        if strides is None:
            raise NotImplementedError(f"layout of {source} is not strided")
        ops: list[Operation] = []
        descriptor = to_llvm(op.source, ops)
        offset: Index | None = source.get_offset()
        if offset is None:
            offset = extract(descriptor, [2], i64, ops)
        old_strides: list[Index] = [
            s if s is not None else extract(descriptor, [4, k], i64, ops)
            for k, s in enumerate(strides)
        ]
        offsets = _mixed(op.static_offsets.get_values(), op.offsets, ops)
        sizes = _mixed(op.static_sizes.get_values(), op.sizes, ops)
        steps = _mixed(op.static_strides.get_values(), op.strides, ops)
        for first, stride in zip(offsets, old_strides, strict=True):
            offset = _add(offset, _mul(first, stride, ops), ops)
        dropped = source.get_num_dims() - result.get_num_dims()
        new = append(ops, build(llvm.UndefOp, descriptor_type(result)))
        new = insert(new, extract(descriptor, [0], PTR, ops), [0], ops)
        new = insert(new, extract(descriptor, [1], PTR, ops), [1], ops)
        new = insert(new, _materialize(offset, ops), [2], ops)
        for dim in range(result.get_num_dims()):
            k = dim + dropped
            stride = _mul(old_strides[k], steps[k], ops)
            new = insert(new, _materialize(sizes[k], ops), [3, dim], ops)
            new = insert(new, _materialize(stride, ops), [4, dim], ops)
        replace_op(rewriter, op, ops, new)


class ReinterpretCastLowering(RewritePattern):
    """`memref.reinterpret_cast` → a descriptor of the same pointers with the op's offset,
    sizes and strides (one offset; static entries from the op's properties)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.ReinterpretCastOp, rewriter: PatternRewriter, /):
        result = _memref_type(op.result)
        ops: list[Operation] = []
        descriptor = to_llvm(op.source, ops)
        (offset,) = _mixed(op.static_offsets.get_values(), op.offsets, ops)
        sizes = _mixed(op.static_sizes.get_values(), op.sizes, ops)
        strides = _mixed(op.static_strides.get_values(), op.strides, ops)
        new = append(ops, build(llvm.UndefOp, descriptor_type(result)))
        new = insert(new, extract(descriptor, [0], PTR, ops), [0], ops)
        new = insert(new, extract(descriptor, [1], PTR, ops), [1], ops)
        new = insert(new, _materialize(offset, ops), [2], ops)
        for dim, (size, stride) in enumerate(zip(sizes, strides, strict=True)):
            new = insert(new, _materialize(size, ops), [3, dim], ops)
            new = insert(new, _materialize(stride, ops), [4, dim], ops)
        replace_op(rewriter, op, ops, new)


MEMREF_PATTERNS: tuple[RewritePattern, ...] = (
    AllocLowering(),
    AllocaLowering(),
    DeallocLowering(),
    LoadLowering(),
    StoreLowering(),
    DimLowering(),
    CastLowering(),
    ExtractAlignedPointerLowering(),
    ExtractStridedMetadataLowering(),
    SubviewLowering(),
    ReinterpretCastLowering(),
)
"""The patterns of `convert-memref-to-llvm`, in the order they are tried (stateless)."""


class ConvertMemRefToLLVMPass(ModulePass):
    """Rewrite memref allocation, access and queries into `llvm` ops on descriptors."""

    name = "convert-memref-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(DispatchingApplier(MEMREF_PATTERNS)).rewrite_module(op)
        split_at_exits(op)
