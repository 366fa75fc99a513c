// Named pipelines are usable alone and inside a pass list; --print-ir-after-all shows
// the passes they expand to, on stderr (the output IR alone goes to stdout, here -o).
// RUN: arignote-opt %s -p cse,to-loops,dce --print-ir-after-all -o %t 2>&1 | filecheck %s
// RUN: arignote-opt %s --pass-pipeline='builtin.module(cse,func.func(to-loops),dce)' --mlir-print-ir-after-all -o %t 2>&1 | filecheck %s
// RUN: arignote-opt %s -p fast_compile --emit=llvm | filecheck %s --check-prefix=LLVM
// RUN: arignote-opt %s -p fast_run --emit=llvm | filecheck %s --check-prefix=LLVM
// RUN: arignote-opt %s -p to-llvm | filecheck %s --check-prefix=LLVM-DIALECT

// CHECK:      // -----// IR Dump After cse //----- //
// CHECK:      // -----// IR Dump After ag-to-loops //----- //
// CHECK:      func.func @f(
// CHECK:      arith.addi
// CHECK:      // -----// IR Dump After dce //----- //
// CHECK-NOT:  IR Dump

// LLVM:       define i32 @"f"(i32 %".1", i32 %".2")
// LLVM:         add i32
// LLVM:         mul i32
// LLVM:         ret i32

// LLVM-DIALECT:     llvm.func @f(
// LLVM-DIALECT-NOT: func.func

func.func @f(%a: i32, %b: i32) -> i32 {
  %c = arith.addi %a, %b : i32
  %d = arith.muli %c, %b : i32
  func.return %d : i32
}
