// RUN: arignote-opt %s -p inplace | filecheck %s
// RUN: arignote-opt %s -p inplace,ag-to-loops | filecheck %s --check-prefix=LOOPS

// `inplace` lets ag.allreduce reduce a dead intermediate in its own buffer; an operand
// that is a function argument (the caller's array) or still used later is copied.
// ag-to-loops then copies nothing before the call.

func.func @dead(%x: tensor<?xf64>) -> tensor<?xf64> {
  %e = ag.exp %x : tensor<?xf64>
  %y = ag.allreduce %e {reduction = "sum", timeout_ms = 0 : i64} : tensor<?xf64>
  %z = ag.exp %y : tensor<?xf64>
  func.return %z : tensor<?xf64>
}

func.func @live(%x: tensor<?xf64>) -> tensor<?xf64> {
  %e = ag.exp %x : tensor<?xf64>
  %y = ag.allreduce %e {reduction = "sum", timeout_ms = 0 : i64} : tensor<?xf64>
  %a = ag.allreduce %x {reduction = "sum", timeout_ms = 0 : i64} : tensor<?xf64>
  %s = ag.add %y, %e : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
  %z = ag.add %s, %a : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
  func.return %z : tensor<?xf64>
}

// CHECK-LABEL: func.func @dead(
// CHECK:         ag.allreduce %e {ag.destroy_map = array<i64: 0, 0>, reduction = "sum", timeout_ms = 0 : i64}
// CHECK-LABEL: func.func @live(
// CHECK:         ag.allreduce %e {reduction = "sum", timeout_ms = 0 : i64}
// CHECK:         ag.allreduce %x {reduction = "sum", timeout_ms = 0 : i64}

// LOOPS-LABEL: func.func @dead(
// LOOPS:         math.exp
// LOOPS-NOT:     scf.for
// LOOPS:         func.call @arignote_mpi_allreduce(
