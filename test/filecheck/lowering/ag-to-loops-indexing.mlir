// RUN: arignote-opt %s -p ag-to-loops | filecheck %s

// `x[i, 1::2]` with a symbolic index `i`: the shape function reads `i` (a 0-d memref),
// wraps it if negative, checks it against the axis length, and computes the slice
// length; the compute function evaluates the same index code, views the selected row
// (memref.subview, stride 2) and copies the view into the output.

func.func @subtensor(%x: tensor<?x?xf32>, %i: tensor<i64>) -> tensor<?xf32> {
  %0 = ag.subtensor %x[%i] {kinds = array<i64: 1, 0>, starts = array<i64: -9223372036854775808, 1>, stops = array<i64: -9223372036854775807, -9223372036854775807>, steps = array<i64: -9223372036854775807, 2>} : tensor<?x?xf32>, tensor<i64> -> tensor<?xf32>
  func.return %0 : tensor<?xf32>
}

// CHECK-LABEL: func.func @subtensor__shape(
// CHECK-SAME:      %arg1: memref<i64, strided<[], offset: ?>>
// CHECK-SAME:      ag.checks = ["ag.subtensor: index %d is out of bounds for axis 0 with size %d"]
// CHECK:         %[[ROWS:.*]] = memref.dim %arg0
// CHECK:         %[[COLS:.*]] = memref.dim %arg0
// CHECK:         %[[RAW:.*]] = memref.load %arg1[] : memref<i64, strided<[], offset: ?>>
// CHECK:         %[[I:.*]] = arith.index_cast %[[RAW]] : i64 to index
// CHECK:         %[[NEG:.*]] = arith.cmpi slt, %[[I]], %{{.*}} : index
// CHECK:         %[[PLUS:.*]] = arith.addi %[[I]], %[[ROWS]] : index
// CHECK:         %[[W:.*]] = arith.select %[[NEG]], %[[PLUS]], %[[I]] : index
// CHECK:         %[[LOW:.*]] = arith.cmpi sge, %[[W]], %{{.*}} : index
// CHECK:         %[[HIGH:.*]] = arith.cmpi slt, %[[W]], %[[ROWS]] : index
// CHECK:         %[[OK:.*]] = arith.andi %[[LOW]], %[[HIGH]] : i1
// CHECK:         arith.divsi
// CHECK:         %[[LEN:.*]] = arith.select
// CHECK:         %[[A:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK:         %[[B:.*]] = arith.index_cast %[[ROWS]] : index to i64
// CHECK:         cf.cond_br %[[OK]], ^[[NEXT:.*]], ^[[FAIL:.*]](%{{.*}}, %[[A]], %[[B]] : i64, i64, i64)
// CHECK:       ^[[NEXT]]:
// CHECK:         %[[L64:.*]] = arith.index_cast %[[LEN]] : index to i64
// CHECK:         memref.store %[[L64]], %dims

// CHECK-LABEL: func.func @subtensor(
// CHECK:         memref.load %arg1[]
// CHECK:         %[[VIEW:.*]] = memref.subview %arg0[%{{.*}}, %{{.*}}] [1, %{{.*}}] [1, 2]
// CHECK:         scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[V:.*]] = memref.load %[[VIEW]][%[[J]]]
// CHECK-NEXT:      memref.store %[[V]], %out0[%[[J]]] : memref<?xf32>

// `x[iv]`: the shape function scans the index array once, carrying whether an index
// was out of range and the first such index through `iter_args`.

func.func @take(%x: tensor<?x?xf64>, %iv: tensor<?xi32>) -> tensor<?x?xf64> {
  %0 = ag.advanced_subtensor %x[%iv] : tensor<?x?xf64>, tensor<?xi32> -> tensor<?x?xf64>
  func.return %0 : tensor<?x?xf64>
}

// CHECK-LABEL: func.func @take__shape(
// CHECK-SAME:      ag.checks = ["ag.advanced_subtensor: index %d is out of bounds for axis 0 with size %d"]
// CHECK:         %[[FOUND:.*]], %[[BAD:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[F:.*]] = %{{.*}}, %[[BV:.*]] = %{{.*}}) -> (i1, i64) {
// CHECK:           %[[E:.*]] = memref.load %arg1[%{{.*}}] : memref<?xi32, strided<[?], offset: ?>>
// CHECK:           %[[E64:.*]] = arith.extsi %[[E]] : i32 to i64
// CHECK:           arith.cmpi slt, %[[E64]]
// CHECK:           arith.cmpi sge, %[[E64]]
// CHECK:           scf.yield
// CHECK:         %[[NOTFOUND:.*]] = arith.xori %[[FOUND]], %{{.*}} : i1
// CHECK:         cf.cond_br %[[NOTFOUND]], ^{{.*}}, ^{{.*}}(%{{.*}}, %[[BAD]], %{{.*}} : i64, i64, i64)

// CHECK-LABEL: func.func @take(
// CHECK:         scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             %[[RAW:.*]] = memref.load %arg1[%[[R]]]
// CHECK-NEXT:        %[[IDX:.*]] = arith.index_cast %[[RAW]] : i32 to index
// CHECK:             %[[WR:.*]] = arith.select
// CHECK-NEXT:        %[[V:.*]] = memref.load %arg0[%[[WR]], %[[C]]]
// CHECK-NEXT:        memref.store %[[V]], %out0[%[[R]], %[[C]]]

// `reshape(x, (n, -1))`: the element count check, and a gather through the flat index.

func.func @reshape(%x: tensor<?x?xf32>, %n: tensor<i64>) -> tensor<?x?xf32> {
  %0 = ag.reshape %x[%n] {shape = array<i64: -9223372036854775808, -1>} : tensor<?x?xf32>, tensor<i64> -> tensor<?x?xf32>
  func.return %0 : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @reshape__shape(
// CHECK-SAME:      ag.checks = ["ag.reshape: invalid shape [%d, -1]", "ag.reshape: invalid shape [%d, -1]", "ag.reshape: cannot reshape %d elements into shape [%d, -1]"]
// CHECK:         %[[TOTAL:.*]] = arith.muli
// CHECK:         arith.remsi %[[TOTAL]]
// CHECK-LABEL: func.func @reshape(
// CHECK:           arith.remsi
// CHECK:           arith.divsi
// CHECK:           memref.load %arg0

// `concatenate` along axis 0: the other dimension is checked equal; each operand is
// copied into the view of the result at its offset (one flat loop when both are
// contiguous at run time, else the nest).

func.func @concatenate(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = ag.concatenate %a, %b {axis = 0 : i64} : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %0 : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @concatenate__shape(
// CHECK-SAME:      ag.checks = ["ag.concatenate: dimension 1 of operand #1 (shape (%d, %d)) differs from operand #0 (shape (%d, %d))"]
// CHECK-LABEL: func.func @concatenate(
// CHECK:         %[[A0:.*]] = memref.dim %arg0
// CHECK:         %[[FIRST:.*]] = memref.subview %out0[0, 0] [%[[A0]], %{{.*}}] [1, 1]
// CHECK:         scf.if
// CHECK:           scf.for %[[F:.*]] = %{{.*}} to
// CHECK-NEXT:        %[[V0:.*]] = memref.load %arg0[%{{.*}}, %[[F]]]
// CHECK-NEXT:        memref.store %[[V0]], %[[FIRST]][%{{.*}}, %[[F]]]
// CHECK:         } else {
// CHECK:         %[[SECOND:.*]] = memref.subview %out0[%[[A0]], 0] [%{{.*}}, %{{.*}}] [1, 1]
// CHECK:         scf.if
// CHECK:         } else {
// CHECK:           scf.for %[[I:.*]] = %{{.*}} to
// CHECK-NEXT:        scf.for %[[J:.*]] = %{{.*}} to
// CHECK-NEXT:          %[[V:.*]] = memref.load %arg1[%[[I]], %[[J]]]
// CHECK-NEXT:          memref.store %[[V]], %[[SECOND]][%[[I]], %[[J]]]

// `alloc(v, n, 3)` and `arange(start, stop, step)` read their lengths in the shape function.

func.func @alloc_arange(%v: tensor<f32>, %n: tensor<i64>) -> (tensor<?x3xf32>, tensor<?xi64>) {
  %0 = ag.alloc %v[%n] {shape = array<i64: -9223372036854775808, 3>} : tensor<f32>, tensor<i64> -> tensor<?x3xf32>
  %1 = ag.arange %n, %n, %n : tensor<i64> -> tensor<?xi64>
  func.return %0, %1 : tensor<?x3xf32>, tensor<?xi64>
}

// CHECK-LABEL: func.func @alloc_arange__shape(
// CHECK-SAME:      ag.checks = ["ag.alloc: shape (%d, 3) has a negative length", "ag.arange: the step must not be zero"]
// CHECK:         arith.floordivsi
// CHECK:         arith.maxsi
// CHECK-LABEL: func.func @alloc_arange(

// A reshape, the last use of an intermediate the function allocated: no copy, the
// result takes over the buffer (`memref.reinterpret_cast`, row-major strides); the
// subtensor after it is a view of it, and the buffer is freed after the view's last use.

func.func @reshape_in_place(%x: tensor<?x?xf32>, %n: tensor<i64>) -> tensor<?x?xf32> {
  %e = ag.exp %x : tensor<?x?xf32>
  %r = ag.reshape %e[%n] {shape = array<i64: -9223372036854775808, -1>} : tensor<?x?xf32>, tensor<i64> -> tensor<?x?xf32>
  %t = ag.subtensor %r[%n] {kinds = array<i64: 0, 0>, starts = array<i64: -9223372036854775807, -9223372036854775807>, stops = array<i64: -9223372036854775808, -9223372036854775807>, steps = array<i64: -9223372036854775807, -9223372036854775807>} : tensor<?x?xf32>, tensor<i64> -> tensor<?x?xf32>
  %l = ag.log %t : tensor<?x?xf32>
  func.return %l : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @reshape_in_place(
// CHECK:         %[[E:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xf32>
// CHECK:         math.exp
// CHECK-NOT:     memref.alloc
// CHECK:         %[[R:.*]] = memref.reinterpret_cast %[[E]] to offset: [0], sizes: [%{{.*}}, %{{.*}}], strides: [%{{.*}}, 1] : memref<?x?xf32> to memref<?x?xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         %[[T:.*]] = memref.subview %[[R]][0, 0]
// CHECK-NOT:     memref.alloc
// CHECK:         memref.load %[[T]]
// CHECK:         math.log
// CHECK:         memref.dealloc %[[R]] : memref<?x?xf32>
// CHECK-NOT:     memref.dealloc
// CHECK:         func.return

// A reshape of a function argument (any strides): one flat loop when its strides are
// row-major (checked at run time), the gather through the flat index otherwise.

func.func @reshape_argument(%x: tensor<?x?x?xf32>) -> tensor<?x4xf32> {
  %0 = ag.reshape %x[] {shape = array<i64: -1, 4>} : tensor<?x?x?xf32> -> tensor<?x4xf32>
  %1 = ag.exp %0 : tensor<?x4xf32>
  %2 = ag.reshape %1[] {shape = array<i64: 2, -1>} : tensor<?x4xf32> -> tensor<2x?xf32>
  %3 = ag.log %2 : tensor<2x?xf32>
  %4 = ag.reshape %3[] {shape = array<i64: -1, 4>} : tensor<2x?xf32> -> tensor<?x4xf32>
  func.return %4 : tensor<?x4xf32>
}

// CHECK-LABEL: func.func @reshape_argument(
// CHECK:         memref.extract_strided_metadata %arg0
// CHECK:         scf.if
// CHECK:           scf.for %{{.*}} = %[[Z:.*]] to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        memref.load %arg0[%[[Z]], %[[Z]], %{{.*}}]
// CHECK-NEXT:        memref.store
// CHECK-NEXT:      }
// CHECK-NEXT:    } else {
// CHECK:           arith.remsi
// CHECK:         memref.reinterpret_cast

// `x[::s]` with a symbolic step `s`: the length is `(d -+ 1) / s + 1` for the distance
// `d` between the clipped bounds (0 for an empty range), never `ceil(d / |s|)`, whose
// `0 - s` overflows for s = -2**63.

func.func @dynamic_step(%x: tensor<?xf64>, %s: tensor<i64>) -> tensor<?xf64> {
  %0 = ag.subtensor %x[%s] {kinds = array<i64: 0>, starts = array<i64: -9223372036854775807>, stops = array<i64: -9223372036854775807>, steps = array<i64: -9223372036854775808>} : tensor<?xf64>, tensor<i64> -> tensor<?xf64>
  func.return %0 : tensor<?xf64>
}

// CHECK-LABEL: func.func @dynamic_step__shape(
// CHECK:         %[[S:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:         %[[NONZERO:.*]] = arith.cmpi ne, %[[S]], %{{.*}} : index
// CHECK:         %[[STEP:.*]] = arith.select %[[NONZERO]], %[[S]], %{{.*}} : index
// CHECK:         %[[UP:.*]] = arith.cmpi sgt, %[[STEP]], %{{.*}} : index
// CHECK-NOT:     arith.subi %{{.*}}, %[[STEP]]
// CHECK:         %[[FIRST:.*]] = arith.select %[[UP]], %{{.*}}, %{{.*}} : index
// CHECK:         %[[LAST:.*]] = arith.select %[[UP]], %{{.*}}, %{{.*}} : index
// CHECK-NOT:     arith.subi %{{.*}}, %[[STEP]]
// CHECK:         %[[D:.*]] = arith.subi %[[LAST]], %[[FIRST]] : index
// CHECK:         %[[POS:.*]] = arith.cmpi sgt, %[[D]], %{{.*}} : index
// CHECK:         %[[NEG:.*]] = arith.cmpi slt, %[[D]], %{{.*}} : index
// CHECK:         %[[NONEMPTY:.*]] = arith.select %[[UP]], %[[POS]], %[[NEG]] : i1
// CHECK:         %[[INNER:.*]] = arith.select %[[UP]], %{{.*}}, %{{.*}} : index
// CHECK:         %[[Q:.*]] = arith.divsi %[[INNER]], %[[STEP]] : index
// CHECK:         %[[COUNT:.*]] = arith.addi %[[Q]], %{{.*}} : index
// CHECK:         arith.select %[[NONEMPTY]], %[[COUNT]], %{{.*}} : index
