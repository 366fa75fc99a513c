// RUN: arignote-opt %s -p scan-last-step | filecheck %s

// Output #0 is only read at its last row (`[-1]` and `[-1:]`): it is marked; output #1
// is also read elsewhere: it is not.

func.func @last(%x: tensor<?xf64>, %h0: tensor<1xf64>) -> (tensor<f64>, tensor<?xf64>, tensor<?xf64>) {
  %h, %y = ag.scan sequences(%x : tensor<?xf64>) initials(%h0 : tensor<1xf64>) non_sequences() attributes {sequence_taps = [array<i64: 0>], output_taps = [array<i64: -1>, array<i64>]} -> tensor<?xf64>, tensor<?xf64> {
  ^bb0(%v: tensor<f64>, %p: tensor<f64>):
    %s = ag.add %v, %p : tensor<f64>, tensor<f64> -> tensor<f64>
    ag.yield %s, %v : tensor<f64>, tensor<f64>
  }
  %a = ag.subtensor %h[] {kinds = array<i64: 1>, starts = array<i64: -1>, stops = array<i64: -9223372036854775807>, steps = array<i64: -9223372036854775807>} : tensor<?xf64> -> tensor<f64>
  %b = ag.subtensor %h[] {kinds = array<i64: 0>, starts = array<i64: -1>, stops = array<i64: -9223372036854775807>, steps = array<i64: -9223372036854775807>} : tensor<?xf64> -> tensor<?xf64>
  %c = ag.subtensor %y[] {kinds = array<i64: 1>, starts = array<i64: -1>, stops = array<i64: -9223372036854775807>, steps = array<i64: -9223372036854775807>} : tensor<?xf64> -> tensor<f64>
  func.return %a, %b, %y : tensor<f64>, tensor<?xf64>, tensor<?xf64>
}

// CHECK-LABEL: func.func @last(
// CHECK:         ag.scan sequences(%x : tensor<?xf64>) initials(%h0 : tensor<1xf64>) non_sequences() attributes {sequence_taps = [array<i64: 0>], output_taps = [array<i64: -1>, array<i64>], last_only = array<i64: 0>}
