// RUN: arignote-opt %s -p ag-to-loops | filecheck %s

// The LAPACK-backed ops: the operand copied into a fresh buffer, a LAPACKE call in
// row-major order, `info` checked (the error callback when it is not 0), the LAPACK
// buffer copied into the result; `@f__shape` checks that the matrix is square. The
// LAPACKE functions and the callback are declared once.

func.func @f(%a: tensor<?x?xf64>, %b: tensor<?xf64>) -> (tensor<?x?xf64>, tensor<?xf64>) {
  %inv = ag.matrix_inverse %a : tensor<?x?xf64> -> tensor<?x?xf64>
  %x = ag.solve %a, %b {structure = "upper_triangular"} : tensor<?x?xf64>, tensor<?xf64> -> tensor<?xf64>
  func.return %inv, %x : tensor<?x?xf64>, tensor<?xf64>
}

// CHECK-LABEL: func.func @f__shape(
// CHECK:         arith.cmpi eq
// CHECK-LABEL: func.func @f(
// CHECK:         %[[COPY:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xf64>
// CHECK:         scf.for
// CHECK:         %[[PIVOTS:.*]] = memref.alloc(%{{.*}}) : memref<?xi32>
// CHECK:         %[[ROW:.*]] = arith.constant 101 : i32
// CHECK:         %[[INFO:.*]] = func.call @scipy_LAPACKE_dgetrf(%[[ROW]], {{.*}}) : (i32, i32, i32, !llvm.ptr, i32, !llvm.ptr) -> i32
// CHECK:         %[[FAILED:.*]] = arith.cmpi ne, %[[INFO]], %{{.*}} : i32
// CHECK:         scf.if %[[FAILED]] {
// CHECK:           func.call @arignote_lapack_error(%{{.*}}, %{{.*}}, %{{.*}}) : (i64, i64, i64) -> ()
// CHECK:         func.call @scipy_LAPACKE_dgetri(
// CHECK:         memref.dealloc %[[PIVOTS]]
// CHECK:         func.call @scipy_LAPACKE_dtrtrs({{.*}}) : (i32, i8, i8, i8, i32, i32, !llvm.ptr, i32, !llvm.ptr, i32) -> i32
// CHECK-DAG:   func.func private @arignote_lapack_error(i64, i64, i64)
// CHECK-DAG:   func.func private @scipy_LAPACKE_dgetrf(i32, i32, i32, !llvm.ptr, i32, !llvm.ptr) -> i32
// CHECK-DAG:   func.func private @scipy_LAPACKE_dgetri(i32, i32, !llvm.ptr, i32, !llvm.ptr) -> i32
// CHECK-DAG:   func.func private @scipy_LAPACKE_dtrtrs(i32, i8, i8, i8, i32, i32, !llvm.ptr, i32, !llvm.ptr, i32) -> i32
