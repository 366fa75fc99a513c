"""Extract the public API of Theano 1.0's modules named by the library reference.

`python docs/make_theano_names.py PATH_TO_THEANO_CHECKOUT > docs/theano_names.txt`

Reads the sources (at `HEAD` of a git checkout of github.com/Theano/Theano) of the modules
that `doc/library/` documents for `theano.tensor` (basic, elemwise, subtensor, sort,
extra_ops, nlinalg, slinalg), `theano.gradient`, `theano.printing`, `theano.scan_module`
and `theano.compile` (issue 13), and the random streams (`theano.tensor.shared_randomstreams`,
`raw_random`, `theano.sandbox.rng_mrg`) and neural-network modules (`theano.tensor.nnet.*`,
`theano.tensor.signal.*`) (issue 14), and lists what Sphinx's `automodule :members:` shows
of each: the top-level functions and classes that are public and documented (a docstring, or an
elemwise op made by `_scal_elemwise`), plus the module-level objects made by a call
(op instances such as `nlinalg.det`, types such as `fmatrix`). Names that are Theano's
own machinery (its optimizer, C code generation, graph-rewriting helpers) are kept in the
list, marked `internal` with the reason, so the page shows them and the count leaves them
out. The functions, classes and methods that the reference pages of `REFERENCE_PAGES`
document are added (`doc/library/tensor/basic.txt`'s too). One line per name:
`module name kind [internal: reason]`.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys

MODULES = {
    "theano.tensor.basic": "theano/tensor/basic.py",
    "theano.tensor.elemwise": "theano/tensor/elemwise.py",
    "theano.tensor.subtensor": "theano/tensor/subtensor.py",
    "theano.tensor.sort": "theano/tensor/sort.py",
    "theano.tensor.extra_ops": "theano/tensor/extra_ops.py",
    "theano.tensor.nlinalg": "theano/tensor/nlinalg.py",
    "theano.tensor.slinalg": "theano/tensor/slinalg.py",
    "theano.gradient": "theano/gradient.py",
    "theano.printing": "theano/printing.py",
    "theano.scan_module.scan": "theano/scan_module/scan.py",
    "theano.scan_module.scan_utils": "theano/scan_module/scan_utils.py",
    "theano.scan_module.scan_views": "theano/scan_module/scan_views.py",
    "theano.scan_module.scan_checkpoints": "theano/scan_module/scan_checkpoints.py",
    "theano.compile.function": "theano/compile/function.py",
    "theano.compile.function_module": "theano/compile/function_module.py",
    "theano.compile.io": "theano/compile/io.py",
    "theano.compile.mode": "theano/compile/mode.py",
    "theano.compile.sharedvalue": "theano/compile/sharedvalue.py",
    "theano.compile.ops": "theano/compile/ops.py",
    "theano.compile.nanguardmode": "theano/compile/nanguardmode.py",
    "theano.compile.monitormode": "theano/compile/monitormode.py",
    "theano.compile.debugmode": "theano/compile/debugmode.py",
    "theano.compile.profiling": "theano/compile/profiling.py",
    "theano.compile.builders": "theano/compile/builders.py",
    # issue 14: random streams and the neural-network library
    "theano.tensor.shared_randomstreams": "theano/tensor/shared_randomstreams.py",
    "theano.tensor.raw_random": "theano/tensor/raw_random.py",
    "theano.sandbox.rng_mrg": "theano/sandbox/rng_mrg.py",
    "theano.tensor.nnet.nnet": "theano/tensor/nnet/nnet.py",
    "theano.tensor.nnet.sigm": "theano/tensor/nnet/sigm.py",
    "theano.tensor.nnet.bn": "theano/tensor/nnet/bn.py",
    "theano.tensor.nnet.neighbours": "theano/tensor/nnet/neighbours.py",
    "theano.tensor.nnet.abstract_conv": "theano/tensor/nnet/abstract_conv.py",
    "theano.tensor.nnet.conv": "theano/tensor/nnet/conv.py",
    "theano.tensor.nnet.conv3d2d": "theano/tensor/nnet/conv3d2d.py",
    "theano.tensor.nnet.blocksparse": "theano/tensor/nnet/blocksparse.py",
    "theano.tensor.nnet.ctc": "theano/tensor/nnet/ctc.py",
    "theano.tensor.signal.pool": "theano/tensor/signal/pool.py",
    "theano.tensor.signal.conv": "theano/tensor/signal/conv.py",
}

OPTIMIZER = "Theano's graph optimizer (arignote's rewrites are xDSL passes)"
C_CODE = "registers C code for Theano's C linker (arignote generates LLVM IR)"
MODULE_STATE = "module-level constant or logger, not an API"
HELPER = "a helper of Theano's own implementation, not a user API"
FUNCTION_MAKER = "Theano's function-building internals (arignote's are `arignote.compile.function`)"
SCAN_INTERNAL = "a helper of Theano's scan implementation and its optimizer"
BEHIND = "the op instance behind the public function of the same name without `_`"
GPU_HELPER = "checks values on pygpu's GPU arrays (the GPU backend is issue 16)"

INTERNAL = {
    **dict.fromkeys(
        [
            "logger",
            "x",
            "numpy_diagonal_return_view",
            "DEPRECATED_ARG",
            "VALID_ASSOC",
            "theano_imported_time",
            "complex_dtypes",
            "continuous_dtypes",
            "float_dtypes",
            "integer_dtypes",
            "discrete_dtypes",
            "all_dtypes",
            "int_dtypes",
            "uint_dtypes",
        ],
        MODULE_STATE,
    ),
    **dict.fromkeys(["f_gpua_min", "f_gpua_max", "f_gpua_absmax"], GPU_HELPER),
    **dict.fromkeys(
        [
            "register_view_op_c_code",
            "register_deep_copy_op_c_code",
            "register_shape_c_code",
            "register_shape_i_c_code",
            "register_rebroadcast_c_code",
            "register_specify_shape_c_code",
        ],
        C_CODE,
    ),
    **dict.fromkeys(
        [
            "OPT_NONE",
            "OPT_MERGE",
            "OPT_FAST_RUN",
            "OPT_FAST_RUN_STABLE",
            "OPT_FAST_COMPILE",
            "OPT_STABILIZE",
            "OPT_O2",
            "OPT_O3",
            "OPT_UNSAFE",
            "register_optimizer",
            "AddDestroyHandler",
            "AddFeatureOptimizer",
            "PrintCurrentFunctionGraph",
            "optdb",
            "local_useless",
            "register_linker",
            "inline_ofg_expansion",
            "Supervisor",
        ],
        OPTIMIZER,
    ),
    **dict.fromkeys(
        [
            "alias_root",
            "view_tree_set",
            "infer_reuse_pattern",
            "fgraph_updated_vars",
            "std_fgraph",
            "insert_deepcopy",
            "FunctionMaker",
            "orig_function",
            "convert_function_input",
            "get_info_on_inputs",
            "AliasedMemoryError",
        ],
        FUNCTION_MAKER,
    ),
    **dict.fromkeys(
        [
            "safe_new",
            "traverse",
            "clone",
            "map_variables",
            "get_updates_and_outputs",
            "expand_empty",
            "equal_computations",
            "infer_shape",
            "Validator",
            "scan_can_remove_outs",
            "compress_outs",
            "reconstruct_graph",
            "scan_args",
            "forced_replace",
        ],
        SCAN_INTERNAL,
    ),
    **dict.fromkeys(
        [
            "char_from_number",
            "data_destroyed",
            "mod_check",
            "div_proxy",
            "makeKeepDims",
            "check_and_normalize_axes",
            "constructor",
            "check_equal_numpy",
            "make_constant",
            "get_idx_list",
            "get_canonical_form_slice",
            "adv_index_broadcastable_pattern",
            "check_advanced_indexing_dimensions",
            "is_flat",
            "register_transfer",
            "format_as",
            "generic_constructor",
            "numpy_scalar",
            "Default",
            "default",
            "ShapeError",
            "EmptyConstantError",
            "OutputGuard",
        ],
        HELPER,
    ),
    # issue 14's modules
    **dict.fromkeys(
        [
            "local_logsoftmax",
            "local_logsoftmax_grad",
            "local_softmax_with_bias",
            "crossentropy_to_crossentropy_with_softmax_with_bias",
            "crossentropy_to_crossentropy_with_softmax",
            "local_useless_crossentropy_softmax_1hot_with_bias_dx_alloc",
            "local_ultra_fast_sigmoid",
            "logsigm_to_softplus",
            "log1msigm_to_softplus",
            "log1pexp_to_softplus",
            "log1p_neg_sigmoid",
            "is_1pexp",
            "is_exp",
            "is_mul",
            "is_neg",
            "local_exp_over_1_plus_exp",
            "parse_mul_tree",
            "replace_leaf",
            "simplify_mul",
            "compute_mul",
            "perform_sigm_times_exp",
            "local_sigm_times_exp",
            "local_inv_1_plus_exp",
            "local_1msigmoid",
            "bn_groupopt",
            "local_inplace_DiagonalSubtensor",
        ],
        OPTIMIZER,
    ),
    **dict.fromkeys(["gen_conv_code_unroll_batch_kern"], C_CODE),
    **dict.fromkeys(
        [
            "M1",
            "M2",
            "MASK12",
            "MASK13",
            "MASK2",
            "MULT2",
            "A1p72",
            "A2p72",
            "A1p134",
            "A2p134",
            "PoolingMode_t",
        ],
        MODULE_STATE,
    ),
    **dict.fromkeys(
        [
            "join_",
            "bartlett_",
            "fill_diagonal_",
            "fill_diagonal_offset_",
            "consider_constant_",
            "zero_grad_",
            "undefined_grad_",
            "disconnected_grad_",
        ],
        BEHIND,
    ),
}


def show(repo: str, path: str) -> str:
    command = ["git", "-C", repo, "show", "HEAD:" + path]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def is_elemwise(node: ast.FunctionDef) -> bool:
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Name) and target.id == "_scal_elemwise":
            return True
    return False


OP_BASES = {
    "Op",
    "COp",
    "OpenMPOp",
    "PureOp",
    "Elemwise",
    "CAReduce",
    "CAReduceDtype",
    "DimShuffle",
    "Subtensor",
    "IncSubtensor",
    "BaseAdvancedSubtensor",
    "BaseAdvancedIncSubtensor",
    "ScalarOp",
    "UnaryScalarOp",
    "BinaryScalarOp",
    "Scan",
    "OpFromGraph",
    "ViewOp",
}


USER_CLASSES = {"OpFromGraph", "Print"}
"""Op classes that users instantiate themselves (not the op behind a function)."""


def _base_name(base: ast.expr) -> str:
    return base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")


def op_classes(tree: ast.Module) -> set[str]:
    """The classes that are Theano Ops: derived from an Op base, here or imported."""
    ops: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            bases = {_base_name(base) for base in node.bases}
            if bases & (OP_BASES | ops):
                ops.add(node.name)
    return ops


def members(source: str) -> list[tuple[str, str]]:
    """(name, kind) of the documented public top-level names, in source order, once each.

    kind: "function", "object" (made by a call: an op instance, a type), "opclass" (a
    class that is a Theano Op) or "class"."""
    found: dict[str, str] = {}
    tree = ast.parse(source)
    ops = op_classes(tree)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and ast.get_docstring(node):
            is_op = node.name in ops and node.name not in USER_CLASSES
            found.setdefault(node.name, "opclass" if is_op else "class")
        elif isinstance(node, ast.FunctionDef) and (ast.get_docstring(node) or is_elemwise(node)):
            found.setdefault(node.name, "function")
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found.setdefault(target.id, "object")
    return [(name, kind) for name, kind in found.items() if not name.startswith("_")]


DIRECTIVE = re.compile(r"^(\s*)\.\. (?:auto)?(function|method|class|attribute)::\s*(.*)$")
NOT_A_NAME = {"__init__", "broadcastable", "ndim", "dtype", "type", "T"}


DOC_TYPOS = {"conf": "conj"}
"""basic.txt documents `conf()` for the complex conjugate method, `conj`."""


def _directive_names(text: str) -> list[str]:
    """`iscalars, lscalars`, `{sum,prod,mean}(...)` and `__{abs,neg}__` spell several names."""
    text = text.split("(")[0]
    if text.startswith("__{"):
        inner = text.removeprefix("__{").split("}")[0]
        return [f"__{name}__" for name in inner.split(",")]
    text = text.replace("{", "").replace("}", "")
    names = []
    for part in re.split(r"[,\s]+", text):
        name = part.rpartition(".")[2]
        if name.isidentifier() and not name.startswith("_"):
            names.append(DOC_TYPOS.get(name, name))
    return names


def reference_names(page: str) -> list[tuple[str, str, str]]:
    """(module, name, kind) that `doc/library/tensor/basic.txt` documents outside of the
    modules' members: module-level functions as `theano.tensor`, and the methods of
    tensor variables (`_tensor_py_operators`) as `theano.tensor.TensorVariable`."""
    found = []
    in_methods = False
    for line in page.splitlines():
        match = DIRECTIVE.match(line)
        if not match:
            continue
        indent, kind, rest = match.groups()
        if not indent:
            in_methods = rest.startswith("_tensor_py_operators")
        if kind == "method" and in_methods and indent:
            module = "theano.tensor.TensorVariable"
            found += [(module, n, "method") for n in _directive_names(rest)]
        elif kind == "function" and not indent:
            found += [("theano.tensor", n, "function") for n in _directive_names(rest)]
    return [(m, n, k) for m, n, k in found if n not in NOT_A_NAME]


REFERENCE_PAGES = {
    # issue 14: the library reference's pages of the neural-network and random modules
    "doc/library/tensor/nnet/nnet.txt": "theano.tensor.nnet.nnet",
    "doc/library/tensor/nnet/conv.txt": "theano.tensor.nnet",
    "doc/library/tensor/nnet/bn.txt": "theano.tensor.nnet.bn",
    "doc/library/tensor/nnet/neighbours.txt": "theano.tensor.nnet.neighbours",
    "doc/library/tensor/nnet/ctc.txt": "theano.tensor.nnet.ctc",
    "doc/library/tensor/signal/pool.txt": "theano.tensor.signal.pool",
    "doc/library/tensor/shared_randomstreams.txt": "theano.tensor.shared_randomstreams",
    "doc/library/tensor/raw_random.txt": "theano.tensor.raw_random",
}
"""Pages whose `.. function::`/`.. autofunction::`/`.. class::` entries (and the methods
of their classes) are listed too: `autofunction` names its module, the others belong to
the page's module (the value)."""

AUTO = re.compile(r"^(\s*)\.\. (autofunction|autoclass|function|class|method)::\s*(.*)$")


def page_names(page: str, module: str) -> list[tuple[str, str, str]]:
    """(module, name, kind) of the entries of one reference page: methods as
    `module.Class` with kind `method`."""
    found = []
    current_class = None
    for line in page.splitlines():
        match = AUTO.match(line)
        if not match:
            continue
        indent, directive, rest = match.groups()
        if directive.startswith("auto"):
            owner, _, name = rest.split("(")[0].strip().rpartition(".")
            found.append((owner, name, "class" if directive == "autoclass" else "function"))
        elif directive == "method" and indent and current_class:
            found += [(f"{module}.{current_class}", n, "method") for n in _directive_names(rest)]
        elif not indent:
            names = _directive_names(rest)
            current_class = names[0] if directive == "class" and names else None
            found += [(module, n, directive) for n in names]
    return [(m, n, k) for m, n, k in found if n not in NOT_A_NAME and n != "todo"]


def main(repo: str) -> None:
    print("# Theano 1.0's documented public API (docs/make_theano_names.py); module name kind")
    seen = set()
    for module, path in MODULES.items():
        for name, kind in members(show(repo, path)):
            reason = INTERNAL.get(name)
            suffix = f" internal: {reason}" if reason else ""
            print(f"{module} {name} {kind}{suffix}")
            seen.update([name, (module, name)])
    for module, name, kind in reference_names(show(repo, "doc/library/tensor/basic.txt")):
        if (module == "theano.tensor" and name in seen) or (module, name) in seen:
            continue
        print(f"{module} {name} {kind}")
        seen.add((module, name))
    for path, page_module in REFERENCE_PAGES.items():
        for module, name, kind in page_names(show(repo, path), page_module):
            if (module, name) in seen or (module == page_module and name in seen):
                continue
            print(f"{module} {name} {kind}")
            seen.add((module, name))


if __name__ == "__main__":
    main(sys.argv[1])
