// RUN: arignote-opt %s -p merge-identical-functions | filecheck %s

// Two tasks with identical bodies (names aside) become one: the bodies merge first,
// then the tasks that now call the same body; calls and addresses follow the copy
// kept. A function with another body, and public functions, stay.

// CHECK:      llvm.func internal @k0__body(
// CHECK:      llvm.func internal @k0(
// CHECK-NOT:  @k1
// CHECK:      llvm.func internal @k2(
// CHECK:      llvm.func @public_a(
// CHECK:      llvm.func @public_b(
// CHECK:      llvm.func @f(
// CHECK-NEXT:   llvm.call @k0(
// CHECK-NEXT:   llvm.call @k0(
// CHECK-NEXT:   llvm.call @k2(
// CHECK-NEXT:   llvm.mlir.addressof @k0 : !llvm.ptr

llvm.func internal @k0__body(%a: i64) -> i64 {
  %b = llvm.add %a, %a : i64
  llvm.return %b : i64
}
llvm.func internal @k0(%a: i64) -> i64 {
  %r = llvm.call @k0__body(%a) : (i64) -> i64
  llvm.return %r : i64
}
llvm.func internal @k1__body(%a: i64) -> i64 {
  %b = llvm.add %a, %a : i64
  llvm.return %b : i64
}
llvm.func internal @k1(%a: i64) -> i64 {
  %r = llvm.call @k1__body(%a) : (i64) -> i64
  llvm.return %r : i64
}
llvm.func internal @k2(%a: i64) -> i64 {
  %b = llvm.mul %a, %a : i64
  llvm.return %b : i64
}
llvm.func @public_a(%a: i64) -> i64 {
  llvm.return %a : i64
}
llvm.func @public_b(%a: i64) -> i64 {
  llvm.return %a : i64
}
llvm.func @f(%a: i64) -> !llvm.ptr {
  %x = llvm.call @k0(%a) : (i64) -> i64
  %y = llvm.call @k1(%x) : (i64) -> i64
  %z = llvm.call @k2(%y) : (i64) -> i64
  %p = llvm.mlir.addressof @k1 : !llvm.ptr
  llvm.return %p : !llvm.ptr
}
