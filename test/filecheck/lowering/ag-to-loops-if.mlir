// RUN: arignote-opt %s -p ag-to-loops | filecheck %s
// RUN: arignote-opt %s -p to-llvm | filecheck %s --check-prefix=LLVM

// `ag.if` → `scf.if`. When both branches are free of checks and give the same result
// shapes, the shape function does not need the condition: it emits nothing for the op.

func.func @same_shapes(%c: tensor<i1>, %x: tensor<?xf64>, %y: tensor<?xf64>) -> tensor<f64> {
  %r = ag.if %c : tensor<i1> -> (tensor<f64>) {
    %s = ag.reduce_sum %x {axes = array<i64: 0>} : tensor<?xf64> -> tensor<f64>
    ag.yield %s : tensor<f64>
  } else {
    %s = ag.reduce_sum %y {axes = array<i64: 0>} : tensor<?xf64> -> tensor<f64>
    ag.yield %s : tensor<f64>
  }
  func.return %r : tensor<f64>
}

// CHECK-LABEL: func.func @same_shapes__shape(
// CHECK-SAME:      attributes {ag.checks = [], arignote.alloc_status}
// CHECK-NOT:     cf.cond_br
// CHECK:         func.return
// CHECK-LABEL: func.func @same_shapes(
// CHECK-SAME:      %out0: memref<f64> {llvm.noalias})
// CHECK:         %[[C:.*]] = memref.load %arg0[] : memref<i1, strided<[], offset: ?>>
// CHECK-NEXT:    scf.if %[[C]] {
// CHECK:           memref.load %arg1[%{{.*}}]
// CHECK:           memref.store %{{.*}}, %out0[] : memref<f64>
// CHECK-NEXT:    } else {
// CHECK:           memref.load %arg2[%{{.*}}]
// CHECK:           memref.store %{{.*}}, %out0[] : memref<f64>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[STATUS:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    func.return %[[STATUS]] : i64

// A branch with a check: the shape function computes the condition (nonzero i32) and
// runs only the taken branch's checks; the result length comes from a merge block. The
// result is not returned but used further: each region allocates it and `scf.if` yields
// the buffer and its length; it is freed after its last use.

func.func @branch_checks(%c: tensor<i32>, %x: tensor<?xf64>, %y: tensor<?xf64>) -> tensor<?xf64> {
  %r = ag.if %c : tensor<i32> -> (tensor<?xf64>) {
    %s = ag.add %x, %y : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
    ag.yield %s : tensor<?xf64>
  } else {
    ag.yield %y : tensor<?xf64>
  }
  %t = ag.neg %r : tensor<?xf64>
  func.return %t : tensor<?xf64>
}

// CHECK-LABEL: func.func @branch_checks__shape(
// CHECK-SAME:      ag.checks = ["ag.add: operand shapes (%d,) and (%d,) do not match at dimension 0"]
// CHECK:         %[[X:.*]] = memref.dim %arg1
// CHECK:         %[[Y:.*]] = memref.dim %arg2
// CHECK:         %[[V:.*]] = memref.load %arg0[] : memref<i32, strided<[], offset: ?>>
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[COND:.*]] = arith.cmpi ne, %[[V]], %[[ZERO]] : i32
// CHECK-NEXT:    cf.cond_br %[[COND]], ^[[THEN:.*]], ^[[ELSE:.*]]
// CHECK-NEXT:  ^[[THEN]]:
// CHECK-NEXT:    %[[OK:.*]] = arith.cmpi eq, %[[X]], %[[Y]] : index
// CHECK:         cf.cond_br %[[OK]], ^[[THEN_OK:.*]], ^[[FAIL:.*]](
// CHECK-NEXT:  ^[[ELSE]]:
// CHECK-NEXT:    cf.br ^[[MERGE:.*]](%[[Y]] : index)
// CHECK-NEXT:  ^[[THEN_OK]]:
// CHECK-NEXT:    cf.br ^[[MERGE]](%[[X]] : index)
// CHECK-NEXT:  ^[[MERGE]](%[[LEN:.*]]: index):
// CHECK-NEXT:    %[[LEN64:.*]] = arith.index_cast %[[LEN]] : index to i64
// CHECK:         memref.store %[[LEN64]], %dims[%{{.*}}] : memref<?xi64>
// CHECK:       ^[[FAIL]](%check: i64, %v1: i64, %v2: i64):
// CHECK-LABEL: func.func @branch_checks(
// CHECK:         %[[X:.*]] = memref.dim %arg1
// CHECK:         %[[Y:.*]] = memref.dim %arg2
// CHECK:         %[[COND:.*]] = arith.cmpi ne
// CHECK-NEXT:    %[[BUF:.*]], %[[LEN:.*]] = scf.if %[[COND]] -> (memref<?xf64>, index) {
// CHECK-NEXT:      %[[T:.*]] = memref.alloc(%[[X]]) : memref<?xf64>
// CHECK:           arith.addf
// CHECK:           scf.yield %[[T]], %[[X]] : memref<?xf64>, index
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[E:.*]] = memref.alloc(%[[Y]]) : memref<?xf64>
// CHECK:           memref.store %{{.*}}, %[[E]][%{{.*}}] : memref<?xf64>
// CHECK:           scf.yield %[[E]], %[[Y]] : memref<?xf64>, index
// CHECK-NEXT:    }
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[LEN]]
// CHECK:           memref.load %[[BUF]]
// CHECK:           arith.negf
// CHECK:         memref.dealloc %[[BUF]] : memref<?xf64>
// CHECK-NEXT:    %[[STATUS:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    func.return %[[STATUS]] : i64

// After to-llvm (convert-scf-to-cf, then the llvm conversions) the branches are
// `llvm.cond_br`s and no scf, cf or ag op is left.
// LLVM-LABEL: llvm.func @same_shapes(
// LLVM:         llvm.cond_br
// LLVM-NOT:     {{(scf|cf|ag)\.}}
