// Verifier failures of `ag.allreduce`, one per chunk.
// RUN: arignote-opt %s --split-input-file --verify-diagnostics

func.func @unknown_reduction(%x: tensor<?xf64>) {
  %0 = ag.allreduce %x {reduction = "max", timeout_ms = 0 : i64} : tensor<?xf64>  // expected-error {{'ag.allreduce' op reduction must be one of sum, mean, got 'max'}}
  func.return
}

// -----

func.func @mean_of_integers(%x: tensor<?xi64>) {
  %0 = ag.allreduce %x {reduction = "mean", timeout_ms = 0 : i64} : tensor<?xi64>  // expected-error {{'ag.allreduce' op operand must have a float element type (f32, f64), got tensor<?xi64>}}
  func.return
}

// -----

func.func @sum_of_bools(%x: tensor<?xi1>) {
  %0 = ag.allreduce %x {reduction = "sum", timeout_ms = 0 : i64} : tensor<?xi1>  // expected-error {{'ag.allreduce' op operand must have a real numeric element type (f32, f64, i8..i64, ui8..ui64), got tensor<?xi1>}}
  func.return
}

// -----

func.func @negative_timeout(%x: tensor<?xf32>) {
  %0 = ag.allreduce %x {reduction = "sum", timeout_ms = -1 : i64} : tensor<?xf32>  // expected-error {{'ag.allreduce' op timeout_ms must not be negative, got -1}}
  func.return
}
