"""`outline-kernels`: each loop nest of a native function in a function of its own, once.

Runs after `ag-to-loops` and before `parallelize` (`pipelines.loops_lowering`). The
layers of a network lower to the same loop nests over different buffers; inlined into
`@f`, each copy was optimized, vectorized and compiled again, and LLVM's optimization
of one function grows faster than its size (a 64-layer MLP's `@f` took most of the
compile time). This pass makes the compile time linear and lets a deep network compile
about as many loop nests as a shallow one:

* every loop nest of a function with a body (an `scf.for`, its results, such as a
  reduction's sums or an index check's flag, returned by the kernel; or an `scf.if`
  holding one, with no results; at any depth: the loop nests inside a scan's loop too), and every
  op's kernel that `ag-to-loops{kernel_regions=true}` put in an `scf.execute_region`
  (its loops and the code around them: a BLAS call's operand layouts and copies),
  becomes a call, `func.call @<f>__k<N>(<the values it uses>)`, of a private function
  holding it. A region that cannot be a kernel is replaced by its ops (and the nests
  in them are outlined); so is every region left inside a kernel or a parallel loop.
  Constants it uses are copied into it (its loops keep their constant bounds); the other
  values it uses and does not define are its arguments, in order of first use.
* identical kernels are one function: two nests that are the same op for op (over
  arguments of the same types, with the same constants) call the same kernel. Each
  nest's key is computed in place (`_nest_key`, the ops as `merge_functions` keys them,
  no printing) and only the first nest of each key is copied into a kernel. A module
  has one kernel of each.
* a memref argument that is a `noalias` argument of the caller, or one of its
  `memref.alloc`/`alloca`s that no other argument derives from, is `llvm.noalias` in the
  kernel (`parallelize.noalias_positions`, the rule of the parallel tasks): its loops
  still vectorize without run-time overlap checks.
* kernels are `arignote.kernel`: LLVM never inlines them
  (`arignote.runtime.cpu.llvm_ir_text` marks them `noinline`).
* in what is left of each function, equal `arith.constant`s of a block are one
  (`merge_constants`).

* a nest that allocates buffers (and frees them: a nest that frees a buffer of the
  caller stays) is a status kernel: `arignote.alloc_status`, returning 0, or `-bytes`
  when `malloc` refused a buffer, after freeing its own (`checked_alloc`); its call
  carries `arignote.alloc_status` too, and a negative status makes the caller free
  its own buffers and return the same status. Only a caller that is a status function
  (`@f`, `@f__shape`) calls one.

A nest is left in place when it makes a stack slot (`memref.alloca`, `llvm.alloca`),
returns, or uses a value of a type a kernel argument cannot have (scalars of `index`,
signless integer and float types and memrefs can); the nests inside it are then
outlined themselves.

```mlir
// before                                    // after
func.func @f(%a: memref<?xf64> {llvm.noalias},  func.func @f(...) {
             %b: memref<?xf64> {llvm.noalias}) {  func.call @f__k0(%n, %a, %b)
  scf.for %i = %c0 to %n step %c1 {               ...
    %x = memref.load %a[%i]                     }
    memref.store %x, %b[%i]                     func.func private @f__k0(%n: index,
  }                                                 %a: memref<?xf64> {llvm.noalias},
  ...                                               %b: memref<?xf64> {llvm.noalias})
                                                    attributes {arignote.kernel} {
                                                  %c0 = arith.constant 0 : index
                                                  ... scf.for ...
                                                  func.return
                                                }
```
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import cast

from xdsl.context import Context
from xdsl.dialects import arith, func, llvm, memref, scf
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    StringAttr,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from arignote.dialects import ag
from arignote.lowering.llvm.checked_alloc import ALLOC_STATUS
from arignote.lowering.llvm.convert_func_to_llvm import KERNEL_ATTRIBUTE, noalias_arg_attrs
from arignote.lowering.llvm.merge_functions import blocks_key, op_key
from arignote.lowering.llvm.parallelize import noalias_positions
from arignote.lowering.op_builder import build
from arignote.lowering.rewriting import walk_op

KERNEL_SUFFIX = "__k"

_STAYS = (memref.AllocaOp, llvm.AllocaOp, func.ReturnOp, llvm.ReturnOp)
"""Ops a kernel cannot hold (module doc)."""

_CONSTANTS = (arith.ConstantOp, llvm.ConstantOp)

MIN_REPEATS = 2
"""An op's region, or a nest that allocates, is a kernel when the module has at least
this many of its kind (a network's layers); one of its own kind stays (a region gives
its ops back to its function), and its loop nests are kernels each. A kernel called
once costs compile time (a wrapper, the descriptors of its calls): on the LSTM example,
whose ops are mostly of their own kind, making every region and allocating nest a
kernel took 0.2 to 0.3 s more (of 2.5) than the loop nests alone; on a 32-layer MLP,
whose layers repeat, the regions and allocating nests as kernels took 2.9 s against
5.7 s for the loop nests alone (the passes and LLVM, `/work/notes/prof/passes.py`)."""


def _argument_type(t: Attribute) -> bool:
    """Whether a kernel may take a value of type `t` as an argument."""
    return isinstance(t, MemRefType) or _scalar(t)


def _scalar(t: Attribute) -> bool:
    """Whether `t` is a scalar a kernel may take or return."""
    if isinstance(t, IntegerType):  # signless: the LLVM lowering's integers
        return t.signedness.data == Signedness.SIGNLESS
    return isinstance(t, IndexType | Float16Type | Float32Type | Float64Type)


def _holds_a_loop(op: Operation) -> bool:
    return any(isinstance(inner, scf.ForOp | scf.WhileOp) for inner in op.walk())


def fresh_symbol(prefix: str, count: int, taken: set[str]) -> tuple[str, int]:
    """`prefix<N>` for the first `N >= count` not in `taken` (then taken), and `N + 1`."""
    while f"{prefix}{count}" in taken:
        count += 1
    taken.add(f"{prefix}{count}")
    return f"{prefix}{count}", count + 1


def _candidate(op: Operation) -> bool:
    """A loop nest (an `scf.for`, with or without results, or an `scf.if` holding a
    loop and without results), or one op's kernel (`scf.execute_region`, see
    `kernel_reuse.emit_kernel`)."""
    if isinstance(op, scf.ForOp):
        return True
    if op.results:
        return False
    if isinstance(op, scf.ExecuteRegionOp):
        return True
    return isinstance(op, scf.IfOp) and _holds_a_loop(op)


_STAY, _ALLOC, _CALL, _DEALLOC, _OTHER = "stay", "alloc", "call", "dealloc", "other"

_KINDS: dict[type[Operation], str] = {}
"""What `nest_uses` makes of each op class (`isinstance` on the abstract op classes,
once per class)."""


def _kind(op: Operation) -> str:
    kind = (
        _STAY
        if isinstance(op, _STAYS)
        else _ALLOC
        if isinstance(op, memref.AllocOp)
        else _CALL
        if isinstance(op, func.CallOp)
        else _DEALLOC
        if isinstance(op, memref.DeallocOp)
        else _OTHER
    )
    _KINDS[type(op)] = kind
    return kind


@dataclass
class _Uses:
    """What a nest uses from outside and whether it can be a kernel (`nest_uses`)."""

    values: list[SSAValue]
    """The values it uses and does not define, in order of first use."""
    outlinable: bool
    allocates: bool
    """Whether it allocates (and frees) buffers of its own: a status kernel."""


def nest_uses(op: Operation) -> _Uses:
    """The values `op` (its operands and nested ops) uses and does not define; whether
    it can be a kernel: none of `_STAYS` in it, and it frees only buffers it allocates."""
    defined: set[SSAValue] = set()
    used: dict[SSAValue, None] = {}
    allocates = False
    for inner in walk_op(op):
        kind = _KINDS.get(type(inner)) or _kind(inner)
        if kind is _STAY:
            return _Uses([], False, False)
        if kind is _ALLOC or (kind is _CALL and ALLOC_STATUS in inner.attributes):
            allocates = True  # (a call of a status kernel reports a failed allocation too)
        elif kind is _DEALLOC and cast(memref.DeallocOp, inner).memref not in defined:
            return _Uses([], False, False)  # frees a buffer of the caller
        for operand in inner.operands:
            if operand not in defined:
                used.setdefault(operand, None)
        defined.update(inner.results)
        for region in inner.regions:
            for block in region.blocks:
                defined.update(block.args)
    # an operand used before its definition in walk order is still defined inside
    return _Uses([v for v in used if v not in defined], True, allocates)


@dataclass
class _Outliner:
    module: ModuleOp
    taken: set[str]
    kernels: dict[Hashable, str] = field(default_factory=dict[Hashable, str])
    repeats: Counter[Hashable] = field(default_factory=Counter[Hashable])
    """How many regions of the module make each kernel (`count_regions`)."""
    plans: dict[Operation, _Plan] = field(default_factory=dict[Operation, "_Plan"])
    replaced: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    """The results of the loops made calls, and the calls' results: a plan made before
    (`count_regions`) may take them as arguments."""
    count: int = 0

    def _name(self, base: str) -> str:
        name, self.count = fresh_symbol(f"{base}{KERNEL_SUFFIX}", self.count, self.taken)
        return name

    def outline_in(self, f: func.FuncOp, region: Region) -> None:
        """Outline the loop nests of `region` (a region of `f`), at any depth."""
        for block in region.blocks:
            self._outline_ops(f, list(block.ops))

    def _outline_ops(self, f: func.FuncOp, ops: list[Operation]) -> None:
        for op in ops:
            if _candidate(op) and self._outline(f, op):
                continue
            if isinstance(op, scf.ExecuteRegionOp):  # not a kernel: its ops in its place
                self._outline_ops(f, _inline_region(op))
                continue
            if isinstance(op, ag.ParallelForOp):
                continue  # its body becomes a task of the thread pool
            for inner in op.regions:
                self.outline_in(f, inner)

    def _outline(self, f: func.FuncOp, op: Operation) -> bool:
        plan = self.plans.pop(op, None) or _plan(f, op)
        if plan is None:
            return False
        plan.arguments = [self.replaced.get(v, v) for v in plan.arguments]
        if _counted(op, plan) and self.repeats[plan.key] < MIN_REPEATS:
            return False  # stays (a region: its ops take its place); its loop nests are kernels
        name = self.kernels.get(plan.key)
        if name is None:  # the first of its kind: a copy of it is the kernel
            name = self.kernels[plan.key] = self._name(f.sym_name.data)
            kernel, copy = make_kernel(
                op, plan.constants, plan.arguments, plan.noalias, plan.allocates
            )
            kernel.sym_name = StringAttr(name)
            self.module.body.block.add_op(kernel)
            if plan.allocates and not isinstance(op, scf.ExecuteRegionOp):
                for inner in copy.regions:  # a loop of steps (a scan's): their nests too
                    self.outline_in(kernel, inner)
        results = [i64] if plan.allocates else [r.type for r in op.results]
        call = build(func.CallOp, name, plan.arguments, results)
        if plan.allocates:  # a negative status returns from `f` (`checked_alloc`)
            call.attributes[ALLOC_STATUS] = UnitAttr()
        if not plan.allocates:
            self.replaced.update(zip(op.results, call.results, strict=True))
        Rewriter.replace_op(op, call, new_results=[] if plan.allocates else call.results)
        return True

    def count_regions(self, f: func.FuncOp) -> None:
        """Plan each candidate of `f` (kept for `_outline`) and count the kernels of its
        regions and allocating nests by key (`repeats`)."""
        for op in walk_op(f):
            if _candidate(op) and (plan := _plan(f, op)) is not None:
                self.plans[op] = plan
                if _counted(op, plan):
                    self.repeats[plan.key] += 1


def _counted(op: Operation, plan: _Plan) -> bool:
    """Whether `op` is a kernel only when its kind repeats (`MIN_REPEATS`): an op's
    region, or a nest that allocates."""
    return isinstance(op, scf.ExecuteRegionOp) or plan.allocates


@dataclass
class _Plan:
    """What outlining a nest takes: its arguments, the constants copied, the `noalias`
    argument positions, whether it allocates, and the key of its kernel."""

    arguments: list[SSAValue]
    constants: list[SSAValue]
    noalias: set[int]
    allocates: bool
    key: Hashable


def _plan(f: func.FuncOp, op: Operation) -> _Plan | None:
    """How `op` (a nest of `f`) becomes a kernel; None when it cannot (module doc)."""
    uses = nest_uses(op)
    if not uses.outlinable or (uses.allocates and ALLOC_STATUS not in f.attributes):
        return None
    if op.results and (uses.allocates or not all(_scalar(r.type) for r in op.results)):
        return None  # a kernel returns its status, or scalars
    constants = [v for v in uses.values if isinstance(v.owner, _CONSTANTS)]
    arguments = [v for v in uses.values if not isinstance(v.owner, _CONSTANTS)]
    if not all(_argument_type(v.type) for v in arguments):
        return None
    noalias = noalias_positions(arguments, f)
    key = _nest_key(op, arguments, constants, noalias, uses.allocates)
    return _Plan(arguments, constants, noalias, uses.allocates, key)


def _inline_region(op: scf.ExecuteRegionOp) -> list[Operation]:
    """Replace `op` (no results, one block ended by `scf.yield`) by its ops; returns them."""
    block = op.region.block
    terminator = block.last_op
    assert isinstance(terminator, scf.YieldOp) and not terminator.operands
    Rewriter.erase_op(terminator)
    ops = list(block.ops)
    Rewriter.inline_block(block, InsertPoint.before(op))
    Rewriter.erase_op(op)
    return ops


def _nest_key(
    op: Operation,
    arguments: Sequence[SSAValue],
    constants: Sequence[SSAValue],
    noalias: set[int],
    allocates: bool,
) -> Hashable:
    """The kernel `op` would make, as a hashable value, without making it: the types and
    `noalias` of its arguments, its constants, then `op` and its nested ops as
    `merge_functions.body_key` has them (values numbered: the arguments first, then the
    constants, then in order of definition). Equal keys, identical kernels."""
    values = {id(v): k for k, v in enumerate(arguments)}
    copied = []
    for value in constants:
        values[id(value)] = len(values)
        copied.append(op_key(value.owner, {}, {}))
    items = blocks_key(op, values, first=lambda blocks: op_key(op, values, blocks))
    signature = tuple(v.type for v in arguments)
    return _Key((signature, tuple(sorted(noalias)), allocates, tuple(copied), items))


class _Key:
    """A kernel's key (`_nest_key`) with its hash computed once: a key holds the
    attributes of every op of its nest, which hash by value (recursively, each time),
    and `count_regions` and `_outline` look each key up several times."""

    __slots__ = ("items", "hash")

    def __init__(self, items: tuple[Hashable, ...]) -> None:
        self.items = items
        self.hash = hash(items)

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Key) and self.hash == other.hash and self.items == other.items


def make_kernel(
    op: Operation,
    constants: list[SSAValue],
    arguments: list[SSAValue],
    noalias: set[int],
    allocates: bool,
) -> tuple[func.FuncOp, Operation]:
    """A private function (still unnamed) holding a copy of `op`, and the copy:
    `constants` copied, `arguments` its arguments (`noalias` those positions); when it
    `allocates`, a status function returning 0."""
    entry = Block(arg_types=[v.type for v in arguments])
    mapping: dict[SSAValue, SSAValue] = dict(zip(arguments, entry.args, strict=True))
    for value in constants:
        copy = value.owner.clone()
        entry.add_op(copy)
        mapping[value] = copy.results[0]
    copy = op.clone(value_mapper=mapping)
    entry.add_op(copy)
    if allocates:
        entry.add_op(done := arith.ConstantOp(IntegerAttr(0, i64)))
        entry.add_op(func.ReturnOp(done))
    else:  # a loop's results (a reduction's), if any
        entry.add_op(func.ReturnOp(*copy.results))
    attrs = noalias_arg_attrs(len(arguments), noalias)
    results = [i64] if allocates else [r.type for r in copy.results]
    kernel = func.FuncOp(
        "kernel", ([v.type for v in arguments], results), Region(entry), "private", arg_attrs=attrs
    )
    kernel.attributes[KERNEL_ATTRIBUTE] = UnitAttr()
    if allocates:
        kernel.attributes[ALLOC_STATUS] = UnitAttr()
    return kernel, copy


def outline_kernels(module: ModuleOp) -> int:
    """Outline the loop nests of `module`'s functions (module doc); how many kernels
    it made."""
    taken = {
        n.data for o in module.ops if isinstance(n := getattr(o, "sym_name", None), StringAttr)
    }
    outliner = _Outliner(module, taken)
    functions = [
        f
        for f in module.ops
        if isinstance(f, func.FuncOp) and f.body.blocks and KERNEL_ATTRIBUTE not in f.attributes
    ]
    for f in functions:
        outliner.count_regions(f)
    for f in functions:
        outliner.outline_in(f, f.body)
    # the ops' regions inside a kernel (a scan's loop) or a parallel loop: in their place
    regions = [op for op in module.walk() if isinstance(op, scf.ExecuteRegionOp)]
    for op in reversed(regions):
        _inline_region(op)
    for f in functions:
        merge_constants(f)
    return len(outliner.kernels)


def merge_constants(f: func.FuncOp) -> int:
    """Keep the first `arith.constant` of each value in each block of `f`, the later
    ones replaced by it (it comes first in their block, so it dominates their uses):
    `ag-to-loops` makes each constant where it needs it, and what is left of `@f` once
    its kernels are calls is mostly such glue, which every later pass and LLVM would
    walk. How many were erased."""
    erased = 0
    for block in f.walk_blocks():
        first: dict[tuple[Attribute, Attribute], SSAValue] = {}
        for op in list(block.ops):
            if type(op) is not arith.ConstantOp:
                continue
            key = (op.value, op.result.type)
            kept = first.setdefault(key, op.result)
            if kept is not op.result:
                op.result.replace_all_uses_with(kept)
                Rewriter.erase_op(op)
                erased += 1
    return erased


@dataclass(frozen=True)
class OutlineKernelsPass(ModulePass):
    """Each loop nest in a kernel function, one function per distinct nest (module doc)."""

    name = "outline-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        outline_kernels(op)
