"""The internal helper functions of a CPython entry point (`arignote.runtime.entry`).

The entry point's per-argument work (checking an input ndarray and filling its memref
descriptor, taking a kept output or allocating a new one, keeping a result, the byte
extent of an input for the donation checks, releasing the outputs on failure) is done
by small `internal` functions that loop over the rank, defined once in the entry's
module, instead of being written out for every argument and axis: the entry point
itself is a short sequence of calls and branches (the logreg step's: 550 lines of IR
instead of 950).

The entry point and its helpers are `optnone` (`ENTRY_ATTRIBUTES`,
`HELPER_ATTRIBUTES`): they have no loop worth optimising, and the O3 pipeline and
SelectionDAG code generation of the written-out entry point took 50 ms of every cold
compile of the logreg step (opt 34 ms, codegen 22 ms, its `@f__shape` aside); unoptimised
(fast instruction selection), the helper form takes under 10 ms, for about 10 ns more per
call (docs/benchmarks.md, compile time).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import llvmlite.ir as ir

_PTR = ir.PointerType()
_I1 = ir.IntType(1)
_I8 = ir.IntType(8)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_NULL = ir.Constant(_PTR, None)

HELPER_ATTRIBUTES: tuple[str, ...] = ("noinline", "nounwind", "optnone")
"""The function attributes of every helper (`optnone` needs `noinline`)."""

FOREIGN_BYTEORDER = ord(">" if sys.byteorder == "little" else "<")
"""`descr->byteorder` of arrays in the other byte order than the host's."""


def _i64(value: int) -> ir.Constant:
    return ir.Constant(_I64, value)


def _i32(value: int) -> ir.Constant:
    return ir.Constant(_I32, value)


class EntryHelpers:
    """Defines the helpers of an entry point in `module`, each on first use, named
    `<prefix><helper>`. `api` holds the module's declarations of the CPython and numpy
    symbols (`incref`, `decref`, `array_new`, `array_type`) and `layout` the struct
    offsets (`arignote.runtime.entry.Layout`)."""

    def __init__(self, module: ir.Module, prefix: str, layout: object, api: object):
        self.module, self.prefix, self.layout, self.api = module, prefix, layout, api
        self._made: dict[str, ir.Function] = {}

    def _helper(
        self,
        name: str,
        ret: ir.Type,
        args: list[tuple[str, ir.Type]],
        body: Callable[[ir.IRBuilder, ir.Function], None],
    ) -> ir.Function:
        if name not in self._made:
            fn = ir.Function(
                self.module, ir.FunctionType(ret, [ty for _, ty in args]), self.prefix + name
            )
            fn.linkage = "internal"
            for attribute in HELPER_ATTRIBUTES:
                fn.attributes.add(attribute)
            for arg, (arg_name, _) in zip(fn.args, args, strict=True):
                arg.name = arg_name
            self._made[name] = fn
            body(ir.IRBuilder(fn.append_basic_block("entry")), fn)
        return self._made[name]

    # small pieces: every address is an opaque `ptr` plus a byte offset

    @staticmethod
    def at(b: ir.IRBuilder, base: ir.Value, offset: int | ir.Value) -> ir.Value:
        if isinstance(offset, int):
            if offset == 0:
                return base
            offset = _i64(offset)
        return b.gep(base, [offset], source_etype=_I8)

    def field(self, b: ir.IRBuilder, base: ir.Value, offset: int | ir.Value, ty: ir.Type):
        return b.load(self.at(b, base, offset), typ=ty)

    @staticmethod
    def loop(
        b: ir.IRBuilder,
        fn: ir.Function,
        count: ir.Value,
        step: Callable[[ir.IRBuilder, ir.Value], ir.Value],
        exit_: ir.Block,
        label: str,
    ) -> None:
        """`for k in range(count): if not step(k): goto exit_`, then continue after the
        loop (`step` emits the body at the builder and returns its i1 `ok`)."""
        before = b.block
        head = fn.append_basic_block(f"{label}_head")
        body = fn.append_basic_block(f"{label}_body")
        done = fn.append_basic_block(f"{label}_done")
        b.branch(head)
        b.position_at_end(head)
        k = b.phi(_I64, name="k")
        k.add_incoming(_i64(0), before)
        b.cbranch(b.icmp_signed("<", k, count), body, done)
        b.position_at_end(body)
        ok = step(b, k)
        k.add_incoming(b.add(k, _i64(1)), b.block)
        b.cbranch(ok, head, exit_)
        b.position_at_end(done)

    # the helpers

    def read_array(self) -> ir.Function:
        """`i64 read_array(obj, type_mask, rank, shift, align_mask, desc)`: when `obj` is
        exactly an ndarray of rank `rank` whose `descr->type_num` is a bit of `type_mask`,
        in the host's byte order, with its data pointer aligned (`data & align_mask ==
        0`) and byte strides multiples of `1 << shift` (the item size), fill the memref
        descriptor at `desc` (element strides) and return its element count; else -1."""
        args = [("obj", _PTR), ("mask", _I64), ("rank", _I32), ("shift", _I64)]
        args += [("align", _I64), ("desc", _PTR)]
        return self._helper("read_array", _I64, args, self._read_array_body)

    def _read_array_body(self, b: ir.IRBuilder, fn: ir.Function) -> None:
        obj, mask, rank, shift, align, desc = fn.args
        lay = self.layout
        fail = fn.append_basic_block("fail")
        is_array = fn.append_basic_block("is_array")
        ob_type = self.field(b, obj, lay.ob_type, _PTR)
        b.cbranch(b.icmp_unsigned("==", ob_type, self.api.array_type), is_array, fail)
        b.position_at_end(is_array)
        descr = self.field(b, obj, lay.descr, _PTR)
        type_num = b.zext(self.field(b, descr, lay.descr_type_num, _I32), _I64)
        ok = b.icmp_signed("==", self.field(b, obj, lay.nd, _I32), rank)
        ok = b.and_(ok, b.icmp_unsigned("<", type_num, _i64(64)))
        bit = b.and_(b.lshr(mask, b.and_(type_num, _i64(63))), _i64(1))
        ok = b.and_(ok, b.icmp_unsigned("!=", bit, _i64(0)))
        byteorder = self.field(b, descr, lay.descr_byteorder, _I8)
        ok = b.and_(ok, b.icmp_unsigned("!=", byteorder, ir.Constant(_I8, FOREIGN_BYTEORDER)))
        data = self.field(b, obj, lay.data, _PTR)
        misaligned = b.and_(b.ptrtoint(data, _I64), align)
        ok = b.and_(ok, b.icmp_unsigned("==", misaligned, _i64(0)))
        fill = fn.append_basic_block("fill")
        b.cbranch(ok, fill, fail)
        b.position_at_end(fill)
        b.store(data, desc)
        b.store(data, self.at(b, desc, 8))
        b.store(_i64(0), self.at(b, desc, 16))
        dims = self.field(b, obj, lay.dimensions, _PTR)
        strides = self.field(b, obj, lay.strides, _PTR)
        rank64 = b.zext(rank, _I64)
        item_mask = b.sub(b.shl(_i64(1), shift), _i64(1))
        count_slot = b.alloca(_I64)
        b.store(_i64(1), count_slot)

        def step(b: ir.IRBuilder, k: ir.Value) -> ir.Value:
            offset = b.shl(k, _i64(3))
            dim = self.field(b, dims, offset, _I64)
            stride = self.field(b, strides, offset, _I64)
            b.store(dim, self.at(b, desc, b.add(offset, _i64(24))))
            strides_at = b.add(b.shl(b.add(rank64, k), _i64(3)), _i64(24))
            b.store(b.ashr(stride, shift), self.at(b, desc, strides_at))
            b.store(b.mul(b.load(count_slot, typ=_I64), dim), count_slot)
            return b.icmp_signed("==", b.and_(stride, item_mask), _i64(0))

        self.loop(b, fn, rank64, step, fail, "axes")
        b.ret(b.load(count_slot, typ=_I64))
        b.position_at_end(fail)
        b.ret(_i64(-1))

    def take_kept(self) -> ir.Function:
        """`ptr take_kept(slot, rank, type_num, dims)`: the array the global `slot`
        keeps, taken out of it (the slot set to NULL), when it can hold a new result of
        element type `type_num` and the `rank` dimensions at `dims` (see "Output reuse"
        in `arignote.runtime.entry`); else NULL."""
        args = [("slot", _PTR), ("rank", _I32), ("type_num", _I32), ("dims", _PTR)]
        return self._helper("take_kept", _PTR, args, self._take_kept_body)

    def _take_kept_body(self, b: ir.IRBuilder, fn: ir.Function) -> None:
        from arignote.runtime.entry import REUSABLE_FLAGS

        slot, rank, type_num, dims = fn.args
        lay = self.layout
        none = fn.append_basic_block("none")
        check = fn.append_basic_block("check")
        obj = b.load(slot, typ=_PTR)
        b.cbranch(b.icmp_unsigned("==", obj, _NULL), none, check)
        b.position_at_end(check)
        ok = b.icmp_signed("==", self.field(b, obj, lay.ob_refcnt, _I64), _i64(1))
        flags = b.and_(self.field(b, obj, lay.flags, _I32), _i32(REUSABLE_FLAGS))
        ok = b.and_(ok, b.icmp_signed("==", flags, _i32(REUSABLE_FLAGS)))
        ok = b.and_(ok, b.icmp_unsigned("==", self.field(b, obj, lay.base, _PTR), _NULL))
        ok = b.and_(ok, b.icmp_unsigned("==", self.field(b, obj, lay.weakreflist, _PTR), _NULL))
        ok = b.and_(ok, b.icmp_signed("==", self.field(b, obj, lay.nd, _I32), rank))
        descr = self.field(b, obj, lay.descr, _PTR)
        kept_type = self.field(b, descr, lay.descr_type_num, _I32)
        ok = b.and_(ok, b.icmp_signed("==", kept_type, type_num))
        byteorder = self.field(b, descr, lay.descr_byteorder, _I8)
        ok = b.and_(ok, b.icmp_unsigned("!=", byteorder, ir.Constant(_I8, FOREIGN_BYTEORDER)))
        same_rank = fn.append_basic_block("same_rank")
        b.cbranch(ok, same_rank, none)
        b.position_at_end(same_rank)
        kept_dims = self.field(b, obj, lay.dimensions, _PTR)

        def step(b: ir.IRBuilder, k: ir.Value) -> ir.Value:
            offset = b.shl(k, _i64(3))
            kept = self.field(b, kept_dims, offset, _I64)
            return b.icmp_signed("==", kept, self.field(b, dims, offset, _I64))

        self.loop(b, fn, b.zext(rank, _I64), step, none, "dims")
        b.store(_NULL, slot)  # the reference moves to the result
        b.ret(obj)
        b.position_at_end(none)
        b.ret(_NULL)

    def output(self) -> ir.Function:
        """`ptr output(last, older, rank, type_num, dims)`: the array kept in `last`,
        else the one in `older`, when it can hold the result (`take_kept`), else a new
        C-contiguous array from `PyArray_New` (NULL with numpy's error set when that
        fails)."""
        args = [("last", _PTR), ("older", _PTR), ("rank", _I32), ("type_num", _I32)]
        args.append(("dims", _PTR))
        return self._helper("output", _PTR, args, self._output_body)

    def _output_body(self, b: ir.IRBuilder, fn: ir.Function) -> None:
        last, older, rank, type_num, dims = fn.args
        take = self.take_kept()
        for slot in (last, older):
            kept = b.call(take, [slot, rank, type_num, dims])
            with b.if_then(b.icmp_unsigned("!=", kept, _NULL)):
                b.ret(kept)
        new_args = [self.api.array_type, rank, dims, type_num, _NULL, _NULL, _i32(0), _i32(0)]
        b.ret(b.call(self.api.array_new, [*new_args, _NULL]))

    def keep(self) -> ir.Function:
        """`void keep(last, older, obj)`: make the global `last` hold a new reference to
        `obj`, `older` the array `last` held (releasing the one `older` held)."""
        args = [("last", _PTR), ("older", _PTR), ("obj", _PTR)]
        return self._helper("keep", ir.VoidType(), args, self._keep_body)

    def _keep_body(self, b: ir.IRBuilder, fn: ir.Function) -> None:
        last, older, obj = fn.args
        b.call(self.api.incref, [obj])
        previous = b.load(last, typ=_PTR)
        dropped = b.load(older, typ=_PTR)
        b.store(obj, last)
        b.store(previous, older)
        with b.if_then(b.icmp_unsigned("!=", dropped, _NULL)):
            b.call(self.api.decref, [dropped])
        b.ret_void()

    def release(self) -> ir.Function:
        """`void release(objects, n)`: drop the references `objects[0:n]`."""
        args = [("objects", _PTR), ("n", _I64)]
        return self._helper("release", ir.VoidType(), args, self._release_body)

    def _release_body(self, b: ir.IRBuilder, fn: ir.Function) -> None:
        objects, n = fn.args
        done = fn.append_basic_block("done")

        def step(b: ir.IRBuilder, k: ir.Value) -> ir.Value:
            b.call(self.api.decref, [self.field(b, objects, b.shl(k, _i64(3)), _PTR)])
            return ir.Constant(_I1, 1)

        self.loop(b, fn, n, step, done, "objects")
        b.branch(done)
        b.position_at_end(done)
        b.ret_void()

    def apart(self) -> ir.Function:
        """`i1 apart(desc_a, rank_a, itemsize_a, desc_b, rank_b, itemsize_b)`: whether the
        bytes the memref descriptors `desc_a` and `desc_b` span do not overlap (or one of
        them is empty)."""
        args = [("a", _PTR), ("rank_a", _I64), ("item_a", _I64)]
        args += [("b", _PTR), ("rank_b", _I64), ("item_b", _I64)]
        return self._helper("apart", _I1, args, self._apart_body)

    def _apart_body(self, b: ir.IRBuilder, fn: ir.Function) -> None:
        a, rank_a, item_a, other, rank_b, item_b = fn.args
        extent = self.extent()
        span_a, span_b = b.alloca(_I64, size=_i64(3)), b.alloca(_I64, size=_i64(3))
        b.call(extent, [a, rank_a, item_a, span_a])
        b.call(extent, [other, rank_b, item_b, span_b])
        lo, hi, empty = (self.field(b, span_a, 8 * n, _I64) for n in range(3))
        other_lo, other_hi, other_empty = (self.field(b, span_b, 8 * n, _I64) for n in range(3))
        apart = b.or_(b.icmp_unsigned("<=", other_hi, lo), b.icmp_unsigned("<=", hi, other_lo))
        either_empty = b.icmp_unsigned("!=", b.or_(empty, other_empty), _i64(0))
        b.ret(b.or_(apart, either_empty))

    def extent(self) -> ir.Function:
        """`void extent(desc, rank, itemsize, out)`: `out[0:3]` = the first byte the
        memref descriptor `desc` spans, one past its last, and 1 when it is empty."""
        args = [("desc", _PTR), ("rank", _I64), ("itemsize", _I64), ("out", _PTR)]
        return self._helper("extent", ir.VoidType(), args, self._extent_body)

    def _extent_body(self, b: ir.IRBuilder, fn: ir.Function) -> None:
        desc, rank, itemsize, out = fn.args
        lo = b.ptrtoint(self.field(b, desc, 8, _PTR), _I64)
        b.store(lo, out)
        b.store(b.add(lo, itemsize), self.at(b, out, 8))
        b.store(_i64(0), self.at(b, out, 16))
        done = fn.append_basic_block("done")
        zero = _i64(0)

        def step(b: ir.IRBuilder, k: ir.Value) -> ir.Value:
            dim = self.field(b, desc, b.add(b.shl(k, _i64(3)), _i64(24)), _I64)
            strides_at = b.add(b.shl(b.add(rank, k), _i64(3)), _i64(24))
            stride = b.mul(self.field(b, desc, strides_at, _I64), itemsize)
            span = b.mul(b.sub(dim, _i64(1)), stride)
            for offset, keep_if in ((0, "<"), (8, ">")):  # lo += min(span, 0), hi += max
                slot = self.at(b, out, offset)
                chosen = b.select(b.icmp_signed(keep_if, span, zero), span, zero)
                b.store(b.add(b.load(slot, typ=_I64), chosen), slot)
            empty_slot = self.at(b, out, 16)
            is_empty = b.zext(b.icmp_signed("==", dim, zero), _I64)
            b.store(b.or_(b.load(empty_slot, typ=_I64), is_empty), empty_slot)
            return ir.Constant(_I1, 1)

        self.loop(b, fn, rank, step, done, "axes")
        b.branch(done)
        b.position_at_end(done)
        b.ret_void()
