// RUN: arignote-opt %s -p profile-timers | filecheck %s
// RUN: arignote-opt %s -p profile-timers,ag-to-loops | filecheck %s --check-prefix=LOOPS

// Every node but constants is bracketed by timers numbered in order; ag-to-loops turns
// each pair into two clock reads around the node's loops and updates of @f__profile
// (nanoseconds += elapsed, runs += 1, bytes = max(bytes, size of the results)).

func.func @f(%x: tensor<?xf64>, %y: tensor<?xf64>) -> tensor<?xf64> {
  %c = ag.constant dense<2.0> : tensor<f64>
  %s = ag.add %x, %y : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
  %m = ag.mul %s, %c : tensor<?xf64>, tensor<f64> -> tensor<?xf64>
  func.return %m : tensor<?xf64>
}

// CHECK-LABEL: func.func @f(
// CHECK-NEXT:    %c = ag.constant
// CHECK-NEXT:    ag.profile_begin {node = 0 : i64}
// CHECK-NEXT:    %s = ag.add %x, %y
// CHECK-NEXT:    ag.profile_end %s {node = 0 : i64} : tensor<?xf64>
// CHECK-NEXT:    ag.profile_begin {node = 1 : i64}
// CHECK-NEXT:    %m = ag.mul %s, %c
// CHECK-NEXT:    ag.profile_end %m {node = 1 : i64} : tensor<?xf64>
// CHECK-NEXT:    func.return %m

// LOOPS-LABEL: func.func @f__shape(
// LOOPS-NOT:     clock_gettime
// LOOPS-LABEL: func.func @f(
// LOOPS:         %[[SPEC:.*]] = llvm.alloca %{{.*}} x !llvm.array<2 x i64>
// LOOPS:         func.call @clock_gettime(%{{.*}}, %[[SPEC]]) : (i32, !llvm.ptr) -> i32
// LOOPS:         %[[SEC:.*]] = llvm.load
// LOOPS:         %[[NSEC:.*]] = llvm.load
// LOOPS:         %[[SCALED:.*]] = arith.muli %[[SEC]], %{{.*}} : i64
// LOOPS:         %[[START:.*]] = arith.addi %[[SCALED]], %[[NSEC]] : i64
// LOOPS:         memref.alloc
// LOOPS:         scf.for
// LOOPS:         func.call @clock_gettime
// LOOPS:         %[[END:.*]] = arith.addi
// LOOPS:         %[[ELAPSED:.*]] = arith.subi %[[END]], %[[START]] : i64
// LOOPS:         %[[BASE:.*]] = llvm.mlir.addressof @f__profile : !llvm.ptr
// LOOPS:         %[[NS:.*]] = llvm.getelementptr %[[BASE]][0] : (!llvm.ptr) -> !llvm.ptr, i64
// LOOPS:         %[[OLD:.*]] = llvm.load %[[NS]] : !llvm.ptr -> i64
// LOOPS:         %[[NEW:.*]] = arith.addi %[[OLD]], %[[ELAPSED]] : i64
// LOOPS:         llvm.store %[[NEW]], %[[NS]] : i64, !llvm.ptr
// LOOPS:         llvm.getelementptr %{{.*}}[1] : (!llvm.ptr) -> !llvm.ptr, i64
// LOOPS:         llvm.getelementptr %{{.*}}[2] : (!llvm.ptr) -> !llvm.ptr, i64
// LOOPS:         arith.maxsi
// LOOPS:         llvm.getelementptr %{{.*}}[3] : (!llvm.ptr) -> !llvm.ptr, i64
// LOOPS:         llvm.getelementptr %{{.*}}[5] : (!llvm.ptr) -> !llvm.ptr, i64
// LOOPS:         func.return
// LOOPS-DAG:   llvm.mlir.global common @f__profile(dense<0> : tensor<6xi64>) {{.*}} : !llvm.array<6 x i64>
// LOOPS-DAG:   func.func private @clock_gettime(i32, !llvm.ptr) -> i32
