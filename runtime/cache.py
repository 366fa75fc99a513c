"""The on-disk cache of compiled native functions (object code plus what calls need).

An entry is one file `<key>.agc` in a cache directory, where `key` is a hex digest the
caller computes from everything the machine code depends on (see
`arignote.compile.codecache`; `native_fingerprint()` gives this side's share: the LLVM
and llvmlite versions, host CPU and features, Python and numpy versions, the entry-point
ABI). The file is sealed (`arignote.runtime.cachefile`): a magic string, its own key, a
JSON header (the function's name, input and output dtypes and ranks, shape-check
messages, whether it calls BLAS), the object file `NativeModule` emitted, and a BLAKE2
digest of all that.

* `load(directory, key)`: the `NativeFunction` of an entry, loaded into MCJIT without
  compiling anything, or None (a miss) when there is no entry. What is not a whole entry
  of `key` (truncated, damaged, the entry of another key renamed or copied there, not a
  regular file: a FIFO, a symbolic link, a directory) is never loaded nor an error: it is
  counted `corrupt`, removed, and the caller compiles again.
* `store(directory, key, fn, max_bytes)`: write an entry atomically and without a lock
  (a temporary file in the same directory, then `os.replace`: a reader sees the old file,
  the new one or none, never a partial one; concurrent writers of one key both write
  whole files and the last rename wins; a process killed while writing leaves only a
  temporary file, which is never read), then `prune` when the directory's ledger says
  it may be over `max_bytes` (`cachefile.account`).
* `prune(directory, max_bytes)`: delete the least recently used entries (a hit touches
  its file) until the entries take at most `max_bytes`, and stale temporary files.

`cachefile.STATS` counts hits, misses, stores, corrupt entries, failed writes and pruned entries
in this process. Every event is logged on the `arignote.cache` logger (DEBUG level);
`verbose=True` also prints one line per event to stderr.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.runtime import cachefile
from arignote.runtime.cachefile import Broken, event
from arignote.runtime.cpu import NativeModule, target_fingerprint
from arignote.runtime.native import NativeFunction, TensorSpec

FORMAT = 3
"""The version of the entry format (and of the key recipe)."""

SUFFIX = ".agc"
_MAGIC = b"arignote-native\x00" + FORMAT.to_bytes(2, "little")
_STALE_TEMP_SECONDS = 3600.0

MAX_ENTRY_BYTES = 1 << 30
"""The largest entry `store` writes and `load` reads (a larger file there is broken)."""


def native_fingerprint() -> str:
    """What the stored code depends on besides the IR and the compiler's passes: the
    format, the target (`target_fingerprint`), the Python and numpy versions (the entry
    point reads their structs) and whether entry points are built in this process."""
    from arignote.runtime.entry import register_symbols

    return "|".join(
        [
            f"format {FORMAT}",
            target_fingerprint(),
            f"{sys.implementation.name} {sys.version}",
            f"numpy {np.__version__}",
            f"entry {register_symbols()}",
        ]
    )


def entry_path(directory: str, key: str) -> str:
    return os.path.join(directory, key + SUFFIX)


# --- the entry format ----------------------------------------------------------------------


def _spec_json(spec: TensorSpec) -> list[Any]:
    return [spec.dtype.str, spec.rank]


def pack(fn: NativeFunction, key: str) -> bytes:
    """The bytes of the entry for `fn` (compiled by `NativeModule(...)`) under `key`."""
    return cachefile.seal(_MAGIC, key, _payload(fn))


def _payload(fn: Any, labels: Sequence[str] = ()) -> bytes:
    """What an entry seals: the JSON header's size and bytes, then the object code (of a
    GPU function: its host code, the header holding its PTX and kernel table). `labels`:
    the node labels its messages were made with (`relabel`)."""
    header: dict[str, Any] = {
        "name": fn.name,
        "inputs": [_spec_json(s) for s in fn.inputs],
        "outputs": [_spec_json(s) for s in fn.outputs],
        "messages": fn.messages,
        "aliases": sorted(fn.aliases.items()),
        "labels": list(labels),
    }
    if isinstance(fn, NativeFunction):
        header["needs_blas"] = fn._module.needs_blas
        code = fn._module.object_code
    else:
        header["gpu"] = {
            "table": fn.table,
            "kernels": fn.kernel_names,
            "sources": fn.kernel_sources,
            "strided": fn.kernel_strided,
            "ptx": fn.ptx,
            "shape_reads": sorted(fn.shape_reads),
            "host_ir": fn.host_ir,
            "uses_blas": fn.uses_blas,
        }
        code = fn.object_code
    head = json.dumps(header).encode()
    return len(head).to_bytes(4, "little") + head + code


def unpack(data: bytes, key: str) -> tuple[dict[str, Any], bytes] | None:
    """(header, object code) of an entry's bytes; None when they are not a whole,
    intact entry of this format and of `key`."""
    try:
        return _split(cachefile.unseal(_MAGIC, key, data))
    except Broken:
        return None


def _split(payload: bytes) -> tuple[dict[str, Any], bytes]:
    """(header, object code) of an entry's payload; raises `Broken` when it has none."""
    size = int.from_bytes(payload[:4], "little")
    try:
        header = json.loads(payload[4 : 4 + size])
    except ValueError:
        raise Broken("no header") from None
    if not isinstance(header, dict):
        raise Broken("no header")
    return header, payload[4 + size :]


def _function(header: dict[str, Any], object_code: bytes) -> Any:
    inputs = [TensorSpec(np.dtype(d), r) for d, r in header["inputs"]]
    outputs = [TensorSpec(np.dtype(d), r) for d, r in header["outputs"]]
    aliases = {int(r): int(a) for r, a in header.get("aliases", [])}
    gpu = header.get("gpu")
    if gpu is not None:
        from arignote.runtime.cuda import GpuFunction

        return GpuFunction.from_object(
            object_code,
            gpu["table"],
            header["name"],
            inputs,
            outputs,
            header["messages"],
            aliases,
            gpu["kernels"],
            gpu["ptx"],
            gpu["shape_reads"],
            gpu["host_ir"],
            uses_blas=bool(gpu["uses_blas"]),
            sources=gpu["sources"],
            strided=gpu["strided"],
        )
    module = NativeModule.from_object(object_code, bool(header["needs_blas"]))
    return NativeFunction(module, header["name"], inputs, outputs, header["messages"], aliases)


# --- the directory -------------------------------------------------------------------------


def relabel(texts: Sequence[str], stored: Sequence[str], labels: Sequence[str]) -> list[str] | None:
    """`texts` (an entry's messages or GPU kernel sources, made from a graph whose node
    labels were `stored`) quoting `labels` instead, label for label: the key leaves the
    labels' source lines out, so a graph built a few lines lower finds the entry (see
    `arignote.compile.codecache`). Labels appear as they are or escaped for `%`
    formatting (messages). None when they do not pair up: another count, or a stored
    label standing for two of `labels` (its messages would quote the wrong one)."""
    if list(stored) == list(labels):
        return list(texts)
    if len(stored) != len(labels):
        return None
    new_of: dict[str, str] = {}
    for old, new in zip(stored, labels, strict=True):
        for before, after in ((old, new), (old.replace("%", "%%"), new.replace("%", "%%"))):
            if new_of.setdefault(before, after) != after:
                return None
    joined = "\x00".join(texts)
    # only the labels quoted (a few), so that the pattern compiles fast
    changed = {old: new for old, new in new_of.items() if old != new and old in joined}
    if not changed:
        return list(texts)
    # longest first: a label that begins another (`prog.py:1`, `prog.py:12`) matches last
    pattern = re.compile("|".join(re.escape(old) for old in sorted(changed, key=len, reverse=True)))
    return [pattern.sub(lambda m: changed[m.group(0)], text) for text in texts]


def _relabeled(header: dict[str, Any], labels: Sequence[str]) -> dict[str, Any] | None:
    """`header` with its messages (and GPU kernel sources) quoting `labels` (`relabel`);
    None when they cannot."""
    stored = header.get("labels")
    if not isinstance(stored, list):
        return None
    if stored == list(labels):
        return header
    messages = relabel(header["messages"], stored, labels)
    if messages is None:
        return None
    header = dict(header, messages=messages)
    gpu = header.get("gpu")
    if gpu is not None:
        sources = relabel(gpu["sources"], stored, labels)
        if sources is None:
            return None
        header["gpu"] = dict(gpu, sources=sources)
    return header


def load(
    directory: str,
    key: str,
    verbose: bool = False,
    max_bytes: int = MAX_ENTRY_BYTES,
    labels: Sequence[str] | None = None,
) -> NativeFunction | None:
    """The function stored under `key`, or None (a miss; also for a broken entry,
    which is removed). With `labels` (the caller's graph's node labels, `Key.labels` of
    `arignote.compile.codecache`), its messages quote them (`relabel`); an entry whose
    labels do not pair up with them is a miss (and is replaced by the compile that
    follows)."""
    path = entry_path(directory, key)
    try:
        header, code = _split(cachefile.load(path, _MAGIC, key, max_bytes))
        if labels is not None:
            relabeled = _relabeled(header, labels)
            if relabeled is None:
                event("miss", key, f"{path}: its node labels do not pair up", verbose)
                return None
            header = relabeled
        fn = _function(header, code)
    except OSError:
        event("miss", key, "", verbose)
        return None
    except (Broken, KeyError, TypeError, ValueError, RuntimeError) as e:
        if not isinstance(e, Broken):  # a header this version cannot read
            cachefile.discard(path, None)
        event("corrupt", key, f"{path}: {e} (removed)", verbose)
        event("miss", key, "", verbose)
        return None
    try:
        os.utime(path)  # least recently used goes first when pruning
    except OSError:
        pass
    event("hit", key, path, verbose)
    return fn


def portable(imports: Sequence[str]) -> bool:
    """Whether code using the external symbols `imports` means the same in any process:
    each is an entry-point symbol (`arignote_Py*`), a thread pool symbol or a GPU runtime
    symbol (bound again in every process) or is exported by a shared library loaded here
    (libc, libm, the BLAS). A symbol bound only in this process's JIT (e.g. a callback) makes the
    code unfit for the cache."""
    from arignote.runtime.entry import process_symbols, register_symbols
    from arignote.runtime.threadpool import SYMBOLS

    bound = set(process_symbols()) if imports and register_symbols() else set()
    bound.update(SYMBOLS)
    return all(
        name in bound or name.startswith(GPU_RUNTIME_PREFIX) or _exported(name) for name in imports
    )


GPU_RUNTIME_PREFIX = "arignote_gpu_"
"""The GPU runtime's symbols, bound again in every process before a GPU function's host
code is loaded (`arignote.runtime.cuda`)."""


def _exported(name: str) -> bool:
    try:
        getattr(ctypes.CDLL(None), name)
    except (AttributeError, OSError):
        return False
    return True


def store(
    directory: str,
    key: str,
    fn: NativeFunction,
    max_bytes: int,
    verbose: bool = False,
    labels: Sequence[str] = (),
) -> bool:
    """Write `fn` under `key` (atomically, see the module docstring), then prune the
    directory to `max_bytes`; False (and no exception) when it cannot be written or its
    code is not `portable` (counted as `uncacheable`). `labels`: the node labels of the
    graph it was compiled from (`relabel`)."""
    imports = fn._module.imports if isinstance(fn, NativeFunction) else fn.imports
    if imports is None or not portable(imports):
        event("uncacheable", key, f"external symbols {imports}", verbose)
        return False
    path = entry_path(directory, key)
    try:
        size = cachefile.store(path, _MAGIC, key, _payload(fn, labels), MAX_ENTRY_BYTES)
    except OSError as e:
        event("write_error", key, f"{directory}: {e}", verbose)
        return False
    event("store", key, f"{path} ({size} bytes)", verbose)
    if cachefile.account(directory, size, max_bytes):  # (else under the limit: no scan)
        prune(directory, max_bytes, verbose)
    return True


def _entries(directory: str) -> list[tuple[float, int, str]]:
    """(mtime, size, path) of the entries; stale temporary files are removed."""
    found = []
    now = time.time()
    try:
        scan = list(os.scandir(directory))
    except OSError:
        return []
    for item in scan:
        try:
            stat = item.stat()
        except OSError:
            continue  # removed meanwhile
        if cachefile.stale_temporary(item.name):
            if now - stat.st_mtime > _STALE_TEMP_SECONDS:
                cachefile.remove(item.path)
        elif item.name.endswith(SUFFIX):
            found.append((stat.st_mtime, stat.st_size, item.path))
    return found


def prune(directory: str, max_bytes: int, verbose: bool = False) -> int:
    """Delete the least recently used entries until they take at most `max_bytes`;
    how many were deleted (by this call: another process may prune at the same time)."""
    entries = sorted(_entries(directory))
    total = sum(size for _, size, _ in entries)
    removed = 0
    for _, size, path in entries:
        if total <= max_bytes:
            break
        total -= size
        if cachefile.remove(path):
            removed += 1
            event("pruned", os.path.basename(path)[: -len(SUFFIX)], path, verbose)
    if entries:
        cachefile.scanned(directory, total)
    return removed
