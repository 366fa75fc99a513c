"""`arignote-run`: run a function of an `ag` module from the command line, as
`mlir-cpu-runner` / `xdsl-run` do.

```sh
arignote-run examples/add_mul.mlir -i x.npy -i "[[1, 2], [3, 4]]"          # native code
arignote-run examples/add_mul.mlir -i "[[1.5]]" -i "[[2]]" --linker py     # interpreter
arignote-run model.mlir -e step -i x.npy -O fast_run --save out/
```

* The module is parsed with arignote's dialects and verified; `-e/--entry` names the
  `func.func` to run (default `main`, else the module's only function).
* Each `-i/--input` is one argument, in order: a `.npy` file, or a Python literal (a
  number or nested lists). It is converted to the argument's element type; its rank and
  static dimensions must match (a clear error otherwise, never a crash).
* `--linker cvm` (default) lowers the function to LLVM and runs native code (the same
  pipelines as `arignote.function`, with `-O` choosing the graph pipeline: none, the
  default, `fast_compile` or `fast_run`); `--linker py` runs the reference interpreter.
* Each result is printed as `// result N: <type>` and the array (all of it); `--save DIR`
  also writes `DIR/resultN.npy`.
* Errors are one line on stderr, `arignote-run: error: ...`, and exit status 1.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException

PROG = "arignote-run"


class RunError(Exception):
    """A user error: reported on one line, status 1."""


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("input_file", help="the module (.mlir); '-' reads standard input")
    parser.add_argument("-e", "--entry", help="the function to run (default: main)")
    parser.add_argument(
        "-i",
        "--input",
        action="append",
        default=[],
        metavar="VALUE",
        help="one argument: a .npy file or a Python literal (repeat, in order)",
    )
    parser.add_argument(
        "--linker",
        choices=["cvm", "py"],
        default="cvm",
        help="cvm: native code (default); py: the reference interpreter",
    )
    parser.add_argument(
        "-O",
        "--optimizer",
        choices=["none", "fast_compile", "fast_run"],
        default="none",
        help="graph pipeline before lowering (native only)",
    )
    parser.add_argument("--save", metavar="DIR", help="also write DIR/resultN.npy")
    return parser.parse_args(argv)


def read_module(path: str) -> ModuleOp:
    from arignote.lowering.driver import make_context

    text = sys.stdin.read() if path == "-" else _read(path)
    try:
        module = Parser(make_context(), text, path).parse_module()
        module.verify()
    except (ParseError, VerifyException, DiagnosticException) as e:
        raise RunError(" ".join(str(e).split())) from None
    return module


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        raise RunError(f"cannot read {path}: {e.strerror}") from None


def entry_function(module: ModuleOp, name: str | None) -> FuncOp:
    functions = [op for op in module.ops if isinstance(op, FuncOp) and op.body.blocks]
    if name is None:
        named = [f for f in functions if f.sym_name.data == "main"]
        if named or len(functions) != 1:
            name = "main"
        else:
            return functions[0]
    for function in functions:
        if function.sym_name.data == name:
            return function
    known = ", ".join(f.sym_name.data for f in functions) or "none"
    raise RunError(f"no function @{name} in the module (functions: {known})")


def argument(text: str, index: int, expected: TensorType) -> np.ndarray:
    """The `index`-th argument from `text` (a .npy path or a literal), as `expected`."""
    from arignote.runtime.dtypes import numpy_dtype

    if text.endswith(".npy"):
        try:
            value = np.load(text)
        except (OSError, ValueError) as e:
            raise RunError(f"input {index}: cannot read {text}: {e}") from None
    else:
        try:
            value = np.asarray(ast.literal_eval(text))
        except (ValueError, SyntaxError):
            raise RunError(
                f"input {index}: expected a .npy file or a Python literal, got {text!r}"
            ) from None
    dtype = numpy_dtype(expected.element_type)
    shape = expected.get_shape()
    if value.ndim != len(shape):
        raise RunError(
            f"input {index}: expected rank {len(shape)} ({expected}), got shape {value.shape}"
        )
    for axis, (got, want) in enumerate(zip(value.shape, shape, strict=True)):
        if want >= 0 and got != want:
            raise RunError(
                f"input {index}: dimension {axis} must be {want} ({expected}), "
                f"got shape {value.shape}"
            )
    return np.ascontiguousarray(value.astype(dtype, copy=False))


def arguments(function: FuncOp, inputs: Sequence[str]) -> list[np.ndarray]:
    types = list(function.function_type.inputs.data)
    if len(inputs) != len(types):
        raise RunError(
            f"@{function.sym_name.data} takes {len(types)} arguments, "
            f"got {len(inputs)} (-i VALUE, once per argument)"
        )
    values = []
    for index, (text, expected) in enumerate(zip(inputs, types, strict=True)):
        if not isinstance(expected, TensorType):
            raise RunError(f"argument {index} has type {expected}; only tensors can be given")
        values.append(argument(text, index, expected))
    return values


def run(
    module: ModuleOp, function: FuncOp, values: list[np.ndarray], linker: str, optimizer: str
) -> list[np.ndarray]:
    name = function.sym_name.data
    if linker == "py":
        from arignote.runtime.interpreter import InterpretedFunction

        return list(InterpretedFunction(module, name)(*values))
    from arignote.lowering.driver import lower_to_llvm
    from arignote.lowering.pipelines import GRAPH_PIPELINES
    from arignote.runtime.native import compile_function

    in_types = list(function.function_type.inputs.data)
    out_types = list(function.function_type.outputs.data)
    graph = "" if optimizer == "none" else GRAPH_PIPELINES[optimizer]
    lowered = lower_to_llvm(module.clone(), graph)
    checks = lowered.checks.get(f"{name}__shape", [])
    native = compile_function(lowered.module, name, in_types, out_types, checks)
    return list(native(*values))


def report(results: list[np.ndarray], types: Sequence[object], save: str | None) -> None:
    if save:
        os.makedirs(save, exist_ok=True)
    with np.printoptions(threshold=sys.maxsize):
        for index, (result, declared) in enumerate(zip(results, types, strict=True)):
            print(f"// result {index}: {declared} = shape {result.shape}")
            print(np.array2string(np.asarray(result), separator=", "))
            if save:
                np.save(os.path.join(save, f"result{index}.npy"), result)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        module = read_module(args.input_file)
        function = entry_function(module, args.entry)
        values = arguments(function, args.input)
        results = run(module, function, values, args.linker, args.optimizer)
        report(results, list(function.function_type.outputs.data), args.save)
    except RunError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    except (ValueError, TypeError, IndexError, MemoryError) as e:
        # a run-time failure of the function itself (shape mismatch, bad index, ...)
        print(f"{PROG}: error: {type(e).__name__}: {' '.join(str(e).split())}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
