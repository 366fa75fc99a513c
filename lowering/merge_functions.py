"""`merge-identical-functions`: one copy of each internal `llvm.func` body.

The layers of a network lower to the same loop nests over different buffers, and
`parallelize` outlines each parallel loop into its own task, `@f__par<k>` (with its
body, `@f__par<k>__body`): a 32-layer MLP's training step had 388 such functions, of
19 distinct bodies, which LLVM optimized and compiled one by one (half the module).
This pass keeps one function of each body and points every reference to the others
(`llvm.call`, `llvm.mlir.addressof`) at it, so that LLVM compiles each distinct kernel
once per module.

Two internal `llvm.func`s are identical when they print the same with their names left
out: same signature, argument attributes and body, op for op (the calls they make
included, by callee name). Merging the bodies first makes their tasks identical, which
then merge in the next round; rounds repeat until nothing merges. The function kept is
the first of its group in the module; the module's public functions never merge. A
merged body called from one task only stays a single-call helper, inlined into its task
as before (`arignote.runtime.cpu.single_call_helpers`): the code of each kernel is what
it was, there is just one of it.

The work is linear in the module: each function is printed once per round and looked up
in a dictionary by its text.
"""

from __future__ import annotations

from io import StringIO

from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr
from xdsl.passes import ModulePass
from xdsl.printer import Printer


def _body_key(function: llvm.FuncOp) -> str:
    """The function as printed with its name left out."""
    name = function.sym_name
    function.sym_name = StringAttr("")
    try:
        stream = StringIO()
        Printer(stream=stream).print_op(function)
        return stream.getvalue()
    finally:
        function.sym_name = name


def _mergeable(op: object) -> bool:
    return (
        isinstance(op, llvm.FuncOp)
        and op.linkage.linkage.data == "internal"
        and bool(op.body.blocks)
    )


def _duplicates(module: ModuleOp) -> dict[str, str]:
    """For each internal function identical to an earlier one, that one's name."""
    kept: dict[str, str] = {}
    renamed: dict[str, str] = {}
    for op in module.ops:
        if not _mergeable(op):
            continue
        assert isinstance(op, llvm.FuncOp)
        name = op.sym_name.data
        first = kept.setdefault(_body_key(op), name)
        if first != name:
            renamed[name] = first
    return renamed


def _redirect(module: ModuleOp, renamed: dict[str, str]) -> None:
    """Point the calls and addresses of the functions in `renamed` at their copies."""
    for op in module.walk():
        if isinstance(op, llvm.CallOp) and op.callee is not None:
            target = renamed.get(op.callee.string_value())
            if target is not None:
                op.callee = SymbolRefAttr(target)
        elif isinstance(op, llvm.AddressOfOp):
            target = renamed.get(op.global_name.string_value())
            if target is not None:
                op.global_name = SymbolRefAttr(target)


def merge_identical_functions(module: ModuleOp) -> int:
    """Merge the identical internal functions of `module` (module doc); how many
    functions were erased."""
    erased = 0
    while renamed := _duplicates(module):
        _redirect(module, renamed)
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
