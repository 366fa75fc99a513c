// SSA dominance (arignote.dialects.ag.dominance): a value is used only where it is
// defined before, in the same block or one enclosing it; one failure per chunk, each
// checked against its expected-error comment. Before, these reached the lowering, which failed
// with a Python KeyError.
// RUN: arignote-opt %s --split-input-file --verify-diagnostics
// RUN: arignote-opt %s --split-input-file --verify-diagnostics -p to-llvm

// The then region yields a value of the else region.
func.func @sibling(%c: tensor<i1>, %x: tensor<?xf64>) -> tensor<?xf64> {
  %r = ag.if %c : tensor<i1> -> (tensor<?xf64>) {
    ag.yield %s : tensor<?xf64>  // expected-error {{'ag.yield' op operand #0 (%s) does not dominate this use: it is defined in a region of ag.if that does not enclose this use}}
  } else {
    %s = ag.neg %x : tensor<?xf64>
    ag.yield %s : tensor<?xf64>
  }
  func.return %r : tensor<?xf64>
}

// -----

// A value used before the op that computes it.
func.func @before(%x: tensor<?xf64>) -> tensor<?xf64> {
  %e = ag.exp %n : tensor<?xf64>  // expected-error {{'ag.exp' op operand #0 (%n) does not dominate this use: it is defined after this use}}
  %n = ag.neg %x : tensor<?xf64>
  func.return %e : tensor<?xf64>
}

// -----

// A region reading a value its enclosing block computes after the op.
func.func @later(%c: tensor<i1>, %x: tensor<?xf64>) -> tensor<?xf64> {
  %r = ag.if %c : tensor<i1> -> (tensor<?xf64>) {
    ag.yield %n : tensor<?xf64>  // expected-error {{'ag.yield' op operand #0 (%n) does not dominate this use: it is defined after this use}}
  } else {
    ag.yield %x : tensor<?xf64>
  }
  %n = ag.neg %x : tensor<?xf64>
  func.return %r : tensor<?xf64>
}

// -----

// An op's own result inside its region.
func.func @own_result(%c: tensor<i1>, %x: tensor<?xf64>) -> tensor<?xf64> {
  %r = ag.if %c : tensor<i1> -> (tensor<?xf64>) {
    ag.yield %r : tensor<?xf64>  // expected-error {{'ag.yield' op operand #0 (%r) does not dominate this use: it is a result of the ag.if that encloses it}}
  } else {
    ag.yield %x : tensor<?xf64>
  }
  func.return %r : tensor<?xf64>
}

// -----

// Inside an ag.fused region.
func.func @fused(%x: tensor<?xf64>) -> tensor<?xf64> {
  %r = ag.fused %x : tensor<?xf64> -> tensor<?xf64> {
  ^bb0(%a: tensor<?xf64>):
    %e = ag.exp %n : tensor<?xf64>  // expected-error {{'ag.exp' op operand #0 (%n) does not dominate this use: it is defined after this use}}
    %n = ag.neg %a : tensor<?xf64>
    ag.yield %e : tensor<?xf64>
  }
  func.return %r : tensor<?xf64>
}

