// RUN: arignote-opt %s -p ag-to-loops | filecheck %s

// ag.allreduce copies its operand into its result buffer, then calls
// @arignote_mpi_allreduce on the buffer's data pointer with the element count, the MPI
// datatype (MPICH's MPI_FLOAT / MPI_DOUBLE) and the deadline in ns; a non-zero status
// goes to the error callback; `mean` divides by MPI_Comm_size. The helper is defined
// once: MPI_Iallreduce in place (MPI_IN_PLACE = -1, MPI_SUM, MPI_COMM_WORLD), then a
// polling loop of MPI_Test and the clock (yielding the core after 50 us of spinning),
// leaving with the status.

func.func @f(%x: tensor<?x3xf32>, %y: tensor<?xf64>) -> (tensor<?x3xf32>, tensor<?xf64>) {
  %a = ag.allreduce %x {reduction = "mean", timeout_ms = 2000 : i64} : tensor<?x3xf32>
  %b = ag.allreduce %y {reduction = "sum", timeout_ms = 0 : i64} : tensor<?xf64>
  func.return %a, %b : tensor<?x3xf32>, tensor<?xf64>
}

// CHECK-LABEL: func.func @f(
// CHECK:         memref.store %{{.*}}, %out0
// CHECK:         %[[P:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr
// CHECK:         %[[N:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK:         %[[T:.*]] = arith.constant 1275069450 : i32
// CHECK:         %[[D:.*]] = arith.constant 2000000000 : i64
// CHECK:         %[[S:.*]] = func.call @arignote_mpi_allreduce(%[[P]], %[[N]], %[[T]], %[[D]]) : (!llvm.ptr, i32, i32, i64) -> i32
// CHECK:         scf.if
// CHECK:           func.call @arignote_mpi_error(%{{.*}}, %{{.*}}) : (i64, i64) -> ()
// CHECK:         func.call @MPI_Comm_size(%{{.*}}, %{{.*}}) : (i32, !llvm.ptr) -> i32
// CHECK:         arith.sitofp %{{.*}} : i32 to f32
// CHECK:         arith.divf
// CHECK:         arith.constant 1275070475 : i32
// CHECK:         arith.constant 0 : i64
// CHECK:         func.call @arignote_mpi_allreduce(
// CHECK-NOT:     arith.divf
// CHECK:         func.return

// CHECK-LABEL: func.func private @arignote_mpi_allreduce(%0: !llvm.ptr, %1: i32, %2: i32, %3: i64) -> i32 {
// CHECK:         %[[IN_PLACE:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr
// CHECK:         %[[SUM:.*]] = arith.constant 1476395011 : i32
// CHECK:         %[[WORLD:.*]] = arith.constant 1140850688 : i32
// CHECK:         func.call @MPI_Iallreduce(%[[IN_PLACE]], %0, %1, %2, %[[SUM]], %[[WORLD]], %{{.*}})
// CHECK:         cf.cond_br %{{.*}}, ^bb1, ^bb6(%{{.*}} : i32)
// CHECK:       ^bb1:
// CHECK:         func.call @MPI_Test(
// CHECK:         cf.cond_br %{{.*}}, ^bb6(%{{.*}} : i32), ^bb2
// CHECK:       ^bb2:
// CHECK:         cf.cond_br %{{.*}}, ^bb6(%{{.*}} : i32), ^bb3
// CHECK:       ^bb3:
// CHECK:         func.call @clock_gettime(
// CHECK:         cf.cond_br %{{.*}}, ^bb6(%{{.*}} : i32), ^bb4
// CHECK:       ^bb4:
// CHECK:         arith.constant 50000 : i64
// CHECK:         cf.cond_br %{{.*}}, ^bb5, ^bb1
// CHECK:       ^bb5:
// CHECK-NEXT:    func.call @sched_yield()
// CHECK-NEXT:    cf.br ^bb1
// CHECK:       ^bb6(%{{.*}}: i32):
// CHECK-NEXT:    func.return

// CHECK-COUNT-1: func.func private @MPI_Comm_size(i32, !llvm.ptr) -> i32
// CHECK:       func.func private @MPI_Iallreduce(!llvm.ptr, !llvm.ptr, i32, i32, i32, i32, !llvm.ptr) -> i32
// CHECK:       func.func private @MPI_Test(!llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK:       func.func private @arignote_mpi_error(i64, i64) -> ()
