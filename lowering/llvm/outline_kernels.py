"""`outline-kernels`: each loop nest of a native function in a function of its own, once.

Runs after `ag-to-loops` and before `parallelize` (`pipelines.loops_lowering`). The
layers of a network lower to the same loop nests over different buffers; inlined into
`@f`, each copy was optimized, vectorized and compiled again, and LLVM's optimization
of one function grows faster than its size (a 64-layer MLP's `@f` took most of the
compile time). This pass makes the compile time linear and lets a deep network compile
about as many loop nests as a shallow one:

* every loop nest of a function with a body (an `scf.for`, or an `scf.if` holding one,
  with no results; at any depth: the loop nests inside a scan's loop too) becomes a
  call, `func.call @<f>__k<N>(<the values it uses>)`, of a private function holding it.
  Constants it uses are copied into it (its loops keep their constant bounds); the other
  values it uses and does not define are its arguments, in order of first use.
* identical kernels are one function: two nests that are the same op for op (over
  arguments of the same types, with the same constants) call the same kernel
  (`merge_functions.body_key`, no printing). A module has one kernel of each.
* a memref argument that is a `noalias` argument of the caller, or one of its
  `memref.alloc`/`alloca`s that no other argument derives from, is `llvm.noalias` in the
  kernel (`parallelize.noalias_positions`, the rule of the parallel tasks): its loops
  still vectorize without run-time overlap checks.
* kernels are `arignote.kernel`: LLVM never inlines them
  (`arignote.runtime.cpu.llvm_ir_text` marks them `noinline`).

A nest is left in place when it allocates or frees memory (`memref.alloc`, `alloca`,
`dealloc`: a failed allocation returns a status from `@f`, see `checked_alloc`), returns,
or uses a value of a type a kernel argument cannot have (scalars of `index`, signless
integer and float types and memrefs can); the nests inside it are then outlined themselves.

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

from collections.abc import Hashable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, llvm, memref, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    StringAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from arignote.dialects import ag
from arignote.lowering.llvm.convert_func_to_llvm import KERNEL_ATTRIBUTE, NOALIAS
from arignote.lowering.llvm.merge_functions import body_key
from arignote.lowering.llvm.parallelize import noalias_positions

KERNEL_SUFFIX = "__k"

_STAYS = (
    memref.AllocOp,
    memref.AllocaOp,
    memref.DeallocOp,
    llvm.AllocaOp,
    func.ReturnOp,
    llvm.ReturnOp,
)
"""Ops a kernel cannot hold (module doc)."""

_CONSTANTS = (arith.ConstantOp, llvm.ConstantOp)


def _argument_type(t: Attribute) -> bool:
    """Whether a kernel may take a value of type `t` as an argument."""
    if isinstance(t, MemRefType):
        return True
    if isinstance(t, IntegerType):  # signless: the LLVM lowering's integers
        return t.signedness.data == Signedness.SIGNLESS
    return isinstance(t, IndexType | Float16Type | Float32Type | Float64Type)


def _holds_a_loop(op: Operation) -> bool:
    return any(isinstance(inner, scf.ForOp | scf.WhileOp) for inner in op.walk())


def _candidate(op: Operation) -> bool:
    """A loop nest with no results (an `scf.for`, or an `scf.if` holding a loop)."""
    if op.results:
        return False
    if isinstance(op, scf.ForOp):
        return True
    return isinstance(op, scf.IfOp) and _holds_a_loop(op)


def _used_from_outside(op: Operation) -> tuple[list[SSAValue], bool]:
    """The values `op` (its operands and nested ops) uses and does not define, in order
    of first use; and whether `op` can be a kernel (none of `_STAYS` in it)."""
    defined: set[SSAValue] = set()
    used: dict[SSAValue, None] = {}
    for inner in op.walk():
        if isinstance(inner, _STAYS):
            return [], False
        for operand in inner.operands:
            if operand not in defined:
                used.setdefault(operand, None)
        defined.update(inner.results)
        for region in inner.regions:
            for block in region.blocks:
                defined.update(block.args)
    # an operand used before its definition in walk order is still defined inside
    return [v for v in used if v not in defined], True


@dataclass
class _Outliner:
    module: ModuleOp
    taken: set[str]
    kernels: dict[Hashable, str]
    count: int = 0

    def _name(self, base: str) -> str:
        while True:
            name = f"{base}{KERNEL_SUFFIX}{self.count}"
            self.count += 1
            if name not in self.taken:
                self.taken.add(name)
                return name

    def outline_in(self, f: func.FuncOp, region: Region) -> None:
        """Outline the loop nests of `region` (a region of `f`), at any depth."""
        for block in region.blocks:
            for op in list(block.ops):
                if _candidate(op) and self._outline(f, op):
                    continue
                if isinstance(op, ag.ParallelForOp):
                    continue  # its body becomes a task of the thread pool
                for inner in op.regions:
                    self.outline_in(f, inner)

    def _outline(self, f: func.FuncOp, op: Operation) -> bool:
        used, outlinable = _used_from_outside(op)
        if not outlinable:
            return False
        constants = [v for v in used if isinstance(v.owner, _CONSTANTS)]
        arguments = [v for v in used if not isinstance(v.owner, _CONSTANTS)]
        if not all(_argument_type(v.type) for v in arguments):
            return False
        kernel = _kernel(f, op, constants, arguments)
        key = body_key(kernel)
        name = self.kernels.get(key)
        if name is None:
            name = self.kernels[key] = self._name(f.sym_name.data)
            kernel.sym_name = StringAttr(name)
            self.module.body.block.add_op(kernel)
        Rewriter.replace_op(op, func.CallOp(name, arguments, []))
        return True


def _kernel(
    f: func.FuncOp, op: Operation, constants: list[SSAValue], arguments: list[SSAValue]
) -> func.FuncOp:
    """A private function (still unnamed) holding a copy of `op`: `constants` copied,
    `arguments` its arguments."""
    entry = Block(arg_types=[v.type for v in arguments])
    mapping: dict[SSAValue, SSAValue] = dict(zip(arguments, entry.args, strict=True))
    for value in constants:
        copy = value.owner.clone()
        entry.add_op(copy)
        mapping[value] = copy.results[0]
    entry.add_op(op.clone(value_mapper=mapping))
    entry.add_op(func.ReturnOp())
    noalias = noalias_positions(arguments, f)
    attrs = ArrayAttr(
        [
            DictionaryAttr({NOALIAS: UnitAttr()} if k in noalias else {})
            for k in range(len(arguments))
        ]
    )
    kernel = func.FuncOp(
        "kernel", ([v.type for v in arguments], []), Region(entry), "private", arg_attrs=attrs
    )
    kernel.attributes[KERNEL_ATTRIBUTE] = UnitAttr()
    return kernel


def outline_kernels(module: ModuleOp) -> int:
    """Outline the loop nests of `module`'s functions (module doc); how many kernels
    it made."""
    taken = {
        n.data for o in module.ops if isinstance(n := getattr(o, "sym_name", None), StringAttr)
    }
    outliner = _Outliner(module, taken, {})
    for f in list(module.ops):
        if isinstance(f, func.FuncOp) and f.body.blocks and KERNEL_ATTRIBUTE not in f.attributes:
            outliner.outline_in(f, f.body)
    return len(outliner.kernels)


@dataclass(frozen=True)
class OutlineKernelsPass(ModulePass):
    """Each loop nest in a kernel function, one function per distinct nest (module doc)."""

    name = "outline-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        outline_kernels(op)
