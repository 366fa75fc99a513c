// Round trip of `ag.specify_shape`, `ag.assert` and `ag.flatnonzero`: custom form,
// re-parsed custom form, generic form.
// RUN: arignote-opt %s | filecheck %s
// RUN: arignote-opt %s | arignote-opt | filecheck %s
// RUN: arignote-opt %s --print-op-generic | arignote-opt | filecheck %s

// CHECK-LABEL: func.func @data_shapes(
// CHECK-NEXT:    %0 = ag.specify_shape %x[%n] {shape = array<i64: -9223372036854775808, 3>} : tensor<?x?xf32>, tensor<i64> -> tensor<?x3xf32>
// CHECK-NEXT:    %1 = ag.specify_shape %x[] {shape = array<i64: 2, 3>} : tensor<?x?xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %2 = ag.assert %x, %ok {message = "split: the sizes must not be negative"} : tensor<?x?xf32>, tensor<i1> -> tensor<?x?xf32>
// CHECK-NEXT:    %3 = ag.flatnonzero %x : tensor<?x?xf32> -> tensor<?xi64>
// CHECK-NEXT:    %4 = ag.flatnonzero %b : tensor<3xi1> -> tensor<?xi64>
func.func @data_shapes(%x: tensor<?x?xf32>, %n: tensor<i64>, %ok: tensor<i1>, %b: tensor<3xi1>) {
  %0 = ag.specify_shape %x[%n] {shape = array<i64: -9223372036854775808, 3>} : tensor<?x?xf32>, tensor<i64> -> tensor<?x3xf32>
  %1 = ag.specify_shape %x[] {shape = array<i64: 2, 3>} : tensor<?x?xf32> -> tensor<2x3xf32>
  %2 = ag.assert %x, %ok {message = "split: the sizes must not be negative"} : tensor<?x?xf32>, tensor<i1> -> tensor<?x?xf32>
  %3 = ag.flatnonzero %x : tensor<?x?xf32> -> tensor<?xi64>
  %4 = ag.flatnonzero %b : tensor<3xi1> -> tensor<?xi64>
  func.return
}
