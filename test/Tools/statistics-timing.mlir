// --mlir-pass-statistics (one block per pass, `(S) value name - description`) and --mlir-timing (one row per pass plus parsing, output and Total), both on stderr.
// RUN: graphfuse-opt --mlir-pass-statistics --graph-cse --cse --graph-dce --graph-verify %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// RUN: graphfuse-opt --mlir-pass-statistics --pass-pipeline='builtin.module(func.func(cse,canonicalize),graph-cse)' %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS-NESTED
// RUN: graphfuse-opt --mlir-timing --graph-cse --cse --graph-dce %s 2>&1 >/dev/null | FileCheck %s --check-prefix=TIMING
// The displays: statistics as a list merged by pass name; timing as a list merged by name.
// RUN: graphfuse-opt --mlir-pass-statistics --mlir-pass-statistics-display=list --pass-pipeline='builtin.module(func.func(cse,canonicalize),graph-cse,func.func(cse))' %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS-LIST
// RUN: graphfuse-opt --mlir-timing --mlir-timing-display=list --pass-pipeline='builtin.module(func.func(cse,canonicalize),graph-cse,func.func(cse))' %s 2>&1 >/dev/null | FileCheck %s --check-prefix=TIMING-LIST
// RUN: not graphfuse-opt --mlir-timing --mlir-timing-display=flat %s 2>&1 | FileCheck %s --check-prefix=BAD-DISPLAY
// Both together: statistics first, then timing; the transformed IR still goes to stdout.
// RUN: graphfuse-opt --mlir-pass-statistics --mlir-timing --graph-cse --graph-dce %s 2>&1 >/dev/null | FileCheck %s --check-prefix=BOTH
// RUN: graphfuse-opt --mlir-pass-statistics --mlir-timing --graph-cse --graph-dce %s 2>/dev/null | FileCheck %s

// STATS:      ===-------------------------------------------------------------------------===
// STATS-NEXT:                          ... Pass statistics report ...
// STATS-NEXT: ===-------------------------------------------------------------------------===
// STATS-NEXT: graph-cse
// STATS-NEXT:   (S) 1 num-cse'd - Number of operations CSE'd
// STATS-NEXT: CSE
// STATS-NEXT:   (S) 0 num-cse'd - Number of operations CSE'd
// STATS-NEXT:   (S) 0 num-dce'd - Number of operations DCE'd
// STATS-NEXT: graph-dce
// STATS-NEXT:   (S) 1 num-erased - Number of dead operations erased
// STATS-NEXT: graph-verify
// STATS-NEXT:   (S) 2 num-ops-checked - Number of graph ops verified
// STATS-EMPTY:

// STATS-NESTED:      ... Pass statistics report ...
// STATS-NESTED:      'func.func' Pipeline
// STATS-NESTED-NEXT:   CSE
// STATS-NESTED-NEXT:     (S) 0 num-cse'd - Number of operations CSE'd
// STATS-NESTED-NEXT:     (S) 0 num-dce'd - Number of operations DCE'd
// STATS-NESTED-NEXT:   Canonicalizer
// STATS-NESTED-NEXT: graph-cse
// STATS-NESTED-NEXT:   (S) 1 num-cse'd - Number of operations CSE'd
// STATS-NESTED-EMPTY:

// Both CSE runs summed; Canonicalizer (no statistics) left out; sorted by pass name.
// STATS-LIST:      ... Pass statistics report ...
// STATS-LIST-NEXT: ===
// STATS-LIST-NEXT:   CSE
// STATS-LIST-NEXT:     (S) 0 num-cse'd - Number of operations CSE'd
// STATS-LIST-NEXT:     (S) 0 num-dce'd - Number of operations DCE'd
// STATS-LIST-NEXT:   graph-cse
// STATS-LIST-NEXT:     (S) 1 num-cse'd - Number of operations CSE'd
// STATS-LIST-EMPTY:

// TIMING-LIST:     ----Wall Time----  ----Name----
// TIMING-LIST-NEXT: (100.0%)  root
// TIMING-LIST-DAG: {{%\)}}  Parser
// TIMING-LIST-DAG: {{%\)}}  'func.func' Pipeline
// TIMING-LIST-DAG: {{%\)}}  Pipeline Collection : ['func.func']
// TIMING-LIST-DAG: {{%\)}}  CSE
// TIMING-LIST-DAG: {{%\)}}  (A) DominanceInfo
// TIMING-LIST-DAG: {{%\)}}  Canonicalizer
// TIMING-LIST-DAG: {{%\)}}  graph-cse
// TIMING-LIST-DAG: {{%\)}}  Output
// TIMING-LIST:     {{%\)}}  Rest
// TIMING-LIST-NEXT: (100.0%)  Total

// BAD-DISPLAY: graphfuse-opt: error: for the --mlir-timing-display option: Cannot find option named 'flat'!

// TIMING:      ===-------------------------------------------------------------------------===
// TIMING-NEXT:                          ... Execution time report ...
// TIMING-NEXT: ===-------------------------------------------------------------------------===
// TIMING-NEXT:   Total Execution Time: {{[0-9]+\.[0-9][0-9][0-9][0-9]}} seconds
// TIMING-EMPTY:
// TIMING-NEXT:   ----Wall Time----  ----Name----
// TIMING-NEXT:   {{ *[0-9]+\.[0-9][0-9][0-9][0-9] \( *[0-9]+\.[0-9]%\)}}  Parser
// TIMING-NEXT:   {{ *[0-9]+\.[0-9][0-9][0-9][0-9] \( *[0-9]+\.[0-9]%\)}}  graph-cse
// TIMING-NEXT:   {{ *[0-9]+\.[0-9][0-9][0-9][0-9] \( *[0-9]+\.[0-9]%\)}}  CSE
// TIMING-NEXT:   {{ *[0-9]+\.[0-9][0-9][0-9][0-9] \( *[0-9]+\.[0-9]%\)}}    (A) DominanceInfo
// TIMING-NEXT:   {{ *[0-9]+\.[0-9][0-9][0-9][0-9] \( *[0-9]+\.[0-9]%\)}}  graph-dce
// TIMING-NEXT:   {{ *[0-9]+\.[0-9][0-9][0-9][0-9] \( *[0-9]+\.[0-9]%\)}}  Output
// TIMING-NEXT:   {{ *[0-9]+\.[0-9][0-9][0-9][0-9] \( *[0-9]+\.[0-9]%\)}}  Rest
// TIMING-NEXT:   {{ *[0-9]+\.[0-9][0-9][0-9][0-9]}} (100.0%)  Total
// TIMING-NOT:  {{.}}

// BOTH:     ... Pass statistics report ...
// BOTH:     graph-cse
// BOTH:     graph-dce
// BOTH:     ... Execution time report ...
// BOTH:     Total Execution Time:
// BOTH:     graph-cse
// BOTH:     graph-dce
// BOTH:     Total
// BOTH-NOT: func.func

// CHECK-NOT:   Pass statistics report
// CHECK-NOT:   Execution time report
// CHECK-LABEL: func.func @duplicate_and_dead
// CHECK-NEXT:    "graph.add"
// CHECK-NEXT:    "graph.mul"
// CHECK-NEXT:    return
func.func @duplicate_and_dead(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = "graph.mul"(%0, %1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.exp"(%2) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
