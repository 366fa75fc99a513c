// Buffer reuse in ag-to-loops. It honours ag.destroy_map: the result is computed into
// the dead operand's buffer (no memref.alloc), which is freed after the result's last
// use instead; and it keeps dead intermediates for later ones of their type and size.
// RUN: arignote-opt %s -p ag-to-loops | filecheck %s

// CHECK-LABEL: func.func @chain(
// CHECK:         %[[BUF:.*]] = memref.alloc(%d) : memref<?xf32>
// CHECK-NOT:     memref.alloc
// CHECK:           %[[E:.*]] = math.exp
// CHECK-NEXT:      memref.store %[[E]], %[[BUF]][%i]
// CHECK:           %[[X:.*]] = memref.load %[[BUF]][%i_1]
// CHECK-NEXT:      %[[T:.*]] = math.tanh %[[X]] : f32
// CHECK-NEXT:      memref.store %[[T]], %[[BUF]][%i_1]
// CHECK:         memref.dealloc %[[BUF]] : memref<?xf32>
// CHECK-NEXT:    %[[STATUS:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    func.return %[[STATUS]] : i64
func.func @chain(%x: tensor<?xf32>) -> tensor<f32> {
  %e = ag.exp %x : tensor<?xf32>
  %t = ag.tanh %e {ag.destroy_map = array<i64: 0, 0>} : tensor<?xf32>
  %s = ag.reduce_sum %t {axes = array<i64: 0>} : tensor<?xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}

// Every operand is loaded and every result computed before the first store.
// CHECK-LABEL: func.func @fused(
// CHECK:         %[[P:.*]] = memref.alloc(%d, %d_1) : memref<?x?xf64>
// CHECK:         %[[Q:.*]] = memref.alloc(%d, %d_1) : memref<?x?xf64>
// CHECK-NOT:     memref.alloc
// CHECK:             %[[A:.*]] = memref.load %[[P]]{{\[}}[[I:%[a-z0-9_]+]], [[J:%[a-z0-9_]+]]]
// CHECK:             %[[S:.*]] = arith.addf %[[A]], %{{.*}} : f64
// CHECK-NEXT:        %[[T:.*]] = math.tanh %[[S]] : f64
// CHECK-NEXT:        memref.store %[[S]], %[[P]]{{\[}}[[I]], [[J]]]
// CHECK-NEXT:        memref.store %[[T]], %[[Q]]{{\[}}[[I]], [[J]]]
// CHECK:             %[[M:.*]] = arith.mulf
// CHECK-NEXT:        memref.store %[[M]], %[[P]]{{\[}}
// CHECK:         memref.dealloc %[[Q]]
// CHECK:         memref.dealloc %[[P]]
// CHECK-NEXT:    %[[STATUS:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    func.return %[[STATUS]] : i64
func.func @fused(%m: tensor<?x?xf64>, %v: tensor<?xf64>) -> tensor<?xf64> {
  %p = ag.exp %m : tensor<?x?xf64>
  %r, %q = ag.fused %p, %v : tensor<?x?xf64>, tensor<?xf64> -> tensor<?x?xf64>, tensor<?x?xf64> {
  ^bb0(%a: tensor<?x?xf64>, %b: tensor<?xf64>):
    %bb = ag.dimshuffle %b {pattern = array<i64: -1, 0>} : tensor<?xf64> -> tensor<1x?xf64>
    %s = ag.add %a, %bb : tensor<?x?xf64>, tensor<1x?xf64> -> tensor<?x?xf64>
    %t = ag.tanh %s : tensor<?x?xf64>
    ag.yield %s, %t : tensor<?x?xf64>, tensor<?x?xf64>
  } {ag.destroy_map = array<i64: 0, 0>}
  %w = ag.mul %r, %q {ag.destroy_map = array<i64: 0, 0>} : tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?x?xf64>
  %z = ag.reduce_sum %w {axes = array<i64: 0>} : tensor<?x?xf64> -> tensor<?xf64>
  func.return %z : tensor<?xf64>
}

// A function argument is never overwritten, even when asked: the result gets a buffer.
// CHECK-LABEL: func.func @argument(
// CHECK:         memref.alloc
// CHECK-NOT:     memref.store %{{.*}}, %arg0
func.func @argument(%x: tensor<?xf32>) -> tensor<f32> {
  %t = ag.tanh %x {ag.destroy_map = array<i64: 0, 0>} : tensor<?xf32>
  %s = ag.reduce_sum %t {axes = array<i64: 0>} : tensor<?xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}

// Without a destroy map, a dead intermediate is kept for a later one of the same type
// and dimensions (here exp(x), dead after its sum, holds neg(x)); the rest is freed.
// CHECK-LABEL: func.func @pool(
// CHECK:         %[[BUF:.*]] = memref.alloc(%d) : memref<?xf32>
// CHECK:           memref.store %{{.*}}, %[[BUF]][%i]
// CHECK:           memref.load %[[BUF]][%{{.*}}]
// CHECK-NOT:     memref.dealloc
// CHECK:           %[[XI:.*]] = memref.load %arg0
// CHECK-NEXT:      %[[N:.*]] = arith.negf %[[XI]]
// CHECK-NEXT:      memref.store %[[N]], %[[BUF]][%{{.*}}]
// CHECK:         %[[E:.*]] = memref.alloc(%d) : memref<?xf32>
// CHECK:         memref.dealloc %[[BUF]]
// CHECK:         memref.dealloc %[[E]]
// CHECK-NEXT:    %[[STATUS:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    func.return %[[STATUS]] : i64
func.func @pool(%x: tensor<?xf32>, %y: tensor<?xf32>) -> (tensor<f32>, tensor<f32>) {
  %a = ag.exp %x : tensor<?xf32>
  %s = ag.reduce_sum %a {axes = array<i64: 0>} : tensor<?xf32> -> tensor<f32>
  %n = ag.neg %x : tensor<?xf32>
  %e = ag.exp %n : tensor<?xf32>
  %t = ag.reduce_max %e {axes = array<i64: 0>} : tensor<?xf32> -> tensor<f32>
  func.return %s, %t : tensor<f32>, tensor<f32>
}
