"""arignote.printing: debugprint, pp, pydotprint (DOT text and rendering) and dump_ir."""

from __future__ import annotations

import io
import re
import shutil
import sys

import pytest

import arignote
import arignote.tensor as T
from arignote import printing
from arignote.printing import debugprint, dot_source, pp, pydotprint


def _shared_subexpression() -> T.TensorVariable:
    x, y = T.dmatrix("x"), T.dmatrix("y")
    a = x + y
    z = (a * 2) / a
    z.name = "z"
    return z


# --- debugprint ------------------------------------------------------------------------


def test_debugprint_prints_a_shared_subexpression_once() -> None:
    assert debugprint(_shared_subexpression(), file="str") == (
        "Elemwise{div} [id A] 'z'\n"
        " |Elemwise{mul} [id B] ''\n"
        " | |Elemwise{add} [id C] ''\n"
        " | | |x [id D]\n"
        " | | |y [id E]\n"
        " | |TensorConstant{2.0} [id F]\n"
        " |Elemwise{add} [id C] ''\n"
    )


def test_debugprint_last_input_is_not_barred() -> None:
    x, w, b = T.dmatrix("x"), T.dvector("w"), T.dscalar("b")
    h = T.tanh(T.dot(x, w) + b)
    assert debugprint(h, file="str") == (
        "Elemwise{tanh} [id A] ''\n"
        " |Elemwise{add} [id B] ''\n"
        "   |Dot [id C] ''\n"
        "   | |x [id D]\n"
        "   | |w [id E]\n"
        "   |b [id F]\n"
    )


def test_debugprint_print_type() -> None:
    x = T.dvector("x")
    y = T.exp(x) + T.fscalar()
    assert debugprint(y, print_type=True, file="str") == (
        "Elemwise{add} [id A] <TensorType(float64, vector)> ''\n"
        " |Elemwise{exp} [id B] <TensorType(float64, vector)> ''\n"
        " | |x [id C] <TensorType(float64, vector)>\n"
        " |Cast{cast{float64}} [id D] <TensorType(float64, scalar)> ''\n"
        "   |<TensorType(float32, scalar)> [id E] <TensorType(float32, scalar)>\n"
    )


def test_debugprint_function_prints_the_optimized_graph_in_order() -> None:
    x, y = T.dmatrix("x"), T.dmatrix("y")
    # Two separate `x + y` nodes: FAST_RUN's cse merges them in the compiled graph.
    z = (x + y).sum() * (x + y).sum()
    fast_run = arignote.Mode(optimizer="fast_run")
    fused = arignote.function([x, y], z, mode=fast_run)
    assert debugprint(fused, file="str") == (
        "Elemwise{mul} [id A] ''   1\n"
        " |Sum{axis=(0, 1),Composite{add}} [id B] ''   0\n"
        " | |x [id C]\n"
        " | |y [id D]\n"
        " |Sum{axis=(0, 1),Composite{add}} [id B] ''   0\n"
    )
    f = arignote.function([x, y], z, mode=fast_run.excluding("fusion"))
    expected = (
        "Elemwise{mul} [id A] ''   2\n"
        " |Sum{axis=(0, 1)} [id B] ''   1\n"
        " | |Elemwise{add} [id C] ''   0\n"
        " |   |x [id D]\n"
        " |   |y [id E]\n"
        " |Sum{axis=(0, 1)} [id B] ''   1\n"
    )
    assert debugprint(f, file="str") == expected
    assert debugprint(f.maker.fgraph, file="str") == expected
    # The graph as written has both additions.
    assert debugprint(z, file="str").count("Elemwise{add}") == 2


def test_debugprint_function_with_updates_prints_every_output() -> None:
    w = arignote.shared(0.0, name="w")
    x = T.dscalar("x")
    f = arignote.function([x], x * 2, updates=[(w, w + x)], mode="FAST_COMPILE")
    text = debugprint(f, file="str")
    assert text.splitlines()[0].startswith("Elemwise{mul} [id A] ''")
    assert "Elemwise{add}" in text and " |w [id" in text


def test_debugprint_ids_depth_and_stop_on_name() -> None:
    z = _shared_subexpression()
    assert debugprint(z, ids="int", file="str").splitlines()[:2] == [
        "Elemwise{div} [id 0] 'z'",
        " |Elemwise{mul} [id 1] ''",
    ]
    assert debugprint(z, ids="", file="str").splitlines()[-1] == " |Elemwise{add}  ''"
    assert f"[id {id(z.owner.ir_op)}]" in debugprint(z, ids="id", file="str")
    assert debugprint(z, depth=2, file="str") == (
        "Elemwise{div} [id A] 'z'\n |Elemwise{mul} [id B] ''\n |Elemwise{add} [id C] ''\n"
    )
    assert debugprint(z, depth=0, file="str") == ""
    assert debugprint(z, stop_on_name=True, file="str") == "Elemwise{div} [id A] 'z'\n"
    with pytest.raises(ValueError, match="ids must be"):
        debugprint(z, ids="hex", file="str")


def test_debugprint_done_is_shared_between_calls() -> None:
    x = T.dvector("x")
    a = T.exp(x)
    done: dict = {}
    first = debugprint(a, done=done, file="str")
    second = debugprint(a * 2, done=done, file="str")
    assert first == "Elemwise{exp} [id A] ''\n |x [id B]\n"
    assert second == (
        "Elemwise{mul} [id C] ''\n |Elemwise{exp} [id A] ''\n |TensorConstant{2.0} [id D]\n"
    )


def test_debugprint_accepts_applies_lists_and_files(capsys: pytest.CaptureFixture[str]) -> None:
    x = T.dvector("x")
    y = -x
    assert debugprint(y.owner, file="str") == "Elemwise{neg} [id A] ''\n |x [id B]\n"
    assert debugprint([y, x], file="str") == "Elemwise{neg} [id A] ''\n |x [id B]\nx [id B]\n"
    out = io.StringIO()
    assert debugprint(y, file=out) is out
    assert out.getvalue() == "Elemwise{neg} [id A] ''\n |x [id B]\n"
    assert debugprint(y) is None
    assert capsys.readouterr().out == "Elemwise{neg} [id A] ''\n |x [id B]\n"
    assert debugprint(x, file="str") == "x [id A]\n"
    with pytest.raises(TypeError, match="cannot print an object"):
        debugprint(42)


def test_debugprint_deep_graph_needs_no_recursion() -> None:
    x = T.dscalar("x")
    y = x
    n = sys.getrecursionlimit() + 500
    for _ in range(n):
        y = y + 1
    lines = debugprint(y, file="str").splitlines()
    assert len(lines) == 2 * n + 1
    assert lines[0] == "Elemwise{add} [id A] ''"
    assert lines[1] == " |Elemwise{add} [id B] ''"
    assert lines[n] == " |" * n + "x [id " + printing._char_from_number(n) + "]"
    last = printing._char_from_number(2 * n)
    assert lines[-1] == f" |TensorConstant{{1.0}} [id {last}]"
    assert len(pp(y)) > 10 * n


def test_identifiers_continue_past_z() -> None:
    assert [printing._char_from_number(n) for n in (0, 1, 25, 26, 27, 26 * 26)] == [
        "A",
        "B",
        "Z",
        "BA",
        "BB",
        "BAA",
    ]


# --- pp --------------------------------------------------------------------------------


def test_pp_arithmetic() -> None:
    x, y = T.dmatrix("x"), T.dmatrix("y")
    assert pp((x + y) * 2) == "((x + y) * TensorConstant{2.0})"
    assert pp(_shared_subexpression()) == "(((x + y) * TensorConstant{2.0}) / (x + y))"
    assert pp(x - y // 2 % 3) == "(x - ((y // TensorConstant{2.0}) % TensorConstant{3.0}))"
    assert pp(-(x**y)) == "(-(x ** y))"
    assert pp(x) == "x"


def test_pp_functions_reductions_and_shapes() -> None:
    x, y = T.dmatrix("x"), T.dmatrix("y")
    assert pp(T.exp(x).sum()) == "sum(exp(x))"
    assert pp(x.sum(axis=0)) == "sum{0}(x)"
    assert pp(x.max(axis=1)) == "max{1}(x)"
    assert pp(T.dot(x, y.T)) == "(x \\dot y.T)"
    assert pp(T.switch(x > 0, x, y)) == "switch(gt(x, TensorConstant{0.0}), x, y)"
    assert pp(abs(x) + T.tanh(y)) == "(abs_(x) + tanh(y))"
    assert pp(x + T.dvector("v")) == "(x + v)"  # the broadcasting dimshuffle is invisible
    assert pp(T.dtensor3("t").dimshuffle(2, 0, 1)) == "DimShuffle{2,0,1}(t)"
    assert pp(x.astype("float32")) == "convert_to_float32(x)"
    assert pp(x.shape[0]) == "x.shape[0]"
    assert pp(x.argmax(axis=0)) == "Argmax{axis=(0,)}(x)"


def test_pp_indexing() -> None:
    x = T.dmatrix("x")
    i = T.lscalar("i")
    assert pp(x[1:3, 0]) == "x[1:3, 0]"
    assert pp(x[i, ::2]) == "x[i, ::2]"
    assert pp(x[T.lvector("idx")]) == "x[idx]"
    assert pp(T.set_subtensor(x[i], T.dvector("v"))) == "set_subtensor(x[i, :], v)"
    assert pp(T.concatenate([x, x], axis=1)) == "join(1, x, x)"


def test_pp_names_and_functions() -> None:
    alpha = T.dscalar("alpha")
    assert pp(alpha * 2) == "(\\alpha * TensorConstant{2.0})"
    x = T.dvector("x")
    f = arignote.function([x], [x + 1, T.exp(x)], mode="FAST_COMPILE")
    assert pp(f) == "(x + TensorConstant{1.0})\nexp(x)"
    assert printing.pprint is pp
    with pytest.raises(TypeError, match="pp expects"):
        pp("x")


# --- pydotprint ------------------------------------------------------------------------


def _small_function() -> arignote.Function:
    x, y = T.dmatrix("x"), T.dmatrix("y")
    return arignote.function([x, y], (x + y) * 2, mode="FAST_COMPILE")


def test_dot_source_of_a_function() -> None:
    assert dot_source(_small_function()) == (
        "digraph G {\n"
        "  graph [ordering=in];\n"
        '  n0 [label="Elemwise{add}", shape=ellipse, style=filled, fillcolor="#FFAABB"];\n'
        '  v1 [label="x TensorType(float64, matrix)", shape=box, style=filled, '
        'fillcolor="green"];\n'
        '  v1 -> n0 [label="0 TensorType(float64, matrix)"];\n'
        '  v2 [label="y TensorType(float64, matrix)", shape=box, style=filled, '
        'fillcolor="green"];\n'
        '  v2 -> n0 [label="1 TensorType(float64, matrix)"];\n'
        '  n3 [label="Elemwise{mul}", shape=ellipse, style=filled, fillcolor="#FFAABB"];\n'
        '  n0 -> n3 [label="0 TensorType(float64, matrix)"];\n'
        '  v4 [label="val=2.0 TensorType(float64, scalar)", shape=box, style=filled, '
        'fillcolor="SpringGreen"];\n'
        '  v4 -> n3 [label="1 TensorType(float64, scalar)"];\n'
        '  o5 [label="out[0] TensorType(float64, matrix)", shape=box, style=filled, '
        'fillcolor="blue"];\n'
        '  n3 -> o5 [label="TensorType(float64, matrix)"];\n'
        "}\n"
    )


def test_dot_source_options() -> None:
    x, w = T.dmatrix("x"), T.dvector("w")
    d = T.dot(x, w)
    d.name = "d"
    h = T.tanh(d + 1)
    h.name = "h"
    compact = dot_source(h, var_with_name_simple=True)
    # A named intermediate variable gets a box; an unnamed one is only an edge.
    assert '[label="d", shape=box];' in compact
    assert 'label="h", shape=box, style=filled, fillcolor="blue"' in compact
    assert compact.count("shape=box") == 5  # x, w, d, the constant, the output h
    full = dot_source(h, compact=False)
    assert full.count("shape=box") == 6  # also the unnamed `d + 1`
    assert '"Elemwise{add} id=1"' in dot_source(h, with_ids=True)
    outline = dot_source(h, high_contrast=False, colorCodes={"Dot": "red"})
    assert 'shape=ellipse, color="red"' in outline and "style=filled" not in outline
    assert 'label="x Te...", shape=box' in dot_source(h, max_label_size=7)
    shared = arignote.shared(1.0, name="s")
    assert 'fillcolor="dodgerblue"' in dot_source(x * shared)
    assert dot_source([h, d]).count('fillcolor="blue"') == 2
    # Quotes and backslashes in labels are escaped.
    q = T.dscalar('a"b\\c')
    assert 'label="a\\"b\\\\c TensorType(float64, scalar)"' in dot_source(q + 1)


def test_pydotprint_dot_format_needs_no_graphviz(
    tmp_path: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    f = _small_function()
    out = tmp_path / "graph.dot"  # type: ignore[operator]
    assert pydotprint(f, outfile=str(out), format="dot") is None
    assert out.read_text() == dot_source(f)
    assert "The output file is available at" in capsys.readouterr().out
    assert pydotprint(f, format="dot", return_image=True) == dot_source(f)


def _renderer_available() -> bool:
    try:
        import pydot  # noqa: F401
    except ImportError:
        try:
            import graphviz  # noqa: F401
        except ImportError:
            return False
    return shutil.which("dot") is not None


@pytest.mark.skipif(
    not _renderer_available(),
    reason="rendering needs pydot (pip install arignote[graphviz]) and graphviz's `dot` "
    "program (apt-get install graphviz); the DOT text is tested without them",
)
def test_pydotprint_renders_png_and_svg(tmp_path: pytest.TempPathFactory) -> None:
    f = _small_function()
    out = tmp_path / "graph.png"  # type: ignore[operator]
    pydotprint(f, outfile=str(out), print_output_file=False)
    assert out.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    svg = pydotprint(f, format="svg", return_image=True)
    assert b"<svg" in svg and b"Elemwise{add}" in svg


def test_pydotprint_without_graphviz_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pytest.TempPathFactory
) -> None:
    f = _small_function()
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(printing.GraphvizUnavailableError, match=r"arignote\[graphviz\]"):
        pydotprint(f, return_image=True)
    monkeypatch.setitem(sys.modules, "pydot", None)
    monkeypatch.setitem(sys.modules, "graphviz", None)
    with pytest.raises(ImportError, match="needs pydot or the graphviz Python package"):
        pydotprint(f, return_image=True)


# --- dump_ir ---------------------------------------------------------------------------


def test_dump_ir_every_stage() -> None:
    x, y = T.dvector("x"), T.dvector("y")
    f = arignote.function([x, y], T.exp(x + y) * T.exp(x + y), mode="FAST_RUN")
    emitted = f.dump_ir("emitted")
    optimized = f.dump_ir()
    assert emitted == str(f.module)
    assert emitted.count("ag.exp") == 2 and optimized.count("ag.exp") == 1
    assert "func.func @fn_main(%x: tensor<?xf64>, %y: tensor<?xf64>)" in optimized
    loops = f.dump_ir("loops")
    assert "@fn_main__shape" in loops and "scf.for" in loops and "memref<" in loops
    assert re.search(r"= ag\.", loops) is None
    llvm_dialect = f.dump_ir("llvm-dialect")
    assert "llvm.func @fn_main" in llvm_dialect and "scf." not in llvm_dialect
    llvm_ir = f.dump_ir("llvm")
    assert 'define i64 @"fn_main"' in llvm_ir
    assert 'define internal i64 @"fn_main__noalias"' in llvm_ir
    assert '@"llvm.exp"' not in llvm_ir and "fmul double" in llvm_ir  # exp is inline code
    # Lowering works on copies: the function still runs and prints the same.
    assert f.dump_ir() == optimized
    assert f([0.0], [0.0])[0] == 1.0
    assert printing.dump_ir(f, "emitted") == emitted


def test_dump_ir_unknown_stage_lists_the_stages() -> None:
    f = _small_function()
    with pytest.raises(ValueError, match="emitted, optimized, loops, llvm-dialect, llvm"):
        f.dump_ir("asm")
    with pytest.raises(TypeError, match="compiled Function"):
        printing.dump_ir(T.dvector(), "emitted")


def test_printing_is_a_lazy_attribute() -> None:
    assert arignote.printing is printing
    assert "printing" in dir(arignote)
