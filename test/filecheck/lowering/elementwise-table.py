# RUN: python %s | arignote-opt -p to-loops | filecheck %s
# RUN: python %s | arignote-opt -p to-llvm | filecheck %s --check-prefix=LLVM
# RUN: python %s | arignote-opt -p to-llvm | filecheck %s --check-prefix=INLINE

# Every table-driven elementwise op (`ag.TABLE`), generated from the table: one function
# per op, on f32 for the unary ones (f64 for the binary ones; i32 for the bitwise ones,
# whose unary one also runs on i1), lowered to scalar arith/math ops in a loop, then to
# llvm intrinsics and libm calls. `isnan`/`isinf` also run on i32 (a constant false).
# The trigonometric, hyperbolic, exp2/log2/log10 functions and hypot are expanded inline
# (`lowering/loops/vector_math.py`): neither libm calls nor `llvm.intr.sin`-like intrinsics
# (hypot's declaration stays, uncalled).

from arignote.dialects import ag


def emit(name: str, entry: ag.Elementwise, e: str) -> None:
    t = f"tensor<?x{e}>"
    r = "tensor<?xi1>" if entry.result == "bool" else t
    if entry.arity == 1:
        arrow = f" -> {r}" if entry.result == "bool" else ""
        print(f"func.func @ag_{name}(%x: {t}) -> {r} {{")
        print(f"  %r = ag.{entry.name} %x : {t}{arrow}")
    else:
        print(f"func.func @ag_{name}(%y: {t}, %x: {t}) -> {r} {{")
        print(f"  %r = ag.{entry.name} %y, %x : {t}, {t} -> {r}")
    print(f"  func.return %r : {r}")
    print("}")


for entry in ag.TABLE:
    if entry.category == "integer":
        emit(entry.name, entry, "i32")
    else:
        emit(entry.name, entry, "f32" if entry.arity == 1 else "f64")
    if entry.result == "bool":
        emit(entry.name + "_i32", entry, "i32")
    if entry.category == "integer" and entry.arity == 1:
        emit(entry.name + "_i1", entry, "i1")

# CHECK-LABEL: func.func @ag_sin(
# CHECK:         math.sin %{{.*}} : f32
# CHECK-LABEL: func.func @ag_cos(
# CHECK:         math.cos %{{.*}} : f32
# CHECK-LABEL: func.func @ag_tan(
# CHECK:         math.tan %{{.*}} : f32
# CHECK-LABEL: func.func @ag_arcsin(
# CHECK:         math.asin %{{.*}} : f32
# CHECK-LABEL: func.func @ag_arccos(
# CHECK:         math.acos %{{.*}} : f32
# CHECK-LABEL: func.func @ag_arctan(
# CHECK:         math.atan %{{.*}} : f32
# CHECK-LABEL: func.func @ag_sinh(
# CHECK:         math.sinh %{{.*}} : f32
# CHECK-LABEL: func.func @ag_cosh(
# CHECK:         math.cosh %{{.*}} : f32
# CHECK-LABEL: func.func @ag_arcsinh(
# CHECK:         math.asinh %{{.*}} : f32
# CHECK-LABEL: func.func @ag_arccosh(
# CHECK:         math.acosh %{{.*}} : f32
# CHECK-LABEL: func.func @ag_arctanh(
# CHECK:         math.atanh %{{.*}} : f32
# CHECK-LABEL: func.func @ag_exp2(
# CHECK:         math.exp2 %{{.*}} : f32
# CHECK-LABEL: func.func @ag_log2(
# CHECK:         math.log2 %{{.*}} : f32
# CHECK-LABEL: func.func @ag_log10(
# CHECK:         math.log10 %{{.*}} : f32
# CHECK-LABEL: func.func @ag_sqr(
# CHECK:         %[[X:.*]] = memref.load
# CHECK-NEXT:    arith.mulf %[[X]], %[[X]] : f32
# CHECK-LABEL: func.func @ag_inv(
# CHECK:         %[[X:.*]] = memref.load
# CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
# CHECK-NEXT:    arith.divf %[[ONE]], %[[X]] : f32
# CHECK-LABEL: func.func @ag_sgn(
# CHECK:         %[[X:.*]] = memref.load
# CHECK:         arith.cmpf oeq, %[[X]]
# CHECK:         arith.cmpf olt, %[[X]]
# CHECK:         arith.cmpf ogt, %[[X]]
# CHECK-LABEL: func.func @ag_trunc(
# CHECK:         math.trunc %{{.*}} : f32
# CHECK-LABEL: func.func @ag_deg2rad(
# CHECK:         %[[C:.*]] = arith.constant 0.0174532{{[0-9]*}} : f32
# CHECK-NEXT:    arith.mulf %{{.*}}, %[[C]] : f32
# CHECK-LABEL: func.func @ag_rad2deg(
# CHECK:         %[[C:.*]] = arith.constant 57.29578{{[0-9]*}} : f32
# CHECK-NEXT:    arith.mulf %{{.*}}, %[[C]] : f32
# CHECK-LABEL: func.func @ag_arctan2(
# CHECK:         math.atan2 %{{.*}}, %{{.*}} : f64
# CHECK-LABEL: func.func @ag_hypot(
# CHECK:         func.call @hypot(%{{.*}}, %{{.*}}) : (f64, f64) -> f64
# CHECK-LABEL: func.func @ag_isnan(
# CHECK:         %[[X:.*]] = memref.load
# CHECK-NEXT:    arith.cmpf uno, %[[X]], %[[X]] : f32
# CHECK-LABEL: func.func @ag_isnan_i32(
# CHECK:         arith.constant false
# CHECK-NOT:     arith.cmp
# CHECK-LABEL: func.func @ag_isinf(
# CHECK:         %[[A:.*]] = math.absf %{{.*}} : f32
# CHECK-NEXT:    %[[INF:.*]] = arith.constant 0x7f800000 : f32
# CHECK-NEXT:    arith.cmpf oeq, %[[A]], %[[INF]] : f32
# CHECK-LABEL: func.func @ag_isinf_i32(
# CHECK:         arith.constant false
# CHECK-LABEL: func.func @ag_and_(
# CHECK:         arith.andi %{{.*}}, %{{.*}} : i32
# CHECK-LABEL: func.func @ag_or_(
# CHECK:         arith.ori %{{.*}}, %{{.*}} : i32
# CHECK-LABEL: func.func @ag_xor(
# CHECK:         arith.xori %{{.*}}, %{{.*}} : i32
# CHECK-LABEL: func.func @ag_invert(
# CHECK:         %[[M:.*]] = arith.constant -1 : i32
# CHECK-NEXT:    arith.xori %{{.*}}, %[[M]] : i32
# CHECK-LABEL: func.func @ag_invert_i1(
# CHECK:         %[[T:.*]] = arith.constant true
# CHECK-NEXT:    arith.xori %{{.*}}, %[[T]] : i1
# CHECK:       func.func private @hypot(f64, f64) -> f64

# LLVM-DAG:    llvm.func @hypot(f64, f64) -> f64
# LLVM-DAG:    llvm.call_intrinsic "llvm.trunc.f32"

# INLINE-NOT:  llvm.{{(func|call)}} @{{(tan|a?sinh?|a?cosh?|atanh?|atan2|exp2|log2|log10)f?}}(
# INLINE-NOT:  llvm.call @{{hypotf?}}(
# INLINE-NOT:  llvm.intr.{{(sin|cos|exp2|log2)}}(
# INLINE-NOT:  "llvm.log10.
