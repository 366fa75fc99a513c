// Verifier failures of the scan, sort and search ops, one per chunk; each checked
// against its expected-error comment.
// RUN: arignote-opt %s --split-input-file --verify-diagnostics

func.func @cumsum_axis(%x: tensor<?x?xf32>) {
  %0 = ag.cumsum %x {axis = 2 : i64} : tensor<?x?xf32> -> tensor<?x?xf32>  // expected-error {{'ag.cumsum' op axis 2 out of range for tensor<?x?xf32>}}
  func.return
}

// -----

func.func @cumprod_bool(%x: tensor<?xi1>) {
  %0 = ag.cumprod %x {axis = 0 : i64} : tensor<?xi1> -> tensor<?xi1>  // expected-error {{'ag.cumprod' op operand must have a real numeric element type (f32, f64, i8..i64, ui8..ui64), got tensor<?xi1>}}
  func.return
}

// -----

func.func @sort_result(%x: tensor<?xf32>) {
  %0 = ag.sort %x {axis = 0 : i64} : tensor<?xf32> -> tensor<?xf64>  // expected-error {{'ag.sort' op result type tensor<?xf64> does not match the inferred type tensor<?xf32>}}
  func.return
}

// -----

func.func @argsort_result(%x: tensor<?xf32>) {
  %0 = ag.argsort %x {axis = 0 : i64} : tensor<?xf32> -> tensor<?xi32>  // expected-error {{'ag.argsort' op result type tensor<?xi32> does not match the inferred type tensor<?xi64>}}
  func.return
}

// -----

func.func @searchsorted_matrix(%a: tensor<?x?xf64>, %v: tensor<?xf64>) {
  %0 = ag.searchsorted %a, %v {side = "left"} : tensor<?x?xf64>, tensor<?xf64> -> tensor<?xi64>  // expected-error {{'ag.searchsorted' op sorted must be a vector, got tensor<?x?xf64>}}
  func.return
}

// -----

func.func @searchsorted_types(%a: tensor<?xf64>, %v: tensor<?xf32>) {
  %0 = ag.searchsorted %a, %v {side = "left"} : tensor<?xf64>, tensor<?xf32> -> tensor<?xi64>  // expected-error {{'ag.searchsorted' op sorted and values must have one element type, got tensor<?xf64> and tensor<?xf32>}}
  func.return
}

// -----

func.func @searchsorted_side(%a: tensor<?xf64>, %v: tensor<?xf64>) {
  %0 = ag.searchsorted %a, %v {side = "middle"} : tensor<?xf64>, tensor<?xf64> -> tensor<?xi64>  // expected-error {{'ag.searchsorted' op side must be "left" or "right", got "middle"}}
  func.return
}

