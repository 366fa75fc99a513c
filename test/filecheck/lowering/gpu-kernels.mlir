// RUN: arignote-opt %s -p 'ag-to-loops{parallel_min_work=1},gpu-kernels' | filecheck %s

// gpu-kernels: each ag.parallel_for of ag-to-loops is outlined as a task (the kernels of
// the GPU target), never inlined; the host code that would touch device memory (here the
// reduction's serial loop and the store of its result) is wrapped into a parallel loop
// over [0, 1), a one-thread kernel. The host keeps the shape arithmetic and the
// allocations, and calls arignote_parallel_for, which the GPU split turns into launches.

// CHECK:       llvm.func @arignote_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64) -> i64
// CHECK-LABEL: func.func @f(
// CHECK-DAG:     %[[ZERO:.*]] = llvm.mlir.constant(0) : i64
// CHECK-DAG:     %[[ONE:.*]] = llvm.mlir.constant(1) : i64
// CHECK:         %[[N:.*]] = builtin.unrealized_conversion_cast %d : index to i64
// CHECK:         %[[TMP:.*]] = memref.alloc(%d) : memref<?xf32>
// CHECK:         %[[MUL:.*]] = llvm.mlir.addressof @f__par0 : !llvm.ptr
// CHECK-NEXT:    llvm.call @arignote_parallel_for(%[[MUL]], %{{.*}}, %[[ZERO]], %[[N]], %{{.*}})
// CHECK:         %[[EXP:.*]] = llvm.mlir.addressof @f__par1 : !llvm.ptr
// CHECK-NEXT:    llvm.call @arignote_parallel_for(%[[EXP]], %{{.*}}, %[[ZERO]], %[[N]], %{{.*}})
// CHECK:         memref.dealloc %[[TMP]] : memref<?xf32>
// CHECK:         %[[SUM:.*]] = llvm.mlir.addressof @f__par2 : !llvm.ptr
// CHECK-NEXT:    llvm.call @arignote_parallel_for(%[[SUM]], %{{.*}}, %[[ZERO]], %[[ONE]], %[[ONE]], %[[ONE]], %[[ZERO]])
// CHECK-NOT:     memref.load
// CHECK-NOT:     memref.store
// CHECK:         func.return
// CHECK:       llvm.func internal @f__par0(
// CHECK:       llvm.func internal @f__par0__body(%begin: i64, %end: i64, %part: i64,
// CHECK:         arith.mulf
// CHECK:       llvm.func internal @f__par1__body(
// CHECK:         math.exp
// CHECK:       llvm.func internal @f__par2__body(
// CHECK:         scf.for {{.*}} iter_args
// CHECK:           arith.addf
// CHECK:         memref.store

func.func @f(%x: tensor<?xf32>, %y: tensor<?xf32>) -> (tensor<?xf32>, tensor<f32>) {
  %0 = ag.mul %x, %y : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  %1 = ag.exp %0 : tensor<?xf32>
  %2 = ag.reduce_sum %1 {axes = array<i64: 0>} : tensor<?xf32> -> tensor<f32>
  func.return %1, %2 : tensor<?xf32>, tensor<f32>
}
