"""The compile cache as `arignote.function` uses it (`config.compile_cache`, on by default).

A function compiled natively by a plain `Mode` (not DebugMode, NanGuardMode or
MonitorMode, which also run the interpreter) is stored in `<config.compiledir>/native/`
under a key that is the BLAKE2 digest of:

* the emitted `ag` IR (before the graph rewrites; `ir_text`, exact where the printer
  rounds), which includes the symbol name, the inputs (explicit ones, then the shared
  variables read) and the results; but not the source lines of the nodes' `ag.node`
  labels, which error messages quote (`Elemwise{add} at prog.py:12`): a script edited
  above its model finds its functions again. The entry keeps the labels it was
  compiled with (`Key.labels`), and a hit's messages quote the caller's graph's
  labels instead (`arignote.runtime.cache.relabel`);
* arignote's version and a fingerprint of its installed sources (the path, size and
  modification time of each module: an edited compiler never reuses stale code);
* the flags that change code: the linker, the graph pipeline the mode runs (after
  `optimizer`, `Mode.including/excluding`, `config.optimizer_including/excluding`),
  the loop lowering (which `openmp` and `openmp_elemwise_minsize` choose) and the LLVM
  lowering pipelines, `glue_o0_minsize`, `floatX` and the profiling flags;
* `arignote.runtime.cache.native_fingerprint()`: the LLVM/llvmlite versions, host CPU
  name and features, Python and numpy versions.

With the compile cache on, `native_function` also gives `NativeModule` the kernel
cache's directory, `<config.compiledir>/kernels` (`kernel_cache_directory`,
`arignote.runtime.kernelcache`: the object code of each kernel, keyed by its LLVM IR),
pruned to `compile_cache_max_mb` after each store.

A hit (`Mode.compile`) skips the graph rewrites, the lowering and LLVM: the object code is
loaded into the JIT; the optimized graph (`f.maker.fgraph`, `dump_ir`) is then computed
only when asked for. `stats()` counts the events of this process; with
`config.compile_cache_verbose` each hit, miss and store is printed to stderr.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute, Data, ParametrizedAttribute

from arignote.configuration import config
from arignote.graph import NODE_ATTRIBUTE, split_node_label

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.ir import Operation, SSAValue

    from arignote.compile.mode import Mode, Run

SUBDIRECTORY = "native"
KERNELS_SUBDIRECTORY = "kernels"


def cache_directory() -> str:
    """Where entries are stored now: `<config.compiledir>/native`."""
    return os.path.join(config.compiledir, SUBDIRECTORY)


@cache
def source_fingerprint() -> str:
    """arignote's version and the (path, size, mtime) of each of its modules."""
    import arignote
    import arignote.dialects
    import arignote.lowering
    import arignote.runtime

    parts = [f"arignote {arignote.__version__}"]
    for package in (arignote, arignote.dialects, arignote.lowering, arignote.runtime):
        top = os.path.dirname(os.path.abspath(package.__file__ or ""))
        for root, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    stat = os.stat(os.path.join(root, name))
                    parts.append(f"{os.path.join(root, name)} {stat.st_size} {stat.st_mtime_ns}")
    return "\n".join(parts)


def flags_text(mode: Mode, pipeline: str) -> str:
    """The part of the key that the mode (whose graph pipeline is `pipeline` now) and
    the configuration flags give."""
    from arignote.compile.mode import loops_pipeline
    from arignote.lowering.pipelines import LLVM_LOWERING

    return "\n".join(
        [
            f"linker {mode.linker}",
            f"graph {pipeline}",
            f"loops {loops_pipeline()}",
            f"llvm {LLVM_LOWERING} glue_o0_minsize={config.glue_o0_minsize}",
            f"floatX {config.floatX}",
            f"profile {config.profile} {config.profile_memory} {config.profile_optimizer}",
            f"device {_device_text()}",
        ]
    )


def _device_text() -> str:
    """Where the function runs: `cpu`, or the GPU's architecture (the PTX is made for
    it) and whether it is the CPU emulation."""
    from arignote.compile.mode import _on_gpu

    if not _on_gpu():
        return "cpu"
    from arignote.runtime import cuda

    device = cuda.require(config.device)
    return f"cuda sm_{device.capability[0]}{device.capability[1]} emulated={device.emulated}"


class KeyText(str):
    """A key's text (`ir_text`, `graph_text`): the `ag.node` labels in it are spelled
    without their source lines, which `labels` lists whole, in the order of the text."""

    labels: tuple[str, ...] = ()

    @staticmethod
    def of(spelling: _Spelling) -> KeyText:
        text = KeyText("\n".join(spelling.out))
        text.labels = tuple(spelling.labels)
        return text


class Key(str):
    """A compile-cache key (`cache_key`), with the `ag.node` labels of the text it digests
    (`KeyText.labels`): an entry stores them, a hit's messages are relabeled from them."""

    labels: tuple[str, ...] = ()


def ir_text(module: ModuleOp) -> KeyText:
    """An exact text of `module` for the key, faster than the printer: each op's name,
    operands (as value numbers), result types, properties and attributes (sorted), and
    regions; attributes are spelled structurally with floats in hex and bytes (dense
    constants) in full, which the printer may round; `ag.node` labels without their
    source lines (`KeyText`)."""
    spelling = _Spelling()
    spelling.feed(module)
    return KeyText.of(spelling)


class _Spelling:
    def __init__(self) -> None:
        self.out: list[str] = []
        self.numbers: dict[SSAValue, int] = {}
        self.texts: dict[int, tuple[Attribute, str]] = {}
        """Each attribute's text by its `id` (hashing an attribute hashes its parameters,
        recursively), with the attribute, which keeps its `id` its own meanwhile."""
        self.labels: list[str] = []
        """The `ag.node` labels with a source line, in the order of the text."""

    def spell(self, attr: Attribute) -> str:
        known = self.texts.get(id(attr))
        if known is not None:
            return known[1]
        text = _spell(attr, self.spell)
        self.texts[id(attr)] = (attr, text)
        return text

    def node(self, attr: Attribute) -> str:
        """The text of an `ag.node` label without its source line, which is kept in
        `labels`."""
        if isinstance(attr, StringAttr):
            view, where = split_node_label(attr.data)
            if where is not None:
                self.labels.append(attr.data)
                return "located(" + _spell_data(view, self.spell) + ")"
        return self.spell(attr)

    def define(self, value: SSAValue) -> None:
        self.numbers[value] = len(self.numbers)
        self.out.append(self.spell(value.type))

    def attributes(self, op: Operation) -> None:
        """The properties and attributes of `op`, each sorted by name."""
        out, spell = self.out, self.spell
        for name in sorted(op.properties):
            out.append("p " + name + "=" + spell(op.properties[name]))
        for name in sorted(op.attributes):
            attr = op.attributes[name]
            text = self.node(attr) if name == NODE_ATTRIBUTE else spell(attr)
            out.append("a " + name + "=" + text)

    def feed(self, op: Operation) -> None:
        out, numbers = self.out, self.numbers
        out.append(op.name + "(" + ",".join([str(numbers[v]) for v in op._operands]) + ")")
        for result in op.results:
            self.define(result)
        self.attributes(op)
        if not op.regions and not op._successors:
            out.append("succ ")
            return
        blocks = {block: i for region in op.regions for i, block in enumerate(region.blocks)}
        out.append("succ " + ",".join(str(blocks.get(b, -1)) for b in op.successors))
        for region in op.regions:
            out.append("{")
            for block in region.blocks:
                out.append("^")
                for arg in block.args:
                    self.define(arg)
                for inner in block.ops:
                    self.feed(inner)
            out.append("}")


# Class tests by MRO membership: `isinstance` against xDSL's abstract base classes walks
# every registered subclass the first time (milliseconds, on the compile cache's hit path).


def _spell(attr: Any, spell: Callable[[Attribute], str]) -> str:
    mro = type(attr).__mro__
    if ParametrizedAttribute in mro:
        return attr.name + "<" + ",".join(spell(p) for p in attr.parameters) + ">"
    if Data in mro:
        return attr.name + "(" + _spell_data(attr.data, spell) + ")"
    return f"{type(attr).__qualname__}:{attr!r}"


def _spell_data(data: Any, spell: Callable[[Attribute], str]) -> str:
    if Attribute in type(data).__mro__:
        return spell(data)
    if isinstance(data, float):
        return data.hex()
    if isinstance(data, bytes):
        return data.hex()
    if isinstance(data, tuple | list):
        return "[" + ",".join(_spell_data(d, spell) for d in data) + "]"
    if isinstance(data, dict):
        return "{" + ",".join(f"{k!r}:{_spell_data(data[k], spell)}" for k in sorted(data)) + "}"
    return f"{type(data).__qualname__}:{data!r}"


def cacheable(mode: Mode) -> bool:
    """Whether `mode` compiles through the cache: plain modes with a native linker."""
    from arignote.compile.mode import Mode

    return config.compile_cache and type(mode) is Mode and not mode.uses_interpreter


def _has_print(module: ModuleOp) -> bool:
    refused = _not_cached_ops()
    return any(isinstance(op, refused) for op in module.walk())


def cache_key(
    mode: Mode, module: ModuleOp | None, pipeline: str, graph: str | None = None
) -> Key | None:
    """The key of `module` (as emitted) compiled by `mode` with the graph pass-spec
    `pipeline`, or of the `graph_text` `graph` that emits it (then `module` is not
    read); None when not cacheable: also when it has an `ag.print`, whose native code
    calls back with ids registered in this process."""
    if not cacheable(mode):
        return None
    if graph is None:
        assert module is not None
        if _has_print(module):
            return None
        text = ir_text(module)
    else:
        text = GRAPH_TEXT_MARK + graph
    from arignote.runtime.cache import native_fingerprint

    h = hashlib.blake2b(digest_size=20)
    parts = (source_fingerprint(), native_fingerprint(), flags_text(mode, pipeline))
    for part in (*parts, text):
        h.update(part.encode())
        h.update(b"\x00")
    key = Key(h.hexdigest())
    key.labels = getattr(graph if graph is not None else text, "labels", ())
    return key


GRAPH_TEXT_MARK = "graph\n"
"""What starts a key's text made by `graph_text` (no `ir_text` starts so)."""

_NOT_CACHED_OPS: tuple[type[Operation], ...] | None = None


def _not_cached_ops() -> tuple[type[Operation], ...]:
    """The op classes whose functions are not cached: `ag.print`; a LAPACK op, whose
    native code calls back too (its errors), which the cached function, built without
    the module, would not know; an allreduce, whose native code needs the MPI library
    loaded and checked."""
    global _NOT_CACHED_OPS
    if _NOT_CACHED_OPS is None:
        from arignote.dialects import ag

        _NOT_CACHED_OPS = (ag.PrintOp, ag.LapackOp, ag.AllreduceOp)
    return _NOT_CACHED_OPS


def graph_text(
    args: Sequence[SSAValue],
    results: Sequence[SSAValue],
    symbol: str,
    updates: Mapping[int, int],
) -> KeyText | None:
    """The key text of the function `function()` would emit from the frontend graph
    computing `results` from `args` (`function._emit`: the graph's ops cloned in
    `ancestors` order into `func.func @symbol`, `updates` its `ag.updates` pairs), read
    from the graph itself: on a compile-cache hit nothing is emitted.

    It spells each op as `ir_text` spells the clone (the clone has the op's name,
    operand numbering, result types, properties, attributes and regions), then the
    returned values and the pairs. None where the emitted module differs from a clone of
    each op in that order, or the function is not cached: an op whose regions use
    values from outside (an `ifelse`, whose ops move into its branches), an op
    `cache_key` refuses (`ag.print`, ...), an operand that is no argument or result of
    the graph (`_emit` then raises `MissingInputError`)."""
    from arignote.graph import REGION_INPUTS, ancestors

    refused = _not_cached_ops()
    spelling = _Spelling()
    out, numbers = spelling.out, spelling.numbers
    out.append(f"func {symbol}")
    for arg in args:
        spelling.define(arg)
    try:
        for op in ancestors(list(results)):
            if isinstance(op, refused) or (op.regions and type(op) in REGION_INPUTS):
                return None
            if op.regions and any(isinstance(inner, refused) for inner in op.walk()):
                return None
            spelling.feed(op)
        out.append("return " + ",".join([str(numbers[v]) for v in results]))
    except KeyError:
        return None
    out.append("updates " + ",".join(f"{k}:{v}" for k, v in sorted(updates.items())))
    return KeyText.of(spelling)


def kernel_cache_directory() -> str | None:
    """Where the kernel cache (`arignote.runtime.kernelcache`) keeps the kernels' object
    code: `<config.compiledir>/kernels`; None when `config.compile_cache` is off."""
    if not config.compile_cache:
        return None
    return os.path.join(config.compiledir, KERNELS_SUBDIRECTORY)


def _pool_objects() -> None:
    """The thread pool keeps its object code in the cache directory too."""
    from arignote.runtime.threadpool import set_object_directory

    set_object_directory(cache_directory())


def load(key: str) -> Run | None:
    """The run of the entry `key`, or None (miss)."""
    from arignote.compile.mode import native_run
    from arignote.runtime import cache as store

    _pool_objects()
    labels = getattr(key, "labels", ())
    fn = store.load(cache_directory(), key, config.compile_cache_verbose, labels=labels)
    if fn is None:
        return None
    if getattr(fn, "ptx", None) is not None:  # a GPU function's entry
        from arignote.compile.mode import gpu_run

        return gpu_run(fn)
    return native_run(fn)


def save(key: str, run: Run) -> bool:
    """Store the native function of `run` under `key` (False when `run` is not native
    code, e.g. the interpreter fallback of 'c|py', or the entry cannot be written)."""
    from arignote.runtime import cache as store

    fn = getattr(run, "native", None) or getattr(run, "gpu", None)
    if fn is None:
        return False
    limit = config.compile_cache_max_mb * 2**20
    labels = getattr(key, "labels", ())
    stored = store.store(cache_directory(), key, fn, limit, config.compile_cache_verbose, labels)
    kernels = kernel_cache_directory()
    if kernels is not None:
        from arignote.runtime.kernelcache import prune_if_due

        prune_if_due(kernels, limit)
    return stored


def stats() -> Counter[str]:
    """This process's compile cache events: hit, miss, store, corrupt, write_error,
    pruned (a copy)."""
    from arignote.runtime.cachefile import STATS

    return Counter(STATS)


def clear() -> int:
    """Delete every entry of the cache directory; how many were deleted."""
    from arignote.runtime.cache import prune

    return prune(cache_directory(), 0)
