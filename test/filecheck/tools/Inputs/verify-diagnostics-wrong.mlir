// An expectation that names the wrong message, one on the wrong line, and one for an
// error that never happens: --verify-diagnostics must fail on each.
func.func @wrong_text(%a: tensor<3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{this is not what the verifier says}}
  %0 = ag.add %a, %b : tensor<3xf32>, tensor<3xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @wrong_line(%a: tensor<3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{does not match the inferred type}}
  %0 = ag.add %a, %b : tensor<3xf32>, tensor<3xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @never(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @below {{never happens}}
  func.return %a : tensor<3xf32>
}
