// Round trip of every `ag` op: custom form, re-parsed custom form, generic form.
// RUN: arignote-opt %s | filecheck %s
// RUN: arignote-opt %s | arignote-opt | filecheck %s
// RUN: arignote-opt %s --print-op-generic | arignote-opt | filecheck %s
// RUN: arignote-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @constants()
// CHECK-NEXT:    %0 = ag.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf64>
// CHECK-NEXT:    %1 = ag.constant dense<3> : tensor<i32>
// CHECK-NEXT:    %2 = ag.constant dense<{{\[\[}}true, false{{\]\]}}> : tensor<1x2xi1>
// CHECK-NEXT:    %3 = ag.constant dense<1.500000e+00> : tensor<2x3xf32>
// CHECK-NEXT:    %4 = ag.constant dense<[-1, 0, 127]> : tensor<3xi8>
// CHECK-NEXT:    %5 = ag.constant dense<7> : tensor<1x1xi64>
// CHECK-NEXT:    %6 = ag.constant dense<true> : tensor<i1>
// GENERIC-LABEL: "func.func"() <{sym_name = "constants"
// GENERIC:       %0 = "ag.constant"() <{value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf64>}> : () -> tensor<2xf64>
// GENERIC:       %1 = "ag.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
func.func @constants() {
  %0 = ag.constant dense<[1.0, 2.0]> : tensor<2xf64>
  %1 = ag.constant dense<3> : tensor<i32>
  %2 = ag.constant dense<[[true, false]]> : tensor<1x2xi1>
  %3 = ag.constant dense<1.5> : tensor<2x3xf32>
  %4 = ag.constant dense<[-1, 0, 127]> : tensor<3xi8>
  %5 = ag.constant dense<7> : tensor<1x1xi64>
  %6 = ag.constant dense<true> : tensor<i1>
  func.return
}

// CHECK-LABEL: func.func @arithmetic(
// CHECK-SAME:      %a: tensor<?x?xf32>, %row: tensor<1x?xf32>, %s: tensor<f32>, %i: tensor<3xi32>, %j: tensor<1xi32>, %d: tensor<2x1xf64>, %e: tensor<1x5xf64>
// CHECK-NEXT:    %0 = ag.add %a, %row : tensor<?x?xf32>, tensor<1x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:    %1 = ag.sub %a, %s : tensor<?x?xf32>, tensor<f32> -> tensor<?x?xf32>
// CHECK-NEXT:    %2 = ag.mul %s, %s : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK-NEXT:    %3 = ag.div %row, %a : tensor<1x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:    %4 = ag.floordiv %i, %j : tensor<3xi32>, tensor<1xi32> -> tensor<3xi32>
// CHECK-NEXT:    %5 = ag.mod %d, %e : tensor<2x1xf64>, tensor<1x5xf64> -> tensor<2x5xf64>
// CHECK-NEXT:    %6 = ag.pow %a, %a : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:    %7 = ag.maximum %i, %i : tensor<3xi32>, tensor<3xi32> -> tensor<3xi32>
// CHECK-NEXT:    %8 = ag.minimum %d, %d {tag = "x"} : tensor<2x1xf64>, tensor<2x1xf64> -> tensor<2x1xf64>
// GENERIC-LABEL: "func.func"() <{sym_name = "arithmetic"
// GENERIC:       %0 = "ag.add"(%a, %row) : (tensor<?x?xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>
// GENERIC:       %8 = "ag.minimum"(%d, %d) {tag = "x"} : (tensor<2x1xf64>, tensor<2x1xf64>) -> tensor<2x1xf64>
func.func @arithmetic(%a: tensor<?x?xf32>, %row: tensor<1x?xf32>, %s: tensor<f32>, %i: tensor<3xi32>, %j: tensor<1xi32>, %d: tensor<2x1xf64>, %e: tensor<1x5xf64>) {
  %0 = ag.add %a, %row : tensor<?x?xf32>, tensor<1x?xf32> -> tensor<?x?xf32>
  %1 = ag.sub %a, %s : tensor<?x?xf32>, tensor<f32> -> tensor<?x?xf32>
  %2 = ag.mul %s, %s : tensor<f32>, tensor<f32> -> tensor<f32>
  %3 = ag.div %row, %a : tensor<1x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %4 = ag.floordiv %i, %j : tensor<3xi32>, tensor<1xi32> -> tensor<3xi32>
  %5 = ag.mod %d, %e : tensor<2x1xf64>, tensor<1x5xf64> -> tensor<2x5xf64>
  %6 = ag.pow %a, %a : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %7 = ag.maximum %i, %i : tensor<3xi32>, tensor<3xi32> -> tensor<3xi32>
  %8 = ag.minimum %d, %d {tag = "x"} : tensor<2x1xf64>, tensor<2x1xf64> -> tensor<2x1xf64>
  func.return
}

// Integer element widths and bool operands of the ops that accept them.
// CHECK-LABEL: func.func @integers_and_bools(
// CHECK-NEXT:    %0 = ag.add %x8, %x8 : tensor<4xi8>, tensor<4xi8> -> tensor<4xi8>
// CHECK-NEXT:    %1 = ag.mul %x16, %x16 : tensor<?xi16>, tensor<?xi16> -> tensor<?xi16>
// CHECK-NEXT:    %2 = ag.sub %x64, %x64 : tensor<i64>, tensor<i64> -> tensor<i64>
// CHECK-NEXT:    %3 = ag.maximum %b, %b : tensor<?xi1>, tensor<?xi1> -> tensor<?xi1>
// CHECK-NEXT:    %4 = ag.minimum %b, %b : tensor<?xi1>, tensor<?xi1> -> tensor<?xi1>
func.func @integers_and_bools(%x8: tensor<4xi8>, %x16: tensor<?xi16>, %x64: tensor<i64>, %b: tensor<?xi1>) {
  %0 = ag.add %x8, %x8 : tensor<4xi8>, tensor<4xi8> -> tensor<4xi8>
  %1 = ag.mul %x16, %x16 : tensor<?xi16>, tensor<?xi16> -> tensor<?xi16>
  %2 = ag.sub %x64, %x64 : tensor<i64>, tensor<i64> -> tensor<i64>
  %3 = ag.maximum %b, %b : tensor<?xi1>, tensor<?xi1> -> tensor<?xi1>
  %4 = ag.minimum %b, %b : tensor<?xi1>, tensor<?xi1> -> tensor<?xi1>
  func.return
}

// CHECK-LABEL: func.func @comparisons(
// CHECK-NEXT:    %0 = ag.lt %a, %row : tensor<?x?xf32>, tensor<1x?xf32> -> tensor<?x?xi1>
// CHECK-NEXT:    %1 = ag.le %i, %i : tensor<3xi32>, tensor<3xi32> -> tensor<3xi1>
// CHECK-NEXT:    %2 = ag.gt %s, %a : tensor<f32>, tensor<?x?xf32> -> tensor<?x?xi1>
// CHECK-NEXT:    %3 = ag.ge %a, %a : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xi1>
// CHECK-NEXT:    %4 = ag.eq %b, %b : tensor<?xi1>, tensor<?xi1> -> tensor<?xi1>
// CHECK-NEXT:    %5 = ag.ne %s, %s : tensor<f32>, tensor<f32> -> tensor<i1>
// GENERIC-LABEL: "func.func"() <{sym_name = "comparisons"
// GENERIC:       %0 = "ag.lt"(%a, %row) : (tensor<?x?xf32>, tensor<1x?xf32>) -> tensor<?x?xi1>
// GENERIC:       %5 = "ag.ne"(%s, %s) : (tensor<f32>, tensor<f32>) -> tensor<i1>
func.func @comparisons(%a: tensor<?x?xf32>, %row: tensor<1x?xf32>, %s: tensor<f32>, %i: tensor<3xi32>, %b: tensor<?xi1>) {
  %0 = ag.lt %a, %row : tensor<?x?xf32>, tensor<1x?xf32> -> tensor<?x?xi1>
  %1 = ag.le %i, %i : tensor<3xi32>, tensor<3xi32> -> tensor<3xi1>
  %2 = ag.gt %s, %a : tensor<f32>, tensor<?x?xf32> -> tensor<?x?xi1>
  %3 = ag.ge %a, %a : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xi1>
  %4 = ag.eq %b, %b : tensor<?xi1>, tensor<?xi1> -> tensor<?xi1>
  %5 = ag.ne %s, %s : tensor<f32>, tensor<f32> -> tensor<i1>
  func.return
}

// CHECK-LABEL: func.func @unary(
// CHECK-NEXT:    %0 = ag.neg %i : tensor<?xi32>
// CHECK-NEXT:    %1 = ag.abs %x : tensor<?x1xf64>
// CHECK-NEXT:    %2 = ag.exp %x : tensor<?x1xf64>
// CHECK-NEXT:    %3 = ag.log %s : tensor<f32>
// CHECK-NEXT:    %4 = ag.tanh %x : tensor<?x1xf64>
// CHECK-NEXT:    %5 = ag.sqrt %s : tensor<f32>
// CHECK-NEXT:    %6 = ag.neg %x : tensor<?x1xf64>
// CHECK-NEXT:    %7 = ag.abs %i : tensor<?xi32>
// GENERIC-LABEL: "func.func"() <{sym_name = "unary"
// GENERIC:       %0 = "ag.neg"(%i) : (tensor<?xi32>) -> tensor<?xi32>
// GENERIC:       %5 = "ag.sqrt"(%s) : (tensor<f32>) -> tensor<f32>
func.func @unary(%x: tensor<?x1xf64>, %s: tensor<f32>, %i: tensor<?xi32>) {
  %0 = ag.neg %i : tensor<?xi32>
  %1 = ag.abs %x : tensor<?x1xf64>
  %2 = ag.exp %x : tensor<?x1xf64>
  %3 = ag.log %s : tensor<f32>
  %4 = ag.tanh %x : tensor<?x1xf64>
  %5 = ag.sqrt %s : tensor<f32>
  %6 = ag.neg %x : tensor<?x1xf64>
  %7 = ag.abs %i : tensor<?xi32>
  func.return
}

// CHECK-LABEL: func.func @select_and_cast(
// CHECK-NEXT:    %0 = ag.select %c, %a, %s : tensor<?xi1>, tensor<?xf32>, tensor<f32> -> tensor<?xf32>
// CHECK-NEXT:    %1 = ag.select %c0, %s, %s : tensor<i1>, tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK-NEXT:    %2 = ag.select %c, %m, %m : tensor<?xi1>, tensor<2x1xi32>, tensor<2x1xi32> -> tensor<2x?xi32>
// CHECK-NEXT:    %3 = ag.cast %a : tensor<?xf32> to tensor<?xf64>
// CHECK-NEXT:    %4 = ag.cast %m : tensor<2x1xi32> to tensor<2x1xi1>
// CHECK-NEXT:    %5 = ag.cast %c0 : tensor<i1> to tensor<i8>
// CHECK-NEXT:    %6 = ag.cast %a : tensor<?xf32> to tensor<?xf32>
// GENERIC-LABEL: "func.func"() <{sym_name = "select_and_cast"
// GENERIC:       %0 = "ag.select"(%c, %a, %s) : (tensor<?xi1>, tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
// GENERIC:       %3 = "ag.cast"(%a) : (tensor<?xf32>) -> tensor<?xf64>
func.func @select_and_cast(%c: tensor<?xi1>, %c0: tensor<i1>, %a: tensor<?xf32>, %s: tensor<f32>, %m: tensor<2x1xi32>) {
  %0 = ag.select %c, %a, %s : tensor<?xi1>, tensor<?xf32>, tensor<f32> -> tensor<?xf32>
  %1 = ag.select %c0, %s, %s : tensor<i1>, tensor<f32>, tensor<f32> -> tensor<f32>
  %2 = ag.select %c, %m, %m : tensor<?xi1>, tensor<2x1xi32>, tensor<2x1xi32> -> tensor<2x?xi32>
  %3 = ag.cast %a : tensor<?xf32> to tensor<?xf64>
  %4 = ag.cast %m : tensor<2x1xi32> to tensor<2x1xi1>
  %5 = ag.cast %c0 : tensor<i1> to tensor<i8>
  %6 = ag.cast %a : tensor<?xf32> to tensor<?xf32>
  func.return
}

// CHECK-LABEL: func.func @dimshuffle(
// CHECK-NEXT:    %0 = ag.dimshuffle %x {pattern = array<i64: 1, -1, 0>} : tensor<?x3xf32> -> tensor<3x1x?xf32>
// CHECK-NEXT:    %1 = ag.dimshuffle %x {pattern = array<i64: 1, 0>} : tensor<?x3xf32> -> tensor<3x?xf32>
// CHECK-NEXT:    %2 = ag.dimshuffle %r {pattern = array<i64: 1>} : tensor<1x?xf64> -> tensor<?xf64>
// CHECK-NEXT:    %3 = ag.dimshuffle %s {pattern = array<i64: -1, -1>} : tensor<i1> -> tensor<1x1xi1>
// CHECK-NEXT:    %4 = ag.dimshuffle %one {pattern = array<i64>} : tensor<1x1xi32> -> tensor<i32>
// CHECK-NEXT:    %5 = ag.dimshuffle %x {pattern = array<i64: 0, 1>} : tensor<?x3xf32> -> tensor<?x3xf32>
// GENERIC-LABEL: "func.func"() <{sym_name = "dimshuffle"
// GENERIC:       %0 = "ag.dimshuffle"(%x) <{pattern = array<i64: 1, -1, 0>}> : (tensor<?x3xf32>) -> tensor<3x1x?xf32>
func.func @dimshuffle(%x: tensor<?x3xf32>, %r: tensor<1x?xf64>, %s: tensor<i1>, %one: tensor<1x1xi32>) {
  %0 = ag.dimshuffle %x {pattern = array<i64: 1, -1, 0>} : tensor<?x3xf32> -> tensor<3x1x?xf32>
  %1 = ag.dimshuffle %x {pattern = array<i64: 1, 0>} : tensor<?x3xf32> -> tensor<3x?xf32>
  %2 = ag.dimshuffle %r {pattern = array<i64: 1>} : tensor<1x?xf64> -> tensor<?xf64>
  %3 = ag.dimshuffle %s {pattern = array<i64: -1, -1>} : tensor<i1> -> tensor<1x1xi1>
  %4 = ag.dimshuffle %one {pattern = array<i64>} : tensor<1x1xi32> -> tensor<i32>
  %5 = ag.dimshuffle %x {pattern = array<i64: 0, 1>} : tensor<?x3xf32> -> tensor<?x3xf32>
  func.return
}

// CHECK-LABEL: func.func @reductions(
// CHECK-NEXT:    %0 = ag.reduce_sum %x {axes = array<i64: 1>} : tensor<?x?xf64> -> tensor<?xf64>
// CHECK-NEXT:    %1 = ag.reduce_sum %x {axes = array<i64: 0, 1>} : tensor<?x?xf64> -> tensor<f64>
// CHECK-NEXT:    %2 = ag.reduce_prod %i {axes = array<i64: 0>} : tensor<1x4xi32> -> tensor<4xi32>
// CHECK-NEXT:    %3 = ag.reduce_max %b {axes = array<i64: 0>} : tensor<?xi1> -> tensor<i1>
// CHECK-NEXT:    %4 = ag.reduce_min %x {axes = array<i64: 0>} : tensor<?x?xf64> -> tensor<?xf64>
// CHECK-NEXT:    %5 = ag.reduce_sum %x {axes = array<i64>} : tensor<?x?xf64> -> tensor<?x?xf64>
// CHECK-NEXT:    %6 = ag.reduce_max %i {axes = array<i64: 1>} : tensor<1x4xi32> -> tensor<1xi32>
// GENERIC-LABEL: "func.func"() <{sym_name = "reductions"
// GENERIC:       %0 = "ag.reduce_sum"(%x) <{axes = array<i64: 1>}> : (tensor<?x?xf64>) -> tensor<?xf64>
// GENERIC:       %3 = "ag.reduce_max"(%b) <{axes = array<i64: 0>}> : (tensor<?xi1>) -> tensor<i1>
func.func @reductions(%x: tensor<?x?xf64>, %i: tensor<1x4xi32>, %b: tensor<?xi1>) {
  %0 = ag.reduce_sum %x {axes = array<i64: 1>} : tensor<?x?xf64> -> tensor<?xf64>
  %1 = ag.reduce_sum %x {axes = array<i64: 0, 1>} : tensor<?x?xf64> -> tensor<f64>
  %2 = ag.reduce_prod %i {axes = array<i64: 0>} : tensor<1x4xi32> -> tensor<4xi32>
  %3 = ag.reduce_max %b {axes = array<i64: 0>} : tensor<?xi1> -> tensor<i1>
  %4 = ag.reduce_min %x {axes = array<i64: 0>} : tensor<?x?xf64> -> tensor<?xf64>
  %5 = ag.reduce_sum %x {axes = array<i64>} : tensor<?x?xf64> -> tensor<?x?xf64>
  %6 = ag.reduce_max %i {axes = array<i64: 1>} : tensor<1x4xi32> -> tensor<1xi32>
  func.return
}

// CHECK-LABEL: func.func @dot(
// CHECK-NEXT:    %0 = ag.dot %v, %v : tensor<?xf32>, tensor<?xf32> -> tensor<f32>
// CHECK-NEXT:    %1 = ag.dot %m, %v : tensor<?x?xf32>, tensor<?xf32> -> tensor<?xf32>
// CHECK-NEXT:    %2 = ag.dot %v, %m : tensor<?xf32>, tensor<?x?xf32> -> tensor<?xf32>
// CHECK-NEXT:    %3 = ag.dot %m, %m : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:    %4 = ag.dot %a, %b : tensor<2x3xi64>, tensor<3x1xi64> -> tensor<2x1xi64>
// CHECK-NEXT:    %5 = ag.dot %a, %c : tensor<2x3xi64>, tensor<?xi64> -> tensor<2xi64>
// GENERIC-LABEL: "func.func"() <{sym_name = "dot"
// GENERIC:       %0 = "ag.dot"(%v, %v) : (tensor<?xf32>, tensor<?xf32>) -> tensor<f32>
func.func @dot(%v: tensor<?xf32>, %m: tensor<?x?xf32>, %a: tensor<2x3xi64>, %b: tensor<3x1xi64>, %c: tensor<?xi64>) {
  %0 = ag.dot %v, %v : tensor<?xf32>, tensor<?xf32> -> tensor<f32>
  %1 = ag.dot %m, %v : tensor<?x?xf32>, tensor<?xf32> -> tensor<?xf32>
  %2 = ag.dot %v, %m : tensor<?xf32>, tensor<?x?xf32> -> tensor<?xf32>
  %3 = ag.dot %m, %m : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %4 = ag.dot %a, %b : tensor<2x3xi64>, tensor<3x1xi64> -> tensor<2x1xi64>
  %5 = ag.dot %a, %c : tensor<2x3xi64>, tensor<?xi64> -> tensor<2xi64>
  func.return
}

// Results feed other ops and the function's return.
// CHECK-LABEL: func.func @graph(
// CHECK-NEXT:    %one = ag.constant dense<1.000000e+00> : tensor<f64>
// CHECK-NEXT:    %y = ag.add %x, %one : tensor<?x?xf64>, tensor<f64> -> tensor<?x?xf64>
// CHECK-NEXT:    %t = ag.tanh %y : tensor<?x?xf64>
// CHECK-NEXT:    %s = ag.reduce_sum %t {axes = array<i64: 0>} : tensor<?x?xf64> -> tensor<?xf64>
// CHECK-NEXT:    func.return %s : tensor<?xf64>
func.func @graph(%x: tensor<?x?xf64>) -> tensor<?xf64> {
  %one = ag.constant dense<1.0> : tensor<f64>
  %y = ag.add %x, %one : tensor<?x?xf64>, tensor<f64> -> tensor<?x?xf64>
  %t = ag.tanh %y : tensor<?x?xf64>
  %s = ag.reduce_sum %t {axes = array<i64: 0>} : tensor<?x?xf64> -> tensor<?xf64>
  func.return %s : tensor<?xf64>
}

// --- indexing, reshaping, joining and allocation ---------------------------------------
// Entries equal to -9223372036854775808 (DYNAMIC_VALUE) come from the bracketed 0-d i64
// operands; -9223372036854775807 (SLICE_NONE) is an absent slice part.

// CHECK-LABEL: func.func @indexing(
// CHECK-NEXT:    %0 = ag.subtensor %x[%i] {kinds = array<i64: 1, 0>, starts = array<i64: -9223372036854775808, 1>, stops = array<i64: -9223372036854775807, -9223372036854775807>, steps = array<i64: -9223372036854775807, 2>} : tensor<?x?xf32>, tensor<i64> -> tensor<?xf32>
// CHECK-NEXT:    %1 = ag.subtensor %c[] {kinds = array<i64: 0>, starts = array<i64: -1>, stops = array<i64: -9223372036854775807>, steps = array<i64: -1>} : tensor<5xi32> -> tensor<5xi32>
// CHECK-NEXT:    %2 = ag.set_subtensor %x[%i], %s {kinds = array<i64: 1, 0>, starts = array<i64: -9223372036854775808, -9223372036854775807>, stops = array<i64: -9223372036854775807, -9223372036854775807>, steps = array<i64: -9223372036854775807, -9223372036854775807>} : tensor<?x?xf32>, tensor<f32>, tensor<i64> -> tensor<?x?xf32>
// CHECK-NEXT:    %3 = ag.inc_subtensor %x[], %r {kinds = array<i64: 0, 0>, starts = array<i64: 1, -9223372036854775807>, stops = array<i64: 3, -9223372036854775807>, steps = array<i64: -9223372036854775807, -9223372036854775807>} : tensor<?x?xf32>, tensor<1x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:    %4 = ag.advanced_subtensor %x[%iv] : tensor<?x?xf32>, tensor<?xi32> -> tensor<?x?xf32>
// CHECK-NEXT:    %5 = ag.advanced_subtensor %x[%iv, %iv] : tensor<?x?xf32>, tensor<?xi32>, tensor<?xi32> -> tensor<?xf32>
// CHECK-NEXT:    %6 = ag.advanced_set_subtensor %x[%iv], %s : tensor<?x?xf32>, tensor<f32>, tensor<?xi32> -> tensor<?x?xf32>
// CHECK-NEXT:    %7 = ag.advanced_inc_subtensor %x[%iv, %iv], %s : tensor<?x?xf32>, tensor<f32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x?xf32>
// CHECK-NEXT:    %8 = ag.reshape %x[%i] {shape = array<i64: -9223372036854775808, -1>} : tensor<?x?xf32>, tensor<i64> -> tensor<?x?xf32>
// CHECK-NEXT:    %9 = ag.reshape %c[] {shape = array<i64: 1, 5>} : tensor<5xi32> -> tensor<1x5xi32>
// CHECK-NEXT:    %10 = ag.concatenate %x, %r {axis = 0 : i64} : tensor<?x?xf32>, tensor<1x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:    %11 = ag.alloc %s[%i] {shape = array<i64: -9223372036854775808, 3>} : tensor<f32>, tensor<i64> -> tensor<?x3xf32>
// CHECK-NEXT:    %12 = ag.arange %i, %i, %i : tensor<i64> -> tensor<?xi64>
// GENERIC-LABEL: "func.func"() <{sym_name = "indexing"
// GENERIC:       %0 = "ag.subtensor"(%x, %i) <{kinds = array<i64: 1, 0>, starts = array<i64: -9223372036854775808, 1>, stops = array<i64: -9223372036854775807, -9223372036854775807>, steps = array<i64: -9223372036854775807, 2>}> : (tensor<?x?xf32>, tensor<i64>) -> tensor<?xf32>
// GENERIC:       %10 = "ag.concatenate"(%x, %r) <{axis = 0 : i64}> : (tensor<?x?xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>
func.func @indexing(%x: tensor<?x?xf32>, %r: tensor<1x?xf32>, %s: tensor<f32>, %c: tensor<5xi32>, %i: tensor<i64>, %iv: tensor<?xi32>) {
  %0 = ag.subtensor %x[%i] {kinds = array<i64: 1, 0>, starts = array<i64: -9223372036854775808, 1>, stops = array<i64: -9223372036854775807, -9223372036854775807>, steps = array<i64: -9223372036854775807, 2>} : tensor<?x?xf32>, tensor<i64> -> tensor<?xf32>
  %1 = ag.subtensor %c[] {kinds = array<i64: 0>, starts = array<i64: -1>, stops = array<i64: -9223372036854775807>, steps = array<i64: -1>} : tensor<5xi32> -> tensor<5xi32>
  %2 = ag.set_subtensor %x[%i], %s {kinds = array<i64: 1, 0>, starts = array<i64: -9223372036854775808, -9223372036854775807>, stops = array<i64: -9223372036854775807, -9223372036854775807>, steps = array<i64: -9223372036854775807, -9223372036854775807>} : tensor<?x?xf32>, tensor<f32>, tensor<i64> -> tensor<?x?xf32>
  %3 = ag.inc_subtensor %x[], %r {kinds = array<i64: 0, 0>, starts = array<i64: 1, -9223372036854775807>, stops = array<i64: 3, -9223372036854775807>, steps = array<i64: -9223372036854775807, -9223372036854775807>} : tensor<?x?xf32>, tensor<1x?xf32> -> tensor<?x?xf32>
  %4 = ag.advanced_subtensor %x[%iv] : tensor<?x?xf32>, tensor<?xi32> -> tensor<?x?xf32>
  %5 = ag.advanced_subtensor %x[%iv, %iv] : tensor<?x?xf32>, tensor<?xi32>, tensor<?xi32> -> tensor<?xf32>
  %6 = ag.advanced_set_subtensor %x[%iv], %s : tensor<?x?xf32>, tensor<f32>, tensor<?xi32> -> tensor<?x?xf32>
  %7 = ag.advanced_inc_subtensor %x[%iv, %iv], %s : tensor<?x?xf32>, tensor<f32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x?xf32>
  %8 = ag.reshape %x[%i] {shape = array<i64: -9223372036854775808, -1>} : tensor<?x?xf32>, tensor<i64> -> tensor<?x?xf32>
  %9 = ag.reshape %c[] {shape = array<i64: 1, 5>} : tensor<5xi32> -> tensor<1x5xi32>
  %10 = ag.concatenate %x, %r {axis = 0 : i64} : tensor<?x?xf32>, tensor<1x?xf32> -> tensor<?x?xf32>
  %11 = ag.alloc %s[%i] {shape = array<i64: -9223372036854775808, 3>} : tensor<f32>, tensor<i64> -> tensor<?x3xf32>
  %12 = ag.arange %i, %i, %i : tensor<i64> -> tensor<?xi64>
  func.return
}

// Op library A: more unary math, argmax/argmin, dim.
// CHECK-LABEL: func.func @library_a(
// CHECK-NEXT:    %0 = ag.log1p %x : tensor<?x?xf32>
// CHECK-NEXT:    %1 = ag.expm1 %s : tensor<f64>
// CHECK-NEXT:    %2 = ag.floor %x : tensor<?x?xf32>
// CHECK-NEXT:    %3 = ag.ceil %x : tensor<?x?xf32>
// CHECK-NEXT:    %4 = ag.round %s : tensor<f64>
// CHECK-NEXT:    %5 = ag.roundeven %x : tensor<?x?xf32>
// CHECK-NEXT:    %6 = ag.sigmoid %x : tensor<?x?xf32>
// CHECK-NEXT:    %7 = ag.softplus %s : tensor<f64>
// CHECK-NEXT:    %8 = ag.argmax %x {axes = array<i64: 1>} : tensor<?x?xf32> -> tensor<?xi64>
// CHECK-NEXT:    %9 = ag.argmin %b {axes = array<i64: 0, 1>} : tensor<?x3xi1> -> tensor<i64>
// CHECK-NEXT:    %10 = ag.argmax %i {axes = array<i64: 0>} : tensor<2x1xi32> -> tensor<1xi64>
// CHECK-NEXT:    %11 = ag.dim %x {axis = 1 : i64} : tensor<?x?xf32> -> tensor<i64>
// CHECK-NEXT:    %12 = ag.dim %b {axis = 1 : i64} : tensor<?x3xi1> -> tensor<i64>
// GENERIC-LABEL: "func.func"() <{sym_name = "library_a"
// GENERIC:       %0 = "ag.log1p"(%x) : (tensor<?x?xf32>) -> tensor<?x?xf32>
// GENERIC:       %8 = "ag.argmax"(%x) <{axes = array<i64: 1>}> : (tensor<?x?xf32>) -> tensor<?xi64>
// GENERIC:       %11 = "ag.dim"(%x) <{axis = 1 : i64}> : (tensor<?x?xf32>) -> tensor<i64>
func.func @library_a(%x: tensor<?x?xf32>, %s: tensor<f64>, %b: tensor<?x3xi1>, %i: tensor<2x1xi32>) {
  %0 = ag.log1p %x : tensor<?x?xf32>
  %1 = ag.expm1 %s : tensor<f64>
  %2 = ag.floor %x : tensor<?x?xf32>
  %3 = ag.ceil %x : tensor<?x?xf32>
  %4 = ag.round %s : tensor<f64>
  %5 = ag.roundeven %x : tensor<?x?xf32>
  %6 = ag.sigmoid %x : tensor<?x?xf32>
  %7 = ag.softplus %s : tensor<f64>
  %8 = ag.argmax %x {axes = array<i64: 1>} : tensor<?x?xf32> -> tensor<?xi64>
  %9 = ag.argmin %b {axes = array<i64: 0, 1>} : tensor<?x3xi1> -> tensor<i64>
  %10 = ag.argmax %i {axes = array<i64: 0>} : tensor<2x1xi32> -> tensor<1xi64>
  %11 = ag.dim %x {axis = 1 : i64} : tensor<?x?xf32> -> tensor<i64>
  %12 = ag.dim %b {axis = 1 : i64} : tensor<?x3xi1> -> tensor<i64>
  func.return
}

// CHECK-LABEL: func.func @gemv_gemm(
// CHECK-NEXT:    %0 = ag.gemv %s, %m, %v : tensor<f32>, tensor<?x?xf32>, tensor<?xf32> -> tensor<?xf32>
// CHECK-NEXT:    %1 = ag.gemv %s, %m, %v, %s, %v {transpose_a} : tensor<f32>, tensor<?x?xf32>, tensor<?xf32>, tensor<f32>, tensor<?xf32> -> tensor<?xf32>
// CHECK-NEXT:    %2 = ag.gemm %d, %a, %b : tensor<f64>, tensor<2x3xf64>, tensor<3x?xf64> -> tensor<2x?xf64>
// CHECK-NEXT:    %3 = ag.gemm %d, %a, %a, %d, %c {transpose_a} : tensor<f64>, tensor<2x3xf64>, tensor<2x3xf64>, tensor<f64>, tensor<3x?xf64> -> tensor<3x3xf64>
// CHECK-NEXT:    %4 = ag.gemm %d, %b, %a {transpose_a, transpose_b} : tensor<f64>, tensor<3x?xf64>, tensor<2x3xf64> -> tensor<?x2xf64>
// GENERIC-LABEL: "func.func"() <{sym_name = "gemv_gemm"
// GENERIC:       %0 = "ag.gemv"(%s, %m, %v) : (tensor<f32>, tensor<?x?xf32>, tensor<?xf32>) -> tensor<?xf32>
// GENERIC:       %1 = "ag.gemv"(%s, %m, %v, %s, %v) <{transpose_a}> : (tensor<f32>, tensor<?x?xf32>, tensor<?xf32>, tensor<f32>, tensor<?xf32>) -> tensor<?xf32>
func.func @gemv_gemm(%s: tensor<f32>, %m: tensor<?x?xf32>, %v: tensor<?xf32>, %d: tensor<f64>, %a: tensor<2x3xf64>, %b: tensor<3x?xf64>, %c: tensor<3x?xf64>) {
  %0 = ag.gemv %s, %m, %v : tensor<f32>, tensor<?x?xf32>, tensor<?xf32> -> tensor<?xf32>
  %1 = ag.gemv %s, %m, %v, %s, %v {transpose_a} : tensor<f32>, tensor<?x?xf32>, tensor<?xf32>, tensor<f32>, tensor<?xf32> -> tensor<?xf32>
  %2 = ag.gemm %d, %a, %b : tensor<f64>, tensor<2x3xf64>, tensor<3x?xf64> -> tensor<2x?xf64>
  %3 = ag.gemm %d, %a, %a, %d, %c {transpose_a} : tensor<f64>, tensor<2x3xf64>, tensor<2x3xf64>, tensor<f64>, tensor<3x?xf64> -> tensor<3x3xf64>
  %4 = ag.gemm %d, %b, %a {transpose_a, transpose_b} : tensor<f64>, tensor<3x?xf64>, tensor<2x3xf64> -> tensor<?x2xf64>
  func.return
}

// CHECK-LABEL: func.func @if_else(
// CHECK-NEXT:    %0 = ag.if %c : tensor<i1> -> (tensor<f64>) {
// CHECK-NEXT:      %1 = ag.reduce_sum %x {axes = array<i64: 0, 1>} : tensor<?x?xf64> -> tensor<f64>
// CHECK-NEXT:      ag.yield %1 : tensor<f64>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      ag.yield %s : tensor<f64>
// CHECK-NEXT:    }
// CHECK-NEXT:    %2, %3 = ag.if %n : tensor<i32> -> (tensor<?x?xf64>, tensor<f64>) {
// CHECK-NEXT:      %4 = ag.if %c : tensor<i1> -> (tensor<?x?xf64>) {
// CHECK-NEXT:        ag.yield %x : tensor<?x?xf64>
// CHECK-NEXT:      } else {
// CHECK-NEXT:        %5 = ag.neg %x : tensor<?x?xf64>
// CHECK-NEXT:        ag.yield %5 : tensor<?x?xf64>
// CHECK-NEXT:      }
// CHECK-NEXT:      ag.yield %4, %s : tensor<?x?xf64>, tensor<f64>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      ag.yield %x, %0 : tensor<?x?xf64>, tensor<f64>
// CHECK-NEXT:    } {ag.node = "IfElse"}
// CHECK-NEXT:    %6 = ag.if %c : tensor<i1> -> (tensor<?xf64>) {
// CHECK-NEXT:      ag.yield %v : tensor<3xf64>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      ag.yield %w : tensor<?xf64>
// CHECK-NEXT:    }
// GENERIC-LABEL: "func.func"() <{sym_name = "if_else"
// GENERIC:       %0 = "ag.if"(%c) ({
// GENERIC:         "ag.yield"(%1) : (tensor<f64>) -> ()
// GENERIC-NEXT:  }, {
// GENERIC-NEXT:    "ag.yield"(%s) : (tensor<f64>) -> ()
// GENERIC-NEXT:  }) : (tensor<i1>) -> tensor<f64>
func.func @if_else(%c: tensor<i1>, %n: tensor<i32>, %x: tensor<?x?xf64>, %s: tensor<f64>, %v: tensor<3xf64>, %w: tensor<?xf64>) {
  %0 = ag.if %c : tensor<i1> -> (tensor<f64>) {
    %1 = ag.reduce_sum %x {axes = array<i64: 0, 1>} : tensor<?x?xf64> -> tensor<f64>
    ag.yield %1 : tensor<f64>
  } else {
    ag.yield %s : tensor<f64>
  }
  %2, %3 = ag.if %n : tensor<i32> -> (tensor<?x?xf64>, tensor<f64>) {
    %4 = ag.if %c : tensor<i1> -> (tensor<?x?xf64>) {
      ag.yield %x : tensor<?x?xf64>
    } else {
      %5 = ag.neg %x : tensor<?x?xf64>
      ag.yield %5 : tensor<?x?xf64>
    }
    ag.yield %4, %s : tensor<?x?xf64>, tensor<f64>
  } else {
    ag.yield %x, %0 : tensor<?x?xf64>, tensor<f64>
  } {ag.node = "IfElse"}
  %6 = ag.if %c : tensor<i1> -> (tensor<?xf64>) {
    ag.yield %v : tensor<3xf64>
  } else {
    ag.yield %w : tensor<?xf64>
  }
  func.return
}

// Unsigned and complex element types (issue 13 item 2, dtypes).
// CHECK-LABEL: func.func @unsigned_and_complex(
// CHECK-NEXT:    %0 = ag.floordiv %u, %u : tensor<?xui8>, tensor<?xui8> -> tensor<?xui8>
// CHECK-NEXT:    %1 = ag.cast %u : tensor<?xui8> to tensor<?xi8>
// CHECK-NEXT:    %2 = ag.real %z : tensor<?xcomplex<f64>> -> tensor<?xf64>
// CHECK-NEXT:    %3 = ag.imag %c : tensor<2xcomplex<f32>> -> tensor<2xf32>
// CHECK-NEXT:    %4 = ag.complex %2, %x : tensor<?xf64>, tensor<f64> -> tensor<?xcomplex<f64>>
// CHECK-NEXT:    %5 = ag.mul %4, %z : tensor<?xcomplex<f64>>, tensor<?xcomplex<f64>> -> tensor<?xcomplex<f64>>
// CHECK-NEXT:    %6 = ag.constant dense<(1.000000e+00,2.000000e+00)> : tensor<complex<f64>>
// CHECK-NEXT:    %7 = ag.reduce_sum %z {axes = array<i64: 0>} : tensor<?xcomplex<f64>> -> tensor<complex<f64>>
// GENERIC-LABEL: "func.func"() <{sym_name = "unsigned_and_complex"
// GENERIC:       %4 = "ag.complex"(%2, %x) : (tensor<?xf64>, tensor<f64>) -> tensor<?xcomplex<f64>>
func.func @unsigned_and_complex(%u: tensor<?xui8>, %z: tensor<?xcomplex<f64>>, %c: tensor<2xcomplex<f32>>, %x: tensor<f64>) {
  %0 = ag.floordiv %u, %u : tensor<?xui8>, tensor<?xui8> -> tensor<?xui8>
  %1 = ag.cast %u : tensor<?xui8> to tensor<?xi8>
  %2 = ag.real %z : tensor<?xcomplex<f64>> -> tensor<?xf64>
  %3 = ag.imag %c : tensor<2xcomplex<f32>> -> tensor<2xf32>
  %4 = ag.complex %2, %x : tensor<?xf64>, tensor<f64> -> tensor<?xcomplex<f64>>
  %5 = ag.mul %4, %z : tensor<?xcomplex<f64>>, tensor<?xcomplex<f64>> -> tensor<?xcomplex<f64>>
  %6 = ag.constant dense<(1.0, 2.0)> : tensor<complex<f64>>
  %7 = ag.reduce_sum %z {axes = array<i64: 0>} : tensor<?xcomplex<f64>> -> tensor<complex<f64>>
  func.return
}
