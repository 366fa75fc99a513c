// Round trip of the scan, sort and search ops (`dialects/ag/extra_ops.py`): custom form,
// re-parsed custom form, generic form.
// RUN: arignote-opt %s | filecheck %s
// RUN: arignote-opt %s | arignote-opt | filecheck %s
// RUN: arignote-opt %s --print-op-generic | arignote-opt | filecheck %s
// RUN: arignote-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @extra_ops(
// CHECK-NEXT:    %0 = ag.cumsum %x {axis = 1 : i64} : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:    %1 = ag.cumprod %i {axis = 0 : i64} : tensor<?xi32> -> tensor<?xi32>
// CHECK-NEXT:    %2 = ag.sort %x {axis = 0 : i64} : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:    %3 = ag.argsort %b {axis = 0 : i64} : tensor<3xi1> -> tensor<3xi64>
// CHECK-NEXT:    %4 = ag.searchsorted %v, %m {side = "right"} : tensor<?xf64>, tensor<2x?xf64> -> tensor<2x?xi64>
// GENERIC:       %0 = "ag.cumsum"(%x) <{axis = 1 : i64}> : (tensor<?x?xf32>) -> tensor<?x?xf32>
// GENERIC:       %4 = "ag.searchsorted"(%v, %m) <{side = "right"}> : (tensor<?xf64>, tensor<2x?xf64>) -> tensor<2x?xi64>
func.func @extra_ops(%x: tensor<?x?xf32>, %v: tensor<?xf64>, %m: tensor<2x?xf64>, %i: tensor<?xi32>, %b: tensor<3xi1>) {
  %0 = ag.cumsum %x {axis = 1 : i64} : tensor<?x?xf32> -> tensor<?x?xf32>
  %1 = ag.cumprod %i {axis = 0 : i64} : tensor<?xi32> -> tensor<?xi32>
  %2 = ag.sort %x {axis = 0 : i64} : tensor<?x?xf32> -> tensor<?x?xf32>
  %3 = ag.argsort %b {axis = 0 : i64} : tensor<3xi1> -> tensor<3xi64>
  %4 = ag.searchsorted %v, %m {side = "right"} : tensor<?xf64>, tensor<2x?xf64> -> tensor<2x?xi64>
  func.return
}
