// Bad pass pipelines are rejected before the input is processed: one `graphfuse-opt: error:` line, exit 1, no output.
// Unknown passes, with a 'did you mean' hint for a near miss of a graphfuse pass.
// RUN: not graphfuse-opt --pass-pipeline='builtin.module(graph-cses)' %s 2>&1 | FileCheck %s --check-prefix=NEAR-MISS --implicit-check-not=error: --implicit-check-not=module
// RUN: not graphfuse-opt --pass-pipeline='builtin.module(no-such-pass)' %s 2>&1 | FileCheck %s --check-prefix=UNKNOWN --implicit-check-not=error: --implicit-check-not='did you mean'
// Bad option values and unknown options.
// RUN: not graphfuse-opt --pass-pipeline='builtin.module(graph-canonicalize{fold-limit=abc})' %s 2>&1 | FileCheck %s --check-prefix=BAD-VALUE --implicit-check-not=error:
// RUN: not graphfuse-opt --pass-pipeline='builtin.module(graph-cse{foo=1})' %s 2>&1 | FileCheck %s --check-prefix=UNKNOWN-OPTION --implicit-check-not=error:
// RUN: not graphfuse-opt '--graph-cse=foo=1' %s 2>&1 | FileCheck %s --check-prefix=UNKNOWN-OPTION --implicit-check-not=error:
// Unbalanced parentheses.
// RUN: not graphfuse-opt --pass-pipeline='builtin.module(graph-cse' %s 2>&1 | FileCheck %s --check-prefix=UNCLOSED --implicit-check-not=error:
// RUN: not graphfuse-opt --pass-pipeline='builtin.module(graph-cse))' %s 2>&1 | FileCheck %s --check-prefix=EXTRA-CLOSE --implicit-check-not=error:
// Anchors: the whole pipeline must be on builtin.module, graphfuse passes may only nest in func.func.
// RUN: not graphfuse-opt --pass-pipeline='func.func(cse)' %s 2>&1 | FileCheck %s --check-prefix=ANCHOR --implicit-check-not=error:
// RUN: not graphfuse-opt --pass-pipeline='builtin.module(scf.for(graph-cse))' %s 2>&1 | FileCheck %s --check-prefix=NESTED-ANCHOR --implicit-check-not=error:
// --pass-pipeline and pass flags do not mix.
// RUN: not graphfuse-opt --pass-pipeline='builtin.module(cse)' --graph-dce %s 2>&1 | FileCheck %s --check-prefix=MIXED --implicit-check-not=error:
// No Python traceback in any of them.
// RUN: not graphfuse-opt --pass-pipeline='builtin.module(graph-cse' %s 2>&1 | FileCheck %s --check-prefix=NO-TRACEBACK
// RUN: not graphfuse-opt --pass-pipeline='builtin.module(graph-canonicalize{fold-limit=abc})' %s 2>&1 | FileCheck %s --check-prefix=NO-TRACEBACK

// NEAR-MISS: graphfuse-opt: error: invalid pass pipeline 'builtin.module(graph-cses)': 'graph-cses' does not refer to a registered pass or pass pipeline; did you mean 'graph-cse'?
// UNKNOWN: graphfuse-opt: error: invalid pass pipeline 'builtin.module(no-such-pass)': 'no-such-pass' does not refer to a registered pass or pass pipeline{{$}}
// BAD-VALUE: graphfuse-opt: error: invalid pass pipeline 'builtin.module(graph-canonicalize{fold-limit=abc})': option 'fold-limit' of pass 'graph-canonicalize' expects an integer, got 'abc'
// UNKNOWN-OPTION: graphfuse-opt: error: invalid pass pipeline 'builtin.module(graph-cse{foo=1})': pass 'graph-cse' has no option 'foo' (options: none)

// UNCLOSED:      graphfuse-opt: error: invalid pass pipeline: 1:25: expected ')' to close 'builtin.module(' opened at 1:15
// UNCLOSED-NEXT: {{^}}builtin.module(graph-cse{{$}}
// UNCLOSED-NEXT: {{^}}                        ^{{$}}

// EXTRA-CLOSE:      graphfuse-opt: error: invalid pass pipeline: 1:26: unbalanced ')' with no matching '('
// EXTRA-CLOSE-NEXT: {{^}}builtin.module(graph-cse)){{$}}
// EXTRA-CLOSE-NEXT: {{^}}                         ^{{$}}

// ANCHOR: graphfuse-opt: error: invalid pass pipeline 'func.func(cse)': the pipeline must be anchored on 'builtin.module', not 'func.func'
// NESTED-ANCHOR: graphfuse-opt: error: invalid pass pipeline 'builtin.module(scf.for(graph-cse))': graphfuse passes can be nested only directly under func.func, not in 'scf.for(graph-cse)'
// MIXED: graphfuse-opt: error: '--pass-pipeline' cannot be combined with individual pass flags

// NO-TRACEBACK-NOT: Traceback
// NO-TRACEBACK-NOT: internal error

func.func @valid(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
