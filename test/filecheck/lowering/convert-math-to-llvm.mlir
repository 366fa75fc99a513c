// RUN: arignote-opt %s -p "convert-math-to-llvm{libm=true}" | filecheck %s
// RUN: arignote-opt %s -p convert-math-to-llvm | filecheck %s --check-prefix=INLINE

// By default exp, log, log1p, expm1, tanh, the trigonometric and hyperbolic functions and
// their inverses, exp2, log2 and log10 are expanded inline into branch-free llvm ops (no
// libm call, no llvm.intr.exp/sin or a call_intrinsic of them: both would keep loops scalar); `libm=true` keeps the
// calls.
// INLINE-NOT:  llvm.func @tanh
// INLINE-NOT:  llvm.func @log1p
// INLINE-NOT:  llvm.func @expm1
// INLINE-NOT:  llvm.func @tanhf

// The libm functions are declared once per module, at its top.
// CHECK:      builtin.module {
// CHECK-DAG:  llvm.func @log1p(f64) -> f64
// CHECK-DAG:  llvm.func @tanhf(f32) -> f32
// CHECK-DAG:  llvm.func @tanh(f64) -> f64

// CHECK-LABEL: func.func @f64_ops
func.func @f64_ops(%x: f64, %y: f64) -> f64 {
  // CHECK:      %[[E:.*]] = llvm.call_intrinsic "llvm.exp.f64"(%x) : (f64) -> f64
  // CHECK-NEXT: %[[T:.*]] = llvm.call @tanh(%[[E]]) : (f64) -> f64
  // CHECK-NEXT: %[[T2:.*]] = llvm.call @tanh(%[[T]]) : (f64) -> f64
  // CHECK-NEXT: %[[L:.*]] = llvm.call @log1p(%[[T2]]) : (f64) -> f64
  // CHECK-NEXT: %[[P:.*]] = llvm.call_intrinsic "llvm.pow.f64"(%[[L]], %y) : (f64, f64) -> f64
  // CHECK-NEXT: %[[R:.*]] = llvm.call_intrinsic "llvm.round.f64"(%[[P]]) : (f64) -> f64
  // CHECK-NEXT: %[[A:.*]] = llvm.call_intrinsic "llvm.fabs.f64"(%[[R]]) : (f64) -> f64
  // CHECK-NEXT: %[[F:.*]] = llvm.intr.fma(%[[A]], %x, %y) : (f64, f64, f64) -> f64
  // CHECK-NEXT: return %[[F]] : f64
  %0 = math.exp %x : f64
  %1 = math.tanh %0 : f64
  %2 = math.tanh %1 : f64
  %3 = math.log1p %2 : f64
  %4 = math.powf %3, %y : f64
  %5 = math.round %4 : f64
  %6 = math.absf %5 : f64
  %7 = math.fma %6, %x, %y : f64
  return %7 : f64
}

// CHECK-LABEL: func.func @f32_ops
func.func @f32_ops(%x: f32, %i: i32) -> (f32, i32) {
  // CHECK:      %[[T:.*]] = llvm.call @tanhf(%x) : (f32) -> f32
  // CHECK-NEXT: %[[S:.*]] = llvm.call_intrinsic "llvm.sqrt.f32"(%[[T]]) : (f32) -> f32
  // CHECK-NEXT: %[[F:.*]] = llvm.mlir.constant(false) : i1
  // CHECK-NEXT: %[[A:.*]] = llvm.call_intrinsic "llvm.abs.i32"(%i, %[[F]]) : (i32, i1) -> i32
  // CHECK-NEXT: return %[[S]], %[[A]] : f32, i32
  %0 = math.tanh %x : f32
  %1 = math.sqrt %0 : f32
  %2 = math.absi %i : i32
  return %1, %2 : f32, i32
}

// The inline exp: clamp, Cody-Waite reduction with the round-to-integer trick, the
// polynomial (fmuladd), scaling by 2**k as two power-of-two factors, NaN restored.
// INLINE-LABEL: func.func @exp_f32
// INLINE-NOT:   llvm.call
// INLINE-NOT:   llvm.exp
// INLINE:       llvm.fcmp "ogt" %x
// INLINE:       llvm.select
// INLINE:       %[[SHIFTED:.*]] = llvm.fadd %{{.*}}, %{{.*}} : f32
// INLINE:       llvm.bitcast %[[SHIFTED]] : f32 to i32
// INLINE:       llvm.call_intrinsic "llvm.fmuladd.f32"
// INLINE:       llvm.shl
// INLINE:       llvm.bitcast %{{.*}} : i32 to f32
// INLINE:       %[[NAN:.*]] = llvm.fcmp "uno" %x, %x : f32
// INLINE:       %[[R:.*]] = llvm.select %[[NAN]]
// INLINE-NEXT:  func.return %[[R]] : f32
func.func @exp_f32(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  return %0 : f32
}

// log: the exponent and mantissa from the bits (i64 for f64), fdlibm's s = f / (2 + f).
// INLINE-LABEL: func.func @log_f64
// INLINE-NOT:   llvm.call
// INLINE-NOT:   llvm.log
// INLINE:       llvm.bitcast %{{.*}} : f64 to i64
// INLINE:       llvm.ashr %{{.*}} : i64
// INLINE:       llvm.fdiv
// INLINE:       llvm.call_intrinsic "llvm.fmuladd.f64"
// INLINE:       func.return
func.func @log_f64(%x: f64) -> f64 {
  %0 = math.log %x : f64
  return %0 : f64
}

// tanh, log1p and expm1 are inline too; functions without an expansion stay calls.
// INLINE-LABEL: func.func @others
// INLINE-NOT:   llvm.call @tanhf
// INLINE-NOT:   llvm.call @log1p
// INLINE-NOT:   llvm.call @expm1
// INLINE:       llvm.call_intrinsic "llvm.copysign.f32"
// INLINE:       llvm.call @erff(%{{.*}}) : (f32) -> f32
func.func @others(%x: f32, %y: f64) -> (f32, f64, f64) {
  %0 = math.tanh %x : f32
  %1 = math.log1p %y : f64
  %2 = math.expm1 %1 : f64
  %3 = math.erf %0 : f32
  return %3, %1, %2 : f32, f64, f64
}

// One intrinsic at two types: two suffixed declarations (xDSL's llvm.intr.floor would
// translate to one unsuffixed `llvm.floor`, typed by its first use).
// CHECK-LABEL: func.func @two_types
// CHECK:       llvm.call_intrinsic "llvm.floor.f32"(%x) : (f32) -> f32
// CHECK:       llvm.call_intrinsic "llvm.floor.f64"(%y) : (f64) -> f64
func.func @two_types(%x: f32, %y: f64) -> (f32, f64) {
  %0 = math.floor %x : f32
  %1 = math.floor %y : f64
  return %0, %1 : f32, f64
}

// sin on f32 is computed in f64: widened, reduced modulo pi/2 with the round-to-integer
// trick, the quadrant's sign put into the bits, rounded back once. No call, no intrinsic.
// INLINE-LABEL: func.func @sin_f32
// INLINE-NOT:   llvm.call @
// INLINE-NOT:   llvm.intr.sin
// INLINE-NOT:   llvm.call_intrinsic "llvm.sin
// INLINE:       %[[W:.*]] = llvm.fpext %x : f32 to f64
// INLINE:       llvm.fmul %[[W]], %{{.*}} : f64
// INLINE:       llvm.bitcast %{{.*}} : f64 to i64
// INLINE:       llvm.call_intrinsic "llvm.fmuladd.f64"
// INLINE:       llvm.xor
// INLINE:       %[[R:.*]] = llvm.fptrunc %{{.*}} : f64 to f32
// INLINE-NEXT:  func.return %[[R]] : f32
func.func @sin_f32(%x: f32) -> f32 {
  %0 = math.sin %x : f32
  return %0 : f32
}

// The other expanded functions, f64: no call of libm, no llvm.intr.* of them.
// INLINE-LABEL: func.func @expanded_f64
// INLINE-NOT:   llvm.call @
// INLINE-NOT:   llvm.intr.{{(sin|cos|exp2|log2)}}
// INLINE-NOT:   llvm.call_intrinsic "llvm.{{(sin|cos|tan|exp2|log2)}}
// INLINE-NOT:   llvm.call_intrinsic "llvm.log10
// INLINE:       func.return
func.func @expanded_f64(%x: f64, %y: f64) -> f64 {
  %0 = math.cos %x : f64
  %1 = math.tan %0 : f64
  %2 = math.atan %1 : f64
  %3 = math.asin %2 : f64
  %4 = math.acos %3 : f64
  %5 = math.atan2 %4, %y : f64
  %6 = math.sinh %5 : f64
  %7 = math.cosh %6 : f64
  %8 = math.asinh %7 : f64
  %9 = math.acosh %8 : f64
  %10 = math.atanh %9 : f64
  %11 = math.exp2 %10 : f64
  %12 = math.log2 %11 : f64
  %13 = math.log10 %12 : f64
  return %13 : f64
}
