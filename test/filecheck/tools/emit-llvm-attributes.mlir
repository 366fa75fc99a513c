// --emit=llvm gives every function the module defines the attributes of
// lowering/llvm/llvm_attributes.py (512-bit vectors preferred); declarations get none.
// RUN: arignote-opt %s --emit=llvm | filecheck %s

// CHECK:     declare float @"expf"(float %".1"){{$}}
// CHECK:     define float @"scale"(float %".1") "prefer-vector-width"="512"
// CHECK:     define void @"kernel"(ptr %".1") "prefer-vector-width"="512"

llvm.func @expf(f32) -> f32
llvm.func @scale(%a: f32) -> f32 {
  %c = llvm.call @expf(%a) : (f32) -> f32
  llvm.return %c : f32
}
llvm.func @kernel(%p: !llvm.ptr) {
  llvm.return
}
