// Round trip of ag.python_op (a custom op written in Python); `cse` and `dce` keep it:
// it may have side effects, so two identical ones stay two and an unused one stays.
// RUN: arignote-opt %s | filecheck %s
// RUN: arignote-opt %s --print-op-generic | arignote-opt | filecheck %s
// RUN: arignote-opt %s -p cse,dce | filecheck %s --check-prefix=CSE

func.func @custom(%x: tensor<?xf64>, %m: tensor<?x?xf32>) -> tensor<?xf64> {
  %y, %z = ag.python_op %x, %m {callback = 0 : i64, label = "DoubleOp"} : (tensor<?xf64>, tensor<?x?xf32>) -> (tensor<?xf64>, tensor<?xf64>)
  %w:2 = ag.python_op %x, %m {callback = 0 : i64, label = "DoubleOp"} : (tensor<?xf64>, tensor<?x?xf32>) -> (tensor<?xf64>, tensor<?xf64>)
  %u = ag.python_op {callback = 1 : i64, label = "NoInputs"} : () -> (tensor<3xi64>)
  func.return %y : tensor<?xf64>
}

// CHECK-LABEL: func.func @custom(
// CHECK-NEXT:    %y, %z = ag.python_op %x, %m {callback = 0 : i64, label = "DoubleOp"} : (tensor<?xf64>, tensor<?x?xf32>) -> (tensor<?xf64>, tensor<?xf64>)
// CHECK-NEXT:    %w, %w_1 = ag.python_op %x, %m {callback = 0 : i64, label = "DoubleOp"} : (tensor<?xf64>, tensor<?x?xf32>) -> (tensor<?xf64>, tensor<?xf64>)
// CHECK-NEXT:    %u = ag.python_op {callback = 1 : i64, label = "NoInputs"} : () -> (tensor<3xi64>)

// CSE-LABEL: func.func @custom(
// CSE-COUNT-3: ag.python_op
