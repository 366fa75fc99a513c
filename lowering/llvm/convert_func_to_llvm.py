"""`convert-func-to-llvm`: `func.func` / `func.call` / `func.return` to the `llvm` dialect.

Accepts `func` ops whose signatures hold scalars (`iN`, `f32`, `f64`, `index`) and ranked
memrefs as arguments, and scalar results. Leaves `llvm.func`, `llvm.call` and
`llvm.return`; values still of unconverted types are bridged with
`builtin.unrealized_conversion_cast`.

The ABI (what `arignote.runtime.cpu` relies on):

- every memref ARGUMENT becomes ONE `!llvm.ptr` to a descriptor struct in the caller's
  memory (`{allocated ptr, aligned ptr, i64 offset, [R x i64] sizes, [R x i64] strides}`,
  rank 0: `{ptr, ptr, i64}`, see `arignote.lowering.llvm.llvm_utils`); the callee loads the
  struct at entry and never writes it back;
- scalar arguments pass by value, `index` as `i64`;
- the result is one scalar (typically an integer status), nothing (`void`), or, for
  several scalars (a kernel holding a reduction loop, `outline-kernels`), a struct of
  them returned by value;
- calls inside the module follow the same convention: the caller stores each descriptor
  into a stack slot allocated in its entry block and passes the slot's address. The slots
  are shared by the function's calls: the k-th memref argument of a descriptor type in
  each call is stored into the function's k-th slot of that type just before the call
  (callees read their descriptors at entry and keep no pointer to them). A glue that
  calls 466 kernels with 1,300 memref arguments has 1,300 stores and a few slots instead
  of 1,300 slots.

Public functions get external linkage; private functions with a body internal linkage.
The `llvm.func` holding the body keeps `arignote.alloc_status` (`KEPT_ATTRIBUTES`), which
`convert-memref-to-llvm` reads: in `convert-to-llvm` a function is converted before its
body.

`noalias` memref arguments: a memref argument carrying the argument attribute
`llvm.noalias` (as in MLIR) promises that the memory it addresses is not accessed through
any other argument while the function runs, if either access writes. The descriptor
pointer cannot say that about the data, so such a function `@f` becomes two:

- `llvm.func internal @f__noalias(<@f's arguments>, ptr noalias %data_i, ...)`: the
  body, which reads each marked argument's aligned data pointer from `%data_i` (put
  into the loaded descriptor) instead of from the descriptor;
- `llvm.func @f(<@f's arguments>)`: loads each marked descriptor's aligned pointer and
  calls `@f__noalias`.

LLVM inlines `@f__noalias` into its only caller and turns the `noalias` arguments into
scoped alias metadata (`arignote.runtime.cpu.llvm_ir_text` re-applies the internal
linkage, which xDSL's translation to LLVM IR drops, so that the inlined copy is then
deleted), so its
loop vectoriser needs no run-time overlap checks between them (and does not give up on
loops with many operands).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from weakref import WeakKeyDictionary, ref

from xdsl.context import Context
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    MemRefType,
    ModuleOp,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

from arignote.lowering.llvm.checked_alloc import (
    ALLOC_STATUS,
    propagate_failure,
    split_at_exits,
    status_function,
)
from arignote.lowering.llvm.llvm_utils import (
    KERNEL_ATTRIBUTE,
    PTR,
    append,
    convert_type,
    descriptor_type,
    extract,
    insert,
    integer_attr,
    replace_op,
    retype_block_argument,
    to_llvm,
)
from arignote.lowering.op_builder import build
from arignote.lowering.rewriting import DispatchingApplier

NOALIAS = "llvm.noalias"
"""The argument attribute marking a memref argument whose data nothing else aliases."""

NOALIAS_SUFFIX = "__noalias"
"""`@f`'s body with `noalias` data pointers is `@f__noalias`."""

_ALIGNED = 1
"""Position of the aligned data pointer in a memref descriptor."""


def argument_type(type_: Attribute) -> Attribute:
    """The llvm type a function argument of `type_` is passed as."""
    if isinstance(type_, MemRefType):
        return PTR
    return convert_type(type_)


def result_type(types: tuple[Attribute, ...], name: str) -> Attribute:
    """The llvm return type of a function with results `types`: void, the one scalar,
    or a struct of the scalars."""
    if any(isinstance(t, MemRefType) for t in types):
        raise NotImplementedError(f"@{name}: only scalar results are supported, got {types}")
    if not types:
        return llvm.LLVMVoidType()
    if len(types) == 1:
        return convert_type(types[0])
    return llvm.LLVMStructType.from_type_list([convert_type(t) for t in types])


def _load_descriptor(type_: MemRefType, data: SSAValue | None = None):
    """Loads the descriptor; with `data`, that pointer replaces its aligned pointer."""

    def materialize(pointer: SSAValue, ops: list[Operation]) -> SSAValue:
        descriptor = append(ops, build(llvm.LoadOp, pointer, descriptor_type(type_)))
        return descriptor if data is None else insert(descriptor, data, [_ALIGNED], ops)

    return materialize


def noalias_arguments(op: func.FuncOp) -> list[int]:
    """The positions of `op`'s memref arguments marked `llvm.noalias`."""
    if op.arg_attrs is None:
        return []
    inputs = op.function_type.inputs.data
    return [
        i
        for i, (t, attrs) in enumerate(zip(inputs, op.arg_attrs.data, strict=True))
        if isinstance(t, MemRefType) and NOALIAS in attrs.data
    ]


def noalias_arg_attrs(count: int, positions: Collection[int]) -> ArrayAttr:
    """The `arg_attrs` of a `func.func` of `count` arguments whose arguments at
    `positions` are `llvm.noalias` (what `noalias_arguments` reads back)."""
    noalias = DictionaryAttr({NOALIAS: UnitAttr()})
    return ArrayAttr([noalias if i in positions else DictionaryAttr({}) for i in range(count)])


def _convert_entry_arguments(rewriter: PatternRewriter, entry: Block, noalias: list[int]) -> None:
    """Retype the entry block's arguments; append one data pointer per `noalias` one."""
    data = {i: rewriter.insert_block_argument(entry, len(entry.args), PTR) for i in noalias}
    for i, arg in enumerate(list(entry.args[: len(entry.args) - len(noalias)])):
        type_ = arg.type
        if isinstance(type_, MemRefType):
            retype_block_argument(rewriter, arg, PTR, _load_descriptor(type_, data.get(i)))
        elif convert_type(type_) != type_:
            retype_block_argument(rewriter, arg, convert_type(type_))


def _noalias_wrapper(
    name: str,
    function_type: func.FunctionType,
    output: Attribute,
    noalias: list[int],
    linkage: str,
) -> llvm.FuncOp:
    """`@name`: loads the aligned pointers of the `noalias` descriptors, calls
    `@name__noalias` with them after its own arguments, returns its result."""
    inputs = [argument_type(t) for t in function_type.inputs]
    entry = Block(arg_types=inputs)
    ops: list[Operation] = []
    data = []
    for i in noalias:
        memref_type = function_type.inputs.data[i]
        assert isinstance(memref_type, MemRefType)
        descriptor = append(ops, build(llvm.LoadOp, entry.args[i], descriptor_type(memref_type)))
        data.append(extract(descriptor, [_ALIGNED], PTR, ops))
    return_type = None if isinstance(output, llvm.LLVMVoidType) else output
    call = build(llvm.CallOp, name + NOALIAS_SUFFIX, *entry.args, *data, return_type=return_type)
    ops += [call, build(llvm.ReturnOp, call.returned)]
    entry.add_ops(ops)
    return llvm.FuncOp(
        name,
        llvm.LLVMFunctionType(inputs, output),
        linkage=llvm.LinkageAttr(linkage),
        body=Region(entry),
    )


class FuncLowering(RewritePattern):
    """`func.func` → `llvm.func` with memref arguments passed as descriptor pointers."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter, /):
        name = op.sym_name.data
        function_type = op.function_type
        inputs = [argument_type(t) for t in function_type.inputs]
        output = result_type(function_type.outputs.data, name)
        noalias = noalias_arguments(op) if op.body.blocks else []
        if op.body.blocks:
            _convert_entry_arguments(rewriter, op.body.blocks[0], noalias)
        private = op.sym_visibility is not None and op.sym_visibility.data == "private"
        linkage = "internal" if private and op.body.blocks else "external"
        body = rewriter.move_region_contents_to_new_regions(op.body)
        if not noalias:
            new_func = llvm.FuncOp(
                name, llvm.LLVMFunctionType(inputs, output), llvm.LinkageAttr(linkage), body=body
            )
            _keep_attributes(op, new_func)
            rewriter.replace(op, new_func, [])
            return
        flags = DictionaryAttr({NOALIAS: UnitAttr()})
        arg_attrs = ArrayAttr([DictionaryAttr({})] * len(inputs) + [flags] * len(noalias))
        inner = llvm.FuncOp(
            name + NOALIAS_SUFFIX,
            llvm.LLVMFunctionType([*inputs, *[PTR] * len(noalias)], output),
            linkage=llvm.LinkageAttr("internal"),
            body=body,
            other_props={"arg_attrs": arg_attrs},
        )
        _keep_attributes(op, inner)
        wrapper = _noalias_wrapper(name, function_type, output, noalias, linkage)
        rewriter.replace(op, [inner, wrapper], [])


KEPT_ATTRIBUTES = (ALLOC_STATUS, KERNEL_ATTRIBUTE)
"""Function attributes that the `llvm.func` holding the body keeps: what the patterns
lowering the body read (`convert-memref-to-llvm` reads `arignote.alloc_status`) and
what the JIT reads (`arignote.kernel`)."""


def _keep_attributes(op: func.FuncOp, body_holder: llvm.FuncOp) -> None:
    for name in KEPT_ATTRIBUTES:
        if name in op.attributes:
            body_holder.attributes[name] = op.attributes[name]


class ReturnLowering(RewritePattern):
    """`func.return` → `llvm.return`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.ReturnOp, rewriter: PatternRewriter, /):
        ops: list[Operation] = []
        values = [to_llvm(v, ops) for v in op.arguments]
        value = values[0] if len(values) == 1 else None
        if len(values) > 1:  # a struct of them (`result_type`)
            struct = llvm.LLVMStructType.from_type_list([v.type for v in values])
            value = append(ops, build(llvm.UndefOp, struct))
            for k, v in enumerate(values):
                value = insert(value, v, [k], ops)
        ops.append(build(llvm.ReturnOp, value))
        replace_op(rewriter, op, ops, None)


def _entry_block(op: Operation) -> Block:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp | llvm.FuncOp):
        parent = parent.parent_op()
    if parent is None or not parent.regions[0].blocks:
        raise PassFailedException(f"{op.name} is not inside a function")
    return parent.regions[0].blocks[0]


_SLOTS: WeakKeyDictionary[Block, dict[Attribute, list[ref[SSAValue]]]] = WeakKeyDictionary()
"""The descriptor slots of each function (by its entry block), per descriptor type;
weak: a slot is in the entry block (its op's parent), so a strong reference would keep
the key, and the whole module, alive for the life of the process."""


def _spill(
    rewriter: PatternRewriter, call: Operation, descriptor: SSAValue, index: int
) -> tuple[SSAValue, Operation]:
    """The function's `index`-th stack slot for descriptors of `descriptor`'s type (made
    in its entry block when it has fewer) and the store of `descriptor` into it."""
    entry = _entry_block(call)
    slots = _SLOTS.setdefault(entry, {}).setdefault(descriptor.type, [])
    made = [slot() for slot in slots[: index + 1]]
    if any(slot is None or slot.owner.parent is not entry for slot in made):
        slots.clear()  # a slot was erased or moved since: make new ones
    while len(slots) <= index:
        slot_ops: list[Operation] = []
        # not a pooled constant: the pool's constants come after what this inserts
        one = append(slot_ops, build(llvm.ConstantOp, integer_attr(1, i64), i64))
        slots.append(ref(append(slot_ops, build(llvm.AllocaOp, one, descriptor.type, 8))))
        rewriter.insert(slot_ops, InsertPoint.at_start(entry))
    slot = slots[index]()
    assert slot is not None  # (in the entry block, which holds it)
    return slot, build(llvm.StoreOp, descriptor, slot)


class CallLowering(RewritePattern):
    """`func.call` → `llvm.call`, memref arguments spilled to the function's entry-block
    stack slots (shared by its calls: `_spill`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.CallOp, rewriter: PatternRewriter, /):
        ops: list[Operation] = []
        args: list[SSAValue] = []
        spilled: Counter[Attribute] = Counter()
        for arg in op.arguments:
            value = to_llvm(arg, ops)
            if isinstance(arg.type, MemRefType):
                index = spilled[value.type]
                spilled[value.type] += 1
                value, store = _spill(rewriter, op, value, index)
                ops.append(store)
            args.append(value)
        output = result_type(tuple(op.result_types), op.callee.string_value())
        return_type = None if isinstance(output, llvm.LLVMVoidType) else output
        call = build(llvm.CallOp, op.callee, *args, return_type=return_type)
        ops.append(call)
        results: SSAValue | list[SSAValue] | None = call.returned
        if len(op.results) > 1:  # a struct of them (`result_type`)
            assert isinstance(output, llvm.LLVMStructType) and call.returned is not None
            results = [extract(call.returned, [k], t, ops) for k, t in enumerate(output.types.data)]
        replace_op(rewriter, op, ops, results)
        if ALLOC_STATUS in op.attributes:  # a kernel's failed allocation (checked_alloc)
            function = status_function(call)
            following = call.next_op
            if function is None or call.returned is None or following is None:
                raise PassFailedException(
                    f"a call of @{op.callee.string_value()} with {ALLOC_STATUS} must return "
                    "a status inside a function with the attribute"
                )
            propagate_failure(rewriter, following, function, call.returned)


FUNC_PATTERNS: tuple[RewritePattern, ...] = (FuncLowering(), ReturnLowering(), CallLowering())
"""The patterns of `convert-func-to-llvm` (stateless)."""


class ConvertFuncToLLVMPass(ModulePass):
    """Rewrite `func` functions, calls and returns into `llvm` ones (see the module ABI)."""

    name = "convert-func-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(DispatchingApplier(FUNC_PATTERNS)).rewrite_module(op)
        split_at_exits(op)
