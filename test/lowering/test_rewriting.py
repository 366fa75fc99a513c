"""The rewrite machinery of the LLVM lowering: `op_builder.build`, `apply_once` and the
passes it drives (`convert-scf-to-cf`, `reconcile-unrealized-casts`, `convert-to-llvm`'s
constant pool), each against what xDSL's own constructors and passes give."""

from __future__ import annotations

import warnings

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    UNKNOWN_LOC,
    IndexType,
    ModuleOp,
    UnitAttr,
    UnrealizedConversionCastOp,
    f32,
    i1,
    i64,
)
from xdsl.ir import Block
from xdsl.parser import Parser
from xdsl.transforms.convert_scf_to_cf import ConvertScfToCf
from xdsl.transforms.reconcile_unrealized_casts import ReconcileUnrealizedCastsPass

from arignote.lowering import op_builder
from arignote.lowering.driver import apply_pipeline, make_context
from arignote.lowering.llvm import llvm_utils
from arignote.lowering.llvm.llvm_utils import PTR, integer_attr, nsw
from arignote.lowering.llvm.reconcile_casts import ReconcileUnrealizedCastsPass as Reconcile
from arignote.lowering.llvm.scf_to_cf import ConvertScfToCfPass
from arignote.lowering.rewriting import walk_ops

# --- op_builder.build ----------------------------------------------------------------------


def test_build_gives_the_constructors_op():
    block = Block(arg_types=[PTR, f32, i64, i64])
    ptr, x, i, j = block.args
    cases = [
        (llvm.LoadOp, (ptr, f32), {}),
        (llvm.FAddOp, (x, x), {}),
        (llvm.AddOp, (i, j), {"overflow": nsw()}),
        (llvm.GEPOp.from_mixed_indices, (ptr, [i], f32), {"inbounds": True}),
        (llvm.ConstantOp, (integer_attr(7, i64), i64), {}),
        (llvm.CallOp, ("f", i, j), {"return_type": i64}),
    ]
    for factory, args, kwargs in cases:
        expected = factory(*args, **kwargs)
        for _ in range(3):  # the first from the factory, the others from its record
            built = op_builder.build(factory, *args, **kwargs)
            assert type(built) is type(expected)
            assert built.properties == expected.properties
            assert built.attributes == expected.attributes
            assert list(built.operands) == list(expected.operands)
            assert str(built) == str(expected)
            assert all(any(u.operation is built for u in v.uses) for v in built.operands)
            assert built.parent is None and not built.regions and built.location == UNKNOWN_LOC
            # the op's dicts are its own, not the record's
            built.attributes["mark"] = UnitAttr()
            built.properties["mark"] = UnitAttr()


def test_build_calls_the_factory_when_the_operands_are_not_its_arguments():
    block = Block(arg_types=[i64, i64])
    a, b = block.args

    def swapped(lhs, rhs):  # operands in the other order than the arguments
        return llvm.SubOp(rhs, lhs)

    for _ in range(2):
        op = op_builder.build(swapped, a, b)
        assert list(op.operands) == [b, a]


def test_build_gives_each_op_its_own_successors():
    """A branch built from its record branches to the blocks of its own arguments."""
    block = Block(arg_types=[i1, i64])
    flag, n = block.args
    for _ in range(3):
        then, other = Block(), Block(arg_types=[i64])
        op = op_builder.build(llvm.CondBrOp, flag, then, [], other, [n])
        expected = llvm.CondBrOp(flag, then, [], other, [n])
        assert list(op.successors) == [then, other]
        assert list(op.operands) == [flag, n]
        assert op.properties == expected.properties
        assert {id(use.operation) for use in other.uses} == {id(op), id(expected)}


def test_build_calls_the_factory_when_the_successors_are_not_its_arguments():
    block = Block(arg_types=[i1])

    def swapped(flag, first, second):  # successors in the other order than the arguments
        return llvm.CondBrOp(flag, second, [], first, [])

    for _ in range(2):
        first, second = Block(), Block()
        op = op_builder.build(swapped, block.args[0], first, second)
        assert list(op.successors) == [second, first]


# --- apply_once and the passes on it ---------------------------------------------------------

SCF = """
func.func @f(%m: memref<?xf64>, %n: index, %flag: i1) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %unused = arith.addi %n, %c1 : index
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %t = scf.for %j = %c0 to %i step %c1 iter_args(%inner = %acc) -> (f64) {
      %x = memref.load %m[%j] : memref<?xf64>
      %y = scf.if %flag -> (f64) {
        %d = arith.addf %inner, %x : f64
        scf.yield %d : f64
      } else {
        scf.yield %inner : f64
      }
      scf.yield %y : f64
    }
    scf.yield %t : f64
  }
  func.return %s : f64
}
"""


def _parse(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()


def test_scf_to_cf_gives_xdsls_result():
    """Nested loops and an `scf.if`, and a dead op that both erase."""
    ours, xdsls = _parse(SCF), _parse(SCF)
    ConvertScfToCfPass().apply(make_context(), ours)
    ConvertScfToCf().apply(make_context(), xdsls)
    assert str(ours) == str(xdsls)
    assert "arith.addi %n" not in str(ours)


def test_reconcile_gives_xdsls_result():
    lowered = _parse(SCF)
    apply_pipeline(make_context(), lowered, "convert-scf-to-cf,convert-to-llvm")
    # a cast chain that cancels out, on top of what the conversion leaves
    lowered_text = str(lowered)
    ours, xdsls = _parse(lowered_text), _parse(lowered_text)
    Reconcile().apply(make_context(), ours)
    ReconcileUnrealizedCastsPass().apply(make_context(), xdsls)
    assert str(ours) == str(xdsls)
    assert not any(isinstance(op, UnrealizedConversionCastOp) for op in ours.walk())


def test_reconcile_keeps_and_warns_about_a_cast_it_cannot_remove():
    text = """
    func.func @f(%x: i64) -> index {
      %y = builtin.unrealized_conversion_cast %x : i64 to index
      func.return %y : index
    }
    """
    ours, xdsls = _parse(text), _parse(text)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Reconcile().apply(make_context(), ours)
    assert any("Unable to remove cast" in str(w.message) for w in caught)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ReconcileUnrealizedCastsPass().apply(make_context(), xdsls)
    assert str(ours) == str(xdsls)


def test_convert_to_llvm_makes_each_constant_once_per_function_in_its_entry_block():
    module = _parse(SCF)
    apply_pipeline(make_context(), module, "convert-scf-to-cf,convert-to-llvm")
    for function in module.ops:
        assert isinstance(function, llvm.FuncOp)
        constants = [op for op in function.walk() if isinstance(op, llvm.ConstantOp)]
        keys = [(str(op.value), str(op.result.type)) for op in constants]
        assert len(keys) == len(set(keys))
        entry = function.body.blocks[0]
        assert all(op.parent is entry for op in constants)


def test_convert_to_llvm_casts_no_index_back(monkeypatch):
    """The `index` values (constants, loop counters) are converted with all their
    users: no cast back to `index` is made (xDSL's walker-driven passes make one per
    value, for the users not converted yet); a user the pass does not convert keeps
    one."""
    made = []
    real = llvm_utils._cast

    def cast(value, type_, ops):
        made.append(type_)
        return real(value, type_, ops)

    monkeypatch.setattr(llvm_utils, "_cast", cast)
    apply_pipeline(make_context(), _parse(SCF), "convert-scf-to-cf,convert-to-llvm")
    assert made and not any(isinstance(t, IndexType) for t in made)
    text = """
    func.func @f(%n: index) -> index {
      %c1 = arith.constant 1 : index
      %m = arith.addi %n, %c1 : index
      %k = "test.op"(%m) : (index) -> index
      func.return %k : index
    }
    """
    made.clear()
    context = make_context()
    context.allow_unregistered = True
    module = Parser(context, text).parse_module()
    apply_pipeline(context, module, "convert-to-llvm")
    assert any(isinstance(t, IndexType) for t in made)  # for test.op
    (user,) = [op for op in module.walk() if op.name == "test.op"]
    assert isinstance(user.operands[0].type, IndexType)


def _sequential_loops(n: int) -> str:
    """A function of `n` loops one after the other, each holding an `scf.if`, with an op
    between each two loops (the shape of a lowered graph: many top-level loop nests)."""
    loop = """
  %s{k} = scf.for %i{k} = %c0 to %n step %c1 iter_args(%a{k} = %s{p}) -> (f64) {{
    %x{k} = memref.load %m[%i{k}] : memref<?xf64>
    %y{k} = scf.if %flag -> (f64) {{
      %d{k} = arith.addf %a{k}, %x{k} : f64
      scf.yield %d{k} : f64
    }} else {{
      scf.yield %a{k} : f64
    }}
    scf.yield %y{k} : f64
  }}
  memref.store %s{k}, %m[%c0] : memref<?xf64>"""
    body = "".join(loop.format(k=k, p=k - 1) for k in range(1, n + 1))
    return f"""
func.func @f(%m: memref<?xf64>, %n: index, %flag: i1) -> f64 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s0 = arith.constant 0.0 : f64{body}
  func.return %s{n} : f64
}}
"""


def test_scf_to_cf_work_is_linear_in_the_loops(monkeypatch):
    """Splitting a block moves the ops after the split point and looks up the block's
    position in its region: visited outer before inner and first to last, every loop of
    a function moved all the ops after it (quadratic in the loops: 64 layers of an MLP
    took 22 s in this pass). Counted, not timed: the ops moved and the blocks stepped
    over per scf op stay bounded as the function grows."""
    from xdsl.ir import Region

    work = {"moved": 0, "stepped": 0}
    split, index = Block.split_before, Region.get_block_index

    def counting_split(self, b_first, **kwargs):
        op = b_first
        while op is not None:
            work["moved"] += 1
            op = op.next_op
        return split(self, b_first, **kwargs)

    def counting_index(self, block):
        position = index(self, block)
        work["stepped"] += position + 1
        return position

    monkeypatch.setattr(Block, "split_before", counting_split)
    monkeypatch.setattr(Region, "get_block_index", counting_index)
    per_loop = {}
    for n in (8, 64):
        work.update(moved=0, stepped=0)
        module = _parse(_sequential_loops(n))
        ConvertScfToCfPass().apply(make_context(), module)
        assert "scf." not in str(module)
        per_loop[n] = (work["moved"] / n, work["stepped"] / n)
    assert per_loop[64][0] <= 1.5 * per_loop[8][0], per_loop
    assert per_loop[64][1] <= 1.5 * per_loop[8][1], per_loop


def test_scf_to_cf_of_many_loops_gives_xdsls_result():
    ours, xdsls = _parse(_sequential_loops(5)), _parse(_sequential_loops(5))
    ConvertScfToCfPass().apply(make_context(), ours)
    ConvertScfToCf().apply(make_context(), xdsls)
    assert str(ours) == str(xdsls)


WALKED = """
func.func @f(%c: i1, %n: index) -> index {
  %z = arith.constant 0 : index
  %r = scf.if %c -> (index) {
    %a = arith.addi %n, %n : index
    scf.yield %a : index
  } else {
    %s = scf.for %i = %z to %n step %n iter_args(%x = %z) -> (index) {
      %b = arith.muli %x, %i : index
      scf.yield %b : index
    }
    scf.yield %s : index
  }
  cf.br ^next(%r : index)
^next(%v: index):
  %w = scf.execute_region -> index {
    cf.br ^inner
  ^inner:
    scf.yield %v : index
  }
  func.return %w : index
}
func.func @g() {
  func.return
}
"""


def test_walk_ops_is_xdsls_walk_in_both_directions():
    """`walk_ops` (what `apply_once` visits): the ops, nested ops, several regions and
    blocks in each, in the order of xDSL's `Region.walk`, and reversed as it reverses."""
    module = _parse(WALKED)
    for reverse in (False, True):
        expected = list(module.body.walk(reverse=reverse))
        assert [op.name for op in walk_ops(module.body, reverse)] == [op.name for op in expected]
        assert all(a is b for a, b in zip(walk_ops(module.body, reverse), expected, strict=True))
