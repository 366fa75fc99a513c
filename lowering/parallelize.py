"""`parallelize`: `ag.parallel_for` / `ag.parallel_width` onto the native thread pool.

Runs after `ag-to-loops` (which emits the parallel loops only when asked to, see
`arignote.lowering.parallel_loops`) and before the LLVM lowering. A module without
them is left unchanged. Each `ag.parallel_for` in `@f` becomes:

* `func.func private @f__par<k>(%begin: index, %end: index, %part: index, <captured>)`:
  its body, outlined; `<captured>` are the values defined outside the loop that the
  body uses (memrefs, scalars, pointers), in order of first use. A captured memref that
  is `@f`'s `llvm.noalias` argument or an `memref.alloc` of `@f`, and that no other
  captured memref derives from (through casts, subviews, selects), stays `llvm.noalias`;
* `func.func private @f__par<k>__task(%begin: index, %end: index, %part: index,
  %ctx: !llvm.ptr)`: reads the captured values from the 8-byte slots of `ctx` (a
  memref as a pointer to its descriptor) and calls `@f__par<k>`; the pool's task ABI
  `void (i64, i64, i64, ptr)` once lowered;
* at the loop's place: the slots filled on the stack (allocas in `@f`'s entry block)
  and `llvm.call @arignote_parallel_for(@f__par<k>__task, ctx, lower, upper,
  min_trips, align, max_parts)`, whose `i64` result is the op's `parts`.

`ag.parallel_width` becomes `llvm.call @arignote_parallel_width()`. Both functions
are the runtime's thread pool (`arignote.runtime.threadpool`).

```mlir
// before                                   // after
%p = ag.parallel_for %c0 to %n              %fn = llvm.mlir.addressof @f__par0__task
     min_trips %m align 64 {                %p = llvm.call @arignote_parallel_for(%fn,
^bb0(%b: index, %e: index, %k: index):            %ctx, %lo, %hi, %mt, %al, %mp)
  scf.for %i = %b to %e step %c1 {...}      ...
  ag.yield                                  func.func private @f__par0(%b: index,
}                                               %e: index, %k: index, %out: memref<?xf32>
                                                {llvm.noalias}, ...) { scf.for ... }
```
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.context import Context
from xdsl.dialects import arith, func, llvm, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    UnitAttr,
    UnrealizedConversionCastOp,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable

from arignote.dialects import ag
from arignote.lowering.convert_func_to_llvm import NOALIAS, noalias_arguments
from arignote.lowering.llvm_utils import PTR, constant, descriptor_type, from_llvm, to_llvm

PARALLEL_FOR = "arignote_parallel_for"
PARALLEL_WIDTH = "arignote_parallel_width"
OUTLINED_SUFFIX = "__par"
TASK_SUFFIX = "__task"


def _slot_type(t: Attribute) -> Attribute:
    """What one context slot holds for a captured value of type `t`."""
    if isinstance(t, MemRefType):
        return PTR
    if isinstance(t, IndexType):
        return i64
    if isinstance(t, IntegerType | Float32Type | Float64Type | llvm.LLVMPointerType):
        if isinstance(t, IntegerType) and t.width.data > 64:
            raise NotImplementedError(f"parallelize: cannot capture a value of type {t}")
        return t
    raise NotImplementedError(f"parallelize: cannot capture a value of type {t}")


def captured_values(region: Region) -> list[SSAValue]:
    """The values defined outside `region` that its ops use, in order of first use."""
    seen: dict[SSAValue, None] = {}
    for op in region.walk():
        for operand in op.operands:
            if operand not in seen and not _defined_in(operand, region):
                seen[operand] = None
    return list(seen)


def _defined_in(value: SSAValue, region: Region) -> bool:
    owner = value.owner
    block = owner if isinstance(owner, Block) else owner.parent_block()
    while block is not None:
        if block.parent_region() is region:
            return True
        parent = block.parent_op()
        block = parent.parent_block() if parent is not None else None
    return False


_VIEWS = (
    memref.CastOp,
    memref.SubviewOp,
    memref.ReinterpretCastOp,
    arith.SelectOp,
    UnrealizedConversionCastOp,
)
"""Ops whose memref result addresses the memory of a memref operand."""


def _roots(value: SSAValue) -> set[SSAValue]:
    """The memrefs `value` is a view of (itself when it is not a view)."""
    owner = value.owner
    if isinstance(owner, _VIEWS):
        sources = [o for o in owner.operands if isinstance(o.type, MemRefType)]
        if sources:
            return set().union(*(_roots(o) for o in sources))
    return {value}


def _fresh(value: SSAValue, f: func.FuncOp) -> bool:
    """`value` is a `noalias` argument of `f` or a `memref.alloc`."""
    if isinstance(value, BlockArgument):
        return value.block is f.body.blocks[0] and value.index in noalias_arguments(f)
    return isinstance(value.owner, memref.AllocOp)


def noalias_positions(captured: Sequence[SSAValue], f: func.FuncOp) -> set[int]:
    """The captured memrefs that may be `noalias` in the outlined function."""
    memrefs = [(k, v) for k, v in enumerate(captured) if isinstance(v.type, MemRefType)]
    roots = {k: _roots(v) for k, v in memrefs}
    result = set()
    for k, v in memrefs:
        others = set().union(*(r for j, r in roots.items() if j != k))
        if roots[k] == {v} and _fresh(v, f) and v not in others:
            result.add(k)
    return result


class _Outliner:
    """Outlines the parallel loops of one function `f` (see the module doc)."""

    def __init__(self, f: func.FuncOp, module: ModuleOp):
        self.f, self.module = f, module
        self.name = f.sym_name.data
        self.entry = f.body.blocks[0]
        self.count = 0

    def _unique(self, base: str) -> str:
        while SymbolTable.lookup_symbol(self.module, f"{base}{self.count}") is not None:
            self.count += 1
        name = f"{base}{self.count}"
        self.count += 1
        return name

    def outline(self, op: ag.ParallelForOp) -> None:
        if any(isinstance(inner, ag.ParallelForOp) for inner in op.body.walk()):
            raise NotImplementedError("parallelize: nested ag.parallel_for")
        _sink_constants(op.body)
        captured = captured_values(op.body)
        slots = [_slot_type(v.type) for v in captured]
        body_name = self._unique(self.name + OUTLINED_SUFFIX)
        body = self._body_function(op, body_name, captured)
        task = self._task_function(body, body_name + TASK_SUFFIX, captured, slots)
        self.module.body.block.add_ops([body, task])
        self._call(op, task.sym_name.data, captured)

    def _body_function(
        self, op: ag.ParallelForOp, name: str, captured: Sequence[SSAValue]
    ) -> func.FuncOp:
        block = op.body.block
        op.body.detach_block(block)
        for value in captured:
            arg = block.insert_arg(value.type, len(block.args))
            value.replace_uses_with_if(arg, lambda use: _defined_in_block(use.operation, block))
        terminator = block.last_op
        assert isinstance(terminator, ag.YieldOp)
        Rewriter.replace_op(terminator, func.ReturnOp())
        types = [a.type for a in block.args]
        noalias = {3 + k for k in noalias_positions(captured, self.f)}
        attrs = [
            DictionaryAttr({NOALIAS: UnitAttr()} if k in noalias else {}) for k in range(len(types))
        ]
        return func.FuncOp(
            name,
            (types, []),
            Region(block),
            visibility="private",
            arg_attrs=ArrayAttr(attrs),
        )

    def _task_function(
        self,
        body: func.FuncOp,
        name: str,
        captured: Sequence[SSAValue],
        slots: Sequence[Attribute],
    ) -> func.FuncOp:
        index = IndexType()
        block = Block(arg_types=[index, index, index, PTR])
        ctx = block.args[3]
        ops: list[Operation] = []
        args: list[SSAValue] = list(block.args[:3])
        for k, (value, slot) in enumerate(zip(captured, slots, strict=True)):
            pointer = _append(ops, llvm.GEPOp(ctx, [k], PTR))
            loaded = _append(ops, llvm.LoadOp(pointer, slot))
            t = value.type
            if isinstance(t, MemRefType):
                loaded = _append(ops, llvm.LoadOp(loaded, descriptor_type(t)))
            args.append(from_llvm(loaded, t, ops))
        ops += [func.CallOp(body.sym_name.data, args, []), func.ReturnOp()]
        block.add_ops(ops)
        return func.FuncOp(name, ([index, index, index, PTR], []), Region(block), "private")

    def _call(
        self,
        op: ag.ParallelForOp,
        task: str,
        captured: Sequence[SSAValue],
    ) -> None:
        entry: list[Operation] = []
        ctx = _append(entry, llvm.AllocaOp(constant(max(1, len(captured)), i64, entry), PTR, 8))
        ops: list[Operation] = []
        for k, value in enumerate(captured):
            stored = to_llvm(value, ops)
            if isinstance(value.type, MemRefType):
                place = _append(entry, llvm.AllocaOp(constant(1, i64, entry), stored.type, 8))
                ops.append(llvm.StoreOp(stored, place))
                stored = place
            ops.append(llvm.StoreOp(stored, _append(ops, llvm.GEPOp(ctx, [k], PTR))))
        function = _append(ops, llvm.AddressOfOp(task, PTR))
        bounds = [to_llvm(v, ops) for v in (op.lower, op.upper, op.min_trips)]
        align = constant(op.align_value, i64, ops)
        max_parts = to_llvm(op.max_parts, ops) if op.max_parts else constant(0, i64, ops)
        call = llvm.CallOp(PARALLEL_FOR, function, ctx, *bounds, align, max_parts, return_type=i64)
        ops.append(call)
        assert call.returned is not None
        parts = from_llvm(call.returned, IndexType(), ops)
        Rewriter.insert_op(entry, InsertPoint.at_start(self.entry))
        Rewriter.insert_op(ops, InsertPoint.before(op))
        op.parts.replace_all_uses_with(parts)
        Rewriter.erase_op(op)


def _sink_constants(region: Region) -> None:
    """Give `region` its own copy of each constant defined outside it that it uses
    (so that the outlined loops see constant bounds and steps)."""
    block = region.block
    for value in captured_values(region):
        if isinstance(value.owner, arith.ConstantOp | llvm.ConstantOp):
            copy = value.owner.clone()
            block.insert_op_before(copy, block.first_op)  # type: ignore[arg-type]
            value.replace_uses_with_if(
                copy.results[0], lambda use: _defined_in_block(use.operation, block)
            )


def _defined_in_block(op: Operation, block: Block) -> bool:
    current: Operation | None = op
    while current is not None:
        if current.parent_block() is block:
            return True
        current = current.parent_op()
    return False


def _append(ops: list[Operation], op: Operation) -> SSAValue:
    ops.append(op)
    return op.results[0]


def _width(op: ag.ParallelWidthOp) -> None:
    ops: list[Operation] = []
    call = llvm.CallOp(PARALLEL_WIDTH, return_type=i64)
    ops.append(call)
    assert call.returned is not None
    width = from_llvm(call.returned, IndexType(), ops)
    Rewriter.insert_op(ops, InsertPoint.before(op))
    op.width.replace_all_uses_with(width)
    Rewriter.erase_op(op)


def _declare(module: ModuleOp, name: str, inputs: Sequence[Attribute]) -> None:
    if SymbolTable.lookup_symbol(module, name) is not None:
        return
    function_type = llvm.LLVMFunctionType(inputs, i64)
    decl = llvm.FuncOp(name, function_type, linkage=llvm.LinkageAttr("external"))
    module.body.block.insert_op_before(decl, module.body.block.first_op)  # type: ignore[arg-type]


class ParallelizePass(ModulePass):
    """Outline each `ag.parallel_for` and call the thread pool (see the module doc)."""

    name = "parallelize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        used = set()
        for f in list(op.ops):
            if not isinstance(f, func.FuncOp) or not f.body.blocks:
                continue
            outliner = _Outliner(f, op)
            for inner in list(f.walk()):
                if isinstance(inner, ag.ParallelForOp) and inner.parent is not None:
                    outliner.outline(inner)
                    used.add(PARALLEL_FOR)
                elif isinstance(inner, ag.ParallelWidthOp):
                    _width(inner)
                    used.add(PARALLEL_WIDTH)
        if PARALLEL_FOR in used:
            _declare(op, PARALLEL_FOR, [PTR, PTR, *[i64] * 5])
        if PARALLEL_WIDTH in used:
            _declare(op, PARALLEL_WIDTH, [])
