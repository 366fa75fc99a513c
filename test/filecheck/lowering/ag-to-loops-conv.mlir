// RUN: arignote-opt %s -p ag-to-loops | filecheck %s

// conv (LeNet's first layer): the filters (a function argument, of any strides) are
// copied into a contiguous buffer; one im2col buffer of (channels * taps) x (output
// positions) = 25 x 576 serves every image; per image, the im2col loops (no padding:
// no bounds test) and one sgemm W (20 x 25) . col (25 x 576) into the image's slice of
// the result. Static shapes that fit need no run-time check.

func.func @conv(%x: tensor<?x1x28x28xf32>, %w: tensor<20x1x5x5xf32>) -> tensor<?x20x24x24xf32> {
  %0 = ag.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0>, groups = 1 : i64} : tensor<?x1x28x28xf32>, tensor<20x1x5x5xf32> -> tensor<?x20x24x24xf32>
  func.return %0 : tensor<?x20x24x24xf32>
}

// CHECK-LABEL: func.func @conv__shape(
// CHECK-SAME:    ag.checks = []
// CHECK-LABEL: func.func @conv(
// CHECK:         %[[N:.*]] = memref.dim %arg0
// CHECK:         %[[W:.*]] = memref.alloc({{.*}}) : memref<?x?x?x?xf32>
// CHECK:         %[[ROWS:.*]] = arith.constant 25 : index
// CHECK-NEXT:    %[[COLS:.*]] = arith.constant 576 : index
// CHECK-NEXT:    %[[COL:.*]] = memref.alloc(%[[ROWS]], %[[COLS]]) : memref<?x?xf32>
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %[[N]] step %{{.*}} {
// CHECK:           scf.for %[[OW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT:         arith.cmpi
// CHECK:             %[[V:.*]] = memref.load %arg0[%[[I]], {{.*}}]
// CHECK-NOT:         arith.select
// CHECK:             memref.store %[[V]], %[[COL]][{{.*}}] : memref<?x?xf32>
// CHECK:           func.call @scipy_cblas_sgemm({{.*}}) : (i32, i32, i32, i32, i32, i32, f32, !llvm.ptr, i32, !llvm.ptr, i32, f32, !llvm.ptr, i32) -> ()
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %[[COL]] : memref<?x?xf32>
// CHECK-NEXT:    memref.dealloc %[[W]] : memref<?x?x?x?xf32>

// conv_grad_inputs with padding: the shape function checks that the kernel fits and
// that the output gradient has the convolution's shape; the result is zeroed, then per
// image one dgemm (transposed filters) . grad into col, and col2im adds col into the
// result, a tap in the padding clamped to position 0 and adding 0 there.

func.func @grad_inputs(%g: tensor<?x?x?x?xf64>, %w: tensor<?x?x?x?xf64>, %h: tensor<i64>, %k: tensor<i64>) -> tensor<?x?x?x?xf64> {
  %0 = ag.conv_grad_inputs %g, %w[%h, %k] {strides = array<i64: 2, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 0>, groups = 1 : i64} : tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<i64>, tensor<i64> -> tensor<?x?x?x?xf64>
  func.return %0 : tensor<?x?x?x?xf64>
}

// CHECK-LABEL: func.func @grad_inputs__shape(
// CHECK-SAME:    "ag.conv_grad_inputs: along spatial axis 0, the filter length %d (dilation 1) does not fit the input length %d padded by 1"
// CHECK-SAME:    "ag.conv_grad_inputs: the output gradient has shape (%d, %d, %d, %d), the convolution gives (%d, %d, %d, %d)"
// CHECK-LABEL: func.func @grad_inputs(
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:         memref.store %[[ZERO]], %out0
// CHECK:         %[[COL:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xf64>
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %[[TRANS:.*]] = arith.constant 112 : i32
// CHECK:           func.call @scipy_cblas_dgemm(%{{.*}}, %[[TRANS]], {{.*}})
// CHECK:           %[[AT:.*]] = arith.subi
// CHECK:           %[[LO:.*]] = arith.cmpi sge, %[[AT]]
// CHECK-NEXT:      %[[HI:.*]] = arith.cmpi slt, %[[AT]]
// CHECK-NEXT:      %[[IN:.*]] = arith.andi %[[LO]], %[[HI]] : i1
// CHECK:           %[[POS:.*]] = arith.select %[[IN]], %[[AT]]
// CHECK:           %[[C:.*]] = memref.load %[[COL]]
// CHECK-NEXT:      %[[ADD:.*]] = arith.select %[[IN]], %[[C]]
// CHECK:           %[[OLD:.*]] = memref.load %out0[%[[I]], %{{.*}}, %[[POS]], %{{.*}}]
// CHECK-NEXT:      %[[NEW:.*]] = arith.addf %[[OLD]], %[[ADD]] : f64
// CHECK-NEXT:      memref.store %[[NEW]], %out0[%[[I]], %{{.*}}, %[[POS]], %{{.*}}]
// CHECK:         memref.dealloc %[[COL]] : memref<?x?xf64>

// 'half' padding (pads = -1) of filters whose length is known at run time only: the
// padding (k - 1) / 2 is computed from the filter length, and the im2col loads test
// the bounds of that axis only.

func.func @half(%x: tensor<?x?x?x?xf32>, %w: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %0 = ag.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: -1, 0>, groups = 1 : i64} : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  func.return %0 : tensor<?x?x?x?xf32>
}

// CHECK-LABEL: func.func @half__shape(
// CHECK-SAME:    "ag.conv: along spatial axis 0, the filter length %d (dilation 1) does not fit the input length %d padded by 'half'"
// CHECK-LABEL: func.func @half(
// CHECK:         scf.for
// CHECK:           %[[PAD:.*]] = arith.divsi %{{.*}}, %{{.*}} : index
// CHECK:           %[[AT:.*]] = arith.subi %{{.*}}, %[[PAD]] : index
// CHECK:           %[[LO:.*]] = arith.cmpi sge, %[[AT]]
// CHECK-NEXT:      %[[HI:.*]] = arith.cmpi slt, %[[AT]]
// CHECK:           memref.load %arg0
// CHECK-NEXT:      arith.select

// The BLAS functions are declared once, at the end of the module.
// CHECK-DAG:   func.func private @scipy_cblas_sgemm(
// CHECK-DAG:   func.func private @scipy_cblas_dgemm(
