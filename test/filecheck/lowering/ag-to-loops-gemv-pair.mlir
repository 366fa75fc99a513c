// RUN: arignote-opt %s -p ag-to-loops | filecheck %s

// ag.gemv_pair: the shape function checks x's and the row operand's lengths; the kernel
// starts r at zero, reads A and x through unit-stride views (a contiguous copy, sized 0
// when the stride is 1 already, stands in otherwise), and walks A in blocks of 8 rows:
// one reassociable dot-product loop for the 8 rows, the region's scalar code in a loop
// over the block (u_i, g_i stored, alpha·g_i kept), one fused update loop of r; then the
// remaining rows one by one.
// CHECK-LABEL: func.func @pair__shape
// CHECK-SAME:    ag.checks = ["ag.gemv_pair: contracted dimensions of operand shapes (%d, %d) and (%d,) differ", "ag.gemv_pair: operand shapes (%d,) and (%d,) do not match at dimension 0"]
// CHECK-LABEL: func.func @pair(
// CHECK-SAME:    %out0: memref<?xf32> {llvm.noalias}, %out1: memref<?xf32> {llvm.noalias}, %out2: memref<?xf32> {llvm.noalias})
// CHECK:         scf.for %{{.*}} = %{{.*}} to %d_1 step %{{.*}} {
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      memref.store %[[ZERO]], %out2[%{{.*}}] : memref<?xf32>
// CHECK:         %[[UNIT:.*]] = arith.ori
// CHECK:         %[[ROWS:.*]] = arith.select %[[UNIT]], %{{.*}}, %d : index
// CHECK:         %[[TEMP:.*]] = memref.alloc(%[[ROWS]], %{{.*}}) : memref<?x?xf32>
// CHECK:         %[[TEMPVIEW:.*]] = "memref.cast"(%[[TEMP]]) : (memref<?x?xf32>) -> memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK-NEXT:    %[[CHOSEN:.*]] = arith.select %[[UNIT]], %arg0, %[[TEMPVIEW]] : memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK-NEXT:    %[[A:.*]] = "memref.cast"(%[[CHOSEN]]) : (memref<?x?xf32, strided<[?, ?], offset: ?>>) -> memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK:         %[[X:.*]] = "memref.cast"(%{{.*}}) : (memref<?xf32, strided<[?], offset: ?>>) -> memref<?xf32, strided<[1], offset: ?>>
// CHECK:         %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK:         %[[SUMS:.*]] = memref.alloca() : memref<8xf32>
// CHECK-NEXT:    %[[SCALES:.*]] = memref.alloca() : memref<8xf32>
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %[[EIGHT]] {
// CHECK:           scf.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK:             memref.load %[[X]]
// CHECK:             memref.load %[[A]]
// CHECK-NEXT:        arith.mulf {{.*}} fastmath<reassoc,contract> : f32
// CHECK-NEXT:        arith.addf {{.*}} fastmath<reassoc,contract> : f32
// CHECK:           memref.store %{{.*}}, %[[SUMS]]
// CHECK:           scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[ROW:.*]] = arith.addi %[[I]], %[[K]] : index
// CHECK-NEXT:        %[[D:.*]] = memref.load %[[SUMS]][%[[K]]] : memref<8xf32>
// CHECK-NEXT:        %[[YI:.*]] = memref.load %arg2[%[[ROW]]]
// CHECK-NEXT:        %[[GI:.*]] = arith.subf %[[D]], %[[YI]] : f32
// CHECK-NEXT:        memref.store %[[D]], %out0[%[[ROW]]] : memref<?xf32>
// CHECK-NEXT:        memref.store %[[GI]], %out1[%[[ROW]]] : memref<?xf32>
// CHECK-NEXT:        %[[C:.*]] = arith.mulf %{{.*}}, %[[GI]] : f32
// CHECK-NEXT:        memref.store %[[C]], %[[SCALES]][%[[K]]] : memref<8xf32>
// CHECK:           scf.for
// CHECK:             memref.load %out2
// CHECK-COUNT-8:     arith.addf {{.*}} fastmath<contract> : f32
// CHECK:             memref.store %{{.*}}, %out2
// CHECK:         scf.for
// CHECK:         memref.dealloc %[[TEMP]] : memref<?x?xf32>
// CHECK:         func.return
func.func @pair(%a: tensor<?x?xf32>, %x: tensor<?xf32>, %y: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %one = ag.constant dense<1.0> : tensor<f32>
  %u, %g, %r = ag.gemv_pair %a, %x, %one rows(%y) : tensor<?x?xf32>, tensor<?xf32>, tensor<f32> rows(tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  ^bb0(%d: tensor<f32>, %yi: tensor<f32>):
    %e = ag.sub %d, %yi : tensor<f32>, tensor<f32> -> tensor<f32>
    ag.yield %d, %e : tensor<f32>, tensor<f32>
  }
  func.return %u, %g, %r : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}

// With an accumulation r starts at beta * r0; a 0-d row operand is loaded once, before
// the loops, and a row operand of static length 1 is read at 0.
// CHECK-LABEL: func.func @accumulated(
// CHECK:         %[[BETA:.*]] = memref.load %arg3[] : memref<f32, strided<[], offset: ?>>
// CHECK:         scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[R0:.*]] = memref.load %arg4[%[[K]]]
// CHECK-NEXT:      %[[INIT:.*]] = arith.mulf %[[BETA]], %[[R0]] : f32
// CHECK-NEXT:      memref.store %[[INIT]], %out0[%[[K]]] : memref<?xf32>
// CHECK:         %[[B:.*]] = memref.load %arg5[] : memref<f32, strided<[], offset: ?>>
// CHECK:         scf.for
// CHECK:           memref.load %arg6[%{{.*}}] : memref<1xf32, strided<[?], offset: ?>>
// CHECK:           arith.addf %{{.*}}, %[[B]] : f32
func.func @accumulated(%a: tensor<?x?xf32>, %x: tensor<?xf32>, %alpha: tensor<f32>, %beta: tensor<f32>, %r0: tensor<?xf32>, %b: tensor<f32>, %c: tensor<1xf32>) -> tensor<?xf32> {
  %u, %g, %r = ag.gemv_pair %a, %x, %alpha acc(%beta, %r0) rows(%b, %c) : tensor<?x?xf32>, tensor<?xf32>, tensor<f32> acc(tensor<f32>, tensor<?xf32>) rows(tensor<f32>, tensor<1xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  ^bb0(%d: tensor<f32>, %bi: tensor<f32>, %ci: tensor<f32>):
    %z = ag.add %d, %bi : tensor<f32>, tensor<f32> -> tensor<f32>
    %e = ag.mul %z, %ci : tensor<f32>, tensor<f32> -> tensor<f32>
    ag.yield %z, %e : tensor<f32>, tensor<f32>
  }
  func.return %r : tensor<?xf32>
}
