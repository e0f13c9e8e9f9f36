"""graph-verify (``verify_operation``) on parsed modules: messages and locations."""

from __future__ import annotations

import pytest
from mlir import ir

from graphfuse.dialect.context import make_context
from graphfuse.dialect.diagnostics import Diagnostic, SourceLoc
from graphfuse.dialect.verifier import verify_operation


def parse(text: str, allow_unregistered: bool = False) -> ir.Module:
    context = make_context(allow_unregistered_dialects=allow_unregistered)
    with context:
        return ir.Module.parse(text)


def diagnose(text: str, allow_unregistered: bool = False) -> list[Diagnostic]:
    return verify_operation(parse(text, allow_unregistered).operation)


VALID = """
func.func private @helper(%x: tensor<?x8xbf16>) -> tensor<?x8xbf16> {
  %0 = "graph.gelu"(%x) {approximate = "tanh"} : (tensor<?x8xbf16>) -> tensor<?x8xbf16>
  return %0 : tensor<?x8xbf16>
}
func.func @main(%x: tensor<?x8xbf16>, %w: tensor<16x8xbf16>, %m: tensor<8xi1>) -> (tensor<?x16xbf16>, tensor<?x8xi8>) {
  %c = arith.constant dense<1.0> : tensor<8xbf16>
  %0 = func.call @helper(%x) : (tensor<?x8xbf16>) -> tensor<?x8xbf16>
  %1 = "graph.select"(%m, %0, %c) : (tensor<8xi1>, tensor<?x8xbf16>, tensor<8xbf16>) -> tensor<?x8xbf16>
  %2 = "graph.matmul"(%1, %w) {transpose_b = true} : (tensor<?x8xbf16>, tensor<16x8xbf16>) -> tensor<?x16xbf16>
  %3:2 = "graph.dynamic_quant"(%1) : (tensor<?x8xbf16>) -> (tensor<?x8xi8>, tensor<?xf32>)
  return %2, %3#0 : tensor<?x16xbf16>, tensor<?x8xi8>
}
"""


def test_valid_module_has_no_diagnostics() -> None:
    assert diagnose(VALID) == []


def test_module_without_graph_ops() -> None:
    assert diagnose("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}") == []
    assert diagnose("") == []


BROADCAST = """func.func @f(%a: tensor<4x8xf32>, %b: tensor<3xf32>) -> tensor<4x8xf32> {
  %0 = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<3xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
"""


def test_broadcast_message_and_location() -> None:
    (diag,) = diagnose(BROADCAST)
    assert diag.severity == "error"
    assert diag.message == "'graph.add' operands tensor<4x8xf32> and tensor<3xf32> are not broadcast-compatible"
    # The bindings name a parsed string "-"; line and column are those of the op in the text.
    assert diag.location == SourceLoc("-", 2, 8)
    assert str(diag) == (
        "-:2:8: error: 'graph.add' operands tensor<4x8xf32> and tensor<3xf32> are not broadcast-compatible"
    )
    assert diag.notes == []


KEY_CASES = """func.func @f(%x: tensor<4x8xf32>, %i: tensor<4x8xi32>, %g: tensor<8xf32>) {
  %0 = "graph.exp"(%i) : (tensor<4x8xi32>) -> tensor<4x8xi32>
  %1 = "graph.add"(%x, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf16>
  %2 = "graph.softmax"(%x) {axis = 2 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
      %3 = "graph.reshape"(%x) : (tensor<4x8xf32>) -> tensor<5x6xf32>
  %4 = "graph.gelu"(%x) {approximate = "erf"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = "graph.softmax"(%x) {dim = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = "graph.matmul"(%x, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = "graph.layer_norm"(%x, %x, %g) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %8 = "graph.isfinite"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %9:2 = "graph.split"(%g) {axis = 0, sizes = array<i64: 2, 5>} : (tensor<8xf32>) -> (tensor<2xf32>, tensor<5xf32>)
  return
}
"""

EXPECTED_KEY_CASES = [
    (2, 8, "'graph.exp' operand tensor<4x8xi32> must have a floating-point element type (f32, f16, bf16)"),
    (3, 8, "'graph.add' result #0 has type tensor<4x8xf16>, but its operands and attributes give tensor<4x8xf32>"),
    (4, 8, "'graph.softmax' axis 2 is out of range for rank 2"),
    (5, 12, "'graph.reshape' operand tensor<4x8xf32> has 32 elements but result type tensor<5x6xf32> has 30"),
    (6, 8, "'graph.gelu' attribute 'approximate' must be one of \"none\", \"tanh\", got \"erf\""),
    (7, 8, "'graph.softmax' has unknown attribute 'dim' (known attributes: axis)"),
    (8, 8, "'graph.matmul' contraction dimensions differ: operand a tensor<4x8xf32> has 8, "
           "operand b tensor<4x8xf32> has 4"),
    (9, 8, "'graph.layer_norm' operand gamma tensor<4x8xf32> must have the normalized shape of x tensor<4x8xf32> "
           "from axis 1 (tensor<8xf32>)"),
    (10, 8, "'graph.isfinite' result #0 has type tensor<4x8xf32>, but its operands and attributes give "
            "tensor<4x8xi1>"),
    (11, 10, "'graph.split' sizes [2, 5] sum to 7, not to the size 8 of dimension 0 of tensor<8xf32>"),
]


def test_every_invalid_op_is_reported_in_order_with_its_location() -> None:
    diags = diagnose(KEY_CASES)
    got = [(d.location.line, d.location.col, d.message) for d in diags]
    assert got == EXPECTED_KEY_CASES
    assert all(d.location.file == "-" and d.severity == "error" for d in diags)


@pytest.mark.parametrize(("line", "col", "message"), EXPECTED_KEY_CASES)
def test_key_case_alone(line: int, col: int, message: str) -> None:
    """Each case on its own still gives exactly its diagnostic (no cascade from the other ops)."""
    lines = KEY_CASES.splitlines()
    text = "\n".join([*lines[: 1], *[""] * (line - 2), lines[line - 1], "  return", "}"])
    (diag,) = diagnose(text)
    assert (diag.location.line, diag.location.col, diag.message) == (line, col, message)


def test_locations_inside_name_fused_and_callsite_locations() -> None:
    text = """func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xi32> loc("model.py":13:5)
  %1 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xi32> loc("relu"("model.py":7:2))
  %2 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xi32> loc(fused["x", "model.py":9:1])
  %3 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xi32> loc(callsite("layer.py":11:3 at "model.py":1:1))
  %4 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xi32> loc(unknown)
  return %a : tensor<4xf32>
}
"""
    diags = diagnose(text)
    assert [d.location for d in diags] == [
        SourceLoc("model.py", 13, 5),
        SourceLoc("model.py", 7, 2),
        SourceLoc("model.py", 9, 1),
        SourceLoc("layer.py", 11, 3),
        None,
    ]
    message = "'graph.exp' result #0 has type tensor<4xi32>, but its operands and attributes give tensor<4xf32>"
    assert all(d.message == message for d in diags)
    assert str(diags[-1]) == f"error: {message}"


def test_nested_ops_and_other_dialects() -> None:
    text = """func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "other.op"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "other.wrap"() ({
    %2 = "graph.neg"(%0) : (tensor<4xf32>) -> tensor<4xi32>
    "other.yield"() : () -> ()
  }) : () -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
"""
    (diag,) = diagnose(text, allow_unregistered=True)
    assert diag.location == SourceLoc("-", 4, 10)
    assert diag.message.startswith("'graph.neg' result #0 has type tensor<4xi32>")


def test_verify_a_single_function() -> None:
    module = parse(BROADCAST + VALID)
    funcs = list(module.body.operations)
    assert len(verify_operation(funcs[0].operation)) == 1
    assert verify_operation(funcs[1].operation) == []
    assert verify_operation(funcs[2].operation) == []


def test_unsupported_element_type_and_discardable_attributes() -> None:
    text = """func.func @f(%a: tensor<4xf64>, %b: tensor<4xf32>) {
  %0 = "graph.exp"(%a) : (tensor<4xf64>) -> tensor<4xf64>
  %1 = "graph.exp"(%b) {graph.kernel = "k0", npu.no_task} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "graph.exp"(%b) : (tensor<4xf32>) -> tensor<4xui8>
  return
}
"""
    allowed = "(expected one of bf16, f16, f32, i1, i32, i64, i8)"
    diags = diagnose(text)
    assert [(d.location.line, d.message) for d in diags] == [
        (2, f"'graph.exp' operand #0 has unsupported element type f64 {allowed}"),
        (4, f"'graph.exp' result #0 has unsupported element type ui8 {allowed}"),
    ]
