"""The LLVM IR of the native thread pool (`arignote.runtime.threadpool` documents it).

Built with llvmlite's IR builder. Every shared word lives in its own cache line; the
words threads wait on (`gen`, `pending`) are `i32` futex words, each with a count of
the threads sleeping on it (`sleepers`, `waiting`), so that a wake is only a system
call when someone sleeps: the waiter increments its count before `FUTEX_WAIT`
(which sleeps only while the word still holds the value it saw), the waker changes the
word before reading the count, all sequentially consistent.
"""

from __future__ import annotations

import llvmlite.ir as ir

_PTR = ir.PointerType()
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_VOID = ir.VoidType()
_SEQ = "seq_cst"
_SIGSET_BYTES = 128
STATE_WORDS = ("gen", "sleepers", "waiting", "pending", "busy", "stop", "nworkers", "beside_count")
"""The pool's words `arignote_pool_state(out)` copies into `out` (as int64s), in order:
`threadpool.state()`, for diagnostics."""

_AFFINITY_WORDS = 16
"""A CPU mask (`cpu_set_t`, 1024 CPUs) in 64-bit words."""
_SIG_BLOCK = 0


def _i64(value: int) -> ir.Constant:
    return ir.Constant(_I64, value)


def _i32(value: int) -> ir.Constant:
    return ir.Constant(_I32, value)


class _Callee:
    """A function pointer with its function type, for an indirect `call` (llvmlite
    reads the callee's type from `function_type`, which opaque pointers lack)."""

    def __init__(self, pointer: ir.Value, function_type: ir.FunctionType):
        self.pointer, self.function_type, self.type = pointer, function_type, pointer.type

    def get_reference(self) -> str:
        return self.pointer.get_reference()


class PoolBuilder:
    """Builds the pool module: `build()` returns its LLVM IR text."""

    def __init__(self, futex: int, pause: str, spin: int, max_threads: int, oversplit: int):
        self.futex_number, self.spin, self.max_threads = futex, spin, max_threads
        self.oversplit = oversplit
        self.caller_spin = max(1, spin // 16)
        """The caller, having done its share, spins less before sleeping: a worker
        still running a chunk is likely to be descheduled, not about to finish."""
        m = self.module = ir.Module(name="arignote_threadpool")
        m.triple = ""
        if pause == "pause":  # x86: the spin-wait hint
            self.pause, self.pause_args = self._declare("llvm.x86.sse2.pause", _VOID, []), []
        else:  # AArch64: `yield`, hint #1
            self.pause = self._declare("llvm.aarch64.hint", _VOID, [_I32])
            self.pause_args = [_i32(1)]
        for name in ("gen", "pending", "sleepers", "waiting", "busy", "stop", "job_cpu"):
            setattr(self, name, self._global(name, _I32))
        for name in ("nthreads", "nworkers", "job_begin", "job_end", "job_chunk", "job_parts"):
            setattr(self, name, self._global(name, _I64))
        self.dispatch_count = self._global("dispatch_count", _I64)
        self.beside_count = self._global("beside_count", _I64)
        self.claim = self._global("claim", _I64)
        # (pointers kept as integers: llvmlite's atomic stores need a typed slot)
        self.job_fn = self._global("job_fn", _I64)
        self.job_ctx = self._global("job_ctx", _I64)
        self.tids = self._global("tids", ir.ArrayType(_I64, max_threads))
        self.syscall = ir.Function(m, ir.FunctionType(_I64, [_I64], var_arg=True), "syscall")
        self.pthread_create = self._declare("pthread_create", _I32, [_PTR, _PTR, _PTR, _PTR])
        self.pthread_join = self._declare("pthread_join", _I32, [_I64, _PTR])
        self.pthread_sigmask = self._declare("pthread_sigmask", _I32, [_I32, _PTR, _PTR])
        self.sched_getcpu = self._declare("sched_getcpu", _I32, [])
        self.sched_getaffinity = self._declare("sched_getaffinity", _I32, [_I32, _I64, _PTR])
        self.sched_setaffinity = self._declare("sched_setaffinity", _I32, [_I32, _I64, _PTR])
        self.task_type = ir.FunctionType(_VOID, [_I64, _I64, _I64, _PTR])

    def _global(self, name: str, ty: ir.Type) -> ir.GlobalVariable:
        g = ir.GlobalVariable(self.module, ty, "pool_" + name)
        g.linkage = "internal"
        g.initializer = ir.Constant(ty, None)
        g.align = 64
        return g

    def _declare(self, name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
        return ir.Function(self.module, ir.FunctionType(ret, args), name)

    def _function(self, name: str, ret: ir.Type, args: list[ir.Type], internal: bool = True):
        fn = ir.Function(self.module, ir.FunctionType(ret, args), name)
        if internal:
            fn.linkage = "internal"
        return fn, ir.IRBuilder(fn.append_basic_block("entry"))

    def build(self) -> str:
        self.futex = self._build_futex()
        self.wait_change = self._build_wait_change()
        self.wake = self._build_wake()
        self.run_chunk = self._build_run_chunk()
        self.help = self._build_help()
        self.leave_cpu = self._build_leave_cpu()
        self.worker = self._build_worker()
        self.start_workers = self._build_start_workers()
        self._build_parallel_for()
        self._build_control()
        return str(self.module)

    # --- waiting and waking ----------------------------------------------------------

    def _build_futex(self) -> ir.Function:
        """`futex(word, op, value)`: the system call, without timeout."""
        fn, b = self._function("pool_futex", _VOID, [_PTR, _I64, _I64])
        word, op, value = fn.args
        null = ir.Constant(_PTR, None)
        b.call(self.syscall, [_i64(self.futex_number), word, op, value, null])
        b.ret_void()
        return fn

    def _build_wait_change(self) -> ir.Function:
        """`wait_change(word, value, sleepers, spin)`: returns once `*word != value`;
        spins `spin` pauses, then sleeps in the kernel (counted in `*sleepers`)."""
        fn, b = self._function("pool_wait_change", _VOID, [_PTR, _I32, _PTR, _I64])
        word, value, sleepers, spin_limit = fn.args
        spin, check, sleep, done = (
            fn.append_basic_block(n) for n in ("spin", "check", "sleep", "done")
        )
        b.branch(spin)
        b.position_at_end(spin)
        count = b.phi(_I64)
        count.add_incoming(_i64(0), fn.entry_basic_block)
        same = b.icmp_unsigned("==", b.load_atomic(word, _SEQ, 4, typ=_I32), value)
        b.cbranch(same, check, done)
        b.position_at_end(check)
        b.call(self.pause, self.pause_args)
        following = b.add(count, _i64(1))
        count.add_incoming(following, check)
        b.cbranch(b.icmp_unsigned("<", following, spin_limit), spin, sleep)
        b.position_at_end(sleep)
        b.atomic_rmw("add", sleepers, _i32(1), _SEQ)
        b.call(self.futex, [word, _i64(128), b.zext(value, _I64)])
        b.atomic_rmw("sub", sleepers, _i32(1), _SEQ)
        same = b.icmp_unsigned("==", b.load_atomic(word, _SEQ, 4, typ=_I32), value)
        b.cbranch(same, sleep, done)
        b.position_at_end(done)
        b.ret_void()
        return fn

    def _build_wake(self) -> ir.Function:
        """`wake(word, sleepers, count)`: `FUTEX_WAKE` of `count` threads, when any
        sleeps (call after changing `*word`)."""
        fn, b = self._function("pool_wake", _VOID, [_PTR, _PTR, _I64])
        word, sleepers, count = fn.args
        call, done = fn.append_basic_block("call"), fn.append_basic_block("done")
        asleep = b.load_atomic(sleepers, _SEQ, 4, typ=_I32)
        b.cbranch(b.icmp_unsigned("!=", asleep, _i32(0)), call, done)
        b.position_at_end(call)
        b.call(self.futex, [word, _i64(129), count])
        b.branch(done)
        b.position_at_end(done)
        b.ret_void()
        return fn

    # --- the workers ------------------------------------------------------------------

    def _call_task(self, b: ir.IRBuilder, task: ir.Value, args: list[ir.Value]) -> None:
        b.call(_Callee(task, self.task_type), args)

    def _block_signals(self, b: ir.IRBuilder) -> None:
        # (an alloca of pointers is an opaque `ptr`, which stores of any type accept)
        mask = b.alloca(_PTR, size=_i64(_SIGSET_BYTES // 8))
        for k in range(_SIGSET_BYTES // 8):
            b.store(_i64(-1), b.gep(mask, [_i64(k)], source_etype=_I64))
        b.call(self.pthread_sigmask, [_i32(_SIG_BLOCK), mask, ir.Constant(_PTR, None)])

    def _field(self, b: ir.IRBuilder, slot: ir.GlobalVariable, ty: ir.Type) -> ir.Value:
        value = b.load_atomic(slot, "monotonic", 8, typ=_I64)
        return b.inttoptr(value, _PTR) if ty == _PTR else value

    def _build_run_chunk(self) -> ir.Function:
        """`run_chunk(c)`: chunk `c` of the current job, `[begin + c * chunk,
        min(that + chunk, end))`; then one fewer `pending` chunk (waking the caller
        when it was the last and the caller sleeps)."""
        fn, b = self._function("pool_run_chunk", _VOID, [_I64, _PTR, _PTR, _I64, _I64, _I64])
        c, task, ctx, begin, end, chunk = fn.args
        first = b.add(begin, b.mul(c, chunk))
        last = b.add(first, chunk)
        last = b.select(b.icmp_signed("<", last, end), last, end)
        self._call_task(b, task, [first, last, c, ctx])
        wake, done = fn.append_basic_block("wake"), fn.append_basic_block("done")
        before = b.atomic_rmw("sub", self.pending, _i32(1), _SEQ)
        b.cbranch(b.icmp_unsigned("==", before, _i32(1)), wake, done)
        b.position_at_end(wake)
        b.call(self.wake, [self.pending, self.waiting, _i64(1)])
        b.branch(done)
        b.position_at_end(done)
        b.ret_void()
        return fn

    def _build_help(self) -> ir.Function:
        """`help(generation)`: claims and runs chunks of the job of `generation` until
        none is left. `claim` packs the generation (high 32 bits) and the next chunk
        (low 32 bits); a claim is a compare-and-swap of that word, so a thread that
        read the job's fields and then claims successfully read that job's (the caller
        rewrites them only once every chunk was claimed and finished)."""
        fn, b = self._function("pool_help", _VOID, [_I32])
        (generation,) = fn.args
        loop, fields, claim, done = (
            fn.append_basic_block(n) for n in ("loop", "fields", "claim", "done")
        )
        tag = b.shl(b.zext(generation, _I64), _i64(32))
        b.branch(loop)
        b.position_at_end(loop)
        word = b.load_atomic(self.claim, _SEQ, 8, typ=_I64)
        current = b.icmp_unsigned("==", b.and_(word, _i64(-(1 << 32))), tag)
        b.cbranch(current, fields, done)
        b.position_at_end(fields)
        index = b.and_(word, _i64(0xFFFFFFFF))
        job = [
            self._field(b, slot, ty)
            for slot, ty in (
                (self.job_parts, _I64),
                (self.job_fn, _PTR),
                (self.job_ctx, _PTR),
                (self.job_begin, _I64),
                (self.job_end, _I64),
                (self.job_chunk, _I64),
            )
        ]
        b.cbranch(b.icmp_signed("<", index, job[0]), claim, done)
        b.position_at_end(claim)
        swapped = b.cmpxchg(self.claim, word, b.add(word, _i64(1)), _SEQ, _SEQ)
        run = fn.append_basic_block("run")
        b.cbranch(b.extract_value(swapped, 1), run, loop)
        b.position_at_end(run)
        b.call(self.run_chunk, [index, *job[1:]])
        b.branch(loop)
        b.position_at_end(done)
        b.ret_void()
        return fn

    def _build_leave_cpu(self) -> ir.Function:
        """`leave_cpu(allowed, cpu)`: restrict the calling thread to the CPUs of the
        mask `allowed` (`_AFFINITY_WORDS` words) but `cpu`, which moves it off `cpu` at
        once; nothing when no other CPU is allowed or `cpu` is out of the mask's range."""
        fn, b = self._function("pool_leave_cpu", _VOID, [_PTR, _I32])
        allowed, cpu = fn.args
        mask = b.alloca(_PTR, size=_i64(_AFFINITY_WORDS))  # (opaque: see _block_signals)
        in_range = b.and_(
            b.icmp_signed(">=", cpu, _i32(0)), b.icmp_signed("<", cpu, _i32(64 * _AFFINITY_WORDS))
        )
        body, done = fn.append_basic_block("body"), fn.append_basic_block("done")
        b.cbranch(in_range, body, done)
        b.position_at_end(body)
        cpu64 = b.zext(cpu, _I64)
        target = b.lshr(cpu64, _i64(6))
        bit = b.shl(_i64(1), b.and_(cpu64, _i64(63)))
        others = _i64(0)
        for k in range(_AFFINITY_WORDS):
            word = b.load(b.gep(allowed, [_i64(k)], source_etype=_I64), typ=_I64)
            cleared = b.and_(word, b.xor(bit, _i64(-1)))
            word = b.select(b.icmp_unsigned("==", target, _i64(k)), cleared, word)
            b.store(word, b.gep(mask, [_i64(k)], source_etype=_I64))
            others = b.or_(others, word)
        move = fn.append_basic_block("move")
        b.cbranch(b.icmp_unsigned("!=", others, _i64(0)), move, done)
        b.position_at_end(move)
        b.call(self.sched_setaffinity, [_i32(0), _i64(8 * _AFFINITY_WORDS), mask])
        b.branch(done)
        b.position_at_end(done)
        b.ret_void()
        return fn

    def _build_worker(self) -> ir.Function:
        """`worker(arg)`: `arg` is the generation it starts from; waits for each new
        generation and helps with its job; returns when `stop` is set.

        A worker that finds itself on the CPU of the thread that published the job
        (`job_cpu`) moves off it first (`leave_cpu`, with the mask it started with):
        woken by that thread, the scheduler tends to put it there, beside it, and the
        two then take turns on one core while another is idle (a logreg step took 27
        instead of 19 us in the processes where that happened, about one in three)."""
        fn, b = self._function("pool_worker", _PTR, [_PTR])
        start = b.trunc(b.ptrtoint(fn.args[0], _I64), _I32)
        self._block_signals(b)
        allowed = b.alloca(_PTR, size=_i64(_AFFINITY_WORDS))
        got = b.call(self.sched_getaffinity, [_i32(0), _i64(8 * _AFFINITY_WORDS), allowed])
        known = b.icmp_signed("==", got, _i32(0))
        loop, run, leave = (fn.append_basic_block(n) for n in ("loop", "run", "leave"))
        entry = b.block
        b.branch(loop)
        b.position_at_end(loop)
        seen = b.phi(_I32)
        seen.add_incoming(start, entry)
        b.call(self.wait_change, [self.gen, seen, self.sleepers, _i64(self.spin)])
        current = b.load_atomic(self.gen, _SEQ, 4, typ=_I32)
        stop = b.load_atomic(self.stop, _SEQ, 4, typ=_I32)
        b.cbranch(b.icmp_unsigned("!=", stop, _i32(0)), leave, run)
        b.position_at_end(run)
        caller = b.load_atomic(self.job_cpu, _SEQ, 4, typ=_I32)
        beside = b.and_(known, b.icmp_signed("==", b.call(self.sched_getcpu, []), caller))
        move, work = fn.append_basic_block("move"), fn.append_basic_block("work")
        b.cbranch(beside, move, work)
        b.position_at_end(move)
        b.call(self.leave_cpu, [allowed, caller])
        b.atomic_rmw("add", self.beside_count, _i64(1), "monotonic")
        b.branch(work)
        b.position_at_end(work)
        seen.add_incoming(current, work)
        b.call(self.help, [current])
        b.branch(loop)
        b.position_at_end(leave)
        b.ret(ir.Constant(_PTR, None))
        return fn

    def _build_start_workers(self) -> ir.Function:
        """`start_workers(target)`: starts workers until `target` run (or
        `pthread_create` fails); returns how many run. Called with `busy` held."""
        fn, b = self._function("pool_start_workers", _I64, [_I64])
        (target,) = fn.args
        loop, create, created, done = (
            fn.append_basic_block(n) for n in ("loop", "create", "created", "done")
        )
        b.branch(loop)
        b.position_at_end(loop)
        running = b.load(self.nworkers, typ=_I64)
        b.cbranch(b.icmp_signed("<", running, target), create, done)
        b.position_at_end(create)
        generation = b.zext(b.load_atomic(self.gen, _SEQ, 4, typ=_I32), _I64)
        slot = b.gep(self.tids, [_i64(0), running], source_etype=self.tids.value_type)
        arg = b.inttoptr(generation, _PTR)
        rc = b.call(self.pthread_create, [slot, ir.Constant(_PTR, None), self.worker, arg])
        b.cbranch(b.icmp_signed("==", rc, _i32(0)), created, done)
        b.position_at_end(created)
        b.store(b.add(running, _i64(1)), self.nworkers)
        b.branch(loop)
        b.position_at_end(done)
        b.ret(b.load(self.nworkers, typ=_I64))
        return fn

    # --- the entry points ------------------------------------------------------------

    def _threads(self, b: ir.IRBuilder) -> ir.Value:
        threads = b.load(self.nthreads, typ=_I64)
        return b.select(b.icmp_signed("<", threads, _i64(1)), _i64(1), threads)

    def _width(self, b: ir.IRBuilder) -> ir.Value:
        """The most chunks: `oversplit` per thread, 1 with one thread."""
        threads = self._threads(b)
        single = b.icmp_signed("<=", threads, _i64(1))
        return b.select(single, _i64(1), b.mul(threads, _i64(self.oversplit)))

    def _build_parallel_for(self) -> None:
        fn, b = self._function("arignote_parallel_for", _I64, [_PTR, _PTR] + [_I64] * 5, False)
        task, ctx, begin, end, min_trips, align, max_parts = fn.args
        serial = fn.append_basic_block("serial")
        n = b.sub(end, begin)
        align = b.select(b.icmp_signed("<", align, _i64(1)), _i64(1), align)
        blocks = b.sdiv(b.add(n, b.sub(align, _i64(1))), align)
        width = self._width(b)
        limited = b.and_(
            b.icmp_signed(">", max_parts, _i64(0)), b.icmp_signed("<", max_parts, width)
        )
        width = b.select(limited, max_parts, width)
        parts = b.select(b.icmp_signed("<", blocks, width), blocks, width)
        worth = b.and_(b.icmp_signed(">=", n, min_trips), b.icmp_signed(">=", parts, _i64(2)))
        lock = fn.append_basic_block("lock")
        b.cbranch(worth, lock, serial)
        b.position_at_end(lock)
        acquired = b.extract_value(b.cmpxchg(self.busy, _i32(0), _i32(1), _SEQ, _SEQ), 1)
        locked = fn.append_basic_block("locked")
        b.cbranch(acquired, locked, serial)
        b.position_at_end(locked)
        workers = b.call(self.start_workers, [b.sub(self._threads(b), _i64(1))])
        dispatch, unlock = fn.append_basic_block("dispatch"), fn.append_basic_block("unlock")
        b.cbranch(b.icmp_signed(">", workers, _i64(0)), dispatch, unlock)
        b.position_at_end(unlock)
        b.store_atomic(_i32(0), self.busy, _SEQ, 4)
        b.branch(serial)
        b.position_at_end(dispatch)
        chunk = b.mul(b.sdiv(b.add(blocks, b.sub(parts, _i64(1))), parts), align)
        parts = b.sdiv(b.add(n, b.sub(chunk, _i64(1))), chunk)
        self._dispatch(b, fn, (task, ctx, begin, end, chunk, parts))
        b.position_at_end(serial)
        self._call_task(b, task, [begin, end, _i64(0), ctx])
        b.ret(_i64(1))

    def _dispatch(self, b: ir.IRBuilder, fn: ir.Function, job: tuple) -> None:
        """Publish the job under a new generation, wake sleeping workers, help with
        it, wait for the chunks other threads claimed."""
        task, ctx, begin, end, chunk, parts = job
        slots = (self.job_fn, self.job_ctx, self.job_begin, self.job_end, self.job_chunk)
        task, ctx = b.ptrtoint(task, _I64), b.ptrtoint(ctx, _I64)
        for value, slot in zip((task, ctx, begin, end, chunk), slots, strict=True):
            b.store_atomic(value, slot, "monotonic", 8)
        b.store_atomic(parts, self.job_parts, "monotonic", 8)
        b.store_atomic(b.trunc(parts, _I32), self.pending, _SEQ, 4)
        b.store_atomic(b.call(self.sched_getcpu, []), self.job_cpu, "monotonic", 4)
        generation = b.add(b.load_atomic(self.gen, _SEQ, 4, typ=_I32), _i32(1))
        tag = b.shl(b.zext(generation, _I64), _i64(32))
        b.store_atomic(tag, self.claim, _SEQ, 8)
        b.store_atomic(generation, self.gen, _SEQ, 4)
        b.call(self.wake, [self.gen, self.sleepers, _i64(0x7FFFFFFF)])
        b.call(self.help, [generation])
        wait, sleep, done = (fn.append_basic_block(n) for n in ("wait", "sleep", "done"))
        b.branch(wait)
        b.position_at_end(wait)
        left = b.load_atomic(self.pending, _SEQ, 4, typ=_I32)
        b.cbranch(b.icmp_unsigned("==", left, _i32(0)), done, sleep)
        b.position_at_end(sleep)
        b.call(self.wait_change, [self.pending, left, self.waiting, _i64(self.caller_spin)])
        b.branch(wait)
        b.position_at_end(done)
        b.atomic_rmw("add", self.dispatch_count, _i64(1), _SEQ)
        b.store_atomic(_i32(0), self.busy, _SEQ, 4)
        b.ret(parts)

    def _build_control(self) -> None:
        fn, b = self._function("arignote_parallel_width", _I64, [], False)
        b.ret(self._width(b))
        fn, b = self._function("arignote_pool_threads", _I64, [], False)
        b.ret(self._threads(b))
        fn, b = self._function("arignote_pool_set_threads", _VOID, [_I64], False)
        b.store(fn.args[0], self.nthreads)
        b.ret_void()
        fn, b = self._function("arignote_pool_dispatches", _I64, [], False)
        b.ret(b.load_atomic(self.dispatch_count, _SEQ, 8, typ=_I64))
        fn, b = self._function("arignote_pool_workers", _I64, [], False)
        b.ret(b.load(self.nworkers, typ=_I64))
        fn, b = self._function("arignote_pool_state", _VOID, [_PTR], False)
        for k, word in enumerate(STATE_WORDS):
            slot = getattr(self, word)
            width = slot.value_type.width
            value = b.load_atomic(slot, _SEQ, width // 8, typ=slot.value_type)
            value = b.sext(value, _I64) if width < 64 else value
            b.store(value, b.gep(fn.args[0], [_i64(k)], source_etype=_I64))
        b.ret_void()
        fn, b = self._function("arignote_pool_after_fork", _VOID, [], False)
        for word in (self.pending, self.sleepers, self.waiting, self.busy, self.stop):
            b.store(_i32(0), word)
        b.store(_i64(0), self.nworkers)
        b.store(_i64(0), self.claim)
        b.ret_void()
        self._build_shutdown()

    def _build_shutdown(self) -> None:
        """`arignote_pool_shutdown()`: when no loop runs, stops and joins the workers
        (the pool starts new ones if a parallel loop runs later)."""
        fn, b = self._function("arignote_pool_shutdown", _VOID, [], False)
        locked, join, joined, done = (
            fn.append_basic_block(n) for n in ("locked", "join", "joined", "done")
        )
        acquired = b.extract_value(b.cmpxchg(self.busy, _i32(0), _i32(1), _SEQ, _SEQ), 1)
        b.cbranch(acquired, locked, done)
        b.position_at_end(locked)
        b.store_atomic(_i32(1), self.stop, _SEQ, 4)
        b.atomic_rmw("add", self.gen, _i32(1), _SEQ)
        b.call(self.wake, [self.gen, self.sleepers, _i64(0x7FFFFFFF)])
        count = b.load(self.nworkers, typ=_I64)
        b.branch(join)
        b.position_at_end(join)
        k = b.phi(_I64)
        k.add_incoming(_i64(0), locked)
        more = b.icmp_signed("<", k, count)
        b.cbranch(more, joined, done)
        b.position_at_end(joined)
        slot = b.gep(self.tids, [_i64(0), k], source_etype=self.tids.value_type)
        b.call(self.pthread_join, [b.load(slot, typ=_I64), ir.Constant(_PTR, None)])
        k.add_incoming(b.add(k, _i64(1)), joined)
        b.branch(join)
        b.position_at_end(done)
        # after a join: no workers, not stopped, not busy (the lock is released here)
        was_locked = b.phi(ir.IntType(1))
        was_locked.add_incoming(ir.Constant(ir.IntType(1), 0), fn.entry_basic_block)
        was_locked.add_incoming(ir.Constant(ir.IntType(1), 1), join)
        release, finish = fn.append_basic_block("release"), fn.append_basic_block("finish")
        b.cbranch(was_locked, release, finish)
        b.position_at_end(release)
        b.store(_i64(0), self.nworkers)
        b.store_atomic(_i32(0), self.stop, _SEQ, 4)
        b.store_atomic(_i32(0), self.busy, _SEQ, 4)
        b.branch(finish)
        b.position_at_end(finish)
        b.ret_void()
