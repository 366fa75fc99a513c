#!/usr/bin/env python
"""Write docs/tensor_api_index.md: every name of docs/theano_names.txt, whether arignote
provides it under Theano's module path, and the tests that use it.

    python docs/make_tensor_api_index.py

A name is *supported* when `arignote.<module>.<name>` resolves (Theano's module path with
`theano` renamed; for a module arignote folds into its package, such as
`theano.scan_module.scan_views`, the package `arignote.scan_module`) and a test under
`test/` uses it. A test uses a name when its body reads `<something>.<name>`, other than
`np.<name>`/`numpy.<name>`/`math.<name>`, calls `<name>` imported from arignote, or
names it in a string to `getattr` or in its `parametrize` values, or reads a
module-level table of cases that names it, or calls a helper function of its file that
does; the
elementwise ops of `ag.TABLE` are covered by the tests that run every entry of the table. An
unsupported name carries its reason from `WHY_NOT` below; `test/docs/test_tensor_api_index.py`
fails when the page is stale, when an unsupported name has no reason, or when fewer than
`REQUIRED_FRACTION` of the names are supported.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAMES = ROOT / "docs" / "theano_names.txt"
PAGE = ROOT / "docs" / "tensor_api_index.md"
REQUIRED_FRACTION = 0.95
FOREIGN = {"np", "numpy", "math", "cmath", "pytest", "random", "os", "sys", "re"}

OP_CLASS = (
    "Theano's Op class behind a function; arignote's op is an `ag` operation, built by "
    "calling the function"
)
WHY_NOT: dict[str, str] = {
    "theano.tensor.TensorVariable.__div__": "Python 2's `/`; Python 3 calls `__truediv__`",
    "theano.tensor.basic.jv": "Bessel functions of real order: not built (j0, j1 are)",
    "theano.tensor.basic.iv": "modified Bessel functions of real order: not built (i0, i1 are)",
    "theano.tensor.elemwise.mul_without_zeros": "a scalar op of Theano's `CAReduce` "
    "machinery; `prod(x, no_zeros_in_input=True)` is the user-level form",
    "theano.tensor.shared_randomstreams.RandomVariable": "a name of the reference page only: "
    "Theano 1.0 has no such class; `RandomStreams` returns tensor variables with `.rng` and "
    "`.update`, as here",
    "theano.tensor.nnet.conv3d2d.get_diagonal_subtensor_view": "a helper of Theano's "
    "conv3d2d construction (3-d convolution from 2-d ones); arignote's `conv3d2d.conv3d` is "
    "one `ag.conv` over three spatial axes",
    "theano.tensor.nnet.conv3d2d.diagonal_subtensor": "the op of that construction (see "
    "`get_diagonal_subtensor_view`)",
    "theano.tensor.nnet.conv3d2d.inc_diagonal_subtensor": "the gradient op of that "
    "construction (see `get_diagonal_subtensor_view`)",
    "theano.tensor.nnet.ctc.ctc": "Theano's CTC calls the external warp-ctc library; arignote "
    "has no CTC loss yet",
    "theano.gradient.disconnected_type": "arignote's `DisconnectedType` wraps the variable "
    "that `grad` found disconnected; there is no disconnected variable to instantiate",
}
"""`module.name` -> why arignote does not provide it (shown on the page)."""


def read_names() -> list[tuple[str, str, str, str]]:
    """(module, name, kind, internal reason or "") per line of docs/theano_names.txt."""
    rows = []
    for line in NAMES.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        head, _, reason = line.partition(" internal: ")
        module, name, kind = head.split()
        rows.append((module, name, kind, reason))
    return rows


def arignote_module(theano_module: str) -> str:
    return "arignote" + theano_module.removeprefix("theano")


def resolve(theano_module: str, name: str) -> str | None:
    """The arignote path that provides `name`, or None.

    The longest importable prefix of `arignote.<module>` is imported and the rest read
    as attributes (`arignote.tensor.TensorVariable.sum`); a module arignote does not have
    falls back to its package (`theano.scan_module.scan_views` -> `arignote.scan_module`)."""
    parts = arignote_module(theano_module).split(".")
    for end in range(len(parts), 1, -1):
        try:
            module = importlib.import_module(".".join(parts[:end]))
        except ImportError:
            continue
        target: object = module
        for attribute in parts[end:]:
            target = getattr(target, attribute, None)
        if target is not None and hasattr(target, name):
            return ".".join([*parts, name])
        if hasattr(module, name):  # a module folded into its package
            return ".".join([*parts[:end], name])
        return None
    return None


def _arignote_imports(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("arignote"):
            names.update(alias.asname or alias.name for alias in node.names)
    return names


OPERATORS = {
    ast.Add: "__add__",
    ast.Sub: "__sub__",
    ast.Mult: "__mul__",
    ast.Div: "__truediv__",
    ast.FloorDiv: "__floordiv__",
    ast.Mod: "__mod__",
    ast.Pow: "__pow__",
    ast.MatMult: "__matmul__",
    ast.BitAnd: "__and__",
    ast.BitOr: "__or__",
    ast.BitXor: "__xor__",
    ast.Invert: "__invert__",
    ast.USub: "__neg__",
    ast.Lt: "__lt__",
    ast.LtE: "__le__",
    ast.Gt: "__gt__",
    ast.GtE: "__ge__",
}


def _operator_names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.BinOp | ast.UnaryOp):
        return [OPERATORS.get(type(node.op), "")]
    if isinstance(node, ast.Compare):
        return [OPERATORS.get(type(op), "") for op in node.ops]
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "abs":
        return ["__abs__"]
    return []


def _string_names(function: ast.FunctionDef) -> set[str]:
    """Names a test looks up by string: `getattr(module, "name")` and the string values
    of its `pytest.mark.parametrize` lists."""
    found = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "getattr":
            found.update(_strings(node.args[1:2]))
    for decorator in function.decorator_list:
        if isinstance(decorator, ast.Call) and getattr(decorator.func, "attr", "") == "parametrize":
            found.update(_strings(decorator.args[1:]))
    return {name for name in found if name.isidentifier()}


def _strings(nodes: list[ast.expr]) -> set[str]:
    return {
        n.value
        for node in nodes
        for n in ast.walk(node)
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }


def _used_names(function: ast.FunctionDef, imported: set[str]) -> set[str]:
    """The names a test reads; its operators count (as `__add__` ...) in a test that
    builds arignote graphs (reads `T.`, `arignote.` or a name imported from arignote)."""
    used: set[str] = _string_names(function)
    operators: set[str] = set()
    symbolic = False
    for node in ast.walk(function):
        operators.update(_operator_names(node))
        if isinstance(node, ast.Name) and node.id in ({"T", "arignote"} | imported):
            symbolic = True
        if isinstance(node, ast.Attribute):
            base = node.value
            if not (isinstance(base, ast.Name) and base.id in FOREIGN):
                used.add(node.attr)
        elif isinstance(node, ast.Name) and node.id in imported:
            used.add(node.id)
    return used | (operators - {""} if symbolic else set())


def _module_tables(tree: ast.Module, imported: set[str]) -> dict[str, set[str]]:
    """For each module-level variable of a test file (a table of cases), the names its
    value uses: attributes read (`T.tril` in a lambda) and identifier strings."""
    tables: dict[str, set[str]] = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        used = {
            n.value
            for n in ast.walk(node.value)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.isidentifier()
        }
        used |= {
            n.attr
            for n in ast.walk(node.value)
            if isinstance(n, ast.Attribute)
            and not (isinstance(n.value, ast.Name) and n.value.id in FOREIGN)
        }
        for target in targets:
            if isinstance(target, ast.Name):
                tables[target.id] = used
    return tables


def _with_helpers(test: ast.FunctionDef, helpers: dict[str, ast.FunctionDef]) -> list:
    """`test` and the module's helper functions it calls, directly or through others."""
    found, todo = [test], [test]
    while todo:
        for n in ast.walk(todo.pop()):
            helper = helpers.get(n.id) if isinstance(n, ast.Name) else None
            if helper is not None and helper not in found:
                found.append(helper)
                todo.append(helper)
    return found


def test_index() -> dict[str, list[str]]:
    """name -> the tests (`file::function`) that use it, in file order. A test that
    reads a module-level table of cases uses what the table names."""
    index: dict[str, list[str]] = defaultdict(list)
    for path in sorted((ROOT / "test").rglob("test_*.py")):
        tree = ast.parse(path.read_text())
        imported = _arignote_imports(tree)
        tables = _module_tables(tree, imported)
        helpers = {
            node.name: node
            for node in tree.body
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("test_")
        }
        relative = path.relative_to(ROOT).as_posix()
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                names = set()
                for function in _with_helpers(node, helpers):
                    names |= _used_names(function, imported)
                    for table in {n.id for n in ast.walk(function) if isinstance(n, ast.Name)}:
                        names |= tables.get(table, set())
                for decorator in node.decorator_list:
                    for n in ast.walk(decorator):
                        if isinstance(n, ast.Name):
                            names |= tables.get(n.id, set())
                for name in names:
                    index[name].append(f"{relative}::{node.name}")
    return index


TABLE_TESTS = "test/frontend/test_elementwise_table.py::"


def table_tests() -> dict[str, list[str]]:
    """The tests that run every entry of `ag.TABLE` (they look each op up by its name)."""
    from arignote.dialects import ag

    index: dict[str, list[str]] = {}
    for entry in ag.TABLE:
        if entry.result == "bool":
            test = "test_predicates_give_bools_as_numpy"
        elif entry.category == "integer":
            test = "test_bitwise_ops_and_operators_as_numpy"
        else:
            test = "test_float_values_and_special_values"
        for name in (entry.name, *entry.aliases):
            index[name] = [TABLE_TESTS + test]
    return index


def _test_link(test: str) -> str:
    path, _, function = test.partition("::")
    return f"[{Path(path).name}::{function}](../{path})"


def classify(rows: list, tests: dict[str, list[str]]) -> list[tuple]:
    """(module, name, kind, status, where, detail) per public (non-internal) name."""
    table = []
    for module, name, kind, internal in rows:
        if internal:
            table.append((module, name, kind, "internal", "", internal))
            continue
        where = resolve(module, name)
        covering = tests.get(name, [])
        if where and covering:
            table.append((module, name, kind, "yes", where, _test_link(covering[0])))
        elif where:
            table.append((module, name, kind, "untested", where, "no test uses it"))
        else:
            reason = WHY_NOT.get(f"{module}.{name}", "") or (OP_CLASS if kind == "opclass" else "")
            table.append((module, name, kind, "no", "", reason or "(no reason given)"))
    return table


def counted(table: list[tuple]) -> list[tuple]:
    """The names the percentage counts: public, and not an Op class."""
    return [row for row in table if row[3] != "internal" and row[2] != "opclass"]


def render(table: list[tuple]) -> str:
    public = [row for row in table if row[3] != "internal"]
    names = counted(table)
    supported = sum(row[3] == "yes" for row in names)
    op_classes = [row for row in public if row[2] == "opclass"]
    op_supported = sum(row[3] == "yes" for row in op_classes)
    lines = [
        "# Theano 1.0's API, name by name",
        "",
        "Every documented public name of the Theano modules that issues 13 and 14 name (the list:",
        "[theano_names.txt](theano_names.txt), extracted from Theano's sources by",
        "`docs/make_theano_names.py`), with where arignote provides it and the first test",
        "that uses it. Generated by `python docs/make_tensor_api_index.py`; the test suite",
        "fails when this page is stale. [tensor_api.md](tensor_api.md) says how each is built.",
        "",
        f"**{supported} of {len(names)} public functions, objects and classes supported "
        f"({100 * supported / len(names):.1f}%)**. Theano's Op classes (kind `opclass`, the",
        "class behind a function, such as `MatrixInverse` behind `matrix_inverse`) are",
        f"listed but not counted: {op_supported} of {len(op_classes)} are provided; a program",
        "calls the function, and arignote's op is the `ag` operation that `node.op` shows.",
        f"{len(table) - len(public)} more names are Theano's internals, listed at the end.",
        "",
    ]
    by_module: dict[str, list[tuple]] = defaultdict(list)
    for row in public:
        by_module[row[0]].append(row)
    for module, module_rows in by_module.items():
        lines += [f"## `{module}`", "", "| name | kind | supported | arignote | test or reason |"]
        lines.append("|---|---|---|---|---|")
        for _, name, kind, status, where, detail in module_rows:
            shown = f"`{where}`" if where else ""
            lines.append(f"| `{name}` | {kind} | {status} | {shown} | {detail} |")
        lines.append("")
    lines += ["## Theano's internals (not counted)", "", "| name | why |", "|---|---|"]
    for module, name, _, status, _, detail in table:
        if status == "internal":
            lines.append(f"| `{module}.{name}` | {detail} |")
    return "\n".join(lines) + "\n"


def build() -> tuple[str, list[tuple]]:
    table = classify(read_names(), {**test_index(), **table_tests()})
    return render(table), table


def main() -> None:
    text, _ = build()
    PAGE.write_text(text)
    print(next(line for line in text.splitlines() if "supported (" in line), file=sys.stderr)


if __name__ == "__main__":
    main()
