"""Small graphs the tests of compiled code share: dynamic rows in bf16, and a division that a run-time check
guards (its divisor may be 0)."""

#: rms_norm then silu over rows of any count, bf16
DYNAMIC = """func.func @rows(%x: tensor<?x48xbf16>, %g: tensor<48xbf16>) -> tensor<?x48xbf16> {
  %0 = "graph.rms_norm"(%x, %g) {epsilon = 1.0e-6 : f32} : (tensor<?x48xbf16>, tensor<48xbf16>) -> tensor<?x48xbf16>
  %1 = "graph.silu"(%0) : (tensor<?x48xbf16>) -> tensor<?x48xbf16>
  return %1 : tensor<?x48xbf16>
}
"""

#: an integer division: a zero divisor fails the run-time check at line 2
DIVISION = """func.func @divide(%a: tensor<8xi32>, %b: tensor<8xi32>) -> tensor<8xi32> {
  %0 = "graph.div"(%a, %b) : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  return %0 : tensor<8xi32>
}
"""
