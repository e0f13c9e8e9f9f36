"""What a random graph case is and how its values are judged: tolerances per dtype, the
sources of randomness (:class:`RandomChooser`, :class:`HypothesisChooser`), the plain description
(:class:`GraphCase`), the checks that reject ill-conditioned values, and shape helpers.
"""


from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import numpy as np
from mlir import ir

from graphfuse.dialect.builder import GraphBuilder, Tensor
from graphfuse.dialect.types import FLOAT_DTYPES, TensorSig

T = TypeVar("T")


#: Per float dtype: (rtol, atol) of :func:`compare_results`.  ``atol`` is relative to the value's *scale*, the
#: largest magnitude met on any path from the inputs to it (so cancellation in a sub cannot fail a check).
#: Integer and boolean results must be equal, except i8 results of quantization, which may differ by one step
#: (round-half-even of a quotient that is computed in another order).
TOLERANCES: dict[str, tuple[float, float]] = {"f32": (1e-4, 1e-4), "f16": (1.5e-2, 1.5e-2), "bf16": (6e-2, 6e-2)}
#: How far (relative to the scale) an input of a discontinuous op (floor, sign, comparisons, float -> int casts)
#: must be from its jump, as a multiple of the dtype's atol.
DISCONTINUITY_MARGIN = 4.0
#: Largest magnitude an intermediate may reach (keeps f16 far from overflow and sums well conditioned).
MAX_MAGNITUDE = 200.0
#: In structure graphs (long chains), how much of its tolerance a value's own f16/bf16 rounding may use up: the
#: value computed in its dtype must stay this close to the same value computed in f32 throughout, so that another
#: correct rounding order (a fused kernel, compiled code) stays within the tolerance.
ROUNDING_SHARE = 0.25


def tolerance(dtype: str) -> tuple[float, float]:
    return TOLERANCES.get(dtype, (0.0, 0.0))


def coarsest(dtypes: Sequence[str]) -> str:
    """The float type with the loosest tolerance among ``dtypes`` (f32 when there is none)."""
    return max((d for d in dtypes if d in TOLERANCES), key=lambda d: TOLERANCES[d][0], default="f32")


#: Bugs the fuzzer found that are not fixed yet, by id.  The generator avoids exactly these shapes (and nothing
#: broader) so that the properties keep testing everything else; docs/testing.md lists them.
KNOWN_BUGS: dict[str, str] = {}


class Chooser(Protocol):
    """What the generator asks of its source of randomness."""

    def integer(self, low: int, high: int) -> int:
        """An int in [low, high]; shrinks toward ``low``."""
        ...

    def choice(self, options: Sequence[T]) -> T:
        """One of ``options``; shrinks toward the first."""
        ...

    def boolean(self, probability: float = 0.5) -> bool:
        """True with about ``probability``; shrinks toward False."""
        ...


class RandomChooser:
    """A :class:`Chooser` over ``random.Random(seed)``: the same seed gives the same graph."""

    def __init__(self, seed: int | str):
        self.random = random.Random(seed)

    def integer(self, low: int, high: int) -> int:
        return self.random.randint(low, high)

    def choice(self, options: Sequence[T]) -> T:
        return options[self.random.randrange(len(options))]

    def boolean(self, probability: float = 0.5) -> bool:
        return self.random.random() < probability


class HypothesisChooser:
    """A :class:`Chooser` drawing from hypothesis' ``data`` object (so failures shrink)."""

    def __init__(self, draw: Callable[[Any], Any]):
        from hypothesis import strategies as st

        self.draw = draw
        self.st = st

    def integer(self, low: int, high: int) -> int:
        return self.draw(self.st.integers(low, high))

    def choice(self, options: Sequence[T]) -> T:
        return options[self.draw(self.st.integers(0, len(options) - 1))]

    def boolean(self, probability: float = 0.5) -> bool:
        # integers shrink toward 0, i.e. toward False.
        return self.draw(self.st.integers(0, 999)) >= round(1000 * (1 - probability))


@dataclass
class Value:
    """A value of the graph under construction, with its value on the case's inputs."""

    sig: TensorSig
    array: np.ndarray
    #: largest magnitude on any path from the inputs (>= 1): the unit of the absolute tolerance
    scale: float
    #: an i8 result of quantization: compared within one step, never fed to another op
    quantized: bool = False
    #: the coarsest float type on any path from the inputs: its tolerance applies (an f32 value that went
    #: through bf16 carries bf16's rounding)
    precision: str = "f32"
    #: in structure graphs, the value computed without f16/bf16 rounding (f32 throughout); None: ``array`` itself
    exact: np.ndarray | None = None


@dataclass
class Node:
    """An argument, a constant or an op; ``results`` are indices into :attr:`GraphCase.values`."""

    kind: str  # "arg", "const" or "op"
    op: str = ""
    operands: tuple[int, ...] = ()
    attrs: dict[str, Any] = field(default_factory=dict)
    result_param: Any = None  # shape (reshape, broadcast_to) or dtype (cast)
    results: tuple[int, ...] = ()


@dataclass
class GraphCase:
    """A random graph and its inputs."""

    seed: int
    nodes: list[Node] = field(default_factory=list)
    values: list[Value] = field(default_factory=list)
    outputs: list[int] = field(default_factory=list)
    #: the motifs planted, for statistics and reports
    motifs: list[str] = field(default_factory=list)
    #: for the structure family: how often each structure step (chain, hub, diamond...) was built
    structure: dict[str, int] = field(default_factory=dict)

    @property
    def inputs(self) -> list[np.ndarray]:
        return [self.values[n.results[0]].array for n in self.needed_nodes() if n.kind == "arg"]

    @property
    def op_count(self) -> int:
        return sum(1 for n in self.nodes if n.kind == "op")

    @property
    def op_count_needed(self) -> int:
        return sum(1 for n in self.needed_nodes() if n.kind == "op")

    def needed_nodes(self) -> list[Node]:
        """The nodes the outputs depend on, in order (the others are not built)."""
        producer = {i: node for node in self.nodes for i in node.results}
        needed: set[int] = set()
        stack = list(self.outputs)
        while stack:
            node = producer[stack.pop()]
            if id(node) not in needed:
                needed.add(id(node))
                stack.extend(node.operands)
        return [node for node in self.nodes if id(node) in needed]

    def with_changes(self, outputs: list[int] | None = None, cut: Node | None = None) -> GraphCase:
        """A smaller case for reducing a failure: other outputs, and/or op ``cut`` replaced by arguments
        holding its results' values (which removes what only it used)."""
        nodes = []
        for node in self.nodes:
            if node is cut:
                nodes.extend(Node("arg", results=(i,)) for i in node.results)
            else:
                nodes.append(node)
        return GraphCase(self.seed, nodes, self.values, list(self.outputs if outputs is None else outputs),
                         self.motifs, self.structure)

    def build(self) -> ir.Module:
        """The graph as a verified graph-dialect module (function ``@fuzz``)."""
        b = GraphBuilder("fuzz")
        tensors: dict[int, Tensor] = {}
        for node in self.needed_nodes():
            if node.kind == "arg":
                sig = self.values[node.results[0]].sig
                tensors[node.results[0]] = b.arg(sig.shape, sig.dtype)
            elif node.kind == "const":
                tensors[node.results[0]] = b.const(self.values[node.results[0]].array)
            else:
                operands = [tensors[i] for i in node.operands]
                extra = () if node.result_param is None else (node.result_param,)
                built = b.op(node.op, *operands, *extra, **node.attrs)
                for index, tensor in zip(node.results, built if isinstance(built, tuple) else (built,), strict=True):
                    tensors[index] = tensor
        b.ret(*[tensors[i] for i in self.outputs])
        return b.module

    def output_values(self) -> list[Value]:
        return [self.values[i] for i in self.outputs]

    def __repr__(self) -> str:
        # What hypothesis prints for a falsifying example: the graph itself, readable.
        return f"GraphCase({self.describe()})\n{self.build()}"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))  # hypothesis' pretty printer would list every field and array

    def describe(self) -> str:
        ops = [n.op for n in self.nodes if n.kind == "op"]
        if len(ops) > 30:  # a structure graph: the op histogram reads better than the list
            listed = ", ".join(f"{name} x{count}" for name, count in Counter(ops).most_common())
        else:
            listed = ", ".join(ops)
        text = f"seed {self.seed}: {len(ops)} ops ({listed}); motifs: {', '.join(self.motifs) or 'none'}"
        if self.structure:
            text += "; structure: " + ", ".join(f"{name} x{count}" for name, count in self.structure.items())
        return text


class Reject(Exception):
    """The op just tried is not well defined or not well conditioned on these inputs."""


def _as_f64(array: np.ndarray) -> np.ndarray:
    return np.asarray(array).astype(np.float64)


def _margin(dtype: str, scale: float) -> float:
    return DISCONTINUITY_MARGIN * tolerance(dtype)[1] * scale


def check_value(value: Value) -> None:
    """Reject values that are not finite or exceed :data:`MAX_MAGNITUDE`."""
    if value.sig.dtype in FLOAT_DTYPES:
        data = _as_f64(value.array)
        if not np.all(np.isfinite(data)) or (data.size and np.abs(data).max() > MAX_MAGNITUDE):
            raise Reject("not finite or too large")
    elif value.sig.dtype in ("i32", "i64"):
        if value.array.size and np.abs(value.array.astype(np.int64)).max() > 1 << 20:
            raise Reject("integer too large")


def far_from(data: np.ndarray, jumps: Callable[[np.ndarray], np.ndarray], margin: float) -> bool:
    """Whether every element is at least ``margin`` from the nearest discontinuity ``jumps(data)``."""
    return bool(np.all(np.abs(data - jumps(data)) > margin)) if data.size else True


FLOATS = ("f32", "f32", "f32", "f16", "bf16")


def _broadcasts(small: tuple[int, ...], big: tuple[int, ...]) -> bool:
    """Whether ``small`` broadcasts to ``big`` without enlarging it."""
    if len(small) > len(big):
        return False
    return all(s in (1, b) for s, b in zip(small, big[len(big) - len(small) :], strict=True))


def _refactor(shape: tuple[int, ...], c: Chooser) -> tuple[int, ...]:
    """Another shape with as many elements: merge neighbours, split off factors, add or drop unit dims."""
    dims = [d for d in shape if d != 1] or [1]
    how = c.integer(0, 3)
    if how == 0 and len(dims) >= 2:
        i = c.integer(0, len(dims) - 2)
        dims = [*dims[:i], dims[i] * dims[i + 1], *dims[i + 2 :]]
    elif how == 1:
        i = c.integer(0, len(dims) - 1)
        for f in (2, 3):
            if dims[i] % f == 0 and dims[i] > f:
                dims = [*dims[:i], f, dims[i] // f, *dims[i + 1 :]]
                break
    elif how == 2:
        dims.insert(c.integer(0, len(dims)), 1)
    if len(dims) > 5:
        dims = [math.prod(dims)]
    return tuple(dims)
