"""Sealed files in the compile cache's directory: a process uses only what it wrote.

The compile cache (`arignote.runtime.cache`) and the thread pool's object code
(`arignote.runtime.threadpool`) keep native code in one directory that any process of the
user may write, that a crash may leave half written and that a user may edit. What is
read back there is handed to LLVM and executed, so each file is *sealed*:

    magic | key length (2 bytes) | key (ASCII) | payload | BLAKE2b digest of all that

and `load` returns its payload only when the file is a regular file (opened with
`O_NOFOLLOW | O_NONBLOCK`, checked with `fstat`: never a FIFO, which would block, a
symbolic link, e.g. to `/dev/zero`, which never ends, a device or a directory), no
larger than the cap, read whole, with the expected magic (kind and format), its own key
equal to the key looked up (an entry renamed or copied under another key is refused)
and a digest that matches (a truncated or damaged one is refused). Anything else at that
path is `BROKEN`: counted `corrupt` in `STATS`, removed (the inode that was read, not a
file a concurrent writer renamed there since) and the caller compiles again.

`store` writes a sealed file atomically: a temporary file `.tmp-*` in the same directory
(which `stale_temporary` recognises, so a process killed while writing leaves nothing that
is ever loaded, and pruning deletes it later), then `os.replace`.

A directory's *ledger* (`.ledger`, `account` and `scanned`) keeps the bytes its files take,
so that a store does not list and `stat` every file of the directory to learn whether it
is over its size limit (5,000 entries: 8 ms a store): the caches prune (a full scan) only
when the ledger is missing or unreadable, says the directory is over its limit, or was
last set by a scan more than `RESCAN_SECONDS` ago. Updates hold an exclusive `flock` on
the ledger; what escapes it (a file removed by hand, a concurrent store between a scan
and its record) only makes the count approximate until the next scan.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import stat
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

DIGEST_SIZE = 16
TEMP_PREFIX = ".tmp-"

logger = logging.getLogger("arignote.cache")

STATS: Counter[str] = Counter()
"""Events in this process: hit, miss, store, corrupt, write_error, uncacheable, pruned."""


def event(kind: str, key: str, detail: str, verbose: bool = False) -> None:
    """Count `kind` in `STATS`, log it (DEBUG) and, when `verbose`, print it to stderr."""
    STATS[kind] += 1
    logger.debug("compile cache %s %s %s", kind, key, detail)
    if verbose:
        print(f"arignote: compile cache {kind}: {key} {detail}", file=sys.stderr)


class Broken(Exception):
    """What lies at an entry's path is not a whole entry of the key looked up (`opened`:
    the `fstat` of what was opened there, if anything was)."""

    def __init__(self, reason: str, opened: os.stat_result | None = None) -> None:
        super().__init__(reason)
        self.opened = opened


def _digest(body: bytes) -> bytes:
    return hashlib.blake2b(body, digest_size=DIGEST_SIZE).digest()


def seal(magic: bytes, key: str, payload: bytes) -> bytes:
    """The bytes of the file holding `payload` under `key`."""
    name = key.encode("ascii")
    body = magic + len(name).to_bytes(2, "little") + name + payload
    return body + _digest(body)


def unseal(magic: bytes, key: str, data: bytes) -> bytes:
    """The payload of `data` (the bytes of a file `seal` wrote under `key`); raises
    `Broken` when they are not."""
    name = key.encode("ascii")
    head = magic + len(name).to_bytes(2, "little") + name
    if len(data) < len(head) + DIGEST_SIZE or not data.startswith(magic):
        raise Broken("not an entry of this format")
    if not data.startswith(head):
        raise Broken("the entry of another key")
    body, digest = data[:-DIGEST_SIZE], data[-DIGEST_SIZE:]
    if _digest(body) != digest:
        raise Broken("digest mismatch (truncated or damaged)")
    return body[len(head) :]


_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def read_regular(path: str, max_bytes: int) -> tuple[bytes, os.stat_result]:
    """The whole content of the regular file `path` and its `fstat`. Raises OSError
    when there is nothing to read there (no file, no permission), `Broken` (with the
    `fstat` of what was opened, when something was) when `path` is not a regular file
    of at most `max_bytes` bytes. Never blocks (a FIFO) nor follows a symbolic link."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as e:
        if e.errno == errno.ELOOP:  # O_NOFOLLOW met a symbolic link
            raise Broken("a symbolic link") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Broken(f"not a regular file (mode {info.st_mode:o})", info)
        if info.st_size > max_bytes:
            raise Broken(f"{info.st_size} bytes, more than {max_bytes}", info)
        data = _read_all(fd, info.st_size)
    finally:
        os.close(fd)
    if len(data) != info.st_size:
        raise Broken("its size changed while it was read", info)
    return data, info


def _read_all(fd: int, size: int) -> bytes:
    """At most `size + 1` bytes of `fd` (one more than expected shows a growing file)."""
    chunks, left = [], size + 1
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 24))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def load(path: str, magic: bytes, key: str, max_bytes: int) -> bytes:
    """The payload of the sealed file `path` of `key`. Raises OSError when there is none
    (a miss), `Broken` when something else lies there: it is then removed (see
    `discard`)."""
    try:
        data, info = read_regular(path, max_bytes)
    except Broken as e:
        discard(path, e.opened)
        raise
    try:
        return unseal(magic, key, data)
    except Broken as e:
        discard(path, info)
        e.opened = info
        raise


def discard(path: str, opened: os.stat_result | None) -> bool:
    """Remove what lies at `path` (an empty directory too) unless it is no longer the
    inode `opened` that was read (a concurrent writer renamed a new entry there).
    False when nothing was removed."""
    try:
        now = os.lstat(path)
        if opened is not None and (now.st_dev, now.st_ino) != (opened.st_dev, opened.st_ino):
            return False
        if stat.S_ISDIR(now.st_mode):
            os.rmdir(path)
        else:
            os.remove(path)
    except OSError:
        return False
    return True


def store(path: str, magic: bytes, key: str, payload: bytes, max_bytes: int) -> int:
    """Write `payload` sealed under `key` at `path`, atomically (a temporary file in the
    same directory, created there, then renamed over `path`); how many bytes. Raises
    OSError (and leaves no temporary file) when it cannot, or when the file would take
    more than `max_bytes` (which `load` would refuse)."""
    directory = os.path.dirname(path)
    data = seal(magic, key, payload)
    if len(data) > max_bytes:
        raise OSError(errno.EFBIG, f"{len(data)} bytes, more than {max_bytes}", path)
    os.makedirs(directory, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=directory, prefix=TEMP_PREFIX)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        _replace(temp, path)
    except BaseException:
        remove(temp)
        raise
    return len(data)


def _replace(temp: str, path: str) -> None:
    """`os.replace(temp, path)`, first removing an empty directory at `path` (a broken
    entry that `os.replace` cannot replace)."""
    try:
        os.replace(temp, path)
    except IsADirectoryError:
        os.rmdir(path)
        os.replace(temp, path)


def remove(path: str) -> bool:
    """Remove the file `path`; whether it was removed (a file already gone, or one that
    cannot be removed, is not an error of the caches')."""
    try:
        os.remove(path)
    except OSError:
        return False
    return True


def stale_temporary(name: str) -> bool:
    """Whether the file `name` of the directory is a temporary file of `store`."""
    return name.startswith(TEMP_PREFIX)


LEDGER = ".ledger"
"""The ledger's file name in a cache directory (neither an entry nor a temporary file)."""

RESCAN_SECONDS = 3600.0
"""How long a ledger set by a scan is trusted: then the next store scans again."""


def account(directory: str, added: int, max_bytes: int | None = None) -> bool:
    """Add `added` bytes to the ledger of `directory`; whether a scan is due (the caller
    prunes, and its scan sets the ledger with `scanned`): no ledger or an unreadable
    one, one older than `RESCAN_SECONDS`, or a total over `max_bytes` (None: no limit
    checked here). Every failure of the ledger itself says a scan is due."""
    try:
        with _locked_ledger(directory) as fd:
            try:
                total_text, scanned_text = os.pread(fd, 64, 0).split()
                total, scanned_at = int(total_text) + added, float(scanned_text)
            except ValueError:  # new (empty) or damaged
                return True
            if not 0 <= time.time() - scanned_at <= RESCAN_SECONDS:
                return True
            _write_ledger(fd, total, scanned_at)
            return max_bytes is not None and total > max_bytes
    except OSError:
        return True


def scanned(directory: str, total: int) -> None:
    """Set the ledger of `directory` to `total` bytes, counted by a scan now (nothing
    when the ledger cannot be written: the next store then scans again)."""
    try:
        with _locked_ledger(directory) as fd:
            _write_ledger(fd, total, time.time())
    except OSError:
        pass


@contextmanager
def _locked_ledger(directory: str) -> Iterator[int]:
    """The ledger file of `directory`, open and locked (`flock`, released when it is
    closed on leaving); `OSError` when it cannot be (off POSIX too)."""
    try:
        import fcntl
    except ImportError as e:  # pragma: no cover - not POSIX
        raise OSError("no flock here") from e
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(os.path.join(directory, LEDGER), flags, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)


def _write_ledger(fd: int, total: int, scanned_at: float) -> None:
    text = f"{total} {scanned_at!r}\n".encode()
    os.pwrite(fd, text, 0)
    os.ftruncate(fd, len(text))
