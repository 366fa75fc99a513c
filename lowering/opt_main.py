"""`arignote-opt`: `xdsl-opt` with arignote's dialects, passes and named pipelines.

```sh
arignote-opt in.mlir -p to-llvm --emit=llvm -o out.ll
arignote-opt -p cse,to-loops --print-ir-after-all < in.mlir
```

Everything `xdsl-opt` accepts works here too. On top of it:

* `-p` takes pipeline names from `lowering/pipelines.py` as well as pass names, alone
  or inside a list (`-p cse,to-llvm`); they are expanded before xDSL parses the spec.
* `--emit=llvm` prints LLVM IR (`xdsl.backend.llvm.convert_module`) after the passes, its
  defined functions with the attributes of `lowering/llvm/llvm_attributes.py`.
* `--print-ir-after-all` is `--print-between-passes`.
* Bad IR, a verifier failure or an unknown pass gives one line on stderr,
  `arignote-opt: error: <file>:<line>:<col>: <message>`, and exit status 1;
  `ARIGNOTE_OPT_TRACEBACK=1` re-raises instead. `--parsing-diagnostics` reports a parse
  error as xDSL does (the source line and a caret, status 0), but on stderr; with
  `--split-input-file` the other chunks are still processed.
* `--verify-diagnostics` checks MLIR's `expected-error`/`-warning`/`-remark` comments
  (`lowering/diagnostics.py`): every diagnostic expected, every expectation met, else one
  line per mismatch on stderr and status 1.
  Besides xDSL's verifier, the input must pass the SSA dominance check of
  `arignote.dialects.ag.dominance` (a value is used only where it is defined before).
* Never a Python traceback: a pass that fails on IR that verified (a bug in the pass)
  is reported on one line naming the pass, the op it was working on and the exception;
  so is a failure while printing the result.

Dialects and passes come from `lowering/registry.py` as factories, so a pass module is
imported only when a pipeline uses it (or for `--help`, which describes every pass).
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
import textwrap
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace
from io import BytesIO
from typing import IO, ClassVar

from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import DenseArrayBase, FileLineColLoc, IntegerType, ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.passes import ModulePass, PassPipeline, PassPipelineCallbackType
from xdsl.printer import Printer
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    ParseError,
    VerifyException,
)
from xdsl.utils.lexer import Input, Span
from xdsl.xdsl_opt_main import xDSLOptMain

from arignote.dialects.ag.dominance import DominanceError, verify_dominance
from arignote.lowering import diagnostics
from arignote.lowering.pipelines import PIPELINES, expand_pipeline_names, split_pass_spec
from arignote.lowering.registry import ARIGNOTE_PASSES, get_all_dialects, get_all_passes

PROG = "arignote-opt"
TRACEBACK_ENV = "ARIGNOTE_OPT_TRACEBACK"
"""Set this environment variable to get Python's traceback instead of one-line errors."""

EMIT_CHOICES = ("mlir", "llvm", "ptx")


class OptError(Exception):
    """A user-facing error: printed as one line, exit status 1."""

    def __init__(self, message: str, location: str | None = None):
        super().__init__(message)
        self.message = message
        self.location = location

    def __str__(self) -> str:
        return f"{self.location}: {self.message}" if self.location else self.message


class VerifyDiagnosticsError(OptError):
    """`--verify-diagnostics` found diagnostics that differ from the expected ones."""

    def __init__(self, problems: list[str]):
        super().__init__(f"{len(problems)} diagnostic(s) differ from the expected ones")
        self.problems = problems


class EmitError(DiagnosticException):
    """The module cannot be printed in the requested `--emit` format."""


def one_line(message: str) -> str:
    """`message` with its lines joined, for a single-line diagnostic."""
    return " ".join(line.strip() for line in message.splitlines() if line.strip())


class _LocatingParser(Parser):
    """The MLIR parser, remembering where in the source each operation starts."""

    def __init__(
        self, ctx: Context, text: str | bytes, name: str, starts: dict[Operation, int]
    ) -> None:
        super().__init__(ctx, text, name)
        self._starts = starts

    def parse_operation(self) -> Operation:
        start = self.pos
        op = super().parse_operation()
        self._starts[op] = start
        return op

    def _parse_builtin_densearray_attr(self) -> DenseArrayBase | None:
        # xDSL's DenseArrayBase divides by the element's byte size, which is 0 for `i0`
        start = self.pos
        self.parse_characters("<", " in dense array")
        pos = self.pos
        element_type = self.parse_attribute()
        if isinstance(element_type, IntegerType) and element_type.width.data == 0:
            self.raise_error(
                f"dense array element type must have a nonzero width, got {element_type}",
                pos,
                self.pos,
            )
        self._resume_from(start)
        return super()._parse_builtin_densearray_attr()

    def parse_module_checked(self, implicit_module: bool) -> ModuleOp:
        """`parse_module`, with any Python error of an xDSL check (an attribute whose
        verifier fails with something else than `VerifyException`) as a `ParseError`
        at the current position."""
        try:
            return self.parse_module(implicit_module)
        except (ParseError, DiagnosticException):
            raise
        except Exception as e:  # noqa: BLE001 - reported as a parse error, not a crash
            self.raise_error(f"invalid input ({type(e).__name__}: {one_line(str(e))})")


class ArignoteOptMain(xDSLOptMain):
    """`xdsl-opt` with arignote's registry, named pipelines, `--emit` and short errors."""

    version_format: ClassVar[str] = f"{PROG} built on xDSL {{xdsl_version}}"

    def __init__(self, args: Sequence[str] | None = None):
        self._op_starts: dict[Operation, int] = {}
        self._source: Input[str] | None = None
        self._line_offset = 0
        self._module: ModuleOp | None = None
        self._running: ModulePass | None = None
        self._timings: list[tuple[str, float]] = []
        super().__init__(description="arignote's modular optimizer driver", args=args)

    # --- registration ------------------------------------------------------------------

    def register_all_dialects(self) -> None:
        for name, factory in get_all_dialects().items():
            self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        for name, factory in get_all_passes().items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        """The targets that take arignote's IR: `mlir` (the IR as text), `llvm` (LLVM IR
        of a module lowered with `-p to-llvm`) and `asm` (the host CPU's assembly of
        it). xDSL's other targets print its own hardware dialects, which `ag` never
        lowers to, so they are not offered."""
        super().register_all_targets()
        self.available_targets = {
            "mlir": self.available_targets["mlir"],
            "llvm": lambda prog, output: output.write(llvm_ir(prog)),
            "asm": lambda prog, output: output.write(host_assembly(prog)),
        }

    def register_all_frontends(self) -> None:
        self.available_frontends["mlir"] = self._parse_mlir

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.prog = PROG
        for action in arg_parser._actions:  # pyright: ignore[reportPrivateUsage]
            if action.dest == "passes":  # xDSL's help lists all its passes in one blob
                action.help = (
                    "comma-separated passes (NAME or NAME{option=value ...}) and pipeline "
                    "names; arignote's are listed below, then xDSL's"
                )
        arg_parser.add_argument(
            "--emit",
            choices=EMIT_CHOICES,
            default=None,
            help="output format after the passes: mlir (default), llvm (LLVM IR text, "
            "as -t llvm; lower with -p to-llvm first) or ptx (the kernels of a module "
            "lowered with -p to-gpu, as PTX for --arch)",
        )
        arg_parser.add_argument(
            "--arch",
            default="sm_90",
            help="the GPU architecture of --emit=ptx (default sm_90)",
        )
        _add_mlir_options(arg_parser)
        arg_parser.formatter_class = _HelpFormatter
        arg_parser.epilog = _CATALOGUE

    # --- pipeline ----------------------------------------------------------------------

    def setup_pipeline(self) -> None:
        if self.args.pass_pipeline is not None:
            if self.args.passes:
                raise OptError("give the passes with -p or with --pass-pipeline, not both")
            self.args.passes = mlir_pass_pipeline(self.args.pass_pipeline)
        spec = expand_pipeline_names(self.args.passes)
        self._check_pass_names(spec, list(PIPELINES))
        self.args.passes = spec
        try:
            self.pipeline = PassPipeline.parse_spec(self.available_passes, spec, self._callback())
        except ArgSpecParseError as e:
            reason = str(e).strip().splitlines()[-1].strip()
            raise OptError(f"bad pass pipeline '{spec}': {reason}") from e
        except ImportError as e:
            raise OptError(f"{self._unavailable_pass(spec)} is not available: {e}") from e
        except (ValueError, TypeError) as e:
            raise OptError(f"bad pass pipeline '{spec}': {one_line(str(e))}") from e

    def _callback(self) -> PassPipelineCallbackType:
        """Before, between and after the passes: verify (unless `--disable-verify`; the
        parsed input is verified here too, as xDSL does), time the pass, dump the IR
        before/after it as asked (on stderr, MLIR's `// -----// IR Dump After ...`
        headers), and remember the pass about to run (named by a crash)."""
        args = self.args
        after = args.print_between_passes or args.mlir_print_ir_after_all
        before = args.mlir_print_ir_before_all
        started = [0.0]

        def between(previous: ModulePass | None, module: ModuleOp, following: ModulePass | None):
            self._running = None
            if previous is not None:
                self._timings.append((previous.name, time.perf_counter() - started[0]))
            if not args.disable_verify:  # also the input, before the first pass
                module.verify()
            if previous is not None:
                if after:
                    self._dump(f"IR Dump After {previous.name}", module)
            if following is not None and before:
                self._dump(f"IR Dump Before {following.name}", module)
            self._running = following
            started[0] = time.perf_counter()

        return between

    def _dump(self, title: str, module: ModuleOp) -> None:
        sys.stderr.write(f"// -----// {title} //----- //\n")
        Printer(stream=sys.stderr, print_debuginfo=self.args.print_debuginfo).print_op(module)
        sys.stderr.write("\n\n")

    def _report_timings(self) -> None:
        """`--mlir-timing` / `--time-passes`: the time of each pass, on stderr."""
        if not (self.args.mlir_timing or self.args.time_passes) or not self._timings:
            return
        total = sum(seconds for _, seconds in self._timings)
        lines = [
            "===" + "-" * 73 + "===",
            "  ... Pass execution timing report ...",
            "===" + "-" * 73 + "===",
            f"  Total Execution Time: {total:.4f} seconds",
            "",
            "  ----Wall Time----  ----Name----",
        ]
        for name, seconds in self._timings:
            share = 100 * seconds / total if total else 0.0
            lines.append(f"  {seconds:8.4f} ({share:5.1f}%)  {name}")
        lines.append(f"  {total:8.4f} (100.0%)  Total")
        print("\n".join(lines), file=sys.stderr)

    def apply_passes(self, prog: ModuleOp) -> None:
        try:
            super().apply_passes(prog)
        except (DiagnosticException, NotImplementedError):
            raise
        except Exception as e:  # noqa: BLE001 - a bug in a pass: one line, no traceback
            what = f"pass '{self._running.name}'" if self._running else "the verifier"
            raise OptError(
                f"{what} failed{self._crashed_op(e)}: {type(e).__name__}: {_short(e)} "
                f"(a bug in {what}; {TRACEBACK_ENV}=1 shows the traceback)",
                self._locate_crash(e),
            ) from e

    def _unavailable_pass(self, spec: str) -> str:
        for item in split_pass_spec(spec):
            name = item.split("{", 1)[0].strip()
            try:
                self.available_passes[name]()
            except ImportError:
                return f"pass '{name}'"
        return "a pass"

    def _check_pass_names(self, spec: str, pipeline_names: list[str]) -> None:
        for item in split_pass_spec(spec):
            name = item.split("{", 1)[0].strip()
            if name in self.available_passes:
                continue
            close = difflib.get_close_matches(name, [*self.available_passes, *pipeline_names])
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise OptError(f"unknown pass or pipeline '{name}'{hint}")

    # --- input -------------------------------------------------------------------------

    def _parse_mlir(self, io: IO[bytes]) -> ModuleOp:
        parser = _LocatingParser(self.ctx, io.read(), self.get_input_name(), self._op_starts)
        self._source = parser.lexer.input
        self._module = parser.parse_module_checked(not self.args.no_implicit_module)
        verify_dominance(self._module)
        return self._module

    def parse_chunk(
        self, chunk: IO[bytes], file_extension: str, start_offset: int = 0
    ) -> ModuleOp | None:
        self._op_starts.clear()
        self._line_offset = start_offset
        if not self.args.parsing_diagnostics:
            return super().parse_chunk(chunk, file_extension, start_offset)
        try:
            return super().parse_chunk(chunk, file_extension, start_offset)
        except ParseError as e:
            # reported, as xDSL does, but on stderr: stdout carries the output IR alone
            e.span = replace(e.span, line_offset=start_offset)
            print(e, file=sys.stderr)
            return None

    def prepare_input(self) -> tuple[list[tuple[IO[bytes], int]], str]:
        # Any file name is MLIR text unless a frontend claims its extension.
        if self.args.frontend is None and self.args.input_file is not None:
            extension = os.path.splitext(self.args.input_file)[1].lstrip(".")
            if extension not in self.available_frontends:
                self.args.frontend = "mlir"
        return super().prepare_input()

    # --- output ------------------------------------------------------------------------

    def output_resulting_program(self, prog: ModuleOp) -> str:
        if self.args.emit == "llvm":
            return llvm_ir(prog)
        if self.args.emit == "ptx":
            return gpu_ptx(prog, self.args.arch)
        return super().output_resulting_program(prog)

    # --- --verify-diagnostics ------------------------------------------------------------

    def _verify_diagnostics(self) -> None:
        """Checks each chunk's diagnostics against its `expected-*` comments
        (`lowering/diagnostics.py`); the output of the chunks that succeed is printed as
        usual. Raises `VerifyDiagnosticsError` listing every mismatch."""
        chunks, extension = self.prepare_input()
        output = self.prepare_output()
        problems: list[str] = []
        try:
            for index, (chunk, offset) in enumerate(chunks):
                text = chunk.read()
                chunk.close()
                if index > 0:
                    output.write("// -----\n")
                expected = diagnostics.expectations(text.decode(errors="replace"), offset)
                emitted, printed = self._chunk_diagnostics(text, extension, offset)
                output.write(printed)
                name = self.get_input_name()
                problems += diagnostics.verify(expected, emitted, name).problems
        finally:
            if output is not sys.stdout:
                output.close()
        if problems:
            raise VerifyDiagnosticsError(problems)

    def _chunk_diagnostics(
        self, text: bytes, extension: str, offset: int
    ) -> tuple[list[diagnostics.Diagnostic], str]:
        """The diagnostics of one chunk (parse, verify, passes) and its printed output
        (empty when it failed)."""
        emitted: list[diagnostics.Diagnostic] = []
        printed = ""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                module = self.parse_chunk(BytesIO(text), extension, offset)
                if module is not None:
                    self.apply_passes(module)
                    printed = self.output_resulting_program(module)
            except ParseError as e:
                location = str(replace(e.span, line_offset=offset).get_location())
                emitted.append(self._error(one_line(e.msg), location))
            except DiagnosticException as e:
                emitted.append(self._error(one_line(str(e)), self._locate_failure(e)))
            except OptError as e:
                emitted.append(self._error(e.message, e.location))
            except NotImplementedError as e:
                emitted.append(self._error(one_line(str(e)), self._locate_crash(e)))
        for warning in caught:
            emitted.append(diagnostics.Diagnostic("warning", one_line(str(warning.message)), None))
        return emitted, printed

    @staticmethod
    def _error(message: str, location: str | None) -> diagnostics.Diagnostic:
        return diagnostics.Diagnostic(
            "error", message, diagnostics.line_of(location), location or ""
        )

    # --- errors ------------------------------------------------------------------------

    def run(self) -> None:
        try:
            self._run()
        finally:
            self._report_timings()

    def _run(self) -> None:
        if self.args.verify_diagnostics:
            self._verify_diagnostics()
            return
        try:
            super().run()
        except ParseError as e:
            location = e.span.get_location()
            raise OptError(one_line(e.msg), str(location)) from e
        except DiagnosticException as e:
            raise OptError(one_line(str(e)), self._locate_failure(e)) from e
        except NotImplementedError as e:
            # a pass met IR it does not handle: a user-facing error, not a crash
            where = self._locate_crash(e)
            raise OptError(f"unsupported input: {one_line(str(e))}", where) from e
        except OSError as e:
            if e.filename is None:
                raise OptError(one_line(str(e))) from e
            raise OptError(f"cannot open '{e.filename}': {e.strerror}") from e
        except OptError:
            raise
        except Exception as e:  # noqa: BLE001 - whatever else fails: one line, no traceback
            raise OptError(
                f"internal error: {type(e).__name__}: {_short(e)} ({TRACEBACK_ENV}=1 shows "
                "the traceback)",
                self._locate_crash(e),
            ) from e

    def _locate_failure(self, error: DiagnosticException) -> str | None:
        """Where the op that raised `error` (a verifier failure, or a pass that refuses
        its input) starts, if known."""
        if isinstance(error, DominanceError):
            return self._op_location(error.op)
        if not isinstance(error, VerifyException):
            return self._locate_crash(error)  # a pass refusing its input: its op
        if self._module is None:
            return None
        for op in self._module.walk():
            try:
                op.verify(verify_nested_ops=False)
            except VerifyException as e:
                if str(e) == str(error):
                    return self._op_location(op)
            except Exception:  # noqa: BLE001 - any failure here just means "not this op"
                continue
        return None

    def _crashed_op(self, error: BaseException) -> str:
        """` on <op name>`, the op a failing pass was working on, if known."""
        op = _failing_op(error)
        return f" on {op.name}" if op is not None else ""

    def _locate_crash(self, error: BaseException) -> str | None:
        """Where the op a failing pass was working on starts (or the nearest op
        enclosing it that came from the input)."""
        op = _failing_op(error)
        return self._op_location(op) if op is not None else None

    def _op_location(self, op: Operation) -> str | None:
        node: Operation | None = op
        while node is not None:
            if isinstance(node.location, FileLineColLoc):
                loc = node.location
                return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
            start = self._op_starts.get(node)
            if start is not None and self._source is not None:
                where = Span(start, start, self._source, self._line_offset).get_location()
                return str(where)
            node = node.parent_op()
        return None


def _short(error: BaseException, limit: int = 240) -> str:
    text = one_line(str(error)) or "(no message)"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _failing_op(error: BaseException) -> Operation | None:
    """The innermost op in the frames of `error`'s traceback (a local `op`, or `self` in
    a method of the op): the op the pass, its pattern or the verifier was working on
    when it failed (the module says nothing more)."""
    found = None
    for frame, _ in traceback.walk_tb(error.__traceback__):
        for name in ("op", "self"):
            candidate = frame.f_locals.get(name)
            if isinstance(candidate, Operation) and not isinstance(candidate, ModuleOp):
                found = candidate
    return found


# --- --help ----------------------------------------------------------------------------


def pass_summary(factory: Callable[[], type]) -> str:
    """The first line of a pass's docstring, or `(not available)` if it cannot load."""
    try:
        cls = factory()
    except Exception:  # noqa: BLE001 - a pass module still being written
        return "(not available)"
    doc = cls.__doc__
    if not doc or doc.startswith(f"{cls.__name__}("):  # the dataclass default
        doc = getattr(sys.modules.get(cls.__module__), "__doc__", None)
    if not doc:
        return "(no description)"
    first = doc.strip().splitlines()[0].strip()
    name = getattr(cls, "name", "")
    return first.removeprefix(f"`{name}`:").strip() if name else first


def help_catalogue() -> str:
    """The `--help` epilog: arignote's passes and the named pipelines, one line each."""
    xdsl_passes = [name for name in get_all_passes() if name not in ARIGNOTE_PASSES]
    width = max(len(name) for name in [*ARIGNOTE_PASSES, *PIPELINES]) + 2
    lines = ["arignote passes (-p NAME):"]
    lines += [f"  {n:<{width}}{pass_summary(f)}" for n, f in ARIGNOTE_PASSES.items()]
    lines += ["", "pipelines (-p NAME, also inside a list: -p cse,to-llvm):"]
    lines += [f"  {n:<{width}}{desc}" for n, (_, desc) in PIPELINES.items()]
    lines += ["", "xDSL passes:"]
    lines += textwrap.wrap(
        ", ".join(sorted(xdsl_passes)),
        88,
        initial_indent="  ",
        subsequent_indent="  ",
        break_on_hyphens=False,
    )
    return "\n".join(lines) + "\n"


_CATALOGUE = "\0arignote-catalogue"
"""The epilog placeholder that `_HelpFormatter` replaces with `help_catalogue()`."""


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Builds the catalogue, which imports every pass module, only when help is printed."""

    def add_text(self, text: str | None) -> None:
        super().add_text(help_catalogue() if text == _CATALOGUE else text)


def llvm_ir(prog: ModuleOp) -> str:
    """The LLVM IR text of the `llvm`-dialect module `prog`, its defined functions with
    the attributes of `lowering/llvm/llvm_attributes.py`; `EmitError` for a module that is
    not lowered yet."""
    from xdsl.backend.llvm.convert import convert_module

    from arignote.lowering.llvm.llvm_attributes import add_function_attributes

    try:
        module = convert_module(prog, fallback_target_triple=None)
        return str(add_function_attributes(module)) + "\n"
    except NotImplementedError as e:
        raise EmitError(f"cannot emit LLVM IR: {e} (lower with -p to-llvm first)") from e
    except Exception as e:  # noqa: BLE001 - IR the LLVM backend cannot take
        raise EmitError(
            f"cannot emit LLVM IR: {type(e).__name__}: {_short(e)} (lower with -p to-llvm first)"
        ) from e


def gpu_ptx(prog: ModuleOp, arch: str) -> str:
    """The PTX of the kernels of `prog` (lowered with `-p to-gpu`) for `arch`; `EmitError`
    for a module that is not."""
    from arignote.lowering.gpu.kernels import GpuLoweringError
    from arignote.lowering.gpu.split import SPECIAL_REGISTERS, entry_ir, split
    from arignote.runtime.ptx import PtxError, device_ir, ptx

    if any(not isinstance(op, llvm.FuncOp) for op in prog.ops):
        raise EmitError("cannot emit PTX: lower with -p to-gpu first")
    try:
        parts = split(prog)
        source = device_ir(parts.device, [entry_ir(k) for k in parts.kernels], SPECIAL_REGISTERS)
        return ptx(source, arch)
    except (GpuLoweringError, PtxError) as e:
        raise EmitError(f"cannot emit PTX: {one_line(str(e))}") from e


def host_assembly(prog: ModuleOp) -> str:
    """The assembly that native code compiles `prog` (lowered with `-p to-llvm`) to, for
    this machine's CPU (LLVM's code generator through llvmlite, at `cpu.OPT_LEVEL`)."""
    import llvmlite.binding as llvm

    from arignote.runtime.cpu import host_target_machine

    text = llvm_ir(prog)
    try:
        module = llvm.parse_assembly(text)
        module.verify()
    except RuntimeError as e:
        raise EmitError(f"cannot emit assembly: LLVM rejects the IR: {one_line(str(e))}") from e
    return host_target_machine().emit_assembly(module)


def _add_mlir_options(arg_parser: argparse.ArgumentParser) -> None:
    """`mlir-opt`'s spellings of the pipeline, dump and timing options."""
    arg_parser.add_argument(
        "--pass-pipeline",
        default=None,
        help="the passes as MLIR's textual pipeline, 'builtin.module(cse,func.func(...))'; "
        "an anchor's nested passes run on the whole module (arignote's passes are "
        "module passes)",
    )
    for flag in ("--mlir-print-ir-after-all", "--print-ir-after-all"):
        arg_parser.add_argument(
            flag,
            dest="mlir_print_ir_after_all",
            action="store_true",
            help="print the IR after each pass, on stderr",
        )
    arg_parser.add_argument(
        "--mlir-print-ir-before-all",
        action="store_true",
        help="print the IR before each pass, on stderr",
    )
    arg_parser.add_argument(
        "--mlir-print-debuginfo",
        dest="print_debuginfo",
        action="store_true",
        help="print each op's location (the user's source line: loc(\"prog.py\":12:0))",
    )
    arg_parser.add_argument(
        "--mlir-timing",
        action="store_true",
        help="print the time of each pass on stderr (as --time-passes)",
    )


def mlir_pass_pipeline(text: str) -> str:
    """The `-p` spec of an MLIR textual pipeline: `builtin.module(a,b{x=1},func.func(c))`
    gives `a,b{x=1},c` (the anchors dropped: arignote's passes run on the whole module).
    A malformed pipeline is an `OptError`."""
    items: list[str] = []
    current = ""
    depth = braces = 0
    for char in text.strip():
        if char == "{":
            braces += 1
        elif char == "}":
            braces -= 1
        if braces:
            current += char
            continue
        if char == "(":
            depth += 1
            current = ""  # the anchor's name (builtin.module, func.func) is dropped
        elif char in "),":
            if current.strip():
                items.append(current.strip())
            current = ""
            depth -= char == ")"
        else:
            current += char
        if depth < 0:
            raise OptError(f"bad --pass-pipeline '{text}': unbalanced ')'")
    if depth or braces or current.strip():
        raise OptError(f"bad --pass-pipeline '{text}': expected anchor(pass,...)")
    return ",".join(items)


def main(argv: Sequence[str] | None = None) -> int:
    """The `arignote-opt` console script; returns the exit status."""
    warnings.filterwarnings("default", category=DeprecationWarning)
    try:
        ArignoteOptMain(args=argv).run()
    except VerifyDiagnosticsError as e:
        sys.stdout.flush()
        for problem in e.problems:
            print(problem, file=sys.stderr)
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    except OptError as e:
        if os.environ.get(TRACEBACK_ENV):
            raise
        sys.stdout.flush()
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
