// RUN: arignote-opt %s -p convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts | filecheck %s

// arith, math, memref, cf and func in one walk: no builtin.unrealized_conversion_cast
// is left once the casts between them are reconciled, and no op of those dialects.
// Each constant is made once per function, at the start of its entry block, and an
// `index` value whose users are all converted keeps its name (no cast back to `index`).

// CHECK:      builtin.module {
// CHECK-NEXT:   llvm.func @sum(%0: !llvm.ptr) -> f64 {
// CHECK-NEXT:     %c0 = llvm.mlir.constant(0) : i64
// CHECK-NEXT:     %c1 = llvm.mlir.constant(1) : i64
// CHECK-NEXT:     %zero = llvm.mlir.constant(0.000000e+00 : f64) : f64
// CHECK-NEXT:     %1 = llvm.load %0 : !llvm.ptr -> !llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<1 x i64>, !llvm.array<1 x i64>)>
// CHECK-NEXT:     %n = llvm.extractvalue %1[3, 0]
// CHECK-NEXT:     llvm.br ^bb1(%c0, %zero : i64, f64)
// CHECK-NEXT:   ^bb1(%i: i64, %acc: f64):
// CHECK-NEXT:     %2 = llvm.icmp "slt" %i, %n : i64
// CHECK-NEXT:     llvm.cond_br %2, ^bb2, ^bb3
// CHECK-NEXT:   ^bb2:
// CHECK-NEXT:     %x = llvm.extractvalue %1[1]
// CHECK-NEXT:     %x_1 = llvm.getelementptr inbounds %x[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f64
// CHECK-NEXT:     %x_2 = llvm.load %x_1 : !llvm.ptr -> f64
// CHECK-NEXT:     %e = llvm.call_intrinsic "llvm.sqrt.f64"(%x_2) : (f64) -> f64
// CHECK-NEXT:     %a = llvm.fadd %acc, %e : f64
// CHECK-NEXT:     %3 = llvm.add %i, %c1 : i64
// CHECK-NEXT:     llvm.br ^bb1(%3, %a : i64, f64)
// CHECK-NEXT:   ^bb3:
// CHECK-NEXT:     llvm.return %acc : f64
// CHECK-NEXT:   }
// CHECK-NEXT: }
func.func @sum(%m: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %m, %c0 : memref<?xf64>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %x = memref.load %m[%i] : memref<?xf64>
    %e = math.sqrt %x : f64
    %a = arith.addf %acc, %e : f64
    scf.yield %a : f64
  }
  func.return %s : f64
}
