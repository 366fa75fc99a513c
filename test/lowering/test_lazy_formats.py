"""Ops' declarative assembly formats are parsed on first use (`arignote.dialects.lazy_formats`),
not when their dialect is imported; printing and parsing IR text work as before."""

from __future__ import annotations

import subprocess
import sys

import pytest
from xdsl.context import Context
from xdsl.dialects import arith, builtin, func
from xdsl.irdl import declarative_assembly_format as formats
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError

import arignote  # noqa: F401  (installs the lazy formats)
from arignote.dialects import lazy_formats


def test_formats_are_lazy_after_import():
    assert lazy_formats.install()
    program = formats.FormatProgram.from_str("$lhs `,` $rhs attr-dict `:` type($result)", None)
    assert isinstance(program, lazy_formats.LazyFormat)


def test_ops_print_and_parse_through_their_formats():
    text = """
    func.func @f(%a: i64, %b: i64) -> i64 {
      %c = arith.addi %a, %b : i64
      %d = arith.muli %c, %c overflow<nsw> : i64
      func.return %d : i64
    }
    """
    ctx = Context()
    for dialect in (builtin.Builtin, func.Func, arith.Arith):
        ctx.load_dialect(dialect)
    module = Parser(ctx, text).parse_module()
    printed = str(module)
    assert "arith.addi %a, %b : i64" in printed.replace("%0", "%c")
    assert str(Parser(ctx, printed).parse_module()) == printed


def test_a_broken_format_raises_on_first_use():
    """A format with an error raises when first used (at import, it did before)."""
    from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def

    @irdl_op_definition
    class Broken(IRDLOperation):
        name = "test.broken"
        x = operand_def()
        assembly_format = "$x `:` $nothing attr-dict"

    with pytest.raises(ParseError):
        Broken.get_irdl_definition()  # (defined without parsing the format)
        Broken.print(Broken.__new__(Broken), None)


def test_import_arignote_defines_no_dialect_before_the_patch():
    """The patch is installed in `arignote/__init__.py` before any op class is defined:
    in a new process, the `llvm` dialect's formats are lazy."""
    code = (
        "import arignote, arignote.tensor\n"
        "from xdsl.dialects import llvm\n"
        "from arignote.dialects.lazy_formats import LazyFormat\n"
        "cell = [c.cell_contents for c in llvm.ReturnOp.print.__closure__ or ()]\n"
        "print(any(isinstance(c, LazyFormat) for c in cell))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_a_native_function_imports_no_interpreter():
    """A first `function()` on the native linker imports neither xDSL's interpreter nor
    `DebugMode`'s and `MonitorMode`'s modules (`arignote.compile` loads them on first
    use), which stay reachable as before."""
    code = (
        "import sys, numpy as np, arignote, arignote.tensor as T\n"
        "x = T.dvector('x')\n"
        "arignote.function([x], x * 2)(np.ones(2))\n"
        "print(sorted(m for m in ('xdsl.interpreter', 'arignote.compile.debugmode',\n"
        "    'arignote.compile.monitoring') if m in sys.modules))\n"
        "from arignote.compile import DebugMode, MonitorMode\n"
        "print(DebugMode.__name__, MonitorMode.__name__, arignote.DebugMode is DebugMode)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "DebugMode MonitorMode True"], out.stdout
