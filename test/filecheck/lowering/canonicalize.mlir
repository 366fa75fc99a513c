// RUN: arignote-opt %s -p canonicalize | filecheck %s
// RUN: arignote-opt %s -p canonicalize | arignote-opt | filecheck %s

// Constant folding by the interpreter's implementations (integer floordiv by 0 is 0);
// an all-equal result is stored as a splat.
// CHECK-LABEL: func.func @fold
// CHECK-NEXT:    %r = ag.constant dense<[3.71828198, 8.38905525, 21.085537]> : tensor<3xf32>
// CHECK-NEXT:    %s = ag.constant dense<1.000000e+00> : tensor<2x3xf64>
// CHECK-NEXT:    %n = ag.constant dense<0> : tensor<i64>
// CHECK-NEXT:    func.return %r, %s, %n : tensor<3xf32>, tensor<2x3xf64>, tensor<i64>
// CHECK-NEXT:  }
func.func @fold(%x: tensor<?xf32>) -> (tensor<3xf32>, tensor<2x3xf64>, tensor<i64>) {
  %c = ag.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %one = ag.constant dense<1.0> : tensor<f32>
  %e = ag.exp %c : tensor<3xf32>
  %r = ag.add %e, %one : tensor<3xf32>, tensor<f32> -> tensor<3xf32>
  %h = ag.constant dense<0.5> : tensor<f64>
  %b = ag.dimshuffle %h {pattern = array<i64: -1, -1>} : tensor<f64> -> tensor<1x1xf64>
  %big = ag.constant dense<2.0> : tensor<2x3xf64>
  %s = ag.mul %big, %b : tensor<2x3xf64>, tensor<1x1xf64> -> tensor<2x3xf64>
  %i = ag.constant dense<[7, 0]> : tensor<2xi64>
  %k = ag.constant dense<0> : tensor<2xi64>
  %q = ag.floordiv %i, %k : tensor<2xi64>, tensor<2xi64> -> tensor<2xi64>
  %n = ag.reduce_sum %q {axes = array<i64: 0>} : tensor<2xi64> -> tensor<i64>
  func.return %r, %s, %n : tensor<3xf32>, tensor<2x3xf64>, tensor<i64>
}

// Neutral elements disappear; -(-x) is x; a constant of static 1s that adds an axis
// leaves a dimshuffle. A float x * 0 stays (NaN * 0 is NaN).
// CHECK-LABEL: func.func @identities
// CHECK-NEXT:    %zero = ag.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %w = ag.dimshuffle %x {pattern = array<i64: -1, 0>} : tensor<?xf32> -> tensor<1x?xf32>
// CHECK-NEXT:    %t = ag.add %x, %y : tensor<?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:    %z = ag.mul %t, %zero : tensor<?x?xf32>, tensor<f32> -> tensor<?x?xf32>
// CHECK-NEXT:    func.return %x, %x, %x, %x, %x, %w, %z : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<1x?xf32>, tensor<?x?xf32>
// CHECK-NEXT:  }
func.func @identities(%x: tensor<?xf32>, %y: tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<1x?xf32>, tensor<?x?xf32>) {
  %one = ag.constant dense<1.0> : tensor<f32>
  %zero = ag.constant dense<0.0> : tensor<f32>
  %one11 = ag.constant dense<1.0> : tensor<1x1xf32>
  %a = ag.mul %one, %x : tensor<f32>, tensor<?xf32> -> tensor<?xf32>
  %b = ag.add %a, %zero : tensor<?xf32>, tensor<f32> -> tensor<?xf32>
  %c = ag.sub %b, %zero : tensor<?xf32>, tensor<f32> -> tensor<?xf32>
  %d = ag.div %c, %one : tensor<?xf32>, tensor<f32> -> tensor<?xf32>
  %p = ag.pow %d, %one : tensor<?xf32>, tensor<f32> -> tensor<?xf32>
  %n1 = ag.neg %p : tensor<?xf32>
  %n2 = ag.neg %n1 : tensor<?xf32>
  %w = ag.mul %x, %one11 : tensor<?xf32>, tensor<1x1xf32> -> tensor<1x?xf32>
  %t = ag.add %x, %y : tensor<?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %z = ag.mul %t, %zero : tensor<?x?xf32>, tensor<f32> -> tensor<?x?xf32>
  func.return %a, %b, %d, %p, %n2, %w, %z : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<1x?xf32>, tensor<?x?xf32>
}

// A constant that stretches x (or checks its length at run time) blocks the rewrite.
// CHECK-LABEL: func.func @blocked
// CHECK-NEXT:    %ones = ag.constant dense<1.000000e+00> : tensor<3xf32>
// CHECK-NEXT:    %a = ag.mul %x, %ones : tensor<?xf32>, tensor<3xf32> -> tensor<3xf32>
// CHECK-NEXT:    %ones2 = ag.constant dense<1.000000e+00> : tensor<2x1xf32>
// CHECK-NEXT:    %b = ag.mul %x, %ones2 : tensor<?xf32>, tensor<2x1xf32> -> tensor<2x?xf32>
// CHECK-NEXT:    func.return %a, %b : tensor<3xf32>, tensor<2x?xf32>
// CHECK-NEXT:  }
func.func @blocked(%x: tensor<?xf32>, %v: tensor<3xf32>) -> (tensor<3xf32>, tensor<2x?xf32>) {
  %ones = ag.constant dense<1.0> : tensor<3xf32>
  %a = ag.mul %x, %ones : tensor<?xf32>, tensor<3xf32> -> tensor<3xf32>
  %ones2 = ag.constant dense<1.0> : tensor<2x1xf32>
  %b = ag.mul %x, %ones2 : tensor<?xf32>, tensor<2x1xf32> -> tensor<2x?xf32>
  func.return %a, %b : tensor<3xf32>, tensor<2x?xf32>
}

// Integer x * 0 and x - x are zeros of x's shape.
// CHECK-LABEL: func.func @integers
// CHECK-NEXT:    %z = ag.constant dense<0> : tensor<i32>
// CHECK-NEXT:    %z_1 = ag.dim %i {axis = 0 : i64} : tensor<?x?xi32> -> tensor<i64>
// CHECK-NEXT:    %z_2 = ag.dim %i {axis = 1 : i64} : tensor<?x?xi32> -> tensor<i64>
// CHECK-NEXT:    %z_3 = ag.alloc %z[%z_1, %z_2] {shape = array<i64: -9223372036854775808, -9223372036854775808>} : tensor<i32>, tensor<i64>, tensor<i64> -> tensor<?x?xi32>
// CHECK-NEXT:    %s = ag.constant dense<0> : tensor<i32>
// CHECK-NEXT:    %s_1 = ag.dim %i {axis = 0 : i64} : tensor<?x?xi32> -> tensor<i64>
// CHECK-NEXT:    %s_2 = ag.dim %i {axis = 1 : i64} : tensor<?x?xi32> -> tensor<i64>
// CHECK-NEXT:    %s_3 = ag.alloc %s[%s_1, %s_2] {shape = array<i64: -9223372036854775808, -9223372036854775808>} : tensor<i32>, tensor<i64>, tensor<i64> -> tensor<?x?xi32>
// CHECK-NEXT:    %y = ag.constant dense<0> : tensor<2xi32>
// CHECK-NEXT:    func.return %z_3, %s_3, %y : tensor<?x?xi32>, tensor<?x?xi32>, tensor<2xi32>
// CHECK-NEXT:  }
func.func @integers(%i: tensor<?x?xi32>) -> (tensor<?x?xi32>, tensor<?x?xi32>, tensor<2xi32>) {
  %zero = ag.constant dense<0> : tensor<i32>
  %z = ag.mul %i, %zero : tensor<?x?xi32>, tensor<i32> -> tensor<?x?xi32>
  %s = ag.sub %i, %i : tensor<?x?xi32>, tensor<?x?xi32> -> tensor<?x?xi32>
  %c = ag.constant dense<[4, 5]> : tensor<2xi32>
  %y = ag.mul %zero, %c : tensor<i32>, tensor<2xi32> -> tensor<2xi32>
  func.return %z, %s, %y : tensor<?x?xi32>, tensor<?x?xi32>, tensor<2xi32>
}

// Same-type casts go; a cast through a type exact for the source is skipped (f32 → f64
// → f32 is x, i32 → i64 → f64 is i32 → f64); i32 → f32 rounds, so it stays.
// CHECK-LABEL: func.func @casts
// CHECK-NEXT:    %c = ag.cast %i : tensor<?xi32> to tensor<?xf64>
// CHECK-NEXT:    %f = ag.cast %i : tensor<?xi32> to tensor<?xf32>
// CHECK-NEXT:    %g = ag.cast %f : tensor<?xf32> to tensor<?xf64>
// CHECK-NEXT:    func.return %x, %c, %x, %g : tensor<?xf32>, tensor<?xf64>, tensor<?xf32>, tensor<?xf64>
// CHECK-NEXT:  }
func.func @casts(%x: tensor<?xf32>, %i: tensor<?xi32>) -> (tensor<?xf32>, tensor<?xf64>, tensor<?xf32>, tensor<?xf64>) {
  %a = ag.cast %x : tensor<?xf32> to tensor<?xf32>
  %d = ag.cast %x : tensor<?xf32> to tensor<?xf64>
  %b = ag.cast %d : tensor<?xf64> to tensor<?xf32>
  %l = ag.cast %i : tensor<?xi32> to tensor<?xi64>
  %c = ag.cast %l : tensor<?xi64> to tensor<?xf64>
  %f = ag.cast %i : tensor<?xi32> to tensor<?xf32>
  %g = ag.cast %f : tensor<?xf32> to tensor<?xf64>
  func.return %a, %c, %b, %g : tensor<?xf32>, tensor<?xf64>, tensor<?xf32>, tensor<?xf64>
}

// The identity dimshuffle goes; two dimshuffles compose (a transpose twice is x).
// CHECK-LABEL: func.func @dimshuffles
// CHECK-NEXT:    %c = ag.dimshuffle %v {pattern = array<i64: -1, 0, -1>} : tensor<?xf32> -> tensor<1x?x1xf32>
// CHECK-NEXT:    func.return %x, %x, %c : tensor<?x?xf32>, tensor<?x?xf32>, tensor<1x?x1xf32>
// CHECK-NEXT:  }
func.func @dimshuffles(%x: tensor<?x?xf32>, %v: tensor<?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<1x?x1xf32>) {
  %i = ag.dimshuffle %x {pattern = array<i64: 0, 1>} : tensor<?x?xf32> -> tensor<?x?xf32>
  %t = ag.dimshuffle %x {pattern = array<i64: 1, 0>} : tensor<?x?xf32> -> tensor<?x?xf32>
  %tt = ag.dimshuffle %t {pattern = array<i64: 1, 0>} : tensor<?x?xf32> -> tensor<?x?xf32>
  %r = ag.dimshuffle %v {pattern = array<i64: -1, 0>} : tensor<?xf32> -> tensor<1x?xf32>
  %c = ag.dimshuffle %r {pattern = array<i64: 0, 1, -1>} : tensor<1x?xf32> -> tensor<1x?x1xf32>
  func.return %i, %tt, %c : tensor<?x?xf32>, tensor<?x?xf32>, tensor<1x?x1xf32>
}

// dim of a static axis is a constant; dim through elementwise ops reads the operand.
// CHECK-LABEL: func.func @shapes
// CHECK-NEXT:    %n = ag.dim %x {axis = 0 : i64} : tensor<?x3xf32> -> tensor<i64>
// CHECK-NEXT:    %m = ag.constant dense<3> : tensor<i64>
// CHECK-NEXT:    func.return %n, %m : tensor<i64>, tensor<i64>
// CHECK-NEXT:  }
func.func @shapes(%x: tensor<?x3xf32>, %y: tensor<?x3xf32>) -> (tensor<i64>, tensor<i64>) {
  %s = ag.add %x, %y : tensor<?x3xf32>, tensor<?x3xf32> -> tensor<?x3xf32>
  %e = ag.exp %s : tensor<?x3xf32>
  %n = ag.dim %e {axis = 0 : i64} : tensor<?x3xf32> -> tensor<i64>
  %m = ag.dim %e {axis = 1 : i64} : tensor<?x3xf32> -> tensor<i64>
  func.return %n, %m : tensor<i64>, tensor<i64>
}

// A constant condition picks a branch when the other one stretches nothing; a branch of
// a static shape that the other stretches is broadcast by an ag.alloc with the other's
// lengths (the select no longer reads the other's data); else the select keeps its
// run-time length check. x ** 2 is x * x.
// CHECK-LABEL: func.func @selects
// CHECK-NEXT:    %t = ag.constant dense<true> : tensor<i1>
// CHECK-NEXT:    %a = ag.select %t, %x, %y : tensor<i1>, tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
// CHECK-NEXT:    %c = ag.dim %y {axis = 0 : i64} : tensor<?xf32> -> tensor<i64>
// CHECK-NEXT:    %c_1 = ag.alloc %s[%c] {shape = array<i64: -9223372036854775808>} : tensor<f32>, tensor<i64> -> tensor<?xf32>
// CHECK-NEXT:    %p = ag.mul %x, %x : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
// CHECK-NEXT:    func.return %a, %y, %c_1, %p : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
// CHECK-NEXT:  }
func.func @selects(%x: tensor<?xf32>, %y: tensor<?xf32>, %s: tensor<f32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %t = ag.constant dense<true> : tensor<i1>
  %f = ag.constant dense<false> : tensor<i1>
  %a = ag.select %t, %x, %y : tensor<i1>, tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  %b = ag.select %f, %s, %y : tensor<i1>, tensor<f32>, tensor<?xf32> -> tensor<?xf32>
  %c = ag.select %t, %s, %y : tensor<i1>, tensor<f32>, tensor<?xf32> -> tensor<?xf32>
  %two = ag.constant dense<2.0> : tensor<f32>
  %p = ag.pow %x, %two : tensor<?xf32>, tensor<f32> -> tensor<?xf32>
  func.return %a, %b, %c, %p : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}

// Theano's zeros_like and ones_like are fill(model, c) = select(true, c, model): an
// ag.alloc of the constant with the model's dynamic lengths (the node label is kept).
// CHECK-LABEL: func.func @fills
// CHECK-NEXT:    %z = ag.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %o = ag.constant dense<1.000000e+00> : tensor<1x1xf32>
// CHECK-NEXT:    %a = ag.dim %m {axis = 0 : i64} : tensor<?x3xf32> -> tensor<i64>
// CHECK-NEXT:    %a_1 = ag.alloc %z[%a] {ag.node = "zeros_like", shape = array<i64: -9223372036854775808, 3>} : tensor<f32>, tensor<i64> -> tensor<?x3xf32>
// CHECK-NEXT:    %b = ag.dim %m {axis = 0 : i64} : tensor<?x3xf32> -> tensor<i64>
// CHECK-NEXT:    %b_1 = ag.alloc %o[%b] {shape = array<i64: -9223372036854775808, 3>} : tensor<1x1xf32>, tensor<i64> -> tensor<?x3xf32>
// CHECK-NEXT:    func.return %a_1, %b_1 : tensor<?x3xf32>, tensor<?x3xf32>
func.func @fills(%m: tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>) {
  %t = ag.constant dense<true> : tensor<i1>
  %z = ag.constant dense<0.0> : tensor<f32>
  %o = ag.constant dense<1.0> : tensor<1x1xf32>
  %a = ag.select %t, %z, %m {ag.node = "zeros_like"} : tensor<i1>, tensor<f32>, tensor<?x3xf32> -> tensor<?x3xf32>
  %b = ag.select %t, %o, %m : tensor<i1>, tensor<1x1xf32>, tensor<?x3xf32> -> tensor<?x3xf32>
  func.return %a, %b : tensor<?x3xf32>, tensor<?x3xf32>
}
