// ag-to-loops on a function with `ag.inplace_results` (the `inplace-update` pass):
// result #1 may be computed in argument #2's buffer.
// RUN: arignote-opt %s -p ag-to-loops | filecheck %s

// The aliased pair (%arg2 and %out1) loses `llvm.noalias`; every other argument keeps it.
// The returned argument (W's old value) is copied into %out0 before anything else. The
// gemm copies its accumulated operand into the result only when they are not the same
// memory (the copy's row count is 0 then), and BLAS computes with beta = 1 into %out1.
// CHECK-LABEL: func.func @gemm(
// CHECK-SAME:    %arg0: memref<?x?xf64, strided<[?, ?], offset: ?>> {llvm.noalias},
// CHECK-SAME:    %arg1: memref<?x?xf64, strided<[?, ?], offset: ?>> {llvm.noalias},
// CHECK-SAME:    %arg2: memref<?x?xf64, strided<[?, ?], offset: ?>>,
// CHECK-SAME:    %out0: memref<?x?xf64> {llvm.noalias},
// CHECK-SAME:    %out1: memref<?x?xf64>) -> i64 attributes {arignote.alloc_status} {
// CHECK:         memref.load %arg2
// CHECK-NEXT:    memref.store %{{.*}}, %out0
// CHECK:         %[[SRC:.*]] = arith.addi
// CHECK-NEXT:    %[[DST:.*]] = "memref.extract_aligned_pointer_as_index"(%out1)
// CHECK-NEXT:    %[[SAME:.*]] = arith.cmpi eq, %[[SRC]], %[[DST]] : index
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[ROWS:.*]] = arith.select %[[SAME]], %[[ZERO]], %d_4 : index
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[ROWS]] step
// CHECK:         func.call @scipy_cblas_dgemm(
// CHECK-NOT:     memref.store %{{.*}}, %out0
// CHECK:         func.return
func.func @gemm(%x: tensor<?x?xf64>, %d: tensor<?x?xf64>, %w: tensor<?x?xf64>) -> (tensor<?x?xf64>, tensor<?x?xf64>) attributes {ag.updates = array<i64: 1, 2>, ag.inplace_results = array<i64: 1, 2>} {
  %lr = ag.constant dense<-1.0e-01> : tensor<f64>
  %one = ag.constant dense<1.0> : tensor<f64>
  %n = ag.gemm %lr, %x, %d, %one, %w {ag.destroy_map = array<i64: 0, 4>, transpose_a} : tensor<f64>, tensor<?x?xf64>, tensor<?x?xf64>, tensor<f64>, tensor<?x?xf64> -> tensor<?x?xf64>
  func.return %w, %n : tensor<?x?xf64>, tensor<?x?xf64>
}

// Without the attribute every argument is `noalias` and the gemm copies unconditionally
// (it reads the result's address only after the copy, for BLAS).
// CHECK-LABEL: func.func @plain(
// CHECK-SAME:    %arg2: memref<?x?xf64, strided<[?, ?], offset: ?>> {llvm.noalias},
// CHECK-SAME:    %out0: memref<?x?xf64> {llvm.noalias}) -> i64 attributes {arignote.alloc_status} {
// CHECK-NOT:     "memref.extract_aligned_pointer_as_index"(%out0)
// CHECK:         memref.store %{{.*}}, %out0
// CHECK:         "memref.extract_aligned_pointer_as_index"(%out0)
// CHECK:         func.call @scipy_cblas_dgemm(
func.func @plain(%x: tensor<?x?xf64>, %d: tensor<?x?xf64>, %w: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %lr = ag.constant dense<-1.0e-01> : tensor<f64>
  %one = ag.constant dense<1.0> : tensor<f64>
  %n = ag.gemm %lr, %x, %d, %one, %w {transpose_a} : tensor<f64>, tensor<?x?xf64>, tensor<?x?xf64>, tensor<f64>, tensor<?x?xf64> -> tensor<?x?xf64>
  func.return %n : tensor<?x?xf64>
}
