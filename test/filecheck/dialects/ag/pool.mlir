// Round trip of the pooling ops (`dialects/ag/pool.py`): custom form, re-parsed custom
// form, generic form.
// RUN: arignote-opt %s | filecheck %s
// RUN: arignote-opt %s | arignote-opt | filecheck %s
// RUN: arignote-opt %s --print-op-generic | arignote-opt | filecheck %s

// CHECK-LABEL: func.func @pool(
// CHECK-NEXT:    %0 = ag.pool %x {ws = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0>, ignore_border = true, mode = "max"} : tensor<?x?x7x6xf32> -> tensor<?x?x3x3xf32>
// CHECK-NEXT:    %1 = ag.max_pool_grad %x, %0, %0 {ws = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0>, ignore_border = true, mode = "max"} : tensor<?x?x7x6xf32>, tensor<?x?x3x3xf32>, tensor<?x?x3x3xf32> -> tensor<?x?x7x6xf32>
// CHECK-NEXT:    %2 = ag.average_pool_grad %v, %g {ws = array<i64: 3>, stride = array<i64: 1>, pad = array<i64: 1>, ignore_border = true, mode = "average_inc_pad"} : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
// CHECK-NEXT:    %3 = ag.max_pool_grad_grad %x, %0, %x {ws = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0>, ignore_border = true, mode = "max", ties = "first"} : tensor<?x?x7x6xf32>, tensor<?x?x3x3xf32>, tensor<?x?x7x6xf32> -> tensor<?x?x3x3xf32>
// CHECK-NEXT:    %4 = ag.pool %v {ws = array<i64: 3>, stride = array<i64: 2>, pad = array<i64: 0>, ignore_border = false, mode = "sum"} : tensor<?xf64> -> tensor<?xf64>
func.func @pool(%x: tensor<?x?x7x6xf32>, %v: tensor<?xf64>, %g: tensor<?xf64>) {
  %0 = ag.pool %x {ws = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0>, ignore_border = true, mode = "max"} : tensor<?x?x7x6xf32> -> tensor<?x?x3x3xf32>
  %1 = ag.max_pool_grad %x, %0, %0 {ws = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0>, ignore_border = true, mode = "max"} : tensor<?x?x7x6xf32>, tensor<?x?x3x3xf32>, tensor<?x?x3x3xf32> -> tensor<?x?x7x6xf32>
  %2 = ag.average_pool_grad %v, %g {ws = array<i64: 3>, stride = array<i64: 1>, pad = array<i64: 1>, ignore_border = true, mode = "average_inc_pad"} : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
  %3 = ag.max_pool_grad_grad %x, %0, %x {ws = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0>, ignore_border = true, mode = "max", ties = "first"} : tensor<?x?x7x6xf32>, tensor<?x?x3x3xf32>, tensor<?x?x7x6xf32> -> tensor<?x?x3x3xf32>
  %4 = ag.pool %v {ws = array<i64: 3>, stride = array<i64: 2>, pad = array<i64: 0>, ignore_border = false, mode = "sum"} : tensor<?xf64> -> tensor<?xf64>
  func.return
}
