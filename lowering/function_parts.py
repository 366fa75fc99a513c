"""A loops-level module split into two parts that two processes lower and compile.

After `outline-kernels` (and `parallelize`), a native compile's module holds the glue
(`@f`, which allocates and calls the kernels, and `@f__shape`, its shape arithmetic and
run-time checks), the kernels and what they call (their `__noalias` bodies, the parallel
loops' tasks), and declarations (malloc, BLAS, the thread pool). The rest of the
lowering (`LLVM_LOWERING`), the translation to LLVM IR and LLVM itself work function by
function, so two processes can each take a part (`split_functions`): one `@f`, the
other `@f__shape`, and the kernels shared between them so that both take about as long
(`cost`). Each process then keeps its part's bodies and declares the other part's
functions (`keep_only`); the objects they make are loaded into one engine.

`@f` costs most per op (its memrefs' descriptors: allocations, subviews and kernel
calls expand into many LLVM instructions), `@f__shape` least (index arithmetic), a
kernel in between plus LLVM's O3; `cost` weighs each op by its memref operands and
results and each function by its role (`GLUE_WEIGHT`, `SHAPE_WEIGHT`, `KERNEL_WEIGHT`,
measured on the LSTM example's and a 64-layer MLP's training functions).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import MemRefType, ModuleOp, SymbolRefAttr
from xdsl.ir import Operation

SHAPE_SUFFIX = "__shape"

GLUE_WEIGHT = 1.0
SHAPE_WEIGHT = 0.3
KERNEL_WEIGHT = 2.0
"""The relative cost of one unit of `cost` in `@f`, `@f__shape` and a kernel, all the way
to object code: about 0.14-0.18 ms, 0.05 ms and 0.28 ms on the machine they were
measured on (lowering, LLVM IR text, LLVM at O0 for the glue and O3 for the kernels);
with these weights the LSTM's two parts took 0.71 and 0.74 s."""

GLUE_O3_FACTOR = 2.0
"""How much more `@f` and `@f__shape` cost when they are compiled at O3 with the kernels
(a small function's glue, below `config.glue_o0_minsize`) than apart at O0 (this
process's part also links the entry points in). With the O0 weights, the README's
logistic-regression training function (`@f` 470 units) left this process's part 80 ms
longer than the child's; the README's compile, medians of 5 in new processes: 0.568 s
with the O0 weights, 0.539 s with a factor of 1.5, 0.525 s with 2 and 0.540 s with
2.5."""

MIN_COST = 400.0
"""The weighed cost (`cost` times the weights) from which `split_functions` splits a
module. A split costs 10-15 ms (the fork, the child's first touches of the memory it
shares, two objects, the parts' duplicated declarations); measured in new processes,
3 of each: a function of cost 294 compiled 12 ms slower split (54 -> 67 ms), one of
128 14 ms slower, while one of 643 gained 25 ms (139 -> 114 ms), and the README's
prediction function (595) gained too."""

GLUE_INSTRUCTIONS_PER_OP = 2.2
"""The fewest LLVM instructions the glue's loops-level ops became in the modules
measured (2.2 to 3.9 each): `glue_instructions` is at most what LLVM will see."""


@dataclass(frozen=True)
class Split:
    """Two parts of a module's functions (`split_functions`)."""

    child: frozenset[str]
    """The functions the other process lowers and compiles: `@f__shape` and kernels."""
    parent: frozenset[str]
    """The functions this process lowers and compiles: `@f` and kernels."""
    child_exports: frozenset[str]
    """The functions of `child` that `parent`'s functions call or take the address of."""
    parent_exports: frozenset[str]
    """The functions of `parent` that `child`'s functions call or take the address of."""
    glue_ops: int
    """The ops of `@f` and `@f__shape`."""
    glue_apart: bool = True
    """Whether the glue is compiled apart at O0 (`glue_apart_from`), as `split_functions`
    weighed it; else each part's glue stays at O3 with its kernels."""

    @property
    def glue_instructions(self) -> float:
        """A low estimate of the LLVM instructions of the glue (`GLUE_INSTRUCTIONS_PER_OP`)."""
        return self.glue_ops * GLUE_INSTRUCTIONS_PER_OP


def defined_functions(module: ModuleOp) -> dict[str, Operation]:
    """The `func.func` and `llvm.func` ops of `module` with a body, by name."""
    return {
        op.sym_name.data: op
        for op in module.ops
        if isinstance(op, func.FuncOp | llvm.FuncOp) and op.body.blocks
    }


def measure(function: Operation, names: Collection[str]) -> tuple[set[str], int]:
    """In one walk of `function`: the symbols of `names` its ops call or take the address
    of, and its size for `split_functions` (per op, 1 and 2 per memref operand or result:
    each becomes a descriptor's fields in LLVM)."""
    found = set()
    total = 0
    for op in function.walk():
        total += 1
        for value in op.operands:
            if type(value.type) is MemRefType:
                total += 2
        for value in op.results:
            if type(value.type) is MemRefType:
                total += 2
        for attribute in op.properties.values():
            if type(attribute) is SymbolRefAttr and attribute.root_reference.data in names:
                found.add(attribute.root_reference.data)
    return found, total


def split_functions(
    module: ModuleOp,
    symbol: str,
    min_cost: float | None = None,
    glue_apart_from: float | None = None,
) -> Split | None:
    """The two parts of the loops-level `module` of `@symbol` (module doc), or None when
    it is not worth splitting (below `min_cost`; None: `MIN_COST`) or cannot be: it
    holds something other than functions (global variables), `@symbol` or
    `@symbol__shape` is missing, or the shape function reaches `@symbol`.

    The kernels go in groups of functions that call each other (a kernel and its
    `__noalias` body, a parallel task and its body), the costliest first, each to the
    part with less weighed cost so far, the child starting with `@symbol__shape` and
    every group it calls. `glue_apart_from`: the glue instructions
    (`Split.glue_instructions`) from which the glue is compiled apart at O0; below it (or
    None), the glue is weighed as compiled at O3 with the kernels (`GLUE_O3_FACTOR`).
    """
    if any(not isinstance(op, func.FuncOp | llvm.FuncOp) for op in module.ops):
        return None
    functions = defined_functions(module)
    shape = symbol + SHAPE_SUFFIX
    if symbol not in functions or shape not in functions:
        return None
    names = frozenset(functions)
    measured = {name: measure(f, names) for name, f in functions.items()}
    refs = {name: found for name, (found, _) in measured.items()}
    sizes = {name: size for name, (_, size) in measured.items()}
    groups = call_groups(refs, names - {symbol, shape})
    group_of = {name: i for i, group in enumerate(groups) for name in group}
    weighed = [KERNEL_WEIGHT * sum(sizes[n] for n in group) for group in groups]
    glue_ops = sizes[symbol] + sizes[shape]
    apart = glue_apart_from is None or glue_ops * GLUE_INSTRUCTIONS_PER_OP >= glue_apart_from
    factor = 1.0 if apart else GLUE_O3_FACTOR
    child_cost = factor * SHAPE_WEIGHT * sizes[shape]
    parent_cost = factor * GLUE_WEIGHT * sizes[symbol]
    if child_cost + parent_cost + sum(weighed) < (MIN_COST if min_cost is None else min_cost):
        return None
    child = {shape}
    for i in sorted({group_of[n] for n in refs[shape] if n in group_of}):
        child.update(groups[i])
        child_cost += weighed[i]
    if symbol in _closure(refs, child):
        return None  # (never: the glue is called by the entry points only)
    for i in sorted(range(len(groups)), key=lambda i: (-weighed[i], min(groups[i]))):
        if groups[i][0] in child:
            continue
        if child_cost < parent_cost:
            child.update(groups[i])
            child_cost += weighed[i]
        else:
            parent_cost += weighed[i]
    parent = names - child
    return Split(
        frozenset(child),
        parent,
        frozenset(n for f in parent for n in refs[f] if n in child),
        frozenset(n for f in child for n in refs[f] if n in parent),
        glue_ops,
        apart,
    )


def _closure(refs: dict[str, set[str]], start: Iterable[str]) -> set[str]:
    """The functions `start`'s functions reach through `refs`."""
    seen, frontier = set(start), list(start)
    while frontier:
        for name in refs[frontier.pop()]:
            if name not in seen:
                seen.add(name)
                frontier.append(name)
    return seen


def call_groups(refs: dict[str, set[str]], members: frozenset[str]) -> list[list[str]]:
    """The functions of `members` as groups of functions that call each other or take
    each other's address through `refs` (either way: a kernel and its `__noalias` body, a
    parallel task and its body), found by union-find; each group's names sorted, the
    groups in the order of their first names. (The runtime's `cpu.call_groups` too.)"""
    parent = {name: name for name in members}

    def root(name: str) -> str:
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    for name in members:
        for callee in refs[name] & members:
            parent[root(callee)] = root(name)
    found: dict[str, list[str]] = {}
    for name in sorted(members):
        found.setdefault(root(name), []).append(name)
    return list(found.values())


def keep_only(module: ModuleOp, keep: Collection[str], used: Collection[str]) -> list[Operation]:
    """Take out, in place, every function of `module` with a body that is not in `keep`,
    declaring those of `used` (the ones `keep`'s functions call: a declaration nothing
    calls would stay in the part's unoptimised glue as a symbol to resolve); return the
    functions taken out, detached, in their order."""
    removed = []
    block = module.body.block
    for op in list(block.ops):
        if not isinstance(op, func.FuncOp | llvm.FuncOp) or not op.body.blocks:
            continue
        if op.sym_name.data in keep:
            continue
        if op.sym_name.data in used:
            block.insert_op_before(declaration(op), op)
        op.detach()
        removed.append(op)
    return removed


def declaration(function: Operation) -> Operation:
    """A declaration of the function `function` (a `func.func` or an `llvm.func`)."""
    if isinstance(function, func.FuncOp):
        return func.FuncOp.external(
            function.sym_name.data,
            list(function.function_type.inputs.data),
            list(function.function_type.outputs.data),
        )
    assert isinstance(function, llvm.FuncOp)
    return llvm.FuncOp(
        function.sym_name.data, function.function_type, linkage=llvm.LinkageAttr("external")
    )


def part_module(
    module: ModuleOp, functions: Sequence[Operation], used: Collection[str]
) -> ModuleOp:
    """A new module holding `functions` (detached by `keep_only`), a copy of every
    declaration of `module` and a declaration of each of its functions in `used` (those
    `functions` call)."""
    taken = {op.sym_name.data for op in functions}  # type: ignore[attr-defined]
    ops: list[Operation] = []
    for op in module.ops:
        if not isinstance(op, func.FuncOp | llvm.FuncOp) or op.sym_name.data in taken:
            continue
        if not op.body.blocks:
            ops.append(op.clone())
        elif op.sym_name.data in used:
            ops.append(declaration(op))
    return ModuleOp([*ops, *functions])
