// RUN: arignote-opt %s -p to-loops | filecheck %s
// RUN: arignote-opt %s -p to-llvm | filecheck %s --check-prefix=LLVM

// The special functions of ag.TABLE (arignote.dialects.ag.special_functions) lower to
// scalar code in f64 inside the elementwise loop: an f32 operand is widened once and
// the result rounded once; libm is called only for erf, erfc, tgamma, lgamma, j0, j1
// (declared once, with one operand); erfinv's Newton steps call erfc and erf; the
// Bessel i0 is pure arithmetic (series, Hankel expansion, inline exp).

// CHECK-LABEL: func.func @erfinv(
// CHECK:         scf.for
// CHECK:           %[[X:.*]] = arith.extf %{{.*}} : f32 to f64
// CHECK:           func.call @erfc(%{{.*}}) : (f64) -> f64
// CHECK:           math.erf %{{.*}} : f64
// CHECK:           arith.cmpf uno, %[[X]], %[[X]] : f64
// CHECK:           %[[R:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK-NEXT:      memref.store %[[R]], %out0[%i] : memref<?xf32>
func.func @erfinv(%x: tensor<?xf32>) -> tensor<?xf32> {
  %r = ag.erfinv %x : tensor<?xf32>
  func.return %r : tensor<?xf32>
}

// CHECK-LABEL: func.func @gamma(
// CHECK:         %[[G:.*]] = func.call @tgamma(%{{.*}}) : (f64) -> f64
// CHECK-NEXT:    memref.store %[[G]], %out0[%i] : memref<?xf64>
func.func @gamma(%x: tensor<?xf64>) -> tensor<?xf64> {
  %r = ag.gamma %x : tensor<?xf64>
  func.return %r : tensor<?xf64>
}

// CHECK-LABEL: func.func @i0(
// CHECK-NOT:     func.call
// CHECK:         math.exp %{{.*}} : f64
// CHECK-NOT:     func.call
// CHECK:         memref.store
func.func @i0(%x: tensor<?xf64>) -> tensor<?xf64> {
  %r = ag.i0 %x : tensor<?xf64>
  func.return %r : tensor<?xf64>
}

// CHECK-DAG:   func.func private @erfc(f64) -> f64
// CHECK-DAG:   func.func private @tgamma(f64) -> f64

// LLVM-DAG:    llvm.func @erf(f64) -> f64
// LLVM-DAG:    llvm.func @erfc(f64) -> f64
// LLVM-DAG:    llvm.func @tgamma(f64) -> f64
// LLVM-DAG:    llvm.call @erfc(%{{.*}}) : (f64) -> f64
// LLVM-DAG:    llvm.call @tgamma(%{{.*}}) : (f64) -> f64
