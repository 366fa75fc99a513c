// RUN: arignote-opt %s -p fusion | filecheck %s
// RUN: arignote-opt %s -p fusion | arignote-opt | filecheck %s

// A chain of elementwise ops and a splat constant: one fused op (the seed's (x+y+z)*2).
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %r = ag.fused %x, %y, %z : tensor<?xf64>, tensor<?xf64>, tensor<?xf64> -> tensor<?xf64> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?xf64>, %y_1: tensor<?xf64>, %z_1: tensor<?xf64>):
// CHECK-NEXT:      %two = ag.constant dense<2.000000e+00> : tensor<f64>
// CHECK-NEXT:      %s = ag.add %x_1, %y_1 : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
// CHECK-NEXT:      %t = ag.add %s, %z_1 : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
// CHECK-NEXT:      %r_1 = ag.mul %t, %two : tensor<?xf64>, tensor<f64> -> tensor<?xf64>
// CHECK-NEXT:      ag.yield %r_1 : tensor<?xf64>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r : tensor<?xf64>
// CHECK-NEXT:  }
func.func @chain(%x: tensor<?xf64>, %y: tensor<?xf64>, %z: tensor<?xf64>) -> tensor<?xf64> {
  %two = ag.constant dense<2.0> : tensor<f64>
  %s = ag.add %x, %y : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
  %t = ag.add %s, %z : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
  %r = ag.mul %t, %two : tensor<?xf64>, tensor<f64> -> tensor<?xf64>
  func.return %r : tensor<?xf64>
}

// One elementwise op alone stays as it is.
// CHECK-LABEL: func.func @single
// CHECK-NEXT:    %s = ag.add %x, %y : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
// CHECK-NEXT:    func.return %s : tensor<?xf64>
// CHECK-NEXT:  }
func.func @single(%x: tensor<?xf64>, %y: tensor<?xf64>) -> tensor<?xf64> {
  %s = ag.add %x, %y : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
  func.return %s : tensor<?xf64>
}

// exp feeds two clusters: the first returns it as a second result, the second reads
// it; exp is computed once.
// CHECK-LABEL: func.func @shared
// CHECK-NEXT:    %b, %e = ag.fused %x, %y : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>, tensor<?xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?xf32>, %y_1: tensor<?xf32>):
// CHECK-NEXT:      %e_1 = ag.exp %x_1 : tensor<?xf32>
// CHECK-NEXT:      %a = ag.add %e_1, %y_1 : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
// CHECK-NEXT:      %b_1 = ag.mul %a, %y_1 : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
// CHECK-NEXT:      ag.yield %b_1, %e_1 : tensor<?xf32>, tensor<?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %d = ag.fused %e : tensor<?xf32> -> tensor<?xf32> {
// CHECK-NEXT:    ^bb0(%e_1: tensor<?xf32>):
// CHECK-NEXT:      %c = ag.tanh %e_1 : tensor<?xf32>
// CHECK-NEXT:      %d_1 = ag.neg %c : tensor<?xf32>
// CHECK-NEXT:      ag.yield %d_1 : tensor<?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %b, %d : tensor<?xf32>, tensor<?xf32>
// CHECK-NEXT:  }
func.func @shared(%x: tensor<?xf32>, %y: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %e = ag.exp %x : tensor<?xf32>
  %a = ag.add %e, %y : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  %b = ag.mul %a, %y : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  %c = ag.tanh %e : tensor<?xf32>
  %d = ag.neg %c : tensor<?xf32>
  func.return %b, %d : tensor<?xf32>, tensor<?xf32>
}

// exp of the row has a smaller shape than the domain: it stays out (fusing it would
// evaluate it once per row); the broadcasting dimshuffle is fused (an index mapping).
// CHECK-LABEL: func.func @broadcast
// CHECK-NEXT:    %e = ag.exp %v : tensor<?xf32>
// CHECK-NEXT:    %t = ag.fused %e, %m : tensor<?xf32>, tensor<?x?xf32> -> tensor<?x?xf32> {
// CHECK-NEXT:    ^bb0(%e_1: tensor<?xf32>, %m_1: tensor<?x?xf32>):
// CHECK-NEXT:      %r = ag.dimshuffle %e_1 {pattern = array<i64: -1, 0>} : tensor<?xf32> -> tensor<1x?xf32>
// CHECK-NEXT:      %a = ag.add %m_1, %r : tensor<?x?xf32>, tensor<1x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:      %t_1 = ag.tanh %a : tensor<?x?xf32>
// CHECK-NEXT:      ag.yield %t_1 : tensor<?x?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %t : tensor<?x?xf32>
// CHECK-NEXT:  }
func.func @broadcast(%m: tensor<?x?xf32>, %v: tensor<?xf32>) -> tensor<?x?xf32> {
  %e = ag.exp %v : tensor<?xf32>
  %r = ag.dimshuffle %e {pattern = array<i64: -1, 0>} : tensor<?xf32> -> tensor<1x?xf32>
  %a = ag.add %m, %r : tensor<?x?xf32>, tensor<1x?xf32> -> tensor<?x?xf32>
  %t = ag.tanh %a : tensor<?x?xf32>
  func.return %t : tensor<?x?xf32>
}

// The elementwise producers of a reduction are fused into it: one loop nest, no temporary.
// CHECK-LABEL: func.func @reduce
// CHECK-NEXT:    %s = ag.fused %x, %y : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<f32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x?xf32>, %y_1: tensor<?x?xf32>):
// CHECK-NEXT:      %e = ag.exp %x_1 : tensor<?x?xf32>
// CHECK-NEXT:      %m = ag.mul %e, %y_1 : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:      %s_1 = ag.reduce_sum %m {axes = array<i64: 0, 1>} : tensor<?x?xf32> -> tensor<f32>
// CHECK-NEXT:      ag.yield %s_1 : tensor<f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %s : tensor<f32>
// CHECK-NEXT:  }
func.func @reduce(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>) -> tensor<f32> {
  %e = ag.exp %x : tensor<?x?xf32>
  %m = ag.mul %e, %y : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %s = ag.reduce_sum %m {axes = array<i64: 0, 1>} : tensor<?x?xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}

// exp is also returned: the reduction's fused op yields it too, stored in the same loop
// in which it is reduced.
// CHECK-LABEL: func.func @reduce_shared
// CHECK-NEXT:    %s, %e = ag.fused %x : tensor<?xf32> -> tensor<f32>, tensor<?xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?xf32>):
// CHECK-NEXT:      %e_1 = ag.exp %x_1 : tensor<?xf32>
// CHECK-NEXT:      %n = ag.neg %e_1 : tensor<?xf32>
// CHECK-NEXT:      %s_1 = ag.reduce_max %n {axes = array<i64: 0>} : tensor<?xf32> -> tensor<f32>
// CHECK-NEXT:      ag.yield %s_1, %e_1 : tensor<f32>, tensor<?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %s, %e : tensor<f32>, tensor<?xf32>
// CHECK-NEXT:  }
func.func @reduce_shared(%x: tensor<?xf32>) -> (tensor<f32>, tensor<?xf32>) {
  %e = ag.exp %x : tensor<?xf32>
  %n = ag.neg %e : tensor<?xf32>
  %s = ag.reduce_max %n {axes = array<i64: 0>} : tensor<?xf32> -> tensor<f32>
  func.return %s, %e : tensor<f32>, tensor<?xf32>
}

// A constant that is not a splat is an operand of the fused op, not part of its region.
// CHECK-LABEL: func.func @constants
// CHECK-NEXT:    %c = ag.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    %e = ag.fused %x, %c : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<3xf32>, %c_1: tensor<3xf32>):
// CHECK-NEXT:      %m = ag.mul %x_1, %c_1 : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
// CHECK-NEXT:      %e_1 = ag.exp %m : tensor<3xf32>
// CHECK-NEXT:      ag.yield %e_1 : tensor<3xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %e : tensor<3xf32>
// CHECK-NEXT:  }
func.func @constants(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c = ag.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %m = ag.mul %x, %c : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %e = ag.exp %m : tensor<3xf32>
  func.return %e : tensor<3xf32>
}

// A dimshuffle read by two clusters is copied into both; what it reads (exp) is then
// computed once, outside, not in each cluster.
// CHECK-LABEL: func.func @shared_dimshuffle
// CHECK-NEXT:    %e = ag.exp %n : tensor<?x?xf32>
// CHECK-NEXT:    %b = ag.fused %e, %m : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32> {
// CHECK-NEXT:    ^bb0(%e_1: tensor<?x?xf32>, %m_1: tensor<?x?xf32>):
// CHECK-NEXT:      %r = ag.dimshuffle %e_1 {pattern = array<i64: 1, 0>} : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:      %a = ag.add %m_1, %r : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:      %b_1 = ag.tanh %a : tensor<?x?xf32>
// CHECK-NEXT:      ag.yield %b_1 : tensor<?x?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %d = ag.fused %e, %m : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32> {
// CHECK-NEXT:    ^bb0(%e_1: tensor<?x?xf32>, %m_1: tensor<?x?xf32>):
// CHECK-NEXT:      %r = ag.dimshuffle %e_1 {pattern = array<i64: 1, 0>} : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:      %c = ag.mul %m_1, %r : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:      %d_1 = ag.neg %c : tensor<?x?xf32>
// CHECK-NEXT:      ag.yield %d_1 : tensor<?x?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %b, %d : tensor<?x?xf32>, tensor<?x?xf32>
// CHECK-NEXT:  }
func.func @shared_dimshuffle(%m: tensor<?x?xf32>, %n: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %e = ag.exp %n : tensor<?x?xf32>
  %r = ag.dimshuffle %e {pattern = array<i64: 1, 0>} : tensor<?x?xf32> -> tensor<?x?xf32>
  %a = ag.add %m, %r : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %b = ag.tanh %a : tensor<?x?xf32>
  %c = ag.mul %m, %r : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %d = ag.neg %c : tensor<?x?xf32>
  func.return %b, %d : tensor<?x?xf32>, tensor<?x?xf32>
}

// exp is read directly by one cluster and through a dimshuffle that another cluster
// also reads: it stays out of both, computed once.
// CHECK-LABEL: func.func @dimshuffle_and_direct
// CHECK-NEXT:    %e = ag.exp %n : tensor<?x?xf32>
// CHECK-NEXT:    %d = ag.fused %e, %m : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32> {
// CHECK-NEXT:    ^bb0(%e_1: tensor<?x?xf32>, %m_1: tensor<?x?xf32>):
// CHECK-NEXT:      %r = ag.dimshuffle %e_1 {pattern = array<i64: 1, 0>} : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:      %c = ag.mul %m_1, %r : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:      %d_1 = ag.neg %c : tensor<?x?xf32>
// CHECK-NEXT:      ag.yield %d_1 : tensor<?x?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %b = ag.fused %e : tensor<?x?xf32> -> tensor<?x?xf32> {
// CHECK-NEXT:    ^bb0(%e_1: tensor<?x?xf32>):
// CHECK-NEXT:      %r = ag.dimshuffle %e_1 {pattern = array<i64: 1, 0>} : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:      %a = ag.add %e_1, %r : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:      %b_1 = ag.tanh %a : tensor<?x?xf32>
// CHECK-NEXT:      ag.yield %b_1 : tensor<?x?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %b, %d : tensor<?x?xf32>, tensor<?x?xf32>
// CHECK-NEXT:  }
func.func @dimshuffle_and_direct(%m: tensor<?x?xf32>, %n: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %e = ag.exp %n : tensor<?x?xf32>
  %r = ag.dimshuffle %e {pattern = array<i64: 1, 0>} : tensor<?x?xf32> -> tensor<?x?xf32>
  %c = ag.mul %m, %r : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %d = ag.neg %c : tensor<?x?xf32>
  %a = ag.add %e, %r : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %b = ag.tanh %a : tensor<?x?xf32>
  func.return %b, %d : tensor<?x?xf32>, tensor<?x?xf32>
}
