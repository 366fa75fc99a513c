"""Pattern application for the lowering passes, dispatched on the op's class.

xDSL's `GreedyRewritePatternApplier` calls every pattern of its list on every op the
walker visits (a pattern typed with `@op_type_rewrite_pattern` then tests `isinstance`
and returns): a conversion pass with a dozen patterns makes a dozen calls per op, on a
module of thousands of ops, twice (the walker's second walk confirms the fixed point).
`DispatchingApplier` has the same semantics (trivially dead ops erased first, then the
patterns in list order until one acts) but calls only the patterns that can match the
op's class, a list computed once per class:

- a pattern whose `match_and_rewrite` is typed with `@op_type_rewrite_pattern` matches
  the op classes of its annotation (a union gives several);
- a pattern with an `op_types` attribute (a tuple of op classes) matches those, e.g. a
  table-driven pattern (`{arith.AddfOp: llvm.FAddOp, ...}`) gives its table's keys;
- any other pattern is tried on every op.

```python
PatternRewriteWalker(DispatchingApplier([LoadLowering(), StoreLowering()])).rewrite_module(m)
```

For patterns that never leave an op that a pattern rewrites again (conversions to
another dialect), `apply_once` replaces the walker: it visits each op of the module
once, as listed before the rewrite (or only the ops of given classes), then erases the
trivially dead ops left in one sweep. The walker also visits every op that a rewrite
creates or touches, then walks the whole module again to confirm the fixed point: on a
conversion to the `llvm` dialect, three times as many visits as there are ops.

```python
apply_once(DispatchingApplier([LoadLowering(), StoreLowering()]), m)
```
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Union, get_args, get_origin

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.folder import Folder
from xdsl.ir import Operation, Region
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint
from xdsl.traits import ConstantLike, HasFolder

ANY_OP: None = None
"""`pattern_op_types` of a pattern tried on every op."""


def _annotated_types(pattern: RewritePattern) -> tuple[type[Operation], ...] | None:
    """The op classes of an `@op_type_rewrite_pattern` method, read from the closure
    the decorator builds (its `expected_type`); None for an undecorated method."""
    method = type(pattern).match_and_rewrite
    code, closure = getattr(method, "__code__", None), getattr(method, "__closure__", None)
    if code is None or closure is None or "expected_type" not in code.co_freevars:
        return None
    expected = closure[code.co_freevars.index("expected_type")].cell_contents
    types = get_args(expected) if get_origin(expected) in (Union, type(int | str)) else (expected,)
    if not all(isinstance(t, type) and issubclass(t, Operation) for t in types):
        return None
    return tuple(types)


def pattern_op_types(pattern: RewritePattern) -> tuple[type[Operation], ...] | None:
    """The op classes `pattern` can rewrite (an op matches if it is an instance of one),
    or `ANY_OP` (None) when that is not known."""
    declared = getattr(pattern, "op_types", None)
    if declared is not None:
        return tuple(declared)
    return _annotated_types(pattern)


class DispatchingApplier(RewritePattern):
    """`GreedyRewritePatternApplier` calling only the patterns that can match an op's
    class; see the module docstring. With `folding_enabled` (and the `ctx` it needs)
    an op that has a folder and is not a constant is folded first, as the greedy
    applier does."""

    def __init__(
        self,
        patterns: Sequence[RewritePattern],
        dce_enabled: bool = True,
        ctx: Context | None = None,
        folding_enabled: bool = False,
    ):
        if folding_enabled and ctx is None:
            raise ValueError("DispatchingApplier: folding needs a context (ctx)")
        self.patterns = list(patterns)
        self.dce_enabled = dce_enabled
        self.folding_enabled = folding_enabled
        self._folder = Folder(ctx) if ctx is not None else None
        self._folds: dict[type[Operation], bool] = {}
        self._any: list[int] = []
        """The positions of the patterns tried on every op."""
        self._positions: dict[type[Operation], list[int]] = {}
        """For each op class a pattern names, the positions of those naming it."""
        for position, pattern in enumerate(self.patterns):
            types = pattern_op_types(pattern)
            if types is ANY_OP:
                self._any.append(position)
            else:
                for t in types:
                    self._positions.setdefault(t, []).append(position)
        self._by_class: dict[type[Operation], tuple[RewritePattern, ...]] = {}
        self._converts: dict[type[Operation], bool] = {}

    def _typed_positions(self, cls: type[Operation]) -> set[int]:
        # an op matches a pattern's class if that class is in its MRO (issubclass,
        # without the cost of ABC subclass checks on the first call for each class)
        return {p for base in cls.__mro__ for p in self._positions.get(base, ())}

    def patterns_for(self, cls: type[Operation]) -> tuple[RewritePattern, ...]:
        """The patterns tried on an op of class `cls`, in list order."""
        found = self._by_class.get(cls)
        if found is None:
            positions = sorted(self._typed_positions(cls).union(self._any))
            found = tuple(self.patterns[p] for p in positions)
            self._by_class[cls] = found
        return found

    def converts(self, cls: type[Operation]) -> bool:
        """Whether a pattern made for ops of class `cls` (not one tried on every op)
        applies to them."""
        found = self._converts.get(cls)
        if found is None:
            found = self._converts[cls] = bool(self._typed_positions(cls))
        return found

    def folds(self, op: Operation) -> bool:
        """Whether ops of `op`'s class are folded (a folder, not a constant: the
        greedy applier's test, once per class)."""
        found = self._folds.get(type(op))
        if found is None:
            found = self._folds[type(op)] = op.has_trait(
                HasFolder, value_if_unregistered=False
            ) and not op.has_trait(ConstantLike, value_if_unregistered=True)
        return found

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if self.dce_enabled and may_be_dead(op) and is_trivially_dead(op):
            rewriter.erase(op)
            return
        if self.folding_enabled and self.folds(op):
            assert self._folder is not None
            folded = self._folder.try_fold(op)
            if folded is not None:
                values, ops = folded
                rewriter.replace(op, new_ops=ops, new_results=values)
                return
        for pattern in self.patterns_for(type(op)):
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return


def is_trivially_dead(op: Operation) -> bool:
    """xDSL's `is_trivially_dead`, imported on first use: its module imports
    `xdsl.passes` (6 ms), which `grad` (through the `stabilize` patterns) does not
    otherwise need."""
    from xdsl.transforms.dead_code_elimination import is_trivially_dead as dead

    return dead(op)


def may_be_dead(op: Operation) -> bool:
    """Whether `op` can be trivially dead: all its results unused, and it has some, or
    regions. Skips the side-effect analysis of `is_trivially_dead` on the ops without
    results and regions (stores, branches, calls...): one of those is trivially dead
    only if it declares no effect at all, which no op that means anything does."""
    results = op.results
    if not results:
        return bool(op.regions)
    return all(r.first_use is None for r in results)


def _erase_if_dead(op: Operation, rewriter: PatternRewriter) -> None:
    """Erase `op` if it is trivially dead, then the producers of its operands that
    become so."""
    pending = [op]
    while pending:
        op = pending.pop()
        if op.parent is None or not may_be_dead(op) or not is_trivially_dead(op):
            continue
        producers = [o.owner for o in op.operands if isinstance(o.owner, Operation)]
        rewriter.erase(op)
        pending += producers


def walk_op(op: Operation) -> list[Operation]:
    """`list(op.walk())`: `op`, then the ops of its regions (`walk_ops`)."""
    ops = [op]
    for region in op.regions:
        ops += walk_ops(region)
    return ops


def walk_ops(region: Region, reverse: bool = False) -> list[Operation]:
    """`list(region.walk(reverse=reverse))` (pre-order: each op before the ops of its
    regions), made with a stack instead of xDSL's generator per op and per block: the
    passes that apply patterns once walk the whole module twice, at its largest."""
    ops: list[Operation] = []
    stack = _children(region, reverse)
    while stack:
        op = stack.pop()
        ops.append(op)
        for inner in op.regions if reverse else reversed(op.regions):
            stack += _children(inner, reverse)
    return ops


def _children(region: Region, reverse: bool) -> list[Operation]:
    """The ops of `region`'s blocks in the order `walk_ops` pops them (last first)."""
    ops = [op for block in region.blocks for op in block.ops]
    if not reverse:
        ops.reverse()
    return ops


def _instances(ops: list[Operation], classes: tuple[type[Operation], ...]) -> list[Operation]:
    """The ops of `ops` that are instances of `classes`, tested once per class (the op
    classes are abstract: `isinstance` goes through `ABCMeta`)."""
    matches: dict[type[Operation], bool] = {}
    found = []
    for op in ops:
        match = matches.get(type(op))
        if match is None:
            match = matches[type(op)] = isinstance(op, classes)
        if match:
            found.append(op)
    return found


def apply_once(
    applier: RewritePattern,
    module: ModuleOp,
    visit: tuple[type[Operation], ...] | None = None,
    dce: bool = True,
    reverse: bool = False,
) -> bool:
    """Apply `applier` once to every op of `module` (of the classes `visit` only, when
    given), in the order `module` lists them before the rewrite (pre-order: an op before
    the ops in its regions; with `reverse`, the ops of each block last to first, still
    each op before the ops in its regions); then, with `dce`, erase the trivially dead
    ops left. Returns whether anything changed.

    For patterns whose rewrites leave no op that a pattern would rewrite again (every
    `convert-*-to-llvm` pattern, xDSL's `scf` to `cf` ones): the result is the fixed
    point that `PatternRewriteWalker` reaches with `applier` (wrapped in a
    `DispatchingApplier` or `GreedyRewritePatternApplier`, which erase trivially dead
    ops, when `dce`), without its worklist (every op a rewrite inserts or touches is
    pushed, then popped to find no pattern) and its confirming second walk.
    """
    walk = walk_ops(module.body, reverse)
    ops = walk if visit is None else _instances(walk, visit)
    rewriter = PatternRewriter(InsertPoint.at_start(module.body.block))
    changed = False
    for op in ops:
        if op.parent is None:  # erased (or detached) by an earlier rewrite
            continue
        rewriter.has_done_action = False
        rewriter.current_operation = op
        rewriter.insertion_point = InsertPoint.before(op)
        try:
            applier.match_and_rewrite(op, rewriter)
        except Exception as err:
            op.emit_error(f"Error while applying pattern: {err}", underlying_error=err)
        changed |= rewriter.has_done_action
    if dce:
        for op in [op for op in walk_ops(module.body, reverse=True) if may_be_dead(op)]:
            rewriter.has_done_action = False
            _erase_if_dead(op, rewriter)
            changed |= rewriter.has_done_action
    return changed
