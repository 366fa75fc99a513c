// RUN: arignote-opt %s -p outline-kernels | filecheck %s
// RUN: arignote-opt %s -p outline-kernels,convert-func-to-llvm | filecheck %s --check-prefix=LLVM

// A loop with results (a reduction's two sums, an index check's flag and index) is a
// kernel that returns them: nothing of the loop stays in @f, whose ops are left for
// cheap compilation (arignote.runtime.cpu splits the module). The two identical
// reductions call one kernel; a later nest (planned before the loops became calls) takes
// the call's result. A loop whose result is a memref stays in place.

// CHECK-LABEL: func.func @f(
// CHECK:         %[[S0:.*]], %[[S1:.*]] = func.call @f__k0(%{{.*}}, %a) : (index, memref<?xf64>) -> (f64, f64)
// CHECK-NEXT:    %{{.*}}, %[[T1:.*]] = func.call @f__k0(%{{.*}}, %b) : (index, memref<?xf64>) -> (f64, f64)
// CHECK-NEXT:    %{{.*}} = arith.addf %[[S0]], %[[T1]] : f64
// CHECK-NEXT:    func.call @f__k1(%{{.*}}, %[[S1]], %b) : (index, f64, memref<?xf64>) -> ()
// CHECK-NEXT:    %[[B0:.*]], %[[B1:.*]] = func.call @f__k2(%{{.*}}, %idx) : (index, memref<?xi64>) -> (i1, i64)
// CHECK-NEXT:    %{{.*}} = arith.select %[[B0]], %[[B1]], %{{.*}} : i64
// CHECK:         %{{.*}} = scf.for
// CHECK:       func.func private @f__k0(%{{.*}}: index, %{{.*}}: memref<?xf64>) -> (f64, f64) attributes {arignote.kernel} {
// CHECK:         %[[R0:.*]], %[[R1:.*]] = scf.for
// CHECK:         func.return %[[R0]], %[[R1]] : f64, f64
// CHECK:       func.func private @f__k2(%{{.*}}: index, %{{.*}}: memref<?xi64>) -> (i1, i64) attributes {arignote.kernel} {
// CHECK-NOT:   func.func private @f__k3

// Several results travel as a struct returned by value, taken apart at the call (the
// values no one uses are not extracted).
// LLVM-LABEL:  llvm.func @f(
// LLVM:          %[[C:.*]] = llvm.call @f__k0(%{{.*}}, %{{.*}}) : (i64, !llvm.ptr) -> !llvm.struct<(f64, f64)>
// LLVM-NEXT:     %{{.*}} = llvm.extractvalue %[[C]][0] : !llvm.struct<(f64, f64)>
// LLVM:          %[[D:.*]] = llvm.call @f__k0(%{{.*}}, %{{.*}}) : (i64, !llvm.ptr) -> !llvm.struct<(f64, f64)>
// LLVM-NEXT:     %{{.*}} = llvm.extractvalue %[[D]][1] : !llvm.struct<(f64, f64)>
// LLVM:          %[[E:.*]] = llvm.call @f__k2(%{{.*}}, %{{.*}}) : (i64, !llvm.ptr) -> !llvm.struct<(i1, i64)>
// LLVM-NEXT:     %{{.*}} = llvm.extractvalue %[[E]][0] : !llvm.struct<(i1, i64)>
// LLVM-NEXT:     %{{.*}} = llvm.extractvalue %[[E]][1] : !llvm.struct<(i1, i64)>
// LLVM:        llvm.func internal @f__k0(%{{.*}}: i64, %{{.*}}: !llvm.ptr) -> !llvm.struct<(f64, f64)> attributes {arignote.kernel} {
// LLVM:          %[[U:.*]] = llvm.mlir.undef : !llvm.struct<(f64, f64)>
// LLVM-NEXT:     %[[U0:.*]] = llvm.insertvalue %{{.*}}, %[[U]][0] : !llvm.struct<(f64, f64)>
// LLVM-NEXT:     %[[U1:.*]] = llvm.insertvalue %{{.*}}, %[[U0]][1] : !llvm.struct<(f64, f64)>
// LLVM-NEXT:     llvm.return %[[U1]] : !llvm.struct<(f64, f64)>

func.func @f(%a: memref<?xf64>, %b: memref<?xf64>, %idx: memref<?xi64>) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %false = arith.constant false
  %none = arith.constant -1 : i64
  %n = memref.dim %a, %c0 : memref<?xf64>
  %s:2 = scf.for %i = %c0 to %n step %c1 iter_args(%x = %zero, %y = %zero) -> (f64, f64) {
    %v = memref.load %a[%i] : memref<?xf64>
    %x1 = arith.addf %x, %v : f64
    %y1 = arith.mulf %y, %v : f64
    scf.yield %x1, %y1 : f64, f64
  }
  %t:2 = scf.for %i = %c0 to %n step %c1 iter_args(%x = %zero, %y = %zero) -> (f64, f64) {
    %v = memref.load %b[%i] : memref<?xf64>
    %x1 = arith.addf %x, %v : f64
    %y1 = arith.mulf %y, %v : f64
    scf.yield %x1, %y1 : f64, f64
  }
  %sum = arith.addf %s#0, %t#1 : f64
  scf.for %i = %c0 to %n step %c1 {
    memref.store %s#1, %b[%i] : memref<?xf64>
  }
  %bad:2 = scf.for %i = %c0 to %n step %c1 iter_args(%found = %false, %at = %none) -> (i1, i64) {
    %v = memref.load %idx[%i] : memref<?xi64>
    %neg = arith.cmpi slt, %v, %none : i64
    %f1 = arith.ori %found, %neg : i1
    %a1 = arith.select %neg, %v, %at : i64
    scf.yield %f1, %a1 : i1, i64
  }
  %r = arith.select %bad#0, %bad#1, %none : i64
  %m = memref.alloc(%n) : memref<?xf64>
  %last = scf.for %i = %c0 to %n step %c1 iter_args(%buf = %m) -> (memref<?xf64>) {
    memref.store %sum, %buf[%i] : memref<?xf64>
    scf.yield %buf : memref<?xf64>
  }
  memref.dealloc %last : memref<?xf64>
  func.return %r : i64
}
