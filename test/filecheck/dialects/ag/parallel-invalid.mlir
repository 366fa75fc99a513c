// Verifier failures of ag.parallel_for, one per chunk; each checked against its expected-error comment (--verify-diagnostics fails on a mismatch).
// RUN: arignote-opt %s --split-input-file --verify-diagnostics

func.func @align(%n: index) {
  %p = ag.parallel_for %n to %n min_trips %n align 0 {  // expected-error {{'ag.parallel_for' op align must be >= 1, got 0}}
  ^bb0(%begin: index, %end: index, %part: index):
    ag.yield
  }
  func.return
}

// -----

func.func @arguments(%n: index) {
  %p = ag.parallel_for %n to %n min_trips %n align 1 {  // expected-error {{'ag.parallel_for' op body must take (begin, end, part) of type index, got (index, i64)}}
  ^bb0(%begin: index, %end: i64):
    ag.yield
  }
  func.return
}

// -----

func.func @yield(%n: index, %t: tensor<f32>) {
  %p = ag.parallel_for %n to %n min_trips %n align 1 {  // expected-error {{'ag.parallel_for' op body must end with an ag.yield of no values}}
  ^bb0(%begin: index, %end: index, %part: index):
    ag.yield %t : tensor<f32>
  }
  func.return
}

