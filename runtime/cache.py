"""The on-disk cache of compiled native functions (object code plus what calls need).

An entry is one file `<key>.agc` in a cache directory, where `key` is a hex digest the
caller computes from everything the machine code depends on (see
`arignote.compile.codecache`; `native_fingerprint()` gives this side's share: the LLVM
and llvmlite versions, host CPU and features, Python and numpy versions, the entry-point
ABI). The file holds a magic string, a JSON header (the function's name, input and output
dtypes and ranks, shape-check messages, whether it calls BLAS), the object file
`NativeModule` emitted, and a BLAKE2 digest of all that.

* `load(directory, key)`: the `NativeFunction` of an entry, loaded into MCJIT without
  compiling anything, or None (a miss) when there is no entry or it is truncated,
  corrupt or unreadable: a broken entry is never an error.
* `store(directory, key, fn, max_bytes)`: write an entry atomically and without a lock
  (a temporary file in the same directory, then `os.replace`: a reader sees the old file,
  the new one or none, never a partial one; concurrent writers of one key both write
  whole files and the last rename wins), then `prune`.
* `prune(directory, max_bytes)`: delete the least recently used entries (a hit touches
  its file) until the entries take at most `max_bytes`, and stale temporary files.

`STATS` counts hits, misses, stores, corrupt entries, failed writes and pruned entries
in this process. Every event is logged on the `arignote.cache` logger (DEBUG level);
`verbose=True` also prints one line per event to stderr.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import logging
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.runtime.cpu import NativeModule, target_fingerprint
from arignote.runtime.native import NativeFunction, TensorSpec

FORMAT = 1
"""The version of the entry format (and of the key recipe)."""

SUFFIX = ".agc"
_MAGIC = b"arignote-native\x00" + FORMAT.to_bytes(2, "little")
_DIGEST = 16
_TEMP_PREFIX = ".tmp-"
_STALE_TEMP_SECONDS = 3600.0

logger = logging.getLogger("arignote.cache")

STATS: Counter[str] = Counter()
"""Events in this process: hit, miss, store, corrupt, write_error, uncacheable, pruned."""


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


def _event(kind: str, key: str, detail: str, verbose: bool) -> None:
    STATS[kind] += 1
    logger.debug("compile cache %s %s %s", kind, key, detail)
    if verbose:
        print(f"arignote: compile cache {kind}: {key} {detail}", file=sys.stderr)


# --- the entry format ----------------------------------------------------------------------


def _spec_json(spec: TensorSpec) -> list[Any]:
    return [spec.dtype.str, spec.rank]


def pack(fn: NativeFunction) -> bytes:
    """The bytes of the entry for `fn` (compiled by `NativeModule(...)`)."""
    module = fn._module
    header = {
        "name": fn.name,
        "inputs": [_spec_json(s) for s in fn.inputs],
        "outputs": [_spec_json(s) for s in fn.outputs],
        "messages": fn.messages,
        "aliases": sorted(fn.aliases.items()),
        "needs_blas": module.needs_blas,
    }
    head = json.dumps(header).encode()
    body = _MAGIC + len(head).to_bytes(4, "little") + head + module.object_code
    return body + hashlib.blake2b(body, digest_size=_DIGEST).digest()


def unpack(data: bytes) -> tuple[dict[str, Any], bytes] | None:
    """(header, object code) of an entry's bytes; None when they are not a whole,
    intact entry of this format."""
    start = len(_MAGIC) + 4
    if len(data) < start + _DIGEST or not data.startswith(_MAGIC):
        return None
    body, digest = data[:-_DIGEST], data[-_DIGEST:]
    if hashlib.blake2b(body, digest_size=_DIGEST).digest() != digest:
        return None
    size = int.from_bytes(body[len(_MAGIC) : start], "little")
    try:
        header = json.loads(body[start : start + size])
    except ValueError:
        return None
    return header, body[start + size :]


def _function(header: dict[str, Any], object_code: bytes) -> NativeFunction:
    module = NativeModule.from_object(object_code, bool(header["needs_blas"]))
    inputs = [TensorSpec(np.dtype(d), r) for d, r in header["inputs"]]
    outputs = [TensorSpec(np.dtype(d), r) for d, r in header["outputs"]]
    aliases = {int(r): int(a) for r, a in header.get("aliases", [])}
    return NativeFunction(module, header["name"], inputs, outputs, header["messages"], aliases)


# --- the directory -------------------------------------------------------------------------


def load(directory: str, key: str, verbose: bool = False) -> NativeFunction | None:
    """The function stored under `key`, or None (a miss, also for a broken entry)."""
    path = entry_path(directory, key)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        _event("miss", key, "", verbose)
        return None
    unpacked = unpack(data)
    if unpacked is None:
        _event("corrupt", key, f"{path} (ignored)", verbose)
        _event("miss", key, "", verbose)
        return None
    try:
        fn = _function(*unpacked)
    except (KeyError, TypeError, ValueError, RuntimeError) as e:
        _event("corrupt", key, f"{path}: {e} (ignored)", verbose)
        _event("miss", key, "", verbose)
        return None
    try:
        os.utime(path)  # least recently used goes first when pruning
    except OSError:
        pass
    _event("hit", key, path, verbose)
    return fn


def portable(imports: Sequence[str]) -> bool:
    """Whether code using the external symbols `imports` means the same in any process:
    each is an entry-point symbol (`arignote_Py*`) or a thread pool symbol (both bound
    again in every process) or is exported by a shared library loaded here (libc, libm,
    the BLAS). A symbol bound only in this process's JIT (e.g. a callback) makes the
    code unfit for the cache."""
    from arignote.runtime.entry import process_symbols, register_symbols
    from arignote.runtime.threadpool import SYMBOLS

    bound = set(process_symbols()) if imports and register_symbols() else set()
    bound.update(SYMBOLS)
    return all(name in bound or _exported(name) for name in imports)


def _exported(name: str) -> bool:
    try:
        getattr(ctypes.CDLL(None), name)
    except (AttributeError, OSError):
        return False
    return True


def store(
    directory: str, key: str, fn: NativeFunction, max_bytes: int, verbose: bool = False
) -> bool:
    """Write `fn` under `key` (atomically, see the module docstring), then prune the
    directory to `max_bytes`; False (and no exception) when it cannot be written or its
    code is not `portable` (counted as `uncacheable`)."""
    imports = fn._module.imports
    if imports is None or not portable(imports):
        _event("uncacheable", key, f"external symbols {imports}", verbose)
        return False
    data = pack(fn)
    temp = None
    try:
        os.makedirs(directory, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=directory, prefix=_TEMP_PREFIX, suffix=SUFFIX)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temp, entry_path(directory, key))
    except OSError as e:
        if temp is not None:
            _remove(temp)
        _event("write_error", key, f"{directory}: {e}", verbose)
        return False
    _event("store", key, f"{entry_path(directory, key)} ({len(data)} bytes)", verbose)
    prune(directory, max_bytes, verbose)
    return True


def _remove(path: str) -> bool:
    try:
        os.remove(path)
    except OSError:
        return False
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
        if item.name.startswith(_TEMP_PREFIX):
            if now - stat.st_mtime > _STALE_TEMP_SECONDS:
                _remove(item.path)
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
        if _remove(path):
            removed += 1
            _event("pruned", os.path.basename(path)[: -len(SUFFIX)], path, verbose)
    return removed
