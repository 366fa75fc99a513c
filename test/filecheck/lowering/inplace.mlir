// RUN: arignote-opt %s -p inplace | filecheck %s
// RUN: arignote-opt %s -p inplace | arignote-opt | filecheck %s

// tanh is exp's last user: it overwrites exp's buffer (result 0 over operand 0).
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %e = ag.exp %x : tensor<?xf32>
// CHECK-NEXT:    %t = ag.tanh %e {ag.destroy_map = array<i64: 0, 0>} : tensor<?xf32>
// CHECK-NEXT:    %s = ag.reduce_sum %t {axes = array<i64: 0>} : tensor<?xf32> -> tensor<f32>
// CHECK-NEXT:    func.return %s : tensor<f32>
// CHECK-NEXT:  }
func.func @chain(%x: tensor<?xf32>) -> tensor<f32> {
  %e = ag.exp %x : tensor<?xf32>
  %t = ag.tanh %e : tensor<?xf32>
  %s = ag.reduce_sum %t {axes = array<i64: 0>} : tensor<?xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}

// exp is read later (and returned): nobody overwrites it; mul is add's last user and
// overwrites it (operand 1); function arguments (x, y) and returned results never take part.
// CHECK-LABEL: func.func @kept
// CHECK-NEXT:    %a = ag.add %x, %y : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
// CHECK-NEXT:    %e = ag.exp %a : tensor<?xf32>
// CHECK-NEXT:    %n = ag.neg %e : tensor<?xf32>
// CHECK-NEXT:    %m = ag.mul %e, %a {ag.destroy_map = array<i64: 0, 1>} : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
// CHECK-NEXT:    %t = ag.tanh %m : tensor<?xf32>
// CHECK-NEXT:    func.return %n, %t, %e : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
// CHECK-NEXT:  }
func.func @kept(%x: tensor<?xf32>, %y: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %a = ag.add %x, %y : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  %e = ag.exp %a : tensor<?xf32>
  %n = ag.neg %e : tensor<?xf32>
  %m = ag.mul %e, %a : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  %t = ag.tanh %m : tensor<?xf32>
  func.return %n, %t, %e : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}

// A fused op overwrites its dead operand read at the written index; a broadcast row
// (v, of another type) cannot be overwritten.
// CHECK-LABEL: func.func @fused
// CHECK-NEXT:    %p = ag.exp %m : tensor<?x?xf64>
// CHECK-NEXT:    %r, %q = ag.fused %p, %v : tensor<?x?xf64>, tensor<?xf64> -> tensor<?x?xf64>, tensor<?x?xf64> {
// CHECK-NEXT:    ^bb0(%a: tensor<?x?xf64>, %b: tensor<?xf64>):
// CHECK-NEXT:      %bb = ag.dimshuffle %b {pattern = array<i64: -1, 0>} : tensor<?xf64> -> tensor<1x?xf64>
// CHECK-NEXT:      %s = ag.add %a, %bb : tensor<?x?xf64>, tensor<1x?xf64> -> tensor<?x?xf64>
// CHECK-NEXT:      %t = ag.tanh %s : tensor<?x?xf64>
// CHECK-NEXT:      ag.yield %s, %t : tensor<?x?xf64>, tensor<?x?xf64>
// CHECK-NEXT:    } {ag.destroy_map = array<i64: 0, 0>}
// CHECK-NEXT:    %w = ag.mul %r, %q {ag.destroy_map = array<i64: 0, 0>} : tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?x?xf64>
// CHECK-NEXT:    %z = ag.reduce_sum %w {axes = array<i64: 0>} : tensor<?x?xf64> -> tensor<?xf64>
// CHECK-NEXT:    func.return %z : tensor<?xf64>
// CHECK-NEXT:  }
func.func @fused(%m: tensor<?x?xf64>, %v: tensor<?xf64>) -> tensor<?xf64> {
  %p = ag.exp %m : tensor<?x?xf64>
  %r, %q = ag.fused %p, %v : tensor<?x?xf64>, tensor<?xf64> -> tensor<?x?xf64>, tensor<?x?xf64> {
  ^bb0(%a: tensor<?x?xf64>, %b: tensor<?xf64>):
    %bb = ag.dimshuffle %b {pattern = array<i64: -1, 0>} : tensor<?xf64> -> tensor<1x?xf64>
    %s = ag.add %a, %bb : tensor<?x?xf64>, tensor<1x?xf64> -> tensor<?x?xf64>
    %t = ag.tanh %s : tensor<?x?xf64>
    ag.yield %s, %t : tensor<?x?xf64>, tensor<?x?xf64>
  }
  %w = ag.mul %r, %q : tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?x?xf64>
  %z = ag.reduce_sum %w {axes = array<i64: 0>} : tensor<?x?xf64> -> tensor<?xf64>
  func.return %z : tensor<?xf64>
}

// A fused region that reads the operand through a dimshuffle (other indices) must not
// overwrite it.
// CHECK-LABEL: func.func @transposed
// CHECK-NEXT:    %p = ag.exp %m : tensor<?x?xf64>
// CHECK-NEXT:    %r = ag.fused %p : tensor<?x?xf64> -> tensor<?x?xf64> {
// CHECK-NEXT:    ^bb0(%a: tensor<?x?xf64>):
// CHECK-NEXT:      %t = ag.dimshuffle %a {pattern = array<i64: 1, 0>} : tensor<?x?xf64> -> tensor<?x?xf64>
// CHECK-NEXT:      %s = ag.add %a, %t : tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?x?xf64>
// CHECK-NEXT:      ag.yield %s : tensor<?x?xf64>
// CHECK-NEXT:    }
// CHECK-NEXT:    %z = ag.reduce_sum %r {axes = array<i64: 0>} : tensor<?x?xf64> -> tensor<?xf64>
// CHECK-NEXT:    func.return %z : tensor<?xf64>
// CHECK-NEXT:  }
func.func @transposed(%m: tensor<?x?xf64>) -> tensor<?xf64> {
  %p = ag.exp %m : tensor<?x?xf64>
  %r = ag.fused %p : tensor<?x?xf64> -> tensor<?x?xf64> {
  ^bb0(%a: tensor<?x?xf64>):
    %t = ag.dimshuffle %a {pattern = array<i64: 1, 0>} : tensor<?x?xf64> -> tensor<?x?xf64>
    %s = ag.add %a, %t : tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?x?xf64>
    ag.yield %s : tensor<?x?xf64>
  }
  %z = ag.reduce_sum %r {axes = array<i64: 0>} : tensor<?x?xf64> -> tensor<?xf64>
  func.return %z : tensor<?xf64>
}

// Views (ag.view_map: a basic ag.subtensor shares its source's buffer). A view's uses
// count as uses of its source: exp is read through %v after tanh, so tanh may not
// overwrite it; a view itself is never overwritten (%w, a view of the argument x); an
// operand viewed by another operand of the same op is not overwritten (add of %f and
// its reverse %r), while sub, the last user of everything, may overwrite %t.
// CHECK-LABEL: func.func @views
// CHECK-NEXT:    %e = ag.exp %x : tensor<?xf32>
// CHECK-NEXT:    %v = ag.subtensor %e[]
// CHECK-NEXT:    %t = ag.tanh %e : tensor<?xf32>
// CHECK-NEXT:    %w = ag.subtensor %x[]
// CHECK-NEXT:    %n = ag.neg %w : tensor<?xf32>
// CHECK-NEXT:    %f = ag.exp %n {ag.destroy_map = array<i64: 0, 0>} : tensor<?xf32>
// CHECK-NEXT:    %r = ag.subtensor %f[]
// CHECK-NEXT:    %a = ag.add %f, %r : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
// CHECK-NEXT:    %b = ag.sub %t, %v {ag.destroy_map = array<i64: 0, 0>} : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
// CHECK-NEXT:    %s = ag.mul %a, %b {ag.destroy_map = array<i64: 0, 0>} : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
// CHECK-NEXT:    %z = ag.reduce_sum %s {axes = array<i64: 0>} : tensor<?xf32> -> tensor<f32>
// CHECK-NEXT:    func.return %z : tensor<f32>
func.func @views(%x: tensor<?xf32>) -> tensor<f32> {
  %e = ag.exp %x : tensor<?xf32>
  %v = ag.subtensor %e[] {kinds = array<i64: 0>, starts = array<i64: -9223372036854775807>, stops = array<i64: -9223372036854775807>, steps = array<i64: -1>} : tensor<?xf32> -> tensor<?xf32>
  %t = ag.tanh %e : tensor<?xf32>
  %w = ag.subtensor %x[] {kinds = array<i64: 0>, starts = array<i64: -9223372036854775807>, stops = array<i64: -9223372036854775807>, steps = array<i64: -1>} : tensor<?xf32> -> tensor<?xf32>
  %n = ag.neg %w : tensor<?xf32>
  %f = ag.exp %n : tensor<?xf32>
  %r = ag.subtensor %f[] {kinds = array<i64: 0>, starts = array<i64: -9223372036854775807>, stops = array<i64: -9223372036854775807>, steps = array<i64: -1>} : tensor<?xf32> -> tensor<?xf32>
  %a = ag.add %f, %r : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  %b = ag.sub %t, %v : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  %s = ag.mul %a, %b : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  %z = ag.reduce_sum %s {axes = array<i64: 0>} : tensor<?xf32> -> tensor<f32>
  func.return %z : tensor<f32>
}
