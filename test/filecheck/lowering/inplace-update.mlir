// RUN: arignote-opt %s -p inplace-update | filecheck %s
// RUN: arignote-opt %s -p inplace-update | arignote-opt | filecheck %s

// W's update (result 1) is a gemm accumulating onto W (operand 4): it takes W's buffer
// (`ag.inplace_results`), and moves after %h, the other reader of W.
// CHECK-LABEL: func.func @gemm(
// CHECK-SAME:    attributes {ag.updates = array<i64: 1, 2>, ag.inplace_results = array<i64: 1, 2>}
// CHECK:         %h = ag.gemm %one, %x, %w :
// CHECK-NEXT:    %n = ag.gemm %lr, %x, %d, %one, %w {ag.destroy_map = array<i64: 0, 4>, transpose_a} :
// CHECK-NEXT:    func.return %h, %n
func.func @gemm(%x: tensor<?x?xf64>, %d: tensor<?x?xf64>, %w: tensor<?x?xf64>) -> (tensor<?x?xf64>, tensor<?x?xf64>) attributes {ag.updates = array<i64: 1, 2>} {
  %lr = ag.constant dense<-1.0e-01> : tensor<f64>
  %one = ag.constant dense<1.0> : tensor<f64>
  %n = ag.gemm %lr, %x, %d, %one, %w {transpose_a} : tensor<f64>, tensor<?x?xf64>, tensor<?x?xf64>, tensor<f64>, tensor<?x?xf64> -> tensor<?x?xf64>
  %h = ag.gemm %one, %x, %w : tensor<f64>, tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?x?xf64>
  func.return %h, %n : tensor<?x?xf64>, tensor<?x?xf64>
}

// Returning W's old value does not block it (ag-to-loops copies returned arguments
// first); an elementwise producer overwrites the operand it reads pointwise.
// CHECK-LABEL: func.func @old_value(
// CHECK-SAME:    attributes {ag.updates = array<i64: 1, 1>, ag.inplace_results = array<i64: 1, 1>}
// CHECK-NEXT:    %u = ag.add %w, %v {ag.destroy_map = array<i64: 0, 0>}
// CHECK-NEXT:    func.return %w, %u
func.func @old_value(%v: tensor<?xf32>, %w: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) attributes {ag.updates = array<i64: 1, 1>} {
  %u = ag.add %w, %v : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  func.return %w, %u : tensor<?xf32>, tensor<?xf32>
}

// Refused: the producer also reads a transposed view of W (%u); the producer of B's new
// value has a user (%s) before the last other reader of B (%k), so it cannot move after
// it; C's view is returned (copied at the end, after an update). No attribute is added.
// CHECK-LABEL: func.func @refused(
// CHECK-SAME:    attributes {ag.updates = array<i64: 0, 0, 1, 1, 2, 2>} {
// CHECK-NOT:     ag.destroy_map
// CHECK:         func.return
func.func @refused(%w: tensor<?x?xf32>, %b: tensor<?xf32>, %c: tensor<?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<1x?xf32>, tensor<?xf32>) attributes {ag.updates = array<i64: 0, 0, 1, 1, 2, 2>} {
  %t = ag.dimshuffle %w {pattern = array<i64: 1, 0>} : tensor<?x?xf32> -> tensor<?x?xf32>
  %u = ag.add %w, %t : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %b2 = ag.exp %b : tensor<?xf32>
  %s = ag.reduce_sum %b2 {axes = array<i64: 0>} : tensor<?xf32> -> tensor<f32>
  %k = ag.mul %b, %s : tensor<?xf32>, tensor<f32> -> tensor<?xf32>
  %c2 = ag.neg %c : tensor<?xf32>
  %cv = ag.dimshuffle %c {pattern = array<i64: -1, 0>} : tensor<?xf32> -> tensor<1x?xf32>
  func.return %u, %b2, %c2, %cv, %k : tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<1x?xf32>, tensor<?xf32>
}

// A value returned twice takes the first output's buffer: as an update returned after
// an output it is refused.
// CHECK-LABEL: func.func @twice(
// CHECK-SAME:    attributes {ag.updates = array<i64: 1, 0>} {
// CHECK-NEXT:    %u = ag.exp %w : tensor<?xf32>
func.func @twice(%w: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) attributes {ag.updates = array<i64: 1, 0>} {
  %u = ag.exp %w : tensor<?xf32>
  func.return %u, %u : tensor<?xf32>, tensor<?xf32>
}
