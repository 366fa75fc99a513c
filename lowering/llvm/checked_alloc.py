"""Checked heap allocation for `convert-memref-to-llvm`: sizes that cannot overflow, and
functions that report a failed `malloc` through their status result.

Byte counts. `memref.alloc` asks `malloc` for `count * element_bytes + padding` bytes,
computed here in unsigned 64-bit arithmetic that saturates at `2**64 - 1` (each product
by `llvm.umul.with.overflow`, `2**64 - 1` when it overflows) instead of wrapping: a size
that does not fit (a `2**32 x 2**32` float64 buffer is `2**67` bytes) asks for `SIZE_MAX`
bytes, which every `malloc` refuses, instead of a wrapped small size that it grants and
the loops then overrun.

Status functions. A function carrying the unit attribute `arignote.alloc_status`
(`ALLOC_STATUS`), whose single result is an integer of at most 64 bits, never runs on
with a null allocation: each `memref.alloc` in it tests `malloc`'s pointer and, when it
is null, branches to the function's out-of-memory exit, which frees every buffer the
function allocated and has not freed yet and returns the status `-bytes` (the requested
byte count negated, at least 1; the result type's minimum when that does not fit it, a
saturated size included). A caller tells success (0, or a positive code of its own) from
a failed allocation by the sign. To know what to free, the function keeps its live
allocations on a doubly linked list: each allocation starts with a 16-byte header
(`next`, `prev`) linking it to a list head in the function's stack frame; its
`memref.dealloc` unlinks it before `free`. So a buffer allocated in such a function must
be freed by it (true of everything `ag-to-loops` emits). The list costs a few loads and
stores per allocation and per free, and may keep LLVM from deleting an allocation it
could otherwise turn into registers (`ag-to-loops` puts small intermediates on the stack,
which costs nothing and cannot fail).

```mlir
// in llvm.func @f(...) -> i64 attributes {arignote.alloc_status}
%p = llvm.call @malloc(%padded) : (i64) -> !llvm.ptr
%a = llvm.ptrtoint %p : !llvm.ptr to i64
%null = llvm.icmp "eq" %a, %c0 : i64
llvm.cond_br %null, ^oom(%bytes : i64), ^ok
^ok:  // link %p after the list head, the data starts 16 bytes in, aligned up
...
^oom(%bytes: i64):  // the last block: free each listed buffer, return -bytes
```

Helpers. In a status function that is not a kernel (the glue, `@f` and `@f__shape`,
which allocate every buffer a function needs: 200 in a 64-layer MLP's training step),
the allocation and the unlinking are calls of two functions defined once per module
(`define_helpers`, internal linkage) instead of code written out at each buffer, which
halves the glue that the lowering builds and LLVM compiles:

```mlir
// bytes = static * a * b and malloc(bytes + 16 + mask), saturating; the allocation linked
// after %head: {allocated, aligned up to mask + 1, bytes}; {null, ?, bytes} when refused
llvm.func internal @arignote_alloc(%head: !llvm.ptr, %static: i64, %a: i64, %b: i64,
                                   %mask: i64) -> !llvm.struct<(ptr, ptr, i64)>
llvm.func internal @arignote_free(%allocated: !llvm.ptr)  // unlinked, then freed
```

A kernel keeps the code written out: its object code is cached and shared by its own
IR (`arignote.runtime.kernelcache`), which must not call the glue's functions. The
runtime counts the helpers as glue (`GLUE_HELPERS`, `arignote.runtime.cpu`).

A call carrying the attribute (`func.call @k(...) {arignote.alloc_status}`, made by
`outline-kernels` for a kernel that allocates) calls a status function: when it returns
a negative status, the caller takes its out-of-memory exit with that status
(`propagate_failure`), so a refused allocation in a kernel is reported as one in `@f`.

Without the attribute (MLIR's own semantics) the pointer is not tested; a saturated size
then gives a null pointer, whose first use faults, instead of a buffer overrun.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from weakref import WeakKeyDictionary

from xdsl.dialects import func, llvm, memref
from xdsl.dialects.builtin import IntegerAttr, IntegerType, UnitAttr, i1, i8, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from arignote.lowering.llvm.llvm_utils import (
    KERNEL_ATTRIBUTE,
    PTR,
    append,
    call,
    constant,
    declare_function,
    enclosing_module,
    extract,
    insert,
    integer_attr,
    lookup_function,
)
from arignote.lowering.op_builder import build

ALLOC_STATUS = "arignote.alloc_status"
"""The function attribute asking for checked allocations reported by status (module doc)."""

HEADER_BYTES = 16
"""The list header (`next`, `prev` pointers) before the data of a tracked allocation."""

EXIT_MARKER = "arignote.alloc_failure_exit"
"""Marks the first op of a status function's out-of-memory exit (its last block)."""

ALLOC_HELPER = "arignote_alloc"
FREE_HELPER = "arignote_free"
GLUE_HELPERS = frozenset({ALLOC_HELPER, FREE_HELPER})
"""The functions `define_helpers` adds to a module: glue, never kernels."""

ALLOC_SIZES = slice(2, 4)
"""Where `@arignote_alloc`'s two sizes (`a`, `b`) are among its arguments."""

_ALLOCATION = llvm.LLVMStructType.from_type_list([PTR, PTR, i64])
"""What `@arignote_alloc` returns: the allocated pointer (null when refused), the
aligned data pointer (undefined when refused) and the byte count asked for."""

_U64_MAX = 2**64 - 1

Index = int | SSAValue
"""An i64 quantity known statically (int) or at run time (SSA value)."""


# --- byte counts that saturate -------------------------------------------------------------


def _i64(value: int, ops: list[Operation]) -> SSAValue:
    """An i64 constant of the unsigned 64-bit `value`."""
    return constant(value - 2**64 if value >= 2**63 else value, i64, ops)


def _predicate(name: str) -> IntegerAttr:
    return integer_attr(llvm.ICmpPredicateFlag(name).to_int(), i64)


def _icmp(name: str, lhs: SSAValue, rhs: SSAValue, ops: list[Operation]) -> SSAValue:
    return append(ops, build(llvm.ICmpOp, lhs, rhs, _predicate(name)))


def _select(cond: SSAValue, x: SSAValue, y: SSAValue, ops: list[Operation]) -> SSAValue:
    return append(ops, build(llvm.SelectOp, cond, x, y))


_UMUL = "llvm.umul.with.overflow.i64"
_UMUL_RESULT = llvm.LLVMStructType.from_type_list([i64, i1])


Constant = Callable[[int, list[Operation]], SSAValue]
"""Makes an i64 constant of an unsigned value: `_i64` (the pool's, in the function being
rewritten) or `_helper_constant` (in a helper's body)."""


def _saturating_mul(
    lhs: Index, rhs: SSAValue, ops: list[Operation], const: Constant = _i64
) -> SSAValue:
    """`lhs * rhs` (unsigned i64), `2**64 - 1` when the product does not fit: LLVM's
    `umul.with.overflow` (the product modulo `2**64` and whether it wrapped). An `i128`
    product clamped was the same value in two more instructions, which fast instruction
    selection does not handle (a 64-layer MLP's glue, 200 allocations: its code
    generation at O0 took 262 ms against 219 ms)."""
    left = const(lhs, ops) if isinstance(lhs, int) else lhs
    pair = append(ops, build(llvm.CallIntrinsicOp, _UMUL, [left, rhs], [_UMUL_RESULT]))
    product = extract(pair, [0], i64, ops)
    over = extract(pair, [1], i1, ops)
    return _select(over, const(_U64_MAX, ops), product, ops)


def saturating_add(value: Index, addend: int, ops: list[Operation]) -> Index:
    """`value + addend` (unsigned i64, `addend >= 0`), `2**64 - 1` when it wraps."""
    if isinstance(value, int):
        return min(value + addend, _U64_MAX)
    return _saturating_sum(value, _i64(addend, ops), ops, _i64)


def _saturating_sum(
    value: SSAValue, addend: SSAValue, ops: list[Operation], const: Constant
) -> SSAValue:
    """`value + addend` (unsigned i64), `2**64 - 1` when it wraps."""
    total = append(ops, build(llvm.AddOp, value, addend))
    wrapped = _icmp("ult", total, value, ops)
    return _select(wrapped, const(_U64_MAX, ops), total, ops)


def byte_count(sizes: Sequence[Index], element_bytes: int, ops: list[Operation]) -> Index:
    """`prod(sizes) * element_bytes` for non-negative sizes, as an unsigned i64 that
    saturates at `2**64 - 1` (an int when every size is static)."""
    static = element_bytes
    dynamic: list[SSAValue] = []
    for size in sizes:
        if isinstance(size, int):
            static *= size
        else:
            dynamic.append(size)
    total: Index = min(static, _U64_MAX)
    if static == 0:
        return 0
    for size in dynamic:
        total = size if total == 1 else _saturating_mul(total, size, ops)
    return total


def as_i64(value: Index, ops: list[Operation]) -> SSAValue:
    """`value` (unsigned) as an i64 value."""
    return _i64(value, ops) if isinstance(value, int) else value


# --- status functions ----------------------------------------------------------------------


def status_function(op: Operation) -> Operation | None:
    """The `func.func` or `llvm.func` around `op` when it carries `ALLOC_STATUS`."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp | llvm.FuncOp):
        parent = parent.parent_op()
    if parent is None or ALLOC_STATUS not in parent.attributes:
        return None
    return parent


def _result_type(function: Operation) -> IntegerType:
    """The integer status type of `function` (NotImplementedError if it has none)."""
    if isinstance(function, func.FuncOp):
        outputs = function.function_type.outputs.data
        result: Attribute | None = outputs[0] if len(outputs) == 1 else None
    else:
        assert isinstance(function, llvm.FuncOp)
        result = function.function_type.output
    if not isinstance(result, IntegerType) or result.width.data > 64:
        name = function.properties.get("sym_name")
        raise NotImplementedError(
            f"{ALLOC_STATUS} on {name}: the function must return one integer of at most "
            f"64 bits, got {result}"
        )
    return result


def _field(pointer: SSAValue, index: int, ops: list[Operation]) -> SSAValue:
    """The address of pointer field `index` of a list node (0: next, 1: prev)."""
    if index == 0:
        return pointer
    return append(ops, build(llvm.GEPOp.from_mixed_indices, pointer, [index], PTR))


def _store(value: SSAValue, address: SSAValue, ops: list[Operation]) -> None:
    ops.append(build(llvm.StoreOp, value, address))


def _load(address: SSAValue, ops: list[Operation]) -> SSAValue:
    return append(ops, build(llvm.LoadOp, address, PTR))


def _new_head(rewriter: PatternRewriter, entry: Block, first_alloc: Operation) -> SSAValue:
    """The list head: a `next, prev` stack slot in the entry block, pointing to itself
    (an empty list), before `first_alloc` when it is in the entry block, else before
    the entry block's terminator (either way before every allocation, and at the same
    place whether the function's arguments were converted first, as `convert-to-llvm`
    does, or after, as the separate passes do). Its constant is its own, not the
    pool's: the pool may not have one before that place."""
    ops: list[Operation] = []
    # two pointers, not a struct: llvmlite gives an alloca of pointers an opaque `ptr`,
    # which stores of pointers accept
    two = append(ops, build(llvm.ConstantOp, integer_attr(2, i64), i64))
    head = append(ops, build(llvm.AllocaOp, two, PTR, 8))
    _store(head, _field(head, 0, ops), ops)
    _store(head, _field(head, 1, ops), ops)
    anchor = first_alloc if first_alloc.parent is entry else entry.last_op
    assert anchor is not None
    rewriter.insert(ops, InsertPoint.before(anchor))
    return head


def _status(bytes_: SSAValue, result: IntegerType, ops: list[Operation]) -> SSAValue:
    """`-max(bytes, 1)` as `result`, or its minimum when that does not fit."""
    width = result.width.data
    zero = _i64(0, ops)
    at_least_one = _select(_icmp("eq", bytes_, zero, ops), _i64(1, ops), bytes_, ops)
    fits = _icmp("ule", at_least_one, _i64(2 ** (width - 1) - 1, ops), ops)
    narrow = at_least_one
    if width < 64:
        narrow = append(ops, build(llvm.TruncOp, at_least_one, result))
    negated = append(ops, build(llvm.SubOp, constant(0, result, ops), narrow))
    return _select(fits, negated, constant(-(2 ** (width - 1)), result, ops), ops)


def _failure_exit(
    rewriter: PatternRewriter, anchor: Operation, function: Operation
) -> tuple[Block, SSAValue]:
    """The out-of-memory exit of `function` (its last block) and its list head, made at
    the first call: `^exit(%bytes)` walks the list freeing each node, then returns the
    status."""
    region = function.regions[0]
    last = region.last_block
    assert last is not None
    first = last.first_op
    if first is not None and EXIT_MARKER in first.attributes:
        return last, first.operands[0]
    result = _result_type(function)
    entry = region.first_block
    assert entry is not None
    head = _new_head(rewriter, entry, anchor)
    declare_function(rewriter, anchor, "free", [PTR])
    exit_block = Block(arg_types=[i64])
    done = _return_block(function, _status_ops(exit_block.args[0], result))
    walk = _free_all(head, done)
    ops: list[Operation] = []
    first_node = _load(head, ops)
    ops[-1].attributes[EXIT_MARKER] = UnitAttr()
    ops.append(build(llvm.BrOp, walk[0], first_node))
    exit_block.add_ops(ops)
    for block in (*walk, done, exit_block):
        region.add_block(block)
    return exit_block, head


def _free_all(head: SSAValue, done: Block) -> tuple[Block, Block]:
    """`^walk(%node)`: `free` each node from `%node` to the list head, then go to `done`."""
    walk, free = Block(arg_types=[PTR]), Block()
    node = walk.args[0]
    ops: list[Operation] = []
    node_address, head_address = (append(ops, build(llvm.PtrToIntOp, v, i64)) for v in (node, head))
    ops.append(
        build(llvm.CondBrOp, _icmp("eq", node_address, head_address, ops), done, [], free, [])
    )
    walk.add_ops(ops)
    ops = []
    following = _load(node, ops)
    call("free", [node], None, ops)
    ops.append(build(llvm.BrOp, walk, following))
    free.add_ops(ops)
    return walk, free


def _status_ops(bytes_: SSAValue, result: IntegerType) -> list[Operation]:
    ops: list[Operation] = []
    _status(bytes_, result, ops)
    return ops


def _return_block(function: Operation, ops: list[Operation]) -> Block:
    """A block of `ops` returning the result of the last: with the function's own return
    op (a `func.func` is converted after its body by `convert-memref-to-llvm` alone, an
    `llvm.func` before it by `convert-to-llvm`)."""
    status = ops[-1].results[0]
    if isinstance(function, func.FuncOp):
        ops.append(func.ReturnOp(status))
    else:
        ops.append(build(llvm.ReturnOp, status))
    block = Block()
    block.add_ops(ops)
    return block


def checked_malloc(
    rewriter: PatternRewriter,
    op: Operation,
    function: Operation,
    bytes_: Index,
    padded: Index,
    ops: list[Operation],
) -> SSAValue:
    """In status function `function`: `malloc(padded)` before `op`, branching to the
    out-of-memory exit with `bytes_` when it returns null; the allocation linked into
    the function's list. Splits `op`'s block: `ops` (emptied) was inserted before the
    branch, and what the caller appends to it next goes into the new block before `op`.
    Returns the allocated pointer (the header; the data starts `HEADER_BYTES` in)."""
    exit_block, head = _failure_exit(rewriter, op, function)
    allocated = call("malloc", [as_i64(padded, ops)], PTR, ops)
    assert allocated is not None
    address = append(ops, build(llvm.PtrToIntOp, allocated, i64))
    null = _icmp("eq", address, _i64(0, ops), ops)
    _exit_when(rewriter, op, null, exit_block, as_i64(bytes_, ops), ops)
    _link(head, allocated, ops)
    return allocated


def _link(head: SSAValue, allocated: SSAValue, ops: list[Operation]) -> None:
    """Link the allocation at `allocated` after the list head `head`."""
    following = _load(head, ops)
    _store(following, _field(allocated, 0, ops), ops)
    _store(head, _field(allocated, 1, ops), ops)
    _store(allocated, _field(following, 1, ops), ops)
    _store(allocated, _field(head, 0, ops), ops)


def _exit_when(
    rewriter: PatternRewriter,
    op: Operation,
    failed: SSAValue,
    exit_block: Block,
    bytes_: SSAValue,
    ops: list[Operation],
) -> None:
    """`ops` (then emptied) before `op`, then a branch to the out-of-memory exit
    `exit_block` with `bytes_` when `failed`, else on to `op`, which starts a new block.

    The new block is made empty and detached: the branch stays in the middle of `op`'s
    block until the pass ends, when `split_at_exits` moves the ops after it into it. A
    split here (`Block.split_before`) would move every op after `op`, and count the
    blocks before its block, at each allocation: quadratic in a glue's 200 allocations
    and kernel calls (0.27 s of a 64-layer MLP's compile)."""
    rewriter.insert(list(ops), InsertPoint.before(op))
    ops.clear()
    branch = build(llvm.CondBrOp, failed, exit_block, [bytes_], Block(), [])
    rewriter.insert(branch, InsertPoint.before(op))


def split_at_exits(module: Operation) -> None:
    """Finish the branches `_exit_when` left in the middle of blocks of `module`'s
    status functions: the ops after each go into its detached successor, which is put
    after its block. Each block's branches are finished last to first, so that each op
    moves once. The patterns that make such branches (`convert-memref-to-llvm`'s
    allocations, `convert-func-to-llvm`'s calls of status kernels) leave them for
    this, which the passes applying them call at their end."""
    for function in module.regions[0].block.ops:
        if ALLOC_STATUS not in function.attributes:
            continue
        for op in function.walk():
            for region in op.regions:
                for block in list(region.blocks):
                    _split_block(region, block)


def _split_block(region: Region, block: Block) -> None:
    pending = [
        op
        for op in block.ops
        if isinstance(op, llvm.CondBrOp)
        and op.next_op is not None
        and op.successors[1].parent is None
    ]
    for branch in reversed(pending):
        rest = branch.successors[1]
        following = branch.next_op
        while following is not None:
            moved, following = following, following.next_op
            block.detach_op(moved)
            rest.add_op(moved)
        region.insert_block_after(rest, block)


def propagate_failure(
    rewriter: PatternRewriter, op: Operation, function: Operation, status: SSAValue
) -> None:
    """In status function `function`, before `op`: when `status` (the `i64` result of a
    call of a status function, a kernel of `outline-kernels`) is negative, a buffer the
    callee asked for was refused: branch to the out-of-memory exit with `-status` bytes,
    which frees this function's buffers and returns the same status. Splits `op`'s
    block."""
    exit_block, _ = _failure_exit(rewriter, op, function)
    ops: list[Operation] = []
    zero = _i64(0, ops)
    failed = _icmp("slt", status, zero, ops)
    _exit_when(rewriter, op, failed, exit_block, append(ops, build(llvm.SubOp, zero, status)), ops)


def data_start(allocated: SSAValue, tracked: bool, ops: list[Operation]) -> SSAValue:
    """Where the data of an allocation may start: past the header when `tracked`."""
    if not tracked:
        return allocated
    gep = build(llvm.GEPOp.from_mixed_indices, allocated, [HEADER_BYTES], i8)
    return append(ops, gep)


def align_up(
    start: SSAValue, mask: Index, ops: list[Operation], const: Constant = _i64
) -> SSAValue:
    """`start` rounded up to a multiple of `mask + 1` (a power of two), as a pointer."""
    address = append(ops, build(llvm.PtrToIntOp, start, i64))
    negated = append(ops, build(llvm.SubOp, const(0, ops), address))
    padding = append(
        ops, build(llvm.AndOp, negated, const(mask, ops) if isinstance(mask, int) else mask)
    )
    return append(ops, build(llvm.GEPOp.from_mixed_indices, start, [padding], i8))


def untrack(allocated: SSAValue, ops: list[Operation]) -> None:
    """Unlink the allocation at `allocated` from its status function's list."""
    following = _load(_field(allocated, 0, ops), ops)
    previous = _load(_field(allocated, 1, ops), ops)
    _store(following, _field(previous, 0, ops), ops)
    _store(previous, _field(following, 1, ops), ops)


# --- the glue's helpers --------------------------------------------------------------------


HELPER_MIN_ALLOCATIONS = 16
"""The `memref.alloc`s from which the glue calls the helpers. A smaller glue (the
benchmarks' logistic regression: 4 in `@f__shape`, 5 in `@f`) is compiled at O3 with its
kernels (below `arignote.runtime.cpu.SPLIT_GLUE_INSTRUCTIONS`), where LLVM deletes a
buffer that does not escape with its `malloc`, its `free` and its list links, which it
does not once they are a helper's call (then inlined)."""

_HELPERS_CHOSEN: WeakKeyDictionary[Operation, bool] = WeakKeyDictionary()


def uses_helpers(function: Operation) -> bool:
    """Whether status function `function` calls `define_helpers`' functions (the glue,
    with at least `HELPER_MIN_ALLOCATIONS`) instead of having the code written out (a
    kernel, a small glue). Decided at the first call for `function`, before any of its
    allocations is converted."""
    chosen = _HELPERS_CHOSEN.get(function)
    if chosen is None:
        chosen = (
            KERNEL_ATTRIBUTE not in function.attributes
            and _allocations(function) >= HELPER_MIN_ALLOCATIONS
        )
        _HELPERS_CHOSEN[function] = chosen
    return chosen


def _allocations(function: Operation) -> int:
    return sum(1 for op in function.walk() if isinstance(op, memref.AllocOp))


def _helper_constant(value: int, ops: list[Operation]) -> SSAValue:
    """An i64 constant of the unsigned `value` in a helper's body (not the pool's: that
    is the caller's)."""
    signed = value - 2**64 if value >= 2**63 else value
    return append(ops, build(llvm.ConstantOp, integer_attr(signed, i64), i64))


def _alloc_body() -> Region:
    """`@arignote_alloc(head, static, a, b, mask)`: see the module doc."""
    entry, linked, refused = Block(arg_types=[PTR, i64, i64, i64, i64]), Block(), Block()
    head, static, a, b, mask = entry.args
    ops: list[Operation] = []
    product = _saturating_mul(static, a, ops, _helper_constant)
    bytes_ = _saturating_mul(product, b, ops, _helper_constant)
    addend = append(ops, build(llvm.AddOp, mask, _helper_constant(HEADER_BYTES, ops)))
    padded = _saturating_sum(bytes_, addend, ops, _helper_constant)
    allocated = call("malloc", [padded], PTR, ops)
    assert allocated is not None
    address = append(ops, build(llvm.PtrToIntOp, allocated, i64))
    null = _icmp("eq", address, _helper_constant(0, ops), ops)
    ops.append(build(llvm.CondBrOp, null, refused, [], linked, []))
    entry.add_ops(ops)
    undefined = build(llvm.UndefOp, _ALLOCATION)
    ops = [undefined]
    result = insert(undefined.results[0], allocated, [0], ops)
    result = insert(result, bytes_, [2], ops)
    ops.append(build(llvm.ReturnOp, result))
    refused.add_ops(ops)
    ops = []
    _link(head, allocated, ops)
    aligned = align_up(data_start(allocated, True, ops), mask, ops, _helper_constant)
    undefined = build(llvm.UndefOp, _ALLOCATION)
    ops.append(undefined)
    result = insert(undefined.results[0], allocated, [0], ops)
    result = insert(result, aligned, [1], ops)
    result = insert(result, bytes_, [2], ops)
    ops.append(build(llvm.ReturnOp, result))
    linked.add_ops(ops)
    return Region([entry, refused, linked])


def _free_body() -> Region:
    """`@arignote_free(allocated)`: unlinked from its list, then freed."""
    entry = Block(arg_types=[PTR])
    ops: list[Operation] = []
    untrack(entry.args[0], ops)
    call("free", [entry.args[0]], None, ops)
    ops.append(build(llvm.ReturnOp, None))
    entry.add_ops(ops)
    return Region(entry)


def define_helpers(rewriter: PatternRewriter, anchor: Operation) -> None:
    """Define `@arignote_alloc` and `@arignote_free` (internal) in `anchor`'s module
    unless it has them, and declare `malloc` and `free`, which they call."""
    declare_function(rewriter, anchor, "malloc", [i64], PTR)
    declare_function(rewriter, anchor, "free", [PTR])
    module = enclosing_module(anchor)
    if lookup_function(module, ALLOC_HELPER) is not None:
        return
    for name, inputs, output, body in (
        (ALLOC_HELPER, [PTR, i64, i64, i64, i64], _ALLOCATION, _alloc_body()),
        (FREE_HELPER, [PTR], llvm.LLVMVoidType(), _free_body()),
    ):
        function_type = llvm.LLVMFunctionType(inputs, output)
        helper = llvm.FuncOp(name, function_type, llvm.LinkageAttr("internal"), body=body)
        rewriter.insert(helper, InsertPoint.at_end(module.body.block))


def helper_malloc(
    rewriter: PatternRewriter,
    op: Operation,
    function: Operation,
    sizes: Sequence[Index],
    element_bytes: int,
    alignment: int,
    ops: list[Operation],
) -> tuple[SSAValue, SSAValue]:
    """`checked_malloc` of `prod(sizes) * element_bytes` bytes by `@arignote_alloc` in the
    glue's status function `function`, which computes the byte count from the static
    part and two sizes (a third and further dynamic sizes are multiplied in here first):
    the allocated and the aligned pointers (the header and the data). Splits `op`'s
    block as `checked_malloc` does."""
    define_helpers(rewriter, op)
    exit_block, head = _failure_exit(rewriter, op, function)
    static = element_bytes
    dynamic: list[SSAValue] = []
    for size in sizes:
        if isinstance(size, int):
            static = min(static * size, _U64_MAX)
        else:
            dynamic.append(size)
    factors: list[SSAValue] = dynamic[:2]
    for size in dynamic[2:]:
        factors[1] = _saturating_mul(factors[1], size, ops)
    while len(factors) < 2:
        factors.append(_i64(1, ops))
    mask = _i64(alignment - 1, ops)
    result = call(ALLOC_HELPER, [head, _i64(static, ops), *factors, mask], _ALLOCATION, ops)
    assert result is not None
    allocated = extract(result, [0], PTR, ops)
    address = append(ops, build(llvm.PtrToIntOp, allocated, i64))
    null = _icmp("eq", address, _i64(0, ops), ops)
    bytes_ = extract(result, [2], i64, ops)
    _exit_when(rewriter, op, null, exit_block, bytes_, ops)
    return allocated, extract(result, [1], PTR, ops)
