// Basic ag.subtensor as a view in ag-to-loops (lowering/loops/ag_views.py): a memref.subview
// of the operand's memory instead of a copy loop. The viewed buffer lives as long as
// its views; no op overwrites it (ag.destroy_map) while a view of it is live or is
// another of its operands; a returned subtensor is still a copy (outputs never alias).
// RUN: arignote-opt %s -p ag-to-loops | filecheck %s

// x[::-1] of an intermediate: a subview at row n - 1 with stride -1; exp's buffer is
// freed after the reduction reading the view, not after the subtensor.
// CHECK-LABEL: func.func @reverse(
// CHECK:         %[[E:.*]] = memref.alloc(%d) : memref<?x3xf32>
// CHECK:         %[[LAST:.*]] = arith.subi %d, %{{.*}} : index
// CHECK:         %[[V:.*]] = memref.subview %[[E]][%[[LAST]], 0] [%{{.*}}, 3] [-1, 1] : memref<?x3xf32> to memref<?x3xf32, strided<[?, ?], offset: ?>>
// CHECK-NOT:     memref.alloc
// CHECK:         memref.load %[[V]]
// CHECK:         memref.dealloc %[[E]]
// CHECK-NEXT:    %[[STATUS:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    func.return %[[STATUS]] : i64
func.func @reverse(%x: tensor<?x3xf32>) -> tensor<3xf32> {
  %e = ag.exp %x : tensor<?x3xf32>
  %r = ag.subtensor %e[] {kinds = array<i64: 0, 0>, starts = array<i64: -9223372036854775807, -9223372036854775807>, stops = array<i64: -9223372036854775807, -9223372036854775807>, steps = array<i64: -1, -9223372036854775807>} : tensor<?x3xf32> -> tensor<?x3xf32>
  %s = ag.reduce_sum %r {axes = array<i64: 0>} : tensor<?x3xf32> -> tensor<3xf32>
  func.return %s : tensor<3xf32>
}

// Leading integer indices drop axes (a rank-reducing subview); a slice of an argument
// views the argument's memory (it is only read).
// CHECK-LABEL: func.func @row_of_argument(
// CHECK:         %[[ROW:.*]] = memref.subview %arg0[%{{.*}}, %{{.*}}] [1, %{{.*}}] [1, 2] : memref<?x?xf32, strided<[?, ?], offset: ?>> to memref<?xf32, strided<[?], offset: ?>>
// CHECK-NOT:     memref.alloc
// CHECK:         memref.load %[[ROW]]
func.func @row_of_argument(%x: tensor<?x?xf32>) -> tensor<f32> {
  %r = ag.subtensor %x[] {kinds = array<i64: 1, 0>, starts = array<i64: -1, 1>, stops = array<i64: -9223372036854775807, -9223372036854775807>, steps = array<i64: -9223372036854775807, 2>} : tensor<?x?xf32> -> tensor<?xf32>
  %s = ag.reduce_sum %r {axes = array<i64: 0>} : tensor<?xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}

// A returned subtensor is copied into its output (a view would alias the argument):
// the copy reads the view.
// CHECK-LABEL: func.func @returned(
// CHECK:         %[[V:.*]] = memref.subview %arg0
// CHECK-NOT:     memref.alloc
// CHECK:         memref.load %[[V]]
// CHECK-NEXT:    memref.store %{{.*}}, %out0
func.func @returned(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = ag.subtensor %x[] {kinds = array<i64: 0, 0>, starts = array<i64: -9223372036854775807, -9223372036854775807>, stops = array<i64: -9223372036854775807, -9223372036854775807>, steps = array<i64: -1, -9223372036854775807>} : tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}

// An integer index after a slice (x[:, 0]) is no leading-axis subview: a copy loop.
// CHECK-LABEL: func.func @column(
// CHECK-NOT:     memref.subview
// CHECK:         %[[C:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:         memref.store %{{.*}}, %[[C]]
func.func @column(%x: tensor<?x?xf32>) -> tensor<f32> {
  %c = ag.subtensor %x[] {kinds = array<i64: 0, 1>, starts = array<i64: -9223372036854775807, 0>, stops = array<i64: -9223372036854775807, -9223372036854775807>, steps = array<i64: -9223372036854775807, -9223372036854775807>} : tensor<?x?xf32> -> tensor<?xf32>
  %s = ag.reduce_sum %c {axes = array<i64: 0>} : tensor<?xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}

// tanh is asked to overwrite exp's buffer, but a view of it is read afterwards: tanh
// gets its own buffer and the view still reads exp's values.
// CHECK-LABEL: func.func @live_view(
// CHECK:         %[[E:.*]] = memref.alloc(%d) : memref<?xf32>
// CHECK:         %[[V:.*]] = memref.subview %[[E]]
// CHECK:         %[[T:.*]] = memref.alloc(%d) : memref<?xf32>
// CHECK:           math.tanh
// CHECK-NEXT:      memref.store %{{.*}}, %[[T]]
// CHECK:         memref.load %[[V]]
func.func @live_view(%x: tensor<?xf32>) -> tensor<?xf32> {
  %e = ag.exp %x : tensor<?xf32>
  %v = ag.subtensor %e[] {kinds = array<i64: 0>, starts = array<i64: -9223372036854775807>, stops = array<i64: -9223372036854775807>, steps = array<i64: -1>} : tensor<?xf32> -> tensor<?xf32>
  %t = ag.tanh %e {ag.destroy_map = array<i64: 0, 0>} : tensor<?xf32>
  %s = ag.add %t, %v : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  func.return %s : tensor<?xf32>
}

// e + e[::-1] may not overwrite e: the other operand reads it in another order.
// CHECK-LABEL: func.func @aliased_operand(
// CHECK:         %[[E:.*]] = memref.alloc(%d) : memref<?xf32>
// CHECK:         %[[V:.*]] = memref.subview %[[E]]
// CHECK:         %[[A:.*]] = memref.alloc(%d) : memref<?xf32>
// CHECK:           memref.load %[[E]]
// CHECK:           memref.load %[[V]]
// CHECK:           memref.store %{{.*}}, %[[A]]
func.func @aliased_operand(%x: tensor<?xf32>) -> tensor<f32> {
  %e = ag.exp %x : tensor<?xf32>
  %v = ag.subtensor %e[] {kinds = array<i64: 0>, starts = array<i64: -9223372036854775807>, stops = array<i64: -9223372036854775807>, steps = array<i64: -1>} : tensor<?xf32> -> tensor<?xf32>
  %a = ag.add %e, %v {ag.destroy_map = array<i64: 0, 0>} : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  %s = ag.reduce_sum %a {axes = array<i64: 0>} : tensor<?xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}

// A view is never overwritten (its memory is its source's, here an argument's).
// CHECK-LABEL: func.func @destroy_view(
// CHECK:         %[[V:.*]] = memref.subview %arg0
// CHECK:         %[[T:.*]] = memref.alloc
// CHECK-NOT:     memref.store %{{.*}}, %[[V]]
func.func @destroy_view(%x: tensor<?xf32>) -> tensor<f32> {
  %v = ag.subtensor %x[] {kinds = array<i64: 0>, starts = array<i64: -9223372036854775807>, stops = array<i64: -9223372036854775807>, steps = array<i64: -1>} : tensor<?xf32> -> tensor<?xf32>
  %t = ag.tanh %v {ag.destroy_map = array<i64: 0, 0>} : tensor<?xf32>
  %s = ag.reduce_sum %t {axes = array<i64: 0>} : tensor<?xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}
