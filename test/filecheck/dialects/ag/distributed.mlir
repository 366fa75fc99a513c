// Round trip of `ag.allreduce`; `cse` and `dce` keep it (it communicates): two identical
// allreduces stay two, one whose result is unused stays.
// RUN: arignote-opt %s | filecheck %s
// RUN: arignote-opt %s --print-op-generic | arignote-opt | filecheck %s
// RUN: arignote-opt %s -p cse,dce | filecheck %s --check-prefix=CSE

func.func @allreduce(%x: tensor<?x3xf64>, %n: tensor<i64>) -> tensor<?x3xf64> {
  %a = ag.allreduce %x {reduction = "mean", timeout_ms = 60000 : i64} : tensor<?x3xf64>
  %b = ag.allreduce %x {reduction = "mean", timeout_ms = 60000 : i64} : tensor<?x3xf64>
  %c = ag.allreduce %n {reduction = "sum", timeout_ms = 0 : i64} : tensor<i64>
  %s = ag.add %a, %b : tensor<?x3xf64>, tensor<?x3xf64> -> tensor<?x3xf64>
  func.return %s : tensor<?x3xf64>
}

// CHECK-LABEL: func.func @allreduce(
// CHECK-NEXT:    %a = ag.allreduce %x {reduction = "mean", timeout_ms = 60000 : i64} : tensor<?x3xf64>
// CHECK-NEXT:    %b = ag.allreduce %x {reduction = "mean", timeout_ms = 60000 : i64} : tensor<?x3xf64>
// CHECK-NEXT:    %c = ag.allreduce %n {reduction = "sum", timeout_ms = 0 : i64} : tensor<i64>

// CSE-LABEL: func.func @allreduce(
// CSE-COUNT-3: ag.allreduce
