// RUN: arignote-opt %s -p row-fusion | filecheck %s
// RUN: arignote-opt %s -p row-fusion | arignote-opt | filecheck %s

// The doc example: u = A·w, e = u - y, Aᵀ·e → one ag.gemv_pair; y becomes a row operand.
// CHECK-LABEL: func.func @simple
// CHECK-NEXT:    %one = ag.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %u, %e, %r = ag.gemv_pair %a, %w, %one rows(%y) : tensor<?x?xf32>, tensor<?xf32>, tensor<f32> rows(tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
// CHECK-NEXT:    ^bb0(%d: tensor<f32>, %[[Y:.*]]: tensor<f32>):
// CHECK-NEXT:      %[[E:.*]] = ag.sub %d, %[[Y]] : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK-NEXT:      ag.yield %d, %[[E]] : tensor<f32>, tensor<f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r : tensor<?xf32>

// A logistic-regression step: the gradient's `select(true, 1, sum)` and `dim` of the loss
// are folded (else g would depend on all of u), the scale 1/N (computed after the forward
// gemv) moves before the fused op, the accumulation (w - lr·Aᵀg) is kept, and u (through
// z) and g keep their other uses (the loss, the bias gradient).
// CHECK-LABEL: func.func @logreg
// CHECK-NEXT:    %one = ag.constant dense<1.000000e+00> : tensor<f64>
// CHECK-NEXT:    %n = ag.dim %a {axis = 0 : i64} : tensor<?x?xf64> -> tensor<i64>
// CHECK-NEXT:    %nf = ag.cast %n : tensor<i64> to tensor<f64>
// CHECK-NEXT:    %scale = ag.div %one, %nf : tensor<f64>, tensor<f64> -> tensor<f64>
// CHECK-NEXT:    %neg = ag.neg %lr : tensor<f64>
// CHECK-NEXT:    %z0, %g, %wn = ag.gemv_pair %a, %w, %neg acc(%one, %w) rows(%b, %y, %scale) : tensor<?x?xf64>, tensor<?xf64>, tensor<f64> acc(tensor<f64>, tensor<?xf64>) rows(tensor<f64>, tensor<?xf64>, tensor<f64>) -> (tensor<?xf64>, tensor<?xf64>, tensor<?xf64>) {
// CHECK-NEXT:    ^bb0(%d: tensor<f64>, %[[B:.*]]: tensor<f64>, %[[Y:.*]]: tensor<f64>, %[[S:.*]]: tensor<f64>):
// CHECK-NEXT:      %[[Z:.*]] = ag.add %d, %[[B]] : tensor<f64>, tensor<f64> -> tensor<f64>
// CHECK-NEXT:      %[[P:.*]] = ag.sigmoid %[[Z]] : tensor<f64>
// CHECK-NEXT:      %[[YM:.*]] = ag.sub %[[P]], %[[Y]] : tensor<f64>, tensor<f64> -> tensor<f64>
// CHECK-NEXT:      %[[G:.*]] = ag.mul %[[YM]], %[[S]] : tensor<f64>, tensor<f64> -> tensor<f64>
// CHECK-NEXT:      ag.yield %d, %[[G]] : tensor<f64>, tensor<f64>
// CHECK-NEXT:    }
// CHECK-NEXT:    %z = ag.add %z0, %b : tensor<?xf64>, tensor<f64> -> tensor<?xf64>
// CHECK-NEXT:    %xent = ag.softplus %z : tensor<?xf64>
// CHECK-NEXT:    %gb = ag.reduce_sum %g {axes = array<i64: 0>} : tensor<?xf64> -> tensor<f64>
// CHECK-NEXT:    func.return %wn, %gb, %xent

// A forward gemv with a scale and an accumulation: the region computes u_i = s·d_i + 1·v_i.
// CHECK-LABEL: func.func @scaled_forward
// CHECK:         %u, %t, %r = ag.gemv_pair %a, %w, %one rows(%s, %v)
// CHECK-NEXT:    ^bb0(%d: tensor<f32>, %[[S:.*]]: tensor<f32>, %[[V:.*]]: tensor<f32>):
// CHECK-NEXT:      %[[SD:.*]] = ag.mul %[[S]], %d : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK-NEXT:      %[[ONE:.*]] = ag.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:      %[[BV:.*]] = ag.mul %[[ONE]], %[[V]] : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK-NEXT:      %[[U:.*]] = ag.add %[[SD]], %[[BV]] : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK-NEXT:      %[[T:.*]] = ag.tanh %[[U]] : tensor<f32>
// CHECK-NEXT:      ag.yield %[[U]], %[[T]] : tensor<f32>, tensor<f32>

// Not row-wise (a reduction of u in the chain), or another matrix: left alone.
// CHECK-LABEL: func.func @reduction_in_chain
// CHECK-NOT:     ag.gemv_pair
// CHECK:         ag.gemv %one, %a, %e {transpose_a}
// CHECK-LABEL: func.func @other_matrix
// CHECK-NOT:     ag.gemv_pair
// CHECK:         ag.gemv %one, %c, %e {transpose_a}

// The folds alone: dim through elementwise ops, select of a constant condition.
// CHECK-LABEL: func.func @folds
// CHECK-NEXT:    %n = ag.dim %x {axis = 0 : i64} : tensor<?xf32> -> tensor<i64>
// CHECK-NEXT:    func.return %n, %c : tensor<i64>, tensor<f32>

func.func @simple(%a: tensor<?x?xf32>, %w: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %one = ag.constant dense<1.0> : tensor<f32>
  %u = ag.gemv %one, %a, %w : tensor<f32>, tensor<?x?xf32>, tensor<?xf32> -> tensor<?xf32>
  %e = ag.sub %u, %y : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  %r = ag.gemv %one, %a, %e {transpose_a} : tensor<f32>, tensor<?x?xf32>, tensor<?xf32> -> tensor<?xf32>
  func.return %r : tensor<?xf32>
}

func.func @logreg(%a: tensor<?x?xf64>, %w: tensor<?xf64>, %y: tensor<?xf64>, %b: tensor<f64>, %lr: tensor<f64>) -> (tensor<?xf64>, tensor<f64>, tensor<?xf64>) {
  %one = ag.constant dense<1.0> : tensor<f64>
  %true = ag.constant dense<true> : tensor<i1>
  %z0 = ag.gemv %one, %a, %w : tensor<f64>, tensor<?x?xf64>, tensor<?xf64> -> tensor<?xf64>
  %z = ag.add %z0, %b : tensor<?xf64>, tensor<f64> -> tensor<?xf64>
  %xent = ag.softplus %z : tensor<?xf64>
  %n = ag.dim %xent {axis = 0 : i64} : tensor<?xf64> -> tensor<i64>
  %nf = ag.cast %n : tensor<i64> to tensor<f64>
  %s = ag.reduce_sum %xent {axes = array<i64: 0>} : tensor<?xf64> -> tensor<f64>
  %seed = ag.select %true, %one, %s : tensor<i1>, tensor<f64>, tensor<f64> -> tensor<f64>
  %scale = ag.div %seed, %nf : tensor<f64>, tensor<f64> -> tensor<f64>
  %p = ag.sigmoid %z : tensor<?xf64>
  %ym = ag.sub %p, %y : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
  %g = ag.mul %ym, %scale : tensor<?xf64>, tensor<f64> -> tensor<?xf64>
  %neg = ag.neg %lr : tensor<f64>
  %wn = ag.gemv %neg, %a, %g, %one, %w {transpose_a} : tensor<f64>, tensor<?x?xf64>, tensor<?xf64>, tensor<f64>, tensor<?xf64> -> tensor<?xf64>
  %gb = ag.reduce_sum %g {axes = array<i64: 0>} : tensor<?xf64> -> tensor<f64>
  func.return %wn, %gb, %xent : tensor<?xf64>, tensor<f64>, tensor<?xf64>
}

func.func @scaled_forward(%a: tensor<?x?xf32>, %w: tensor<?xf32>, %s: tensor<f32>, %v: tensor<?xf32>) -> tensor<?xf32> {
  %one = ag.constant dense<1.0> : tensor<f32>
  %u = ag.gemv %s, %a, %w, %one, %v : tensor<f32>, tensor<?x?xf32>, tensor<?xf32>, tensor<f32>, tensor<?xf32> -> tensor<?xf32>
  %t = ag.tanh %u : tensor<?xf32>
  %r = ag.gemv %one, %a, %t {transpose_a} : tensor<f32>, tensor<?x?xf32>, tensor<?xf32> -> tensor<?xf32>
  func.return %r : tensor<?xf32>
}

func.func @reduction_in_chain(%a: tensor<?x?xf32>, %w: tensor<?xf32>) -> tensor<?xf32> {
  %one = ag.constant dense<1.0> : tensor<f32>
  %u = ag.gemv %one, %a, %w : tensor<f32>, tensor<?x?xf32>, tensor<?xf32> -> tensor<?xf32>
  %m = ag.reduce_max %u {axes = array<i64: 0>} : tensor<?xf32> -> tensor<f32>
  %e = ag.sub %u, %m : tensor<?xf32>, tensor<f32> -> tensor<?xf32>
  %r = ag.gemv %one, %a, %e {transpose_a} : tensor<f32>, tensor<?x?xf32>, tensor<?xf32> -> tensor<?xf32>
  func.return %r : tensor<?xf32>
}

func.func @other_matrix(%a: tensor<?x?xf32>, %c: tensor<?x?xf32>, %w: tensor<?xf32>) -> tensor<?xf32> {
  %one = ag.constant dense<1.0> : tensor<f32>
  %u = ag.gemv %one, %a, %w : tensor<f32>, tensor<?x?xf32>, tensor<?xf32> -> tensor<?xf32>
  %e = ag.exp %u : tensor<?xf32>
  %r = ag.gemv %one, %c, %e {transpose_a} : tensor<f32>, tensor<?x?xf32>, tensor<?xf32> -> tensor<?xf32>
  func.return %r : tensor<?xf32>
}

func.func @folds(%x: tensor<?xf32>, %y: tensor<?xf32>, %c: tensor<f32>) -> (tensor<i64>, tensor<f32>) {
  %false = ag.constant dense<false> : tensor<i1>
  %s = ag.add %x, %y : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  %t = ag.exp %s : tensor<?xf32>
  %n = ag.dim %t {axis = 0 : i64} : tensor<?xf32> -> tensor<i64>
  %k = ag.select %false, %c, %c : tensor<i1>, tensor<f32>, tensor<f32> -> tensor<f32>
  func.return %n, %k : tensor<i64>, tensor<f32>
}
