// Verifier failures of ag.mrg_uniform, one per chunk.
// RUN: arignote-opt %s --split-input-file --verify-diagnostics

func.func @state_type(%s: tensor<?x?xi64>) {
  %s2, %u = ag.mrg_uniform %s[] {shape = array<i64: 3>} : tensor<?x?xi64> -> tensor<?x?xi64>, tensor<3xf32>  // expected-error {{'ag.mrg_uniform' op rstate must be an i32 matrix of 6 columns, got tensor<?x?xi64>}}
  func.return
}

// -----

func.func @state_columns(%s: tensor<?x5xi32>) {
  %s2, %u = ag.mrg_uniform %s[] {shape = array<i64: 3>} : tensor<?x5xi32> -> tensor<?x5xi32>, tensor<3xf32>  // expected-error {{'ag.mrg_uniform' op rstate must be an i32 matrix of 6 columns, got tensor<?x5xi32>}}
  func.return
}

// -----

func.func @dynamic_count(%s: tensor<?x6xi32>, %n: tensor<i64>) {
  %s2, %u = ag.mrg_uniform %s[%n] {shape = array<i64: 3>} : tensor<?x6xi32>, tensor<i64> -> tensor<?x6xi32>, tensor<3xf32>  // expected-error {{'ag.mrg_uniform' op has 1 dynamic operands but its shape names 0}}
  func.return
}

// -----

func.func @sample_type(%s: tensor<?x6xi32>) {
  %s2, %u = ag.mrg_uniform %s[] {shape = array<i64: 3>} : tensor<?x6xi32> -> tensor<?x6xi32>, tensor<3xi32>  // expected-error {{'ag.mrg_uniform' op sample must be a tensor<3xf32> or f64, got tensor<3xi32>}}
  func.return
}

// -----

func.func @negative(%s: tensor<?x6xi32>) {
  %s2, %u = ag.mrg_uniform %s[] {shape = array<i64: -3>} : tensor<?x6xi32> -> tensor<?x6xi32>, tensor<3xf32>  // expected-error {{'ag.mrg_uniform' op shape [-3] has a negative length}}
  func.return
}

// -----

func.func @binomial_p_narrower(%s: tensor<?x6xi32>, %p: tensor<f32>) {
  %s2, %m = ag.mrg_binomial %s, %p[] {shape = array<i64: 3>, uniform_type = f64} : tensor<?x6xi32>, tensor<f32> -> tensor<?x6xi32>, tensor<3xi64>  // expected-error {{'ag.mrg_binomial' op p must be a 0-d f32 or f64 tensor at least as wide as uniform_type f64, got tensor<f32>}}
  func.return
}

// -----

func.func @binomial_shape(%s: tensor<?x6xi32>, %p: tensor<f64>) {
  %s2, %m = ag.mrg_binomial %s, %p[] {shape = array<i64: 3>, uniform_type = f64} : tensor<?x6xi32>, tensor<f64> -> tensor<?x6xi32>, tensor<4xi64>  // expected-error {{'ag.mrg_binomial' op sample must have shape <3>, got tensor<4xi64>}}
  func.return
}
