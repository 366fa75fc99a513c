// RUN: arignote-opt %s -p outline-kernels | filecheck %s

// An op's kernel in an `scf.execute_region` (ag-to-loops{kernel_regions=true}) becomes a
// kernel when another region makes the same one, straight-line code around its loops
// included; a region of its own kind, or one that makes a stack slot, is replaced by its
// ops, whose loop nests become kernels. Nests that allocate (and free) their own
// buffers are status kernels when they repeat: each returns an i64 status, and its
// calls carry `arignote.alloc_status`; one of its own kind stays.

// CHECK-LABEL: func.func @g(
// CHECK:         func.call @g__k0(%a, %out) : (memref<?xf64>, memref<?xf64>) -> ()
// CHECK-NEXT:    func.call @g__k0(%out, %a) : (memref<?xf64>, memref<?xf64>) -> ()
// CHECK-NEXT:    %[[N:.*]] = memref.dim %a
// CHECK-NEXT:    func.call @g__k1(%[[N]], %a) : (index, memref<?xf64>) -> ()
// CHECK-NEXT:    %[[S:.*]] = memref.alloca() : memref<f64>
// CHECK-NEXT:    memref.store %{{.*}}, %[[S]][] : memref<f64>
// CHECK-NEXT:    %{{.*}} = func.call @g__k2(%a) {arignote.alloc_status} : (memref<?xf64>) -> i64
// CHECK-NEXT:    %{{.*}} = func.call @g__k2(%out) {arignote.alloc_status} : (memref<?xf64>) -> i64
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      %[[T:.*]] = memref.alloc
// CHECK-NEXT:      func.call @g__k3(%a, %[[T]])
// CHECK-NEXT:      memref.dealloc %[[T]]
// CHECK-NEXT:    }
// CHECK-NOT:     scf.execute_region

// CHECK:       func.func private @g__k0(%{{.*}}: memref<?xf64> {llvm.noalias}, %{{.*}}: memref<?xf64> {llvm.noalias}) attributes {arignote.kernel} {
// CHECK:         memref.dim
// CHECK:         scf.for
// CHECK:         func.return
// CHECK:       func.func private @g__k1(
// CHECK:       func.func private @g__k2(%{{.*}}: memref<?xf64> {llvm.noalias}) -> i64 attributes {arignote.kernel, arignote.alloc_status} {
// CHECK:         memref.alloc
// CHECK:         memref.dealloc
// CHECK:         %[[OK:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    func.return %[[OK]] : i64
// CHECK:       func.func private @g__k3(
// CHECK-NOT:   func.func private @g__k4

func.func @g(%a: memref<?xf64> {llvm.noalias}, %out: memref<?xf64> {llvm.noalias}) -> i64 attributes {arignote.alloc_status} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
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
    %n = memref.dim %out, %c0 : memref<?xf64>
    scf.for %i = %c0 to %n step %c1 {
      %x = memref.load %out[%i] : memref<?xf64>
      %y = arith.mulf %x, %two : f64
      memref.store %y, %a[%i] : memref<?xf64>
    }
    scf.yield
  }
  scf.execute_region {
    %n = memref.dim %a, %c0 : memref<?xf64>
    scf.for %i = %c0 to %n step %c1 {
      memref.store %two, %a[%i] : memref<?xf64>
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
  scf.for %j = %c0 to %c1 step %c1 {
    %n = memref.dim %out, %c0 : memref<?xf64>
    %t = memref.alloc(%n) : memref<?xf64>
    %x = memref.load %out[%j] : memref<?xf64>
    memref.store %x, %t[%j] : memref<?xf64>
    memref.dealloc %t : memref<?xf64>
  }
  scf.for %j = %c0 to %c1 step %c1 {
    %t = memref.alloc() : memref<4xf64>
    scf.for %k = %c0 to %c4 step %c1 {
      %x = memref.load %a[%k] : memref<?xf64>
      memref.store %x, %t[%k] : memref<4xf64>
    }
    memref.dealloc %t : memref<4xf64>
  }
  %r = arith.constant 0 : i64
  func.return %r : i64
}
