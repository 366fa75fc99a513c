// SSA dominance (arignote.dialects.ag.dominance): a value is used only where it is
// defined before, in the same block or one enclosing it; one failure per chunk, each
// printed as its diagnostic (exit 0). Before, these reached the lowering, which failed
// with a Python KeyError.
// RUN: arignote-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: arignote-opt %s --split-input-file --verify-diagnostics -p to-llvm | filecheck %s

// The then region yields a value of the else region.
func.func @sibling(%c: tensor<i1>, %x: tensor<?xf64>) -> tensor<?xf64> {
  %r = ag.if %c : tensor<i1> -> (tensor<?xf64>) {
    ag.yield %s : tensor<?xf64>
  } else {
    %s = ag.neg %x : tensor<?xf64>
    ag.yield %s : tensor<?xf64>
  }
  func.return %r : tensor<?xf64>
}

// CHECK: 'ag.yield' op operand #0 (%s) does not dominate this use: it is defined in a region of ag.if that does not enclose this use

// -----

// A value used before the op that computes it.
func.func @before(%x: tensor<?xf64>) -> tensor<?xf64> {
  %e = ag.exp %n : tensor<?xf64>
  %n = ag.neg %x : tensor<?xf64>
  func.return %e : tensor<?xf64>
}

// CHECK: 'ag.exp' op operand #0 (%n) does not dominate this use: it is defined after this use

// -----

// A region reading a value its enclosing block computes after the op.
func.func @later(%c: tensor<i1>, %x: tensor<?xf64>) -> tensor<?xf64> {
  %r = ag.if %c : tensor<i1> -> (tensor<?xf64>) {
    ag.yield %n : tensor<?xf64>
  } else {
    ag.yield %x : tensor<?xf64>
  }
  %n = ag.neg %x : tensor<?xf64>
  func.return %r : tensor<?xf64>
}

// CHECK: 'ag.yield' op operand #0 (%n) does not dominate this use: it is defined after this use

// -----

// An op's own result inside its region.
func.func @own_result(%c: tensor<i1>, %x: tensor<?xf64>) -> tensor<?xf64> {
  %r = ag.if %c : tensor<i1> -> (tensor<?xf64>) {
    ag.yield %r : tensor<?xf64>
  } else {
    ag.yield %x : tensor<?xf64>
  }
  func.return %r : tensor<?xf64>
}

// CHECK: 'ag.yield' op operand #0 (%r) does not dominate this use: it is a result of the ag.if that encloses it

// -----

// Inside an ag.fused region.
func.func @fused(%x: tensor<?xf64>) -> tensor<?xf64> {
  %r = ag.fused %x : tensor<?xf64> -> tensor<?xf64> {
  ^bb0(%a: tensor<?xf64>):
    %e = ag.exp %n : tensor<?xf64>
    %n = ag.neg %a : tensor<?xf64>
    ag.yield %e : tensor<?xf64>
  }
  func.return %r : tensor<?xf64>
}

// CHECK: 'ag.exp' op operand #0 (%n) does not dominate this use: it is defined after this use
