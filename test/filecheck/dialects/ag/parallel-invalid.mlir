// Verifier failures of ag.parallel_for, one per chunk; each prints its diagnostic (exit 0).
// RUN: arignote-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @align(%n: index) {
  %p = ag.parallel_for %n to %n min_trips %n align 0 {
  ^bb0(%begin: index, %end: index, %part: index):
    ag.yield
  }
  func.return
}

// CHECK: 'ag.parallel_for' op align must be >= 1, got 0

// -----

func.func @arguments(%n: index) {
  %p = ag.parallel_for %n to %n min_trips %n align 1 {
  ^bb0(%begin: index, %end: i64):
    ag.yield
  }
  func.return
}

// CHECK: 'ag.parallel_for' op body must take (begin, end, part) of type index, got (index, i64)

// -----

func.func @yield(%n: index, %t: tensor<f32>) {
  %p = ag.parallel_for %n to %n min_trips %n align 1 {
  ^bb0(%begin: index, %end: index, %part: index):
    ag.yield %t : tensor<f32>
  }
  func.return
}

// CHECK: 'ag.parallel_for' op body must end with an ag.yield of no values
