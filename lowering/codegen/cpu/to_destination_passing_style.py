"""to-destination-passing-style: the entry writes its results into output arguments the caller passes.

The caller does not write destination-passing style: this pass appends one output tensor argument per result and
wraps each returned value in ``bufferization.materialize_in_destination %rK in %outK``, so that after
``eliminate-empty-tensors`` the op producing a result writes straight into the caller's buffer.  A value returned
twice is copied from the first output into the second.  Inputs are marked ``bufferization.writable = false``: the
code never writes into the caller's arrays.  Booleans cross the boundary as bytes (``memref<...xi1>`` stores do
not lower; numpy keeps a bool in a byte): an i1 input is read as "byte != 0", an i1 result is zero-extended.

The pass marks the function as the pipeline's entry and records its signature as written
(:mod:`~graphfuse.lowering.codegen.cpu.entry`): the later passes and the runtime read both from the IR.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.lowering.codegen.cpu.entry import ENTRY, SIGNATURE, find_function
from graphfuse.lowering.codegen.cpu.specs import arg_spec
from graphfuse.lowering.codegen.cpu.store_booleans_as_bytes import nonzero_bytes
from graphfuse.pipelines.pass_base import GraphPass, PassContext, option

__all__ = ["ToDestinationPassingStyle", "to_destination_passing_style"]


@dataclass(frozen=True)
class ToDestinationPassingStyle(GraphPass):
    name: ClassVar[str] = "to-destination-passing-style"
    summary: ClassVar[str] = ("Make the entry write its results into output arguments (the CPU pipeline's first "
                              "step; marks the entry for the passes after it)")
    entry: str = option("", "the function to compile")

    def run(self, module: ir.Module, context: PassContext) -> None:
        if not self.entry:
            context.fail(f"{self.name} needs the entry function's name: {self.name}{{entry=NAME}}")
        to_destination_passing_style(module, self.entry)


def to_destination_passing_style(module: ir.Module, entry: str) -> None:
    """Rewrite the entry in place to destination-passing style; mark it as the entry, with its signature."""
    func = find_function(module, entry)
    nblocks = len(list(func.regions[0].blocks))
    if nblocks == 0:
        raise GraphfuseError(f"@{entry} is a declaration; it has no body to compile")
    if nblocks != 1:
        raise GraphfuseError(f"@{entry} must have a single block (use structured control flow)")
    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    inputs = [arg_spec(t, f"@{entry} argument {i}") for i, t in enumerate(ftype.inputs)]
    outputs = [arg_spec(t, f"@{entry} result {k}") for k, t in enumerate(ftype.results)]
    if not outputs:
        raise GraphfuseError(f"@{entry} returns nothing")
    block = func.regions[0].blocks[0]
    ret = block.operations[len(block.operations) - 1]
    if ret.operation.name != "func.return":
        raise GraphfuseError(f"@{entry}: expected func.return as the last operation")
    loc = ir.Location.unknown()
    # memref<...xi1> stores do not lower (LLVM 22): i1 crosses the boundary as i8 (numpy bool is one byte)
    in_types = [_boundary_type(t) for t in ftype.inputs]
    out_types = [_boundary_type(t) for t in ftype.results]
    first = block.operations[0]
    for arg, t in zip(block.arguments, in_types, strict=True):
        if t != arg.type:
            orig = arg.type
            arg.set_type(t)
            with ir.InsertionPoint(first):
                conv = _convert_generic(arg, orig, _NONZERO, None)
            # the conversion and the sizes of its empty result (dynamic dims) read the argument itself
            sizes = [size.owner.operation for size in conv.outputs[0].owner.operands]
            arg.replace_all_uses_except(conv.result, [conv.operation, *sizes])
    out_args = [block.add_argument(t, loc) for t in out_types]
    with ir.InsertionPoint(ret):
        new_results = []
        materialized: dict[ir.Value, ir.Value] = {}
        for value, dest in zip(list(ret.operands), out_args, strict=True):
            original = value
            if dest.type != value.type:
                value = _convert_generic(value, dest.type, "arith.extui", None).result
            elif value in materialized:  # returned twice: copy the first output buffer into this one
                value = _convert_generic(materialized[value], dest.type, None, dest).result
            m = ir.Operation.create(
                "bufferization.materialize_in_destination", results=[dest.type], operands=[value, dest], loc=loc
            )
            materialized.setdefault(original, m.result)
            new_results.append(m.result)
    for k, v in enumerate(new_results):
        ret.operands[k] = v
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(in_types + out_types, out_types))
    not_writable = ir.DictAttr.get({"bufferization.writable": ir.BoolAttr.get(False)})
    empty = ir.DictAttr.get({})
    func.attributes["arg_attrs"] = ir.ArrayAttr.get([not_writable] * len(inputs) + [empty] * len(outputs))
    func.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
    if "res_attrs" in func.attributes:
        del func.attributes["res_attrs"]
    func.attributes[ENTRY] = ir.UnitAttr.get()
    func.attributes[SIGNATURE] = ir.TypeAttr.get(ftype)


def _boundary_type(t: ir.Type) -> ir.Type:
    if isinstance(t.element_type, ir.IntegerType) and t.element_type.width == 1:
        return ir.RankedTensorType.get(t.shape, ir.IntegerType.get_signless(8))
    return t


#: :func:`_convert_generic`'s cast from bytes to booleans (:func:`nonzero_bytes`)
_NONZERO = "nonzero"


def _convert_generic(value: ir.Value, result_type: ir.Type, cast: str | None, dest: ir.Value | None):
    """``linalg.generic`` applying ``cast`` (None: a copy) elementwise to ``value`` (into ``dest``, or a new empty).

    The boolean side becomes bytes too (:func:`store_booleans_as_bytes`); the pair of casts is then a byte copy.
    """
    from mlir.dialects import arith, linalg, tensor

    rt = ir.RankedTensorType(result_type)
    if dest is None:  # a dynamic size is the value's own
        index = ir.IndexType.get()
        sizes = [tensor.dim(value, arith.constant(index, i)) if rt.is_dynamic_dim(i) else rt.get_dim_size(i)
                 for i in range(rt.rank)]
        dest = tensor.EmptyOp(sizes, rt.element_type).result
    ident = ir.AffineMap.get_identity(rt.rank)
    generic = linalg.GenericOp(
        [rt],
        [value],
        [dest],
        ir.ArrayAttr.get([ir.AffineMapAttr.get(ident)] * 2),
        ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * rt.rank),
    )
    in_elt = ir.RankedTensorType(value.type).element_type
    body = generic.regions[0].blocks.append(in_elt, rt.element_type)
    with ir.InsertionPoint(body):
        if cast is None:
            linalg.YieldOp([body.arguments[0]])
        elif cast == _NONZERO:
            linalg.YieldOp([nonzero_bytes(body.arguments[0])])
        else:
            c = ir.Operation.create(cast, results=[rt.element_type], operands=[body.arguments[0]])
            linalg.YieldOp([c.result])
    return generic
