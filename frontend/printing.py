"""Printing graphs as Theano did: `debugprint`, `pp`, `pydotprint`, and `dump_ir`.

* `debugprint(obj)`: one line per variable, indented with `|`, each apply node and
  input named by an identifier (`[id A]`); a node reached again is printed once more
  with its identifier and without its inputs.
* `pp(var)`: an infix expression, `((x + y) * TensorConstant{2.0})`.
* `pydotprint(fct)`: the graph drawn by graphviz (`dot_source` gives the DOT text,
  which needs nothing installed).
* `dump_ir(fn, stage)`: the IR of a compiled function at one stage of the lowering
  (also `Function.dump_ir`).

* `Print(message)(x)`: `x`, shown (`message __str__ = ...`) each time the compiled code
  computes it.

All of them walk graphs iteratively: graphs deeper than Python's recursion limit are
common.
"""

from __future__ import annotations

import functools
import io
import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from xdsl.ir import Operation, SSAValue

from arignote.dialects import ag
from arignote.graph import Apply, Variable, ancestors, graph_operands, op_view, variable_of

__all__ = [
    "IR_STAGES",
    "default_printer",
    "hex_digest",
    "leaf_printer",
    "min_informative_str",
    "var_descriptor",
    "GraphvizUnavailableError",
    "Print",
    "debugprint",
    "dot_source",
    "dump_ir",
    "pp",
    "pprint",
    "pydotprint",
]


# --- what a graph-printing function is given ---------------------------------------


def _is_function(obj: Any) -> bool:
    from arignote.compile.function import Function

    return isinstance(obj, Function)


def _is_fgraph(obj: Any) -> bool:
    from arignote.compile.function import FunctionGraph

    return isinstance(obj, FunctionGraph)


def _roots(obj: Any) -> tuple[list[Variable], list[Apply], Any]:
    """The variables to print, the execution order (for a compiled graph, else empty)
    and the function graph (or None) of what a printing function is given."""
    if _is_function(obj):
        obj = obj.maker.fgraph
    if _is_fgraph(obj):
        return list(obj.outputs), obj.toposort(), obj
    if isinstance(obj, Variable):
        return [obj], [], None
    if isinstance(obj, Apply):
        return list(obj.outputs), [], None
    if isinstance(obj, list | tuple):
        found: list[Variable] = []
        for item in obj:
            if isinstance(item, Apply):
                found.extend(item.outputs)
            elif isinstance(item, Variable):
                found.append(item)
            else:
                raise TypeError(f"cannot print an object of type {type(item).__name__}: {item!r}")
        return found, [], None
    raise TypeError(
        "debugprint cannot print an object of this type: expected a Variable, an Apply, "
        f"a Function, a FunctionGraph or a list of variables, got {type(obj).__name__}"
    )


# --- debugprint --------------------------------------------------------------------


def _char_from_number(number: int) -> str:
    """0 → A, 25 → Z, 26 → BA (Theano's identifiers: base 26 with A as the zero)."""
    digits = ""
    while True:
        number, remainder = divmod(number, 26)
        digits = chr(ord("A") + remainder) + digits
        if number == 0:
            return digits


@dataclass
class _DebugPrinter:
    depth: int
    print_type: bool
    ids: str
    stop_on_name: bool
    done: dict[Any, str]
    order: dict[int, int]
    out: IO[str]

    def id_str(self, key: Any, obj: Any) -> str:
        """The identifier of an apply node (keyed by itself) or a leaf (its SSA value)."""
        if key in self.done:
            return self.done[key]
        if self.ids == "id":
            text = f"[id {id(obj)}]"
        elif self.ids == "int":
            text = f"[id {len(self.done)}]"
        elif self.ids == "CHAR":
            text = f"[id {_char_from_number(len(self.done))}]"
        elif self.ids == "":
            text = ""
        else:
            raise ValueError(f"debugprint: ids must be 'CHAR', 'int', 'id' or '', got {self.ids!r}")
        self.done[key] = text
        return text

    def type_str(self, var: Variable) -> str:
        return f" <{var.type}>" if self.print_type else ""

    def print(self, root: Variable) -> None:
        # (variable, prefix of its line, prefix of its inputs' lines, depth left)
        stack: list[tuple[Variable, str, str, int]] = [(root, "", "", self.depth)]
        while stack:
            var, prefix, prefix_child, depth = stack.pop()
            if depth == 0:
                continue
            node = var.owner
            if node is None:
                line = f"{prefix}{var} {self.id_str(var.value, var.value)}{self.type_str(var)}"
                self.out.write(line.rstrip() + "\n")
                continue
            already_printed = node in self.done
            self.out.write(self.apply_line(var, node, prefix) + "\n")
            if already_printed or (self.stop_on_name and var.name is not None):
                continue
            inputs = node.inputs
            for k in reversed(range(len(inputs))):
                last = k == len(inputs) - 1
                child_prefix = prefix_child + ("  " if last else " |")
                stack.append((inputs[k], prefix_child + " |", child_prefix, depth - 1))

    def apply_line(self, var: Variable, node: Apply, prefix: str) -> str:
        outputs = node.ir_op.results
        idx = "" if len(outputs) == 1 else f".{var.index}"
        order = self.order.get(id(node.ir_op))
        o = "" if order is None else str(order)
        name = var.name if var.name is not None else ""
        id_str = self.id_str(node, node.ir_op)
        # Theano's layout: op, id, type, name, destroy map, view map, position.
        line = f"{prefix}{node.op}{idx} {id_str}{self.type_str(var)} '{name}'   {o}"
        return line.rstrip()


def debugprint(
    obj: Any,
    depth: int = -1,
    print_type: bool = False,
    file: Any = None,
    ids: str = "CHAR",
    stop_on_name: bool = False,
    done: dict[Any, str] | None = None,
    print_storage: bool = False,
) -> Any:
    """Print a graph as text, one line per variable (Theano's `debugprint`).

    `obj`: a Variable, an Apply, a list of variables, a `Function` (its optimized graph
    `f.maker.fgraph`, each node followed by its position in the execution order) or a
    `FunctionGraph`. `depth`: how many levels to print (-1: all). `print_type`: append
    each variable's type. `file`: None prints to stdout, `"str"` returns the text, any
    other value is a file to write to (and is returned). `ids`: `"CHAR"` (`[id A]`),
    `"int"` (`[id 0]`), `"id"` (the Python id) or `""` (none). `stop_on_name`: do not
    print the inputs of a named variable. `done`: a dict shared between calls, so that
    what one call printed is referenced by identifier in the next. `print_storage` is
    accepted; compiled functions keep no storage between calls, so there is none to show.

    A node reached a second time is printed again with the same identifier and without
    its inputs. Lines carry no trailing spaces (Theano's had some).
    """
    del print_storage  # no storage map: every call allocates fresh outputs
    roots, order, _ = _roots(obj)
    out: IO[str] = io.StringIO() if file in (None, "str") else file
    printer = _DebugPrinter(
        depth,
        print_type,
        ids,
        stop_on_name,
        done if done is not None else {},
        {id(node.ir_op): i for i, node in enumerate(order)},
        out,
    )
    for root in roots:
        printer.print(root)
    if file == "str":
        assert isinstance(out, io.StringIO)
        return out.getvalue()
    if file is None:
        assert isinstance(out, io.StringIO)
        sys.stdout.write(out.getvalue())
        sys.stdout.flush()
        return None
    return file


# --- pp ----------------------------------------------------------------------------

_GREEK = {name: "\\" + name for name in ("alpha", "beta", "gamma", "delta", "epsilon")}
"""Theano's pretty printer writes these input names as LaTeX (its ascii mode)."""

_OPERATORS: dict[type[Operation], str] = {
    ag.AddOp: "+",
    ag.SubOp: "-",
    ag.MulOp: "*",
    ag.DivOp: "/",
    ag.FloorDivOp: "//",
    ag.ModOp: "%",
    ag.PowOp: "**",
    ag.DotOp: "\\dot",
}
"""Ops printed as parenthesized infix operators (Theano parenthesizes every one)."""

_FUNCTION_NAMES = {
    "abs": "abs_",
    "ne": "neq",
    "select": "switch",
    "roundeven": "round_half_to_even",
}
"""Elementwise ops printed as `name(args)` under Theano's name where it differs."""

_REDUCTIONS: dict[type[Operation], str] = {
    ag.ReduceSumOp: "sum",
    ag.ReduceProdOp: "prod",
    ag.ReduceMaxOp: "max",
    ag.ReduceMinOp: "min",
}


def _leaf_string(value: SSAValue) -> str:
    var = variable_of(value)
    if var.name in _GREEK:
        return _GREEK[var.name]
    return str(var)


def _pp_dimshuffle(op: Operation, args: list[str]) -> str:
    """Theano's DimShufflePrinter: leading new axes are invisible, the identity is the
    input itself, the reversal is `.T`, anything else `DimShuffle{...}(x)`."""
    assert isinstance(op, ag.DimShuffleOp)
    pattern = list(op.pattern_list)
    while pattern and pattern[0] == ag.NEWAXIS:
        pattern.pop(0)
    rank = len(ag.tensor_type(op.operands[0]).get_shape())
    if pattern == list(range(rank)):
        return args[0]
    if pattern == list(reversed(range(rank))):
        return f"{args[0]}.T"
    return f"{op_view(op)}({args[0]})"


def _pp_reduce(op: Operation, args: list[str]) -> str:
    assert isinstance(op, ag.ReduceOp)
    name = _REDUCTIONS[type(op)]
    axes = tuple(op.axes_list)
    rank = len(ag.tensor_type(op.operands[0]).get_shape())
    if sorted(axes) == list(range(rank)):
        return f"{name}({args[0]})"
    return f"{name}{{{','.join(map(str, axes))}}}({args[0]})"


def _index_text(op: ag.SubtensorBase, dynamic: list[str]) -> str:
    """The op's index expression with each symbolic entry replaced by its input."""
    pieces = op.describe().split("?")
    if len(pieces) != len(dynamic) + 1:
        return op.describe()
    text = pieces[0]
    for value, piece in zip(dynamic, pieces[1:], strict=True):
        text += value + piece
    return text


def _pp_subtensor(op: Operation, args: list[str]) -> str:
    assert isinstance(op, ag.SubtensorBase)
    if isinstance(op, ag.SetSubtensorOp | ag.IncSubtensorOp):
        kind = "set" if isinstance(op, ag.SetSubtensorOp) else "inc"
        return f"{kind}_subtensor({args[0]}{_index_text(op, args[2:])}, {args[1]})"
    return f"{args[0]}{_index_text(op, args[1:])}"


def _pp_advanced(op: Operation, args: list[str]) -> str:
    if isinstance(op, ag.AdvancedSubtensorOp):
        return f"{args[0]}[{', '.join(args[1:])}]"
    kind = "set" if isinstance(op, ag.AdvancedSetSubtensorOp) else "inc"
    return f"{kind}_subtensor({args[0]}[{', '.join(args[2:])}], {args[1]})"


def _pp_cast(op: Operation, args: list[str]) -> str:
    return f"convert_to_{variable_of(op.results[0]).dtype}({args[0]})"


def _pp_dim(op: Operation, args: list[str]) -> str:
    assert isinstance(op, ag.DimOp)
    return f"{args[0]}.shape[{op.axis_value}]"


def _pp_join(op: Operation, args: list[str]) -> str:
    assert isinstance(op, ag.ConcatenateOp)
    return f"join({op.axis_value}, {', '.join(args)})"


_SPECIAL: dict[type[Operation], Callable[[Operation, list[str]], str]] = {
    ag.DimShuffleOp: _pp_dimshuffle,
    **{cls: _pp_reduce for cls in _REDUCTIONS},
    ag.SubtensorOp: _pp_subtensor,
    ag.SetSubtensorOp: _pp_subtensor,
    ag.IncSubtensorOp: _pp_subtensor,
    ag.AdvancedSubtensorOp: _pp_advanced,
    ag.AdvancedSetSubtensorOp: _pp_advanced,
    ag.AdvancedIncSubtensorOp: _pp_advanced,
    ag.CastOp: _pp_cast,
    ag.DimOp: _pp_dim,
    ag.ConcatenateOp: _pp_join,
}


def _pp_op(op: Operation, args: list[str]) -> str:
    operator = _OPERATORS.get(type(op))
    if operator is not None:
        return f"({f' {operator} '.join(args)})"
    if isinstance(op, ag.NegOp):
        return f"(-{args[0]})"
    special = _SPECIAL.get(type(op))
    if special is not None:
        return special(op, args)
    if isinstance(op, ag.BinaryElementwiseOp | ag.UnaryElementwiseOp | ag.SelectOp):
        short = op.name.removeprefix("ag.")
        return f"{_FUNCTION_NAMES.get(short, short)}({', '.join(args)})"
    return f"{op_view(op)}({', '.join(args)})"


def pp(var: Any) -> str:
    """A variable as an infix expression (Theano's `pp`): `((x + y) * TensorConstant{2})`.

    Arithmetic prints as parenthesized operators (`+ - * / // % **`, unary `-`, `dot` as
    `\\dot`), elementwise functions by name (`exp(x)`, `switch(c, a, b)`), full reductions
    as `sum(x)` and partial ones as `sum{0}(x)`, transposes as `x.T`, broadcasting
    dimshuffles not at all, indexing as `x[1:3, i]`, `x.shape[0]`; any other op as its
    Theano string applied to its inputs (`Argmax{axis=(0,)}(x)`). Inputs print by name,
    constants as `TensorConstant{...}`. A shared subexpression is written out each time.
    """
    if _is_function(var) or _is_fgraph(var):
        roots, _, _ = _roots(var)
        return "\n".join(pp(r) for r in roots)
    if not isinstance(var, Variable):
        raise TypeError(f"pp expects a symbolic variable, got {type(var).__name__}")
    texts: dict[SSAValue, str] = {}
    for op in ancestors([var.value]):
        if isinstance(op, ag.ConstantOp):
            continue
        args = [texts[v] if v in texts else _leaf_string(v) for v in graph_operands(op)]
        text = _pp_op(op, args)
        for result in op.results:
            texts[result] = text
    return texts.get(var.value) or _leaf_string(var.value)


pprint = pp


class _ProcessPrinter:
    """Theano's printer objects: `printer.process(variable, pstate=None)` is its text."""

    def __init__(self, text: Callable[[Any], str], doc: str):
        self._text = text
        self.__doc__ = doc

    def process(self, output: Any, pstate: Any = None) -> str:
        return self._text(output)

    def __call__(self, output: Any) -> str:
        return self._text(output)


default_printer = _ProcessPrinter(pp, "Prints a variable's whole expression, as `pp`.")
leaf_printer = _ProcessPrinter(
    lambda v: v.name if getattr(v, "name", None) is not None else str(v),
    "Prints a variable as a leaf: its name, else its description.",
)


# --- min_informative_str, var_descriptor, hex_digest ------------------------------------
# Theano's versions recurse over the graph; these walk it with an explicit stack, so a deep
# graph cannot overflow Python's stack. Tags are given in the same (depth-first) order.


def _is_array(obj: Any) -> bool:
    return hasattr(obj, "__array__") and not isinstance(obj, Variable)


class _Tags:
    """Letter tags by identity: a variable is its IR value (the `Variable` objects of a
    graph's inputs are made when asked for, so their `id` says nothing); anything else
    is itself, kept alive so that its `id` stays its own."""

    def __init__(self) -> None:
        self._tags: dict[Any, str] = {}
        self._kept: list[Any] = []

    @staticmethod
    def _key(node: Any) -> Any:
        return ("value", node.value) if isinstance(node, Variable) else ("id", id(node))

    def get(self, node: Any) -> str | None:
        return self._tags.get(self._key(node))

    def new(self, node: Any) -> str:
        self._kept.append(node)
        tag = self._tags[self._key(node)] = _char_from_number(len(self._tags))
        return tag


def min_informative_str(obj: Any, indent_level: int = 0) -> str:
    """A short description of `obj`'s graph down to named variables and constants, one
    node per line with letter tags, for error messages (Theano's `min_informative_str`):
    `A. Elemwise{add}` then, one space deeper, `B. x` and `C. y`; a node met again is
    `<B>`."""
    tags = _Tags()
    lines = []
    stack = [(obj, indent_level)]
    while stack:
        node, level = stack.pop()
        indent = " " * level
        seen = tags.get(node)
        if seen is not None:
            lines.append(f"{indent}<{seen}>")
            continue
        tag = tags.new(node)
        owner = getattr(node, "owner", None)
        if _is_array(node):
            name = "<ndarray>"
        elif getattr(node, "name", None) is not None:
            name = node.name
        elif owner is not None:
            name = str(owner.op)
            stack.extend((i, level + 1) for i in reversed(owner.inputs))
        else:
            name = str(node)
        lines.append(f"{indent}{tag}. {name}")
    return "\n".join(lines)


def hex_digest(x: Any) -> str:
    """A short hash of the NumPy array `x`: sha256 of its bytes, with its strides and
    shape (Theano's `hex_digest`)."""
    import hashlib

    import numpy as np

    if not isinstance(x, np.ndarray):
        raise TypeError(f"hex_digest: expected a numpy.ndarray, got {type(x).__name__}")
    digest = hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest()
    strides = ",".join(str(stride) for stride in x.strides)
    return f"{digest}|strides=[{strides}]|shape=[{','.join(map(str, x.shape))}]"


def _descriptor_start(node: Any, tags: _Tags) -> str | list[Any]:
    """The text of a leaf or a node met before; for a new node with inputs, its frame
    `[node, tag, inputs left, input texts]`."""
    seen = tags.get(node)
    if seen is not None:
        return f"<{seen}>"
    tag = tags.new(node)
    owner = getattr(node, "owner", None)
    if _is_array(node):
        import hashlib

        import numpy as np

        array = np.asarray(node)
        strides = ",".join(str(stride) for stride in array.strides)
        digest = hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()
        return f"{tag}=<ndarray:strides=[{strides}],digest={digest}>"
    if owner is not None:
        return [node, tag, list(owner.inputs), []]
    return f"{tag}={node.name if getattr(node, 'name', None) is not None else node}"


def var_descriptor(obj: Any) -> str:
    """One line that says how `obj` is computed, without memory addresses:
    `A=Elemwise{add}(B=x,C=y)`; a node met again is `<B>` (Theano's `var_descriptor`).
    A variable with an owner is described by its computation, not its name."""
    tags = _Tags()
    root = _descriptor_start(obj, tags)
    if isinstance(root, str):
        return root
    stack = [root]
    while True:
        node, tag, todo, parts = stack[-1]
        if todo:
            child = _descriptor_start(todo.pop(0), tags)
            if isinstance(child, str):
                parts.append(child)
            else:
                stack.append(child)
            continue
        stack.pop()
        text = f"{tag}={node.owner.op}({','.join(parts)})"
        if not stack:
            return text
        stack[-1][3].append(text)


# --- pydotprint ----------------------------------------------------------------------

_COLOR_CODES = {
    "Scan": "yellow",
    "Shape_i": "brown",
    "IfElse": "magenta",
    "Elemwise": "#FFAABB",  # dark pink
    "Cast": "#FFAABB",
    "Subtensor": "#FFAAFF",  # purple
    "IncSubtensor": "#FFAAFF",
    "AdvancedSubtensor": "#FFAAFF",
    "AdvancedIncSubtensor": "#FFAAFF",
    "Alloc": "#FFAA22",  # orange
    "Output": "blue",
}
"""Theano's default fill colors of apply nodes, by op class name."""

_INPUT_COLOR = "green"
_SHARED_COLOR = "dodgerblue"
_CONSTANT_COLOR = "SpringGreen"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _cut(text: str, size: int) -> str:
    return text if len(text) <= size else text[: max(size - 3, 0)] + "..."


@dataclass
class _DotGraph:
    """The DOT text of a graph, built node by node."""

    compact: bool
    with_ids: bool
    high_contrast: bool
    colors: dict[str, str]
    max_label_size: int
    var_with_name_simple: bool
    lines: list[str] = field(default_factory=list)
    names: dict[Any, str] = field(default_factory=dict)

    def node(self, key: Any, prefix: str, label: str, shape: str, color: str | None) -> str:
        """The DOT name of `key`, declaring it the first time."""
        name = self.names.get(key)
        if name is not None:
            return name
        name = self.names[key] = f"{prefix}{len(self.names)}"
        attrs = [f"label={_quote(_cut(label, self.max_label_size))}", f"shape={shape}"]
        if color is not None and self.high_contrast:
            attrs.append(f"style=filled, fillcolor={_quote(color)}")
        elif color is not None:
            attrs.append(f"color={_quote(color)}")
        self.lines.append(f"  {name} [{', '.join(attrs)}];")
        return name

    def edge(self, src: str, dst: str, label: str) -> None:
        label = _cut(label, self.max_label_size)
        self.lines.append(f"  {src} -> {dst} [label={_quote(label)}];")

    def var_label(self, var: Variable) -> str:
        from arignote.graph import TensorConstant

        if var.name is not None:
            return var.name if self.var_with_name_simple else f"{var.name} {var.type}"
        if isinstance(var, TensorConstant):
            data = str(var.data).split("\n")[0]
            return f"val={data} {var.type}"
        return str(var.type)

    def leaf(self, var: Variable) -> str:
        from arignote.compile.sharedvalue import SharedVariable, shared_of
        from arignote.graph import TensorConstant

        if isinstance(var, TensorConstant):
            color = _CONSTANT_COLOR
        elif isinstance(var, SharedVariable) or shared_of(var.value) is not None:
            color = _SHARED_COLOR
        else:
            color = _INPUT_COLOR
        return self.node(var.value, "v", self.var_label(var), "box", color)

    def apply(self, node: Apply, position: int) -> str:
        label = str(node.op).replace(":", "_")
        if self.with_ids:
            label += f" id={position}"
        color = self.colors.get(type(node.op).__name__)
        return self.node(node.ir_op, "n", label, "ellipse", color)

    def source(self, outputs: list[Variable], nodes: list[Apply]) -> str:
        for position, node in enumerate(nodes):
            me = self.apply(node, position)
            inputs = node.inputs
            for k, inp in enumerate(inputs):
                label = str(inp.type) if len(inputs) == 1 else f"{k} {inp.type}"
                self.edge(self.producer(inp), me, label)
        for i, var in enumerate(outputs):
            label = var.name if var.name is not None else f"out[{i}]"
            if not self.var_with_name_simple:
                label += f" {var.type}"
            dst = self.node(("output", i), "o", label, "box", self.colors.get("Output"))
            owner = var.owner
            src = self.leaf(var) if owner is None else self.names[owner.ir_op]
            self.edge(src, dst, str(var.type))
        return "digraph G {\n  graph [ordering=in];\n" + "\n".join(self.lines) + "\n}\n"

    def producer(self, var: Variable) -> str:
        """The DOT node an input edge starts from: the producing apply node in compact
        mode (an unnamed intermediate variable is drawn as the edge itself), else the
        variable's own box."""
        owner = var.owner
        if owner is None:
            return self.leaf(var)
        src = self.names[owner.ir_op]
        if self.compact and var.name is None:
            return src
        key = ("var", var.value)
        if key not in self.names:
            box = self.node(key, "v", self.var_label(var), "box", None)
            self.edge(src, box, str(var.type))
        return self.names[key]


def _graph_of(fct: Any) -> tuple[list[Variable], list[Apply]]:
    """The outputs and the apply nodes (in topological order) to draw."""
    roots, order, fgraph = _roots(fct)
    if fgraph is not None:
        return roots, order
    nodes = [Apply(op) for op in ancestors([v.value for v in roots])]
    return roots, [n for n in nodes if not isinstance(n.ir_op, ag.ConstantOp)]


def dot_source(
    fct: Any,
    compact: bool = True,
    with_ids: bool = False,
    high_contrast: bool = True,
    colorCodes: dict[str, str] | None = None,  # noqa: N803 - Theano's name
    max_label_size: int = 70,
    var_with_name_simple: bool = False,
) -> str:
    """The DOT text `pydotprint` draws (needs neither pydot nor graphviz).

    Apply nodes are ellipses labelled with their op (colored by op class, see
    `colorCodes`); inputs are green boxes, shared variables blue, constants spring
    green; outputs are blue boxes. An edge into an apply node is labelled with the
    input's position and type. `compact=True` draws an unnamed intermediate variable as
    the edge between two apply nodes, `compact=False` as a box of its own.
    """
    colors = dict(_COLOR_CODES if colorCodes is None else colorCodes)
    graph = _DotGraph(
        compact, with_ids, high_contrast, colors, max_label_size, var_with_name_simple
    )
    outputs, nodes = _graph_of(fct)
    return graph.source(outputs, nodes)


class GraphvizUnavailableError(ImportError):
    """pydot (or the graphviz Python package) or graphviz's `dot` program is missing."""


_INSTALL_HINT = (
    "install the Python side with `pip install arignote[graphviz]` (pydot) and graphviz's "
    "`dot` program with your system's package manager (`apt-get install graphviz`, "
    "`brew install graphviz`, `conda install graphviz`); `pydotprint(..., format='dot')` "
    "and `arignote.printing.dot_source` need neither"
)


def _PydotSource(pydot: Any, source: str) -> Any:  # noqa: N802 - a class, made lazily
    """A `pydot.Dot` whose text is `source` (pydot's parser would only rebuild it)."""

    class Source(pydot.Dot):  # type: ignore[misc,name-defined]
        def to_string(self, *args: Any, **kwargs: Any) -> str:
            return source

    return Source()


def _render(source: str, format: str) -> bytes:
    """`source` rendered by graphviz's `dot` into `format`, through pydot or graphviz."""
    try:
        import pydot
    except ImportError:
        pydot = None
    if pydot is None:
        try:
            import graphviz
        except ImportError:
            raise GraphvizUnavailableError(
                f"pydotprint needs pydot or the graphviz Python package: {_INSTALL_HINT}"
            ) from None
    if shutil.which("dot") is None:
        raise GraphvizUnavailableError(
            f"pydotprint needs graphviz's `dot` program on the PATH: {_INSTALL_HINT}"
        )
    if pydot is not None:
        data = _PydotSource(pydot, source).create(prog="dot", format=format)
    else:
        data = graphviz.Source(source).pipe(format=format)
    assert isinstance(data, bytes)
    return data


def _default_outfile(format: str) -> str:
    from arignote.configuration import config

    directory = os.path.expanduser(str(config.compiledir))
    os.makedirs(directory, exist_ok=True)
    return os.path.join(directory, f"arignote.pydotprint.cpu.{format}")


def pydotprint(
    fct: Any,
    outfile: str | None = None,
    compact: bool = True,
    format: str = "png",
    with_ids: bool = False,
    high_contrast: bool = True,
    cond_highlight: Any = None,
    colorCodes: dict[str, str] | None = None,  # noqa: N803 - Theano's name
    max_label_size: int = 70,
    scan_graphs: bool = False,
    var_with_name_simple: bool = False,
    print_output_file: bool = True,
    return_image: bool = False,
) -> Any:
    """Draw a graph with graphviz (Theano's `pydotprint`).

    `fct`: a `Function` (its optimized graph), a `FunctionGraph`, a variable or a list
    of variables. `format`: any format of graphviz's `dot` (`png`, `svg`, `pdf`, ...),
    or `"dot"` for the DOT text itself, which needs nothing installed. The image is
    written to `outfile` (default: `arignote.pydotprint.cpu.<format>` in
    `config.compiledir`), or returned as bytes (a str for `"dot"`) with
    `return_image=True`. Rendering needs pydot (`pip install arignote[graphviz]`) or the
    graphviz Python package, and graphviz's `dot` program; without them it raises
    `GraphvizUnavailableError` (an ImportError) saying how to install them.
    `cond_highlight` and `scan_graphs` are accepted and have no effect: IfElse and Scan
    nodes are drawn like any other node, their branches and inner graphs not at all.
    """
    del cond_highlight, scan_graphs
    source = dot_source(
        fct, compact, with_ids, high_contrast, colorCodes, max_label_size, var_with_name_simple
    )
    image: str | bytes = source if format == "dot" else _render(source, format)
    if return_image:
        return image
    if outfile is None:
        outfile = _default_outfile(format)
    mode = "w" if isinstance(image, str) else "wb"
    with open(outfile, mode) as f:
        f.write(image)
    if print_output_file:
        print("The output file is available at", outfile)
    return None


# --- the IR of a compiled function at each stage --------------------------------------

IR_STAGES = ("emitted", "optimized", "loops", "llvm-dialect", "llvm")
"""The stages `dump_ir` shows: the `func.func` of `ag` ops `function()` emitted, the same
after the mode's graph pipeline, after `ag-to-loops` (scf loops over memrefs), after the
LLVM lowering (the `llvm` dialect), and the LLVM IR text handed to llvmlite."""


def dump_ir(fn: Any, stage: str = "optimized", debuginfo: bool = False) -> str:
    """The IR text of the compiled function `fn` at `stage` (one of `IR_STAGES`).

    The later stages lower a copy of the optimized module, as the native backend does,
    whatever the function's linker. `debuginfo=True` prints each op's location, the
    user's source line that built it (`loc("prog.py":12:0)`), in the MLIR stages.
    """
    if stage not in IR_STAGES:
        raise ValueError(f"dump_ir: unknown stage {stage!r}; the stages are {', '.join(IR_STAGES)}")
    if not _is_function(fn):
        raise TypeError(f"dump_ir expects a compiled Function, got {type(fn).__name__}")
    compiled = fn._compiled
    text = _with_locations if debuginfo else str
    if stage == "emitted":
        return text(compiled.module)
    if stage == "optimized":
        return text(compiled.optimized)
    from arignote.compile.mode import loops_pipeline
    from arignote.lowering.driver import apply_pipeline, lower_to_llvm, make_context

    module = compiled.optimized.clone()
    if stage == "loops":
        apply_pipeline(make_context(), module, loops_pipeline())
        return text(module)
    lowered = lower_to_llvm(module, loops_pipeline=loops_pipeline()).module
    if stage == "llvm-dialect":
        return text(lowered)
    from arignote.runtime.cpu import llvm_ir_text

    return llvm_ir_text(lowered)


def _with_locations(module: Any) -> str:
    from xdsl.printer import Printer

    out = io.StringIO()
    Printer(stream=out, print_debuginfo=True).print_op(module)
    return out.getvalue()


# --- Print -----------------------------------------------------------------------------


class Print:
    """Theano's `Print` op: `Print(message, attrs)(x)` is `x`, and each time the compiled
    function computes it, it prints `message attr = value` for each attribute of `attrs`
    (attributes or no-argument methods of the NumPy array: `__str__`, `shape`, `sum`...).

    The value is printed by the reference interpreter as it runs the node, and by native
    code through a callback into Python, only when the node runs. Two prints are never
    merged into one, and a print whose result no output uses is not part of the
    function. The gradient passes through unchanged (and is not printed).

    `global_fn(op, value)`, when given, is called instead of printing (as in Theano):
    `op` is this `Print`, `value` a copy of the array. An exception raised while printing
    or by `global_fn` propagates out of the call of the compiled function, and the call
    stores no update (natively compiled code runs on to its end first, showing no
    further prints, and never computes an update in place when it has a print).

    ```python
    x = T.dvector("x")
    f = arignote.function([x], Print("x")(x) * 2)
    f([1, 2])  # prints: x __str__ = [1. 2.]
    ```
    """

    def __init__(
        self,
        message: str = "",
        attrs: tuple[str, ...] | list[str] = ("__str__",),
        global_fn: Callable[[Print, Any], object] | None = None,
    ):
        import numpy as np

        if not isinstance(message, str):
            raise TypeError(f"Print: message must be a string, got {type(message).__name__}")
        if isinstance(attrs, str) or not all(isinstance(a, str) for a in attrs):
            raise TypeError(f"Print: attrs must be a sequence of strings, got {attrs!r}")
        for attr in attrs:
            if not attr.isidentifier() or not hasattr(np.ndarray, attr):
                raise ValueError(
                    f"Print: attrs: {attr!r} is not an attribute of numpy.ndarray "
                    "(e.g. '__str__', 'shape', 'sum')"
                )
        if global_fn is not None and not callable(global_fn):
            raise TypeError(
                f"Print: global_fn must be a function called as global_fn(op, value), "
                f"got {global_fn!r}"
            )
        self.message = message
        self.attrs = tuple(attrs)
        self.global_fn = global_fn
        self._hook: int | None = None

    def __call__(self, x: Any) -> Variable:
        from arignote.graph import apply_op
        from arignote.tensor.basic import as_tensor_variable

        var = as_tensor_variable(x)
        return apply_op(ag.PrintOp(var.value, self.message, self.attrs, self._hook_id()))

    def _hook_id(self) -> int | None:
        """The runtime's id of `global_fn` bound to this op (registered once, kept for
        the process: graphs refer to it by id); None without a `global_fn`."""
        if self.global_fn is None:
            return None
        if self._hook is None:
            from arignote.runtime.printing import register_hook

            self._hook = register_hook(functools.partial(self.global_fn, self))
        return self._hook

    def __repr__(self) -> str:
        return f"Print{{message={self.message!r}, attrs={self.attrs!r}}}"


def register_prints(module: Any) -> Any:
    """Give every `ag.print` of `module` a callback id of the native print callback
    (`arignote.runtime.printing`), in place; returns `module`."""
    from xdsl.dialects.builtin import IntegerAttr, i64

    from arignote.runtime.dtypes import numpy_dtype
    from arignote.runtime.printing import register_print

    for op in module.walk():
        if not isinstance(op, ag.PrintOp):
            continue
        t = ag.tensor_type(op.input)
        dtype, rank = numpy_dtype(t.element_type), t.get_num_dims()
        ident = register_print(op.message.data, op.attrs_list, dtype, rank, op.hook_id)
        op.callback = IntegerAttr(ident, i64)
    return module
