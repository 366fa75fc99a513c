// Verifier failures of `ag.scan`, one per chunk; each checked against its expected-error comment (--verify-diagnostics fails on a mismatch).
// RUN: arignote-opt %s --split-input-file --verify-diagnostics

func.func @no_steps(%h0: tensor<1xf64>) -> tensor<?xf64> {
  %y = ag.scan sequences() initials(%h0 : tensor<1xf64>) non_sequences() attributes {sequence_taps = [], output_taps = [array<i64: -1>]} -> tensor<?xf64> {  // expected-error {{'ag.scan' op needs n_steps when it has no sequences}}
  ^bb0(%h: tensor<f64>):
    ag.yield %h : tensor<f64>
  }
  func.return %y : tensor<?xf64>
}

// -----

func.func @float_steps(%n: tensor<f64>, %h0: tensor<1xf64>) -> tensor<?xf64> {
  %y = ag.scan steps(%n : tensor<f64>) sequences() initials(%h0 : tensor<1xf64>) non_sequences() attributes {sequence_taps = [], output_taps = [array<i64: -1>]} -> tensor<?xf64> {  // expected-error {{'ag.scan' op n_steps must be a 0-d integer tensor, got tensor<f64>}}
  ^bb0(%h: tensor<f64>):
    ag.yield %h : tensor<f64>
  }
  func.return %y : tensor<?xf64>
}

// -----

func.func @positive_tap(%x: tensor<?xf64>, %h0: tensor<1xf64>) -> tensor<?xf64> {
  %y = ag.scan sequences(%x : tensor<?xf64>) initials(%h0 : tensor<1xf64>) non_sequences() attributes {sequence_taps = [array<i64: 0>], output_taps = [array<i64: 1>]} -> tensor<?xf64> {  // expected-error {{'ag.scan' op output #0 has taps [1]; output taps must be negative}}
  ^bb0(%v: tensor<f64>, %h: tensor<f64>):
    ag.yield %h : tensor<f64>
  }
  func.return %y : tensor<?xf64>
}

// -----

func.func @missing_initial(%x: tensor<?xf64>) -> tensor<?xf64> {
  %y = ag.scan sequences(%x : tensor<?xf64>) initials() non_sequences() attributes {sequence_taps = [array<i64: 0>], output_taps = [array<i64: -1>]} -> tensor<?xf64> {  // expected-error {{'ag.scan' op has 1 outputs with taps but 0 initial values}}
  ^bb0(%v: tensor<f64>):
    ag.yield %v : tensor<f64>
  }
  func.return %y : tensor<?xf64>
}

// -----

func.func @argument_type(%x: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %y = ag.scan sequences(%x : tensor<?x?xf64>) initials() non_sequences() attributes {sequence_taps = [array<i64: 0>], output_taps = [array<i64>]} -> tensor<?x?xf64> {  // expected-error {{'ag.scan' op body argument #0 has type tensor<?x?xf64>, expected tensor<?xf64>}}
  ^bb0(%v: tensor<?x?xf64>):
    ag.yield %v : tensor<?x?xf64>
  }
  func.return %y : tensor<?x?xf64>
}

// -----

func.func @argument_count(%x: tensor<?xf64>, %w: tensor<f64>) -> tensor<?xf64> {
  %y = ag.scan sequences(%x : tensor<?xf64>) initials() non_sequences(%w : tensor<f64>) attributes {sequence_taps = [array<i64: 0>], output_taps = [array<i64>]} -> tensor<?xf64> {  // expected-error {{'ag.scan' op body has 1 arguments, expected 2 (one per sequence tap, one per output tap, one per non-sequence)}}
  ^bb0(%v: tensor<f64>):
    ag.yield %v : tensor<f64>
  }
  func.return %y : tensor<?xf64>
}

// -----

func.func @yield_count(%x: tensor<?xf64>) -> tensor<?xf64> {
  %y = ag.scan sequences(%x : tensor<?xf64>) initials() non_sequences() attributes {sequence_taps = [array<i64: 0>], output_taps = [array<i64>]} -> tensor<?xf64> {  // expected-error {{'ag.scan' op body yields 2 values, expected 1 (one per result)}}
  ^bb0(%v: tensor<f64>):
    ag.yield %v, %v : tensor<f64>, tensor<f64>
  }
  func.return %y : tensor<?xf64>
}

// -----

func.func @state_type(%n: tensor<i64>, %h0: tensor<1x?xf64>) -> tensor<?x?xf64> {
  %y = ag.scan steps(%n : tensor<i64>) sequences() initials(%h0 : tensor<1x?xf64>) non_sequences() attributes {sequence_taps = [], output_taps = [array<i64: -1>]} -> tensor<?x?xf64> {  // expected-error {{'ag.scan' op output #0 yields tensor<?xf32> but its state (the initial value's rows) has type tensor<?xf64>}}
  ^bb0(%h: tensor<?xf64>):
    %c = ag.cast %h : tensor<?xf64> to tensor<?xf32>
    ag.yield %c : tensor<?xf32>
  }
  func.return %y : tensor<?x?xf64>
}

// -----

func.func @result_type(%x: tensor<?xf64>) -> tensor<?x?xf64> {
  %y = ag.scan sequences(%x : tensor<?xf64>) initials() non_sequences() attributes {sequence_taps = [array<i64: 0>], output_taps = [array<i64>]} -> tensor<?x?xf64> {  // expected-error {{'ag.scan' op result #0 has type tensor<?x?xf64>, expected tensor<?xf64> (the yielded type stacked over the steps)}}
  ^bb0(%v: tensor<f64>):
    ag.yield %v : tensor<f64>
  }
  func.return %y : tensor<?x?xf64>
}

// -----

func.func @captures(%x: tensor<?xf64>, %w: tensor<f64>) -> tensor<?xf64> {
  %y = ag.scan sequences(%x : tensor<?xf64>) initials() non_sequences() attributes {sequence_taps = [array<i64: 0>], output_taps = [array<i64>]} -> tensor<?xf64> {  // expected-error {{IsolatedFromAbove}}
  ^bb0(%v: tensor<f64>):
    %s = ag.add %v, %w : tensor<f64>, tensor<f64> -> tensor<f64>
    ag.yield %s : tensor<f64>
  }
  func.return %y : tensor<?xf64>
}

