"""Tests for graphfuse.pipelines.pipeline_parser (MLIR textual pass-pipeline syntax)."""

from __future__ import annotations

import pytest

from graphfuse.pipelines.pipeline_parser import (
    NestedPipeline,
    PassElement,
    PassOption,
    PipelineSyntaxError,
    parse_pass_list,
    parse_pipeline,
    split_list_value,
)

FUSION = (
    "builtin.module(graph-fusion{opt-level=2 disable-pass=add_layer_norm_fusion,matmul_elem_add_fusion}, "
    "graph-kernel-fusion{enable-expand-ops=Square}, canonicalize, graph-to-linalg)"
)
FUNC_NESTED = (
    "builtin.module(func.func(cse,canonicalize{max-iterations=3 region-simplify=disabled}),"
    "convert-vector-to-llvm{reassociate-fp-reductions=1})"
)
BUFFERIZE = (
    "builtin.module(one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map})"
)

CORPUS = [
    FUSION,
    FUNC_NESTED,
    BUFFERIZE,
    "builtin.module(cse)",
    "builtin.module()",
    "builtin.module(func.func())",
    "builtin.module(func.func(), cse)",
    "builtin.module(cse{})",
    'builtin.module(test-pass{test-option="a b" other=\'x, y}\'})',
    "builtin.module(test-pass{nested={x=1 y={z=2}} list=[1, 2, 3] call=f(a, b)})",
    'builtin.module(test-pass{nested={msg="}{" k=v}})',
    "builtin.module(gpu.module(gpu.func(cse)), func.func(loop-invariant-code-motion, cse))",
    "  builtin.module (  func.func ( cse ,canonicalize { max-iterations=3 } ) ,\n\tsymbol-dce  )  ",
    "builtin.module(\n  graph-fusion{\n    opt-level=2\n    disable-pass=a,b\n  },\n  canonicalize\n)",
    "builtin.module(convert-linalg-to-loops,convert-scf-to-cf,convert-cf-to-llvm,finalize-memref-to-llvm,"
    "convert-func-to-llvm,reconcile-unrealized-casts)",
    "builtin.module(sparse-compiler{enable-runtime-library=false parallelization-strategy=none vl=4})",
    "builtin.module(_private.pass-name.v2{flag-a flag_b})",
]


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("text", CORPUS)
def test_round_trip(text: str) -> None:
    tree = parse_pipeline(text)
    canonical = tree.to_text()
    again = parse_pipeline(canonical)
    assert again == tree
    assert again.to_text() == canonical


@pytest.mark.parametrize("text", CORPUS)
def test_top_level_span_covers_pipeline(text: str) -> None:
    tree = parse_pipeline(text)
    start, end = tree.span
    assert text[start:end] == text.strip()


def test_fusion_pipeline_structure() -> None:
    tree = parse_pipeline(FUSION)
    assert tree.anchor == "builtin.module"
    assert [e.name for e in tree.elements] == ["graph-fusion", "graph-kernel-fusion", "canonicalize", "graph-to-linalg"]
    fusion = tree.elements[0]
    assert isinstance(fusion, PassElement)
    assert fusion.options == (
        PassOption("opt-level", "2"),
        PassOption("disable-pass", "add_layer_norm_fusion,matmul_elem_add_fusion"),
    )
    assert fusion.options_dict() == {"opt-level": "2", "disable-pass": "add_layer_norm_fusion,matmul_elem_add_fusion"}
    assert tree.to_text() == (
        "builtin.module(graph-fusion{opt-level=2 disable-pass=add_layer_norm_fusion,matmul_elem_add_fusion},"
        "graph-kernel-fusion{enable-expand-ops=Square},canonicalize,graph-to-linalg)"
    )


def test_func_nested_structure() -> None:
    tree = parse_pipeline(FUNC_NESTED)
    func, llvm = tree.elements
    assert isinstance(func, NestedPipeline)
    assert func.anchor == "func.func"
    assert func.elements == (
        PassElement("cse"),
        PassElement("canonicalize", (PassOption("max-iterations", "3"), PassOption("region-simplify", "disabled"))),
    )
    assert llvm == PassElement("convert-vector-to-llvm", (PassOption("reassociate-fp-reductions", "1"),))
    assert tree.to_text() == FUNC_NESTED


def test_bare_flag_has_none_value() -> None:
    (element,) = parse_pipeline(BUFFERIZE).elements
    assert element.options == (
        PassOption("bufferize-function-boundaries", None),
        PassOption("function-boundary-type-conversion", "identity-layout-map"),
    )
    assert element.to_text() == (
        "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}"
    )


@pytest.mark.parametrize(
    ("options_text", "expected"),
    [
        ('test-option="a b"', '"a b"'),
        ("q='it, is } here'", "'it, is } here'"),
        ("nested={x=1 y=2}", "{x=1 y=2}"),
        ('nested={a="}" b={c=\'{\'}}', '{a="}" b={c=\'{\'}}'),
        ("paren=f(a, b)", "f(a, b)"),
        ("list=[1, [2, 3]]", "[1, [2, 3]]"),
        ('mixed=x"y z"w', 'mixed=x"y z"w'.split("=", 1)[1]),
        ("empty=\"\"", '""'),
    ],
)
def test_values_kept_whole(options_text: str, expected: str) -> None:
    text = f"builtin.module(p{{{options_text} flag}})"
    (element,) = parse_pipeline(text).elements
    assert element.options[0].value == expected
    assert element.options[1] == PassOption("flag", None)
    assert element.to_text() == f"p{{{options_text} flag}}"


def test_spans_point_into_text() -> None:
    text = "builtin.module( func.func(cse), canonicalize{max-iterations=3 x} )"
    tree = parse_pipeline(text)
    func, canon = tree.elements
    assert text[slice(*func.span)] == "func.func(cse)"
    assert text[slice(*func.elements[0].span)] == "cse"
    assert text[slice(*canon.span)] == "canonicalize{max-iterations=3 x}"
    assert [text[slice(*o.span)] for o in canon.options] == ["max-iterations=3", "x"]


def test_spans_do_not_affect_equality() -> None:
    assert parse_pipeline("builtin.module(cse)") == parse_pipeline("   builtin.module( cse )")
    assert PassElement("cse", (), (0, 3)) == PassElement("cse", (), (5, 8))


def test_empty_options_print_as_bare_name() -> None:
    (element,) = parse_pipeline("builtin.module(cse{ })").elements
    assert element == PassElement("cse")
    assert element.to_text() == "cse"


def test_ast_is_frozen() -> None:
    element = PassElement("cse")
    with pytest.raises(AttributeError):
        element.name = "other"  # type: ignore[misc]


# --------------------------------------------------------------------------- anchoring


def test_parse_pass_list_bare() -> None:
    elements = parse_pass_list(" cse , canonicalize{max-iterations=3}, func.func(cse) ")
    assert elements == (
        PassElement("cse"),
        PassElement("canonicalize", (PassOption("max-iterations", "3"),)),
        NestedPipeline("func.func", (PassElement("cse"),)),
    )


def test_parse_pass_list_accepts_anchored_text() -> None:
    assert parse_pass_list("builtin.module(cse)") == (NestedPipeline("builtin.module", (PassElement("cse"),)),)


def test_parse_pipeline_wraps_bare_list_with_default_anchor() -> None:
    tree = parse_pipeline("cse,canonicalize", default_anchor="builtin.module")
    assert tree == NestedPipeline("builtin.module", (PassElement("cse"), PassElement("canonicalize")))
    assert tree.to_text() == "builtin.module(cse,canonicalize)"


def test_parse_pipeline_wraps_list_starting_with_nested() -> None:
    tree = parse_pipeline("func.func(cse), canonicalize", default_anchor="builtin.module")
    assert tree.to_text() == "builtin.module(func.func(cse),canonicalize)"


def test_parse_pipeline_does_not_double_wrap() -> None:
    tree = parse_pipeline("builtin.module(cse)", default_anchor="builtin.module")
    assert tree.to_text() == "builtin.module(cse)"


def test_parse_pipeline_keeps_other_anchor() -> None:
    tree = parse_pipeline("func.func(cse)", default_anchor="builtin.module")
    assert tree.to_text() == "func.func(cse)"


def test_unanchored_pipeline_is_rejected() -> None:
    with pytest.raises(PipelineSyntaxError) as info:
        parse_pipeline("  cse,canonicalize")
    assert info.value.offset == 2
    assert "must be anchored" in info.value.message
    assert "builtin.module(...)" in info.value.message


# --------------------------------------------------------------------------- errors

ERROR_CASES = [
    # (id, text, offset, message fragment)
    ("empty", "", 0, "empty pass pipeline"),
    ("blank", "   \n ", 0, "empty pass pipeline"),
    ("unclosed-paren", "builtin.module(cse", 18, "expected ')' to close 'builtin.module(' opened at 1:15"),
    ("unclosed-inner-paren", "builtin.module(func.func(cse)", 29, "'builtin.module(' opened at 1:15"),
    ("unclosed-paren-after-comma", "builtin.module(func.func(cse,", 29, "missing pass name after ','"),
    ("unclosed-empty", "builtin.module(", 15, "expected ')' to close 'builtin.module('"),
    ("extra-close-paren", "builtin.module(cse))", 19, "unbalanced ')'"),
    ("close-paren-bare", "cse)", 3, "unbalanced ')'"),
    ("unclosed-options", "builtin.module(cse{a=1", 22, "expected '}' to close the options of 'cse' opened at 1:19"),
    ("unclosed-value-brace", "builtin.module(p{a={x=1 y=2)", 27, "mismatched ')'"),
    ("unclosed-value-brace-eof", "builtin.module(p{a={x=1", 23, "expected '}' to close '{' opened at 1:20"),
    ("unclosed-value-paren", "builtin.module(p{a=f(x})", 22, "mismatched '}'"),
    ("stray-value-paren", "builtin.module(p{a=x)})", 20, "unbalanced ')' in the value of option 'a'"),
    ("stray-close-brace", "builtin.module(cse})", 18, "unexpected character '}'"),
    ("unterminated-double-quote", 'builtin.module(p{a="x y})', 19, "unterminated \" string"),
    ("unterminated-single-quote", "builtin.module(p{a={b='x}})", 22, "unterminated ' string"),
    ("leading-comma", "builtin.module(,cse)", 15, "missing pass name before ','"),
    ("double-comma", "builtin.module(cse,,cse)", 19, "missing pass name before ','"),
    ("trailing-comma", "builtin.module(cse,)", 19, "missing pass name after ','"),
    ("missing-anchor", "builtin.module((cse))", 15, "missing op anchor name"),
    ("missing-name-before-options", "builtin.module({a=1})", 15, "missing pass name before '{'"),
    ("bad-name-start", "builtin.module(1cse)", 15, "expected a pass name, found '1'"),
    ("bad-char-in-list", "builtin.module(cse;canonicalize)", 18, "unexpected character ';'"),
    ("space-separated-passes", "builtin.module(cse canonicalize)", 19, "unexpected character 'c'"),
    ("text-after-close", "builtin.module(cse) cse", 20, "unexpected text after the closing ')' of 'builtin.module('"),
    ("second-pipeline", "builtin.module(cse),builtin.module(cse)", 19, "after the closing ')'"),
    ("empty-key", "builtin.module(p{=1})", 17, "missing option name before '='"),
    ("space-before-equals", "builtin.module(p{a =1})", 19, "missing option name before '='"),
    ("empty-value", "builtin.module(p{a= b})", 19, "missing value after 'a='"),
    ("bad-key-char", "builtin.module(p{a$=1})", 18, "unexpected character '$' after option name 'a'"),
    ("bad-key-start", "builtin.module(p{\"a\"=1})", 17, "expected an option name"),
    ("duplicate-key", "builtin.module(p{a=1 b a=2})", 23, "duplicate option 'a' for pass 'p' (first given at 1:18)"),
    ("duplicate-flag", "builtin.module(p{flag flag})", 22, "duplicate option 'flag'"),
    ("multiline", "builtin.module(\n  cse,\n  ,x)", 25, "missing pass name before ','"),
]


@pytest.mark.parametrize(
    ("text", "offset", "fragment"),
    [case[1:] for case in ERROR_CASES],
    ids=[case[0] for case in ERROR_CASES],
)
def test_error_offset_and_message(text: str, offset: int, fragment: str) -> None:
    with pytest.raises(PipelineSyntaxError) as info:
        parse_pipeline(text)
    error = info.value
    assert error.offset == offset, error.render()
    assert fragment in error.message, error.render()
    assert error.text == text


@pytest.mark.parametrize(
    ("text", "offset"),
    [case[1:3] for case in ERROR_CASES],
    ids=[case[0] for case in ERROR_CASES],
)
def test_render_points_caret_at_offset(text: str, offset: int) -> None:
    with pytest.raises(PipelineSyntaxError) as info:
        parse_pipeline(text)
    error = info.value
    header, source_line, caret_line = error.render().split("\n")
    line_start = text.rfind("\n", 0, offset) + 1
    assert header == f"{error.line}:{offset - line_start + 1}: {error.message}"
    assert text[line_start:].startswith(source_line)
    assert caret_line == " " * (offset - line_start) + "^"


def test_render_example() -> None:
    text = "builtin.module(cse"
    with pytest.raises(PipelineSyntaxError) as info:
        parse_pipeline(text)
    assert info.value.render() == (
        "1:19: expected ')' to close 'builtin.module(' opened at 1:15\n"
        "builtin.module(cse\n"
        "                  ^"
    )
    assert str(info.value) == "1:19: expected ')' to close 'builtin.module(' opened at 1:15"


def test_render_multiline_shows_offending_line() -> None:
    text = "builtin.module(\n  cse,\n  ,x)"
    with pytest.raises(PipelineSyntaxError) as info:
        parse_pipeline(text)
    assert info.value.render() == "3:3: missing pass name before ','\n  ,x)\n  ^"


@pytest.mark.parametrize(
    ("text", "offset", "fragment"),
    [
        ("", 0, "empty"),
        ("cse,,x", 4, "missing pass name before ','"),
        ("cse{a=1 a}", 8, "duplicate option 'a'"),
        ("cse)", 3, "unbalanced ')'"),
        ("cse}", 3, "unbalanced '}'"),
        ("cse,", 4, "missing pass name after ','"),
        ("cse canonicalize", 4, "expected ',' or end of pipeline"),
        ("  ", 0, "empty"),
    ],
)
def test_pass_list_errors(text: str, offset: int, fragment: str) -> None:
    with pytest.raises(PipelineSyntaxError) as info:
        parse_pass_list(text)
    assert info.value.offset == offset
    assert fragment in info.value.message


def test_default_anchor_does_not_hide_errors() -> None:
    with pytest.raises(PipelineSyntaxError) as info:
        parse_pipeline("cse,,x", default_anchor="builtin.module")
    assert info.value.offset == 4


# --------------------------------------------------------------------------- split_list_value


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("a,b,c", ["a", "b", "c"]),
        ("add_layer_norm_fusion,matmul_elem_add_fusion", ["add_layer_norm_fusion", "matmul_elem_add_fusion"]),
        ("a,b,{c,d},e", ["a", "b", "{c,d}", "e"]),
        (" a , b ,, c ,", ["a", "b", "c"]),
        ("", []),
        (" , ", []),
        ("single", ["single"]),
        ('"x,y",z', ['"x,y"', "z"]),
        ("'p,{q',r", ["'p,{q'", "r"]),
        ("f(a,b),[1,2],{x={y,z}}", ["f(a,b)", "[1,2]", "{x={y,z}}"]),
        ('{a="}",b},c', ['{a="}",b}', "c"]),
    ],
)
def test_split_list_value(value: str, expected: list[str]) -> None:
    assert split_list_value(value) == expected


def test_split_list_value_of_parsed_option() -> None:
    (fusion, *_) = parse_pipeline(FUSION).elements
    assert split_list_value(fusion.options_dict()["disable-pass"]) == [
        "add_layer_norm_fusion",
        "matmul_elem_add_fusion",
    ]
