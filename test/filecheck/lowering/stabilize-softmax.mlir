// RUN: arignote-opt %s -p stabilize | filecheck %s

// -log(softmax(x)[rows, y]): the log of the picked probability becomes the picked
// log-softmax, x - max - log(sum(exp(x - max))).
func.func @xent(%x: tensor<?x?xf32>, %rows: tensor<?xi64>, %y: tensor<?xi64>) -> tensor<?xf32> {
  %sm = ag.softmax %x : tensor<?x?xf32> -> tensor<?x?xf32>
  %p = ag.advanced_subtensor %sm[%rows, %y] : tensor<?x?xf32>, tensor<?xi64>, tensor<?xi64> -> tensor<?xf32>
  %l = ag.log %p : tensor<?xf32>
  %n = ag.neg %l : tensor<?xf32>
  func.return %n : tensor<?xf32>
}

// CHECK-LABEL: func.func @xent
// CHECK:         %[[M:.*]] = ag.reduce_max %x {axes = array<i64: 1>}
// CHECK:         %[[MK:.*]] = ag.dimshuffle %[[M]] {pattern = array<i64: 0, -1>}
// CHECK:         %[[S:.*]] = ag.sub %x, %[[MK]]
// CHECK:         %[[E:.*]] = ag.exp %[[S]]
// CHECK:         %[[T:.*]] = ag.reduce_sum %[[E]] {axes = array<i64: 1>}
// CHECK:         %[[TK:.*]] = ag.dimshuffle %[[T]]
// CHECK:         %[[L:.*]] = ag.log %[[TK]]
// CHECK:         %[[LS:.*]] = ag.sub %[[S]], %[[L]]
// CHECK:         %[[P:.*]] = ag.advanced_subtensor %[[LS]][%rows, %y]
// CHECK:         %[[N:.*]] = ag.neg %[[P]]
// CHECK-NEXT:    func.return %[[N]]

// The gradient of the same: the division by the picked probability is cancelled.
func.func @xent_grad(%x: tensor<?x?xf32>, %rows: tensor<?xi64>, %y: tensor<?xi64>, %g: tensor<?xf32>) -> tensor<?x?xf32> {
  %sm = ag.softmax %x : tensor<?x?xf32> -> tensor<?x?xf32>
  %p = ag.advanced_subtensor %sm[%rows, %y] : tensor<?x?xf32>, tensor<?xi64>, tensor<?xi64> -> tensor<?xf32>
  %h = ag.div %g, %p : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  %true = ag.constant dense<true> : tensor<i1>
  %zero = ag.constant dense<0.000000e+00> : tensor<f32>
  %z = ag.select %true, %zero, %sm : tensor<i1>, tensor<f32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %gs = ag.advanced_inc_subtensor %z[%rows, %y], %h : tensor<?x?xf32>, tensor<?xf32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x?xf32>
  %dx = ag.softmax_grad %gs, %sm : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %dx : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @xent_grad
// CHECK:         %[[SM:.*]] = ag.softmax %x
// CHECK:         %[[Z:.*]] = ag.select
// CHECK:         %[[G:.*]] = ag.advanced_inc_subtensor %[[Z]][%rows, %y], %g
// CHECK:         %[[T:.*]] = ag.reduce_sum %[[G]] {axes = array<i64: 1>}
// CHECK:         %[[TK:.*]] = ag.dimshuffle %[[T]]
// CHECK:         %[[TS:.*]] = ag.mul %[[TK]], %[[SM]]
// CHECK:         %[[DX:.*]] = ag.sub %[[G]], %[[TS]]
// CHECK-NOT:     ag.softmax_grad
// CHECK:         func.return %[[DX]]

// A one-hot cross-entropy's gradient: softmax_grad(h / sm, sm) becomes h - sum(h) * sm.
func.func @onehot_grad(%x: tensor<?x?xf64>, %h: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %sm = ag.softmax %x : tensor<?x?xf64> -> tensor<?x?xf64>
  %r = ag.div %h, %sm : tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?x?xf64>
  %dx = ag.softmax_grad %r, %sm : tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?x?xf64>
  func.return %dx : tensor<?x?xf64>
}

// CHECK-LABEL: func.func @onehot_grad
// CHECK:         %[[T:.*]] = ag.reduce_sum %h {axes = array<i64: 1>}
// CHECK:         %[[TK:.*]] = ag.dimshuffle %[[T]]
// CHECK:         %[[TS:.*]] = ag.mul %[[TK]], %[[SM:.*]] :
// CHECK:         %[[DX:.*]] = ag.sub %h, %[[TS]]
// CHECK-NOT:     ag.softmax_grad
