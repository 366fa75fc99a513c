// RUN: arignote-opt %s -p ag-to-loops | filecheck %s

// ag.gemv_pair: the shape function checks x's and the row operand's lengths; the kernel
// starts r at zero, branches on unit strides (cast views, else contiguous copies), and
// walks A in blocks of 4 rows: one reassociable dot-product loop for the 4 rows, the
// region's scalar code per row (u_i, g_i stored), one fused update loop of r; then the
// remaining rows one by one.
// CHECK-LABEL: func.func @pair__shape
// CHECK-SAME:    ag.checks = ["ag.gemv_pair: A has %d columns but x has length %d", "ag.gemv_pair: A has %d rows but row operand #0 has length %d"]
// CHECK-LABEL: func.func @pair(
// CHECK-SAME:    %out0: memref<?xf32>, %out1: memref<?xf32>, %out2: memref<?xf32>)
// CHECK:         scf.for %{{.*}} = %{{.*}} to %d_1 step %{{.*}} {
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      memref.store %[[ZERO]], %out2[%{{.*}}] : memref<?xf32>
// CHECK:         scf.if %{{.*}} {
// CHECK:           %[[A:.*]] = "memref.cast"(%arg0) : (memref<?x?xf32, strided<[?, ?], offset: ?>>) -> memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK:           %[[X:.*]] = "memref.cast"(%arg1) : (memref<?xf32, strided<[?], offset: ?>>) -> memref<?xf32, strided<[1], offset: ?>>
// CHECK:           %[[FOUR:.*]] = arith.constant 4 : index
// CHECK:           scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %[[FOUR]] {
// CHECK:             scf.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32) {
// CHECK:               arith.mulf {{.*}} fastmath<reassoc,contract> : f32
// CHECK:               arith.addf {{.*}} fastmath<reassoc,contract> : f32
// CHECK:               scf.yield {{.*}} : f32, f32, f32, f32
// CHECK:             arith.subf
// CHECK:             memref.store %{{.*}}, %out0[%[[I]]] : memref<?xf32>
// CHECK-NEXT:        memref.store %{{.*}}, %out1[%[[I]]] : memref<?xf32>
// CHECK:             scf.for
// CHECK:               memref.load %out2
// CHECK-COUNT-4:       arith.addf {{.*}} fastmath<contract> : f32
// CHECK:               memref.store %{{.*}}, %out2
// CHECK:           scf.for
// CHECK:         } else {
// CHECK:           memref.alloc(%d, %d_1) : memref<?x?xf32>
// CHECK:           memref.dealloc
// CHECK:         }
// CHECK-NEXT:    memref.dealloc
// CHECK-NEXT:    func.return
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
// CHECK:         scf.if
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
