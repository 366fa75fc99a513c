// RUN: arignote-opt %s -p outline-kernels | filecheck %s

// An op's kernel in an `scf.execute_region` (ag-to-loops{kernel_regions=true}) becomes a
// kernel, straight-line code around its loops included; one that makes a stack slot
// is replaced by its ops. A nest that allocates (and frees) its own buffer is a status
// kernel: it returns an i64 status, and its call carries `arignote.alloc_status`.

// CHECK-LABEL: func.func @g(
// CHECK-NEXT:    %{{.*}} = arith.constant 0 : index
// CHECK:         func.call @g__k0(%a, %out) : (memref<?xf64>, memref<?xf64>) -> ()
// CHECK-NEXT:    %[[S:.*]] = memref.alloca() : memref<f64>
// CHECK-NEXT:    memref.store %{{.*}}, %[[S]][] : memref<f64>
// CHECK-NEXT:    %{{.*}} = func.call @g__k1(%a) {arignote.alloc_status} : (memref<?xf64>) -> i64
// CHECK-NEXT:    %{{.*}} = arith.constant 0 : i64
// CHECK-NEXT:    func.return
// CHECK-NOT:     scf.execute_region

// CHECK:       func.func private @g__k0(%{{.*}}: memref<?xf64> {llvm.noalias}, %{{.*}}: memref<?xf64> {llvm.noalias}) attributes {arignote.kernel} {
// CHECK:         memref.dim
// CHECK:         scf.for
// CHECK:         func.return
// CHECK:       func.func private @g__k1(%{{.*}}: memref<?xf64> {llvm.noalias}) -> i64 attributes {arignote.kernel, arignote.alloc_status} {
// CHECK:         memref.alloc
// CHECK:         memref.dealloc
// CHECK:         %[[OK:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    func.return %[[OK]] : i64

func.func @g(%a: memref<?xf64> {llvm.noalias}, %out: memref<?xf64> {llvm.noalias}) -> i64 attributes {arignote.alloc_status} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f64
  scf.execute_region {
    %n = memref.dim %a, %c0 : memref<?xf64>
    scf.for %i = %c0 to %n step %c1 {
      %x = memref.load %a[%i] : memref<?xf64>
      %y = arith.mulf %x, %two : f64
      memref.store %y, %out[%i] : memref<?xf64>
    }
    scf.yield
  }
  scf.execute_region {
    %s = memref.alloca() : memref<f64>
    memref.store %two, %s[] : memref<f64>
    scf.yield
  }
  scf.for %j = %c0 to %c1 step %c1 {
    %n = memref.dim %a, %c0 : memref<?xf64>
    %t = memref.alloc(%n) : memref<?xf64>
    %x = memref.load %a[%j] : memref<?xf64>
    memref.store %x, %t[%j] : memref<?xf64>
    memref.dealloc %t : memref<?xf64>
  }
  %r = arith.constant 0 : i64
  func.return %r : i64
}
