// RUN: arignote-opt %s -p scan-prune | filecheck %s

// Output #1 is unused and not fed back: it goes, with the body ops computing it and the
// non-sequence %wt only they read. The fed-back output #0 stays.

func.func @prune(%x: tensor<?xf64>, %h0: tensor<1xf64>, %w: tensor<f64>, %wt: tensor<f64>) -> tensor<?xf64> {
  %h, %g = ag.scan sequences(%x : tensor<?xf64>) initials(%h0 : tensor<1xf64>) non_sequences(%w, %wt : tensor<f64>, tensor<f64>) attributes {sequence_taps = [array<i64: 0>], output_taps = [array<i64: -1>, array<i64>]} -> tensor<?xf64>, tensor<?xf64> {
  ^bb0(%v: tensor<f64>, %p: tensor<f64>, %ww: tensor<f64>, %wwt: tensor<f64>):
    %a = ag.mul %p, %ww : tensor<f64>, tensor<f64> -> tensor<f64>
    %s = ag.add %a, %v : tensor<f64>, tensor<f64> -> tensor<f64>
    %b = ag.mul %s, %wwt : tensor<f64>, tensor<f64> -> tensor<f64>
    ag.yield %s, %b : tensor<f64>, tensor<f64>
  }
  func.return %h : tensor<?xf64>
}

// CHECK-LABEL: func.func @prune(
// CHECK:         %{{.*}} = ag.scan sequences(%x : tensor<?xf64>) initials(%h0 : tensor<1xf64>) non_sequences(%w : tensor<f64>) attributes {{.*}}output_taps = [array<i64: -1>]{{.*}} -> tensor<?xf64> {
// CHECK-NEXT:    ^bb0(%{{.*}}: tensor<f64>, %{{.*}}: tensor<f64>, %{{.*}}: tensor<f64>):
// CHECK-NEXT:      ag.mul
// CHECK-NEXT:      ag.add
// CHECK-NEXT:      ag.yield %{{.*}} : tensor<f64>
// CHECK-NEXT:    }

// Output #1, an unused accumulator no other output depends on, goes with its initial
// value and its tap argument. Output #2 is unused too, but output #0 reads its earlier
// values: it stays.

func.func @accumulators(%x: tensor<?xf64>, %h0: tensor<1xf64>, %a0: tensor<1xf64>, %c0: tensor<1xf64>) -> tensor<?xf64> {
  %h, %acc, %c = ag.scan sequences(%x : tensor<?xf64>) initials(%h0, %a0, %c0 : tensor<1xf64>, tensor<1xf64>, tensor<1xf64>) non_sequences() attributes {sequence_taps = [array<i64: 0>], output_taps = [array<i64: -1>, array<i64: -1>, array<i64: -1>]} -> tensor<?xf64>, tensor<?xf64>, tensor<?xf64> {
  ^bb0(%v: tensor<f64>, %hp: tensor<f64>, %ap: tensor<f64>, %cp: tensor<f64>):
    %s = ag.add %hp, %cp : tensor<f64>, tensor<f64> -> tensor<f64>
    %a = ag.add %ap, %v : tensor<f64>, tensor<f64> -> tensor<f64>
    %cn = ag.mul %cp, %v : tensor<f64>, tensor<f64> -> tensor<f64>
    ag.yield %s, %a, %cn : tensor<f64>, tensor<f64>, tensor<f64>
  }
  func.return %h : tensor<?xf64>
}

// CHECK-LABEL: func.func @accumulators(
// CHECK:         %{{.*}}, %{{.*}} = ag.scan sequences(%x : tensor<?xf64>) initials(%h0, %c0 : tensor<1xf64>, tensor<1xf64>) non_sequences() attributes {{.*}}output_taps = [array<i64: -1>, array<i64: -1>]{{.*}} -> tensor<?xf64>, tensor<?xf64> {
// CHECK-NEXT:    ^bb0(%{{.*}}: tensor<f64>, %{{.*}}: tensor<f64>, %{{.*}}: tensor<f64>):
// CHECK-NEXT:      ag.add
// CHECK-NEXT:      ag.mul
// CHECK-NEXT:      ag.yield %{{.*}}, %{{.*}} : tensor<f64>, tensor<f64>
