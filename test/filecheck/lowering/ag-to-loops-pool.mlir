// RUN: arignote-opt %s -p ag-to-loops | filecheck %s

// A max pool without padding and with ignore_border: every window lies inside the image,
// so the window loops run from o*stride to o*stride + ws (constant trips) and carry the
// maximum from -inf; the pooled lengths are (h - ws) / stride + 1, 0 when h < ws.

func.func @max_pool(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = ag.pool %x {ws = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0>, ignore_border = true, mode = "max"} : tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %0 : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @max_pool(
// CHECK:         %[[H:.*]] = memref.dim %arg0, %{{.*}}
// CHECK:         %[[SPAN:.*]] = arith.subi %[[H]], %{{.*}} : index
// CHECK-NEXT:    %{{.*}} = arith.constant 2 : index
// CHECK-NEXT:    %[[Q:.*]] = arith.divsi %[[SPAN]], %{{.*}} : index
// CHECK:         %[[OUT:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : index
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %[[OUT]] step %{{.*}} {
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             %[[R0:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK:             %[[R1:.*]] = arith.addi %[[R0]], %{{.*}} : index
// CHECK:             %[[C0:.*]] = arith.muli %[[J]], %{{.*}} : index
// CHECK:             %[[C1:.*]] = arith.addi %[[C0]], %{{.*}} : index
// CHECK:             %[[NEG:.*]] = arith.constant 0xff800000 : f32
// CHECK:             %[[M:.*]] = scf.for %[[R:.*]] = %[[R0]] to %[[R1]] step %{{.*}} iter_args(%[[A:.*]] = %[[NEG]]) -> (f32) {
// CHECK-NEXT:          %{{.*}} = scf.for %[[C:.*]] = %[[C0]] to %[[C1]] step %{{.*}} iter_args(%[[B:.*]] = %[[A]]) -> (f32) {
// CHECK-NEXT:            %[[V:.*]] = memref.load %arg0[%[[R]], %[[C]]]
// CHECK-NEXT:            %[[MAX:.*]] = arith.maximumf %[[B]], %[[V]] : f32
// CHECK-NEXT:            scf.yield %[[MAX]] : f32
// CHECK:             memref.store %[[M]], %out0[%[[I]], %[[J]]] : memref<?x?xf32>

// An average excluding the padding: the window is clipped to the image
// (max(start, 0), min(start + ws, h)) and the sum divided by the clipped window's size.

func.func @average_pool(%x: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %0 = ag.pool %x {ws = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1>, ignore_border = true, mode = "average_exc_pad"} : tensor<?x?xf64> -> tensor<?x?xf64>
  func.return %0 : tensor<?x?xf64>
}

// CHECK-LABEL: func.func @average_pool(
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %[[START:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK:           %[[END:.*]] = arith.addi %[[START]], %{{.*}} : index
// CHECK:           %[[GT:.*]] = arith.cmpi sgt, %[[START]], %{{.*}} : index
// CHECK:           %[[LO:.*]] = arith.select %[[GT]], %[[START]], %{{.*}} : index
// CHECK-NEXT:      %[[LT:.*]] = arith.cmpi slt, %[[END]], %{{.*}} : index
// CHECK-NEXT:      %[[HI:.*]] = arith.select %[[LT]], %[[END]], %{{.*}} : index
// CHECK:           %[[SUM:.*]] = scf.for %{{.*}} = %[[LO]] to %[[HI]] step %{{.*}} iter_args(%{{.*}}) -> (f64) {
// CHECK:             arith.addf %{{.*}}, %{{.*}} : f64
// CHECK:           %[[ROWS:.*]] = arith.subi %[[HI]], %[[LO]] : index
// CHECK:           %[[COUNT:.*]] = arith.muli %[[ROWS]], %{{.*}} : index
// CHECK-NEXT:      %[[N:.*]] = arith.index_cast %[[COUNT]] : index to i64
// CHECK-NEXT:      %[[F:.*]] = arith.sitofp %[[N]] : i64 to f64
// CHECK-NEXT:      %[[AVG:.*]] = arith.divf %[[SUM]], %[[F]] : f64
// CHECK-NEXT:      memref.store %[[AVG]], %out0

// The max pool's gradient with overlapping windows (stride 1 < ws 2): per image (leading
// position), the image's gradient is zeroed, then each window adds its output gradient
// where the input equals the window's maximum. The shape function checks that output and
// grad have the pooled input's shape.

func.func @max_pool_grad(%x: tensor<?x?x?xf32>, %y: tensor<?x?x?xf32>, %g: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = ag.max_pool_grad %x, %y, %g {ws = array<i64: 2, 2>, stride = array<i64: 1, 1>, pad = array<i64: 0, 0>, ignore_border = true, mode = "max"} : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  func.return %0 : tensor<?x?x?xf32>
}

// CHECK-LABEL: func.func @max_pool_grad__shape(
// CHECK-SAME:    ag.checks = ["ag.max_pool_grad: the shapes of output and of the pooled input, (%d, %d, %d) and (%d, %d, %d), differ"
// CHECK-LABEL: func.func @max_pool_grad(
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           memref.store %{{.*}}, %out0[%[[N]], %{{.*}}, %{{.*}}] : memref<?x?x?xf32>
// CHECK:           %[[GZ:.*]] = memref.load %arg2[%[[N]], %{{.*}}, %{{.*}}]
// CHECK:               %[[XV:.*]] = memref.load %arg0[%[[N]], %[[R:[a-z0-9_]+]], %[[C:[a-z0-9_]+]]]
// CHECK-NEXT:          %[[TOP:.*]] = memref.load %arg1[%[[N]], %{{.*}}, %{{.*}}]
// CHECK-NEXT:          %[[HIT:.*]] = arith.cmpf oeq, %[[XV]], %[[TOP]] : f32
// CHECK-NEXT:          %[[TERM:.*]] = arith.select %[[HIT]], %[[GZ]], %[[ZERO]] : f32
// CHECK-NEXT:          %[[OLD:.*]] = memref.load %out0[%[[N]], %[[R]], %[[C]]]
// CHECK-NEXT:          %[[NEW:.*]] = arith.addf %[[OLD]], %[[TERM]] : f32
// CHECK-NEXT:          memref.store %[[NEW]], %out0[%[[N]], %[[R]], %[[C]]]

// With disjoint windows (stride >= ws) the gradient is a gather: position r reads window
// min(r // stride, count - 1), kept when r % stride < ws and r // stride < count; each
// position is written once. With no window along an axis the result is zeros.

func.func @max_pool_grad_disjoint(%x: tensor<?x?x?xf32>, %y: tensor<?x?x?xf32>, %g: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = ag.max_pool_grad %x, %y, %g {ws = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0>, ignore_border = true, mode = "max"} : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  func.return %0 : tensor<?x?x?xf32>
}

// CHECK-LABEL: func.func @max_pool_grad_disjoint(
// CHECK:         scf.if %{{.*}} {
// CHECK:           scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:          scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:                 %[[O:.*]] = arith.divsi %[[R]], %{{.*}} : index
// CHECK:                 %[[XV:.*]] = memref.load %arg0[%[[N]], %[[R]], %[[C]]]
// CHECK-NEXT:            %[[TOP:.*]] = memref.load %arg1[%[[N]], %{{.*}}, %{{.*}}]
// CHECK-NEXT:            %[[HIT:.*]] = arith.cmpf oeq, %[[XV]], %[[TOP]] : f32
// CHECK-NEXT:            %[[GZ:.*]] = memref.load %arg2[%[[N]], %{{.*}}, %{{.*}}]
// CHECK-NEXT:            %[[TERM:.*]] = arith.select %[[HIT]], %[[GZ]], %{{.*}} : f32
// CHECK-NEXT:            %[[KEPT:.*]] = arith.select %{{.*}}, %[[TERM]], %{{.*}} : f32
// CHECK-NEXT:            memref.store %[[KEPT]], %out0[%[[N]], %[[R]], %[[C]]]
// CHECK:         } else {
// CHECK:               memref.store %{{.*}}, %out0
