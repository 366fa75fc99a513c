// ag.parallel_for and ag.parallel_width print and parse back.
// RUN: arignote-opt %s | arignote-opt | filecheck %s

// CHECK-LABEL: func.func @f(
// CHECK:         %w = ag.parallel_width : index
// CHECK-NEXT:    %parts = ag.parallel_for %c0 to %n min_trips %c1 max_parts %w align 64 {
// CHECK-NEXT:    ^bb0(%begin: index, %end: index, %part: index):
// CHECK-NEXT:      scf.for %i = %begin to %end step %c1 {
// CHECK:           ag.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %parts_1 = ag.parallel_for %c0 to %n min_trips %c1 align 1 {
func.func @f(%x: memref<?xf32>) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %w = ag.parallel_width : index
  %parts = ag.parallel_for %c0 to %n min_trips %c1 max_parts %w align 64 {
  ^bb0(%begin: index, %end: index, %part: index):
    scf.for %i = %begin to %end step %c1 {
      %a = memref.load %x[%i] : memref<?xf32>
      memref.store %a, %x[%i] : memref<?xf32>
    }
    ag.yield
  }
  %parts_1 = ag.parallel_for %c0 to %n min_trips %c1 align 1 {
  ^bb0(%begin: index, %end: index, %part: index):
    ag.yield
  }
  func.return %parts : index
}
