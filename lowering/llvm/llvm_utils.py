"""Helpers shared by the `convert-*-to-llvm` passes.

Type conversion (`index` becomes `i64`, a memref becomes MLIR's descriptor struct),
`builtin.unrealized_conversion_cast` materialisation at the seams between converted and
unconverted IR, small llvm-op builders that append to an op list, and the declaration of
external functions (libm, `malloc`, `free`) once per module.

Memref descriptor, exactly MLIR's layout:

- rank R >= 1: `!llvm.struct<(ptr, ptr, i64, array<R x i64>, array<R x i64>)>` holding the
  allocated pointer (what `free` takes), the aligned pointer (what loads and stores use),
  the offset, the sizes and the strides, all counted in elements;
- rank 0: `!llvm.struct<(ptr, ptr, i64)>`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache, lru_cache
from weakref import WeakKeyDictionary, ref

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    UNKNOWN_LOC,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnrealizedConversionCastOp,
    i64,
)
from xdsl.dialects.utils import FastMathAttrBase
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import PassFailedException

from arignote.lowering.op_builder import build

PTR = llvm.LLVMPointerType()
"""The opaque pointer type every pointer lowers to."""

ALLOC_ALIGNMENT = 64
"""Byte alignment of the aligned pointer of every `memref.alloc` without `alignment`."""


# --- types --------------------------------------------------------------------------------


def descriptor_type(memref_type: MemRefType) -> llvm.LLVMStructType:
    """The descriptor struct of a ranked memref type."""
    return _descriptor_type(memref_type.get_num_dims())


@cache
def _descriptor_type(rank: int) -> llvm.LLVMStructType:
    # attributes are immutable: one per rank for the process (building and verifying
    # the struct type costs more than the op that uses it)
    if rank == 0:
        return llvm.LLVMStructType.from_type_list([PTR, PTR, i64])
    array = llvm.LLVMArrayType(rank, i64)
    return llvm.LLVMStructType.from_type_list([PTR, PTR, i64, array, array])


def convert_type(type_: Attribute) -> Attribute:
    """The llvm-dialect type of a value of `type_`: `index` → `i64`, memref → descriptor."""
    if isinstance(type_, IndexType):
        return i64
    if isinstance(type_, MemRefType):
        return descriptor_type(type_)
    return type_


def element_byte_size(type_: Attribute) -> int:
    """Bytes one element of `type_` occupies in memory (`i1` takes a byte, as in numpy)."""
    if isinstance(type_, IntegerType):
        return max(1, (type_.width.data + 7) // 8)
    if isinstance(type_, IndexType):
        return 8
    sizes = {Float16Type: 2, Float32Type: 4, Float64Type: 8}
    if type(type_) in sizes:
        return sizes[type(type_)]
    raise NotImplementedError(f"no memory size known for element type {type_}")


# --- casts at the seams -------------------------------------------------------------------


def to_llvm(value: SSAValue, ops: list[Operation]) -> SSAValue:
    """`value` as its converted type, appending a cast to `ops` when the type changes."""
    target = convert_type(value.type)
    if target == value.type:
        return value
    owner = value.owner
    if isinstance(owner, UnrealizedConversionCastOp) and owner.inputs[0].type == target:
        return owner.inputs[0]  # undo a cast back from an already converted value
    return _cast(value, target, ops)


def to_llvm_all(values: Sequence[SSAValue], ops: list[Operation]) -> list[SSAValue]:
    """`to_llvm` over a sequence."""
    return [to_llvm(value, ops) for value in values]


def from_llvm(value: SSAValue, original_type: Attribute, ops: list[Operation]) -> SSAValue:
    """`value` cast back to `original_type` for users not yet converted."""
    if value.type == original_type:
        return value
    return _cast(value, original_type, ops)


def _cast(value: SSAValue, type_: Attribute, ops: list[Operation]) -> SSAValue:
    """`UnrealizedConversionCastOp.cast_one(value, type_)`, without the generic builder."""
    cast = UnrealizedConversionCastOp.create(
        operands=(value,), result_types=(type_,), location=UNKNOWN_LOC
    )
    ops.append(cast)
    result = cast.results[0]
    result.name_hint = value.name_hint
    return result


def replace_op(
    rewriter: PatternRewriter,
    op: Operation,
    ops: list[Operation],
    result: SSAValue | Sequence[SSAValue] | None,
) -> None:
    """Replace `op` by `ops`, its results by `result` (one value, or one per result),
    each cast back (unless `users_converted`)."""
    new = [] if result is None else [result] if isinstance(result, SSAValue) else list(result)
    results = [  # (`strict`: one value per result)
        value if users_converted(old) else from_llvm(value, old.type, ops)
        for old, value in zip(op.results, new, strict=True)
    ]
    if _listened(rewriter):
        rewriter.replace(op, ops, results)  # pyright: ignore[reportArgumentType]
    else:
        _replace_unobserved(rewriter, op, ops, results)


def _listened(rewriter: PatternRewriter) -> bool:
    """Whether something (a `PatternRewriteWalker`'s worklist) listens to `rewriter`."""
    return bool(
        rewriter.operation_insertion_handler
        or rewriter.operation_removal_handler
        or rewriter.operation_modification_handler
        or rewriter.operation_replacement_handler
    )


def _replace_unobserved(
    rewriter: PatternRewriter, op: Operation, ops: list[Operation], results: list[SSAValue]
) -> None:
    """`rewriter.replace(op, ops, results)` (the same IR, name hints included) for a
    rewriter nothing listens to (`apply_once`'s), without the notifications."""
    block = op.parent
    assert block is not None
    if ops:
        block.insert_ops_before(ops, op)
    for old, new in zip(op.results, results, strict=True):
        old.replace_all_uses_with(new)
        if not new.name_hint:
            new.name_hint = old.name_hint
    if len(results) == 1 and (name_hint := results[0].name_hint) is not None:
        for new_op in ops:
            for value in new_op.results:
                if not value.name_hint:
                    value.name_hint = name_hint
    block.erase_op(op)
    rewriter.has_done_action = True


class _ConversionState(threading.local):
    """What the conversion running in this thread set up (`converting`, `constant_pool`):
    per thread, so that two threads lowering at once (two `arignote.function` calls)
    never see each other's."""

    converted_classes: Callable[[type[Operation]], bool] | None = None
    pool: ConstantPool | None = None


_state = _ConversionState()


def users_converted(value: SSAValue) -> bool:
    """Whether the `index` value `value` can be replaced by its `i64` counterpart
    without a cast back for its users: within `converting(...)`, when the pass
    converts each of them (they all read their `index` operands through `to_llvm`,
    which takes an `i64` value as it is). Never for memrefs: the memref patterns read
    their operands' memref types."""
    will_convert = _state.converted_classes
    return (
        will_convert is not None
        and isinstance(value.type, IndexType)
        and all(will_convert(type(use.operation)) for use in value.uses)
    )


@contextmanager
def converting(will_convert: Callable[[type[Operation]], bool]) -> Iterator[None]:
    """Within the block, `users_converted` trusts `will_convert(cls)`: that the pass
    running converts every op of class `cls` it meets (or fails)."""
    previous, _state.converted_classes = _state.converted_classes, will_convert
    try:
        yield
    finally:
        _state.converted_classes = previous


def retype_block_argument(
    rewriter: PatternRewriter,
    arg: BlockArgument,
    new_type: Attribute,
    materialize: Callable[[SSAValue, list[Operation]], SSAValue] | None = None,
) -> BlockArgument:
    """Give block argument `arg` the type `new_type`; its users get a cast back.

    `materialize` may turn the new argument into a value of the converted type first
    (e.g. load a descriptor through a pointer argument). Returns the new argument.
    """
    block = arg.block
    new_arg = rewriter.insert_block_argument(block, arg.index, new_type)
    if not arg.uses:  # no users: no cast, which reconcile-unrealized-casts would keep
        rewriter.erase_block_argument(arg)
        return new_arg
    if materialize is None and users_converted(arg):
        rewriter.replace_all_uses_with(arg, new_arg)
        rewriter.erase_block_argument(arg)
        return new_arg
    ops: list[Operation] = []
    value: SSAValue = new_arg if materialize is None else materialize(new_arg, ops)
    value = from_llvm(value, arg.type, ops)
    if ops:
        rewriter.insert(ops, InsertPoint.at_start(block))
    rewriter.replace_all_uses_with(arg, value)
    rewriter.erase_block_argument(arg)
    return new_arg


def legalize_block_arguments(rewriter: PatternRewriter, block: Block) -> None:
    """Convert the types of `block`'s arguments (`index` → `i64`, memref → descriptor)."""
    for arg in list(block.args):
        target = convert_type(arg.type)
        if target != arg.type:
            retype_block_argument(rewriter, arg, target)


# --- op builders --------------------------------------------------------------------------


def append(ops: list[Operation], op: Operation) -> SSAValue:
    """Append `op` to `ops`; return its only result."""
    ops.append(op)
    return op.results[0]


def constant(value: int, type_: Attribute, ops: list[Operation]) -> SSAValue:
    """An `llvm.mlir.constant` integer (see `llvm_constant`)."""
    return llvm_constant(integer_attr(value, type_), type_, ops)


def llvm_constant(value: Attribute, type_: Attribute, ops: list[Operation]) -> SSAValue:
    """`llvm.mlir.constant(value) : type_`, appended to `ops`; or, while a
    `ConstantPool` is active (see `constant_pool`) and the op being rewritten is in a
    function, the pool's constant of that value in the function."""
    pool = _state.pool
    if pool is not None and pool.entry is not None:
        return pool.value(value, type_)
    return append(ops, build(llvm.ConstantOp, value, type_))


class ConstantPool:
    """One `llvm.mlir.constant` per value and type in each function, at the start of its
    entry block (which dominates every use in the function), in the order they are
    first asked for.

    LLVM IR has no constant instructions: the translation turns each constant op into
    an immediate of its users, so sharing them changes nothing in the LLVM IR, only the
    number of ops the lowering makes, walks and translates. `entry` is the entry block
    of the function of the op being rewritten (None outside functions), set by the
    driver before each rewrite. A pattern that inserts ops at the start of an entry
    block itself must not take their operands from the pool.
    """

    def __init__(self) -> None:
        self.entry: Block | None = None
        self._values: dict[tuple[Block, Attribute, Hashable], SSAValue] = {}
        self._last: dict[Block, Operation] = {}
        """The last constant made in each entry block: the next goes after it."""

    def value(self, value: Attribute, type_: Attribute) -> SSAValue:
        """The pool's constant `value` of `type_` in the function of `entry`."""
        assert self.entry is not None
        # floats by their bits: 0.0 == -0.0, and NaN != NaN
        bits = value.value.data.hex() if isinstance(value, FloatAttr) else value
        key = (self.entry, type_, bits)
        result = self._values.get(key)
        if result is None or result.owner.parent is not self.entry:  # pyright: ignore
            op = build(llvm.ConstantOp, value, type_)
            last = self._last.get(self.entry)
            if last is not None and last.parent is self.entry:
                self.entry.insert_op_after(op, last)
            elif (first := self.entry.first_op) is not None:
                self.entry.insert_op_before(op, first)
            else:
                self.entry.add_op(op)
            self._last[self.entry] = op
            result = self._values[key] = op.results[0]
        return result


@contextmanager
def constant_pool() -> Iterator[ConstantPool]:
    """Make `llvm_constant` (and `constant`) take their constants from a new
    `ConstantPool` until the block ends (in this thread)."""
    pool = ConstantPool()
    previous, _state.pool = _state.pool, pool
    try:
        yield pool
    finally:
        _state.pool = previous


def integer_attr(value: int, type_: Attribute) -> IntegerAttr:
    """`IntegerAttr(value, type_)`, built once per process for the most recent values
    (attributes are immutable; building one, with its checks, costs more than the op)."""
    return _integer_attr(int(value), type_)


@lru_cache(maxsize=4096)
def _integer_attr(value: int, type_: Attribute) -> IntegerAttr:
    return IntegerAttr(value, type_)  # pyright: ignore[reportArgumentType]


def float_attr(value: float, type_: Attribute) -> FloatAttr:
    """`FloatAttr(value, type_)`, built once per process for the most recent values
    (keyed by the bits of `value`: 0.0 and -0.0 are two attributes)."""
    return _float_attr(float(value).hex(), type_)


@lru_cache(maxsize=4096)
def _float_attr(bits: str, type_: Attribute) -> FloatAttr:
    return FloatAttr(float.fromhex(bits), type_)  # pyright: ignore[reportArgumentType]


@cache
def _position(position: tuple[int, ...]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, position)


def extract(
    container: SSAValue, position: Sequence[int], type_: Attribute, ops: list[Operation]
) -> SSAValue:
    """`llvm.extractvalue container[position]`."""
    return append(ops, build(llvm.ExtractValueOp, _position(tuple(position)), container, type_))


def insert(
    container: SSAValue, value: SSAValue, position: Sequence[int], ops: list[Operation]
) -> SSAValue:
    """`llvm.insertvalue value, container[position]`."""
    return append(ops, build(llvm.InsertValueOp, _position(tuple(position)), container, value))


@lru_cache(maxsize=64)
def llvm_fastmath(flags: Hashable) -> llvm.FastMathAttr:
    """`llvm.FastMathAttr(flags)` (the `data` of an `arith` fastmath attribute), built
    once per process for each set of flags."""
    return llvm.FastMathAttr(flags)  # pyright: ignore[reportArgumentType]


@cache
def nsw() -> llvm.OverflowAttr:
    """The no-signed-wrap flag used on address arithmetic (it helps vectorisation)."""
    return llvm.OverflowAttr((llvm.OverflowFlag.NO_SIGNED_WRAP,))


def add_index(lhs: SSAValue, rhs: SSAValue, ops: list[Operation]) -> SSAValue:
    """`lhs + rhs` on i64 address arithmetic."""
    return append(ops, build(llvm.AddOp, lhs, rhs, overflow=nsw()))


def mul_index(lhs: SSAValue, rhs: SSAValue, ops: list[Operation]) -> SSAValue:
    """`lhs * rhs` on i64 address arithmetic."""
    return append(ops, build(llvm.MulOp, lhs, rhs, overflow=nsw()))


# --- external functions -------------------------------------------------------------------


KERNEL_ATTRIBUTE = "arignote.kernel"
"""On a kernel that `outline-kernels` made (`func.func`, then the `llvm.func` holding its
body): LLVM never inlines the kernel (`arignote.runtime.cpu.kernel_functions`)."""


def enclosing_module(op: Operation) -> ModuleOp:
    """The outermost `builtin.module` around `op`."""
    module: ModuleOp | None = None
    current: Operation | None = op
    while current is not None:
        if isinstance(current, ModuleOp):
            module = current
        current = current.parent_op()
    if module is None:
        raise PassFailedException(f"{op.name} is not inside a builtin.module")
    return module


_FUNCTIONS: WeakKeyDictionary[ModuleOp, dict[str, ref[Operation]]] = WeakKeyDictionary()
"""The functions `lookup_function` found in each module, by name. Weak both ways: a
function is in its module (its parent chain leads there), so a strong reference to it
would keep the module, the key, alive for the life of the process, with every op of it
(about 5,000 objects per compiled function, walked by each full collection)."""


def lookup_function(module: ModuleOp, name: str) -> Operation | None:
    """`SymbolTable.lookup_symbol(module, name)`, remembered while the op found stays in
    `module` under that name: a lookup walks the module's ops (0.2-0.4 ms in a module of
    70 functions), and the conversion asks for `malloc` and `free` at every allocation."""
    known = _FUNCTIONS.setdefault(module, {})
    remembered = known.get(name)
    found = None if remembered is None else remembered()
    if (
        found is not None
        and found.parent is module.body.block
        and found.properties.get("sym_name") == StringAttr(name)
    ):
        return found
    found = SymbolTable.lookup_symbol(module, name)
    if found is not None:
        known[name] = ref(found)
    return found


def declare_function(
    rewriter: PatternRewriter,
    anchor: Operation,
    name: str,
    inputs: Sequence[Attribute],
    output: Attribute | None = None,
) -> None:
    """Declare external `llvm.func @name` in `anchor`'s module unless it has that symbol.

    `output` None means a `void` function. The module's own functions must not take
    the names of the C library functions called (`malloc`, `free`, `tanh`, ...).
    """
    module = enclosing_module(anchor)
    function_type = _function_type(tuple(inputs), output)
    existing = lookup_function(module, name)
    if isinstance(existing, llvm.FuncOp) and existing.function_type == function_type:
        return
    if existing is not None:
        raise PassFailedException(
            f"cannot declare external @{name}: the module defines that symbol"
        )
    decl = llvm.FuncOp(name, function_type, linkage=llvm.LinkageAttr("external"))
    rewriter.insert(decl, InsertPoint.at_start(module.body.block))


@lru_cache(maxsize=256)
def _function_type(
    inputs: tuple[Attribute, ...], output: Attribute | None
) -> llvm.LLVMFunctionType:
    """`declare_function`'s function type, built once per process for each signature
    (the C functions called, again for every allocation: building and verifying the
    type cost more than looking the declaration up)."""
    return llvm.LLVMFunctionType(inputs, output or llvm.LLVMVoidType())


def declare_external(
    module: ModuleOp, name: str, inputs: Sequence[Attribute], output: Attribute | None = None
) -> None:
    """Declare external `llvm.func @name` at the start of `module` unless it has that
    symbol (outside a pattern rewrite: `declare_function` is the rewriter's)."""
    if SymbolTable.lookup_symbol(module, name) is not None:
        return
    function_type = _function_type(tuple(inputs), output)
    decl = llvm.FuncOp(name, function_type, linkage=llvm.LinkageAttr("external"))
    Rewriter.insert_op(decl, InsertPoint.at_start(module.body.block))


def call(
    name: str, args: Sequence[SSAValue], result: Attribute | None, ops: list[Operation]
) -> SSAValue | None:
    """`llvm.call @name(args)`; the result value, or None for a void call."""
    op = build(llvm.CallOp, name, *args, return_type=result)
    ops.append(op)
    return op.returned


@dataclass
class DirectLowering(RewritePattern):
    """Ops whose `llvm` counterpart, looked up in `table` by op class, takes the
    converted operands in order and gives the one result."""

    table: Mapping[type[Operation], Callable[..., Operation]]

    @property
    def op_types(self) -> tuple[type[Operation], ...]:
        """The op classes it rewrites (for `arignote.lowering.rewriting`)."""
        return tuple(self.table)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        llvm_op = self.table.get(type(op))
        if llvm_op is None:
            return
        ops: list[Operation] = []
        operands = to_llvm_all(op.operands, ops)
        new_op = build(llvm_op, *operands)
        flags = op.properties.get("fastmath")
        if isinstance(new_op, llvm.AbstractFloatArithOp) and isinstance(flags, FastMathAttrBase):
            new_op.properties["fastmathFlags"] = llvm_fastmath(flags.data)
        result = append(ops, new_op)
        replace_op(rewriter, op, ops, result)
