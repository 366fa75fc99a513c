// RUN: arignote-opt %s -p scan-pushout | filecheck %s

// The forward step of an RNN (after specialize): x_t·W, a sequence row times a
// non-sequence, is one gemm on the sequence reshaped to (T·B, n_in), reshaped back to
// (T, B, H) and read as a new sequence. It was the accumulation of gemm(h, U): the step
// now accumulates into the row. h·U reads the carried state: it stays. The sequence x,
// read no more, goes (the new one has its length and tap span).

func.func @products(%x: tensor<?x?x?xf64>, %h0: tensor<1x?x?xf64>, %w: tensor<?x?xf64>, %u: tensor<?x?xf64>) -> tensor<?x?x?xf64> {
  %hs = ag.scan sequences(%x : tensor<?x?x?xf64>) initials(%h0 : tensor<1x?x?xf64>) non_sequences(%w, %u : tensor<?x?xf64>, tensor<?x?xf64>) attributes {sequence_taps = [array<i64: 0>], output_taps = [array<i64: -1>]} -> tensor<?x?x?xf64> {
  ^bb0(%xt: tensor<?x?xf64>, %h: tensor<?x?xf64>, %ww: tensor<?x?xf64>, %uu: tensor<?x?xf64>):
    %one = ag.constant dense<1.0> : tensor<f64>
    %hu = ag.gemm %one, %h, %uu : tensor<f64>, tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?x?xf64>
    %s = ag.gemm %one, %xt, %ww, %one, %hu : tensor<f64>, tensor<?x?xf64>, tensor<?x?xf64>, tensor<f64>, tensor<?x?xf64> -> tensor<?x?xf64>
    %t = ag.tanh %s : tensor<?x?xf64>
    ag.yield %t : tensor<?x?xf64>
  }
  func.return %hs : tensor<?x?x?xf64>
}

// CHECK-LABEL: func.func @products(
// CHECK:         %[[ONE:.*]] = ag.constant dense<1.000000e+00> : tensor<f64>
// CHECK:         %[[T:.*]] = ag.dim %x {axis = 0 : i64}
// CHECK:         %[[B:.*]] = ag.dim %x {axis = 1 : i64}
// CHECK:         %[[TB:.*]] = ag.mul %[[T]], %[[B]]
// CHECK:         %[[K:.*]] = ag.dim %x {axis = 2 : i64}
// CHECK:         %[[X2:.*]] = ag.reshape %x[%[[TB]], %[[K]]]
// CHECK:         %[[P2:.*]] = ag.gemm %[[ONE]], %[[X2]], %w : tensor<f64>, tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?x?xf64>
// CHECK:         %[[H:.*]] = ag.dim %[[P2]] {axis = 1 : i64}
// CHECK:         %[[P:.*]] = ag.reshape %[[P2]][%[[T]], %[[B]], %[[H]]] {{.*}} -> tensor<?x?x?xf64>
// CHECK:         ag.scan sequences(%[[P]] : tensor<?x?x?xf64>) initials(%h0 : tensor<1x?x?xf64>) non_sequences(%u : tensor<?x?xf64>) attributes {sequence_taps = [array<i64: 0>], output_taps = [array<i64: -1>]}
// CHECK-NEXT:    ^bb0(%[[ROW:.*]]: tensor<?x?xf64>, %h: tensor<?x?xf64>, %uu: tensor<?x?xf64>):
// CHECK:           ag.gemm %{{.*}}, %h, %uu, %{{.*}}, %[[ROW]] :
// CHECK-NEXT:      ag.tanh
// CHECK-NEXT:      ag.yield

func.func @seq_on_right(%x: tensor<?x?x?xf64>, %h0: tensor<1x?x?xf64>, %u: tensor<?x?xf64>) -> tensor<?x?x?xf64> {
  %hs = ag.scan sequences(%x : tensor<?x?x?xf64>) initials(%h0 : tensor<1x?x?xf64>) non_sequences(%u : tensor<?x?xf64>) attributes {sequence_taps = [array<i64: 0>], output_taps = [array<i64: -1>]} -> tensor<?x?x?xf64> {
  ^bb0(%xt: tensor<?x?xf64>, %h: tensor<?x?xf64>, %uu: tensor<?x?xf64>):
    %one = ag.constant dense<1.0> : tensor<f64>
    %p = ag.gemm %one, %uu, %xt : tensor<f64>, tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?x?xf64>
    %q = ag.gemm %one, %h, %uu, %one, %p : tensor<f64>, tensor<?x?xf64>, tensor<?x?xf64>, tensor<f64>, tensor<?x?xf64> -> tensor<?x?xf64>
    ag.yield %q : tensor<?x?xf64>
  }
  func.return %hs : tensor<?x?x?xf64>
}

// A sequence row on the right of a matrix (a batched product, no single gemm) and a
// product of the carried state stay in the step.

// CHECK-LABEL: func.func @seq_on_right(
// CHECK-NEXT:    ag.scan sequences(%x : tensor<?x?x?xf64>)
// CHECK:           ag.gemm %{{.*}}, %uu, %xt :
// CHECK-NEXT:      ag.gemm %{{.*}}, %h, %uu, %{{.*}}, %p :
// CHECK-NEXT:      ag.yield

// A matrix times a vector row (gemv per step, scaled by a constant): one gemm of the
// whole sequence by the matrix transposed, alpha cloned before the loop. The row read
// is that of tap 0, so the new sequence keeps the taps [-1, 0] (the same tap span: x,
// still read through tap -1, stays too).

func.func @vector_rows(%x: tensor<?x?xf64>, %m: tensor<?x?xf64>, %h0: tensor<1x?xf64>) -> tensor<?x?xf64> {
  %hs = ag.scan sequences(%x : tensor<?x?xf64>) initials(%h0 : tensor<1x?xf64>) non_sequences(%m : tensor<?x?xf64>) attributes {sequence_taps = [array<i64: -1, 0>], output_taps = [array<i64: -1>]} -> tensor<?x?xf64> {
  ^bb0(%xp: tensor<?xf64>, %xt: tensor<?xf64>, %h: tensor<?xf64>, %mm: tensor<?x?xf64>):
    %one = ag.constant dense<1.0> : tensor<f64>
    %two = ag.constant dense<2.0> : tensor<f64>
    %p = ag.gemv %two, %mm, %xt : tensor<f64>, tensor<?x?xf64>, tensor<?xf64> -> tensor<?xf64>
    %s = ag.add %p, %h : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
    %t = ag.add %s, %xp : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
    ag.yield %t : tensor<?xf64>
  }
  func.return %hs : tensor<?x?xf64>
}

// CHECK-LABEL: func.func @vector_rows(
// CHECK-NEXT:    %[[TWO:.*]] = ag.constant dense<2.000000e+00> : tensor<f64>
// CHECK-NEXT:    %[[P:.*]] = ag.gemm %[[TWO]], %x, %m {transpose_b} : tensor<f64>, tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?x?xf64>
// CHECK-NEXT:    ag.scan sequences(%x, %[[P]] : tensor<?x?xf64>, tensor<?x?xf64>) initials(%h0 : tensor<1x?xf64>) non_sequences() attributes {sequence_taps = [array<i64: -1, 0>, array<i64: -1, 0>], output_taps = [array<i64: -1>]}
// CHECK-NEXT:    ^bb0(%xp: tensor<?xf64>, %xt: tensor<?xf64>, %{{.*}}: tensor<?xf64>, %[[ROW:.*]]: tensor<?xf64>, %h: tensor<?xf64>):
// CHECK-NEXT:      ag.add %[[ROW]], %h
// CHECK-NEXT:      ag.add %{{.*}}, %xp
// CHECK-NEXT:      ag.yield

// The accumulators of a reverse scan (BPTT): acc_W + A_tᵀ·d_t and acc_b + sum(d_t, 0)
// with only the last rows read. d_t, computed from the carried state, becomes a stacked
// output; after the loop acc_W = row 0 of its initial value + reshape(A[0:n])ᵀ ·
// reshape(D) (one gemm; n = the shortest sequence, A is windowed to the steps' rows)
// and acc_b = its initial row + reshape(D)ᵀ · ones (one gemv); each result is its final
// value as a one-row tensor (min(n, 1) rows), which the [-1] reads unchanged.

func.func @accumulators(%a: tensor<?x?x?xf64>, %g: tensor<?x?x?xf64>, %c0: tensor<1x?x?xf64>, %w0: tensor<1x?x?xf64>, %b0: tensor<1x?xf64>, %u: tensor<?x?xf64>) -> (tensor<?x?xf64>, tensor<?x?xf64>, tensor<?xf64>) {
  %c, %dw, %db = ag.scan sequences(%a, %g : tensor<?x?x?xf64>, tensor<?x?x?xf64>) initials(%c0, %w0, %b0 : tensor<1x?x?xf64>, tensor<1x?x?xf64>, tensor<1x?xf64>) non_sequences(%u : tensor<?x?xf64>) attributes {sequence_taps = [array<i64: 0>, array<i64: 0>], output_taps = [array<i64: -1>, array<i64: -1>, array<i64: -1>]} -> tensor<?x?x?xf64>, tensor<?x?x?xf64>, tensor<?x?xf64> {
  ^bb0(%at: tensor<?x?xf64>, %gt: tensor<?x?xf64>, %cp: tensor<?x?xf64>, %wp: tensor<?x?xf64>, %bp: tensor<?xf64>, %uu: tensor<?x?xf64>):
    %one = ag.constant dense<1.0> : tensor<f64>
    %d = ag.mul %gt, %cp : tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?x?xf64>
    %cn = ag.gemm %one, %d, %uu : tensor<f64>, tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?x?xf64>
    %wn = ag.gemm %one, %at, %d, %one, %wp {transpose_a} : tensor<f64>, tensor<?x?xf64>, tensor<?x?xf64>, tensor<f64>, tensor<?x?xf64> -> tensor<?x?xf64>
    %r = ag.reduce_sum %d {axes = array<i64: 0>} : tensor<?x?xf64> -> tensor<?xf64>
    %bn = ag.add %bp, %r : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
    ag.yield %cn, %wn, %bn : tensor<?x?xf64>, tensor<?x?xf64>, tensor<?xf64>
  }
  %cl = ag.subtensor %c[] {kinds = array<i64: 1, 0, 0>, starts = array<i64: -1, -9223372036854775807, -9223372036854775807>, stops = array<i64: -9223372036854775807, -9223372036854775807, -9223372036854775807>, steps = array<i64: -9223372036854775807, -9223372036854775807, -9223372036854775807>} : tensor<?x?x?xf64> -> tensor<?x?xf64>
  %wl = ag.subtensor %dw[] {kinds = array<i64: 1, 0, 0>, starts = array<i64: -1, -9223372036854775807, -9223372036854775807>, stops = array<i64: -9223372036854775807, -9223372036854775807, -9223372036854775807>, steps = array<i64: -9223372036854775807, -9223372036854775807, -9223372036854775807>} : tensor<?x?x?xf64> -> tensor<?x?xf64>
  %bl = ag.subtensor %db[] {kinds = array<i64: 1, 0>, starts = array<i64: -1, -9223372036854775807>, stops = array<i64: -9223372036854775807, -9223372036854775807>, steps = array<i64: -9223372036854775807, -9223372036854775807>} : tensor<?x?xf64> -> tensor<?xf64>
  func.return %cl, %wl, %bl : tensor<?x?xf64>, tensor<?x?xf64>, tensor<?xf64>
}

// CHECK-LABEL: func.func @accumulators(
// CHECK:         %[[N:.*]] = ag.minimum
// CHECK:         %[[W0:.*]] = ag.subtensor %w0[] {kinds = array<i64: 1, 0, 0>, starts = array<i64: 0,
// CHECK-NEXT:    %[[B0:.*]] = ag.subtensor %b0[] {kinds = array<i64: 1, 0>, starts = array<i64: 0,
// CHECK-NEXT:    %c, %[[D:.*]] = ag.scan sequences(%a, %g : {{.*}}) initials(%c0 : tensor<1x?x?xf64>) non_sequences(%u : tensor<?x?xf64>) attributes {sequence_taps = [array<i64: 0>, array<i64: 0>], output_taps = [array<i64: -1>, array<i64>]} -> tensor<?x?x?xf64>, tensor<?x?x?xf64> {
// CHECK-NEXT:    ^bb0(%at: tensor<?x?xf64>, %gt: tensor<?x?xf64>, %cp: tensor<?x?xf64>, %uu: tensor<?x?xf64>):
// CHECK-NEXT:      ag.constant
// CHECK-NEXT:      %d = ag.mul %gt, %cp
// CHECK-NEXT:      %cn = ag.gemm
// CHECK-NEXT:      ag.yield %cn, %d
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[AW:.*]] = ag.subtensor %a[%[[N]]] {kinds = array<i64: 0, 0, 0>, starts = array<i64: 0, {{.*}}
// CHECK:         %[[A2:.*]] = ag.reshape %[[AW]][
// CHECK:         %[[D2:.*]] = ag.reshape %[[D]][
// CHECK-NEXT:    %[[DW:.*]] = ag.gemm %{{.*}}, %[[A2]], %[[D2]], %{{.*}}, %[[W0]] {transpose_a}
// CHECK-NEXT:    %[[DW1:.*]] = ag.dimshuffle %[[DW]] {pattern = array<i64: -1, 0, 1>}
// CHECK-NEXT:    %dw = ag.subtensor %[[DW1]][%[[N]]]
// CHECK:         %[[ONES:.*]] = ag.alloc
// CHECK-NEXT:    %[[DB:.*]] = ag.gemv %{{.*}}, %[[D2]], %[[ONES]], %{{.*}}, %[[B0]] {transpose_a}
// CHECK-NEXT:    %[[DB1:.*]] = ag.dimshuffle %[[DB]] {pattern = array<i64: -1, 0>}
// CHECK-NEXT:    %db = ag.subtensor %[[DB1]][%[[N]]] {kinds = array<i64: 0, 0>, starts = array<i64: 0,
// CHECK:         func.return

// What stays: an accumulator whose every step is read (%full), one fed back through
// tap -2 (%two), one whose earlier value the step reads elsewhere too (%read).

func.func @accumulators_that_stay(%a: tensor<?x?x?xf64>, %w0: tensor<1x?x?xf64>, %v0: tensor<2x?x?xf64>, %z0: tensor<1x?x?xf64>) -> (tensor<?x?x?xf64>, tensor<?x?xf64>, tensor<?x?xf64>) {
  %full, %two, %read = ag.scan sequences(%a : tensor<?x?x?xf64>) initials(%w0, %v0, %z0 : tensor<1x?x?xf64>, tensor<2x?x?xf64>, tensor<1x?x?xf64>) non_sequences() attributes {sequence_taps = [array<i64: 0>], output_taps = [array<i64: -1>, array<i64: -2>, array<i64: -1>]} -> tensor<?x?x?xf64>, tensor<?x?x?xf64>, tensor<?x?x?xf64> {
  ^bb0(%at: tensor<?x?xf64>, %wp: tensor<?x?xf64>, %vp: tensor<?x?xf64>, %zp: tensor<?x?xf64>):
    %one = ag.constant dense<1.0> : tensor<f64>
    %wn = ag.gemm %one, %at, %at, %one, %wp {transpose_a} : tensor<f64>, tensor<?x?xf64>, tensor<?x?xf64>, tensor<f64>, tensor<?x?xf64> -> tensor<?x?xf64>
    %vn = ag.gemm %one, %at, %at, %one, %vp {transpose_a} : tensor<f64>, tensor<?x?xf64>, tensor<?x?xf64>, tensor<f64>, tensor<?x?xf64> -> tensor<?x?xf64>
    %s = ag.mul %zp, %zp : tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?x?xf64>
    %zn = ag.gemm %one, %at, %s, %one, %zp {transpose_a} : tensor<f64>, tensor<?x?xf64>, tensor<?x?xf64>, tensor<f64>, tensor<?x?xf64> -> tensor<?x?xf64>
    ag.yield %wn, %vn, %zn : tensor<?x?xf64>, tensor<?x?xf64>, tensor<?x?xf64>
  }
  %tl = ag.subtensor %two[] {kinds = array<i64: 1, 0, 0>, starts = array<i64: -1, -9223372036854775807, -9223372036854775807>, stops = array<i64: -9223372036854775807, -9223372036854775807, -9223372036854775807>, steps = array<i64: -9223372036854775807, -9223372036854775807, -9223372036854775807>} : tensor<?x?x?xf64> -> tensor<?x?xf64>
  %rl = ag.subtensor %read[] {kinds = array<i64: 1, 0, 0>, starts = array<i64: -1, -9223372036854775807, -9223372036854775807>, stops = array<i64: -9223372036854775807, -9223372036854775807, -9223372036854775807>, steps = array<i64: -9223372036854775807, -9223372036854775807, -9223372036854775807>} : tensor<?x?x?xf64> -> tensor<?x?xf64>
  func.return %full, %tl, %rl : tensor<?x?x?xf64>, tensor<?x?xf64>, tensor<?x?xf64>
}

// CHECK-LABEL: func.func @accumulators_that_stay(
// CHECK-NEXT:    ag.scan sequences(%a : tensor<?x?x?xf64>) initials(%w0, %v0, %z0 : {{.*}}) non_sequences() attributes {sequence_taps = [array<i64: 0>], output_taps = [array<i64: -1>, array<i64: -2>, array<i64: -1>]}
// CHECK:           %wn = ag.gemm
// CHECK-NEXT:      %vn = ag.gemm
// CHECK-NEXT:      %s = ag.mul %zp, %zp
// CHECK-NEXT:      %zn = ag.gemm
// CHECK-NEXT:      ag.yield %wn, %vn, %zn
