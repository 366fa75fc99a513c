"""`parallelize`: `ag.parallel_for` / `ag.parallel_width` onto the native thread pool.

Runs after `ag-to-loops` (which emits the parallel loops only when asked to, see
`arignote.lowering.loops.parallel_loops`) and before the LLVM lowering. A module without
them is left unchanged.

An `ag.parallel_for` that the pool would run serially whatever the run-time values
(its trip count is a constant, or bounded by one through `arith.minui`/`minsi`, below
its constant `min_trips`, or at most its `align`; or `max_parts` is 1) is inlined in
place: its body on the whole range as part 0, `parts` the constant 1.

Every other `ag.parallel_for` in `@f` becomes a call of the pool,
`llvm.call @arignote_parallel_for(@f__par<k>, ctx, lower, upper, min_trips, align,
max_parts)` (its `i64` result is the op's `parts`), and its body an outlined task
`llvm.func internal @f__par<k>(%begin: i64, %end: i64, %part: i64, %ctx: !llvm.ptr)`,
the pool's task ABI. The values the body uses and does not define travel in one
context struct, stored by `@f` into a stack slot (`llvm.alloca` in its entry block) and
loaded by the task:

* a scalar (`index` as `i64`, integers, `f32`, `f64`, `!llvm.ptr`) by value;
* a memref as the few fields of its descriptor that the body needs: its aligned data
  pointer, its offset and strides where the type leaves them dynamic, and (only when
  the body does more with it than `memref.load`/`memref.store`) its dynamic sizes. The
  body rebuilds a descriptor from them (static fields from the type; the allocated
  pointer is the aligned one: the body must not free a captured memref).

The struct's elements go by decreasing size and its tail is padded explicitly (no
implicit padding: LLVM splits its store and load into scalar ones). `@f` converts a
captured value and extracts its fields once, right after the value's definition, for
all its loops. Constants the body uses are copied into it. A captured memref that is
`@f`'s `llvm.noalias` argument or a `memref.alloc` or `memref.alloca` of `@f`, and that
no other captured memref derives from (through casts, subviews, selects), keeps `noalias`: its data
pointer becomes a `noalias` argument of `llvm.func internal @f__par<k>__body(%begin,
%end, %part, <the fields>)`, which holds the body, while `@f__par<k>` only loads the
context and calls it (LLVM inlines the body into the task and turns the `noalias`
arguments into scoped alias metadata, so that the loops vectorize without run-time
overlap checks). A loop with no such memref is a single function, the task, which
loads its context itself.

`ag.parallel_width` becomes `llvm.call @arignote_parallel_width()`. Both functions
are the runtime's thread pool (`arignote.runtime.threadpool`).

```mlir
// before                                   // after
%p = ag.parallel_for %c0 to %n              %fn = llvm.mlir.addressof @f__par0
     min_trips %m align 64 {                llvm.store %context, %ctx ...
^bb0(%b: index, %e: index, %k: index):      %p = llvm.call @arignote_parallel_for(%fn,
  scf.for %i = %b to %e step %c1 {...}            %ctx, %lo, %hi, %mt, %al, %mp)
  ag.yield                                  ...
}                                           llvm.func internal @f__par0(%b: i64, %e: i64,
                                                %k: i64, %ctx: !llvm.ptr) {
                                              <load of the context, its fields>
                                              llvm.call @f__par0__body(%b, %e, %k, ...)
                                            }
                                            llvm.func internal @f__par0__body(%b: i64,
                                                %e: i64, %k: i64, %out: !llvm.ptr
                                                {llvm.noalias}, ...) { scf.for ... }
```
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

from xdsl.context import Context
from xdsl.dialects import arith, func, llvm, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
    UnrealizedConversionCastOp,
    i8,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from arignote.dialects import ag
from arignote.lowering.llvm.convert_func_to_llvm import NOALIAS, noalias_arguments
from arignote.lowering.llvm.llvm_utils import (
    PTR,
    append,
    constant,
    declare_external,
    descriptor_type,
    extract,
    from_llvm,
    insert,
    integer_attr,
    to_llvm,
)
from arignote.lowering.loops.parallel_loops import statically_serial

PARALLEL_FOR = "arignote_parallel_for"
PARALLEL_WIDTH = "arignote_parallel_width"
PARALLEL_FOR_INPUTS = [PTR, PTR, *[i64] * 5]
"""`arignote_parallel_for(task, ctx, lower, upper, min_trips, align, max_parts) -> i64`."""
OUTLINED_SUFFIX = "__par"
BODY_SUFFIX = "__body"

_ALLOCATED, _ALIGNED, _OFFSET, _SIZES, _STRIDES = range(5)
"""Positions of the fields of a memref descriptor."""

Uses = dict[SSAValue, list[tuple[Operation, int]]]
"""Values defined outside a region → the (op, operand index) pairs that use them in it."""


def _scalar_type(t: Attribute) -> Attribute:
    """The llvm type of a captured scalar of type `t`."""
    if isinstance(t, IndexType):
        return i64
    if isinstance(t, Float32Type | Float64Type | llvm.LLVMPointerType):
        return t
    if isinstance(t, IntegerType) and t.width.data in (1, 8, 16, 32, 64):
        return t
    raise NotImplementedError(f"parallelize: cannot capture a value of type {t}")


def _byte_size(t: Attribute) -> int:
    """Size and alignment in bytes of a value of the llvm scalar type `t`."""
    if isinstance(t, IntegerType):
        return max(1, t.width.data // 8)
    return 4 if isinstance(t, Float32Type) else 8


def external_uses(region: Region) -> Uses:
    """The values defined outside `region` that its ops use (in order of first use),
    each with its uses there."""
    defined: set[SSAValue] = set()
    for block in region.blocks:
        defined.update(block.args)
    ops = list(region.walk())
    for op in ops:
        defined.update(op.results)
        for inner in op.regions:
            for block in inner.blocks:
                defined.update(block.args)
    uses: Uses = {}
    for op in ops:
        for k, operand in enumerate(op.operands):
            if operand not in defined:
                uses.setdefault(operand, []).append((op, k))
    return uses


_VIEWS = (
    memref.CastOp,
    memref.SubviewOp,
    memref.ReinterpretCastOp,
    arith.SelectOp,
    UnrealizedConversionCastOp,
)
"""Ops whose memref result addresses the memory of a memref operand."""


def _roots(value: SSAValue) -> set[SSAValue]:
    """The memrefs `value` is a view of (itself when it is not a view); iterative, each
    value visited once: chains of views may be deeper than Python's recursion limit."""
    roots: set[SSAValue] = set()
    seen: set[SSAValue] = set()
    stack = [value]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        owner = current.owner
        sources = []
        if isinstance(owner, _VIEWS):
            sources = [o for o in owner.operands if isinstance(o.type, MemRefType)]
        if sources:
            stack.extend(sources)
        else:
            roots.add(current)
    return roots


def _fresh(value: SSAValue, f: func.FuncOp) -> bool:
    """`value` is a `noalias` argument of `f`, a `memref.alloc` or a `memref.alloca`."""
    if isinstance(value, BlockArgument):
        return value.block is f.body.blocks[0] and value.index in noalias_arguments(f)
    return isinstance(value.owner, memref.AllocOp | memref.AllocaOp)


def noalias_positions(
    captured: Sequence[SSAValue],
    f: func.FuncOp | None,
    fresh: Callable[[SSAValue], bool] | None = None,
) -> set[int]:
    """The captured memrefs that may be `noalias` in the outlined function: each that
    is fresh (`_fresh` in `f`, or the `fresh` test where `f` is not built yet) and that no
    other captured memref derives from."""
    is_fresh = fresh if fresh is not None else (lambda v: f is not None and _fresh(v, f))
    memrefs = [(k, v) for k, v in enumerate(captured) if isinstance(v.type, MemRefType)]
    roots = {k: _roots(v) for k, v in memrefs}
    result = set()
    for k, v in memrefs:
        others = set().union(*(r for j, r in roots.items() if j != k))
        if roots[k] == {v} and is_fresh(v) and v not in others:
            result.add(k)
    return result


@dataclass
class _Field:
    """What the body receives of a captured value (an element of the context struct,
    an argument of `@f__par<k>__body`): the value of a scalar, or one field of a
    memref's descriptor."""

    type: Attribute
    """Its llvm type."""
    position: tuple[int, ...] = ()
    """For a memref: the field's position in the descriptor."""
    noalias: bool = False
    slot: int = 0
    """Its element of the context struct."""


@dataclass
class _Capture:
    """A value the body uses and does not define, and what the body receives of it."""

    value: SSAValue
    uses: list[tuple[Operation, int]]
    fields: list[_Field]
    full: bool = False
    """A memref rebuilt with every field (else only those loads and stores read)."""


def _accessed_only(value: SSAValue, uses: list[tuple[Operation, int]]) -> bool:
    """Whether the body only loads from and stores into the memref `value`."""
    return all(
        isinstance(op, memref.LoadOp | memref.StoreOp) and op.memref is value for op, _ in uses
    )


def _memref_type(value: SSAValue) -> MemRefType:
    t = value.type
    assert isinstance(t, MemRefType)
    return t  # pyright: ignore[reportUnknownVariableType]


def _descriptor_fields(t: MemRefType) -> list[tuple[tuple[int, ...], int | None]]:
    """Offset, sizes and strides of a descriptor of `t`: (position, static value or None)."""
    strides = t.get_strides()
    if strides is None:
        raise NotImplementedError(f"parallelize: cannot capture a memref of layout {t}")
    fields: list[tuple[tuple[int, ...], int | None]] = [((_OFFSET,), t.get_offset())]
    for k, size in enumerate(t.get_shape()):
        fields.append(((_SIZES, k), size if size >= 0 else None))
    for k, stride in enumerate(strides):
        fields.append(((_STRIDES, k), stride))
    return fields


def _capture(value: SSAValue, uses: list[tuple[Operation, int]], noalias: bool) -> _Capture:
    if not isinstance(value.type, MemRefType):
        return _Capture(value, uses, [_Field(_scalar_type(value.type))])
    full = not _accessed_only(value, uses)
    fields = [_Field(PTR, (_ALIGNED,), noalias)]
    for position, static in _descriptor_fields(_memref_type(value)):
        if static is None and (full or position[0] != _SIZES):
            fields.append(_Field(i64, position))
    return _Capture(value, uses, fields, full)


def _rebuild(capture: _Capture, values: Sequence[SSAValue], ops: list[Operation]) -> SSAValue:
    """The captured value inside the body, from the values of its slots."""
    value = capture.value
    if not isinstance(value.type, MemRefType):
        return from_llvm(values[0], value.type, ops)
    t = _memref_type(value)
    given = {f.position: v for f, v in zip(capture.fields, values, strict=True)}
    aligned = given[(_ALIGNED,)]
    descriptor = append(ops, llvm.UndefOp(descriptor_type(t)))
    if capture.full:
        descriptor = insert(descriptor, aligned, [_ALLOCATED], ops)
    descriptor = insert(descriptor, aligned, [_ALIGNED], ops)
    for position, static in _descriptor_fields(t):
        if position in given:
            descriptor = insert(descriptor, given[position], position, ops)
        elif capture.full and static is not None:
            descriptor = insert(descriptor, constant(static, i64, ops), position, ops)
    return from_llvm(descriptor, t, ops)


@cache
def _struct(types: tuple[Attribute, ...]) -> llvm.LLVMStructType:
    return llvm.LLVMStructType.from_type_list(list(types))


def _layout(fields: Sequence[_Field]) -> llvm.LLVMStructType:
    """The context struct of `fields` (setting their `slot`s). The elements go by
    decreasing size and the tail is padded explicitly: a struct without implicit
    padding, which LLVM splits into its scalar fields."""
    ordered = sorted(fields, key=lambda f: -_byte_size(f.type))
    types: list[Attribute] = []
    for k, field in enumerate(ordered):
        field.slot = k
        types.append(field.type)
    size = sum(_byte_size(t) for t in types)
    widest = _byte_size(types[0]) if types else 1
    if size % widest:
        types.append(llvm.LLVMArrayType(widest - size % widest, i8))
    return _struct(tuple(types))


def context_bytes(struct: llvm.LLVMStructType) -> int:
    """The size of a context struct of `_layout` (explicitly padded: the sum of its
    elements')."""
    return sum(
        t.size.data if isinstance(t, llvm.LLVMArrayType) else _byte_size(t) for t in struct.types
    )


def _load_context(
    ctx: SSAValue,
    struct: llvm.LLVMStructType,
    captures: Sequence[_Capture],
    ops: list[Operation],
) -> list[SSAValue]:
    """The values of the fields of `captures`, from the context struct at `ctx`."""
    if not captures:
        return []
    loaded = append(ops, llvm.LoadOp(ctx, struct))
    return [extract(loaded, [f.slot], f.type, ops) for c in captures for f in c.fields]


def _function(name: str, entry: Block, fields: Sequence[_Field] | None) -> llvm.FuncOp:
    """`llvm.func internal @name` on `entry`; with `fields`, its arguments after
    (begin, end, part) are theirs (noalias as they say)."""
    types = [a.type for a in entry.args]
    props: dict[str, Attribute | None] = {}
    if fields is not None and any(f.noalias for f in fields):
        flags = [DictionaryAttr({NOALIAS: UnitAttr()} if f.noalias else {}) for f in fields]
        props["arg_attrs"] = ArrayAttr([DictionaryAttr({})] * 3 + flags)
    return llvm.FuncOp(
        name,
        llvm.LLVMFunctionType(types, llvm.LLVMVoidType()),
        linkage=llvm.LinkageAttr("internal"),
        body=Region(entry),
        other_props=props,
    )


class _Outliner:
    """Outlines the parallel loops of one function `f` (see the module doc)."""

    def __init__(self, f: func.FuncOp, module: ModuleOp, taken: set[str]):
        self.f, self.module, self.taken = f, module, taken
        self.name = f.sym_name.data
        self.entry = f.body.blocks[0]
        self.count = 0
        self.converted: dict[SSAValue, SSAValue] = {}
        self.constants: dict[int, SSAValue] = {}
        self.fields: dict[tuple[SSAValue, tuple[int, ...]], SSAValue] = {}

    def _unique(self, base: str) -> str:
        """`base<k>` for the least unused `k` (with its `__body`)."""
        while {f"{base}{self.count}", f"{base}{self.count}{BODY_SUFFIX}"} & self.taken:
            self.count += 1
        name = f"{base}{self.count}"
        self.taken.update((name, name + BODY_SUFFIX))
        self.count += 1
        return name

    def _context(self, struct: llvm.LLVMStructType) -> SSAValue:
        """A stack slot for a context struct, in `f`'s entry block."""
        slot = llvm.AllocaOp(self._constant(1), struct, 8)
        Rewriter.insert_op(slot, InsertPoint.after(self._constant(1).owner))
        return slot.res

    def _constant(self, value: int) -> SSAValue:
        """An `i64` constant in `f`'s entry block (one per value)."""
        if value not in self.constants:
            op = llvm.ConstantOp(integer_attr(value, i64), i64)
            Rewriter.insert_op(op, InsertPoint.at_start(self.entry))
            self.constants[value] = op.result
        return self.constants[value]

    def _field(self, value: SSAValue, field: _Field) -> SSAValue:
        """The value of `field` of the captured `value` (extracted right after the
        conversion of a memref, once per function)."""
        converted = self._llvm(value)
        if not field.position:
            return converted
        key = (value, field.position)
        if key not in self.fields:
            ops: list[Operation] = []
            self.fields[key] = extract(converted, field.position, field.type, ops)
            Rewriter.insert_op(ops, _after(converted))
        return self.fields[key]

    def _llvm(self, value: SSAValue) -> SSAValue:
        """`value` as its llvm type: a constant as an llvm one, else cast right after
        its definition (so that it serves every loop); one per value."""
        known = _known(value)
        if known is not None:
            return self._constant(known)
        if value not in self.converted:
            ops: list[Operation] = []
            self.converted[value] = to_llvm(value, ops)
            if ops:
                Rewriter.insert_op(ops, _after(value))
        return self.converted[value]

    def outline(self, op: ag.ParallelForOp) -> str:
        """Outline `op` and call the pool in its place; the task's name."""
        if any(isinstance(inner, ag.ParallelForOp) for inner in op.body.walk()):
            raise NotImplementedError("parallelize: nested ag.parallel_for")
        uses = external_uses(op.body)
        _sink_constants(uses, op.body.block)
        noalias = noalias_positions(list(uses), self.f)
        captures = [_capture(v, u, k in noalias) for k, (v, u) in enumerate(uses.items())]
        struct = _layout([f for c in captures for f in c.fields])
        name = self._unique(self.name + OUTLINED_SUFFIX)
        if any(f.noalias for c in captures for f in c.fields):
            functions = [
                _task(name, struct, captures),
                _body(name + BODY_SUFFIX, op, captures, None),
            ]
        else:
            functions = [_body(name, op, captures, struct)]
        self.module.body.block.add_ops(functions)
        self._call(op, name, struct, captures)
        return name

    def _call(
        self,
        op: ag.ParallelForOp,
        task: str,
        struct: llvm.LLVMStructType,
        captures: Sequence[_Capture],
    ) -> None:
        ctx = self._context(struct)
        ops: list[Operation] = []
        if captures:
            context = append(ops, llvm.UndefOp(struct))
            for capture in captures:
                for field in capture.fields:
                    context = insert(context, self._field(capture.value, field), [field.slot], ops)
            ops.append(llvm.StoreOp(context, ctx))
        function = append(ops, llvm.AddressOfOp(task, PTR))
        bounds = [self._llvm(v) for v in (op.lower, op.upper, op.min_trips)]
        align = self._constant(op.align_value)
        max_parts = self._llvm(op.max_parts) if op.max_parts else self._constant(0)
        call = llvm.CallOp(PARALLEL_FOR, function, ctx, *bounds, align, max_parts, return_type=i64)
        ops.append(call)
        assert call.returned is not None
        parts = from_llvm(call.returned, IndexType(), ops) if op.parts.uses else None
        Rewriter.insert_op(ops, InsertPoint.before(op))
        if parts is not None:
            op.parts.replace_all_uses_with(parts)
        Rewriter.erase_op(op)


def _after(value: SSAValue) -> InsertPoint:
    """Right after the definition of `value`."""
    owner = value.owner
    return InsertPoint.at_start(owner) if isinstance(owner, Block) else InsertPoint.after(owner)


def _task(name: str, struct: llvm.LLVMStructType, captures: Sequence[_Capture]) -> llvm.FuncOp:
    """`@name(begin, end, part, ctx)`: loads the context, calls `@name__body` with the
    fields of the captured values."""
    entry = Block(arg_types=[i64, i64, i64, PTR])
    ops: list[Operation] = []
    values = _load_context(entry.args[3], struct, captures, ops)
    ops += [llvm.CallOp(name + BODY_SUFFIX, *entry.args[:3], *values), llvm.ReturnOp()]
    entry.add_ops(ops)
    return _function(name, entry, None)


def _body(
    name: str,
    op: ag.ParallelForOp,
    captures: Sequence[_Capture],
    struct: llvm.LLVMStructType | None,
) -> llvm.FuncOp:
    """`op`'s body as `@name(begin, end, part, ...)`: the fields of the captured values
    are its arguments after `part`, or (with `struct`) loaded from the context struct
    at its `ctx` argument."""
    fields = [f for c in captures for f in c.fields]
    ops: list[Operation] = []
    if struct is None:
        entry = Block(arg_types=[i64, i64, i64, *(f.type for f in fields)])
        values: Sequence[SSAValue] = entry.args[3:]
    else:
        entry = Block(arg_types=[i64, i64, i64, PTR])
        values = _load_context(entry.args[3], struct, captures, ops)
    position = 0
    for capture in captures:
        count = len(capture.fields)
        inside = _rebuild(capture, values[position : position + count], ops)
        position += count
        for user, k in capture.uses:
            user.operands[k] = inside
    block = op.body.block
    for old, new in zip(block.args, entry.args, strict=False):
        if old.uses:
            old.replace_all_uses_with(from_llvm(new, IndexType(), ops))
    entry.add_ops(ops)
    terminator = block.last_op
    assert isinstance(terminator, ag.YieldOp)
    Rewriter.replace_op(terminator, llvm.ReturnOp())
    Rewriter.inline_block(block, InsertPoint.at_end(entry))
    for arg, hint in zip(entry.args, ("begin", "end", "part"), strict=False):
        arg.name_hint = hint
    return _function(name, entry, fields if struct is None else None)


def _sink_constants(uses: Uses, block: Block) -> None:
    """Give `block` its own copy of each constant defined outside it that it uses
    (so that the outlined loops see constant bounds and steps); they are no longer
    captured."""
    for value in list(uses):
        if isinstance(value.owner, arith.ConstantOp | llvm.ConstantOp):
            copy = value.owner.clone()
            block.insert_op_before(copy, block.first_op)  # type: ignore[arg-type]
            for user, k in uses.pop(value):
                user.operands[k] = copy.results[0]


def _known(value: SSAValue) -> int | None:
    """The value of an integer `arith.constant`."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def upper_bound(value: SSAValue) -> int | None:
    """A constant that the index `value` cannot exceed, when one is evident: its value
    when it is a constant, the least bound of the operands of an `arith.minui` /
    `arith.minsi` (iterative: nests of minima may be deep)."""
    bounds: dict[SSAValue, int | None] = {}
    stack = [value]
    while stack:
        current = stack[-1]
        if current in bounds:
            stack.pop()
            continue
        owner = current.owner
        known = _known(current)
        if known is not None or not isinstance(owner, arith.MinUIOp | arith.MinSIOp):
            bounds[current] = known
            stack.pop()
            continue
        pending = [o for o in owner.operands if o not in bounds]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        bounds[current] = _least_bound(owner, [bounds[o] for o in owner.operands])
    return bounds[value]


def _least_bound(owner: arith.MinUIOp | arith.MinSIOp, bounds: list[int | None]) -> int | None:
    """The bound of a minimum from its operands' bounds (an unsigned minimum ignores
    negative ones, which are large unsigned values)."""
    known = [b for b in bounds if b is not None]
    if isinstance(owner, arith.MinUIOp):
        known = [b for b in known if b >= 0]
    return min(known) if known else None


def runs_serially(op: ag.ParallelForOp) -> bool:
    """Whether the pool would run `op` in one part whatever the run-time values."""
    lower, upper = _known(op.lower), upper_bound(op.upper)
    trips = upper - lower if lower is not None and upper is not None else None
    max_parts = _known(op.max_parts) if op.max_parts is not None else None
    return statically_serial(trips, _known(op.min_trips), op.align_value, max_parts)


def _inline_serial(op: ag.ParallelForOp) -> None:
    """`op`'s body in its place, on the whole range as part 0; `parts` is 1."""
    block = op.body.block
    begin, end, part = block.args
    begin.replace_all_uses_with(op.lower)
    end.replace_all_uses_with(op.upper)
    for arg, value in ((part, 0), (op.parts, 1)):
        if arg.uses:
            known = arith.ConstantOp(integer_attr(value, IndexType()))
            Rewriter.insert_op(known, InsertPoint.before(op))
            arg.replace_all_uses_with(known.result)
    terminator = block.last_op
    assert isinstance(terminator, ag.YieldOp)
    Rewriter.erase_op(terminator)
    Rewriter.inline_block(block, InsertPoint.before(op))
    Rewriter.erase_op(op)


def _width(op: ag.ParallelWidthOp) -> None:
    ops: list[Operation] = []
    call = llvm.CallOp(PARALLEL_WIDTH, return_type=i64)
    ops.append(call)
    assert call.returned is not None
    width = from_llvm(call.returned, IndexType(), ops)
    Rewriter.insert_op(ops, InsertPoint.before(op))
    op.width.replace_all_uses_with(width)
    Rewriter.erase_op(op)


def _parallelize(f: func.FuncOp, module: ModuleOp, used: set[str], taken: set[str]) -> None:
    """Lower the parallel ops of `f`; add the pool functions it calls to `used`, the
    functions it outlines to `taken` (the module's symbols)."""
    outliner = _Outliner(f, module, taken)
    for inner in list(f.walk()):
        if isinstance(inner, ag.ParallelForOp) and inner.parent is not None:
            if runs_serially(inner):
                _inline_serial(inner)
                continue
            outliner.outline(inner)
            used.add(PARALLEL_FOR)
        elif isinstance(inner, ag.ParallelWidthOp):
            _width(inner)
            used.add(PARALLEL_WIDTH)


class ParallelizePass(ModulePass):
    """Outline each `ag.parallel_for` and call the thread pool (see the module doc)."""

    name = "parallelize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        used: set[str] = set()
        taken = {
            n.data for o in op.ops if isinstance(n := getattr(o, "sym_name", None), StringAttr)
        }
        for f in list(op.ops):
            if isinstance(f, func.FuncOp) and f.body.blocks:
                _parallelize(f, op, used, taken)
        if PARALLEL_FOR in used:
            declare_external(op, PARALLEL_FOR, PARALLEL_FOR_INPUTS, i64)
        if PARALLEL_WIDTH in used:
            declare_external(op, PARALLEL_WIDTH, [], i64)
