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
