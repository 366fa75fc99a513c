// Bad IR: `arignote-opt: error: <file>:<line>:<col>: <message>` on stderr, exit status 1;
// from stdin the file is `stdin`. --parsing-diagnostics gives xDSL's report on stderr (exit 0), nothing on stdout.
// RUN: not arignote-opt %s 2>&1 | filecheck %s
// RUN: not arignote-opt < %s 2>&1 | filecheck %s --check-prefix=STDIN
// RUN: arignote-opt %s --parsing-diagnostics 2>&1 >/dev/null | filecheck %s --check-prefix=DIAG
// RUN: arignote-opt %s --parsing-diagnostics 2>/dev/null | filecheck %s --check-prefix=NOOUT --allow-empty

// CHECK:      arignote-opt: error: {{.*}}parse-error.mlir:[[# @LINE + 11]]:3: Expected '>' after builtin parameter list
// CHECK-NOT:  {{.}}

// STDIN:      arignote-opt: error: stdin:[[# @LINE + 8]]:3: Expected '>'

// DIAG:       Expected '>' after builtin parameter list

// NOOUT-NOT:  {{.}}

func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = ag.exp %x : tensor<?xf32
  func.return %y : tensor<?xf32>
}
