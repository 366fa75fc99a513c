"""`merge-identical-functions`: one copy of each internal `llvm.func` body.

The layers of a network lower to the same loop nests over different buffers, and
`parallelize` outlines each parallel loop into its own task, `@f__par<k>` (with its
body, `@f__par<k>__body`): a 32-layer MLP's training step had 388 such functions
(20 once merged), which LLVM optimized and compiled one by one (half the module).
This pass (not yet in `LLVM_LOWERING`: see `arignote.lowering.pipelines`) keeps one
function of each body and points every reference to the others
(`llvm.call`, `llvm.mlir.addressof`) at it, so that LLVM compiles each distinct kernel
once per module.

Two internal `llvm.func`s are identical when they are the same with their names left
out: same signature, argument attributes and body, op for op (the calls they make
included, by callee name; values and blocks compared by position). Merging the bodies
first makes their tasks identical, which then merge in the next round; rounds repeat
until nothing merges. The function kept is the first of its group in the module; the
module's public functions never merge. A
merged body called from one task only stays a single-call helper, inlined into its task
as before (`arignote.runtime.cpu.single_call_helpers`): the code of each kernel is what
it was, there is just one of it.

The work is linear in the module: each function is turned into a hashable key (no
printing: printing the functions took longer than LLVM saved) and looked up in a
dictionary; a later round computes again only the keys of the functions whose calls
it redirected.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass


def body_key(function: llvm.FuncOp) -> Hashable:
    """The function with its name left out, as a hashable value: its other properties
    and attributes, then for each op of its body in order its class, properties,
    attributes, result types, operands and successors (values and blocks numbered in
    order of definition). xDSL attributes hash and compare by value; no printing."""
    ops = blocks_key(function, {})
    assert ops is not None
    properties = tuple(sorted((k, v) for k, v in function.properties.items() if k != "sym_name"))
    return properties, tuple(sorted(function.attributes.items())), ops


def blocks_key(
    op: Operation,
    values: dict[int, int],
    closed: bool = False,
    first: Callable[[dict[int, int]], Hashable] | None = None,
) -> tuple[Hashable, ...] | None:
    """The blocks nested in `op` as a hashable value: each block's argument types, then
    `op_key` of each of its ops (values numbered in order of definition, after those
    `values` already numbers; blocks in walk order), after `first(block numbers)` when
    given (the key of `op` itself). With `closed`, None when an op uses a value defined
    neither in them nor in `values`."""
    blocks = {id(block): k for k, block in enumerate(op.walk_blocks())}
    items: list[Hashable] = [first(blocks)] if first is not None else []
    for block in op.walk_blocks():
        for arg in block.args:
            values[id(arg)] = len(values)
        items.append(tuple(arg.type for arg in block.args))
        for inner in block.ops:
            if closed and any(id(o) not in values for o in inner.operands):
                return None
            items.append(op_key(inner, values, blocks))
    return tuple(items)


def op_key(op: Operation, values: dict[int, int], blocks: dict[int, int]) -> Hashable:
    """An op of a function body as a hashable value (see `body_key`); ops with regions
    are left to the blocks of those regions, listed after them."""
    # properties and attributes in their order in the op (ops built alike list them
    # alike; ops listing them otherwise just do not merge)
    results = op.results
    key = (
        type(op),
        tuple(op.properties.items()) if op.properties else (),
        tuple(op.attributes.items()) if op.attributes else (),
        tuple([r.type for r in results]),
        tuple([values.get(id(o), -1) for o in op.operands]),
        tuple([blocks[id(b)] for b in op.successors]) if op.successors else (),
        tuple([blocks[id(b)] for r in op.regions for b in r.blocks]) if op.regions else (),
    )
    for result in results:
        values[id(result)] = len(values)
    return key


def _mergeable(op: object) -> bool:
    return (
        isinstance(op, llvm.FuncOp)
        and op.linkage.linkage.data == "internal"
        and bool(op.body.blocks)
    )


def _duplicates(module: ModuleOp, keys: dict[str, Hashable]) -> dict[str, str]:
    """For each internal function identical to an earlier one, that one's name.
    `keys` holds the key of each function already computed (missing: compute it)."""
    kept: dict[Hashable, str] = {}
    renamed: dict[str, str] = {}
    for op in module.ops:
        if not _mergeable(op):
            continue
        assert isinstance(op, llvm.FuncOp)
        name = op.sym_name.data
        key = keys.get(name)
        if key is None:
            key = keys[name] = body_key(op)
        first = kept.setdefault(key, name)
        if first != name:
            renamed[name] = first
    return renamed


def _redirect(module: ModuleOp, renamed: dict[str, str]) -> set[str]:
    """Point the calls and addresses of the functions in `renamed` at their copies;
    the names of the functions changed."""
    changed = set()
    for function in module.ops:
        if not isinstance(function, llvm.FuncOp):
            continue
        for op in function.walk():
            if isinstance(op, llvm.CallOp) and op.callee is not None:
                target = renamed.get(op.callee.string_value())
                if target is not None:
                    op.callee = SymbolRefAttr(target)
                    changed.add(function.sym_name.data)
            elif isinstance(op, llvm.AddressOfOp):
                target = renamed.get(op.global_name.string_value())
                if target is not None:
                    op.global_name = SymbolRefAttr(target)
                    changed.add(function.sym_name.data)
    return changed


def merge_identical_functions(module: ModuleOp) -> int:
    """Merge the identical internal functions of `module` (module doc); how many
    functions were erased. A round computes the keys of only the functions the round
    before changed."""
    erased = 0
    keys: dict[str, Hashable] = {}
    while renamed := _duplicates(module, keys):
        for name in _redirect(module, renamed):
            keys.pop(name, None)
        for op in list(module.ops):
            if isinstance(op, llvm.FuncOp) and op.sym_name.data in renamed:
                module.body.block.erase_op(op)
                erased += 1
    return erased


class MergeIdenticalFunctionsPass(ModulePass):
    """Keep one of each set of identical internal `llvm.func`s (module doc)."""

    name = "merge-identical-functions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        merge_identical_functions(op)
