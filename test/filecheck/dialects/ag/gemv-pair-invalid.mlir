// Verifier failures of `ag.gemv_pair`, one per chunk; each checked against its expected-error comment (--verify-diagnostics fails on a mismatch).
// RUN: arignote-opt %s --split-input-file --verify-diagnostics

func.func @not_a_matrix(%a: tensor<?xf32>, %x: tensor<?xf32>, %alpha: tensor<f32>) {
  %u, %g, %r = "ag.gemv_pair"(%a, %x, %alpha) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>}> ({  // expected-error {{'ag.gemv_pair' op expects a matrix and a vector, got tensor<?xf32> and tensor<?xf32>}}
  ^bb0(%d: tensor<f32>):
    ag.yield %d, %d : tensor<f32>, tensor<f32>
  }) : (tensor<?xf32>, tensor<?xf32>, tensor<f32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>)
  func.return
}

// -----

func.func @contracted(%a: tensor<3x4xf32>, %x: tensor<5xf32>, %alpha: tensor<f32>) {
  %u, %g, %r = ag.gemv_pair %a, %x, %alpha rows() : tensor<3x4xf32>, tensor<5xf32>, tensor<f32> rows() -> (tensor<3xf32>, tensor<3xf32>, tensor<4xf32>) {  // expected-error {{'ag.gemv_pair' op contracted dimensions differ: tensor<3x4xf32> and tensor<5xf32>}}
  ^bb0(%d: tensor<f32>):
    ag.yield %d, %d : tensor<f32>, tensor<f32>
  }
  func.return
}

// -----

func.func @integer(%a: tensor<?x?xi32>, %x: tensor<?xi32>, %alpha: tensor<i32>) {
  %u, %g, %r = ag.gemv_pair %a, %x, %alpha rows() : tensor<?x?xi32>, tensor<?xi32>, tensor<i32> rows() -> (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) {  // expected-error {{'ag.gemv_pair' op a must have a float element type (f32, f64), got tensor<?x?xi32>}}
  ^bb0(%d: tensor<i32>):
    ag.yield %d, %d : tensor<i32>, tensor<i32>
  }
  func.return
}

// -----

func.func @alpha_not_scalar(%a: tensor<?x?xf32>, %x: tensor<?xf32>, %alpha: tensor<1xf32>) {
  %u, %g, %r = ag.gemv_pair %a, %x, %alpha rows() : tensor<?x?xf32>, tensor<?xf32>, tensor<1xf32> rows() -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {  // expected-error {{'ag.gemv_pair' op alpha must be a 0-d tensor, got tensor<1xf32>}}
  ^bb0(%d: tensor<f32>):
    ag.yield %d, %d : tensor<f32>, tensor<f32>
  }
  func.return
}

// -----

func.func @r0_length(%a: tensor<3x4xf32>, %x: tensor<4xf32>, %alpha: tensor<f32>, %r0: tensor<3xf32>) {
  %u, %g, %r = ag.gemv_pair %a, %x, %alpha acc(%alpha, %r0) rows() : tensor<3x4xf32>, tensor<4xf32>, tensor<f32> acc(tensor<f32>, tensor<3xf32>) rows() -> (tensor<3xf32>, tensor<3xf32>, tensor<4xf32>) {  // expected-error {{'ag.gemv_pair' op r0 must be a vector of tensor<3x4xf32>'s column count, got tensor<3xf32>}}
  ^bb0(%d: tensor<f32>):
    ag.yield %d, %d : tensor<f32>, tensor<f32>
  }
  func.return
}

// -----

func.func @row_length(%a: tensor<3x4xf32>, %x: tensor<4xf32>, %alpha: tensor<f32>, %y: tensor<2xf32>) {
  %u, %g, %r = ag.gemv_pair %a, %x, %alpha rows(%y) : tensor<3x4xf32>, tensor<4xf32>, tensor<f32> rows(tensor<2xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<4xf32>) {  // expected-error {{'ag.gemv_pair' op row operand #0 must be 0-d, of static length 1 or of tensor<3x4xf32>'s row count 3, got tensor<2xf32>}}
  ^bb0(%d: tensor<f32>, %yi: tensor<f32>):
    ag.yield %d, %yi : tensor<f32>, tensor<f32>
  }
  func.return
}

// -----

func.func @region_arguments(%a: tensor<?x?xf32>, %x: tensor<?xf32>, %alpha: tensor<f32>, %y: tensor<?xf32>) {
  %u, %g, %r = ag.gemv_pair %a, %x, %alpha rows(%y) : tensor<?x?xf32>, tensor<?xf32>, tensor<f32> rows(tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {  // expected-error {{'ag.gemv_pair' op region arguments must be (tensor<f32>, tensor<f32>) (d_i and one element of each row operand), got (tensor<f32>, tensor<?xf32>)}}
  ^bb0(%d: tensor<f32>, %yi: tensor<?xf32>):
    ag.yield %d, %d : tensor<f32>, tensor<f32>
  }
  func.return
}

// -----

func.func @region_op(%a: tensor<?x?xf32>, %x: tensor<?xf32>, %alpha: tensor<f32>) {
  %u, %g, %r = ag.gemv_pair %a, %x, %alpha rows() : tensor<?x?xf32>, tensor<?xf32>, tensor<f32> rows() -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {  // expected-error {{'ag.gemv_pair' op region may hold only elementwise ops, got ag.dimshuffle}}
  ^bb0(%d: tensor<f32>):
    %e = ag.dimshuffle %d {pattern = array<i64: -1>} : tensor<f32> -> tensor<1xf32>
    ag.yield %d, %d : tensor<f32>, tensor<f32>
  }
  func.return
}

// -----

func.func @region_rank(%a: tensor<?x?xf32>, %x: tensor<?xf32>, %alpha: tensor<f32>, %v: tensor<f32>) {
  %u, %g, %r = ag.gemv_pair %a, %x, %alpha rows(%v) : tensor<?x?xf32>, tensor<?xf32>, tensor<f32> rows(tensor<f32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {  // expected-error {{'ag.gemv_pair' op region values must be 0-d tensors, got tensor<2xf32>}}
  ^bb0(%d: tensor<f32>, %vi: tensor<f32>):
    %c = ag.constant dense<[1.0, 2.0]> : tensor<2xf32>
    ag.yield %d, %d : tensor<f32>, tensor<f32>
  }
  func.return
}

// -----

func.func @yield_types(%a: tensor<?x?xf32>, %x: tensor<?xf32>, %alpha: tensor<f32>) {
  %u, %g, %r = ag.gemv_pair %a, %x, %alpha rows() : tensor<?x?xf32>, tensor<?xf32>, tensor<f32> rows() -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {  // expected-error {{'ag.gemv_pair' op region must yield u_i and g_i of type tensor<f32>, got (tensor<f32>)}}
  ^bb0(%d: tensor<f32>):
    ag.yield %d : tensor<f32>
  }
  func.return
}

// -----

func.func @result_type(%a: tensor<3x4xf32>, %x: tensor<4xf32>, %alpha: tensor<f32>) {
  %u, %g, %r = ag.gemv_pair %a, %x, %alpha rows() : tensor<3x4xf32>, tensor<4xf32>, tensor<f32> rows() -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {  // expected-error {{'ag.gemv_pair' op result type tensor<3xf32> does not match the inferred type tensor<4xf32>}}
  ^bb0(%d: tensor<f32>):
    ag.yield %d, %d : tensor<f32>, tensor<f32>
  }
  func.return
}

