// ag.fused: round trip of the elementwise form (several results, a broadcast
// dimshuffle, a splat constant) and of the reduction form; the generic form parses too.
// RUN: arignote-opt %s | filecheck %s
// RUN: arignote-opt %s | arignote-opt | filecheck %s
// RUN: arignote-opt %s --print-op-generic | arignote-opt | filecheck %s

// CHECK-LABEL: func.func @elementwise
// CHECK-NEXT:    %r, %e = ag.fused %x, %y : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>, tensor<?x?xf32> {
// CHECK-NEXT:    ^bb0(%a: tensor<?x?xf32>, %b: tensor<?xf32>):
// CHECK-NEXT:      %two = ag.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:      %bb = ag.dimshuffle %b {pattern = array<i64: -1, 0>} : tensor<?xf32> -> tensor<1x?xf32>
// CHECK-NEXT:      %e_1 = ag.exp %a : tensor<?x?xf32>
// CHECK-NEXT:      %m = ag.mul %e_1, %bb : tensor<?x?xf32>, tensor<1x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:      %r_1 = ag.mul %m, %two : tensor<?x?xf32>, tensor<f32> -> tensor<?x?xf32>
// CHECK-NEXT:      ag.yield %r_1, %e_1 : tensor<?x?xf32>, tensor<?x?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r, %e
func.func @elementwise(%x: tensor<?x?xf32>, %y: tensor<?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %r, %e = ag.fused %x, %y : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>, tensor<?x?xf32> {
  ^bb0(%a: tensor<?x?xf32>, %b: tensor<?xf32>):
    %two = ag.constant dense<2.0> : tensor<f32>
    %bb = ag.dimshuffle %b {pattern = array<i64: -1, 0>} : tensor<?xf32> -> tensor<1x?xf32>
    %e_1 = ag.exp %a : tensor<?x?xf32>
    %m = ag.mul %e_1, %bb : tensor<?x?xf32>, tensor<1x?xf32> -> tensor<?x?xf32>
    %r_1 = ag.mul %m, %two : tensor<?x?xf32>, tensor<f32> -> tensor<?x?xf32>
    ag.yield %r_1, %e_1 : tensor<?x?xf32>, tensor<?x?xf32>
  }
  func.return %r, %e : tensor<?x?xf32>, tensor<?x?xf32>
}

// A vector read only through a dimshuffle into a ?x1 domain (logsoftmax's log of the row sums).
// CHECK-LABEL: func.func @column_domain
// CHECK:         ag.dimshuffle %s {pattern = array<i64: 0, -1>} : tensor<?xf32> -> tensor<?x1xf32>
// CHECK-NEXT:    ag.log %c : tensor<?x1xf32>
func.func @column_domain(%v: tensor<?xf32>) -> tensor<?x1xf32> {
  %r = ag.fused %v : tensor<?xf32> -> tensor<?x1xf32> {
  ^bb0(%s: tensor<?xf32>):
    %c = ag.dimshuffle %s {pattern = array<i64: 0, -1>} : tensor<?xf32> -> tensor<?x1xf32>
    %l = ag.log %c : tensor<?x1xf32>
    ag.yield %l : tensor<?x1xf32>
  }
  func.return %r : tensor<?x1xf32>
}

// CHECK-LABEL: func.func @reduction
// CHECK-NEXT:    %s = ag.fused %x, %y : tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?xf64> {
// CHECK-NEXT:    ^bb0(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>):
// CHECK-NEXT:      %e = ag.exp %a : tensor<?x?xf64>
// CHECK-NEXT:      %m = ag.mul %e, %b : tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?x?xf64>
// CHECK-NEXT:      %s_1 = ag.reduce_sum %m {axes = array<i64: 1>} : tensor<?x?xf64> -> tensor<?xf64>
// CHECK-NEXT:      ag.yield %s_1 : tensor<?xf64>
// CHECK-NEXT:    }
func.func @reduction(%x: tensor<?x?xf64>, %y: tensor<?x?xf64>) -> tensor<?xf64> {
  %s = ag.fused %x, %y : tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?xf64> {
  ^bb0(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>):
    %e = ag.exp %a : tensor<?x?xf64>
    %m = ag.mul %e, %b : tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?x?xf64>
    %s_1 = ag.reduce_sum %m {axes = array<i64: 1>} : tensor<?x?xf64> -> tensor<?xf64>
    ag.yield %s_1 : tensor<?xf64>
  }
  func.return %s : tensor<?xf64>
}
