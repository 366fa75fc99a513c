// RUN: arignote-opt %s -p stabilize | filecheck %s

// -log(softmax(x)[arange(n), y]): one fused ag.softmax_xent (log-sum-exp minus the
// picked logit; the two negations cancel).
func.func @xent(%x: tensor<?x?xf32>, %y: tensor<?xi64>) -> tensor<?xf32> {
  %zero = ag.constant dense<0> : tensor<i64>
  %one = ag.constant dense<1> : tensor<i64>
  %n = ag.dim %y {axis = 0 : i64} : tensor<?xi64> -> tensor<i64>
  %rows = ag.arange %zero, %n, %one : tensor<i64> -> tensor<?xi64>
  %sm = ag.softmax %x : tensor<?x?xf32> -> tensor<?x?xf32>
  %p = ag.advanced_subtensor %sm[%rows, %y] : tensor<?x?xf32>, tensor<?xi64>, tensor<?xi64> -> tensor<?xf32>
  %l = ag.log %p : tensor<?xf32>
  %nll = ag.neg %l : tensor<?xf32>
  func.return %nll : tensor<?xf32>
}

// CHECK-LABEL: func.func @xent
// CHECK:         %[[F:.*]] = ag.softmax_xent %x, %y : tensor<?x?xf32>, tensor<?xi64> -> tensor<?xf32>
// CHECK-NEXT:    func.return %[[F]]

// Rows that are not arange(n): the log of the picked softmax becomes the picked
// log-softmax.
func.func @picked(%x: tensor<?x?xf32>, %rows: tensor<?xi64>, %y: tensor<?xi64>) -> tensor<?xf32> {
  %sm = ag.softmax %x : tensor<?x?xf32> -> tensor<?x?xf32>
  %p = ag.advanced_subtensor %sm[%rows, %y] : tensor<?x?xf32>, tensor<?xi64>, tensor<?xi64> -> tensor<?xf32>
  %l = ag.log %p : tensor<?xf32>
  func.return %l : tensor<?xf32>
}

// CHECK-LABEL: func.func @picked
// CHECK:         %[[LS:.*]] = ag.logsoftmax %x : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:    %[[P:.*]] = ag.advanced_subtensor %[[LS]][%rows, %y]
// CHECK-NEXT:    func.return %[[P]]

// The gradient of a cross-entropy through softmax_grad: the division by the picked
// probability is cancelled; with arange(n) rows it is one ag.softmax_xent_grad.
func.func @xent_grad(%x: tensor<?x?xf32>, %y: tensor<?xi64>, %g: tensor<?xf32>) -> tensor<?x?xf32> {
  %zero = ag.constant dense<0> : tensor<i64>
  %one = ag.constant dense<1> : tensor<i64>
  %n = ag.dim %y {axis = 0 : i64} : tensor<?xi64> -> tensor<i64>
  %rows = ag.arange %zero, %n, %one : tensor<i64> -> tensor<?xi64>
  %sm = ag.softmax %x : tensor<?x?xf32> -> tensor<?x?xf32>
  %p = ag.advanced_subtensor %sm[%rows, %y] : tensor<?x?xf32>, tensor<?xi64>, tensor<?xi64> -> tensor<?xf32>
  %h = ag.div %g, %p : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  %true = ag.constant dense<true> : tensor<i1>
  %fzero = ag.constant dense<0.000000e+00> : tensor<f32>
  %z = ag.select %true, %fzero, %sm : tensor<i1>, tensor<f32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %gs = ag.advanced_inc_subtensor %z[%rows, %y], %h : tensor<?x?xf32>, tensor<?xf32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x?xf32>
  %dx = ag.softmax_grad %gs, %sm : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %dx : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @xent_grad
// CHECK:         %[[NG:.*]] = ag.neg %g
// CHECK-NEXT:    %[[DX:.*]] = ag.softmax_xent_grad %[[NG]], %x, %y : tensor<?xf32>, tensor<?x?xf32>, tensor<?xi64> -> tensor<?x?xf32>
// CHECK-NEXT:    func.return %[[DX]]

// The same with other rows: inc(zeros, g) - sum(inc(zeros, g)) * sm.
func.func @picked_grad(%x: tensor<?x?xf32>, %rows: tensor<?xi64>, %y: tensor<?xi64>, %g: tensor<?xf32>) -> tensor<?x?xf32> {
  %sm = ag.softmax %x : tensor<?x?xf32> -> tensor<?x?xf32>
  %p = ag.advanced_subtensor %sm[%rows, %y] : tensor<?x?xf32>, tensor<?xi64>, tensor<?xi64> -> tensor<?xf32>
  %h = ag.div %g, %p : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  %true = ag.constant dense<true> : tensor<i1>
  %fzero = ag.constant dense<0.000000e+00> : tensor<f32>
  %z = ag.select %true, %fzero, %sm : tensor<i1>, tensor<f32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %gs = ag.advanced_inc_subtensor %z[%rows, %y], %h : tensor<?x?xf32>, tensor<?xf32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x?xf32>
  %dx = ag.softmax_grad %gs, %sm : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %dx : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @picked_grad
// CHECK:         %[[SM:.*]] = ag.softmax %x
// CHECK:         %[[Z:.*]] = ag.select
// CHECK:         %[[G:.*]] = ag.advanced_inc_subtensor %[[Z]][%rows, %y], %g
// CHECK-NEXT:    %[[T:.*]] = ag.reduce_sum %[[G]] {axes = array<i64: 1>}
// CHECK-NEXT:    %[[TK:.*]] = ag.dimshuffle %[[T]]
// CHECK-NEXT:    %[[TS:.*]] = ag.mul %[[TK]], %[[SM]]
// CHECK-NEXT:    %[[DX:.*]] = ag.sub %[[G]], %[[TS]]
// CHECK-NEXT:    func.return %[[DX]]

// A one-hot cross-entropy: log(softmax(x)) is the log-softmax, and softmax_grad(h / sm,
// sm) becomes h - sum(h) * sm.
func.func @onehot(%x: tensor<?x?xf64>, %h: tensor<?x?xf64>) -> (tensor<?x?xf64>, tensor<?x?xf64>) {
  %sm = ag.softmax %x : tensor<?x?xf64> -> tensor<?x?xf64>
  %l = ag.log %sm : tensor<?x?xf64>
  %r = ag.div %h, %sm : tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?x?xf64>
  %dx = ag.softmax_grad %r, %sm : tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?x?xf64>
  func.return %l, %dx : tensor<?x?xf64>, tensor<?x?xf64>
}

// CHECK-LABEL: func.func @onehot
// CHECK:         %[[SM:.*]] = ag.softmax %x
// CHECK:         %[[LS:.*]] = ag.logsoftmax %x
// CHECK:         %[[T:.*]] = ag.reduce_sum %h {axes = array<i64: 1>}
// CHECK-NEXT:    %[[TK:.*]] = ag.dimshuffle %[[T]]
// CHECK-NEXT:    %[[TS:.*]] = ag.mul %[[TK]], %[[SM]]
// CHECK-NEXT:    %[[DX:.*]] = ag.sub %h, %[[TS]]
// CHECK-NEXT:    func.return %[[LS]], %[[DX]]
