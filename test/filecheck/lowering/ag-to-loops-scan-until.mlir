// RUN: arignote-opt %s -p ag-to-loops | filecheck %s

// A repeat-until scan (Theano's `until`): the count result starts at n_steps; step t
// runs while t < count (an scf.if in the scf.for), computes its condition into a 0-d
// i1 buffer and, when it is true, sets the count to t + 1; after the loop only the
// rows of the steps run are copied into the result.

func.func @doubling(%n: tensor<i64>, %h0: tensor<1xf64>, %m: tensor<f64>) -> (tensor<?xf64>, tensor<i64>) {
  %hs, %k = ag.scan steps(%n : tensor<i64>) sequences() initials(%h0 : tensor<1xf64>) non_sequences(%m : tensor<f64>) attributes {sequence_taps = [], output_taps = [array<i64: -1>, array<i64>], until} -> tensor<?xf64>, tensor<i64> {
  ^bb0(%h: tensor<f64>, %mm: tensor<f64>):
    %d = ag.add %h, %h : tensor<f64>, tensor<f64> -> tensor<f64>
    %c = ag.gt %d, %mm : tensor<f64>, tensor<f64> -> tensor<i1>
    ag.yield %d, %c : tensor<f64>, tensor<i1>
  }
  func.return %hs, %k : tensor<?xf64>, tensor<i64>
}

// CHECK-LABEL: func.func @doubling(
// CHECK-SAME:      %out0: memref<?xf64> {llvm.noalias}, %out1: memref<i64> {llvm.noalias})
// CHECK:         %[[EXT:.*]] = memref.alloc(%{{.*}}) : memref<?xf64>
// CHECK:         %[[COND:.*]] = memref.alloc() : memref<i1>
// CHECK:         %[[N64:.*]] = arith.index_cast %[[N:.*]] : index to i64
// CHECK-NEXT:    memref.store %[[N64]], %out1[] : memref<i64>
// CHECK:         scf.for %[[T:.*]] = %{{.*}} to %[[N]] step %{{.*}} {
// CHECK-NEXT:      %[[K:.*]] = memref.load %out1[] : memref<i64>
// CHECK-NEXT:      %[[KI:.*]] = arith.index_cast %[[K]] : i64 to index
// CHECK-NEXT:      %[[LIVE:.*]] = arith.cmpi slt, %[[T]], %[[KI]] : index
// CHECK-NEXT:      scf.if %[[LIVE]] {
// CHECK:             arith.addf
// CHECK:             %[[C:.*]] = arith.cmpf ogt
// CHECK-NEXT:        memref.store %[[C]], %[[COND]][] : memref<i1>
// CHECK-NEXT:        %[[STOP:.*]] = memref.load %[[COND]][] : memref<i1>
// CHECK-NEXT:        scf.if %[[STOP]] {
// CHECK:               %[[NEXT:.*]] = arith.addi %[[T]], %{{.*}} : index
// CHECK-NEXT:          %[[NEXT64:.*]] = arith.index_cast %[[NEXT]] : index to i64
// CHECK-NEXT:          memref.store %[[NEXT64]], %out1[] : memref<i64>
// CHECK:         memref.dealloc %[[COND]] : memref<i1>
// CHECK:         %[[RAN64:.*]] = memref.load %out1[] : memref<i64>
// CHECK-NEXT:    %[[RAN:.*]] = arith.index_cast %[[RAN64]] : i64 to index
// CHECK-NEXT:    memref.subview %[[EXT]][1] [%[[RAN]]] [1]
// CHECK-NEXT:    memref.subview %out0[0] [%[[RAN]]] [1]
