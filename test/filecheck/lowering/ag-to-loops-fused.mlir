// ag-to-loops of ag.fused: the shape function replays the checks of the region's ops
// (messages naming them), the compute function is ONE loop nest whose body loads each
// operand (broadcast and dimshuffled indices), evaluates the region's ops as scalars
// and stores every result; the reduction form carries its accumulator in iter_args.
// RUN: arignote-opt %s -p ag-to-loops | filecheck %s

// CHECK-LABEL: func.func @f__shape
// CHECK-SAME:    ag.checks = ["ag.mul [Elemwise{mul} at prog.py:3]: operand shapes (%d, %d) and (1, %d) do not match at dimension 1"]
// CHECK:         arith.cmpi eq, %d_1, %d_2 : index
// CHECK-LABEL: func.func @f(
// CHECK-SAME:    %out0: memref<?x?xf32> {llvm.noalias}, %out1: memref<?x?xf32> {llvm.noalias})
// CHECK-NOT:     memref.alloc
// CHECK:         scf.for %i = %{{.*}} to %d step
// CHECK-NEXT:      scf.for %i_1 = %{{.*}} to %d_1 step
// CHECK-NEXT:        %[[X:.*]] = memref.load %arg0[%i, %i_1]
// CHECK-NEXT:        %[[E:.*]] = math.exp %[[X]] : f32
// CHECK:             %[[Y:.*]] = memref.load %arg1[%i_1]
// CHECK-NEXT:        %[[M:.*]] = arith.mulf %[[E]], %[[Y]] : f32
// CHECK-NEXT:        %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:        %[[R:.*]] = arith.mulf %[[M]], %[[TWO]] : f32
// CHECK-NEXT:        memref.store %[[R]], %out0[%i, %i_1]
// CHECK-NEXT:        memref.store %[[E]], %out1[%i, %i_1]
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[STATUS:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    func.return %[[STATUS]] : i64
func.func @f(%x: tensor<?x?xf32>, %y: tensor<?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %r, %e = ag.fused %x, %y : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>, tensor<?x?xf32> {
  ^bb0(%a: tensor<?x?xf32>, %b: tensor<?xf32>):
    %two = ag.constant dense<2.0> : tensor<f32>
    %bb = ag.dimshuffle %b {pattern = array<i64: -1, 0>} : tensor<?xf32> -> tensor<1x?xf32>
    %e_1 = ag.exp %a : tensor<?x?xf32>
    %m = ag.mul %e_1, %bb {ag.node = "Elemwise{mul} at prog.py:3"} : tensor<?x?xf32>, tensor<1x?xf32> -> tensor<?x?xf32>
    %r_1 = ag.mul %m, %two : tensor<?x?xf32>, tensor<f32> -> tensor<?x?xf32>
    ag.yield %r_1, %e_1 : tensor<?x?xf32>, tensor<?x?xf32>
  }
  func.return %r, %e : tensor<?x?xf32>, tensor<?x?xf32>
}

// CHECK-LABEL: func.func @g__shape
// CHECK-SAME:    ag.checks = ["ag.mul: operand shapes (%d, %d) and (%d, %d) do not match at dimension 0", "ag.mul: operand shapes (%d, %d) and (%d, %d) do not match at dimension 1"]
// CHECK-LABEL: func.func @g(
// CHECK-NOT:     memref.alloc
// CHECK:         scf.for %i = %{{.*}} to %d step
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// (a float sum: blocks of 1024 summed with fastmath<reassoc>, Neumaier-compensated)
// CHECK:           %[[SUM:.*]], %[[COMP:.*]] = scf.for %i_1 = %{{.*}} to %d_1 step %{{.*}} iter_args(%{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]]) -> (f64, f64) {
// CHECK:             %[[PART:.*]] = scf.for %i_2 = %i_1 to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f64) {
// CHECK-NEXT:          %[[X:.*]] = memref.load %arg0[%i, %i_2]
// CHECK-NEXT:          %[[E:.*]] = math.exp %[[X]] : f64
// CHECK-NEXT:          %[[Y:.*]] = memref.load %arg1[%i, %i_2]
// CHECK-NEXT:          %[[M:.*]] = arith.mulf %[[E]], %[[Y]] : f64
// CHECK-NEXT:          %[[A:.*]] = arith.addf %[[ACC]], %[[M]] fastmath<reassoc> : f64
// CHECK-NEXT:          scf.yield %[[A]] : f64
// CHECK-NEXT:        }
// CHECK:           %[[TOTAL:.*]] = arith.addf %[[SUM]], %[[COMP]] : f64
// (a non-finite running sum is the result: the compensation holds inf - inf)
// CHECK-NEXT:      %[[INF:.*]] = arith.constant 0x7ff0000000000000 : f64
// CHECK-NEXT:      %[[NEG:.*]] = arith.negf %[[SUM]] : f64
// CHECK-NEXT:      %[[ABS:.*]] = arith.maximumf %[[SUM]], %[[NEG]] : f64
// CHECK-NEXT:      %[[FINITE:.*]] = arith.cmpf olt, %[[ABS]], %[[INF]] : f64
// CHECK-NEXT:      %[[RESULT:.*]] = arith.select %[[FINITE]], %[[TOTAL]], %[[SUM]] : f64
// CHECK-NEXT:      memref.store %[[RESULT]], %out0[%i]
func.func @g(%x: tensor<?x?xf64>, %y: tensor<?x?xf64>) -> tensor<?xf64> {
  %s = ag.fused %x, %y : tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?xf64> {
  ^bb0(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>):
    %e = ag.exp %a : tensor<?x?xf64>
    %m = ag.mul %e, %b : tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?x?xf64>
    %s_1 = ag.reduce_sum %m {axes = array<i64: 1>} : tensor<?x?xf64> -> tensor<?xf64>
    ag.yield %s_1 : tensor<?xf64>
  }
  func.return %s : tensor<?xf64>
}

// The reduction form with a second (domain-shaped) result: stored inside the reduction
// loop, where each element is visited once.
// CHECK-LABEL: func.func @reduce_and_store(
// CHECK-NOT:     memref.alloc
// CHECK:         %[[R:.*]] = scf.for %i = %{{.*}} to %d step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32) {
// CHECK-NEXT:      %[[X:.*]] = memref.load %arg0[%i]
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[X]] : f32
// CHECK-NEXT:      %[[N:.*]] = arith.negf %[[E]] : f32
// CHECK-NEXT:      memref.store %[[E]], %out1[%i]
// CHECK-NEXT:      %[[M:.*]] = arith.maximumf %[[ACC]], %[[N]] : f32
// CHECK-NEXT:      scf.yield %[[M]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.store %[[R]], %out0[]
func.func @reduce_and_store(%x: tensor<?xf32>) -> (tensor<f32>, tensor<?xf32>) {
  %s, %e = ag.fused %x : tensor<?xf32> -> tensor<f32>, tensor<?xf32> {
  ^bb0(%a: tensor<?xf32>):
    %e_1 = ag.exp %a : tensor<?xf32>
    %n = ag.neg %e_1 : tensor<?xf32>
    %s_1 = ag.reduce_max %n {axes = array<i64: 0>} : tensor<?xf32> -> tensor<f32>
    ag.yield %s_1, %e_1 : tensor<f32>, tensor<?xf32>
  }
  func.return %s, %e : tensor<f32>, tensor<?xf32>
}
