// Verifier failures of ag.fused, one per chunk; each checked against its expected-error comment (--verify-diagnostics fails on a mismatch).
// RUN: arignote-opt %s --split-input-file --verify-diagnostics

func.func @arg_types(%x: tensor<?xf32>) -> tensor<?xf32> {
  %r = ag.fused %x : tensor<?xf32> -> tensor<?xf32> {  // expected-error {{'ag.fused' op region arguments (tensor<?xf64>) must have the operand types (tensor<?xf32>)}}
  ^bb0(%a: tensor<?xf64>):
    %e = ag.exp %a : tensor<?xf64>
    ag.yield %e : tensor<?xf64>
  }
  func.return %r : tensor<?xf32>
}

// -----

func.func @yield_types(%x: tensor<?xf32>) -> tensor<?xf32> {
  %r = ag.fused %x : tensor<?xf32> -> tensor<?xf32> {  // expected-error {{'ag.fused' op yields (tensor<?xf32>, tensor<f32>), which must be the result types (tensor<?xf32>)}}
  ^bb0(%a: tensor<?xf32>):
    %e = ag.exp %a : tensor<?xf32>
    %s = ag.reduce_sum %e {axes = array<i64: 0>} : tensor<?xf32> -> tensor<f32>
    ag.yield %e, %s : tensor<?xf32>, tensor<f32>
  }
  func.return %r : tensor<?xf32>
}

// -----

func.func @not_pointwise(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = ag.fused %x, %y : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32> {  // expected-error {{'ag.fused' op region may hold elementwise ops, dimshuffles, splat constants and one final reduction, got ag.dot}}
  ^bb0(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>):
    %d = ag.dot %a, %b : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
    ag.yield %d : tensor<?x?xf32>
  }
  func.return %r : tensor<?x?xf32>
}

// -----

func.func @not_splat(%x: tensor<2xf32>) -> tensor<2xf32> {
  %r = ag.fused %x : tensor<2xf32> -> tensor<2xf32> {  // expected-error {{'ag.fused' op region may only hold splat constants, got dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>}}
  ^bb0(%a: tensor<2xf32>):
    %c = ag.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %m = ag.mul %a, %c : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
    ag.yield %m : tensor<2xf32>
  }
  func.return %r : tensor<2xf32>
}

// -----

func.func @results_of_two_shapes(%x: tensor<?x?xf32>, %y: tensor<?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>) {
  %r, %e = ag.fused %x, %y : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>, tensor<?xf32> {  // expected-error {{'ag.fused' op results must all have the domain shape ?x?, got tensor<?xf32>}}
  ^bb0(%a: tensor<?x?xf32>, %b: tensor<?xf32>):
    %e = ag.exp %b : tensor<?xf32>
    %m = ag.mul %a, %e : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>
    ag.yield %m, %e : tensor<?x?xf32>, tensor<?xf32>
  }
  func.return %r, %e : tensor<?x?xf32>, tensor<?xf32>
}

// -----

func.func @larger_than_domain(%x: tensor<?x?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %r = ag.fused %x, %y : tensor<?x?xf32>, tensor<?xf32> -> tensor<?xf32> {  // expected-error {{'ag.fused' op region value of type tensor<?x?xf32> does not broadcast to the domain ?}}
  ^bb0(%a: tensor<?x?xf32>, %b: tensor<?xf32>):
    %e = ag.exp %a : tensor<?x?xf32>
    %m = ag.exp %b : tensor<?xf32>
    ag.yield %m : tensor<?xf32>
  }
  func.return %r : tensor<?xf32>
}

// -----

func.func @reduction_not_last(%x: tensor<?xf32>) -> tensor<f32> {
  %r = ag.fused %x : tensor<?xf32> -> tensor<f32> {  // expected-error {{'ag.fused' op region may hold elementwise ops, dimshuffles, splat constants and one final reduction, got ag.reduce_sum}}
  ^bb0(%a: tensor<?xf32>):
    %s = ag.reduce_sum %a {axes = array<i64: 0>} : tensor<?xf32> -> tensor<f32>
    %e = ag.exp %s : tensor<f32>
    ag.yield %e : tensor<f32>
  }
  func.return %r : tensor<f32>
}

// -----

func.func @reduction_not_first(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<f32>) {
  %e, %s = ag.fused %x : tensor<?xf32> -> tensor<?xf32>, tensor<f32> {  // expected-error {{'ag.fused' op in the reduction form, the region must yield the reduction first}}
  ^bb0(%a: tensor<?xf32>):
    %e = ag.exp %a : tensor<?xf32>
    %s = ag.reduce_sum %e {axes = array<i64: 0>} : tensor<?xf32> -> tensor<f32>
    ag.yield %e, %s : tensor<?xf32>, tensor<f32>
  }
  func.return %e, %s : tensor<?xf32>, tensor<f32>
}

// -----

func.func @reduction_other_result_shape(%x: tensor<?x?xf32>, %y: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %s, %f = ag.fused %x, %y : tensor<?x?xf32>, tensor<?xf32> -> tensor<?xf32>, tensor<?xf32> {  // expected-error {{'ag.fused' op in the reduction form, results after the reduction must have the domain shape ?x?, got tensor<?xf32>}}
  ^bb0(%a: tensor<?x?xf32>, %b: tensor<?xf32>):
    %f = ag.exp %b : tensor<?xf32>
    %e = ag.mul %a, %f : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>
    %s = ag.reduce_sum %e {axes = array<i64: 0>} : tensor<?x?xf32> -> tensor<?xf32>
    ag.yield %s, %f : tensor<?xf32>, tensor<?xf32>
  }
  func.return %s, %f : tensor<?xf32>, tensor<?xf32>
}

// -----

func.func @no_terminator(%x: tensor<?xf32>) -> tensor<?xf32> {
  %r = "ag.fused"(%x) ({
  ^bb0(%a: tensor<?xf32>):
    %e = ag.exp %a : tensor<?xf32>  // expected-error {{Operation ag.exp terminates block in single-block region but is not a terminator}}
  }) : (tensor<?xf32>) -> tensor<?xf32>
  func.return %r : tensor<?xf32>
}

// -----

func.func @no_operands() -> tensor<f32> {
  %r = "ag.fused"() ({  // expected-error {{'ag.fused' op expects at least one operand}}
  ^bb0:
    %c = ag.constant dense<1.0> : tensor<f32>
    ag.yield %c : tensor<f32>
  }) : () -> tensor<f32>
  func.return %r : tensor<f32>
}

// -----

func.func @captures(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %r = ag.fused %x : tensor<?xf32> -> tensor<?xf32> {  // expected-error {{Operation using value defined out of its IsolatedFromAbove parent}}
  ^bb0(%a: tensor<?xf32>):
    %m = ag.mul %a, %y : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
    ag.yield %m : tensor<?xf32>
  }
  func.return %r : tensor<?xf32>
}

// -----

func.func @destroy_map_types(%x: tensor<?xf32>, %y: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = ag.fused %x, %y : tensor<?xf32>, tensor<?x?xf32> -> tensor<?x?xf32> {  // expected-error {{'ag.fused' op ag.destroy_map: result #0 (tensor<?x?xf32>) cannot overwrite operand #0 (tensor<?xf32>)}}
  ^bb0(%a: tensor<?xf32>, %b: tensor<?x?xf32>):
    %m = ag.mul %b, %a : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>
    ag.yield %m : tensor<?x?xf32>
  } {ag.destroy_map = array<i64: 0, 0>}
  func.return %r : tensor<?x?xf32>
}

// -----

func.func @destroy_map_range(%x: tensor<?xf32>) -> tensor<?xf32> {
  %r = ag.fused %x : tensor<?xf32> -> tensor<?xf32> {  // expected-error {{'ag.fused' op ag.destroy_map pair (0, 1) is out of range}}
  ^bb0(%a: tensor<?xf32>):
    %e = ag.exp %a : tensor<?xf32>
    %n = ag.neg %e : tensor<?xf32>
    ag.yield %n : tensor<?xf32>
  } {ag.destroy_map = array<i64: 0, 1>}
  func.return %r : tensor<?xf32>
}

