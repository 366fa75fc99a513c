"""A native compile in two processes from the loops on.

A large function's lowering from the loops to LLVM IR, the IR's translation and LLVM
take most of its compile, one function at a time. `split` divides the loops-level
module (`arignote.lowering.function_parts`): a forked child lowers and compiles one
part (the shape function and some kernels) while this process does the other (the
function and the other kernels), and the objects are loaded into one engine
(`arignote.runtime.cpu.NativeModule.from_parts`).

With the kernel cache, each process names its kernels by their digests
(`arignote.runtime.kernelcache`); the child sends the names of the kernels this
process's function calls before it compiles (`ForkedWork.message`), and this process
calls them by those names. A child that fails or is stuck leaves its part to this
process (the functions it had are kept, detached, for that), and a load that fails
with the kernel cache's objects is compiled again without it: never a wrong result,
at worst the time of a compile in one process.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

    from arignote.lowering.function_parts import Split
    from arignote.runtime.cpu import ForkedWork, NativeModule, PartCode, PartNames

ENABLED = True
"""Whether `split` may split a compile (tests turn it off to compare)."""


@dataclass(frozen=True)
class TwoParts:
    """How a function is compiled in two processes (`split`)."""

    parts: Split
    split_glue: int | None
    """The glue size from which a part's glue is compiled apart (`cpu.compile_part`):
    0 when the function's whole glue would be (its parts' glue then always is), else
    the function's threshold (each part's glue, smaller, then stays with its kernels)."""


def split(module: ModuleOp, symbol: str, split_glue: int | None) -> TwoParts | None:
    """How to compile the loops-level `module` of `@symbol` in two processes, or None
    when it is compiled in one: `ENABLED` off, no fork here (`cpu._fork_parts`), a
    module that calls back into Python (prints, custom ops: their symbols are this
    process's), or one too small (`function_parts.MIN_COST`). `split_glue`: the glue
    size from which the glue is compiled apart (`config.glue_o0_minsize`; None:
    `cpu.SPLIT_GLUE_INSTRUCTIONS`), against `Split.glue_instructions` (`Split.glue_apart`)."""
    from xdsl.dialects import func, llvm

    from arignote.lowering.function_parts import split_functions
    from arignote.runtime import cpu
    from arignote.runtime.native import calls_back

    if not ENABLED or not cpu._fork_parts():
        return None
    names = [op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp | llvm.FuncOp)]
    if calls_back(names):
        return None
    threshold = cpu.SPLIT_GLUE_INSTRUCTIONS if split_glue is None else split_glue
    found = split_functions(module, symbol, glue_apart_from=threshold)
    if found is None:
        return None
    return TwoParts(found, 0 if found.glue_apart else threshold)


def compiler(
    module: ModuleOp, plan: TwoParts, kernel_cache: str | None
) -> Callable[[Callable[[], Sequence[str]]], NativeModule]:
    """What compiles `module` split as `parts`, with the entry points' IR texts that the
    function it is given makes (`arignote.runtime.native.compile_function`'s `module`)."""

    def compile_(entries: Callable[[], Sequence[str]]) -> NativeModule:
        return compile_in_two(module, plan, entries, kernel_cache)

    return compile_


def compile_in_two(
    module: ModuleOp,
    plan: TwoParts,
    entries: Sequence[str] | Callable[[], Sequence[str]],
    kernel_cache: str | None,
) -> NativeModule:
    """Lower the loops-level `module` to LLVM and compile it, `plan.parts.child` in a
    forked child (module doc); the IR texts `entries` (or the function making them,
    called once the child is at work) go with this process's part."""
    from arignote.lowering.driver import loops_to_llvm
    from arignote.lowering.function_parts import keep_only, part_module
    from arignote.runtime import cpu, kernelcache

    parts = plan.parts
    extra_ir = _once(entries)

    def child_work(send: Callable[[Any], None]) -> tuple[PartCode, _Counts]:
        before = _Counts.now()
        keep_only(module, parts.child, parts.parent_exports)
        code = _ChildPart(module, plan).compile(kernel_cache, send)
        return code, _Counts.now().minus(before)

    def own_part(
        names: PartNames | Callable[[], PartNames] | None, cache: str | None = kernel_cache
    ) -> PartCode:
        return cpu.compile_part(
            module, extra_ir(), parts.parent_exports, cache, names, split_glue=plan.split_glue
        )

    child = cpu.ForkedWork.start(child_work)
    # the child's functions, taken out of this module: this process's if the child fails
    removed = keep_only(module, parts.parent, parts.child_exports)
    spare = _ChildPart(part_module(module, removed, parts.parent_exports), plan)
    child_code = None
    names = None

    def child_names() -> PartNames:
        # (called once this part's LLVM IR is made: the child meanwhile makes its own)
        nonlocal child_code, names
        names = None if child is None else child.message()
        if names is None:  # the child failed (or none started) before it named its kernels
            child_code = spare.compile(kernel_cache)
            names = child_code.names
        return names

    try:
        loops_to_llvm(module)
        own = own_part(child_names)
    finally:
        result = _result(child)
    if child_code is None and result is not None:
        child_code, counts = result
        counts.add_here()  # what the child's kernel cache and cache files counted
    if child_code is None:  # the child failed after it named them: the same names here
        child_code = spare.compile(kernel_cache)
        if child_code.names != names:  # (the same kernels named, another batch chosen)
            own = own_part(child_code.names)
    try:
        return cpu.NativeModule.from_parts([child_code, own])
    except Exception as error:
        if kernel_cache is None or not (child_code.batches or own.batches):
            raise
        kernelcache.forget(kernel_cache, [*child_code.batches, *own.batches], error)
    return cpu.NativeModule.from_parts([spare.compile(None), own_part(None, None)])


def _once(texts: Sequence[str] | Callable[[], Sequence[str]]) -> Callable[[], Sequence[str]]:
    """A function returning `texts`, or what the function `texts` returns on its first
    call (made once)."""
    made: list[Sequence[str]] = []

    def get() -> Sequence[str]:
        if not made:
            made.append(texts() if callable(texts) else texts)
        return made[0]

    return get


def _result(child: ForkedWork | None) -> Any:
    """The child's result (None: none started, or it failed), this compile's young
    garbage collected while it still works."""
    if child is None:
        return None
    if child.running():
        _collect_young()
    return child.result()


def _collect_young() -> None:
    """Collect the young garbage now, while this process waits for the child: the
    cyclic collector is paused during a compile (`arignote.compile.gcpause`), and its
    first run after the compile met every cycle the graph passes and the lowering left
    (the README's training function: 34,000 objects, 18 ms, after its compile)."""
    import gc

    gc.collect(0)


@dataclass(frozen=True)
class _Counts:
    """The kernel cache's and the cache files' counts (`kernelcache.STATS`,
    `cachefile.STATS`): a child's are added to this process's, so that the counts of a
    compile in two processes are those of one in a single process."""

    kernels: dict[str, int]
    files: dict[str, int]

    @classmethod
    def now(cls) -> _Counts:
        from arignote.runtime import cachefile, kernelcache

        return cls(dict(kernelcache.STATS), dict(cachefile.STATS))

    def minus(self, before: _Counts) -> _Counts:
        return _Counts(
            {k: n - before.kernels.get(k, 0) for k, n in self.kernels.items()},
            {k: n - before.files.get(k, 0) for k, n in self.files.items()},
        )

    def add_here(self) -> None:
        from arignote.runtime import cachefile, kernelcache

        for k, n in self.kernels.items():
            kernelcache.STATS[k] = kernelcache.STATS.get(k, 0) + n
        for k, n in self.files.items():
            if n:
                cachefile.STATS[k] += n


class _ChildPart:
    """The child's part: a module holding the child's functions (and declaring what they
    call), lowered to LLVM on its first `compile`: in the child, or in this process when
    the child does not do it."""

    def __init__(self, module: ModuleOp, plan: TwoParts) -> None:
        self.module = module
        self.plan = plan
        self.lowered = False

    def compile(
        self, kernel_cache: str | None, send: Callable[[Any], None] | None = None
    ) -> PartCode:
        from arignote.lowering.driver import loops_to_llvm
        from arignote.runtime import cpu

        if not self.lowered:
            loops_to_llvm(self.module)
            self.lowered = True
        exports, glue = self.plan.parts.child_exports, self.plan.split_glue
        return cpu.compile_part(self.module, (), exports, kernel_cache, None, send, glue)
