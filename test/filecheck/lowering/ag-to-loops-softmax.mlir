// RUN: arignote-opt %s -p ag-to-loops | filecheck %s

// softmax: per row, a loop for the maximum, one for exp and the sum (stored), one that
// scales the row by the reciprocal of the sum.

func.func @softmax(%x: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %0 = ag.softmax %x : tensor<?x?xf64> -> tensor<?x?xf64>
  func.return %0 : tensor<?x?xf64>
}

// CHECK-LABEL: func.func @softmax(
// CHECK:         scf.for
// CHECK:           %[[M:.*]] = scf.for {{.*}} iter_args
// CHECK:             arith.maximumf
// CHECK:           %[[S:.*]] = scf.for {{.*}} iter_args
// CHECK:             arith.subf %{{.*}}, %[[M]]
// CHECK:             math.exp
// CHECK:             memref.store
// CHECK:             arith.addf {{.*}} fastmath<reassoc>
// CHECK:           arith.divf %{{.*}}, %[[S]]
// CHECK:           scf.for
// CHECK:             arith.mulf
// CHECK:             memref.store

// softmax_grad: per row, s = sum(dy * sm), then (dy - s) * sm.

func.func @softmax_grad(%dy: tensor<?x?xf32>, %sm: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = ag.softmax_grad %dy, %sm : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %0 : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @softmax_grad(
// CHECK:           %[[T:.*]] = scf.for {{.*}} iter_args
// CHECK:             arith.mulf
// CHECK:             arith.addf {{.*}} fastmath<reassoc>
// CHECK:           scf.for
// CHECK:             arith.subf %{{.*}}, %[[T]]
// CHECK:             arith.mulf
// CHECK:             memref.store
