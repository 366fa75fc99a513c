"""Each distinct op kernel emitted once: `ag-to-loops{kernel_regions=true}`'s reuse.

With `kernel_regions=true`, `ag-to-loops` emits each op's kernel in an
`scf.execute_region` (`emit_kernel`) that `outline-kernels` later makes a
kernel function. Emitting is most of `ag-to-loops`' time, and the layers of a network
emit the same kernel again and again. `KernelReuse` keys each op before emitting it:

* the key is the op (class, properties, attributes, operand and result types, and its
  regions op for op: an `ag.fused` body) and its buffers (the operands' and results'
  memref types; which of them are the same memref; each dimension's length when it is
  known (static, or an `arith.constant`, which emitting may read), or which dynamic
  lengths are the same SSA value).
  Emitting an op reads nothing else (`ag_kernels.emit_op` sees the builder, the op and
  the buffers), so ops of one key emit the same code over other buffers.
* the first op of a key is emitted into its region; the values the region uses from
  outside are then mapped to the buffers they come from (a memref, or a dimension's
  length). A region that uses anything else, or cannot be a kernel
  (`outline_kernels.nest_uses`), is not reused.
* the second op of a key makes the first region a kernel (`outline_kernels.make_kernel`,
  `@<f>__r<N>`) called in its place, and calls it; so does every later one. A memref
  argument is `noalias` in the kernel only if it is at every call (the rule of
  `parallelize.noalias_positions`, with the function's `noalias` arguments known before
  the function is built).

A key seen once keeps its region, which `outline-kernels` then treats as any other. The
code is the same as emitting each op; only its copies are gone.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field

from xdsl.builder import Builder
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    IntegerAttr,
    ModuleOp,
    StringAttr,
    UnitAttr,
    i64,
)
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from arignote.lowering.llvm.checked_alloc import ALLOC_STATUS
from arignote.lowering.llvm.convert_func_to_llvm import noalias_arg_attrs
from arignote.lowering.llvm.merge_functions import blocks_key
from arignote.lowering.llvm.outline_kernels import fresh_symbol, make_kernel, nest_uses
from arignote.lowering.llvm.parallelize import noalias_positions
from arignote.lowering.loops.ag_kernels import emit_op
from arignote.lowering.loops.loop_utils import Buffer
from arignote.lowering.op_builder import build

REUSED_SUFFIX = "__r"

Slot = tuple[int, int]
"""Where a kernel argument comes from: `(buffer, -1)` that buffer's memref, `(buffer, k)`
the length of its dimension `k`."""


@dataclass
class _Template:
    """The first op of a key: its region until it becomes a kernel, and its arguments."""

    region: scf.ExecuteRegionOp
    slots: list[Slot] | None
    """Where each argument of the kernel comes from; None: not reusable."""
    values: list[SSAValue] = field(default_factory=list[SSAValue])
    """The arguments at the first op."""
    allocates: bool = False
    noalias: set[int] = field(default_factory=set[int])
    """The `noalias` arguments at every call so far."""
    kernel: func.FuncOp | None = None


class KernelReuse:
    """The templates of one `ag-to-loops` run (module doc)."""

    def __init__(self, module: ModuleOp) -> None:
        self.module = module
        self.templates: dict[Hashable, _Template] = {}
        self.taken = {
            n.data for o in module.ops if isinstance(n := getattr(o, "sym_name", None), StringAttr)
        }
        self.count = 0
        self.function = ""
        self.entry: Block | None = None
        self.noalias_arguments: frozenset[int] = frozenset()

    def begin_function(self, name: str, entry: Block, noalias_arguments: frozenset[int]) -> None:
        """Ops of `@name` (whose entry block is `entry`, with these `noalias` arguments)
        come next."""
        self.function, self.entry, self.noalias_arguments = name, entry, noalias_arguments

    def _fresh(self, value: SSAValue) -> bool:
        if isinstance(value, BlockArgument):
            return value.block is self.entry and value.index in self.noalias_arguments
        return isinstance(value.owner, memref.AllocOp | memref.AllocaOp)

    def reuse(
        self, b: Builder, op: Operation, buffers: Sequence[Buffer]
    ) -> tuple[bool, Hashable | None]:
        """Whether the kernel of `op`'s key was called at `b` (an earlier op made it);
        and `op`'s key (None when it has none), for `emitted` when not."""
        key = _key(op, buffers)
        template = self.templates.get(key) if key is not None else None
        if template is None or template.slots is None or _detached(template):
            return False, key
        values = [_value(buffers, slot) for slot in template.slots]
        if [v.type for v in values] != [v.type for v in template.values]:
            return False, key  # (the key fixes the types: not expected)
        self._call(b, template, values)
        return True, key

    def emitted(
        self, key: Hashable, region: scf.ExecuteRegionOp, buffers: Sequence[Buffer]
    ) -> None:
        """The first op of `key` was emitted into `region` (or the first since the
        template's region was dropped)."""
        known = self.templates.get(key)
        if known is not None and not _detached(known):
            return
        uses = nest_uses(region)
        slots = _slots(uses.values, buffers) if uses.outlinable else None
        noalias = noalias_positions(uses.values, None, self._fresh)
        self.templates[key] = _Template(region, slots, uses.values, uses.allocates, noalias)

    def _call(self, b: Builder, template: _Template, values: list[SSAValue]) -> None:
        if template.kernel is None:  # the second op of its key: the first one's region
            name = self._name()
            kernel, _ = make_kernel(
                template.region, [], template.values, template.noalias, template.allocates
            )
            kernel.sym_name = StringAttr(name)
            self.module.body.block.add_op(kernel)
            template.kernel = kernel
            Rewriter.replace_op(
                template.region, self._call_op(template, template.values), new_results=[]
            )
        site = noalias_positions(values, None, self._fresh)
        if not template.noalias <= site:  # noalias only where it holds at every call
            template.noalias &= site
            template.kernel.arg_attrs = noalias_arg_attrs(len(values), template.noalias)
        b.insert(self._call_op(template, values))

    @staticmethod
    def _call_op(template: _Template, values: list[SSAValue]) -> func.CallOp:
        assert template.kernel is not None
        name = template.kernel.sym_name.data
        call = build(func.CallOp, name, values, [i64] if template.allocates else [])
        if template.allocates:  # a negative status returns from `@f` (`checked_alloc`)
            call.attributes[ALLOC_STATUS] = UnitAttr()
        return call

    def _name(self) -> str:
        name, self.count = fresh_symbol(f"{self.function}{REUSED_SUFFIX}", self.count, self.taken)
        return name


def _detached(template: _Template) -> bool:
    """Whether the template's region is no longer in a function (code a lowering
    dropped) while it is not a kernel yet."""
    if template.kernel is not None:
        return False
    op: Operation | None = template.region
    while op is not None and not isinstance(op, func.FuncOp):
        parent = op.parent_op()
        if parent is None and op.parent is not None:
            return False  # in a block that is not in a function yet: the one being built
        op = parent
    return op is None


def _key(op: Operation, buffers: Sequence[Buffer]) -> Hashable | None:
    """The key of `op` over `buffers` (module doc); None when an attribute is unhashable."""
    memrefs: dict[SSAValue, int] = {}
    lengths: dict[SSAValue, int] = {}
    signature = []
    for buffer in buffers:
        number = memrefs.setdefault(buffer.memref, len(memrefs))
        dims = tuple(_length_key(d, lengths) for d in buffer.dims)
        signature.append((buffer.memref.type, number, dims))
    body = _regions_key(op)
    if body is None:
        return None
    key = (
        type(op),
        tuple(op.properties.items()),
        tuple(op.attributes.items()),
        tuple(o.type for o in op.operands),
        tuple(r.type for r in op.results),
        tuple(signature),
        body,
    )
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _length_key(d: int | SSAValue, lengths: dict[SSAValue, int]) -> int:
    """A length in a key: its value when it is known when emitting (an int, or an
    `arith.constant`, which emitting may read as its value, `parallel_loops._static`),
    else `-1 - n` for the `n`-th distinct dynamic length (numbered in `lengths`)."""
    if isinstance(d, int):
        return d
    owner = d.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return -1 - lengths.setdefault(d, len(lengths))


def _regions_key(op: Operation) -> Hashable | None:
    """`op`'s regions (an `ag.fused` body, ...) op for op, as `merge_functions.op_key`
    has them; None when an op in them uses a value from outside `op` (what emitting it
    reads would then not be in the key)."""
    return blocks_key(op, {}, closed=True) if op.regions else ()


def _slots(values: Sequence[SSAValue], buffers: Sequence[Buffer]) -> list[Slot] | None:
    """Where each of `values` comes from among `buffers`; None if one comes from
    elsewhere."""
    where: dict[SSAValue, Slot] = {}
    for i, buffer in enumerate(buffers):
        where.setdefault(buffer.memref, (i, -1))
        for k, d in enumerate(buffer.dims):
            if not isinstance(d, int):
                where.setdefault(d, (i, k))
    slots = [where.get(v) for v in values]
    return None if any(s is None for s in slots) else slots  # type: ignore[return-value]


def _value(buffers: Sequence[Buffer], slot: Slot) -> SSAValue:
    i, k = slot
    if k < 0:
        return buffers[i].memref
    d = buffers[i].dims[k]
    assert not isinstance(d, int)
    return d


KERNEL_REUSE: ContextVar[KernelReuse | None] = ContextVar("KERNEL_REUSE", default=None)
"""The kernels emitted so far in this `ag-to-loops` run, by key, when its
`kernel_regions` option is on; else None."""


def emit_kernel(b: Builder, op: Operation, dests: list[Buffer], operands: list[Buffer]) -> None:
    """`op`'s kernel at `b`. With `kernel_regions` (`KERNEL_REUSE` set): a call of the
    kernel of an earlier op of the same key, or else the kernel in an
    `scf.execute_region` of its own (no results, ended by `scf.yield`), for
    `outline-kernels`."""
    reuse = KERNEL_REUSE.get()
    if reuse is None:
        emit_op(b, op, dests, operands)
        return
    buffers = [*operands, *dests]
    called, key = reuse.reuse(b, op, buffers)
    if called:
        return
    block = Block()
    region = b.insert(scf.ExecuteRegionOp([], Region(block)))
    block.add_op(scf.YieldOp())
    emit_op(Builder(InsertPoint.before(block.last_op)), op, dests, operands)
    if key is not None:
        reuse.emitted(key, region, buffers)
