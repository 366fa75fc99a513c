// RUN: arignote-opt %s --split-input-file --verify-diagnostics | filecheck %s

// ag.scan with `until` round-trips (the condition yielded last, the count result last),
// and its verifier failures are the expected errors (--verify-diagnostics checks them; the
// good chunk's IR goes to stdout).

func.func @until(%n: tensor<i64>, %h0: tensor<1xf64>) -> (tensor<?xf64>, tensor<i64>) {
  %hs, %k = ag.scan steps(%n : tensor<i64>) sequences() initials(%h0 : tensor<1xf64>) non_sequences() attributes {sequence_taps = [], output_taps = [array<i64: -1>, array<i64>], until} -> tensor<?xf64>, tensor<i64> {
  ^bb0(%h: tensor<f64>):
    %d = ag.add %h, %h : tensor<f64>, tensor<f64> -> tensor<f64>
    %c = ag.gt %d, %h : tensor<f64>, tensor<f64> -> tensor<i1>
    ag.yield %d, %c : tensor<f64>, tensor<i1>
  }
  func.return %hs, %k : tensor<?xf64>, tensor<i64>
}

// CHECK-LABEL: func.func @until(
// CHECK:         ag.scan steps(%n : tensor<i64>) {{.*}}output_taps = [array<i64: -1>, array<i64>], until} -> tensor<?xf64>, tensor<i64> {
// CHECK:           ag.yield %{{.*}}, %{{.*}} : tensor<f64>, tensor<i1>

// -----

func.func @float_condition(%n: tensor<i64>, %h0: tensor<1xf64>) -> (tensor<?xf64>, tensor<i64>) {
  // expected-error @+1 {{'ag.scan' op with until yields a condition of type tensor<f64>, expected tensor<i1> (its last yielded value)}}
  %hs, %k = ag.scan steps(%n : tensor<i64>) sequences() initials(%h0 : tensor<1xf64>) non_sequences() attributes {sequence_taps = [], output_taps = [array<i64: -1>, array<i64>], until} -> tensor<?xf64>, tensor<i64> {
  ^bb0(%h: tensor<f64>):
    ag.yield %h, %h : tensor<f64>, tensor<f64>
  }
  func.return %hs, %k : tensor<?xf64>, tensor<i64>
}

// -----

func.func @stacked_count(%n: tensor<i64>, %h0: tensor<1xf64>) -> (tensor<?xf64>, tensor<?xi64>) {
  // expected-error @+1 {{'ag.scan' op with until has a last result of type tensor<?xi64>, expected tensor<i64> (the number of steps run)}}
  %hs, %k = ag.scan steps(%n : tensor<i64>) sequences() initials(%h0 : tensor<1xf64>) non_sequences() attributes {sequence_taps = [], output_taps = [array<i64: -1>, array<i64>], until} -> tensor<?xf64>, tensor<?xi64> {
  ^bb0(%h: tensor<f64>):
    %c = ag.gt %h, %h : tensor<f64>, tensor<f64> -> tensor<i1>
    ag.yield %h, %c : tensor<f64>, tensor<i1>
  }
  func.return %hs, %k : tensor<?xf64>, tensor<?xi64>
}

