"""Generate ``graph.irdl.mlir`` from the op catalog.

The IRDL file is what upstream ``mlir-opt --irdl-file`` loads; the catalog is
where each op is defined once.  Regenerate with ``make irdl`` (a test fails
when the committed file is stale).

IRDL checks the structure: operand and result counts (with optional and
variadic groups), that every value is a ranked tensor, and the required
attributes' kinds.  What IRDL cannot express is left to ``graph-verify``:
element types, ranks, broadcasting, and the optional attributes (IRDL has no
optional attributes, and undeclared attributes pass its verifier).
"""

from __future__ import annotations

import sys

from graphfuse.dialect.catalog import AttrKind, AttrSpec, OpSpec, ValueSpec, all_ops

HEADER = """\
// The graph dialect, for `mlir-opt --irdl-file=dialect/graph.irdl.mlir`.
//
// GENERATED from the graphfuse op catalog (dialect/ops/) by
// `python -m graphfuse.dialect.irdl_gen`: do not edit by hand.
// Each operand and result gets its own constraint value, because reusing one
// IRDL constraint for several values forces their types to be identical.
// Optional attributes are not declared (IRDL has none); graph-verify checks
// them together with element types, ranks and broadcasting.
"""


class _OpWriter:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0

    def constraint(self, text: str, hint: str) -> str:
        name = f"%{hint}{self.count}"
        self.count += 1
        self.lines.append(f"    {name} = {text}")
        return name

    def value_list(self, values: tuple[ValueSpec, ...], hint: str) -> str:
        parts = []
        for v in values:
            c = self.constraint('irdl.base "!builtin.tensor"', hint)
            arity = "" if v.arity == "single" else f"{v.arity} "
            parts.append(f"{v.name}: {arity}{c}")
        return ", ".join(parts)

    def attribute(self, spec: AttrSpec) -> str:
        kind = spec.kind
        if kind is AttrKind.BOOL:
            true = self.constraint("irdl.is true", "b")
            false = self.constraint("irdl.is false", "b")
            return self.constraint(f"irdl.any_of({true}, {false})", "a")
        if kind is AttrKind.STRING and spec.choices:
            options = [self.constraint(f'irdl.is "{c}"', "s") for c in spec.choices]
            return self.constraint(f"irdl.any_of({', '.join(options)})", "a")
        base = {
            AttrKind.I64: "#builtin.integer",
            AttrKind.I64_ARRAY: "#builtin.dense_array",
            AttrKind.F32: "#builtin.float",
            AttrKind.STRING: "#builtin.string",
        }[kind]
        return self.constraint(f'irdl.base "{base}"', "a")


def operation_text(spec: OpSpec) -> str:
    w = _OpWriter()
    operands = w.value_list(spec.operands, "in")
    results = w.value_list(spec.results, "out")
    required = [(a.name, w.attribute(a)) for a in spec.attrs if a.required]
    body = list(w.lines)
    if spec.operands:
        body.append(f"    irdl.operands({operands})")
    if required:
        body.append("    irdl.attributes {" + ", ".join(f'"{n}" = {c}' for n, c in required) + "}")
    body.append(f"    irdl.results({results})")
    optional = [a for a in spec.attrs if not a.required]
    comment = f"  // {spec.summary}"
    if optional:
        comment += "\n  // optional: " + ", ".join(f"{a.name} (default {_default_text(a)})" for a in optional)
    return f"{comment}\n  irdl.operation @{spec.name} {{\n" + "\n".join(body) + "\n  }"


def _default_text(spec: AttrSpec) -> str:
    value = spec.default
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if value is None:
        return "none"
    return str(value)


def generate() -> str:
    ops = sorted(all_ops(), key=lambda s: s.name)
    return HEADER + "irdl.dialect @graph {\n" + "\n\n".join(operation_text(s) for s in ops) + "\n}\n"


def main() -> None:
    sys.stdout.write(generate())


if __name__ == "__main__":
    main()
