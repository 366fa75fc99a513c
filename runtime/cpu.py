"""CPU JIT: an `llvm`-dialect module → host machine code via llvmlite's MCJIT.

`NativeModule(module_op)` translates a `builtin.module` holding only `llvm.func` /
`llvm.mlir.global` ops with xDSL's `convert_module`, links in any extra LLVM IR (the
CPython entry points of `arignote.runtime.entry`), optimises it at O3 for the host CPU
(loop vectorisation on, see `TUNING`), compiles it to an object file (`object_code`) and loads
that into MCJIT; `NativeModule.from_object` loads an object file kept by the compile
cache (`arignote.runtime.cache`) without compiling. `address(name)` gives a function's
entry point for `ctypes.CFUNCTYPE`.

Calling convention (set by `convert-func-to-llvm`): each memref argument is ONE pointer to
a descriptor struct in the caller's memory, scalars pass by value (`index` as int64), the
result is one scalar (typically an int32 error code) or nothing. `memref_descriptor(a)`
builds the descriptor of a numpy array; pass it as `ctypes.byref(desc)`. The descriptor
holds a raw pointer to the array's data, not a reference: the caller keeps the array
alive until the call returns.

```python
nm = NativeModule(llvm_module)
fn = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p)(nm.address("f"))
x, y = as_native_array(x), np.empty(...)
dx, dy = memref_descriptor(x), memref_descriptor(y)
status = fn(ctypes.byref(dx), ctypes.byref(dy))
```
"""

from __future__ import annotations

import ctypes
import ctypes.util
import re
import sys
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from itertools import islice
from typing import Any, Self

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from arignote.runtime.blas import load_blas, needs_blas
from arignote.runtime.mpi import load_mpi, needs_mpi
from arignote.runtime.printing import SYMBOL_PREFIX as PRINT_PREFIX
from arignote.runtime.printing import register_print_symbols
from arignote.runtime.pyops import SYMBOL_PREFIX as PYOP_PREFIX
from arignote.runtime.pyops import register_symbols as register_pyop_symbols

MAX_RANK = 8
"""Highest array rank `memref_descriptor` supports."""

OPT_LEVEL = 3

TUNING = {
    "loop_vectorization": True,
    "slp_vectorization": False,
    "loop_unrolling": False,
    "loop_interleaving": True,
}
"""The O3 pipeline's tuning options (`llvm.PipelineTuningOptions`).

- The loop vectoriser (with interleaving) is what makes ag-to-loops' loops fast.
- The SLP (straight-line) vectoriser is off: it took a sixth of the optimisation time
  of the logreg step, and the loops arignote emits leave it nothing to do (the logreg,
  elemwise, mlp, rnn and call-overhead workloads ran as fast without it, measured side
  by side; docs/benchmarks.md, compile time).
- Loop unrolling is off: LLVM 22's O3 with the loop-unroll pass AND loop vectorisation
  does not finish on a fully unrollable 32-step integer-power loop (exponentiation by
  squaring, as ag-to-loops emits); the vectoriser still interleaves.
- Interleaving and the vector epilogue stay on although each costs compile time: on the
  logreg step, `--enable-epilogue-vectorization=false` took 20 ms off O3 and 25 ms off
  code generation, but the step ran 5 % longer (its 784- and 400-long loops leave a
  16-element remainder after the 64-element interleaved body, which then runs scalar);
  tail folding (`--prefer-predicate-over-epilogue=predicate-else-scalar-epilogue`: one
  masked loop, no interleaving) took 28 + 35 ms off and made logreg and elemwise 14 %
  and 12 % slower; `--force-target-max-vector-interleave=2` saved nothing measurable.
  (Each built three times with and without, in one process, timed interleaved, thread CPU
  time; docs/benchmarks.md, compile time.)"""

LLVM_OPTIONS = ("--disable-lsr",)
"""LLVM command-line options set once in the process (`llvm.set_option`).

`--disable-lsr` turns off Loop Strength Reduction in code generation: on the logreg
training step it took a third of code generation's time (and made the code larger)
while the loops ag-to-loops emits, indexed with one induction variable on x86's scaled
addressing, ran no slower without it (logreg, elemwise and mlp steps measured side by
side; see docs/benchmarks.md, compile time). LLVM's options are global to the process:
another user of llvmlite in it compiles without LSR too.

Evaluated and not set: `-fast-isel` (code generation 15 ms shorter on the logreg step,
the step 11 % slower); `-regalloc=basic` (15 ms shorter, the step 20–35 % slower);
`--enable-misched=false`, `--enable-loop-load-elim=false`,
`--enable-constraint-elimination=false` (no measurable compile time saved; the last two
leave the code of every benchmark module byte for byte the same); the target machine at
O2 instead of O3 (code generation as long)."""


@cache
def _initialize() -> None:
    """Initialise LLVM's native target once, and make libm's symbols visible to MCJIT."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    for option in LLVM_OPTIONS:
        llvm.set_option("", option)
    # libm by its usual name first: find_library runs `ldconfig -p` (milliseconds)
    for name in ("libm.so.6", "libm.dylib"):
        try:
            llvm.load_library_permanently(name)
            return
        except RuntimeError:
            continue
    libm = ctypes.util.find_library("m")
    if libm is not None:
        llvm.load_library_permanently(libm)


@cache
def host_cpu() -> tuple[str, str, str]:
    """The process's target triple, host CPU name and features (asked of LLVM once)."""
    _initialize()
    return (
        llvm.get_process_triple(),
        llvm.get_host_cpu_name(),
        llvm.get_host_cpu_features().flatten(),
    )


def host_target_machine(opt: int = OPT_LEVEL) -> llvm.TargetMachine:
    """A new TargetMachine for the host CPU and its features, at `opt` (O3).

    A fresh one per module: MCJIT takes ownership of the machine it is given.
    """
    triple, cpu, features = host_cpu()
    target = llvm.Target.from_triple(triple)
    return target.create_target_machine(cpu=cpu, features=features, opt=opt, codemodel="jitdefault")


INLINE_SINGLE_CALL = True
"""Whether the private functions called from one place are marked `alwaysinline`
(`single_call_helpers`; see `arignote.lowering.llvm.llvm_attributes`)."""


def llvm_ir_text(module_op: ModuleOp) -> str:
    """The LLVM IR (unoptimised) of an `llvm`-dialect module, its functions with the
    attributes of `arignote.lowering.llvm.llvm_attributes` (512-bit vectors preferred, the
    private functions called once inlined) and the private ones with internal linkage
    (`internal_functions`)."""
    kernels, internal = kernel_functions(module_op), internal_functions(module_op)
    return str(_llvm_ir_module(module_op, kernels, internal))


def _llvm_ir_module(
    module_op: ModuleOp,
    kernels: frozenset[str],
    internal: frozenset[str],
    helpers: frozenset[str] | None = None,
) -> ir.Module:
    """`llvm_ir_text`'s module, as llvmlite's IR objects (`kernels`: `kernel_functions`,
    `internal`: `internal_functions`, which the caller has; `helpers`:
    `single_call_helpers`, when it has them too)."""
    from xdsl.backend.llvm.convert import convert_module

    from arignote.lowering.llvm.llvm_attributes import add_function_attributes

    _initialize()
    triple = llvm.get_process_triple()
    if not INLINE_SINGLE_CALL:
        inline: frozenset[str] = frozenset()
    elif helpers is None:
        inline = single_call_helpers(module_op, internal)
    else:
        inline = helpers
    module = convert_module(module_op, fallback_target_triple=triple)
    for function in module.functions:
        # xDSL's translation drops `llvm.func` linkage: internal again, so that LLVM
        # deletes each once inlined into its callers instead of compiling it for callers
        # outside the module that do not exist
        if function.name in internal:
            function.linkage = "internal"
    return add_function_attributes(module, inline - kernels, kernels)


SPLIT_GLUE_INSTRUCTIONS = 3000
"""A module whose glue has at least this many LLVM instructions is compiled as two
objects (`split_ir_texts`): its kernels at O3, its glue unoptimised with fast
instruction selection (`GLUE_OPT_LEVEL`).

The glue is what `outline-kernels` leaves in `@f` and `@f__shape`: shape arithmetic,
allocations, the kernels' descriptors and calls, no loops but the one freeing the
buffers when an allocation fails. It grows with the graph (a 64-layer MLP's: 16,000 lines
of IR against 2,000 for all its kernels), and LLVM's O3 and code generation spent most
of a deep network's compile time on it, for code that runs once per call. Split, a
64-layer MLP's LLVM time fell from 1.8 s to 0.5 s for 1–8 % more time per call (471–501
against 508 us on 8 x 64 batches: the glue's instructions, about 2.5 ns each at O0);
below this size the whole module is compiled at O3, so small functions (the benchmarks'
logreg and mlp steps) lose nothing (docs/benchmarks.md, "The glue compiled apart")."""

GLUE_OPT_LEVEL = 0
"""The optimisation level of the glue's object: the O0 pipeline (the always-inliner:
`@f__noalias` into `@f`) and code generation at `CodeGenOptLevel::None` (fast
instruction selection, the fast register allocator), which took 0.27 s on a 64-layer
MLP's glue against 2.2 s at O3 and 2.0 s at O1 (whose IR passes alone took 1 s)."""


PARALLEL_MIN_INSTRUCTIONS = 1500
"""A module with at least this many instructions to compile at O3 (its glue too when
the glue is not compiled apart) is compiled in two processes when it can
(`_fork_parts`): `ir_parts` splits its kernels into two halves of about equal cost, one
compiled in a forked child. Below it, a fork (about 10 ms) costs more than it saves."""

GLUE_COST = 1 / 8
"""The cost of a glue instruction at `GLUE_OPT_LEVEL` relative to one at O3 (a 64-layer
MLP's glue took 0.27 s against 2.2 s), which `ir_parts` weighs the halves with."""


@dataclass(frozen=True)
class IRParts:
    """The LLVM IR texts a module is compiled from (`ir_parts`), each into an object of
    its own, loaded into one engine: `forked` at O3 in a forked child when one can run,
    `here` at O3 in this process, `glue` at `glue_opt` in this process. The
    entry points (`NativeModule`'s `extra_ir`) are linked into the glue, or into `here`
    when the glue is not apart. `here` is None only when the glue is apart and the
    kernels all go to the child (or, with the kernel cache, none is compiled)."""

    here: str | None
    glue: str | None = None
    forked: str | None = None
    glue_opt: int = GLUE_OPT_LEVEL
    """The optimisation level of `glue` (O3 where the kernel cache puts a small glue
    apart, `arignote.runtime.kernelcache`)."""

    @property
    def texts(self) -> tuple[str, ...]:
        """The texts, in the order of the objects: forked, here, glue."""
        return tuple(t for t in (self.forked, self.here, self.glue) if t is not None)

    def renamed(self, renames: dict[str, str]) -> IRParts:
        """These parts with each reference to a global of `renames` renamed."""
        if not renames:
            return self

        def rename(text: str | None) -> str | None:
            return None if text is None else _declared_once(rename_globals(text, renames))

        return IRParts(rename(self.here), rename(self.glue), rename(self.forked), self.glue_opt)


_REFERENCE = re.compile(r'@"([\w.$-]+)"')
"""A reference to a global in llvmlite's IR text: llvmlite quotes every global name
(escaping `"` and `\\` inside), and `"` never follows an identifier character elsewhere
in LLVM IR (a string constant's `"` is escaped), so a match is exactly one reference."""


_DECLARATION = re.compile(r'^declare [^@\n]*@"([\w.$-]+)"\(.*\n?', re.MULTILINE)


def _declared_once(text: str) -> str:
    """`text` without the declarations of a function it defines or declared before: a
    part's own function and the other part's that renaming gave the same name (one
    kernel group's code, `arignote.runtime.kernelcache`: the same signature)."""
    defined = _defined_names(text)
    seen: set[str] = set()

    def keep(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in defined or name in seen:
            return ""
        seen.add(name)
        return match.group(0)

    return _DECLARATION.sub(keep, text)


def rename_globals(text: str, renames: dict[str, str]) -> str:
    """`text` (llvmlite's LLVM IR) with each reference to a global of `renames` renamed
    (`_REFERENCE`)."""

    def replace(match: re.Match[str]) -> str:
        name = renames.get(match.group(1))
        return match.group(0) if name is None else f'@"{name}"'

    return _REFERENCE.sub(replace, text)


def split_ir_texts(module_op: ModuleOp, split_glue: int | None = None) -> tuple[str, ...]:
    """The LLVM IR of `module_op` (`llvm_ir_text`) as one text, or, when its glue has
    at least `split_glue` instructions (None: `SPLIT_GLUE_INSTRUCTIONS`), as two: the
    kernels' (what they call included, those the glue calls with external linkage) and
    the glue's, which declares them (`ir_parts` without halves)."""
    return ir_parts(module_op, split_glue).texts


def ir_parts(
    module_op: ModuleOp,
    split_glue: int | None = None,
    halves: bool = False,
    exported: Collection[str] | None = None,
    layout: ModuleLayout | None = None,
) -> IRParts:
    """The parts `module_op` is compiled from. When its glue (`_glue`) has at least
    `split_glue` instructions (None: `SPLIT_GLUE_INSTRUCTIONS`), the glue is a part of
    its own and the kernels another (`forked`). With `halves` (two processes will
    compile) and at least `PARALLEL_MIN_INSTRUCTIONS` to compile at O3, the kernels are
    split into two halves of about equal cost (`_halves`; a kernel with the helpers it
    calls stays whole), one `forked`, the other `here` (with the glue when it is not
    apart). A module without kernels (`kernel_functions`) or with global variables (the
    profiler's counters) is one part. `exported` (not None for a module that is a part
    of a function's code, `compile_part`): the functions the other part calls (kernels,
    with external linkage); such a module is laid out in parts even without kernels.
    `layout`: `module_layout(module_op, split_glue, exported)` when the caller has it."""
    if layout is None:
        layout = module_layout(module_op, split_glue, exported)
    kernels = layout.kernels
    if kernels is None:
        return IRParts(str(layout.module))
    module, references, glue = layout.module, layout.references, layout.glue
    if halves and layout.o3_size >= PARALLEL_MIN_INSTRUCTIONS:
        forked = _halves(references, kernels, layout.sizes, layout.weighed_glue)
    else:
        forked = kernels if layout.apart else frozenset()
    if not forked and not layout.apart:
        return IRParts(str(module))
    here = kernels - forked if layout.apart else frozenset(references) - forked
    exports = layout.exported
    return IRParts(
        _render(module, here, _called_from_outside(references, here) | exports) if here else None,
        _render(module, glue, frozenset()) if layout.apart else None,
        _render(module, forked, _called_from_outside(references, forked) | exports)
        if forked
        else None,
    )


@dataclass(frozen=True)
class ModuleLayout:
    """What compiling a module in parts needs to know of it (`module_layout`)."""

    module: ir.Module
    """Its LLVM IR (`_llvm_ir_module`)."""
    references: dict[str, set[str]]
    """Per function it defines, the symbols it calls or takes the address of."""
    kernels: frozenset[str] | None
    """The functions compiled at O3 apart from the glue: the kernels, the parallel
    loops' tasks, what they call; None for a module compiled whole (no kernels, or
    global variables: the profiler's counters)."""
    glue: frozenset[str] = frozenset()
    """`_glue`: the entry functions and the helpers inlined into them."""
    sizes: dict[str, int] = field(default_factory=dict)
    """The instructions of each function."""
    apart: bool = False
    """Whether the glue reaches the split size (compiled at `GLUE_OPT_LEVEL`)."""
    exported: frozenset[str] = frozenset()
    """The functions another part of the function's code calls (`compile_part`)."""

    @property
    def glue_size(self) -> int:
        return sum(self.sizes.get(name, 0) for name in self.glue)

    @property
    def weighed_glue(self) -> float:
        """The glue's size weighed by its optimisation level's cost (`GLUE_COST`)."""
        return self.glue_size * (GLUE_COST if self.apart else 1)

    @property
    def o3_size(self) -> int:
        """The instructions compiled at O3: the kernels', the glue's unless apart."""
        kernels = self.kernels or frozenset()
        return sum(self.sizes.get(n, 0) for n in kernels) + (0 if self.apart else self.glue_size)


def module_layout(
    module_op: ModuleOp, split_glue: int | None = None, exported: Collection[str] | None = None
) -> ModuleLayout:
    """The `ModuleLayout` of the `llvm`-dialect `module_op`, whose glue is apart from
    `split_glue` instructions (None: `SPLIT_GLUE_INSTRUCTIONS`). With `exported` not
    None (a part of a function's code, `compile_part`), those functions are kernels the
    other part calls, and the module is laid out in parts even without kernels of its
    own (its glue is never compiled at O3 for lack of them)."""
    from xdsl.dialects.llvm import GlobalOp

    outlined, internal = kernel_functions(module_op), internal_functions(module_op)
    part = exported is not None
    exported = frozenset(exported or ())
    internal -= exported
    calls, references = _symbol_uses(module_op)
    helpers = _called_once(internal, calls)
    module = _llvm_ir_module(module_op, outlined, internal, helpers)
    if any(isinstance(op, GlobalOp) for op in module_op.ops) or not (outlined or part):
        return ModuleLayout(module, references, None)
    glue = _glue(references, helpers - outlined, exported)
    sizes = {f.name: _size(f, f.name in glue) for f in module.functions}
    glue_size = sum(sizes.get(name, 0) for name in glue)
    apart = glue_size >= (SPLIT_GLUE_INSTRUCTIONS if split_glue is None else split_glue)
    kernels = frozenset(references) - glue
    return ModuleLayout(module, references, kernels, glue, sizes, apart, exported)


ALLOC_CALL_INSTRUCTIONS = 12
"""The instructions a glue's call of `@arignote_alloc` replaces, plus 4 (a saturating
product) for each of its two sizes that is not a constant; a call of `@arignote_free`
replaces 6 (`arignote.lowering.llvm.checked_alloc`). `module_layout` counts them in the
glue's size: `SPLIT_GLUE_INSTRUCTIONS` was measured on glue with its allocations written
out, and at O3 LLVM inlines the helpers back, so a function's glue goes apart from about
the size it did before the helpers, and its O3 cost is weighed as it is."""

FREE_CALL_INSTRUCTIONS = 6


def _size(function: ir.Function, glue: bool) -> int:
    """The instructions of `function`; a glue's calls of the allocation helpers count for
    those they replace too (`ALLOC_CALL_INSTRUCTIONS`)."""
    from arignote.lowering.llvm.checked_alloc import ALLOC_HELPER, ALLOC_SIZES, FREE_HELPER

    size = 0
    for block in function.blocks:
        size += len(block.instructions)
        if glue:
            for instruction in block.instructions:
                callee = getattr(getattr(instruction, "callee", None), "name", "")
                if callee == ALLOC_HELPER:
                    sizes = instruction.args[ALLOC_SIZES]
                    dynamic = sum(not isinstance(v, ir.Constant) for v in sizes)
                    size += ALLOC_CALL_INSTRUCTIONS + 4 * dynamic
                elif callee == FREE_HELPER:
                    size += FREE_CALL_INSTRUCTIONS
    return size


def _called_from_outside(references: dict[str, set[str]], part: frozenset[str]) -> set[str]:
    """The functions of `part` that functions outside it call or take the address of."""
    return {n for f, names in references.items() if f not in part for n in names} & part


def _halves(
    references: dict[str, set[str]],
    kernels: frozenset[str],
    sizes: dict[str, int],
    here_start: float,
) -> frozenset[str]:
    """The kernels (and what they call) to compile in the child: whole groups of
    functions that call each other (a kernel and its `__noalias` body, a parallel task
    and its body), the largest first, each put in the half with less work, the other
    half starting with `here_start` (the glue's weighed size)."""
    weighed = sorted(
        call_groups(references, kernels),
        key=lambda names: (-sum(sizes.get(n, 0) for n in names), names),
    )
    here, forked, chosen = here_start, 0.0, set()
    for names in weighed:
        size = sum(sizes.get(n, 0) for n in names)
        if forked < here:
            forked += size
            chosen.update(names)
        else:
            here += size
    return frozenset(chosen)


def call_groups(references: dict[str, set[str]], kernels: frozenset[str]) -> list[list[str]]:
    """The functions of `kernels` as groups of functions that call each other or take
    each other's address (a kernel and its `__noalias` body, a parallel task and its
    body), found by union-find over `references`; each group's names sorted, the groups
    in the order of their first names (`arignote.lowering.function_parts.call_groups`)."""
    from arignote.lowering.function_parts import call_groups as groups

    return groups(references, kernels)


def _symbol_uses(module_op: ModuleOp) -> tuple[dict[str, int], dict[str, set[str]]]:
    """How many `llvm.call`s of `module_op` call each symbol (2 or more once its address
    is taken: `_called_once`), and per function it defines, the symbols it calls or
    takes the address of."""
    from xdsl.dialects.llvm import AddressOfOp, CallOp, FuncOp

    calls: dict[str, int] = {}
    references: dict[str, set[str]] = {}
    for function in module_op.ops:
        if type(function) is FuncOp and function.body.blocks:
            names = references[function.sym_name.data] = set()
            for op in _body_ops(function):
                if type(op) is CallOp and op.callee is not None:
                    name = op.callee.string_value()
                    calls[name] = calls.get(name, 0) + 1
                    names.add(name)
                elif type(op) is AddressOfOp:
                    name = op.global_name.string_value()
                    calls[name] = 2  # used through a pointer
                    names.add(name)
    return calls, references


def _called_once(internal: frozenset[str], calls: dict[str, int]) -> frozenset[str]:
    """The functions of `internal` that `calls` (`_symbol_uses`) has called once."""
    return frozenset(name for name in internal if calls.get(name) == 1)


def _glue(
    references: dict[str, set[str]],
    inlined: Collection[str],
    exported: Collection[str] = frozenset(),
) -> frozenset[str]:
    """The glue of a module whose functions make `references`: the functions no other
    calls (`@f`, `@f__shape`: the entry points call them), the single-call helpers
    `inlined` into them (`@f__noalias`) and the allocation helpers they call
    (`arignote.lowering.llvm.checked_alloc.GLUE_HELPERS`). The rest (kernels, the
    parallel loops' tasks, whoever calls them) is compiled at O3."""
    from arignote.lowering.llvm.checked_alloc import GLUE_HELPERS

    referenced = {name for names in references.values() for name in names}
    glue = {name for name in references if name not in referenced and name not in exported}
    frontier = set(glue)
    while frontier:
        frontier = {
            n for f in frontier for n in references[f] if n in inlined or n in GLUE_HELPERS
        } - glue
        glue |= frontier
    return frozenset(glue)


def _render(module: ir.Module, keep: Collection[str], exported: Collection[str]) -> str:
    """`module` as text with only the functions in `keep` defined (the others
    declared) and those in `exported` with external linkage."""
    changed: list[tuple[ir.Function, list[ir.Block], str]] = []
    for function in module.functions:
        if function.blocks and (function.name not in keep or function.name in exported):
            changed.append((function, function.blocks, function.linkage))
            function.linkage = ""
            if function.name not in keep:
                function.blocks = []
    try:
        return str(module)
    finally:
        for function, blocks, linkage in changed:
            function.blocks, function.linkage = blocks, linkage


def single_call_helpers(
    module_op: ModuleOp, internal: frozenset[str] | None = None
) -> frozenset[str]:
    """The `internal_functions` of `module_op` (`internal` when the caller has them) that
    exactly one `llvm.call` calls and whose address is not taken: the `@f__noalias`
    bodies and the `@f__par<k>__body` functions of the parallel loops (not the
    `@f__par<k>` tasks, which the thread pool calls through a pointer)."""
    if internal is None:
        internal = internal_functions(module_op)
    return _called_once(internal, _symbol_uses(module_op)[0])


def _body_ops(function: Operation) -> Iterator[Operation]:
    """The ops of the body of `function` (an `llvm.func`): its blocks' ops (the bodies
    are flat control-flow graphs; an op with regions has its nested ops walked too),
    faster than `function.walk()`."""
    for block in function.regions[0].blocks:
        for op in block.ops:
            yield op
            if op.regions:
                yield from islice(op.walk(), 1, None)


def kernel_functions(module_op: ModuleOp) -> frozenset[str]:
    """The kernels of `module_op` (`arignote.lowering.llvm.outline_kernels`): the
    functions its callers call, which LLVM never inlines. A kernel with `noalias`
    arguments is two functions, the `@k` its callers call and `@k__noalias`, its body,
    inlined into `@k`."""
    from xdsl.dialects.llvm import FuncOp

    from arignote.lowering.llvm.convert_func_to_llvm import KERNEL_ATTRIBUTE, NOALIAS_SUFFIX

    return frozenset(
        op.sym_name.data.removesuffix(NOALIAS_SUFFIX)
        for op in module_op.ops
        if isinstance(op, FuncOp) and KERNEL_ATTRIBUTE in op.attributes
    )


def internal_functions(module_op: ModuleOp) -> frozenset[str]:
    """The names of the `llvm.func`s of `module_op` with a body and internal linkage:
    private helpers (the `@f__noalias` bodies, the outlined parallel loops) that no code
    outside the module calls."""
    from xdsl.dialects.llvm import FuncOp

    return frozenset(
        op.sym_name.data
        for op in module_op.ops
        if isinstance(op, FuncOp) and op.linkage.linkage.data == "internal" and op.body.blocks
    )


def _optimize(module: llvm.ModuleRef, machine: llvm.TargetMachine, opt: int = OPT_LEVEL) -> None:
    """LLVM's default pipeline at `opt` (O3, or the glue's `GLUE_OPT_LEVEL`)."""
    tuning = llvm.PipelineTuningOptions(speed_level=opt)
    for name, value in TUNING.items():
        setattr(tuning, name, value)
    builder = llvm.create_pass_builder(machine, tuning)
    manager = builder.getModulePassManager()
    try:
        manager.run(module, builder)
    finally:
        _dispose_pass_manager(manager)


def _dispose_pass_manager(manager: llvm.ModulePassManager) -> None:
    """Free `manager` now. llvmlite 0.50's `ModulePassManager` inherits `ObjectRef._dispose`
    (which does nothing) before `NewPassManager._dispose` (which deletes it), so closing
    or collecting it never frees the O3 pipeline: about 30 KB of native memory lost per
    compile. Freed here, then detached so that nothing frees it again."""
    from llvmlite.binding import ffi

    if type(manager)._dispose is not ffi.ObjectRef._dispose:
        manager.close()  # an llvmlite that frees it itself
        return
    ffi.lib.LLVMPY_DisposeNewModulePassManger(manager)
    manager.detach()


class NativeModule:
    """A JIT-compiled `llvm`-dialect module; keeps its execution engine alive.

    `extra_ir` are LLVM IR texts linked into the module before optimisation (e.g. the
    CPython entry points of `arignote.runtime.entry`, so that LLVM inlines the functions
    they call). The module is compiled to an object file (`object_code`, what the
    compile cache stores) and that object is loaded into MCJIT; `from_object` loads a
    stored one without compiling anything. A module whose glue has `split_glue`
    instructions or more is compiled as two objects, its kernels at O3 and its glue
    (with `extra_ir`) unoptimised; and where a forked child can compile (`_fork_parts`),
    a large module's kernels are split into two halves, one compiled there meanwhile.
    The objects are loaded into one engine (`ir_parts`, `_compile_parts`). With a
    `kernel_cache` directory, the kernels that earlier compiles (of any function, in any
    process) built are loaded from there instead of compiled, and those compiled now are
    stored there (`arignote.runtime.kernelcache`); when that fails, the module is
    compiled without it.
    """

    def __init__(
        self,
        module_op: ModuleOp,
        extra_ir: Sequence[str] = (),
        split_glue: int | None = None,
        kernel_cache: str | None = None,
    ) -> None:
        if kernel_cache is not None:
            from arignote.runtime import kernelcache

            plan = kernelcache.plan(module_op, split_glue, _fork_parts(), kernel_cache)
            if plan is not None:
                try:
                    self._build(plan.parts, extra_ir, plan)
                    return
                except kernelcache.Failed as e:  # e.g. an object LLVM refuses: compile all
                    kernelcache.fallback(plan, e)
        self._build(ir_parts(module_op, split_glue, halves=_fork_parts()), extra_ir)

    def _build(self, parts: IRParts, extra_ir: Sequence[str], plan: Any = None) -> None:
        """Compile `parts` (with the kernel cache's `plan`, a `kernelcache.Plan`, when
        given) and load the objects."""
        texts = parts.texts
        self._prepare("\n".join(texts))
        machine = host_target_machine()
        if plan is not None:
            imports, optimized, object_code, self._engine = plan.build(extra_ir, machine)
        elif len(texts) == 1:
            imports, optimized, object_code = _compile(texts[0], extra_ir, machine)
        else:
            imports, optimized, object_code = join_parts(
                texts, _compile_parts(parts, extra_ir, machine)
            )
        self.imports: tuple[str, ...] | None = imports
        """The external symbols the code uses (None when loaded from an object)."""
        self.optimized_llvm_ir: str | None = optimized
        """The LLVM IR after the O3 pipeline (None when loaded from an object)."""
        self.object_code: bytes = object_code
        """The host object file of the optimised module (or the objects of its parts,
        `pack_objects`)."""
        if plan is None:
            self._engine = _load(self.object_code, machine)

    def _prepare(self, llvm_ir: str) -> None:
        """Keep `llvm_ir`, and load or register what its code calls (BLAS, MPI, print
        and custom-op callbacks)."""
        self.llvm_ir: str | None = llvm_ir
        """The LLVM IR before optimisation (None when loaded from an object); a module
        compiled in parts (`ir_parts`): their texts, in `IRParts.texts`'s order."""
        self.needs_blas = needs_blas(llvm_ir)
        if self.needs_blas:
            load_blas()  # BlasUnavailableError names the missing library
        if needs_mpi(llvm_ir):
            load_mpi()  # DistributedError names what is missing
        if PRINT_PREFIX in llvm_ir:
            register_print_symbols(llvm_ir)
        if PYOP_PREFIX in llvm_ir:
            register_pyop_symbols(llvm_ir)

    @classmethod
    def from_parts(cls, parts: Sequence[PartCode]) -> NativeModule:
        """The module of a function's code compiled in parts (`compile_part`, in this
        process or another), its objects loaded into one engine."""
        from arignote.runtime.kernelcache import digest_of

        self = cls.__new__(cls)
        self._prepare("\n".join(text for part in parts for text in part.texts))
        defined = set().union(*(part.defined for part in parts))
        # a batch of the kernel cache that one part loads may define groups the other
        # part calls (`PartNames.digests`): every function of such a group is defined
        served = set().union(*(part.names.digests for part in parts))
        imported = {n for p in parts for n in p.imports} - defined
        self.imports = tuple(sorted(n for n in imported if digest_of(n) not in served))
        self.optimized_llvm_ir = "\n".join(part.optimized for part in parts)
        objects = list(dict.fromkeys(o for part in parts for o in part.objects))
        self.object_code = pack_objects(objects)  # (a batch both parts loaded: once)
        self._engine = _load(self.object_code, host_target_machine())
        return self

    @classmethod
    def from_object(cls, object_code: bytes, uses_blas: bool) -> NativeModule:
        """The module of an object file made by `NativeModule(...)` in this or another
        process on the same host (`uses_blas`: its `needs_blas`)."""
        self = cls.__new__(cls)
        self.llvm_ir = self.optimized_llvm_ir = self.imports = None
        self.needs_blas = uses_blas
        if uses_blas:
            load_blas()
        self.object_code = object_code
        self._engine = _load(object_code, host_target_machine())
        return self

    def address(self, name: str) -> int:
        """Entry address of function `name`; raises KeyError when the module lacks it."""
        address = self._engine.get_function_address(name)
        if not address:
            raise KeyError(f"no function @{name} in the native module")
        return address

    def global_address(self, name: str) -> int:
        """Address of global variable `name`; raises KeyError when the module lacks it."""
        address = self._engine.get_global_value_address(name)
        if not address:
            raise KeyError(f"no global @{name} in the native module")
        return address


Compiled = tuple[tuple[str, ...], str, bytes]
"""What `_compile` gives: (imports, optimized LLVM IR, object code)."""


@dataclass(frozen=True)
class PartNames:
    """What a part of a function's code compiled with the kernel cache tells the other
    part before it compiles (`compile_part`)."""

    renames: dict[str, str] = field(default_factory=dict)
    """The name each of its kernels takes (`arignote.runtime.kernelcache.symbols`)."""
    digests: frozenset[str] = frozenset()
    """The groups its objects define (those it compiles, and every group of the
    batches it loads), which the other part must not define."""


@dataclass(frozen=True)
class PartCode:
    """A part of a function's code compiled on its own (`compile_part`), to be loaded
    with the other parts (`NativeModule.from_parts`)."""

    texts: tuple[str, ...]
    """The LLVM IR texts compiled."""
    imports: tuple[str, ...]
    """The symbols its objects use and do not define."""
    optimized: str
    """The optimized LLVM IR of what was compiled."""
    objects: tuple[bytes, ...]
    """Its object files (the kernel cache's batches it uses included)."""
    defined: frozenset[str]
    """The symbols its objects define."""
    names: PartNames = field(default_factory=lambda: PartNames())
    """What the kernel cache named (`PartNames`)."""
    batches: tuple[str, ...] = ()
    """The kernel cache's batches it loaded (their names)."""


PART_SPLIT_GLUE = 0
"""The glue size from which a part's glue is compiled apart (`compile_part`) when the
function's whole glue is large enough to be (`SPLIT_GLUE_INSTRUCTIONS`): always, whatever
the part's share of it."""


def compile_part(
    module_op: ModuleOp,
    extra_ir: Sequence[str] = (),
    exported: Collection[str] = frozenset(),
    kernel_cache: str | None = None,
    other: PartNames | Callable[[], PartNames] | None = None,
    send: Callable[[PartNames], None] | None = None,
    split_glue: int | None = PART_SPLIT_GLUE,
) -> PartCode:
    """Compile the `llvm`-dialect `module_op`, a part of a function's code whose other
    part calls its functions `exported` and defines the functions it only declares, in
    this process (no fork): its kernels at O3, its glue (with `extra_ir`) apart from
    `split_glue` instructions (as `ir_parts`'s), with the kernel cache of `kernel_cache`
    when given (`arignote.runtime.kernelcache`). The
    kernel cache renames the functions it serves; `send` (when given) gets those names
    and the groups this part defines before the compile starts (`PartNames`), and
    `other` are the other part's: this part's calls take its names, and the groups it
    defines are not defined again here. `other` may be a function returning them (the
    other part still working on them): it is called once this part's LLVM IR is made."""
    from arignote.runtime import kernelcache

    machine = host_target_machine()
    layout = module_layout(module_op, split_glue, exported)
    if callable(other):
        other = other()
    other = other or PartNames()
    renamed = other.renames
    if kernel_cache is not None:
        plan = kernelcache.plan(
            module_op, split_glue, False, kernel_cache, exported, other.digests, layout
        )
        if plan is not None:
            names = PartNames(plan.renames, plan.digests)
            if send is not None:
                send(names)
            kernelcache.count_reused_elsewhere(names, other)
            plan = plan.renamed(renamed)
            imports, optimized, code = plan.compile(
                extra_ir, machine, fork=False, elsewhere=other.digests
            )
            defined = set(plan.cached_symbols)
            defined.update(*(_defined_names(t) for t in plan.parts.texts))
            texts = plan.parts.texts
            batches = tuple(batch.name for batch in plan.batches)
            objects = tuple(unpack_objects(code))
            return PartCode(texts, imports, optimized, objects, frozenset(defined), names, batches)
    if send is not None:
        send(PartNames())
    parts = ir_parts(module_op, split_glue, False, exported, layout)
    if renamed:
        parts = parts.renamed(renamed)
    imports, optimized, code = join_parts(
        parts.texts, _compile_parts(parts, extra_ir, machine, fork=False)
    )
    defined = set().union(*(_defined_names(t) for t in parts.texts))
    return PartCode(
        parts.texts, imports, optimized, tuple(unpack_objects(code)), frozenset(defined)
    )


def join_parts(
    texts: Sequence[str],
    compiled: Sequence[Compiled],
    loaded: Sequence[tuple[Collection[str], bytes]] = (),
    loaded_symbols: Collection[str] = frozenset(),
) -> Compiled:
    """One (imports, optimized LLVM IR, object code) for the parts of `texts` compiled
    apart (`compiled`) and objects loaded as they are (`loaded`: their imports and code,
    defining `loaded_symbols`), packed in that order (`pack_objects`): the functions one
    part declares and another (or a loaded object) defines are no import."""
    defined = set().union(*(_defined_names(t) for t in texts))
    imported = {n for o in compiled for n in o[0]} | {n for i, _ in loaded for n in i}
    imports = tuple(sorted(imported - defined - set(loaded_symbols)))
    optimized = "\n".join(o[1] for o in compiled)
    return imports, optimized, pack_objects([c for _, c in loaded] + [o[2] for o in compiled])


def _compile_parts(
    parts: IRParts, extra_ir: Sequence[str], machine: llvm.TargetMachine, fork: bool = True
) -> list[Compiled]:
    """The objects of `parts`, in `IRParts.texts`'s order: the forked part in a child
    process when it can (`_ForkedCompile`; never without `fork`), the others here
    meanwhile, the glue with `extra_ir` at `IRParts.glue_opt` (or `here` with `extra_ir`
    when the glue is not apart)."""
    forks = fork and parts.forked is not None and _fork_parts()
    child = _ForkedCompile.start(parts.forked) if forks else None
    compiled: list[Compiled] = []
    try:
        if parts.here is not None:
            compiled.append(_compile(parts.here, () if parts.glue else extra_ir, machine))
        if parts.glue is not None:
            glue_machine = host_target_machine(parts.glue_opt)
            compiled.append(_compile(parts.glue, extra_ir, glue_machine, parts.glue_opt))
    finally:  # (the child reaped, whatever happened here)
        forked = None if child is None else child.result()
    if parts.forked is None:
        return compiled
    if forked is None:
        forked = _compile(parts.forked, (), machine)
    return [forked, *compiled]


def _compile(
    llvm_ir: str, extra_ir: Sequence[str], machine: llvm.TargetMachine, opt: int = OPT_LEVEL
) -> Compiled:
    """(imports, optimized LLVM IR, object code) of `llvm_ir` linked with `extra_ir`,
    optimised at `opt` and compiled by `machine`.

    The modules live in an LLVM context of their own, freed with them on return: in
    LLVM's global context the types and constants of every module compiled would stay
    for the life of the process (about 2 KB per compile), and a context must not be
    used by two threads at once (the thread pool compiles in a background thread)."""
    context = llvm.create_context()
    module = llvm.parse_assembly(llvm_ir, context)
    module.data_layout = str(machine.target_data)
    for text in extra_ir:
        extra = llvm.parse_assembly(text, context)
        extra.triple, extra.data_layout = module.triple, module.data_layout
        module.link_in(extra)
    module.verify()
    _optimize(module, machine, opt)
    return _imports(module), str(module), machine.emit_object(module)


FORK_PARTS = True
"""Whether the kernels' object of a split module is compiled in a forked child process
while this one compiles the glue's (`_ForkedCompile`): llvmlite takes one lock for every
call into LLVM, so threads cannot overlap the two; processes can."""


def _fork_parts() -> bool:
    """Whether `_ForkedCompile` may run: `FORK_PARTS`, `os.fork` and `os.memfd_create`
    (Linux), more than one usable core, and no MPI in the process (some MPI transports
    do not survive a fork, even a child that never calls MPI)."""
    import os

    from arignote.runtime.threadpool import usable_cores

    if not FORK_PARTS or "mpi4py.MPI" in sys.modules:
        return False
    return hasattr(os, "fork") and hasattr(os, "memfd_create") and usable_cores() > 1


CHILD_PATIENCE = 20.0
CHILD_MIN_WAIT = 30.0
"""How long `ForkedWork.message` and `result` wait for the child: `CHILD_PATIENCE` times
the time from the fork to the parent's wait (its own part done), at least
`CHILD_MIN_WAIT` seconds. The two parts take about as long (`_halves`,
`arignote.lowering.function_parts`), so a child past that is stuck."""


def _exits_within(pid: int, seconds: float) -> bool:
    """Whether the child `pid` exits (or has exited) within `seconds`, without reaping
    it: a pidfd polled (Linux 5.3+), else `waitid` with `WNOWAIT` every few ms."""
    import os
    import select

    try:
        descriptor = os.pidfd_open(pid)
    except (AttributeError, OSError):
        descriptor = None
    if descriptor is not None:
        try:
            return bool(select.select([descriptor], [], [], seconds)[0])
        finally:
            os.close(descriptor)
    deadline = time.monotonic() + seconds
    while True:
        try:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:  # reaped already: nothing to wait for
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.002)


class ForkedWork:
    """`work(send)` in a forked child process: what it returns comes back through an
    anonymous file (`result()`), and the one value it may `send` on the way through a
    pipe (`message()`), both None when the child failed (the caller then does the work
    itself).

    The fork holds llvmlite's lock (so that no other thread is inside LLVM, whose state
    the child copies) and, through `threadpool`'s fork hook, waits for the pool's
    background compile. The child runs no Python thread and leaves with `os._exit`
    (no `atexit` handler, no flush of the parent's buffers). A child still running
    `CHILD_PATIENCE` times the time since the fork when the parent waits (at least
    `CHILD_MIN_WAIT` seconds) is killed: a stuck child must cost time, not hang."""

    def __init__(self, work: Callable[[Callable[[Any], None]], Any]) -> None:
        import os
        import warnings

        from llvmlite.binding import ffi

        from arignote.runtime.threadpool import wait_for_prefetch

        host_cpu()  # (asked of LLVM here, once)
        # the fork hook waits for the pool's background compile, which takes llvmlite's
        # lock: with the lock held here first, the two would wait for each other forever
        wait_for_prefetch()
        self.file = os.memfd_create("arignote-work")
        try:
            read, write = os.pipe()
        except OSError:
            os.close(self.file)
            raise
        try:
            with warnings.catch_warnings():
                # Python 3.12 warns of a fork beside threads, and libraries' fork hooks
                # (JAX's) warn that the child must not use them: this one uses LLVM only
                warnings.simplefilter("ignore", DeprecationWarning)
                warnings.simplefilter("ignore", RuntimeWarning)
                with ffi.lib._lock:
                    self.started = time.monotonic()
                    self.pid = os.fork()
        except OSError:
            for descriptor in (self.file, read, write):
                os.close(descriptor)
            raise
        if self.pid == 0:  # pragma: no cover - the child
            os.close(read)
            self._run_child(work, write)
        os.close(write)
        self.pipe: int | None = read
        self._message: Any = None

    def _run_child(self, work: Callable[[Callable[[Any], None]], Any], pipe: int) -> None:
        """The child: run `work`, its result into the file, then exit (never returns)."""
        import os
        import pickle

        status = 1
        try:
            sent = [False]

            def send(value: Any) -> None:
                if sent[0]:
                    raise RuntimeError("ForkedWork: send() takes one value")
                sent[0] = True
                with os.fdopen(pipe, "wb", closefd=False) as out:
                    pickle.dump(value, out, protocol=pickle.HIGHEST_PROTOCOL)
                os.close(pipe)

            result = work(send)
            with os.fdopen(self.file, "wb", closefd=False) as out:
                pickle.dump(result, out, protocol=pickle.HIGHEST_PROTOCOL)
            status = 0
        finally:
            os._exit(status)

    @classmethod
    def start(cls, *args: Any) -> Self | None:
        """`cls(*args)` (for `ForkedWork`, the child doing `work`); None when the system
        refuses a process or a file (the caller does the work itself)."""
        try:
            return cls(*args)
        except OSError:
            return None

    def _patience(self) -> float:
        return max(CHILD_MIN_WAIT, CHILD_PATIENCE * (time.monotonic() - self.started))

    def message(self) -> Any:
        """The value the child sent, once it has (None when it exited without one, or
        is killed for being stuck)."""
        import os
        import pickle
        import select

        if self.pipe is None:
            return self._message
        chunks = []
        deadline = time.monotonic() + self._patience()
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.pipe], [], [], left)[0]:
                    self.kill()
                    return None
                chunk = os.read(self.pipe, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(self.pipe)
            self.pipe = None
        try:
            self._message = pickle.loads(b"".join(chunks)) if chunks else None
        except Exception:  # a child that died while writing
            self._message = None
        return self._message

    def running(self) -> bool:
        """Whether the child is still at work (it is not reaped)."""
        return not _exits_within(self.pid, 0)

    def kill(self) -> None:
        """Kill the child (it is reaped by `result()`)."""
        import os
        import signal

        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:  # (gone already)
            pass

    def result(self) -> Any:
        """The child's result, once it exits; None when it failed, or when it is still
        running `CHILD_PATIENCE` times the time since the fork later (at least
        `CHILD_MIN_WAIT` seconds): it is then killed, and the caller does its work."""
        import os
        import pickle

        try:
            if self.pipe is not None:
                os.close(self.pipe)
                self.pipe = None
            if not _exits_within(self.pid, self._patience()):
                self.kill()
            try:
                _, status = os.waitpid(self.pid, 0)
            except ChildProcessError:  # reaped already (SIGCHLD ignored): status unknown
                return None
            if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
                return None
            os.lseek(self.file, 0, os.SEEK_SET)
            with os.fdopen(self.file, "rb", closefd=False) as data:
                return pickle.load(data)
        finally:
            os.close(self.file)


class _ForkedCompile(ForkedWork):
    """`_compile(llvm_ir, (), host_target_machine())` in a forked child (`ForkedWork`):
    `result()` is its `Compiled`, or None (the caller compiles it itself)."""

    def __init__(self, llvm_ir: str) -> None:
        super().__init__(lambda send: _compile(llvm_ir, (), host_target_machine()))


def _defined_names(llvm_ir: str) -> set[str]:
    """The functions an LLVM IR text defines."""
    return set(re.findall(r'^define [^@]*@"?([^"(]+)"?\(', llvm_ir, re.MULTILINE))


OBJECTS_MAGIC = b"arignote-objects\0"
"""The start of `pack_objects`'s bytes (an object file starts with its format's magic:
`\\x7fELF`, Mach-O's, COFF's)."""


def pack_objects(objects: Sequence[bytes]) -> bytes:
    """Object files as one `bytes` (what the compile cache stores): one object as itself,
    several as `OBJECTS_MAGIC`, their count and sizes (8 bytes each, little-endian),
    then each object."""
    if len(objects) == 1:
        return objects[0]
    sizes = b"".join(len(o).to_bytes(8, "little") for o in objects)
    return OBJECTS_MAGIC + len(objects).to_bytes(8, "little") + sizes + b"".join(objects)


def unpack_objects(code: bytes) -> list[bytes]:
    """The object files of `pack_objects(...)`; ValueError when `code` is cut short."""
    if not code.startswith(OBJECTS_MAGIC):
        return [code]
    at = len(OBJECTS_MAGIC)
    count = int.from_bytes(code[at : at + 8], "little")
    at += 8
    sizes = [int.from_bytes(code[at + 8 * k : at + 8 * k + 8], "little") for k in range(count)]
    at += 8 * count
    if at + sum(sizes) != len(code):
        raise ValueError(f"packed objects of {len(code)} bytes, sizes {sizes}: not whole")
    objects = []
    for size in sizes:
        objects.append(code[at : at + size])
        at += size
    return objects


def _imports(module: llvm.ModuleRef) -> tuple[str, ...]:
    """The functions and globals `module` declares but does not define (intrinsics aside)."""
    names = {f.name for f in module.functions if f.is_declaration}
    names |= {g.name for g in module.global_variables if g.is_declaration}
    return tuple(sorted(n for n in names if not n.startswith("llvm.")))


def _load(object_code: bytes, machine: llvm.TargetMachine) -> llvm.ExecutionEngine:
    """An MCJIT engine (owning `machine`) with `object_code` (one object file, or several
    packed by `pack_objects`) loaded and finalized."""
    from arignote.runtime import threadpool
    from arignote.runtime.entry import register_symbols

    register_symbols()
    if threadpool.uses_pool(object_code):
        threadpool.register_symbols()
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)
    for code in unpack_objects(object_code):  # one engine links the parts' symbols
        engine.add_object_file(llvm.ObjectFileRef.from_data(code))
    engine.finalize_object()
    engine.run_static_constructors()
    return engine


def target_fingerprint() -> str:
    """What the machine code compiled here depends on besides its IR: llvmlite and LLVM
    versions, the target triple, host CPU name and features, the optimisation level, its
    tuning, the LLVM options and the function attributes
    (`arignote.lowering.llvm.llvm_attributes`, `INLINE_SINGLE_CALL`)."""
    import llvmlite

    from arignote.lowering.llvm.llvm_attributes import attributes_text

    return "|".join(
        [
            f"llvmlite {llvmlite.__version__}",
            "llvm " + ".".join(map(str, llvm.llvm_version_info)),
            *host_cpu(),
            f"O{OPT_LEVEL}",
            *[f"{name}={value}" for name, value in sorted(TUNING.items())],
            *LLVM_OPTIONS,
            attributes_text(),
            f"inline-single-call={INLINE_SINGLE_CALL}",
        ]
    )


# --- numpy arrays as memref descriptors ----------------------------------------------------


@cache
def descriptor_struct(rank: int) -> type[ctypes.Structure]:
    """The ctypes layout of a rank-`rank` memref descriptor (cached per rank)."""
    if not 0 <= rank <= MAX_RANK:
        raise ValueError(f"memref rank {rank} is outside 0..{MAX_RANK}")
    fields: list[tuple[str, Any]] = [
        ("allocated", ctypes.c_void_p),
        ("aligned", ctypes.c_void_p),
        ("offset", ctypes.c_int64),
    ]
    if rank:
        fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    return type(f"MemRefDescriptor{rank}", (ctypes.Structure,), {"_fields_": fields})


def as_native_array(array: Any) -> np.ndarray:
    """`array` as an ndarray whose byte strides are whole elements (copied if they are not)."""
    array = np.asarray(array)
    itemsize = array.itemsize
    if any(stride % itemsize for stride in array.strides) or not array.dtype.isnative:
        return np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("="))
    return array


def _data_offset() -> int | None:
    """The offset of the `data` pointer in numpy's `PyArrayObject` (right after the
    object header), when reading it there gives `.ctypes.data`; else None."""
    offset = ctypes.sizeof(ctypes.c_ssize_t) + ctypes.sizeof(ctypes.c_void_p)
    probes = [np.arange(4.0), np.arange(4.0)[1:], np.zeros((2, 3), np.int8)[:, 1:]]
    for probe in probes:
        if ctypes.c_void_p.from_address(id(probe) + offset).value != probe.ctypes.data:
            return None
    return offset


_DATA_OFFSET = _data_offset() if sys.implementation.name == "cpython" else None


def data_pointer(array: np.ndarray) -> int:
    """The address of `array`'s data (`array.ctypes.data`, read directly from the
    ndarray object in CPython: five times faster)."""
    if _DATA_OFFSET is not None and type(array) is np.ndarray:
        return ctypes.c_void_p.from_address(id(array) + _DATA_OFFSET).value or 0
    return array.ctypes.data


def memref_descriptor(array: np.ndarray) -> ctypes.Structure:
    """The memref descriptor of `array` (allocated = aligned = data pointer, offset 0).

    Strides are in elements; `array` must satisfy `as_native_array` and stay alive while
    native code uses the descriptor.
    """
    itemsize = array.itemsize
    if any(stride % itemsize for stride in array.strides):
        raise ValueError("array strides are not whole elements: use as_native_array()")
    descriptor = descriptor_struct(array.ndim)()
    pointer = data_pointer(array)
    descriptor.allocated = pointer
    descriptor.aligned = pointer
    descriptor.offset = 0
    if array.ndim:
        descriptor.sizes[:] = array.shape
        descriptor.strides[:] = [stride // itemsize for stride in array.strides]
    return descriptor
