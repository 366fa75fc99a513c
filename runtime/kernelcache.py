"""The kernel cache: object code of kernels on disk, content-addressed, shared by functions.

`arignote.lowering.llvm.outline_kernels` outlines each fused loop nest into a kernel
function that the glue calls (never inlined). A large module is compiled in parts
(`arignote.runtime.cpu.ir_parts`): kernels at O3, the glue apart. With a kernel cache
directory (`NativeModule(..., kernel_cache=...)`), `plan` makes those parts so that the
object code of each kernel is compiled once per directory, whichever function (and
process) needs it:

* A *group* is a set of kernel functions that call each other or take each other's
  address (`arignote.runtime.cpu.call_groups`: a kernel and its `__noalias` body, a
  parallel task and its body). Its *digest* is a BLAKE2 digest of the LLVM IR of its
  functions (`str(function)`, in the module's order) with their own names replaced by
  their positions, the declarations of what they call (malloc, BLAS, libm, the thread
  pool), `FORMAT` and `target_fingerprint()` (LLVM and llvmlite versions, the host CPU
  and features, the O3 level, its tuning and options, the function attributes): what
  the group's object code depends on. A kernel is external and never inlined, so O3
  compiles it from its own IR whatever module it is in.
* Every part's text names the group's functions `ak_<digest>_<position>`
  (`symbols`), the glue's calls too, so that an object holding a group serves any
  function that has the same group.
* A group found in the directory is not compiled: the parts declare it, and the
  object holding it (a *batch*) is loaded into the engine with the new objects and
  packed into `object_code` with them, so that the compile cache's entry of the
  function stays whole without the kernel cache. The groups compiled now go in one or
  two kernel parts (two halves when a forked child compiles one, as `ir_parts` does),
  each of which becomes a batch: `<directory>/<batch>.agb`, sealed
  (`arignote.runtime.cachefile`: a truncated or edited file is never loaded), holding
  the digests of its groups, the symbols it imports and its object; and one index
  file `<directory>/<digest>.agk` per group, naming its batch. Both are written
  atomically (temporary file, `os.replace`).
* The glue goes apart (at O3 when it is below `split_glue`) whenever the kernel cache
  is used, so that a batch holds kernels only. Only modules that `ir_parts` compiles in
  parts anyway (at least `PARALLEL_MIN_INSTRUCTIONS` at O3, or a glue apart) use it: a
  small module stays one object, as fast to compile as before.
* Two processes compiling one group at once each write a batch holding it (the index
  names the last). One engine never gets two definitions of a symbol: the batches of a
  compile are chosen so that no group is defined twice (a group whose batch would
  define a group already defined is compiled again).

A module the kernel cache cannot serve (global variables, a kernel that calls a
function of the glue, a name outside `[\\w.$-]`) is compiled as without it; a batch that
is missing, broken or fails to load makes `NativeModule` compile without the kernel
cache (never a crash, never stale code). The directory is pruned like the compile
cache's (`prune`: least recently used batches first, index files whose batch is gone).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import llvmlite.binding as llvm
from llvmlite import ir
from xdsl.dialects.builtin import ModuleOp

from arignote.runtime import cachefile, cpu

FORMAT = 1
"""The version of the files' format and of the digest's recipe."""

SYMBOL_PREFIX = "ak_"
INDEX_SUFFIX = ".agk"
BATCH_SUFFIX = ".agb"
_INDEX_MAGIC = b"arignote-kindex\x00" + FORMAT.to_bytes(2, "little")
_BATCH_MAGIC = b"arignote-kbatch\x00" + FORMAT.to_bytes(2, "little")
STALE_TEMP_SECONDS = 3600.0
MAX_BATCH_BYTES = 1 << 28
"""The largest batch `store` writes and `load` reads."""

_REFERENCE = cpu._REFERENCE

_NAME = re.compile(r"[\w.$-]+")

STATS: dict[str, int] = {"reused": 0, "compiled": 0, "fallback": 0}
"""Kernel groups this process took from the kernel cache (`reused`) or compiled and
stored (`compiled`), and the compiles that failed with it and were done again
without it (`fallback`)."""


class Failed(Exception):
    """A compile with the kernel cache failed (`Plan.build`); `NativeModule` compiles
    again without it."""


@dataclass
class Batch:
    """An object file of the directory: the groups it defines, what it imports."""

    name: str
    groups: tuple[str, ...]
    imports: tuple[str, ...]
    code: bytes


@dataclass
class Plan:
    """How a module is compiled with the kernel cache (`plan`): its `parts`, the
    `batches` loaded from the directory and, per new kernel part (`IRParts.texts`
    order: forked, here), the digests of the groups it defines."""

    directory: str
    parts: cpu.IRParts
    batches: list[Batch]
    new_groups: list[tuple[str, ...]]
    cached_symbols: frozenset[str] = field(default_factory=frozenset)
    whole: bool = False
    """Whether the module is one part (too small to be compiled in parts), compiled as
    without the kernel cache."""
    renames: dict[str, str] = field(default_factory=dict)
    """The name each function of a group takes in every part (`symbols`)."""

    @property
    def digests(self) -> frozenset[str]:
        """The groups its objects define: those it compiles and its batches' groups."""
        return frozenset(d for part in self.new_groups for d in part) | frozenset(
            d for batch in self.batches for d in batch.groups
        )

    def renamed(self, renames: dict[str, str]) -> Plan:
        """This plan with the parts' references to the globals of `renames` renamed (the
        kernels another part of the function's code defines, `cpu.compile_part`)."""
        return dataclasses.replace(self, parts=self.parts.renamed(renames))

    def build(
        self, extra_ir: Sequence[str], machine: llvm.TargetMachine
    ) -> tuple[tuple[str, ...], str, bytes, llvm.ExecutionEngine]:
        """`compile`, and the engine with the object code loaded (`cpu._load`); raises
        `Failed` when either fails (a module compiled `whole`, as without the kernel
        cache, raises what that raises: it would fail again without it)."""
        try:
            imports, optimized, code = self.compile(extra_ir, machine)
            return imports, optimized, code, cpu._load(code, machine)
        except Exception as e:
            if self.whole:
                raise
            raise Failed(f"{type(e).__name__}: {e}") from e

    def compile(
        self,
        extra_ir: Sequence[str],
        machine: llvm.TargetMachine,
        fork: bool = True,
        elsewhere: Collection[str] = (),
    ) -> tuple[tuple[str, ...], str, bytes]:
        """(imports, optimized LLVM IR of what was compiled, packed object code): the
        parts compiled (`cpu._compile_parts`, which may fork unless `fork` is False), the
        new kernel parts stored as batches. `elsewhere`: the digests of the groups that
        another part of the function's code defines."""
        if self.whole:
            return cpu._compile(self.parts.texts[0], extra_ir, machine)
        compiled = cpu._compile_parts(self.parts, extra_ir, machine, fork)
        for groups, (imports, _, code) in zip(self.new_groups, compiled, strict=False):
            store(self.directory, groups, imports, code)
        loaded = [(b.imports, b.code) for b in self.batches]
        joined = cpu.join_parts(self.parts.texts, compiled, loaded, self.cached_symbols)
        unserved = [
            name
            for name in joined[0]
            if name.startswith(SYMBOL_PREFIX) and digest_of(name) not in elsewhere
        ]
        if unserved:  # (never: MCJIT would leave them null; `NativeModule` falls back)
            raise RuntimeError(f"kernel cache: no object defines {unserved[:3]}")
        return joined


def plan(
    module_op: ModuleOp,
    split_glue: int | None,
    halves: bool,
    directory: str,
    exported: Collection[str] | None = None,
    elsewhere: Collection[str] = frozenset(),
    layout: cpu.ModuleLayout | None = None,
) -> Plan | None:
    """The parts of `module_op` with the kernel cache of `directory` (module doc), or
    None when the kernel cache does not serve it (compile it with `cpu.ir_parts`). A
    module too small to be compiled in parts is one part, as `cpu.ir_parts` makes it
    (its LLVM IR module is not built twice). `exported`: as `cpu.ir_parts`'s (a part of
    a function's code); `elsewhere`: the digests of the groups another part defines
    (only declared here); `layout`: `cpu.module_layout(module_op, split_glue, exported)`
    when the caller has it (left as it is when this returns None)."""
    if layout is None:
        layout = cpu.module_layout(module_op, split_glue, exported)
    kernels = layout.kernels
    if kernels is None or (not layout.apart and layout.o3_size < cpu.PARALLEL_MIN_INSTRUCTIONS):
        # one part, as `ir_parts` makes it (its LLVM IR module is not built twice)
        return Plan(directory, cpu.IRParts(str(layout.module)), [], [], whole=True)
    module, references, glue = layout.module, layout.references, layout.glue
    if not all(_NAME.fullmatch(f.name) for f in module.functions):
        return None
    keyed = _digests(module, cpu.call_groups(references, kernels), references, layout.exported)
    if keyed is None:
        return None
    renames = {
        name: symbol
        for digest, members in keyed
        for name, symbol in zip(members, symbols(digest, len(members)), strict=True)
    }
    placed = _Layout(module, references, glue, layout.sizes, layout.weighed_glue, layout.exported)
    parts, new_groups, batches, cached_symbols = placed.parts(
        keyed, renames, halves, directory, frozenset(elsewhere)
    )
    if layout.apart:
        parts = dataclasses.replace(parts, glue_opt=cpu.GLUE_OPT_LEVEL)
    return Plan(directory, parts, batches, new_groups, cached_symbols, renames=renames)


@dataclass
class _Layout:
    """What `plan` knows of a module it compiles in parts: its LLVM IR `module`, the
    `references` of its functions, its `glue`, the `sizes` of its functions and the
    glue's size weighed by its optimisation level (`weighed_glue`)."""

    module: ir.Module
    references: dict[str, set[str]]
    glue: frozenset[str]
    sizes: dict[str, int]
    weighed_glue: float
    exported: frozenset[str] = frozenset()

    def parts(
        self,
        keyed: list[tuple[str, list[str]]],
        renames: dict[str, str],
        halves: bool,
        directory: str,
        elsewhere: frozenset[str] = frozenset(),
    ) -> tuple[cpu.IRParts, list[tuple[str, ...]], list[Batch], frozenset[str]]:
        """The parts (the glue at O3), the digests of the groups each new kernel part
        defines, the batches to load and the symbols they serve, for the groups
        `keyed` ((digest, functions in the order of its placeholders) per group), their
        functions named by `renames` (`symbols`); the groups `elsewhere` (digests) are
        only declared."""
        unique = [d for d in dict.fromkeys(digest for digest, _ in keyed) if d not in elsewhere]
        declared = {f.name for f in self.module.functions if not f.blocks}
        batches, cached = choose_batches(directory, unique, declared, elsewhere)
        STATS["reused"] += len(cached)
        first: dict[str, list[str]] = {}
        for digest, members in keyed:
            if digest in first:  # the same code as a group before: one definition of it
                for name in members:
                    del self.module.globals[name]
            else:
                first[digest] = members
        new = {d: members for d, members in first.items() if d not in cached and d not in elsewhere}
        new_kernels = frozenset(n for members in new.values() for n in members)
        new_size = sum(self.sizes.get(n, 0) for n in new_kernels)
        forked: frozenset[str] = frozenset()
        if halves and new_size + self.weighed_glue >= cpu.PARALLEL_MIN_INSTRUCTIONS:
            forked = cpu._halves(self.references, new_kernels, self.sizes, self.weighed_glue)
        here = new_kernels - forked
        parts = cpu.IRParts(
            self.render(here, renames),
            self.render(self.glue, renames),
            self.render(forked, renames),
            glue_opt=cpu.OPT_LEVEL,
        )
        new_groups = [
            tuple(sorted(d for d, members in new.items() if members[0] in part))
            for part in (forked, here)
            if part
        ]
        cached_symbols = frozenset(
            renames[n] for d, members in first.items() if d in cached for n in members
        )
        return parts, new_groups, batches, cached_symbols

    def render(self, keep: frozenset[str], renames: dict[str, str]) -> str | None:
        """The text of the part defining `keep`, the groups' functions renamed."""
        if not keep:
            return None
        exported = cpu._called_from_outside(self.references, keep) | self.exported
        return _rename(cpu._render(self.module, keep, exported), renames)


def symbols(digest: str, count: int) -> list[str]:
    """The names of the `count` functions of the group `digest` in every part."""
    return [f"{SYMBOL_PREFIX}{digest}_{i}" for i in range(count)]


_rename = cpu.rename_globals


def _digests(
    module: ir.Module,
    groups: list[list[str]],
    references: dict[str, set[str]],
    exported: Collection[str] = frozenset(),
) -> list[tuple[str, list[str]]] | None:
    """Per group of `groups`, its digest (module doc) and its functions in the order of
    the placeholders that replace their names (the module's order);
    None when a group cannot be cached: it refers to a global of the module that is not
    a declared function (a function of the glue, a global variable), or to metadata."""
    order = {f.name: i for i, f in enumerate(module.functions)}
    functions = {f.name: f for f in module.functions}
    callers: dict[str, set[str]] = {}
    for caller, called in references.items():
        for name in called:
            callers.setdefault(name, set()).add(caller)
    header = f"kernel cache {FORMAT}\0{cpu.target_fingerprint()}\0".encode()
    keyed: list[tuple[str, list[str]]] = []
    for names in groups:
        members = sorted(names, key=order.__getitem__)
        inside = set(members)
        h = hashlib.blake2b(header, digest_size=16)
        placeholders = {name: f"#{i}" for i, name in enumerate(members)}
        used: set[str] = set()
        for name in members:
            outside = name in exported or bool(callers.get(name, inside) - inside)
            text = _rename(_function_text(functions[name], outside), placeholders)
            if "!" in text:  # metadata: module-level nodes the text does not hold
                return None
            used.update(_REFERENCE.findall(text))  # (not the placeholders)
            h.update(text.encode())
            h.update(b"\0")
        for name in sorted(used):
            callee = functions.get(name)
            if callee is None or callee.blocks:
                return None
            h.update(str(callee).encode())  # its declaration, attributes included
            h.update(b"\0")
        keyed.append((h.hexdigest(), members))
    return keyed


def _function_text(function: ir.Function, exported: bool) -> str:
    """The text of `function` as a kernel part holds it (`cpu._render`): with external
    linkage when functions outside its group call it."""
    if not exported:
        return str(function)
    linkage, function.linkage = function.linkage, ""
    try:
        return str(function)
    finally:
        function.linkage = linkage


# --- the files --------------------------------------------------------------------------


def index_path(directory: str, digest: str) -> str:
    return os.path.join(directory, digest + INDEX_SUFFIX)


def batch_path(directory: str, name: str) -> str:
    return os.path.join(directory, name + BATCH_SUFFIX)


def choose_batches(
    directory: str,
    digests: Sequence[str],
    declared: Collection[str] = (),
    elsewhere: Collection[str] = (),
) -> tuple[list[Batch], set[str]]:
    """The batches to load for the groups `digests` and the groups they serve: for each
    group, the batch its index file names, unless that batch would define a group that
    an earlier chosen batch defines, that is compiled now or that another part of the
    function's code defines (`elsewhere`), or imports a symbol that may not resolve
    (`usable`; `declared`: the functions the module declares): the group is then
    compiled now."""
    chosen: list[Batch] = []
    read: dict[str, Batch | None] = {}  # (a batch holding several groups is read once)
    defined: set[str] = set(elsewhere)  # by the chosen batches, compiled now, or elsewhere
    served: set[str] = set()
    for digest in digests:
        if digest in defined:
            served.add(digest)
            continue
        name = _index(directory, digest)
        if name is not None and name not in read:
            read[name] = load(directory, name)
        batch = None if name is None else read[name]
        if (
            batch is None
            or digest not in batch.groups
            or defined.intersection(batch.groups)
            or not usable(batch.imports, declared)
        ):
            defined.add(digest)
            continue
        chosen.append(batch)
        defined.update(batch.groups)
        served.add(digest)
    return chosen, served


def usable(imports: Sequence[str], declared: Collection[str]) -> bool:
    """Whether a batch importing `imports` can be loaded with a module that declares
    `declared`. A batch may hold groups of other functions, whose imports this module
    may not make this process load (MCJIT leaves a symbol it cannot resolve null, and
    others after it, without an error), nor a later one loading its compile cache entry:
    a BLAS, LAPACK or MPI symbol, or one of arignote's callbacks, only when the module
    declares it too (`NativeModule` then loads its library); otherwise the thread pool's
    symbols (bound by `cpu._load`) and what the process exports now (libc, libm)."""
    from arignote.runtime.blas import needs_blas
    from arignote.runtime.mpi import needs_mpi
    from arignote.runtime.threadpool import SYMBOLS

    for name in imports:
        if name in declared or name in SYMBOLS:
            continue
        if needs_blas(name) or needs_mpi(f'@"{name}"') or name.startswith("arignote_"):
            return False
        if not llvm.address_of_symbol(name):
            return False
    return True


def _index(directory: str, digest: str) -> str | None:
    """The name of the batch holding group `digest`, or None (no index file, or a broken
    one: removed)."""
    try:
        name = cachefile.load(index_path(directory, digest), _INDEX_MAGIC, digest, 4096)
        return name.decode("ascii")
    except (OSError, cachefile.Broken, UnicodeDecodeError):
        return None


def load(directory: str, name: str) -> Batch | None:
    """The batch `name` of `directory`, or None (none, or a broken file: removed)."""
    if not _NAME.fullmatch(name):
        return None
    path = batch_path(directory, name)
    try:
        payload = cachefile.load(path, _BATCH_MAGIC, name, MAX_BATCH_BYTES)
        size = int.from_bytes(payload[:8], "little")
        header = json.loads(payload[8 : 8 + size])
        batch = Batch(name, tuple(header["groups"]), tuple(header["imports"]), payload[8 + size :])
    except (OSError, cachefile.Broken, ValueError, KeyError, TypeError):
        return None
    _touch(path)
    return batch


def store(directory: str, groups: Sequence[str], imports: Sequence[str], code: bytes) -> str | None:
    """Write the object `code` defining `groups` (and importing `imports`) as a batch,
    then an index file per group naming it; the batch's name, or None when it could not
    be written (nothing is, then: the kernel cache is a help, never a requirement)."""
    header = json.dumps({"groups": sorted(groups), "imports": sorted(imports)}).encode()
    name = hashlib.blake2b("\0".join(sorted(groups)).encode(), digest_size=16).hexdigest()
    payload = len(header).to_bytes(8, "little") + header + code
    try:
        size = cachefile.store(
            batch_path(directory, name), _BATCH_MAGIC, name, payload, MAX_BATCH_BYTES
        )
        for digest in groups:
            path = index_path(directory, digest)
            cachefile.store(path, _INDEX_MAGIC, digest, name.encode(), 4096)
    except OSError:
        return None
    cachefile.account(directory, size)  # (`prune_if_due` checks the limit)
    STATS["compiled"] += len(groups)
    return name


def _touch(path: str) -> None:
    """Mark a batch used now (`prune` deletes the least recently used first)."""
    try:
        os.utime(path)
    except OSError:
        pass


def prune(directory: str, max_bytes: int) -> int:
    """Delete the least recently used batches until they take at most `max_bytes` (and
    then the index files naming a batch that is gone), and stale temporary files; how
    many files."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    batches: list[tuple[float, int, str]] = []
    removed = 0
    for entry in entries:
        if entry.name.endswith(BATCH_SUFFIX):
            info = entry.stat(follow_symlinks=False)
            batches.append((info.st_mtime, info.st_size, entry.path))
        elif cachefile.stale_temporary(entry.name) and _stale(entry):
            removed += cachefile.remove(entry.path)
    total = sum(size for _, size, _ in batches)
    gone = 0
    for _, size, path in sorted(batches):
        if total <= max_bytes:
            break
        gone += cachefile.remove(path)
        total -= size
    if gone:
        left = {os.path.basename(p)[: -len(BATCH_SUFFIX)] for _, _, p in batches}
        left = {name for name in left if os.path.exists(batch_path(directory, name))}
        indexes = [e.path for e in entries if e.name.endswith(INDEX_SUFFIX)]
        removed += sum(cachefile.remove(p) for p in indexes if _index_target(p) not in left)
    if batches:
        cachefile.scanned(directory, total)
    return removed + gone


def prune_if_due(directory: str, max_bytes: int) -> int:
    """`prune` when the directory's ledger says the batches may take more than
    `max_bytes` (`cachefile.account`: `store` adds each batch's size), else nothing."""
    return prune(directory, max_bytes) if cachefile.account(directory, 0, max_bytes) else 0


def _stale(entry: os.DirEntry[str]) -> bool:
    """Whether a temporary file is old enough to be a dead writer's, not a live one's."""
    try:
        return time.time() - entry.stat(follow_symlinks=False).st_mtime > STALE_TEMP_SECONDS
    except OSError:
        return False


def _index_target(path: str) -> str | None:
    digest = os.path.basename(path)[: -len(INDEX_SUFFIX)]
    try:
        return cachefile.load(path, _INDEX_MAGIC, digest, 4096).decode("ascii")
    except (OSError, cachefile.Broken, UnicodeDecodeError):
        return None


def fallback(plan: Plan, error: Exception) -> None:
    """Note that a compile with the kernel cache failed (`error`; `NativeModule` compiles
    again without it) and delete the batches `plan` loaded: a file LLVM refuses, which
    its seal did not show broken, must not fail every later compile."""
    forget(plan.directory, [batch.name for batch in plan.batches], error)


def forget(directory: str, batches: Sequence[str], error: Exception) -> None:
    """`fallback` for the batches named `batches` of `directory`."""
    STATS["fallback"] += 1
    cachefile.logger.debug("kernel cache %s: %s; compiling without it", directory, error)
    for name in batches:
        cachefile.remove(batch_path(directory, name))


def count_reused_elsewhere(names: cpu.PartNames, other: cpu.PartNames) -> None:
    """Count as `reused` the groups of a part (`names`) that a batch the other part
    loads defines (`other`: its groups beyond its own kernels'), as a compile in one
    process counts them: that part's plan left them out (they are defined there)."""
    own = {digest_of(symbol) for symbol in names.renames.values()}
    theirs = {digest_of(symbol) for symbol in other.renames.values()}
    STATS["reused"] += len(own & (other.digests - theirs))


def digest_of(symbol: str) -> str | None:
    """The digest of the group whose function is named `symbol` (`symbols`), or None."""
    if not symbol.startswith(SYMBOL_PREFIX):
        return None
    digest, _, position = symbol[len(SYMBOL_PREFIX) :].rpartition("_")
    return digest if digest and position.isdigit() else None
