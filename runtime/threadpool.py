"""The native thread pool behind `ag.parallel_for` (see `arignote.lowering.llvm.parallelize`).

JIT code runs a parallel loop by calling

    int64 arignote_parallel_for(task*, ctx*, int64 begin, int64 end,
                                int64 min_trips, int64 align, int64 max_parts)
    void  task(int64 begin, int64 end, int64 part, ctx*)

which splits `[begin, end)` into at most `threads()` parts (and at most `max_parts`
when it is positive), every boundary but `end`
at `begin + k * chunk` with `chunk` a multiple of `align`, runs part 0 on the calling
thread and the others on the pool's workers, waits for all of them and returns the
number of parts. When the range has fewer than `min_trips` iterations, when there is
one thread, or when the pool is busy (a parallel loop started by another thread, or
from inside a task), it calls `task(begin, end, 0, ctx)` itself and returns 1.
`int64 arignote_parallel_width()` is the most parts a call may use (at least 1).

The pool is native code built here with llvmlite's IR builder, compiled once per
process (or read from the compile cache's directory, where it is sealed with its key and
a digest like the cache's entries: `arignote.runtime.cachefile`) into its own MCJIT
engine (no C compiler needed; a compile with parallel loops starts making it in a
background thread, `prefetch`, while the lowering runs), and bound to those symbol
names with `llvm.add_symbol` when a module that calls it is loaded
(`register_symbols`), so compiled modules hold no process-specific address and stay
cacheable. Its workers are POSIX threads (`pthread_create` from libc) started on the
first parallel loop; they never run Python nor take the GIL, and block every signal.

Dispatch: the caller publishes the job, then increments the generation counter `gen`;
a worker waiting for a new generation spins on it for a while (`SPIN` pauses, about
0.1 to 0.3 ms), then sleeps in `futex(FUTEX_WAIT)` on it (the caller wakes sleepers
only when there are some). Each worker decrements `pending` after its part; the caller,
having run part 0, spins on `pending` then sleeps on it the same way. A dispatch costs
two cache-line transfers when the workers are spinning (well under a microsecond), a
futex wake (a few microseconds) when they sleep. The caller also publishes the CPU it
runs on (`sched_getcpu`); a worker that finds itself on that CPU when it takes a job
restricts itself to the CPUs it started with but that one (`sched_setaffinity`), which
moves it at once: the scheduler tends to wake a sleeper on its waker's CPU, and the two
then took turns on one core while another idled.

Lifetime: `os.register_at_fork` resets the pool in a forked child (whose only thread
is the one that forked): the child starts its own workers on its first parallel loop.
At exit (`atexit`) the workers are stopped and joined. Linux only (futex): elsewhere
`available()` is False and the frontend compiles serial loops.
"""

from __future__ import annotations

import atexit
import os
import platform
import re
import sys
import threading
import warnings
from functools import cache

PARALLEL_FOR = "arignote_parallel_for"
"""`int64 (task*, ctx*, begin, end, min_trips, align, max_parts)`: runs a parallel loop."""

PARALLEL_WIDTH = "arignote_parallel_width"
"""`int64 ()`: the most parts `arignote_parallel_for` splits a loop into."""

SYMBOLS = (PARALLEL_FOR, PARALLEL_WIDTH)

MAX_THREADS = 64
"""At most this many threads (the caller and `MAX_THREADS - 1` workers)."""

OVERSPLIT = 4
"""A parallel loop is split into up to this many chunks per thread, claimed by the
threads as they come: a thread the OS runs late (or not at all) leaves its share to
the others instead of holding up the loop."""

SPIN = 1 << 11
"""Pause instructions a worker spins before sleeping in the kernel (0.1 to 0.3 ms): long
enough to stay awake between the steps of a training loop, short enough not to take
much from the calling thread on a busy machine. The caller, waiting for chunks that
workers still run, spins `SPIN // 16`. `OMP_WAIT_POLICY` changes it (`spin_count`)."""

WAIT_POLICY_SPIN = {"passive": 64, "active": 1 << 15}
"""Spins for OpenMP's `OMP_WAIT_POLICY`: `passive` sleeps almost at once (best when
other processes keep every core busy), `active` spins a few milliseconds."""


class ThreadSettingWarning(RuntimeWarning):
    """An environment variable that sets the threads (`OMP_NUM_THREADS`,
    `OMP_WAIT_POLICY`) has a value arignote cannot use: the warning names the
    variable, the value, what is expected and what is used instead."""


def _warn(variable: str, value: str, expected: str, used: str) -> None:
    # stacklevel 1: the value comes from the environment, not from the caller's code
    message = f"{variable}={value!r}: expected {expected}; {used}"
    warnings.warn(message, ThreadSettingWarning, stacklevel=1)


def spin_count() -> int:
    """`SPIN`, or the spin of `OMP_WAIT_POLICY` (`passive` / `active`, any case) when it
    is set; another value warns (`ThreadSettingWarning`, once per value) and leaves
    `SPIN`."""
    return _spin_for(os.environ.get("OMP_WAIT_POLICY", ""))


@cache
def _spin_for(text: str) -> int:
    policy = text.strip().lower()
    if not policy:
        return SPIN
    if policy not in WAIT_POLICY_SPIN:
        _warn("OMP_WAIT_POLICY", text, "'active' or 'passive'", "arignote's default spin is used")
        return SPIN
    return WAIT_POLICY_SPIN[policy]


_FUTEX = {"x86_64": 202, "aarch64": 98}
"""`SYS_futex` per machine."""
_FUTEX_WAIT_PRIVATE = 128
_FUTEX_WAKE_PRIVATE = 129
_PAUSE = {"x86_64": "pause", "aarch64": "yield"}


def available() -> bool:
    """Whether this process can run the pool (Linux on x86-64 or AArch64)."""
    return sys.platform.startswith("linux") and platform.machine() in _FUTEX


def usable_cores() -> int:
    """The cores this process may run on (`os.sched_getaffinity`), at most its cgroup's
    CPU quota rounded up (`cpu_quota`), at least 1.

    A container limited to 2 CPUs by a quota still sees every core of the host in its
    affinity mask: one thread per host core would then take turns on 2 CPUs, each spin
    and barrier waiting for threads that are not running.
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    quota = cpu_quota()
    return max(1, cores if quota is None else min(cores, quota))


def cpu_quota() -> int | None:
    """The CPU quota of this process's cgroup in whole CPUs (rounded up), None if none.

    cgroup v2: `cpu.max` (`"<quota> <period>"` or `"max <period>"`) of the process's
    cgroup (`0::<path>` in /proc/self/cgroup) and of its ancestors, the smallest;
    cgroup v1: `cpu.cfs_quota_us / cpu.cfs_period_us` (-1: none).
    """
    limits = [_quota_of(text) for text in _quota_files()]
    found = [limit for limit in limits if limit is not None]
    return min(found) if found else None


def _quota_files() -> list[str]:
    """The contents of the cgroup quota files that apply to this process."""
    root = "/sys/fs/cgroup"
    paths = [f"{root}/cpu/cpu.cfs_quota_us", f"{root}/cpu,cpuacct/cpu.cfs_quota_us"]
    relative = _read("/proc/self/cgroup") or ""
    for line in relative.splitlines():
        if line.startswith("0::"):
            parts = [p for p in line[3:].strip().split("/") if p]
            paths += [os.path.join(root, *parts[:k], "cpu.max") for k in range(len(parts) + 1)]
    texts = []
    for path in paths:
        text = _read(path)
        if text is None:
            continue
        if path.endswith("cfs_quota_us"):
            text = f"{text} {_read(path.replace('quota', 'period')) or ''}"
        texts.append(text)
    return texts


def _quota_of(text: str) -> int | None:
    """Whole CPUs of `"<quota> <period>"` (rounded up), None for no limit or bad text."""
    fields = text.split()
    if len(fields) != 2 or not fields[0].isdigit() or not fields[1].isdigit():
        return None  # "max ...", "-1 ...", or unreadable: no limit
    quota, period = int(fields[0]), int(fields[1])
    return max(1, -(-quota // period)) if period > 0 else None


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


_THREAD_COUNTS = re.compile(r"\s*[1-9]\d*\s*(,\s*[1-9]\d*\s*)*")
"""OpenMP's `OMP_NUM_THREADS`: a positive integer, or a comma-separated list of them
(one per nesting level; arignote's loops do not nest, so the first is used)."""


def default_threads() -> int:
    """`OMP_NUM_THREADS` (its first entry) when set, else `usable_cores()`; at most
    `MAX_THREADS`. A value that is not a list of positive integers, or above
    `MAX_THREADS`, warns (`ThreadSettingWarning`, once per value: the variable, the
    value, what is expected, what is used) instead of being ignored silently."""
    return _threads_for(os.environ.get("OMP_NUM_THREADS", ""))


@cache
def _threads_for(text: str) -> int:
    if not text.strip():
        return min(usable_cores(), MAX_THREADS)
    if not _THREAD_COUNTS.fullmatch(text):
        cores = min(usable_cores(), MAX_THREADS)
        expected = "a positive integer, or a comma-separated list of them (the first is used)"
        _warn("OMP_NUM_THREADS", text, expected, f"using the {cores} usable cores")
        return cores
    count = int(text.split(",")[0])
    if count > MAX_THREADS:
        expected = f"at most {MAX_THREADS} threads (the most arignote's thread pool runs)"
        _warn("OMP_NUM_THREADS", text, expected, f"using {MAX_THREADS}")
        return MAX_THREADS
    return count


# --- the pool in LLVM IR -----------------------------------------------------------------


def pool_ir(machine: str) -> str:
    """The LLVM IR text of the pool for `machine` (`platform.machine()`)."""
    from arignote.runtime._threadpool_ir import PoolBuilder

    spin = spin_count()
    return PoolBuilder(_FUTEX[machine], _PAUSE[machine], spin, MAX_THREADS, OVERSPLIT).build()


OBJECT_PREFIX = "threadpool-"
_object_directory: str | None = None


def set_object_directory(directory: str | None) -> None:
    """Keep the pool's object code in `directory` (the compile cache's), so that a new
    process loads it instead of compiling it (None: compile it in each process)."""
    global _object_directory
    _object_directory = directory


def _object_key(machine: str) -> str:
    """What the pool's object code depends on: its generator's source, its parameters,
    the target (LLVM version, CPU)."""
    import hashlib

    from arignote.runtime.cpu import target_fingerprint

    h = hashlib.blake2b(digest_size=16)
    generator = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_threadpool_ir.py")
    for path in (__file__, generator):  # (importing the generator takes milliseconds)
        with open(path, "rb") as f:
            h.update(f.read())
    h.update(f"{machine} {spin_count()} {MAX_THREADS} {OVERSPLIT} {target_fingerprint()}".encode())
    return h.hexdigest()


def _compile_object(machine: str) -> bytes:
    """The pool's object code, compiled at O1 (its code is all waiting and calls)."""
    import llvmlite.binding as llvm

    from arignote.runtime.cpu import host_cpu

    triple, cpu, features = host_cpu()
    target = llvm.Target.from_triple(triple).create_target_machine(
        cpu=cpu, features=features, opt=1, codemodel="jitdefault"
    )
    # a context of its own: this runs in a background thread (`prefetch`) while the
    # calling thread may use LLVM's global context
    module = llvm.parse_assembly(pool_ir(machine), llvm.create_context())
    module.triple, module.data_layout = target.triple, str(target.target_data)
    module.verify()
    return target.emit_object(module)


_OBJECT_MAGIC = b"arignote-pool\x00" + (1).to_bytes(2, "little")
_MAX_OBJECT_BYTES = 1 << 24
"""The largest pool object read back (it takes about 7 KB)."""


def _object_code(machine: str, directory: str | None) -> bytes:
    """The pool's object code: from the object `directory` when it holds it (a sealed
    file, `arignote.runtime.cachefile`: never one that another key or a crashed writer
    left there, which is removed), else compiled (and stored there, atomically)."""
    from arignote.runtime import cachefile

    if directory is None:
        return _compile_object(machine)
    key = _object_key(machine)
    path = os.path.join(directory, OBJECT_PREFIX + key + ".o")
    try:
        return cachefile.load(path, _OBJECT_MAGIC, key, _MAX_OBJECT_BYTES)
    except cachefile.Broken as e:
        cachefile.event("corrupt", OBJECT_PREFIX + key, f"{path}: {e} (removed)")
    except OSError:
        pass
    code = _compile_object(machine)
    try:
        cachefile.store(path, _OBJECT_MAGIC, key, code, _MAX_OBJECT_BYTES)
    except OSError:
        pass
    return code


class _Prefetch:
    """The pool's object code being made (`_object_code`) in a background thread."""

    def __init__(self, machine: str, directory: str | None) -> None:
        self.key = (machine, spin_count())
        self.directory = directory
        self.code: bytes | None = None
        self.thread = threading.Thread(target=self._run, name="arignote-pool-compile", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.code = _object_code(self.key[0], self.directory)
        except Exception:  # noqa: BLE001 - `_Pool` makes it again and raises there
            self.code = None

    def result(self, machine: str) -> bytes | None:
        """The object code once made, when it is that of the pool `machine` needs now
        (else None: `OMP_WAIT_POLICY` changed, or it failed)."""
        self.thread.join()
        return self.code if self.key == (machine, spin_count()) else None


_PREFETCH_LOCK = threading.Lock()
_prefetch: _Prefetch | None = None
"""The background making of the pool's object code, once started (kept once joined)."""


def prefetch() -> bool:
    """Start making the pool's object code in a background thread (read from the object
    directory, or compiled there), unless the pool is loaded or its code is already being
    made, or this platform has no pool; True when this call started it.

    A compile whose code may call the pool starts this as it begins: llvmlite releases
    the GIL during LLVM's work, so the pool (about 25 ms of LLVM) compiles while the
    lowering runs in Python. Loading the pool waits for it; so do `os.fork` (LLVM's
    lock must not be held by a thread that the child lacks) and the exit."""
    global _prefetch
    if _POOL is not None or _prefetch is not None or not available():
        return False
    with _PREFETCH_LOCK:
        if _POOL is not None or _prefetch is not None:
            return False
        if not _hooks_registered:
            _register_hooks()
        _prefetch = _Prefetch(platform.machine(), _object_directory)
    return True


def _join_prefetch() -> None:
    job = _prefetch
    if job is not None:
        job.thread.join()


def wait_for_prefetch() -> None:
    """Wait for the background compile (`prefetch`), if one runs. Call it before taking
    llvmlite's lock to fork: the fork hook waits for that compile, which needs the lock."""
    _join_prefetch()


_hooks_registered = False


def _register_hooks() -> None:
    """`os.fork` and the interpreter's exit wait for the background compile (LLVM must
    not be running in a thread the child lacks, nor while the process tears it down)."""
    global _hooks_registered
    os.register_at_fork(before=_join_prefetch)
    atexit.register(_join_prefetch)
    _hooks_registered = True


def _pool_object_code(machine: str) -> bytes:
    """The pool's object code: the prefetched one when there is one, else made now."""
    job = _prefetch
    code = None if job is None else job.result(machine)
    return code if code is not None else _object_code(machine, _object_directory)


class _Pool:
    """The compiled pool of this process: its engine and its control functions."""

    def __init__(self) -> None:
        import ctypes

        import llvmlite.binding as llvm

        from arignote.runtime.cpu import host_target_machine

        engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), host_target_machine())
        code = _pool_object_code(platform.machine())
        engine.add_object_file(llvm.ObjectFileRef.from_data(code))
        engine.finalize_object()
        self.engine = engine
        address = engine.get_function_address
        self.addresses = {name: address(name) for name in SYMBOLS}
        void, i64 = None, ctypes.c_int64
        self._set_threads = ctypes.CFUNCTYPE(void, i64)(address("arignote_pool_set_threads"))
        self._width = ctypes.CFUNCTYPE(i64)(self.addresses[PARALLEL_WIDTH])
        self._threads = ctypes.CFUNCTYPE(i64)(address("arignote_pool_threads"))
        self._dispatches = ctypes.CFUNCTYPE(i64)(address("arignote_pool_dispatches"))
        self._workers = ctypes.CFUNCTYPE(i64)(address("arignote_pool_workers"))
        self._state = ctypes.CFUNCTYPE(void, ctypes.c_void_p)(address("arignote_pool_state"))
        self.shutdown = ctypes.CFUNCTYPE(void)(address("arignote_pool_shutdown"))
        self.after_fork = ctypes.CFUNCTYPE(void)(address("arignote_pool_after_fork"))
        self._set_threads(default_threads())


_LOCK = threading.Lock()
_POOL: _Pool | None = None


def _pool() -> _Pool:
    global _POOL
    if _POOL is None:
        with _LOCK:
            if _POOL is None:
                if not available():
                    raise RuntimeError(
                        f"the native thread pool needs Linux on x86_64 or aarch64, not "
                        f"{sys.platform} on {platform.machine()}"
                    )
                pool = _Pool()
                atexit.register(pool.shutdown)
                os.register_at_fork(after_in_child=pool.after_fork)
                _POOL = pool
    return _POOL


@cache
def register_symbols() -> None:
    """Compile the pool (once) and bind `SYMBOLS` for the JIT."""
    import llvmlite.binding as llvm

    for name, address in _pool().addresses.items():
        llvm.add_symbol(name, address)


def uses_pool(code: bytes | str) -> bool:
    """Whether LLVM IR text or an object file calls the pool."""
    if isinstance(code, str):
        return PARALLEL_FOR in code or PARALLEL_WIDTH in code
    return PARALLEL_FOR.encode() in code or PARALLEL_WIDTH.encode() in code


def set_threads(count: int) -> None:
    """Use at most `count` threads (the caller included) for later parallel loops; 1
    runs them serially. Workers are started when a loop first needs them. Not while
    a parallel loop runs in another thread."""
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_THREADS:
        raise ValueError(
            f"set_threads: count must be an integer in 1..{MAX_THREADS}, got {count!r}"
        )
    _pool()._set_threads(count)


def threads() -> int:
    """The most threads a parallel loop uses now (the caller included)."""
    return _pool()._threads()


def width() -> int:
    """The most chunks a parallel loop is split into now (`arignote_parallel_width()`)."""
    return _pool()._width()


def dispatches() -> int:
    """How many parallel loops this process ran on more than one thread."""
    return _pool()._dispatches()


def workers() -> int:
    """How many worker threads are running (started by the first parallel loops)."""
    return _pool()._workers()


def state() -> dict[str, int]:
    """The pool's words now, for diagnostics: the job generation (`gen`), the threads
    asleep waiting for a job (`sleepers`) or for chunks (`waiting`), the chunks not
    finished (`pending`), whether a loop runs (`busy`), `stop`, the workers running
    (`nworkers`) and how many jobs a worker took on the caller's CPU (`beside_count`:
    each time it restricts itself to the other CPUs of the mask it started with, if it
    has any)."""
    import ctypes

    from arignote.runtime._threadpool_ir import STATE_WORDS

    words = (ctypes.c_int64 * len(STATE_WORDS))()
    _pool()._state(ctypes.addressof(words))
    return dict(zip(STATE_WORDS, words, strict=True))
