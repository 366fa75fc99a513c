// Verifier failures of every `ag` op, one per chunk; each checked against its expected-error comment (--verify-diagnostics fails on a mismatch).
// A dense literal of dynamic shape is already a parse error, checked the same way.
// RUN: arignote-opt %s --split-input-file --verify-diagnostics

// --- ag.constant -------------------------------------------------------------------

func.func @constant_dynamic_shape() {
  %0 = "ag.constant"() <{value = dense<1.0> : tensor<?xf32>}> : () -> tensor<?xf32>  // expected-error {{Dense literal attribute should have a static shape}}
  func.return
}

// -----

func.func @constant_dynamic_result() {
  %0 = "ag.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<?xf32>  // expected-error {{attribute tensor<?xf32> expected from variable 'T', but got tensor<2xf32>}}
  func.return
}

// -----

func.func @constant_type_mismatch() {
  %0 = "ag.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<3xf32>  // expected-error {{attribute tensor<3xf32> expected from variable 'T', but got tensor<2xf32>}}
  func.return
}

// -----

func.func @constant_f16() {
  %0 = ag.constant dense<1.0> : tensor<2xf16>  // expected-error {{'ag.constant' op result must have a supported element type (f32, f64, i1, i8..i64, ui8..ui64, complex<f32>, complex<f64>), got tensor<2xf16>}}
  func.return
}

// -----

// --- binary elementwise ------------------------------------------------------------

func.func @add_bool(%a: tensor<?xi1>) {
  %0 = ag.add %a, %a : tensor<?xi1>, tensor<?xi1> -> tensor<?xi1>  // expected-error {{'ag.add' op lhs must have a numeric element type (f32, f64, i8..i64, ui8..ui64, complex<f32>, complex<f64>), got tensor<?xi1>}}
  func.return
}

// -----

func.func @add_element_types(%a: tensor<?xf32>, %b: tensor<?xf64>) {
  %0 = ag.add %a, %b : tensor<?xf32>, tensor<?xf64> -> tensor<?xf32>  // expected-error {{'ag.add' op operands must have one element type, got tensor<?xf32> and tensor<?xf64>}}
  func.return
}

// -----

func.func @add_not_broadcastable(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  %0 = ag.add %a, %b : tensor<2x3xf32>, tensor<4xf32> -> tensor<2x3xf32>  // expected-error {{'ag.add' op operand types tensor<2x3xf32> and tensor<4xf32> are not broadcast-compatible}}
  func.return
}

// -----

func.func @add_result_type(%a: tensor<?xf32>, %b: tensor<1xf32>) {
  %0 = ag.add %a, %b : tensor<?xf32>, tensor<1xf32> -> tensor<1xf32>  // expected-error {{'ag.add' op result type tensor<1xf32> does not match the inferred type tensor<?xf32>}}
  func.return
}

// -----

func.func @add_not_tensor(%a: memref<?xf32>) {
  %0 = "ag.add"(%a, %a) : (memref<?xf32>, memref<?xf32>) -> memref<?xf32>  // expected-error {{memref<?xf32> should be of base attribute tensor}}
  func.return
}

// -----

func.func @sub_bool(%a: tensor<i1>) {
  %0 = ag.sub %a, %a : tensor<i1>, tensor<i1> -> tensor<i1>  // expected-error {{'ag.sub' op lhs must have a numeric element type (f32, f64, i8..i64, ui8..ui64, complex<f32>, complex<f64>), got tensor<i1>}}
  func.return
}

// -----

func.func @mul_result_element(%a: tensor<3xi32>) {
  %0 = ag.mul %a, %a : tensor<3xi32>, tensor<3xi32> -> tensor<3xi64>  // expected-error {{'ag.mul' op result type tensor<3xi64> does not match the inferred type tensor<3xi32>}}
  func.return
}

// -----

func.func @div_int(%a: tensor<3xi32>) {
  %0 = ag.div %a, %a : tensor<3xi32>, tensor<3xi32> -> tensor<3xi32>  // expected-error {{'ag.div' op lhs must have a float or complex element type (f32, f64, complex<f32>, complex<f64>), got tensor<3xi32>}}
  func.return
}

// -----

func.func @floordiv_not_broadcastable(%a: tensor<2xi64>, %b: tensor<3xi64>) {
  %0 = ag.floordiv %a, %b : tensor<2xi64>, tensor<3xi64> -> tensor<3xi64>  // expected-error {{'ag.floordiv' op operand types tensor<2xi64> and tensor<3xi64> are not broadcast-compatible}}
  func.return
}

// -----

func.func @mod_element_types(%a: tensor<?xi32>, %b: tensor<?xi64>) {
  %0 = ag.mod %a, %b : tensor<?xi32>, tensor<?xi64> -> tensor<?xi64>  // expected-error {{'ag.mod' op operands must have one element type, got tensor<?xi32> and tensor<?xi64>}}
  func.return
}

// -----

func.func @pow_result_rank(%a: tensor<?xf64>, %b: tensor<?x1xf64>) {
  %0 = ag.pow %a, %b : tensor<?xf64>, tensor<?x1xf64> -> tensor<?xf64>  // expected-error {{'ag.pow' op result type tensor<?xf64> does not match the inferred type tensor<?x?xf64>}}
  func.return
}

// -----

func.func @maximum_f16(%a: tensor<?xf16>) {
  %0 = ag.maximum %a, %a : tensor<?xf16>, tensor<?xf16> -> tensor<?xf16>  // expected-error {{'ag.maximum' op lhs must have a non-complex element type (f32, f64, i1, i8..i64, ui8..ui64), got tensor<?xf16>}}
  func.return
}

// -----

func.func @minimum_element_types(%a: tensor<?xi1>, %b: tensor<?xi8>) {
  %0 = ag.minimum %a, %b : tensor<?xi1>, tensor<?xi8> -> tensor<?xi8>  // expected-error {{'ag.minimum' op operands must have one element type, got tensor<?xi1> and tensor<?xi8>}}
  func.return
}

// -----

// --- comparisons -------------------------------------------------------------------

func.func @lt_result_not_bool(%a: tensor<?xf32>) {
  %0 = ag.lt %a, %a : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>  // expected-error {{'ag.lt' op result type tensor<?xf32> does not match the inferred type tensor<?xi1>}}
  func.return
}

// -----

func.func @le_not_broadcastable(%a: tensor<2xf32>, %b: tensor<5xf32>) {
  %0 = ag.le %a, %b : tensor<2xf32>, tensor<5xf32> -> tensor<5xi1>  // expected-error {{'ag.le' op operand types tensor<2xf32> and tensor<5xf32> are not broadcast-compatible}}
  func.return
}

// -----

func.func @gt_element_types(%a: tensor<f32>, %b: tensor<i32>) {
  %0 = ag.gt %a, %b : tensor<f32>, tensor<i32> -> tensor<i1>  // expected-error {{'ag.gt' op operands must have one element type, got tensor<f32> and tensor<i32>}}
  func.return
}

// -----

func.func @ge_result_shape(%a: tensor<?x?xi8>, %b: tensor<i8>) {
  %0 = ag.ge %a, %b : tensor<?x?xi8>, tensor<i8> -> tensor<i1>  // expected-error {{'ag.ge' op result type tensor<i1> does not match the inferred type tensor<?x?xi1>}}
  func.return
}

// -----

func.func @eq_unsupported(%a: tensor<?xi128>) {
  %0 = ag.eq %a, %a : tensor<?xi128>, tensor<?xi128> -> tensor<?xi1>  // expected-error {{'ag.eq' op lhs must have a supported element type (f32, f64, i1, i8..i64, ui8..ui64, complex<f32>, complex<f64>), got tensor<?xi128>}}
  func.return
}

// -----

func.func @ne_result_static(%a: tensor<?xf64>) {
  %0 = ag.ne %a, %a : tensor<?xf64>, tensor<?xf64> -> tensor<4xi1>  // expected-error {{'ag.ne' op result type tensor<4xi1> does not match the inferred type tensor<?xi1>}}
  func.return
}

// -----

// --- unary elementwise -------------------------------------------------------------

func.func @neg_bool(%a: tensor<?xi1>) {
  %0 = ag.neg %a : tensor<?xi1>  // expected-error {{'ag.neg' op operand must have a numeric element type (f32, f64, i8..i64, ui8..ui64, complex<f32>, complex<f64>), got tensor<?xi1>}}
  func.return
}

// -----

func.func @abs_bool(%a: tensor<i1>) {
  %0 = ag.abs %a : tensor<i1>  // expected-error {{'ag.abs' op operand must have a real numeric element type (f32, f64, i8..i64, ui8..ui64), got tensor<i1>}}
  func.return
}

// -----

func.func @exp_int(%a: tensor<?xi32>) {
  %0 = ag.exp %a : tensor<?xi32>  // expected-error {{'ag.exp' op operand must have a float or complex element type (f32, f64, complex<f32>, complex<f64>), got tensor<?xi32>}}
  func.return
}

// -----

func.func @log_result_type(%a: tensor<?xf32>) {
  %0 = "ag.log"(%a) : (tensor<?xf32>) -> tensor<?xf64>  // expected-error {{attribute tensor<?xf32> expected from variable 'T', but got tensor<?xf64>}}
  func.return
}

// -----

func.func @tanh_int(%a: tensor<2x2xi64>) {
  %0 = ag.tanh %a : tensor<2x2xi64>  // expected-error {{'ag.tanh' op operand must have a float element type (f32, f64), got tensor<2x2xi64>}}
  func.return
}

// -----

func.func @sqrt_bool(%a: tensor<1xi1>) {
  %0 = ag.sqrt %a : tensor<1xi1>  // expected-error {{'ag.sqrt' op operand must have a float or complex element type (f32, f64, complex<f32>, complex<f64>), got tensor<1xi1>}}
  func.return
}

// -----

// --- ag.select ---------------------------------------------------------------------

func.func @select_cond_not_bool(%c: tensor<?xi32>, %a: tensor<?xf32>) {
  %0 = ag.select %c, %a, %a : tensor<?xi32>, tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>  // expected-error {{'ag.select' op condition must have element type i1, got tensor<?xi32>}}
  func.return
}

// -----

func.func @select_branch_types(%c: tensor<?xi1>, %a: tensor<?xf32>, %b: tensor<?xf64>) {
  %0 = ag.select %c, %a, %b : tensor<?xi1>, tensor<?xf32>, tensor<?xf64> -> tensor<?xf32>  // expected-error {{'ag.select' op branches must have one element type, got tensor<?xf32> and tensor<?xf64>}}
  func.return
}

// -----

func.func @select_not_broadcastable(%c: tensor<3xi1>, %a: tensor<4xf32>) {
  %0 = ag.select %c, %a, %a : tensor<3xi1>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>  // expected-error {{'ag.select' op operand types tensor<3xi1>, tensor<4xf32> and tensor<4xf32> are not broadcast-compatible}}
  func.return
}

// -----

func.func @select_result_type(%c: tensor<i1>, %a: tensor<2xf32>) {
  %0 = ag.select %c, %a, %a : tensor<i1>, tensor<2xf32>, tensor<2xf32> -> tensor<2xf64>  // expected-error {{'ag.select' op result type tensor<2xf64> does not match the inferred type tensor<2xf32>}}
  func.return
}

// -----

// --- ag.cast -----------------------------------------------------------------------

func.func @cast_shape(%a: tensor<?xf32>) {
  %0 = ag.cast %a : tensor<?xf32> to tensor<?x1xf64>  // expected-error {{'ag.cast' op operand tensor<?xf32> and result tensor<?x1xf64> must have the same shape}}
  func.return
}

// -----

func.func @cast_static_vs_dynamic(%a: tensor<?xi32>) {
  %0 = ag.cast %a : tensor<?xi32> to tensor<3xf32>  // expected-error {{'ag.cast' op operand tensor<?xi32> and result tensor<3xf32> must have the same shape}}
  func.return
}

// -----

func.func @cast_unsupported(%a: tensor<?xi32>) {
  %0 = ag.cast %a : tensor<?xi32> to tensor<?xbf16>  // expected-error {{'ag.cast' op result must have a supported element type (f32, f64, i1, i8..i64, ui8..ui64, complex<f32>, complex<f64>), got tensor<?xbf16>}}
  func.return
}

// -----

// --- ag.dimshuffle -----------------------------------------------------------------

func.func @dimshuffle_repeat(%x: tensor<?x3xf32>) {
  %0 = ag.dimshuffle %x {pattern = array<i64: 0, 0>} : tensor<?x3xf32> -> tensor<?x?xf32>  // expected-error {{'ag.dimshuffle' op pattern [0, 0] repeats an axis}}
  func.return
}

// -----

func.func @dimshuffle_out_of_range(%x: tensor<?x3xf32>) {
  %0 = ag.dimshuffle %x {pattern = array<i64: 2, 0>} : tensor<?x3xf32> -> tensor<3x?xf32>  // expected-error {{'ag.dimshuffle' op pattern [2, 0] names an axis outside 0..1}}
  func.return
}

// -----

func.func @dimshuffle_drop_non_one(%x: tensor<?x3xf32>) {
  %0 = ag.dimshuffle %x {pattern = array<i64: 0>} : tensor<?x3xf32> -> tensor<?xf32>  // expected-error {{'ag.dimshuffle' op pattern [0] drops axes [1] of shape ?x3; only length-1 axes can be dropped}}
  func.return
}

// -----

func.func @dimshuffle_drop_dynamic(%x: tensor<?x1xf32>) {
  %0 = ag.dimshuffle %x {pattern = array<i64: 1>} : tensor<?x1xf32> -> tensor<1xf32>  // expected-error {{'ag.dimshuffle' op pattern [1] drops axes [0] of shape ?x1; only length-1 axes can be dropped}}
  func.return
}

// -----

func.func @dimshuffle_result_type(%x: tensor<?x3xf32>) {
  %0 = ag.dimshuffle %x {pattern = array<i64: 1, 0>} : tensor<?x3xf32> -> tensor<?x3xf32>  // expected-error {{'ag.dimshuffle' op result type tensor<?x3xf32> does not match the inferred type tensor<3x?xf32>}}
  func.return
}

// -----

func.func @dimshuffle_pattern_i32(%x: tensor<?x3xf32>) {
  %0 = ag.dimshuffle %x {pattern = array<i32: 1, 0>} : tensor<?x3xf32> -> tensor<3x?xf32>  // expected-error {{'ag.dimshuffle' op pattern must be an i64 array}}
  func.return
}

// -----

// --- reductions --------------------------------------------------------------------

func.func @reduce_sum_axis_out_of_range(%x: tensor<?x?xf64>) {
  %0 = ag.reduce_sum %x {axes = array<i64: 2>} : tensor<?x?xf64> -> tensor<?x?xf64>  // expected-error {{'ag.reduce_sum' op axes [2] out of range for rank 2}}
  func.return
}

// -----

func.func @reduce_sum_negative_axis(%x: tensor<?x?xf64>) {
  %0 = ag.reduce_sum %x {axes = array<i64: -1>} : tensor<?x?xf64> -> tensor<?xf64>  // expected-error {{'ag.reduce_sum' op axes [-1] out of range for rank 2}}
  func.return
}

// -----

func.func @reduce_prod_repeated_axis(%x: tensor<?x?xf64>) {
  %0 = ag.reduce_prod %x {axes = array<i64: 0, 0>} : tensor<?x?xf64> -> tensor<?xf64>  // expected-error {{'ag.reduce_prod' op axes [0, 0] must be strictly increasing}}
  func.return
}

// -----

func.func @reduce_max_unsorted_axes(%x: tensor<?x?xi32>) {
  %0 = ag.reduce_max %x {axes = array<i64: 1, 0>} : tensor<?x?xi32> -> tensor<i32>  // expected-error {{'ag.reduce_max' op axes [1, 0] must be strictly increasing}}
  func.return
}

// -----

func.func @reduce_min_result_type(%x: tensor<2x3xf32>) {
  %0 = ag.reduce_min %x {axes = array<i64: 0>} : tensor<2x3xf32> -> tensor<2xf32>  // expected-error {{'ag.reduce_min' op result type tensor<2xf32> does not match the inferred type tensor<3xf32>}}
  func.return
}

// -----

func.func @reduce_sum_bool(%x: tensor<?xi1>) {
  %0 = ag.reduce_sum %x {axes = array<i64: 0>} : tensor<?xi1> -> tensor<i1>  // expected-error {{'ag.reduce_sum' op operand must have a numeric element type (f32, f64, i8..i64, ui8..ui64, complex<f32>, complex<f64>), got tensor<?xi1>}}
  func.return
}

// -----

func.func @reduce_prod_keeps_dims(%x: tensor<?x?xf32>) {
  %0 = ag.reduce_prod %x {axes = array<i64: 1>} : tensor<?x?xf32> -> tensor<?x1xf32>  // expected-error {{'ag.reduce_prod' op result type tensor<?x1xf32> does not match the inferred type tensor<?xf32>}}
  func.return
}

// -----

// --- ag.dot ------------------------------------------------------------------------

func.func @dot_rank_3(%x: tensor<2x2x2xf32>, %v: tensor<2xf32>) {
  %0 = ag.dot %x, %v : tensor<2x2x2xf32>, tensor<2xf32> -> tensor<2x2xf32>  // expected-error {{'ag.dot' op operands must be vectors or matrices, got shapes 2x2x2 and 2}}
  func.return
}

// -----

func.func @dot_rank_0(%s: tensor<f32>, %v: tensor<2xf32>) {
  %0 = ag.dot %s, %v : tensor<f32>, tensor<2xf32> -> tensor<2xf32>  // expected-error {{'ag.dot' op operands must be vectors or matrices, got shapes scalar and 2}}
  func.return
}

// -----

func.func @dot_contracted_dims(%a: tensor<2x3xf64>, %b: tensor<4x5xf64>) {
  %0 = ag.dot %a, %b : tensor<2x3xf64>, tensor<4x5xf64> -> tensor<2x5xf64>  // expected-error {{'ag.dot' op contracted dimensions differ: 2x3 and 4x5}}
  func.return
}

// -----

func.func @dot_element_types(%a: tensor<?x?xf32>, %b: tensor<?x?xf64>) {
  %0 = ag.dot %a, %b : tensor<?x?xf32>, tensor<?x?xf64> -> tensor<?x?xf32>  // expected-error {{'ag.dot' op operands must have one element type, got tensor<?x?xf32> and tensor<?x?xf64>}}
  func.return
}

// -----

func.func @dot_bool(%a: tensor<?xi1>) {
  %0 = ag.dot %a, %a : tensor<?xi1>, tensor<?xi1> -> tensor<i1>  // expected-error {{'ag.dot' op lhs must have a numeric element type (f32, f64, i8..i64, ui8..ui64, complex<f32>, complex<f64>), got tensor<?xi1>}}
  func.return
}

// -----

func.func @dot_result_type(%a: tensor<?x?xf32>, %v: tensor<?xf32>) {
  %0 = ag.dot %a, %v : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>  // expected-error {{'ag.dot' op result type tensor<?x?xf32> does not match the inferred type tensor<?xf32>}}
  func.return
}

// -----

// --- indexing, reshaping, joining and allocation ---------------------------------------

func.func @subtensor_entry_count(%x: tensor<?x?xf32>) {
  %0 = ag.subtensor %x[] {kinds = array<i64: 0>, starts = array<i64: 1>, stops = array<i64: 2>, steps = array<i64: 1>} : tensor<?x?xf32> -> tensor<?x?xf32>  // expected-error {{'ag.subtensor' op kinds, starts, stops and steps must have one entry per axis of ?x? (rank 2)}}
  func.return
}

// -----

func.func @subtensor_static_index_out_of_bounds(%x: tensor<3xf32>) {
  %0 = ag.subtensor %x[] {kinds = array<i64: 1>, starts = array<i64: 3>, stops = array<i64: -9223372036854775807>, steps = array<i64: -9223372036854775807>} : tensor<3xf32> -> tensor<f32>  // expected-error {{'ag.subtensor' op index 3 is out of bounds for axis 0 with size 3}}
  func.return
}

// -----

func.func @subtensor_zero_step(%x: tensor<?xf32>) {
  %0 = ag.subtensor %x[] {kinds = array<i64: 0>, starts = array<i64: -9223372036854775807>, stops = array<i64: -9223372036854775807>, steps = array<i64: 0>} : tensor<?xf32> -> tensor<?xf32>  // expected-error {{'ag.subtensor' op the slice step of axis 0 is zero}}
  func.return
}

// -----

func.func @subtensor_dynamic_count(%x: tensor<?xf32>, %i: tensor<i64>) {
  %0 = ag.subtensor %x[%i, %i] {kinds = array<i64: 0>, starts = array<i64: -9223372036854775808>, stops = array<i64: -9223372036854775807>, steps = array<i64: -9223372036854775807>} : tensor<?xf32>, tensor<i64>, tensor<i64> -> tensor<?xf32>  // expected-error {{'ag.subtensor' op has 2 dynamic operands but its entries name 1}}
  func.return
}

// -----

func.func @subtensor_dynamic_type(%x: tensor<?xf32>, %i: tensor<i32>) {
  %0 = ag.subtensor %x[%i] {kinds = array<i64: 1>, starts = array<i64: -9223372036854775808>, stops = array<i64: -9223372036854775807>, steps = array<i64: -9223372036854775807>} : tensor<?xf32>, tensor<i32> -> tensor<f32>  // expected-error {{'ag.subtensor' op dynamic entry #0 must be a 0-d tensor<i64>, got tensor<i32>}}
  func.return
}

// -----

func.func @subtensor_result(%x: tensor<5xf32>) {
  %0 = ag.subtensor %x[] {kinds = array<i64: 0>, starts = array<i64: 1>, stops = array<i64: -9223372036854775807>, steps = array<i64: 2>} : tensor<5xf32> -> tensor<?xf32>  // expected-error {{'ag.subtensor' op result type tensor<?xf32> does not match the inferred type tensor<2xf32>}}
  func.return
}

// -----

func.func @set_subtensor_value_shape(%x: tensor<?x?xf32>, %v: tensor<2x3x4xf32>) {
  %0 = ag.set_subtensor %x[], %v {kinds = array<i64: 0, 0>, starts = array<i64: -9223372036854775807, -9223372036854775807>, stops = array<i64: -9223372036854775807, -9223372036854775807>, steps = array<i64: -9223372036854775807, -9223372036854775807>} : tensor<?x?xf32>, tensor<2x3x4xf32> -> tensor<?x?xf32>  // expected-error {{'ag.set_subtensor' op value tensor<2x3x4xf32> cannot be broadcast to the region of shape ?x? of tensor<?x?xf32>}}
  func.return
}

// -----

func.func @inc_subtensor_value_type(%x: tensor<?xf32>, %v: tensor<f64>) {
  %0 = ag.inc_subtensor %x[], %v {kinds = array<i64: 0>, starts = array<i64: -9223372036854775807>, stops = array<i64: -9223372036854775807>, steps = array<i64: -9223372036854775807>} : tensor<?xf32>, tensor<f64> -> tensor<?xf32>  // expected-error {{'ag.inc_subtensor' op value tensor<f64> must have the element type of the operand tensor<?xf32>}}
  func.return
}

// -----

func.func @advanced_subtensor_float_index(%x: tensor<?xf32>, %i: tensor<?xf32>) {
  %0 = ag.advanced_subtensor %x[%i] : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>  // expected-error {{'ag.advanced_subtensor' op index #0 must be a tensor of integers, got tensor<?xf32>}}
  func.return
}

// -----

func.func @advanced_subtensor_too_many(%x: tensor<?xf32>, %i: tensor<?xi64>) {
  %0 = ag.advanced_subtensor %x[%i, %i] : tensor<?xf32>, tensor<?xi64>, tensor<?xi64> -> tensor<?xf32>  // expected-error {{'ag.advanced_subtensor' op 2 index arrays for an operand of rank 1}}
  func.return
}

// -----

func.func @advanced_subtensor_index_shapes(%x: tensor<?x?xf32>, %i: tensor<2xi64>, %j: tensor<3xi64>) {
  %0 = ag.advanced_subtensor %x[%i, %j] : tensor<?x?xf32>, tensor<2xi64>, tensor<3xi64> -> tensor<2xf32>  // expected-error {{'ag.advanced_subtensor' op index shapes 2, 3 are not broadcast-compatible}}
  func.return
}

// -----

func.func @advanced_inc_value(%x: tensor<?x?xf32>, %i: tensor<?xi64>, %v: tensor<3x2x1xf32>) {
  %0 = ag.advanced_inc_subtensor %x[%i], %v : tensor<?x?xf32>, tensor<3x2x1xf32>, tensor<?xi64> -> tensor<?x?xf32>  // expected-error {{'ag.advanced_inc_subtensor' op value tensor<3x2x1xf32> cannot be broadcast to the indexed shape ?x? of tensor<?x?xf32>}}
  func.return
}

// -----

func.func @reshape_two_inferred(%x: tensor<?xf32>) {
  %0 = ag.reshape %x[] {shape = array<i64: -1, -1>} : tensor<?xf32> -> tensor<?x?xf32>  // expected-error {{'ag.reshape' op shape [-1, -1] has more than one -1}}
  func.return
}

// -----

func.func @reshape_static_count(%x: tensor<2x3xf32>) {
  %0 = ag.reshape %x[] {shape = array<i64: 4, 2>} : tensor<2x3xf32> -> tensor<4x2xf32>  // expected-error {{'ag.reshape' op cannot reshape 6 elements into shape [4, 2]}}
  func.return
}

// -----

func.func @reshape_dynamic_count(%x: tensor<?xf32>, %n: tensor<i64>) {
  %0 = ag.reshape %x[%n] {shape = array<i64: -1>} : tensor<?xf32>, tensor<i64> -> tensor<?xf32>  // expected-error {{'ag.reshape' op has 1 dynamic operands but its shape names 0}}
  func.return
}

// -----

func.func @concatenate_types(%a: tensor<?xf32>, %b: tensor<?xf64>) {
  %0 = ag.concatenate %a, %b {axis = 0 : i64} : tensor<?xf32>, tensor<?xf64> -> tensor<?xf32>  // expected-error {{'ag.concatenate' op operands must have one element type, got tensor<?xf32>, tensor<?xf64>}}
  func.return
}

// -----

func.func @concatenate_dims(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  %0 = ag.concatenate %a, %b {axis = 0 : i64} : tensor<2x3xf32>, tensor<2x4xf32> -> tensor<4x3xf32>  // expected-error {{'ag.concatenate' op dimension 1 of operand shapes 2x3, 2x4 differ}}
  func.return
}

// -----

func.func @concatenate_axis(%a: tensor<?xf32>) {
  %0 = ag.concatenate %a, %a {axis = 1 : i64} : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>  // expected-error {{'ag.concatenate' op operands of shapes ?, ? cannot be joined along axis 1}}
  func.return
}

// -----

func.func @alloc_value(%v: tensor<4xf32>) {
  %0 = ag.alloc %v[] {shape = array<i64: 2, 3>} : tensor<4xf32> -> tensor<2x3xf32>  // expected-error {{'ag.alloc' op a value of shape 4 cannot be broadcast to shape 2x3}}
  func.return
}

// -----

func.func @alloc_negative(%v: tensor<f32>) {
  %0 = ag.alloc %v[] {shape = array<i64: -2>} : tensor<f32> -> tensor<?xf32>  // expected-error {{'ag.alloc' op shape [-2] has a negative length}}
  func.return
}

// -----

func.func @arange_bool(%b: tensor<i1>) {
  %0 = ag.arange %b, %b, %b : tensor<i1> -> tensor<?xi1>  // expected-error {{'ag.arange' op start must have a real numeric element type (f32, f64, i8..i64, ui8..ui64), got tensor<i1>}}
  func.return
}

// -----

func.func @arange_rank(%v: tensor<?xf32>) {
  %0 = ag.arange %v, %v, %v : tensor<?xf32> -> tensor<?xf32>  // expected-error {{'ag.arange' op operands must be 0-d tensors, got tensor<?xf32>}}
  func.return
}

// -----

// --- op library A: unary math, argmax/argmin, dim -----------------------------------

func.func @floor_int(%a: tensor<?xi32>) {
  %0 = ag.floor %a : tensor<?xi32>  // expected-error {{'ag.floor' op operand must have a float element type (f32, f64), got tensor<?xi32>}}
  func.return
}

// -----

func.func @sigmoid_bool(%a: tensor<?xi1>) {
  %0 = ag.sigmoid %a : tensor<?xi1>  // expected-error {{'ag.sigmoid' op operand must have a float element type (f32, f64), got tensor<?xi1>}}
  func.return
}

// -----

func.func @argmax_result_type(%a: tensor<?x?xf32>) {
  %0 = ag.argmax %a {axes = array<i64: 1>} : tensor<?x?xf32> -> tensor<?xi32>  // expected-error {{'ag.argmax' op result type tensor<?xi32> does not match the inferred type tensor<?xi64>}}
  func.return
}

// -----

func.func @argmin_no_axes(%a: tensor<?xf32>) {
  %0 = ag.argmin %a {axes = array<i64>} : tensor<?xf32> -> tensor<?xi64>  // expected-error {{'ag.argmin' op needs at least one axis}}
  func.return
}

// -----

func.func @argmax_axes_order(%a: tensor<?x?xf32>) {
  %0 = ag.argmax %a {axes = array<i64: 1, 0>} : tensor<?x?xf32> -> tensor<i64>  // expected-error {{'ag.argmax' op axes [1, 0] must be strictly increasing}}
  func.return
}

// -----

func.func @dim_axis(%a: tensor<?x?xf32>) {
  %0 = ag.dim %a {axis = 2 : i64} : tensor<?x?xf32> -> tensor<i64>  // expected-error {{'ag.dim' op axis 2 out of range for rank 2}}
  func.return
}

// -----

func.func @dim_result_type(%a: tensor<?xf32>) {
  %0 = ag.dim %a {axis = 0 : i64} : tensor<?xf32> -> tensor<i32>  // expected-error {{'ag.dim' op result type tensor<i32> does not match the inferred type tensor<i64>}}
  func.return
}

// -----

// --- ag.gemv / ag.gemm ------------------------------------------------------------

func.func @gemv_int(%s: tensor<i32>, %m: tensor<?x?xi32>, %v: tensor<?xi32>) {
  %0 = ag.gemv %s, %m, %v : tensor<i32>, tensor<?x?xi32>, tensor<?xi32> -> tensor<?xi32>  // expected-error {{'ag.gemv' op alpha must have a float element type (f32, f64), got tensor<i32>}}
  func.return
}

// -----

func.func @gemv_contracted(%s: tensor<f32>, %m: tensor<2x3xf32>, %v: tensor<4xf32>) {
  %0 = ag.gemv %s, %m, %v : tensor<f32>, tensor<2x3xf32>, tensor<4xf32> -> tensor<2xf32>  // expected-error {{'ag.gemv' op contracted dimensions differ: 3 vs 4}}
  func.return
}

// -----

func.func @gemv_transposed_contracted(%s: tensor<f32>, %m: tensor<2x3xf32>, %v: tensor<3xf32>) {
  %0 = ag.gemv %s, %m, %v {transpose_a} : tensor<f32>, tensor<2x3xf32>, tensor<3xf32> -> tensor<3xf32>  // expected-error {{'ag.gemv' op contracted dimensions differ: 2 vs 3}}
  func.return
}

// -----

func.func @gemv_alpha_rank(%s: tensor<1xf32>, %m: tensor<?x?xf32>, %v: tensor<?xf32>) {
  %0 = ag.gemv %s, %m, %v : tensor<1xf32>, tensor<?x?xf32>, tensor<?xf32> -> tensor<?xf32>  // expected-error {{'ag.gemv' op alpha must be a 0-d tensor, got tensor<1xf32>}}
  func.return
}

// -----

func.func @gemv_y0_length(%s: tensor<f32>, %m: tensor<2x3xf32>, %v: tensor<3xf32>, %y: tensor<5xf32>) {
  %0 = ag.gemv %s, %m, %v, %s, %y : tensor<f32>, tensor<2x3xf32>, tensor<3xf32>, tensor<f32>, tensor<5xf32> -> tensor<2xf32>  // expected-error {{'ag.gemv' op lengths of the product and the accumulated vector differ: 2 vs 5}}
  func.return
}

// -----

func.func @gemv_one_extra(%s: tensor<f32>, %m: tensor<?x?xf32>, %v: tensor<?xf32>) {
  %0 = ag.gemv %s, %m, %v, %s : tensor<f32>, tensor<?x?xf32>, tensor<?xf32>, tensor<f32> -> tensor<?xf32>  // expected-error {{'ag.gemv' op takes either no accumulation or `beta, initial`, got 1 extra operands}}
  func.return
}

// -----

func.func @gemv_element_types(%s: tensor<f64>, %m: tensor<?x?xf32>, %v: tensor<?xf32>) {
  %0 = ag.gemv %s, %m, %v : tensor<f64>, tensor<?x?xf32>, tensor<?xf32> -> tensor<?xf32>  // expected-error {{'ag.gemv' op operands must have one element type, got alpha tensor<f64> and a tensor<?x?xf32>}}
  func.return
}

// -----

func.func @gemv_vector_a(%s: tensor<f32>, %v: tensor<?xf32>) {
  %0 = ag.gemv %s, %v, %v : tensor<f32>, tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>  // expected-error {{'ag.gemv' op expected a matrix and vectors, got shapes ?, ?}}
  func.return
}

// -----

func.func @gemm_contracted(%s: tensor<f64>, %a: tensor<2x3xf64>, %b: tensor<2x3xf64>) {
  %0 = ag.gemm %s, %a, %b : tensor<f64>, tensor<2x3xf64>, tensor<2x3xf64> -> tensor<2x3xf64>  // expected-error {{'ag.gemm' op contracted dimensions differ: 3 vs 2}}
  func.return
}

// -----

func.func @gemm_z0(%s: tensor<f64>, %a: tensor<2x3xf64>, %z: tensor<2x4xf64>) {
  %0 = ag.gemm %s, %a, %a, %s, %z {transpose_b} : tensor<f64>, tensor<2x3xf64>, tensor<2x3xf64>, tensor<f64>, tensor<2x4xf64> -> tensor<2x2xf64>  // expected-error {{'ag.gemm' op column counts of the product and the accumulated matrix differ: 2 vs 4}}
  func.return
}

// -----

func.func @gemm_result_type(%s: tensor<f64>, %a: tensor<?x?xf64>) {
  %0 = ag.gemm %s, %a, %a : tensor<f64>, tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?xf64>  // expected-error {{'ag.gemm' op result type tensor<?xf64> does not match the inferred type tensor<?x?xf64>}}
  func.return
}

// -----

// --- ag.if --------------------------------------------------------------------------

func.func @if_condition_rank(%c: tensor<1xi1>, %s: tensor<f64>) {
  %0 = ag.if %c : tensor<1xi1> -> (tensor<f64>) {  // expected-error {{'ag.if' op condition must be a rank-0 tensor, got tensor<1xi1>}}
    ag.yield %s : tensor<f64>
  } else {
    ag.yield %s : tensor<f64>
  }
  func.return
}

// -----

func.func @if_then_type(%c: tensor<i1>, %s: tensor<f64>, %x: tensor<?xf64>) {
  %0 = ag.if %c : tensor<i1> -> (tensor<f64>) {  // expected-error {{'ag.if' op the then region yields (tensor<?xf64>), which does not fit the result types (tensor<f64>)}}
    ag.yield %x : tensor<?xf64>
  } else {
    ag.yield %s : tensor<f64>
  }
  func.return
}

// -----

func.func @if_else_count(%c: tensor<i1>, %s: tensor<f64>) {
  %0 = ag.if %c : tensor<i1> -> (tensor<f64>) {  // expected-error {{'ag.if' op the else region yields (tensor<f64>, tensor<f64>), which does not fit the result types (tensor<f64>)}}
    ag.yield %s : tensor<f64>
  } else {
    ag.yield %s, %s : tensor<f64>, tensor<f64>
  }
  func.return
}

// -----

func.func @if_dynamic_into_static(%c: tensor<i1>, %x: tensor<?xf64>, %y: tensor<3xf64>) {
  %0 = ag.if %c : tensor<i1> -> (tensor<3xf64>) {  // expected-error {{'ag.if' op the else region yields (tensor<?xf64>), which does not fit the result types (tensor<3xf64>)}}
    ag.yield %y : tensor<3xf64>
  } else {
    ag.yield %x : tensor<?xf64>
  }
  func.return
}

// -----

func.func @if_element_type(%c: tensor<i1>, %x: tensor<f32>, %y: tensor<f64>) {
  %0 = ag.if %c : tensor<i1> -> (tensor<f64>) {  // expected-error {{'ag.if' op the then region yields (tensor<f32>), which does not fit the result types (tensor<f64>)}}
    ag.yield %x : tensor<f32>
  } else {
    ag.yield %y : tensor<f64>
  }
  func.return
}

// -----

func.func @if_no_results(%c: tensor<i1>) {
  "ag.if"(%c) ({  // expected-error {{'ag.if' op must have at least one result}}
    "ag.yield"() : () -> ()
  }, {
    "ag.yield"() : () -> ()
  }) : (tensor<i1>) -> ()
  func.return
}

// -----

func.func @if_no_yield(%c: tensor<i1>, %s: tensor<f64>) {
  %0 = "ag.if"(%c) ({
    %1 = ag.neg %s : tensor<f64>  // expected-error {{Operation ag.neg terminates block in single-block region but is not a terminator}}
  }, {
    "ag.yield"(%s) : (tensor<f64>) -> ()
  }) : (tensor<i1>) -> tensor<f64>
  func.return
}

// -----

func.func @if_condition_f16(%c: tensor<f16>, %s: tensor<f64>) {
  %0 = ag.if %c : tensor<f16> -> (tensor<f64>) {  // expected-error {{'ag.if' op condition must have a supported element type (f32, f64, i1, i8..i64, ui8..ui64, complex<f32>, complex<f64>), got tensor<f16>}}
    ag.yield %s : tensor<f64>
  } else {
    ag.yield %s : tensor<f64>
  }
  func.return
}

// -----

// --- ag.print, ag.profile_begin/end -------------------------------------------------

func.func @print_bad_attr(%x: tensor<?xf64>) {
  %0 = ag.print %x {message = "x", attrs = ["not an attribute"]} : tensor<?xf64>  // expected-error {{'ag.print' op attrs: 'not an attribute' is not an attribute name}}
  func.return
}

// -----

func.func @print_result_type(%x: tensor<?xf64>) {
  %0 = "ag.print"(%x) <{message = "x", attrs = ["__str__"]}> : (tensor<?xf64>) -> tensor<?xf32>  // expected-error {{attribute tensor<?xf64> expected from variable 'T', but got tensor<?xf32>}}
  func.return
}

// -----

func.func @profile_negative_node() {
  ag.profile_begin {node = -1 : i64}  // expected-error {{'ag.profile_begin' op node must be >= 0, got -1}}
  func.return
}


// -----

// --- complex element types ----------------------------------------------------------

func.func @lt_complex(%z: tensor<?xcomplex<f64>>) {
  // expected-error @+1 {{'ag.lt' op lhs must have a non-complex element type (f32, f64, i1, i8..i64, ui8..ui64), got tensor<?xcomplex<f64>>}}
  %0 = ag.lt %z, %z : tensor<?xcomplex<f64>>, tensor<?xcomplex<f64>> -> tensor<?xi1>
  func.return
}

// -----

func.func @real_of_real(%x: tensor<?xf64>) {
  // expected-error @+1 {{'ag.real' op operand must have a complex element type (complex<f32>, complex<f64>), got tensor<?xf64>}}
  %0 = ag.real %x : tensor<?xf64> -> tensor<?xf64>
  func.return
}

// -----

func.func @imag_wrong_result(%z: tensor<?xcomplex<f32>>) {
  // expected-error @+1 {{'ag.imag' op result type tensor<?xf64> does not match the inferred type tensor<?xf32>}}
  %0 = ag.imag %z : tensor<?xcomplex<f32>> -> tensor<?xf64>
  func.return
}

// -----

func.func @complex_mixed_parts(%x: tensor<?xf32>, %y: tensor<?xf64>) {
  // expected-error @+1 {{'ag.complex' op parts must have one element type, got tensor<?xf32> and tensor<?xf64>}}
  %0 = ag.complex %x, %y : tensor<?xf32>, tensor<?xf64> -> tensor<?xcomplex<f64>>
  func.return
}
