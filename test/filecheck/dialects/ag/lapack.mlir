// Round trip of the LAPACK-backed `ag` ops (linear algebra, issue 13 item 5).
// RUN: arignote-opt %s | filecheck %s
// RUN: arignote-opt %s --print-op-generic | arignote-opt | filecheck %s

// CHECK-LABEL: func.func @lapack(
// CHECK-NEXT:    %0 = ag.matrix_inverse %a : tensor<?x?xf64> -> tensor<?x?xf64>
// CHECK-NEXT:    %1 = ag.det %a : tensor<?x?xf64> -> tensor<f64>
// CHECK-NEXT:    %2 = ag.cholesky %a {lower} : tensor<?x?xf64> -> tensor<?x?xf64>
// CHECK-NEXT:    %3 = ag.cholesky %a {nan_on_error} : tensor<?x?xf64> -> tensor<?x?xf64>
// CHECK-NEXT:    %4 = ag.solve %a, %v {structure = "lower_triangular"} : tensor<?x?xf64>, tensor<?xf64> -> tensor<?xf64>
// CHECK-NEXT:    %5, %6 = ag.eigh %a {upper} : tensor<?x?xf64> -> tensor<?xf64>, tensor<?x?xf64>
// CHECK-NEXT:    %7, %8 = ag.eig %s : tensor<3x3xf32> -> tensor<3xf32>, tensor<3x3xf32>
// CHECK-NEXT:    %9, %10, %11 = ag.svd %r {compute_uv} : tensor<2x5xf32> -> tensor<2x2xf32>, tensor<2xf32>, tensor<2x5xf32>
// CHECK-NEXT:    %12 = ag.svd %r : tensor<2x5xf32> -> tensor<2xf32>
// CHECK-NEXT:    %13, %14 = ag.qr %a {mode = "complete"} : tensor<?x?xf64> -> tensor<?x?xf64>, tensor<?x?xf64>
// CHECK-NEXT:    %15, %16 = ag.qr %r {mode = "raw"} : tensor<2x5xf32> -> tensor<5x2xf32>, tensor<2xf32>
func.func @lapack(%a: tensor<?x?xf64>, %v: tensor<?xf64>, %s: tensor<3x3xf32>, %r: tensor<2x5xf32>) {
  %0 = ag.matrix_inverse %a : tensor<?x?xf64> -> tensor<?x?xf64>
  %1 = ag.det %a : tensor<?x?xf64> -> tensor<f64>
  %2 = ag.cholesky %a {lower} : tensor<?x?xf64> -> tensor<?x?xf64>
  %3 = ag.cholesky %a {nan_on_error} : tensor<?x?xf64> -> tensor<?x?xf64>
  %4 = ag.solve %a, %v {structure = "lower_triangular"} : tensor<?x?xf64>, tensor<?xf64> -> tensor<?xf64>
  %5, %6 = ag.eigh %a {upper} : tensor<?x?xf64> -> tensor<?xf64>, tensor<?x?xf64>
  %7, %8 = ag.eig %s : tensor<3x3xf32> -> tensor<3xf32>, tensor<3x3xf32>
  %9, %10, %11 = ag.svd %r {compute_uv} : tensor<2x5xf32> -> tensor<2x2xf32>, tensor<2xf32>, tensor<2x5xf32>
  %12 = ag.svd %r : tensor<2x5xf32> -> tensor<2xf32>
  %13, %14 = ag.qr %a {mode = "complete"} : tensor<?x?xf64> -> tensor<?x?xf64>, tensor<?x?xf64>
  %15, %16 = ag.qr %r {mode = "raw"} : tensor<2x5xf32> -> tensor<5x2xf32>, tensor<2xf32>
  func.return
}
