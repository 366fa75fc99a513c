"""`ag-to-loops`: functions on tensors of `ag` ops → functions on memrefs of `scf` loops.

Accepts a module whose `func.func`s take and return ranked tensors and whose bodies are
`ag` ops and a `func.return` (other functions are left alone). Each such
`func.func @f(tensor args) -> (tensor results)` is replaced by two functions, the native
ABI that `arignote.runtime.native.NativeFunction` calls:

```mlir
func.func @f__shape(%arg0: memref<?x1xf32, strided<[?, ?], offset: ?>>, ...,
                    %dims: memref<?xi64>, %err: memref<?xi64>) -> i32
func.func @f(%arg0: memref<?x1xf32, strided<[?, ?], offset: ?>>, ...,
             %out0: memref<?x?xf32>, ...) -> i64
```

Both carry `arignote.alloc_status` (see `arignote.lowering.llvm.checked_alloc`): when a buffer
they allocate cannot be, they free what they hold and return a negative status, `-bytes`.

`@f__shape` reads only the arguments' dimensions: it performs every run-time shape check
of the body in order and, on the first failure with 1-based id `k`, stores
`[k, v1, ..., vn]` into `%err` and returns `k`; otherwise it stores the dimensions of all
results (concatenated in result order, static ones included) into `%dims` and returns
0. Its `ag.checks` attribute (an `ArrayAttr` of `StringAttr`) holds, at index `k - 1`,
the message of check `k`: a `%`-format string with `n` `%d`s, to fill with the reported
values `v1, ..., vn` (operand lengths, indices; see `ag_shapes.Check`). The caller sizes
`%err` for the message with the most `%d`s.

`@f` takes the arguments (any strides and offset; the tensor's static dimensions, a
static 1 being broadcastable) then one caller-allocated contiguous (identity-layout)
buffer per result (all `{llvm.noalias}`: outputs are fresh, inputs only read), and
computes the results into them with `scf.for` nests of
`memref.load`/`memref.store`, `arith` and `math` ops (see `ag_kernels`). An op whose
result is returned is computed into the first buffer returning it; a value returned
again, or a returned argument, is copied. An op with an `ag.destroy_map` (the `inplace`
pass) computes a result into the named dead operand's buffer when `@f` allocated it.
A basic `ag.subtensor` that is not returned is a view of its operand's memory
(`memref.subview`, see `ag_views`): the viewed buffer lives as long as its views, and
no op overwrites it while a view of it is live or is another of its operands.
Other intermediates take a dead intermediate's buffer of the same type and dimensions,
or a new buffer: at `@f`'s top level, one of a static shape of at most `STACK_BYTES`
(a scalar, a tiny vector) is a `memref.alloca` at the start of `@f` (no `malloc`, no
failure, gone when `@f` returns), any other a `memref.alloc`; after its last use a buffer
is kept for a later intermediate of its type, else freed by `memref.dealloc` (a heap
one). `@f` returns 0; it assumes `@f__shape` succeeded.

Region-carrying ops (`ag.if`) lower themselves through `CONTROL_FLOW` (see
`ag_control`): `scf.if` in `@f`, `cf` branches in `@f__shape` when the checks or shapes
of their branches differ.

`func.func private @fmod`/`@fmodf` are declared when the float `floordiv`/`mod` need them,
and `@scipy_cblas_{s,d}gemv/gemm` when `ag.gemv`/`ag.gemm` call them (see `ag_blas`).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, cf, func, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StridedLayoutAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from arignote.dialects import ag
from arignote.lowering.graph_walk import evaluate
from arignote.lowering.llvm.checked_alloc import ALLOC_STATUS
from arignote.lowering.llvm.convert_func_to_llvm import noalias_arg_attrs
from arignote.lowering.llvm.llvm_utils import element_byte_size, integer_attr
from arignote.lowering.loops import (  # noqa: F401 - register rules and kernels
    ag_conv,  # convolution (issue 14, conv)
    ag_data_shapes,
    ag_extra_ops,
    ag_fused,
    ag_indexing,
    ag_pool,  # pooling (issue 14 item 2)
    ag_random,  # random streams (issue 14, mrg)
    ag_rowwise,
    ag_scan,
    ag_softmax,  # nnet functions (issue 14)
)
from arignote.lowering.loops.ag_blas import declare_blas_functions  # registers gemv/gemm too
from arignote.lowering.loops.ag_control import CONTROL_FLOW
from arignote.lowering.loops.ag_kernels import KERNELS, copy, emit_op, has_kernel  # noqa: F401
from arignote.lowering.loops.ag_lapack import declare_lapack_functions  # registers LAPACK ops too
from arignote.lowering.loops.ag_mpi import declare_mpi_functions  # registers ag.allreduce too
from arignote.lowering.loops.ag_print import declare_print_functions  # registers ag.print too
from arignote.lowering.loops.ag_python import declare_pyop_functions  # registers ag.python_op
from arignote.lowering.loops.ag_scalar import LIBM_ARITY, LIBM_FUNCTIONS
from arignote.lowering.loops.ag_shapes import Check, op_label, results_dims
from arignote.lowering.loops.ag_views import VIEWS
from arignote.lowering.loops.kernel_reuse import KERNEL_REUSE, KernelReuse, emit_kernel
from arignote.lowering.loops.loop_utils import (
    INDEX,
    Buffer,
    Calls,
    Dim,
    as_index,
    dynamic_sizes,
    first_calls,
    index_constant,
    load,
    memref_dims,
)
from arignote.lowering.loops.parallel_loops import parallel_loops
from arignote.lowering.loops.profile_timers import declare_profile_counters  # registers timers
from arignote.lowering.loops.statements import STATEMENTS, StatementState
from arignote.lowering.op_builder import build

SHAPE_SUFFIX = "__shape"
"""`@f`'s shape function is `@f__shape`."""

CHECKS_ATTRIBUTE = "ag.checks"
"""The attribute of `@f__shape` listing the check messages, check id `k` at `k - 1`."""

DIMS_TYPE = MemRefType(i64, [DYNAMIC_INDEX])
ERR_TYPE = MemRefType(i64, [DYNAMIC_INDEX])


@lru_cache(maxsize=1024)
def argument_type(t: Attribute) -> MemRefType:
    """The memref type of a tensor argument: its static shape, any strides and offset
    (made once per tensor type: building a memref type costs more than hashing one)."""
    assert isinstance(t, TensorType)
    layout = StridedLayoutAttr([None] * t.get_num_dims(), None)
    return MemRefType(t.element_type, t.get_shape(), layout)


@lru_cache(maxsize=1024)
def buffer_type(t: Attribute) -> MemRefType:
    """The memref type of a result or intermediate: its static shape, contiguous (made
    once per tensor type)."""
    assert isinstance(t, TensorType)
    return MemRefType(t.element_type, t.get_shape())


def _is_tensor_function(op: func.FuncOp) -> bool:
    ft = op.function_type
    return any(isinstance(t, TensorType) for t in (*ft.inputs, *ft.outputs))


def _body(f: func.FuncOp) -> tuple[list[Operation], func.ReturnOp]:
    """The ops of `f`'s single block and its `func.return`."""
    if f.body.first_block is None or f.body.first_block is not f.body.last_block:
        raise NotImplementedError(f"ag-to-loops: @{f.sym_name.data} must have one block")
    *ops, ret = f.body.first_block.ops
    assert isinstance(ret, func.ReturnOp)
    for op in (nested for top in ops for nested in top.walk()):
        if type(op) in CONTROL_FLOW or type(op) in STATEMENTS or isinstance(op, ag.YieldOp):
            continue
        if not op.results or not all(isinstance(r.type, TensorType) for r in op.results):
            raise NotImplementedError(f"ag-to-loops: cannot lower {op.name} in @{f.sym_name.data}")
    return ops, ret


def _entry_block(types: Sequence[Attribute], names: Sequence[str]) -> Block:
    block = Block(arg_types=types)
    for arg, name in zip(block.args, names, strict=True):
        arg.name_hint = name
    return block


def _arg_names(n: int, prefix: str = "arg") -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


# --- @f__shape ---------------------------------------------------------------------------


def _failure_block(err: SSAValue, arity: int) -> Block:
    """`^fail(%check, %v1, ..., %vn)` (`n = arity`): stores them into `%err`, returns
    `%check` as i32."""
    block = _entry_block([i64] * (1 + arity), ["check", *(f"v{k}" for k in range(1, arity + 1))])
    b = Builder(InsertPoint.at_end(block))
    for position, value in enumerate(block.args):
        b.insert(memref.StoreOp.get(value, err, [index_constant(b, position)]))
    b.insert(func.ReturnOp(b.insert(arith.TruncIOp(block.args[0], i32)).result))
    return block


def _reported(b: Builder, value: Dim) -> SSAValue:
    """A reported value as `i64`."""
    if isinstance(value, int):
        return b.insert(build(arith.ConstantOp, integer_attr(value, i64))).result
    if value.type == i64:
        return value
    if isinstance(value.type, IndexType):
        return b.insert(build(arith.IndexCastOp, value, i64)).result
    return b.insert(build(arith.ExtSIOp, value, i64)).result


def _condition(b: Builder, check: Check) -> SSAValue:
    """The `i1` that holds when `check` passes."""
    if check.kind == "holds":
        assert check.ok is not None
        return check.ok
    a, c = as_index(b, check.a), as_index(b, check.b)
    if check.kind == "equal":
        return b.insert(build(arith.CmpiOp, a, c, "eq")).result
    return b.insert(build(arith.CmpiOp, c, index_constant(b, 0), "ne")).result


def _check_key(check: Check) -> Hashable:
    """What `check` tests, whatever its message: equal keys fail together."""
    if check.kind == "holds":
        return ("holds", check.ok)
    if check.kind == "nonempty":
        return ("nonempty", check.b)
    return ("equal", frozenset((check.a, check.b)))


def _emit_check(b: Builder, check: Check, check_id: int, fail: Block) -> Builder:
    """Branches to `fail` (with the check's id and reported values) unless `check`
    holds; returns a builder in the success block."""
    ok = _condition(b, check)
    code = b.insert(build(arith.ConstantOp, integer_attr(check_id, i64))).result
    reported = [_reported(b, v) for v in check.reported]
    success = Block()
    b.insert(build(cf.ConditionalBranchOp, ok, success, [], fail, [code, *reported]))
    return Builder(InsertPoint.at_end(success))


def _store_dims(b: Builder, dims_buffer: SSAValue, dims: Sequence[Dim]) -> None:
    for position, dim in enumerate(dims):
        value = b.insert(build(arith.IndexCastOp, as_index(b, dim), i64)).result
        b.insert(memref.StoreOp.get(value, dims_buffer, [index_constant(b, position)]))


def _as_index_value(b: Builder, scalar: SSAValue) -> SSAValue:
    """An integer scalar as an `index` (sign-extended)."""
    return b.insert(build(arith.IndexCastOp, scalar, INDEX)).result


def _is_until_scan(op: Operation) -> bool:
    """A repeat-until `ag.scan`: the shape function may run it, for the number of steps
    it runs (the length of its outputs as the frontend returns them)."""
    return isinstance(op, ag.ScanOp) and op.has_until


class _ShapeFunctionContext:
    """The `ShapeContext` of `@f__shape`: operands computed by the body are computed
    again here, by their kernels, into temporaries that `release` frees."""

    def __init__(self, builder: Builder, arguments: dict[SSAValue, SSAValue], env: dict):
        self.builder = builder
        self.emit_checks = True
        self.arguments = arguments
        self.env = env
        self.op: Operation | None = None
        self.scalars: dict[SSAValue, SSAValue] = {}
        self.buffers: dict[SSAValue, Buffer] = {}
        self.temporaries: list[SSAValue] = []

    def _buffer_of(self, value: SSAValue) -> Buffer:
        """`value` computed into a temporary, the ops it needs first (iteratively: the
        chain may be deeper than Python's recursion limit)."""
        return evaluate(value, self.buffers, self._needs, self._compute)

    def _is_leaf(self, value: SSAValue) -> bool:
        """An argument, or an `ag.dim` read from the known dimensions."""
        if value in self.arguments:
            return True
        op = value.owner
        return isinstance(op, ag.DimOp) and op.operands[0] in self.env

    def _needs(self, value: SSAValue) -> Sequence[SSAValue]:
        if self._is_leaf(value):
            return ()
        op = value.owner
        assert isinstance(op, Operation)
        if not has_kernel(op) and not _is_until_scan(op):
            user = op_label(self.op) if self.op is not None else "a shape"
            raise NotImplementedError(
                f"ag-to-loops: {user} needs the value of {op_label(op)}, which the shape "
                "function cannot compute (the result of a control-flow op)"
            )
        return op.operands

    def _compute(self, value: SSAValue, ins: list[Buffer]) -> Buffer:
        if value in self.arguments:
            return Buffer(self.arguments[value], tuple(self.env[value]))
        op = value.owner
        assert isinstance(op, Operation)
        if isinstance(op, ag.DimOp) and op.operands[0] in self.env:
            return self._dim(op, value)
        b = self.builder
        dests = []
        for result in op.results:
            t = buffer_type(result.type)
            sizes = dynamic_sizes(b, t.get_shape(), self.env[result])
            alloc = b.insert(memref.AllocOp(sizes, [], t)).memref
            dests.append(Buffer(alloc, tuple(self.env[result])))
        if _is_until_scan(op):  # its count gives a shape: the loop runs here too
            ag_scan.emit_scan(b, op, dests, ins)
        else:
            emit_op(b, op, dests, ins)
        for result, dest in zip(op.results, dests, strict=True):
            self.temporaries.append(dest.memref)
            self.buffers[result] = dest
        return self.buffers[value]

    def _dim(self, op: ag.DimOp, value: SSAValue) -> Buffer:
        """`ag.dim` from the operand's known dimensions (its data is not needed, so the
        operand may be the result of a control-flow op such as `ag.scan`)."""
        t = buffer_type(value.type)
        dest = Buffer(self.builder.insert(memref.AllocOp([], [], t)).memref, ())
        source = Buffer(dest.memref, tuple(self.env[op.operands[0]]))  # only dims are read
        emit_op(self.builder, op, [dest], [source])
        self.temporaries.append(dest.memref)
        self.buffers[value] = dest
        return dest

    def buffer(self, operand: int) -> Buffer:
        assert self.op is not None
        return self._buffer_of(self.op.operands[operand])

    def scalar(self, operand: int) -> SSAValue:
        assert self.op is not None
        value = self.op.operands[operand]
        if value not in self.scalars:
            self.scalars[value] = load(self.builder, self._buffer_of(value), [])
        return self.scalars[value]

    def value(self, operand: int) -> SSAValue:
        return _as_index_value(self.builder, self.scalar(operand))

    def release(self) -> None:
        for temporary in self.temporaries:
            self.builder.insert(memref.DeallocOp.get(temporary))
        self.temporaries.clear()
        self.buffers.clear()


class ShapeWalker:
    """Builds the body of `@f__shape` op by op: each op's shape rule, then its checks
    (each a branch to the failure block). Control-flow ops (`CONTROL_FLOW`) walk their
    regions through `walk` and may add blocks (`new_block`)."""

    def __init__(self, context: _ShapeFunctionContext, err: SSAValue, entry: Block):
        self.context = context
        self.env: dict[SSAValue, Sequence[Dim]] = context.env
        self.err = err
        self.checks: list[Check] = []
        self.blocks = [entry]
        self.failures: dict[int, Block] = {}
        """The failure block of each number of reported values."""
        self.passed: set[Hashable] = set()
        """The conditions checked at the top level so far (`_check_key`): a later op's
        check of one of them is not emitted again (a layer's backward ops check again
        what its forward ops checked)."""
        self.depth = 0
        """How many control-flow ops' regions the walk is in."""

    @property
    def builder(self) -> Builder:
        return self.context.builder

    @builder.setter
    def builder(self, b: Builder) -> None:
        self.context.builder = b

    def new_block(self, arg_types: Sequence[Attribute] = ()) -> Block:
        block = Block(arg_types=arg_types)
        self.blocks.append(block)
        return block

    def emit_checks(self, checks: Sequence[Check]) -> None:
        for check in checks:
            if self.depth == 0:  # the top level: one chain, each check dominates the next
                key = _check_key(check)
                if key in self.passed:
                    continue  # an earlier check of the same condition already passed
                self.passed.add(key)
            arity = len(check.reported)
            if arity not in self.failures:
                self.failures[arity] = _failure_block(self.err, arity)
            self.checks.append(check)
            fail = self.failures[arity]
            self.builder = _emit_check(self.builder, check, len(self.checks), fail)
            self.blocks.append(self.builder.insertion_point.block)

    def walk(self, ops: Sequence[Operation]) -> None:
        """Shape rules and checks of `ops`, in order (most rules emit no IR)."""
        for op in ops:
            lowering = CONTROL_FLOW.get(type(op))
            if lowering is not None:
                self.depth += 1  # checks in its regions (branches, steps) are their own
                try:
                    lowering.shape(self, op)
                finally:
                    self.depth -= 1
                continue
            if type(op) in STATEMENTS:
                continue
            self.context.op = op
            operand_dims = [self.env[o] for o in op.operands]
            all_dims, op_checks = results_dims(op, operand_dims, self.context)
            self.env.update(zip(op.results, all_dims, strict=True))
            self.context.release()
            self.emit_checks(op_checks)


def build_shape_function(f: func.FuncOp) -> func.FuncOp:
    """`@f__shape`: the run-time checks of `f`'s body and its results' dimensions.

    Each op's checks are emitted right after its shape rule, so a rule that reads
    operand values runs after the checks of the ops computing them."""
    ops, ret = _body(f)
    inputs = [argument_type(t) for t in f.function_type.inputs]
    entry = _entry_block([*inputs, DIMS_TYPE, ERR_TYPE], [*_arg_names(len(inputs)), "dims", "err"])
    *args, dims_buffer, err = entry.args
    b = Builder(InsertPoint.at_end(entry))
    env = {old: memref_dims(b, new) for old, new in zip(f.args, args, strict=True)}
    context = _ShapeFunctionContext(b, dict(zip(f.args, args, strict=True)), env)
    walker = ShapeWalker(context, err, entry)
    walker.walk(ops)
    b = walker.builder
    blocks = [*walker.blocks, *walker.failures.values()]
    _store_dims(b, dims_buffer, [d for v in ret.arguments for d in env[v]])
    b.insert(func.ReturnOp(b.insert(arith.ConstantOp(IntegerAttr(0, i32))).result))
    signature = ([*inputs, DIMS_TYPE, ERR_TYPE], [i32])
    shape_fn = func.FuncOp(f.sym_name.data + SHAPE_SUFFIX, signature, Region(blocks))
    messages = ArrayAttr([StringAttr(c.message) for c in walker.checks])
    shape_fn.attributes[CHECKS_ATTRIBUTE] = messages
    shape_fn.attributes[ALLOC_STATUS] = UnitAttr()
    return shape_fn


# --- @f ----------------------------------------------------------------------------------


def _touched(op: Operation) -> tuple[SSAValue, ...]:
    """The values `op` defines or uses, including the uses inside its regions."""
    if not op.regions:
        return (*op.operands, *op.results)
    return (*(o for nested in op.walk() for o in nested.operands), *op.results)


def _last_uses(ops: Sequence[Operation]) -> dict[SSAValue, int]:
    """For each value, the index in `ops` of its last user (or of its definition)."""
    last: dict[SSAValue, int] = {}
    for index, op in enumerate(ops):
        for value in _touched(op):
            last[value] = index
    return last


class _ComputeContext:
    """The `ShapeContext` of `@f`: operand values are read from their buffers."""

    def __init__(self, builder: Builder, op: Operation, operands: Sequence[Buffer]):
        self.builder = builder
        self.emit_checks = False
        self.op = op
        self.operands = operands

    def buffer(self, operand: int) -> Buffer:
        return self.operands[operand]

    def scalar(self, operand: int) -> SSAValue:
        return load(self.builder, self.operands[operand], [])

    def value(self, operand: int) -> SSAValue:
        return _as_index_value(self.builder, self.scalar(operand))


@dataclass
class _ComputeState:
    """What `build_compute_function` knows while it walks the body."""

    builder: Builder
    env: dict[SSAValue, Buffer]
    outputs: Sequence[SSAValue]
    first_output: dict[SSAValue, int]
    owned: set[SSAValue]

    escaping: set[SSAValue] = field(default_factory=set[SSAValue])
    """Values allocated here but owned (and freed) by an enclosing state: the results
    of a region."""
    types_after: Sequence[set[MemRefType]] = ()
    """For each op index, the buffer types of the intermediates computed after it (the
    top-level state only: a region's state frees its dead buffers at once)."""
    pool: list[Buffer] = field(default_factory=list[Buffer])
    """Dead intermediates kept for a later intermediate of their type and dimensions."""

    statements: StatementState | None = None
    """What the statements (`STATEMENTS`) of the function share (set for `@f`)."""

    entry: Block | None = None
    """`@f`'s entry block, set in the top-level state only: there its small intermediates
    of a static shape live on the stack (`memref.alloca` at the block's start)."""

    roots: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    """A view (see `ag_views`) → the value owning the memory it shows."""
    last_use: dict[SSAValue, int] = field(default_factory=dict[SSAValue, int])
    """The index of each value's last user among the ops `compute_ops` walks; a value
    viewed by a later-used view lives until that view's last use."""
    index: int = 0
    """The index of the op being lowered."""

    def destination(self, value: SSAValue, dims: Sequence[Dim]) -> Buffer:
        """The buffer an op computes `value` into: its output, a dead intermediate of
        the same type and dimensions, or a fresh allocation."""
        if value in self.first_output:
            return Buffer(self.outputs[self.first_output[value]], tuple(dims))
        t = buffer_type(value.type)
        for reused in self.pool:
            if value not in self.escaping and reused.type == t and _same_dims(reused.dims, dims):
                self.pool.remove(reused)
                self.owned.add(value)
                return Buffer(reused.memref, tuple(dims))
        if self.entry is not None and _fits_the_stack(t):
            self.owned.add(value)
            stack = memref.AllocaOp.get(t.element_type, STACK_ALIGNMENT, t.get_shape())
            Builder(InsertPoint.at_start(self.entry)).insert(stack)
            return Buffer(stack.memref, tuple(dims))
        sizes = dynamic_sizes(self.builder, t.get_shape(), dims)
        alloc = self.builder.insert(memref.AllocOp(sizes, [], t)).memref
        if value not in self.escaping:
            self.owned.add(value)
        return Buffer(alloc, tuple(dims))

    def region_state(
        self, builder: Builder, destinations: dict[SSAValue, SSAValue], escaping: set[SSAValue]
    ) -> _ComputeState:
        """The state of a region built at `builder`: it sees this state's values, computes
        each value of `destinations` into that buffer and allocates the `escaping` values
        without owning them."""
        outputs = list(destinations.values())
        first = {v: i for i, v in enumerate(destinations)}
        region = _ComputeState(builder, dict(self.env), outputs, first, set(), set(escaping))
        region.statements = self.statements
        region.roots = dict(self.roots)
        return region

    def compute(self, ops: Sequence[Operation]) -> None:
        """The kernels of `ops` (see `compute_ops`)."""
        compute_ops(self, ops)

    def destinations(self, op: Operation, all_dims: Sequence[Sequence[Dim]]) -> list[Buffer]:
        """The buffers `op` computes its results into: for a result in the op's
        `ag.destroy_map` (see the `inplace` pass), the dead operand's own buffer when
        this state allocated it and no view of it outlives this op or is another operand
        of it; otherwise `destination`."""
        ag.verify_destroy_map(op)
        overwritten = ag.destroy_map(op)
        dests = []
        for r, (result, dims) in enumerate(zip(op.results, all_dims, strict=True)):
            source = op.operands[overwritten[r]] if r in overwritten else None
            reusable = source is not None and self._overwritable(op, overwritten[r])
            if reusable and result not in self.escaping and result not in self.first_output:
                self.owned.discard(source)  # the buffer now holds the result
                self.owned.add(result)
                dests.append(Buffer(self.env[source].memref, tuple(dims)))
            else:
                dests.append(self.destination(result, dims))
        return dests

    def _overwritable(self, op: Operation, k: int) -> bool:
        """Whether `op` may write over operand `k`'s buffer: allocated here, dead after
        `op` (its views included) and shown by no other operand of `op`."""
        source = op.operands[k]
        if source not in self.owned or self.last_use.get(source) != self.index:
            return False
        others = (o for j, o in enumerate(op.operands) if j != k)
        return all(self.roots.get(o, o) is not source for o in others)

    def view(self, op: Operation, operands: Sequence[Buffer]) -> bool:
        """Lowers `op` to a view of its operand's memory (see `ag_views`) when it has a
        view rule, its result is neither returned nor a region's result, and the rule
        applies; records the alias. Whether it did."""
        rule = VIEWS.get(type(op))
        result = op.results[0] if op.results else None
        if rule is None or result in self.first_output or result in self.escaping:
            return False
        buffer = rule(self.builder, op, operands)
        if buffer is None:
            return False
        assert result is not None
        source = op.operands[ag.view_map(op)[0]]
        root = self.roots.get(source, source)
        self.roots[result] = root
        self.env[result] = buffer
        end = self.last_use.get(result, self.index)
        self.last_use[root] = max(self.last_use.get(root, self.index), end)
        return True

    def free_dead(self, op: Operation, index: int, last_use: dict[SSAValue, int]) -> None:
        """Frees the intermediates whose last use (their views' included) is op
        `index`, or keeps them in the pool when a later intermediate has their type."""
        for value in dict.fromkeys(self.roots.get(v, v) for v in _touched(op)):
            if value in self.owned and last_use[value] == index:
                buffer = self.env[value]
                if index < len(self.types_after) and buffer.type in self.types_after[index]:
                    self.pool.append(buffer)
                else:
                    self.free(buffer)

    def release_pool(self) -> None:
        for buffer in self.pool:
            self.free(buffer)
        self.pool.clear()

    def free(self, buffer: Buffer) -> None:
        """`memref.dealloc` of a heap buffer (a stack one goes when `@f` returns)."""
        if not _on_stack(buffer.memref):
            self.builder.insert(memref.DeallocOp.get(buffer.memref))


STACK_BYTES = 64
"""The largest intermediate (of a static shape, at `@f`'s top level) kept on the stack:
scalars and tiny vectors, which then cost no `malloc`/`free` and cannot fail."""

STACK_ALIGNMENT = 64
"""The alignment of a stack intermediate (that of `memref.alloc`'s buffers)."""


def _fits_the_stack(t: MemRefType) -> bool:
    shape = t.get_shape()
    if any(d == DYNAMIC_INDEX for d in shape):
        return False
    return math.prod(shape) * element_byte_size(t.element_type) <= STACK_BYTES


def _on_stack(value: SSAValue) -> bool:
    """Whether the memref `value` (or the memref it casts or views) is a `memref.alloca`."""
    owner = value.owner
    while isinstance(owner, memref.ReinterpretCastOp | memref.CastOp | memref.SubviewOp):
        owner = owner.source.owner
    return isinstance(owner, memref.AllocaOp)


def _same_dims(a: Sequence[Dim], b: Sequence[Dim]) -> bool:
    """Whether two dimension lists are known to be equal (same ints, same SSA values)."""
    return len(a) == len(b) and all(
        x == y if isinstance(x, int) and isinstance(y, int) else x is y
        for x, y in zip(a, b, strict=True)
    )


def _types_after(ops: Sequence[Operation], returned: dict[SSAValue, int]) -> list[set[MemRefType]]:
    """For each op index, the buffer types of the results computed after it that are
    not returned (those that may take a pooled buffer)."""
    after: list[set[MemRefType]] = []
    seen: set[MemRefType] = set()
    for op in reversed(ops):
        after.append(set(seen))
        seen |= {buffer_type(r.type) for r in op.results if r not in returned}
    return after[::-1]


def compute_ops(state: _ComputeState, ops: Sequence[Operation]) -> None:
    """The kernels of `ops` at `state.builder`, each intermediate freed after its last
    use; control-flow ops (`CONTROL_FLOW`) lower themselves."""
    last_use = _last_uses(ops)
    state.last_use = last_use
    for index, op in enumerate(ops):
        state.index = index
        lowering = CONTROL_FLOW.get(type(op))
        if lowering is not None:
            lowering.compute(state, op)
        elif _reinterpreted(state, op, index, last_use):
            pass
        elif type(op) in STATEMENTS:
            assert state.statements is not None
            shared = replace(state.statements, env=state.env)
            STATEMENTS[type(op)](state.builder, op, shared)
        elif not state.view(op, [state.env[o] for o in op.operands]):
            b = state.builder
            operands = [state.env[o] for o in op.operands]
            context = _ComputeContext(b, op, operands)
            all_dims, _ = results_dims(op, [x.dims for x in operands], context)
            dests = state.destinations(op, all_dims)
            emit_kernel(b, op, dests, operands)
            state.env.update(zip(op.results, dests, strict=True))
        state.free_dead(op, index, last_use)


def _reinterpreted(
    state: _ComputeState, op: Operation, index: int, last_use: dict[SSAValue, int]
) -> bool:
    """`ag.reshape` of an intermediate this state owns whose last use it is (its views'
    included): the result takes over the buffer (`memref.reinterpret_cast`, row-major,
    no copy). Owned buffers are contiguous (`memref.alloc`), so the row-major order is
    the memory order. (A subtensor is a view, see `ag_views`.)"""
    if not isinstance(op, ag.ReshapeOp):
        return False
    source = op.operands[0]
    result = op.results[0]
    if source not in state.owned or last_use[source] != index:
        return False
    if result in state.first_output or result in state.escaping:
        return False
    buffer = state.env[source]
    if not isinstance(buffer.type.layout, NoneAttr):
        return False
    b = state.builder
    context = _ComputeContext(b, op, [state.env[o] for o in op.operands])
    (dims,), _ = results_dims(op, [state.env[o].dims for o in op.operands], context)
    t = buffer_type(result.type)
    shape = t.get_shape()
    # static entries where the type has them (its verifier wants them so), else values
    strides: list[Dim] = [1]
    for d in reversed(dims[1:]):
        last = strides[0]
        if isinstance(last, int) and isinstance(d, int):
            strides.insert(0, last * d)
        else:
            strides.insert(0, b.insert(arith.MuliOp(as_index(b, last), as_index(b, d))).result)
    cast = memref.ReinterpretCastOp(
        buffer.memref,
        [],
        [as_index(b, d) for d, n in zip(dims, shape, strict=True) if n == DYNAMIC_INDEX],
        [v for v in strides if not isinstance(v, int)],
        [0],
        list(shape),
        [v if isinstance(v, int) else DYNAMIC_INDEX for v in strides],
        t,
    )
    alias = b.insert(cast).result
    state.owned.discard(source)
    state.owned.add(result)
    state.env[result] = Buffer(alias, tuple(dims))
    return True


def _first_outputs(ret: func.ReturnOp, env: dict[SSAValue, Buffer]) -> dict[SSAValue, int]:
    """Returned op results → the first output position returning them."""
    first: dict[SSAValue, int] = {}
    for position, value in enumerate(ret.arguments):
        if value not in env:
            first.setdefault(value, position)
    return first


def build_compute_function(f: func.FuncOp) -> func.FuncOp:
    """`@f`: the body's kernels, writing the results into caller-allocated buffers."""
    ops, ret = _body(f)
    ft = f.function_type
    inputs = [argument_type(t) for t in ft.inputs]
    outputs = [buffer_type(t) for t in ft.outputs]
    entry = _entry_block(
        [*inputs, *outputs], [*_arg_names(len(inputs)), *_arg_names(len(outputs), "out")]
    )
    b = Builder(InsertPoint.at_end(entry))
    arguments = zip(f.args, entry.args[: len(inputs)], strict=True)
    env = {old: Buffer(new, memref_dims(b, new)) for old, new in arguments}
    first = _first_outputs(ret, env)
    state = _ComputeState(b, env, entry.args[len(inputs) :], first, set(), entry=entry)
    state.types_after = _types_after(ops, first)
    state.statements = StatementState(f.sym_name.data, env)
    inplace = ag.result_pairs(f, ag.INPLACE_RESULTS_ATTRIBUTE)
    aliased = {*inplace.values(), *(len(inputs) + r for r in inplace)}
    reuse = KERNEL_REUSE.get()
    if reuse is not None:
        noalias = frozenset(range(len(inputs) + len(outputs))) - aliased
        reuse.begin_function(f.sym_name.data, entry, noalias)
    returned = list(zip(state.outputs, ret.arguments, strict=True))
    if inplace:  # returned arguments first: an in-place result may overwrite one
        _copy_returned(b, env, [(o, v) for o, v in returned if v in f.args])
        returned = [(o, v) for o, v in returned if v not in f.args]
    compute_ops(state, ops)
    _copy_returned(b, env, returned)
    state.release_pool()
    b.insert(func.ReturnOp(b.insert(arith.ConstantOp(IntegerAttr(0, i64))).result))
    compute_fn = func.FuncOp(
        f.sym_name.data,
        ([*inputs, *outputs], [i64]),
        Region(entry),
        arg_attrs=noalias_attrs(len(inputs) + len(outputs), aliased),
    )
    compute_fn.attributes[ALLOC_STATUS] = UnitAttr()
    return compute_fn


def _copy_returned(
    b: Builder, env: dict[SSAValue, Buffer], returned: Sequence[tuple[SSAValue, SSAValue]]
) -> None:
    """Copies each returned value not computed into its output buffer there."""
    for out, value in returned:
        if env[value].memref is not out:
            copy(b, env[value], Buffer(out, env[value].dims))


def noalias_attrs(count: int, aliased: set[int] | frozenset[int] = frozenset()) -> ArrayAttr:
    """`{llvm.noalias}` on each of `count` memref arguments but those in `aliased`: the
    runtime passes outputs it has just allocated and inputs that `@f` only reads, so no
    argument's data is written through another argument, except the pairs of
    `ag.inplace_results` (the `inplace-update` pass): such an output may be its
    input's own buffer, so neither gets the attribute."""
    return noalias_arg_attrs(count, frozenset(range(count)) - frozenset(aliased))


# --- the pass ----------------------------------------------------------------------------


class LowerTensorFunction(RewritePattern):
    """`func.func @f` on tensors → `@f__shape` and `@f` on memrefs (see the module doc)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter, /):
        if not _is_tensor_function(op):
            return
        if op.is_declaration:
            raise NotImplementedError(f"ag-to-loops: cannot lower declaration @{op.sym_name.data}")
        rewriter.replace(op, [build_shape_function(op), build_compute_function(op)], [])


def declare_libm_functions(module: ModuleOp, calls: Calls | None = None) -> None:
    """Adds `func.func private @fmod...` for each libm function called but not declared
    (`calls`: the module's `loop_utils.first_calls`, when the caller has them)."""
    declared = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
    if calls is None:
        calls = first_calls(module)
    called = {name for name in calls if name in LIBM_FUNCTIONS}
    for name in sorted(called - declared):
        t = LIBM_FUNCTIONS[name]
        module.body.block.add_op(func.FuncOp.external(name, [t] * LIBM_ARITY.get(name, 2), [t]))


@dataclass(frozen=True)
class ConvertAgToLoopsPass(ModulePass):
    """Lowers tensor functions of `ag` ops to the native memref ABI (see the module doc)."""

    name = "ag-to-loops"

    parallel_min_work: int = 0
    """Emit `ag.parallel_for` for loops of at least this much work (0: serial loops;
    see `arignote.lowering.loops.parallel_loops`)."""

    kernel_regions: bool = False
    """Emit each op's kernel in an `scf.execute_region` of its own, once per kind
    (`kernel_reuse`), for `outline-kernels` to make a kernel function of (which it must
    then run: no later pass lowers the regions)."""

    parallel_all: bool = False
    """With parallel loops: also those the CPU keeps serial (the GPU target's loops):
    reductions (the result elements of a partial one in parallel, a full one in parallel
    parts) and nests of independent iterations (copies, fills, the rows of softmax)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        declare_profile_counters(op)
        reuse = KERNEL_REUSE.set(KernelReuse(op) if self.kernel_regions else None)
        try:
            with parallel_loops(self.parallel_min_work, self.parallel_all):
                walker = PatternRewriteWalker(LowerTensorFunction(), apply_recursively=False)
                walker.rewrite_module(op)
        finally:
            KERNEL_REUSE.reset(reuse)
        calls = first_calls(op)  # (one walk for all the declarations)
        declare_libm_functions(op, calls)
        declare_blas_functions(op, calls)
        declare_print_functions(op, calls)
        declare_pyop_functions(op, calls)
        declare_lapack_functions(op, calls)
        declare_mpi_functions(op, calls)
