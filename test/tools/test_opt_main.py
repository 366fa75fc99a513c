"""`arignote-opt`: named pipelines, `--help`, and one-line errors with exit status 1."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arignote.lowering import opt_main
from arignote.lowering.pipelines import (
    GRAPH_PIPELINES,
    LLVM_LOWERING,
    LOOPS_LOWERING,
    PIPELINES,
    expand_pipeline_names,
    split_pass_spec,
)
from arignote.lowering.registry import ARIGNOTE_PASSES, get_all_passes

GOOD = """\
func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = ag.exp %x : tensor<?xf32>
  func.return %y : tensor<?xf32>
}
"""

BAD_SYNTAX = """\
func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = ag.exp %x : tensor<?xf32
  func.return %y : tensor<?xf32>
}
"""

BAD_VERIFY = """\
func.func @f(%x: tensor<?xf32>, %z: tensor<3xf32>) -> tensor<?xf32> {
  %y = ag.add %x, %z : tensor<?xf32>, tensor<3xf32> -> tensor<4xf32>
  func.return %x : tensor<?xf32>
}
"""

ERROR_LINE = re.compile(r"^arignote-opt: error: \S.*$")


def run_opt(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arignote.lowering.opt_main", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def assert_one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert ERROR_LINE.match(lines[0]), lines[0]
    return lines[0]


@pytest.fixture
def mlir_file(tmp_path: Path):
    def write(text: str, name: str = "in.mlir") -> str:
        path = tmp_path / name
        path.write_text(text)
        return str(path)

    return write


# --- through a subprocess --------------------------------------------------------------


@pytest.mark.parametrize(
    ("passes", "expected"),
    [
        ("no-such-pass", "unknown pass or pipeline 'no-such-pass'"),
        ("cse,to-lops", "unknown pass or pipeline 'to-lops'; did you mean 'to-loops'?"),
        ("cse{", "bad pass pipeline 'cse{': "),
        ("cse{bogus=1}", "bad pass pipeline 'cse{bogus=1}': "),
    ],
)
def test_bad_pass_spec_is_one_line(mlir_file, passes: str, expected: str):
    line = assert_one_line_error(run_opt(mlir_file(GOOD), "-p", passes))
    assert expected in line


def test_parse_error_has_file_line_col(mlir_file):
    path = mlir_file(BAD_SYNTAX)
    line = assert_one_line_error(run_opt(path))
    # xDSL reports the missing '>' at the next token: line 3, column 3.
    assert line == (f"arignote-opt: error: {path}:3:3: Expected '>' after builtin parameter list")


def test_verifier_error_names_the_op_position(mlir_file):
    path = mlir_file(BAD_VERIFY)
    line = assert_one_line_error(run_opt(path))
    assert line.startswith(f"arignote-opt: error: {path}:2:3: 'ag.add' op result type")


def test_error_from_stdin():
    line = assert_one_line_error(run_opt(stdin=BAD_VERIFY))
    assert line.startswith("arignote-opt: error: stdin:2:3: 'ag.add' op")


def test_missing_input_file(tmp_path: Path):
    line = assert_one_line_error(run_opt(str(tmp_path / "missing.mlir")))
    assert "cannot open" in line and "No such file or directory" in line


def test_verify_diagnostics_checks_expected_errors(mlir_file):
    """MLIR's convention: an error nobody expected fails; an expected one passes; an
    expectation that is not met fails, naming it."""
    proc = run_opt(mlir_file(BAD_VERIFY), "--verify-diagnostics")
    assert proc.returncode == 1
    assert ":2:3: error: unexpected error: 'ag.add' op result type tensor<4xf32>" in proc.stderr
    expecting = BAD_VERIFY.replace(
        "tensor<4xf32>\n", "tensor<4xf32>  // expected-error {{does not match}}\n"
    )
    proc = run_opt(mlir_file(expecting), "--verify-diagnostics")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "" and proc.stderr == ""
    wrong = expecting.replace("{{does not match}}", "{{is fine}}")
    proc = run_opt(mlir_file(wrong), "--verify-diagnostics")
    assert proc.returncode == 1
    assert ':2: error: expected error "is fine" (at line 2) was not produced' in proc.stderr


def test_good_input_round_trips(mlir_file, tmp_path: Path):
    out = tmp_path / "out.mlir"
    proc = run_opt(mlir_file(GOOD), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert "%y = ag.exp %x : tensor<?xf32>" in out.read_text()


# --- in process ------------------------------------------------------------------------


def test_help_lists_passes_and_pipelines(capsys):
    with pytest.raises(SystemExit) as exit_info:
        opt_main.main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    for name in [*ARIGNOTE_PASSES, *PIPELINES]:
        matching = [line for line in lines if line.split()[:1] == [name]]
        assert len(matching) == 1, name
        assert len(matching[0].split()) > 1, f"{name} has no description"
    assert "--emit {mlir,llvm,ptx}" in out
    assert "--print-ir-after-all" in out


def test_pass_summary_tolerates_missing_module():
    def missing() -> type:
        raise ModuleNotFoundError("No module named 'arignote.lowering.not_yet'")

    assert opt_main.pass_summary(missing) == "(not available)"


def test_ir_dumps_and_timings_go_to_stderr(mlir_file, capsys):
    """mlir-opt's convention: the output IR alone on stdout; dumps, timings on stderr."""
    args = [mlir_file(GOOD), "-p", "cse,dce", "--print-ir-after-all", "--mlir-timing"]
    assert opt_main.main(args) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("builtin.module {") and "IR Dump" not in captured.out
    assert "// -----// IR Dump After cse //----- //" in captured.err
    assert "// -----// IR Dump After dce //----- //" in captured.err
    assert "Pass execution timing report" in captured.err and "  Total\n" in captured.err
    assert opt_main.main([mlir_file(GOOD), "-p", "cse", "--mlir-print-ir-before-all"]) == 0
    assert "// -----// IR Dump Before cse //----- //" in capsys.readouterr().err


def test_mlir_pass_pipeline_syntax():
    assert opt_main.mlir_pass_pipeline("builtin.module(cse,func.func(canonicalize),dce)") == (
        "cse,canonicalize,dce"
    )
    assert (
        opt_main.mlir_pass_pipeline("builtin.module(ag-to-loops{parallel-min-work=8},cse)")
        == "ag-to-loops{parallel-min-work=8},cse"
    )
    for bad in ("builtin.module(cse", "builtin.module(cse))", "cse"):
        with pytest.raises(opt_main.OptError, match="bad --pass-pipeline"):
            opt_main.mlir_pass_pipeline(bad)


def test_every_listed_target_works(mlir_file, capsys):
    path = mlir_file(GOOD)
    expectations = (("mlir", "llvm.func @f("), ("llvm", "define"), ("asm", ".cfi_startproc"))
    for target, expected in expectations:
        assert opt_main.main([path, "-p", "to-llvm", "-t", target]) == 0, target
        assert expected in capsys.readouterr().out, target
    assert opt_main.main([path, "-t", "llvm"]) == 1
    assert "lower with -p to-llvm first" in capsys.readouterr().err


def test_main_returns_1_on_error(mlir_file, capsys):
    assert opt_main.main([mlir_file(GOOD), "-p", "nope"]) == 1
    err = capsys.readouterr().err
    assert err == "arignote-opt: error: unknown pass or pipeline 'nope'\n"


# --- pipelines -------------------------------------------------------------------------


def test_pipeline_table():
    to_llvm = "ag-to-loops{kernel_regions=true},outline-kernels," + LLVM_LOWERING
    assert PIPELINES["to-loops"][0] == LOOPS_LOWERING
    assert PIPELINES["to-llvm"][0] == to_llvm
    assert PIPELINES["fast_compile"][0] == "canonicalize," + to_llvm
    assert PIPELINES["fast_run"][0] == GRAPH_PIPELINES["fast_run"] + "," + to_llvm
    assert GRAPH_PIPELINES["fast_run"].split(",") == [
        "stabilize",
        "specialize",
        "canonicalize",
        "cse",
        "scan-prune",
        "dce",
        "scan-last-step",
        "scan-history",
        "softmax-xent-pair",
        "row-fusion",
        "fusion",
        "inplace-update",
        "inplace",
    ]


def test_pipelines_name_registered_passes_only():
    passes = get_all_passes()
    for name, (spec, description) in PIPELINES.items():
        assert name not in passes, f"pipeline {name} shadows a pass"
        assert description and "\n" not in description
        for item in split_pass_spec(spec):
            assert item.split("{")[0] in passes, (name, item)


@pytest.mark.parametrize(
    ("spec", "items"),
    [
        ("", []),
        ("cse", ["cse"]),
        ("cse, dce", ["cse", "dce"]),
        ("a{x=1,2},b", ["a{x=1,2}", "b"]),
        ('a{s="p,q"},b{n={1}}', ['a{s="p,q"}', "b{n={1}}"]),
    ],
)
def test_split_pass_spec(spec: str, items: list[str]):
    assert split_pass_spec(spec) == items


def test_expand_pipeline_names():
    assert expand_pipeline_names("to-loops") == LOOPS_LOWERING
    assert expand_pipeline_names("cse,to-llvm") == "cse," + PIPELINES["to-llvm"][0]
    assert expand_pipeline_names("cse{a=1},dce") == "cse{a=1},dce"
    table = {"p": ("x,y", "")}
    assert expand_pipeline_names("a,p,b", table) == "a,x,y,b"


# --- no traceback on any input (issue 12) -----------------------------------------------

SIBLING_YIELD = """\
func.func @f(%c: tensor<i1>, %x: tensor<?xf64>) -> tensor<?xf64> {
  %r = ag.if %c : tensor<i1> -> (tensor<?xf64>) {
    ag.yield %s : tensor<?xf64>
  } else {
    %s = ag.neg %x : tensor<?xf64>
    ag.yield %s : tensor<?xf64>
  }
  func.return %r : tensor<?xf64>
}
"""

USE_BEFORE_DEF = """\
func.func @f(%x: tensor<?xf64>) -> tensor<?xf64> {
  %e = ag.exp %n : tensor<?xf64>
  %n = ag.neg %x : tensor<?xf64>
  func.return %e : tensor<?xf64>
}
"""

ZERO_WIDTH = """\
func.func @f(%x: tensor<?xf64>) -> tensor<f64> {
  %s = ag.reduce_sum %x {axes = array<i0: 0>} : tensor<?xf64> -> tensor<f64>
  func.return %s : tensor<f64>
}
"""


def run_in_process(capsys, *args: str) -> tuple[int, str, str]:
    status = opt_main.main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def assert_one_line(status: int, err: str) -> str:
    assert status == 1, err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert ERROR_LINE.match(lines[0]), lines[0]
    return lines[0]


@pytest.mark.parametrize("passes", ["", "to-llvm", "fast_run"])
def test_yield_of_a_sibling_region_value_is_a_verifier_error(mlir_file, capsys, passes: str):
    """Was a KeyError from `lowering/loops/ag_control.py` (the lowering found no buffer for
    the else region's value when lowering the then region)."""
    path = mlir_file(SIBLING_YIELD)
    status, _, err = run_in_process(capsys, path, *(["-p", passes] if passes else []))
    line = assert_one_line(status, err)
    assert f"{path}:3:5: 'ag.yield' op operand #0 (%s) does not dominate this use" in line
    assert "a region of ag.if that does not enclose this use" in line


def test_use_before_definition_is_a_verifier_error(mlir_file, capsys):
    path = mlir_file(USE_BEFORE_DEF)
    status, _, err = run_in_process(capsys, path, "-p", "to-llvm")
    line = assert_one_line(status, err)
    assert f"{path}:2:3: 'ag.exp' op operand #0 (%n) does not dominate this use" in line


def test_ag_verifier_rejects_a_sibling_region_value():
    """The `ag.if` verifier itself (not only the CLI's module check) rejects it."""
    from xdsl.parser import Parser
    from xdsl.utils.exceptions import VerifyException

    from arignote.lowering.driver import make_context

    module = Parser(make_context(), SIBLING_YIELD).parse_module()
    with pytest.raises(VerifyException, match=r"'ag.yield' op operand #0 \(%s\) does not"):
        module.verify()


def test_zero_width_dense_array_is_a_parse_error(mlir_file, capsys):
    """Was a ZeroDivisionError in xDSL's DenseArrayBase verifier."""
    path = mlir_file(ZERO_WIDTH)
    status, _, err = run_in_process(capsys, path)
    line = assert_one_line(status, err)
    assert f"{path}:2:39: dense array element type must have a nonzero width, got i0" in line


def test_zero_width_dense_array_parsing_diagnostics(mlir_file, capsys):
    status, out, err = run_in_process(capsys, mlir_file(ZERO_WIDTH), "--parsing-diagnostics")
    assert status == 0 and "Traceback" not in err
    assert "dense array element type must have a nonzero width, got i0" in err
    assert out == ""


def test_other_dense_arrays_still_parse(mlir_file, capsys):
    text = ZERO_WIDTH.replace("array<i0: 0>", "array<i64: 0>")
    status, out, err = run_in_process(capsys, mlir_file(text))
    assert status == 0, err
    assert "array<i64: 0>" in out


def _raise_on_exp(op: Any) -> None:
    raise KeyError("boom")


def test_crash_in_a_pass_is_one_line_naming_pass_and_op(mlir_file, capsys, monkeypatch):
    """A pass that fails on IR that verified (a bug in the pass) is reported on one line
    with the pass, the op it was working on and its location; no traceback."""
    from arignote.lowering.graph.canonicalize import CanonicalizePass

    def crashing_apply(self: Any, ctx: Any, module: Any) -> None:
        for op in module.walk():
            if op.name == "ag.exp":
                _raise_on_exp(op)

    monkeypatch.setattr(CanonicalizePass, "apply", crashing_apply)
    path = mlir_file(GOOD)
    status, _, err = run_in_process(capsys, path, "-p", "cse,canonicalize")
    line = assert_one_line(status, err)
    assert f"{path}:2:3: pass 'canonicalize' failed on ag.exp: KeyError: 'boom'" in line
    monkeypatch.setenv(opt_main.TRACEBACK_ENV, "1")  # the traceback, for debugging
    with pytest.raises(opt_main.OptError) as raised:
        opt_main.main([path, "-p", "canonicalize"])
    assert isinstance(raised.value.__cause__, KeyError)


def test_crash_in_a_pass_through_a_subprocess(mlir_file):
    """The same from the command line: exit status 1, no 'Traceback' on stderr."""
    script = (
        "import sys\n"
        "from arignote.lowering import opt_main\n"
        "from arignote.lowering.graph.canonicalize import CanonicalizePass\n"
        "def apply(self, ctx, op):\n"
        "    raise AssertionError('broken invariant')\n"
        "CanonicalizePass.apply = apply\n"
        "sys.exit(opt_main.main(sys.argv[1:]))\n"
    )
    path = mlir_file(GOOD)
    proc = subprocess.run(
        [sys.executable, "-c", script, path, "-p", "canonicalize"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    line = assert_one_line_error(proc)
    assert "pass 'canonicalize' failed: AssertionError: broken invariant" in line


def test_crash_in_a_verifier_is_one_line(mlir_file, capsys, monkeypatch):
    """A verifier that fails with a Python error (not a VerifyException)."""
    from arignote.dialects import ag

    def broken(self: Any) -> None:
        raise TypeError("unexpected attribute")

    monkeypatch.setattr(ag.ExpOp, "verify_", broken)
    path = mlir_file(GOOD)
    status, _, err = run_in_process(capsys, path, "-p", "cse")
    line = assert_one_line(status, err)
    assert f"{path}:2:3: the verifier failed on ag.exp: TypeError: unexpected attribute" in line


def test_crash_while_printing_is_one_line(mlir_file, capsys, monkeypatch):
    def broken(self: Any, prog: Any) -> str:
        raise RuntimeError("cannot print")

    monkeypatch.setattr(opt_main.ArignoteOptMain, "output_resulting_program", broken)
    status, _, err = run_in_process(capsys, mlir_file(GOOD))
    line = assert_one_line(status, err)
    assert "internal error: RuntimeError: cannot print" in line
