"""The sizes Dynamo hands the ``graphfuse`` backend as symbols, and how one compile serves them all.

When a frame is called with a new input shape, Dynamo (its automatic dynamic shapes, ``mark_dynamic`` or
``torch.compile(dynamic=True)``) traces it again with the sizes that changed as symbols: the FX graph's
placeholders then hold ``FakeTensor`` example values of shapes such as ``[s77, s27, 32]``, and each symbol the
graph reads as a number is an input of its own (a ``SymInt`` placeholder).  The backend compiles such a graph
once, its symbolic dims ``?`` in the graph dialect:

- :func:`symbolic_dims` finds the symbolic dims of each tensor input and the ``SymInt`` inputs;
- :func:`sizes_read_from_tensors` rewrites each use of a ``SymInt`` input as the size of a tensor dim holding
  the same symbol (torch.export specialises an ``int`` input on its value; a tensor's size it keeps symbolic);
- :func:`export_dynamic_shapes` is the ``dynamic_shapes`` argument of ``torch.export.export`` marking those
  dims ``Dim.AUTO``: the export keeps a dim symbolic unless the code needs its value (a Linear layer's input
  width, which ``dynamic=True`` makes a symbol too), and :func:`exported_symbolic_dims` reads which ones it
  kept: the compiled graph serves any size of those, and is keyed on the value of the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from torch import fx

__all__ = ["NO_SYMBOLS", "SymbolicInputs", "export_dynamic_shapes", "exported_symbolic_dims", "sizes_read_from_tensors",
           "symbolic_dims"]


@dataclass(frozen=True)
class SymbolicInputs:
    """The symbolic sizes of an FX graph's inputs."""

    #: position -> the dims of that tensor input whose size is a symbol
    tensor_dims: dict[int, tuple[int, ...]]
    #: positions of the inputs that are sizes themselves (``SymInt`` placeholders)
    sizes: frozenset[int]

    def __bool__(self) -> bool:
        return bool(self.tensor_dims)


#: A graph without symbolic sizes.
NO_SYMBOLS = SymbolicInputs({}, frozenset())


def _is_symbol(size: Any) -> bool:
    """Whether ``size`` is a symbol (not an int, nor a SymInt the shape environment has fixed to one)."""
    import torch
    from torch.fx.experimental.symbolic_shapes import is_concrete_int

    return isinstance(size, torch.SymInt) and not is_concrete_int(size)


def symbolic_dims(gm: fx.GraphModule) -> SymbolicInputs:
    """The symbolic dims of ``gm``'s tensor inputs and its size inputs, from Dynamo's example values."""
    import torch

    tensor_dims: dict[int, tuple[int, ...]] = {}
    sizes = set()
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for position, node in enumerate(placeholders):
        value = node.meta.get("example_value")
        if isinstance(value, torch.Tensor):
            dims = tuple(d for d, size in enumerate(value.shape) if _is_symbol(size))
            if dims:
                tensor_dims[position] = dims
        elif _is_symbol(value):
            sizes.add(position)
    return SymbolicInputs(tensor_dims, frozenset(sizes))


def sizes_read_from_tensors(gm: fx.GraphModule, symbolic: SymbolicInputs) -> fx.GraphModule | None:
    """A copy of ``gm`` whose size inputs are read from the tensors instead (``aten.sym_size.int`` of a dim holding
    the same symbol), the size inputs left unused; None when a size input is no tensor dim's symbol (an
    expression of several, or a size of no input tensor)."""
    import torch
    from torch import fx

    graph = fx.Graph()
    mapping: dict[fx.Node, fx.Node] = {}
    graph.output(graph.graph_copy(gm.graph, mapping))
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    where: dict[str, tuple[fx.Node, int]] = {}  # symbol -> (tensor placeholder, dim)
    for position, dims in symbolic.tensor_dims.items():
        shape = placeholders[position].meta["example_value"].shape
        for dim in dims:
            where.setdefault(str(shape[dim].node.expr), (mapping[placeholders[position]], dim))
    for position in sorted(symbolic.sizes):
        size_input = mapping[placeholders[position]]
        found = where.get(str(placeholders[position].meta["example_value"].node.expr))
        if found is None:
            return None
        tensor, dim = found
        if not size_input.users:
            continue
        with graph.inserting_after(tensor):
            size = graph.call_function(torch.ops.aten.sym_size.int, (tensor, dim))
        size_input.replace_all_uses_with(size)
    graph.lint()
    return fx.GraphModule(gm, graph)


def export_dynamic_shapes(symbolic: SymbolicInputs, args: Sequence[Any]) -> tuple[Any, ...]:
    """``dynamic_shapes`` for ``torch.export.export(gm, args)``: each symbolic dim ``Dim.AUTO``, the rest
    static."""
    from torch.export import Dim

    return tuple({dim: Dim.AUTO for dim in symbolic.tensor_dims[position]} if position in symbolic.tensor_dims
                 else None for position in range(len(args)))


def exported_symbolic_dims(program: Any, symbolic: SymbolicInputs) -> SymbolicInputs:
    """The dims of ``symbolic`` that ``program`` (exported with :func:`export_dynamic_shapes`) kept symbolic; the
    size inputs go with them (none when no dim is left: the graph is then specialised like any other)."""
    import torch

    user_inputs = list(program.graph_signature.user_inputs)
    values = {n.name: n.meta.get("val") for n in program.graph.nodes if n.op == "placeholder"}
    kept: dict[int, tuple[int, ...]] = {}
    for position, dims in symbolic.tensor_dims.items():
        value = values.get(user_inputs[position]) if position < len(user_inputs) else None
        if isinstance(value, torch.Tensor):
            still = tuple(d for d in dims if _is_symbol(value.shape[d]))
            if still:
                kept[position] = still
    return SymbolicInputs(kept, symbolic.sizes if kept else frozenset())
