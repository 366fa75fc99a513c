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

// logsoftmax: per row, max, sum of exp, then x - (max + log(sum)).

func.func @logsoftmax(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = ag.logsoftmax %x : tensor<?xf32> -> tensor<?xf32>
  func.return %0 : tensor<?xf32>
}

// CHECK-LABEL: func.func @logsoftmax(
// CHECK:         %[[M:.*]] = scf.for {{.*}} iter_args
// CHECK:           arith.maximumf
// CHECK:         %[[S:.*]] = scf.for {{.*}} iter_args
// CHECK:           math.exp
// CHECK:         %[[L:.*]] = math.log %[[S]]
// CHECK:         %[[LSE:.*]] = arith.addf %[[M]], %[[L]]
// CHECK:         scf.for
// CHECK:           arith.subf %{{.*}}, %[[LSE]]
// CHECK:           memref.store

// softmax_xent: per row, max and sum of exp, the label wrapped when negative, and
// max + log(sum) - x[i, y[i]] stored.

func.func @softmax_xent(%x: tensor<?x?xf64>, %y: tensor<?xi32>) -> tensor<?xf64> {
  %0 = ag.softmax_xent %x, %y : tensor<?x?xf64>, tensor<?xi32> -> tensor<?xf64>
  func.return %0 : tensor<?xf64>
}

// CHECK-LABEL: func.func @softmax_xent(
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to
// CHECK:           %[[M:.*]] = scf.for {{.*}} iter_args
// CHECK:           %[[S:.*]] = scf.for {{.*}} iter_args
// CHECK:           %[[Y:.*]] = memref.load %{{.*}}[%[[I]]] : memref<?xi32
// CHECK:           arith.extsi %[[Y]] : i32 to i64
// CHECK:           arith.cmpi slt
// CHECK:           %[[K:.*]] = arith.select
// CHECK:           %[[P:.*]] = memref.load %{{.*}}[%[[I]], %[[K]]]
// CHECK:           %[[L:.*]] = math.log %[[S]]
// CHECK:           %[[LSE:.*]] = arith.addf %[[M]], %[[L]]
// CHECK:           %[[NLL:.*]] = arith.subf %[[LSE]], %[[P]]
// CHECK:           memref.store %[[NLL]], %{{.*}}[%[[I]]]

// softmax_xent_grad: per row, the maximum, exp(x - max) stored while summing, the row
// scaled by g / sum, then g subtracted at the label.

func.func @softmax_xent_grad(%g: tensor<?xf32>, %x: tensor<?x?xf32>, %y: tensor<?xi64>) -> tensor<?x?xf32> {
  %0 = ag.softmax_xent_grad %g, %x, %y : tensor<?xf32>, tensor<?x?xf32>, tensor<?xi64> -> tensor<?x?xf32>
  func.return %0 : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @softmax_xent_grad(
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to
// CHECK:           %[[G:.*]] = memref.load %{{.*}}[%[[I]]] : memref<?xf32
// CHECK:           %[[M:.*]] = scf.for {{.*}} iter_args
// CHECK:           %[[S:.*]] = scf.for {{.*}} iter_args
// CHECK:             math.exp
// CHECK:             memref.store
// CHECK:           %[[SC:.*]] = arith.divf %[[G]], %[[S]]
// CHECK:           scf.for
// CHECK:             arith.mulf %{{.*}}, %[[SC]]
// CHECK:             memref.store
// CHECK:           %[[K:.*]] = arith.select
// CHECK:           %[[OLD:.*]] = memref.load %{{.*}}[%[[I]], %[[K]]]
// CHECK:           %[[NEW:.*]] = arith.subf %[[OLD]], %[[G]]
// CHECK:           memref.store %[[NEW]], %{{.*}}[%[[I]], %[[K]]]

// softmax_xent_pair: the gradient's row loops, then nll from the same maximum and sum.

func.func @softmax_xent_pair(%g: tensor<1xf64>, %x: tensor<?x?xf64>, %y: tensor<?xi64>) -> (tensor<?xf64>, tensor<?x?xf64>) {
  %0, %1 = ag.softmax_xent_pair %g, %x, %y : tensor<1xf64>, tensor<?x?xf64>, tensor<?xi64> -> (tensor<?xf64>, tensor<?x?xf64>)
  func.return %0, %1 : tensor<?xf64>, tensor<?x?xf64>
}

// CHECK-LABEL: func.func @softmax_xent_pair(
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to
// CHECK:           %[[M:.*]] = scf.for {{.*}} iter_args
// CHECK:           %[[S:.*]] = scf.for {{.*}} iter_args
// CHECK:             math.exp
// CHECK:           scf.for
// CHECK:             arith.mulf
// CHECK:           %[[K:.*]] = arith.select
// CHECK:           memref.store %{{.*}}, %{{.*}}[%[[I]], %[[K]]]
// CHECK:           %[[L:.*]] = math.log %[[S]]
// CHECK:           %[[LSE:.*]] = arith.addf %[[M]], %[[L]]
// CHECK:           %[[P:.*]] = memref.load %{{.*}}[%[[I]], %[[K]]]
// CHECK:           %[[NLL:.*]] = arith.subf %[[LSE]], %[[P]]
// CHECK:           memref.store %[[NLL]], %{{.*}}[%[[I]]]
