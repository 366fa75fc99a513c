// RUN: arignote-opt %s -p 'ag-to-loops{parallel_min_work=1 parallel_all=true}' | filecheck %s
// RUN: arignote-opt %s -p 'ag-to-loops{parallel_min_work=1}' | filecheck %s --check-prefix=SERIAL

// ag-to-loops{parallel_all=true} (the GPU target's loops): a partial reduction is a
// parallel loop over its result elements, each reducing its axis serially; a full one
// runs in P = min(n, 2048) parallel parts, part p combining elements p, p + P, ... of the
// row-major nest into a scratch buffer, then the P partial results in order. Without the
// option, reductions stay serial.

// CHECK-LABEL: func.func @partial(
// CHECK:         ag.parallel_for %{{.*}} to %d_1
// CHECK:           scf.for %i = %begin to %end
// CHECK:             memref.load %arg0[%{{.*}}, %i]
// CHECK:             memref.store %{{.*}}, %out0[%i]

// CHECK-LABEL: func.func @full(
// CHECK:         %[[N:.*]] = arith.muli %d, %d_1 : index
// CHECK:         %[[PARTS:.*]] = arith.minui %[[N]], %{{.*}} : index
// CHECK:         %[[SCRATCH:.*]] = memref.alloc(%[[PARTS]]) : memref<?xf32>
// CHECK:         ag.parallel_for %{{.*}} to %[[PARTS]]
// CHECK:           scf.for %[[I:.*]] = %begin to %end
// CHECK:             scf.for %[[K:.*]] = %[[I]] to %[[N]] step %[[PARTS]] iter_args
// CHECK:               %[[COL:.*]] = arith.remui %[[K]], %d_1
// CHECK:               %[[ROW:.*]] = arith.divui %[[K]], %d_1
// CHECK:               memref.load %arg0[%[[ROW]], %[[COL]]]
// CHECK:               arith.maximumf
// CHECK:             memref.store %{{.*}}, %[[SCRATCH]][%[[I]]]
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[PARTS]] step
// CHECK:           memref.load %[[SCRATCH]]
// CHECK:         memref.dealloc %[[SCRATCH]]
// CHECK:         memref.store %{{.*}}, %out0[]

// SERIAL-NOT: ag.parallel_for
func.func @partial(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %0 = ag.reduce_sum %x {axes = array<i64: 0>} : tensor<?x?xf32> -> tensor<?xf32>
  func.return %0 : tensor<?xf32>
}
func.func @full(%x: tensor<?x?xf32>) -> tensor<f32> {
  %0 = ag.reduce_max %x {axes = array<i64: 0, 1>} : tensor<?x?xf32> -> tensor<f32>
  func.return %0 : tensor<f32>
}
