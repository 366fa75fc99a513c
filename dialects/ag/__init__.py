"""The `ag` dialect: arignote's tensor-level operations.

Every value is a builtin `tensor` with a static rank. A dimension is either dynamic
(`?`), the static length 1 (a *broadcastable* dimension in Theano's terms), or another
static length. Element types are `f32`, `f64`, `i1` (bool), `i8`, `i16`, `i32` and
`i64`; integers are signed.

Broadcasting follows NumPy's rules on the static shapes, right-aligned: a static 1
stretches to the other operand's length, two static lengths must be equal, and a
dynamic dimension paired with a dynamic or static length must be equal to it at run
time (as in Theano, a dynamic dimension never broadcasts; only a static 1 does).
The runtime checks these equalities before touching any memory.

```mlir
%s = ag.add %x, %row : tensor<?x?xf32>, tensor<1x?xf32> -> tensor<?x?xf32>
%m = ag.reduce_sum %s {axes = array<i64: 0>} : tensor<?x?xf32> -> tensor<?xf32>
```
"""

from __future__ import annotations

from xdsl.ir import Dialect

from arignote.dialects.ag.base import (
    DYNAMIC,
    NEWAXIS,
    Shape,
    broadcast_dim,
    broadcast_shapes,
    is_bool,
    is_complex,
    is_float,
    is_int,
    is_supported_element,
    is_unsigned,
    shape_str,
    tensor_type,
    value_shape,
)
from arignote.dialects.ag.complex import COMPLEX_OPS, ComplexOp, ImagOp, RealOp
from arignote.dialects.ag.control import IfOp, YieldOp

# --- convolution (issue 14, conv) ---
from arignote.dialects.ag.conv import (
    CONV_OPS,
    PAD_FULL,
    PAD_HALF,
    ConvBase,
    ConvGradInputsOp,
    ConvGradWeightsOp,
    ConvOp,
    ConvParams,
    conv_out_length,
    resolve_pad,
)
from arignote.dialects.ag.data_shapes import (  # shapes and indexing (issue 13 item 3)
    DATA_SHAPE_OPS,
    AssertOp,
    FlatNonzeroOp,
    SpecifyShapeOp,
    specify_shape_shape,
)
from arignote.dialects.ag.debug import DEBUG_OPS, PrintOp, ProfileBeginOp, ProfileEndOp
from arignote.dialects.ag.elementwise import (
    AbsOp,
    AddOp,
    BinaryElementwiseOp,
    CastOp,
    ComparisonOp,
    ConstantOp,
    DivOp,
    EqOp,
    FloorDivOp,
    GeOp,
    GtOp,
    LeOp,
    LtOp,
    MaximumOp,
    MinimumOp,
    ModOp,
    MulOp,
    NegOp,
    NeOp,
    PowOp,
    SelectOp,
    SubOp,
    UnaryElementwiseOp,
    UnaryPredicateOp,
)
from arignote.dialects.ag.elementwise_table import (
    BINARY_TABLE_OPS,
    OPS,
    TABLE,
    UNARY_TABLE_OPS,
    Elementwise,
)

# --- extra_ops and sort (issue 13 item 4) ---
from arignote.dialects.ag.extra_ops import (
    CUMULATIVE_OPS,
    EXTRA_OPS,
    SEARCH_SIDES,
    SORT_OPS,
    ArgSortOp,
    AxisOp,
    CumProdOp,
    CumSumOp,
    CumulativeOp,
    SearchSortedOp,
    SortOp,
)
from arignote.dialects.ag.fused import (
    DESTROY_MAP_ATTRIBUTE,
    POINTWISE_OPS,
    FusedOp,
    destroy_map,
    is_splat,
    set_destroy_map,
    verify_destroy_map,
)
from arignote.dialects.ag.indexing import (
    DYNAMIC_VALUE,
    INDEX,
    INDEXING_OPS,
    SLICE,
    SLICE_NONE,
    AdvancedIncSubtensorOp,
    AdvancedSetSubtensorOp,
    AdvancedSubtensorOp,
    AdvancedSubtensorUpdateOp,
    AllocOp,
    ArangeOp,
    ConcatenateOp,
    IncSubtensorOp,
    ReshapeOp,
    SetSubtensorOp,
    SubtensorBase,
    SubtensorOp,
    SubtensorUpdateOp,
    advanced_subtensor_shape,
    alloc_shape,
    concatenate_shape,
    reshape_shape,
    slice_length,
    subtensor_shape,
    view_map,
)
from arignote.dialects.ag.lapack import (  # linear algebra (issue 13 item 5)
    LAPACK_ERRORS,
    LAPACK_OPS,
    CholeskyOp,
    DetOp,
    EighOp,
    EigOp,
    LapackOp,
    MatrixInverseOp,
    QrOp,
    SolveOp,
    SvdOp,
)
from arignote.dialects.ag.layout import (
    DimShuffleOp,
    dimshuffle_shape,
)
from arignote.dialects.ag.linalg import (
    BLAS_OPS,
    INITIAL_OPERAND,
    DotOp,
    GemmOp,
    GemvOp,
    dot_shape,
    gemm_shape,
    gemv_shape,
)
from arignote.dialects.ag.math import (
    ARG_REDUCE_OPS,
    MATH_UNARY_OPS,
    ArgMaxOp,
    ArgMinOp,
    ArgReduceOp,
    DimOp,
    RoundEvenOp,
    RoundOp,
    SigmoidOp,
    SoftplusOp,
)
from arignote.dialects.ag.parallel import PARALLEL_OPS, ParallelForOp, ParallelWidthOp

# --- pooling (issue 14 item 2, area pool) ---
from arignote.dialects.ag.pool import (
    AVERAGE_MODES,
    POOL_MODES,
    POOL_OPS,
    TIES,
    AveragePoolGradOp,
    MaxPoolGradGradOp,
    MaxPoolGradOp,
    PoolBase,
    PoolOp,
    check_pool_parameters,
    pooled_length,
    pooled_shape,
)
from arignote.dialects.ag.reductions import (
    ReduceMaxOp,
    ReduceMinOp,
    ReduceOp,
    ReduceProdOp,
    ReduceSumOp,
    reduce_shape,
)
from arignote.dialects.ag.rowwise import ROW_OPS, GemvPairOp
from arignote.dialects.ag.scan import ScanOp
from arignote.dialects.ag.updates import (
    INPLACE_RESULTS_ATTRIBUTE,
    UPDATES_ATTRIBUTE,
    result_pairs,
    set_result_pairs,
)

BINARY_OPS: tuple[type[BinaryElementwiseOp], ...] = (
    AddOp,
    SubOp,
    MulOp,
    DivOp,
    FloorDivOp,
    ModOp,
    PowOp,
    MaximumOp,
    MinimumOp,
    LtOp,
    LeOp,
    GtOp,
    GeOp,
    EqOp,
    NeOp,
    *BINARY_TABLE_OPS,
)
UNARY_OPS: tuple[type[UnaryElementwiseOp], ...] = (
    NegOp,
    AbsOp,
    *MATH_UNARY_OPS,
    *UNARY_TABLE_OPS,
)
REDUCE_OPS: tuple[type[ReduceOp], ...] = (ReduceSumOp, ReduceProdOp, ReduceMaxOp, ReduceMinOp)

# custom ops (issue 13 item 8): Python code called from the graph
# collectives across the processes of an MPI job (issue 17)
from arignote.dialects.ag.distributed import (  # noqa: E402
    DISTRIBUTED_OPS,
    REDUCTIONS,
    AllreduceOp,
)
from arignote.dialects.ag.python import PYTHON_OPS, PythonOp  # noqa: E402

# random streams (issue 14, mrg): MRG31k3p
from arignote.dialects.ag.random import RANDOM_OPS, MrgBinomialOp, MrgUniformOp  # noqa: E402

# nnet functions (issue 14): row-wise softmax and its gradient
from arignote.dialects.ag.softmax import (  # noqa: E402
    SOFTMAX_OPS,
    XENT_OPS,
    LogSoftmaxOp,
    SoftmaxGradOp,
    SoftmaxOp,
    SoftmaxXentGradOp,
    SoftmaxXentOp,
    SoftmaxXentPairOp,
    softmax_shape_source,
)

Ag = Dialect(
    "ag",
    [
        ConstantOp,
        *BINARY_OPS,
        *UNARY_OPS,
        SelectOp,
        CastOp,
        DimShuffleOp,
        *REDUCE_OPS,
        DotOp,
        *BLAS_OPS,
        *LAPACK_OPS,
        *COMPLEX_OPS,
        *INDEXING_OPS,
        *DATA_SHAPE_OPS,
        *ARG_REDUCE_OPS,
        DimOp,
        YieldOp,
        GemvPairOp,
        ScanOp,
        *DEBUG_OPS,
        IfOp,
        FusedOp,
        *PARALLEL_OPS,
        *PYTHON_OPS,
        *EXTRA_OPS,
        *SOFTMAX_OPS,  # nnet functions (issue 14)
        *RANDOM_OPS,
        *CONV_OPS,  # convolution (issue 14, conv)
        *POOL_OPS,  # pooling (issue 14 item 2)
        *DISTRIBUTED_OPS,
    ],
    [],
)

__all__ = [
    # random streams (issue 14, mrg)
    "RANDOM_OPS",
    "MrgBinomialOp",
    "MrgUniformOp",
    # convolution (issue 14, conv)
    "CONV_OPS",
    "ConvBase",
    "ConvGradInputsOp",
    "ConvGradWeightsOp",
    "ConvOp",
    "ConvParams",
    "conv_out_length",
    "PAD_FULL",
    "PAD_HALF",
    "resolve_pad",
    "PYTHON_OPS",
    "PythonOp",
    "DATA_SHAPE_OPS",
    "AssertOp",
    "FlatNonzeroOp",
    "SpecifyShapeOp",
    "specify_shape_shape",
    # nnet functions (issue 14)
    "SOFTMAX_OPS",
    "XENT_OPS",
    "LogSoftmaxOp",
    "SoftmaxGradOp",
    "SoftmaxOp",
    "SoftmaxXentGradOp",
    "SoftmaxXentOp",
    "SoftmaxXentPairOp",
    "softmax_shape_source",
    # pooling (issue 14 item 2, area pool)
    "AVERAGE_MODES",
    "POOL_MODES",
    "POOL_OPS",
    "TIES",
    "AveragePoolGradOp",
    "MaxPoolGradGradOp",
    "MaxPoolGradOp",
    "PoolBase",
    "PoolOp",
    "check_pool_parameters",
    "pooled_length",
    "pooled_shape",
    # extra_ops and sort (issue 13 item 4)
    "CUMULATIVE_OPS",
    "EXTRA_OPS",
    "SEARCH_SIDES",
    "SORT_OPS",
    "ArgSortOp",
    "AxisOp",
    "CumProdOp",
    "CumSumOp",
    "CumulativeOp",
    "SearchSortedOp",
    "SortOp",
    "COMPLEX_OPS",
    "ComplexOp",
    "ImagOp",
    "RealOp",
    "PARALLEL_OPS",
    "ParallelForOp",
    "ParallelWidthOp",
    "GemvPairOp",
    "ROW_OPS",
    "DEBUG_OPS",
    "DISTRIBUTED_OPS",
    "REDUCTIONS",
    "AllreduceOp",
    "PrintOp",
    "ProfileBeginOp",
    "ProfileEndOp",
    "IfOp",
    "YieldOp",
    "value_shape",
    "ScanOp",
    "FusedOp",
    "POINTWISE_OPS",
    "is_splat",
    "DESTROY_MAP_ATTRIBUTE",
    "destroy_map",
    "set_destroy_map",
    "verify_destroy_map",
    "UPDATES_ATTRIBUTE",
    "INPLACE_RESULTS_ATTRIBUTE",
    "result_pairs",
    "set_result_pairs",
    "view_map",
    "INDEX",
    "SLICE",
    "ARG_REDUCE_OPS",
    "AbsOp",
    "AddOp",
    "AdvancedIncSubtensorOp",
    "AdvancedSetSubtensorOp",
    "AdvancedSubtensorOp",
    "AdvancedSubtensorUpdateOp",
    "Ag",
    "AllocOp",
    "ArangeOp",
    "ArgMaxOp",
    "ArgMinOp",
    "ArgReduceOp",
    "BINARY_OPS",
    "BINARY_TABLE_OPS",
    "OPS",
    "TABLE",
    "UNARY_TABLE_OPS",
    "Elementwise",
    "BLAS_OPS",
    "INITIAL_OPERAND",
    "BinaryElementwiseOp",
    "CastOp",
    "ComparisonOp",
    "ConcatenateOp",
    "ConstantOp",
    "DYNAMIC",
    "DYNAMIC_VALUE",
    "DimOp",
    "DimShuffleOp",
    "DivOp",
    "DotOp",
    "EqOp",
    "FloorDivOp",
    "GeOp",
    "GemmOp",
    "GemvOp",
    "GtOp",
    "INDEXING_OPS",
    "IncSubtensorOp",
    "LeOp",
    "LtOp",
    "MATH_UNARY_OPS",
    "MaximumOp",
    "MinimumOp",
    "ModOp",
    "MulOp",
    "NEWAXIS",
    # linear algebra (issue 13 item 5)
    "LAPACK_ERRORS",
    "LAPACK_OPS",
    "CholeskyOp",
    "DetOp",
    "EighOp",
    "EigOp",
    "LapackOp",
    "MatrixInverseOp",
    "QrOp",
    "SolveOp",
    "SvdOp",
    "NeOp",
    "NegOp",
    "PowOp",
    "REDUCE_OPS",
    "ReduceMaxOp",
    "ReduceMinOp",
    "ReduceOp",
    "ReduceProdOp",
    "ReduceSumOp",
    "ReshapeOp",
    "RoundEvenOp",
    "RoundOp",
    "SLICE_NONE",
    "SelectOp",
    "SetSubtensorOp",
    "Shape",
    "SigmoidOp",
    "SoftplusOp",
    "SubOp",
    "SubtensorBase",
    "SubtensorOp",
    "SubtensorUpdateOp",
    "UNARY_OPS",
    "UnaryElementwiseOp",
    "UnaryPredicateOp",
    "advanced_subtensor_shape",
    "alloc_shape",
    "broadcast_dim",
    "broadcast_shapes",
    "concatenate_shape",
    "dimshuffle_shape",
    "dot_shape",
    "gemm_shape",
    "gemv_shape",
    "is_bool",
    "is_complex",
    "is_float",
    "is_int",
    "is_supported_element",
    "is_unsigned",
    "reduce_shape",
    "reshape_shape",
    "shape_str",
    "slice_length",
    "subtensor_shape",
    "tensor_type",
]

# The table's op classes (`SinOp`, `Arctan2Op`, ...) as attributes of the dialect.
globals().update({cls.__name__: cls for cls in OPS.values()})
__all__ += [cls.__name__ for cls in OPS.values()]  # noqa: PLE0605 - generated names
