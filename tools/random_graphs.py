"""Random graph-dialect programs and random fusion switch sets, for differential testing.

One generator, two sources of randomness: :class:`RandomChooser` (a seeded
``random.Random``, used by ``python -m graphfuse.tools.fuzz`` so long runs
need no hypothesis database) and :func:`graph_cases` / :func:`switch_sets`
(hypothesis strategies, which shrink a failing case to a small one).  Both
drive :func:`generate_graph`, which returns a :class:`GraphCase`: a plain
description (arguments, constants, op nodes, outputs, input arrays) that
:meth:`GraphCase.build` turns into a module through the builder API.

What the graphs hold:

- ops of the catalog (``graphfuse.dialect.catalog``) on f32, f16, bf16, i32,
  i64 and i1 values, with numpy broadcasting between operands of different
  ranks and unit dims, constants, multi-result ops (split, dynamic_quant,
  fused ops), values reused by several ops (shared subexpressions) and
  intermediates returned as results;
- the patterns the fusion passes look for, planted at random (add ->
  layer_norm, add -> rms_norm [-> quantize], the cast chain around rms_norm,
  add_rms_norm -> dynamic_quant, matmul epilogues, matmul -> split, attention
  chains, swiglu by split or slices, conv -> batch_norm [-> bias], split ->
  conv -> concat, whole-input convs, reshape/transpose chains, split ->
  concat, nested concats, the small-op softmax), sometimes with an
  intermediate also used elsewhere so the passes' negative branches run;
- in a quarter of the graphs (the *structure family*, :data:`STRUCTURE_STEPS`),
  the data flow of real models over 40 to 2000 ops: values read by many ops
  (hubs), diamonds and residual blocks, wide fan-out and fan-in, long chains,
  around the ops and motifs above.

Every op is built only when it is well defined and well conditioned on the
case's inputs: the generator evaluates each new op with the reference
semantics as it goes and rejects it when the result is not finite, too large,
or too close to a discontinuity (see :data:`TOLERANCES` and
:func:`check_value`); in structure graphs also when its f16/bf16 rounding
strays too far from the same computation in f32 (:data:`ROUNDING_SHARE`).
Input ranges: floats uniform in +-[0.25, 2] (strictly positive where an op
needs it), integers in [-8, 8], booleans fair.  The comparison a differential
test makes is :func:`compare_results`.
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import numpy as np
from mlir import ir

from graphfuse.dialect.builder import GraphBuilder, Tensor
from graphfuse.dialect.catalog import VerifyError, lookup_op
from graphfuse.dialect.evaluate import evaluate_op, widen
from graphfuse.dialect.types import FLOAT_DTYPES, NUMPY_DTYPES, TensorSig

T = TypeVar("T")

# --------------------------------------------------------------------------
# Tolerances.

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

# --------------------------------------------------------------------------
# Sources of randomness.


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


# --------------------------------------------------------------------------
# The graph description.


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


# --------------------------------------------------------------------------
# Checks on concrete values.


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


# --------------------------------------------------------------------------
# The generator.

FLOATS = ("f32", "f32", "f32", "f16", "bf16")
DIMS = (1, 2, 3, 4, 5, 8)

UNARY_FLOAT = (
    "abs", "neg", "exp", "log", "sqrt", "rsqrt", "reciprocal", "tanh", "sigmoid", "erf", "relu", "gelu",
    "fast_gelu", "silu", "square", "floor", "ceil", "round", "sign", "sin", "cos",
)
UNARY_INT = ("abs", "neg", "relu", "square", "sign")
BINARY_FLOAT = ("add", "sub", "mul", "div", "pow", "maximum", "minimum", "squared_difference")
BINARY_INT = ("add", "sub", "mul", "div", "maximum", "minimum")
COMPARE = ("equal", "not_equal", "greater", "greater_equal", "less", "less_equal")
REDUCE = ("reduce_sum", "reduce_mean", "reduce_max", "reduce_min")


class Generator:
    """Builds one :class:`GraphCase` step by step, checking every op on concrete inputs."""

    def __init__(self, chooser: Chooser, max_ops: int = 14, motif_rate: float = 0.35):
        self.c = chooser
        self.max_ops = max_ops
        #: ops beyond which every op is rejected (motifs may overshoot max_ops a little)
        self.op_limit = max_ops + 6
        #: check each value's f16/bf16 rounding against its f32 computation (structure graphs: long chains)
        self.track_rounding = False
        #: every operand read so far, repeats included: drawing from it favours values already read often
        self.reads: list[int] = []
        #: op results no op reads yet (the structure family's closing fan-in has to fold them)
        self.unread: set[int] = set()
        self.motif_rate = motif_rate
        seed = chooser.integer(0, 2**31 - 1)
        self.rng = np.random.default_rng(seed)
        self.case = GraphCase(seed)
        #: values other ops may use (quantized results are not)
        self.usable: list[int] = []
        #: intermediates a motif made function results (so the fusion meets another user)
        self.forced_outputs: list[int] = []

    # -- leaves ---------------------------------------------------------------

    def _random_array(self, sig: TensorSig, positive: bool = False) -> np.ndarray:
        shape = sig.shape
        if sig.dtype == "i1":
            return self.rng.random(shape) < 0.5
        if sig.dtype in ("i32", "i64", "i8"):
            low = 1 if positive else -8
            return self.rng.integers(low, 9, shape).astype(NUMPY_DTYPES[sig.dtype])
        values = self.rng.uniform(0.25, 2.0, shape)
        if not positive:
            values *= np.where(self.rng.random(shape) < 0.5, -1.0, 1.0)
        return values.astype(np.float32).astype(NUMPY_DTYPES[sig.dtype])

    def leaf(self, shape: Sequence[int], dtype: str, positive: bool = False, const: bool | None = None,
             array: np.ndarray | None = None) -> int:
        """A new argument or constant (``const`` None: either) of the given type."""
        sig = TensorSig(tuple(shape), dtype)
        if array is None:
            array = self._random_array(sig, positive)
        if const is None:
            const = self.c.boolean(0.3)
        index = len(self.case.values)
        self.case.values.append(Value(sig, np.asarray(array, NUMPY_DTYPES[dtype]), 1.0))
        self.case.nodes.append(Node("const" if const else "arg", results=(index,)))
        self.usable.append(index)
        return index

    def scalar_const(self, value: float, dtype: str, shape: Sequence[int] = ()) -> int:
        return self.leaf(shape, dtype, const=True, array=np.full(tuple(shape), value))

    # -- ops ------------------------------------------------------------------

    def op(self, name: str, operands: Sequence[int], result: Any = None, **attrs: Any) -> tuple[int, ...]:
        """Add op ``name``; raises Reject (adding nothing) when it is invalid or ill-conditioned here."""
        if self.case.op_count >= self.op_limit:
            raise Reject("graph is full")
        spec = lookup_op(f"graph.{name}")
        assert spec is not None, name
        values = [self.case.values[i] for i in operands]
        declared = None
        if spec.result_param == "shape":
            declared = [TensorSig(tuple(result), values[0].sig.dtype)]
        elif spec.result_param == "dtype":
            declared = [TensorSig(values[0].sig.shape, result)]
        try:
            outputs = evaluate_op(name, [v.array for v in values], attrs, declared)
        except VerifyError as error:
            raise Reject(error.message) from None
        scale = max([1.0, *(v.scale for v in values)])
        precision = coarsest([v.precision for v in values])
        new = []
        for array in outputs:
            dtype = next(k for k, v in NUMPY_DTYPES.items() if v == array.dtype)
            magnitude = float(np.abs(_as_f64(array)).max()) if array.size and dtype in FLOAT_DTYPES else 0.0
            own = coarsest([precision, dtype]) if dtype in FLOAT_DTYPES else precision
            new.append(Value(TensorSig(tuple(array.shape), dtype), array, max(scale, magnitude),
                             quantized=dtype == "i8", precision=own))
        for value in new:
            check_value(value)
        if self.track_rounding:
            self._check_rounding(name, values, attrs, result, spec.result_param, new)
        first = len(self.case.values)
        self.case.values.extend(new)
        indices = tuple(range(first, first + len(new)))
        self.case.nodes.append(Node("op", name, tuple(operands), dict(attrs), result, indices))
        self.usable.extend(i for i in indices if not self.case.values[i].quantized)
        self.reads.extend(operands)
        self.unread.difference_update(operands)
        self.unread.update(i for i in indices if not self.case.values[i].quantized)
        return indices

    def _check_rounding(self, name: str, values: list[Value], attrs: dict[str, Any], result: Any,
                        result_param: str | None, new: list[Value]) -> None:
        """Reject an op whose result depends on f16/bf16 rounding more than :data:`ROUNDING_SHARE` allows; record
        each result's f32 computation (:attr:`Value.exact`) for the ops after it."""
        low = ("f16", "bf16")
        if not any(v.exact is not None or v.sig.dtype in low for v in values) and not (
                result_param == "dtype" and result in low):
            return
        inputs = [v.exact if v.exact is not None else widen(v.array) for v in values]
        declared = None
        if result_param == "shape":
            declared = [TensorSig(tuple(result), "f32" if values[0].sig.dtype in low else values[0].sig.dtype)]
        elif result_param == "dtype":
            declared = [TensorSig(values[0].sig.shape, "f32" if result in low else result)]
        try:
            exact = evaluate_op(name, inputs, attrs, declared)
        except VerifyError:  # an op that wants its low-precision types: nothing to compare it with
            return
        for value, array in zip(new, exact, strict=True):
            if value.quantized:
                continue  # compared within one step anyway
            if value.sig.dtype not in FLOAT_DTYPES:
                if not np.array_equal(value.array, array):
                    raise Reject("an integer or boolean result that f16/bf16 rounding changes")
                continue
            kind = coarsest([value.sig.dtype, value.precision])
            if kind not in low:
                continue
            rtol, atol = tolerance(kind)
            got, want = _as_f64(value.array), _as_f64(array)
            if np.any(np.abs(got - want) > ROUNDING_SHARE * (atol * value.scale + rtol * np.abs(want))):
                raise Reject("f16/bf16 rounding uses up too much of the tolerance")
            value.exact = np.asarray(array, np.float32)

    def op1(self, name: str, operands: Sequence[int], result: Any = None, **attrs: Any) -> int:
        return self.op(name, operands, result, **attrs)[0]

    # -- helpers --------------------------------------------------------------

    def value(self, index: int) -> Value:
        return self.case.values[index]

    def pick(self, accept: Callable[[Value], bool] = lambda v: True) -> int | None:
        """A usable value that ``accept`` takes, preferring recent ones (they chain); None if none."""
        candidates = [i for i in self.usable if accept(self.case.values[i])]
        if not candidates:
            return None
        if self.c.boolean(0.6):
            return candidates[-1 - self.c.integer(0, min(2, len(candidates) - 1))]
        return self.c.choice(candidates)

    def shape(self, rank: int | None = None, low_rank: int = 1, high_rank: int = 4) -> tuple[int, ...]:
        rank = self.c.integer(low_rank, high_rank) if rank is None else rank
        return tuple(self.c.choice(DIMS) for _ in range(rank))

    def float_dtype(self) -> str:
        return self.c.choice(FLOATS)

    def broadcast_partner(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """A shape that broadcasts with ``shape`` without enlarging it: a suffix, some dims set to 1."""
        rank = self.c.integer(0, len(shape))
        return tuple(1 if self.c.boolean(0.3) else d for d in shape[len(shape) - rank :])

    def operand_like(self, index: int, positive: bool = False) -> int:
        """A second operand for a binary op on ``index``: an existing value it broadcasts with, or a new leaf."""
        v = self.value(index)
        if not positive and self.c.boolean(0.5):
            found = self.pick(lambda w: w.sig.dtype == v.sig.dtype and _broadcasts(w.sig.shape, v.sig.shape))
            if found is not None:
                return found
        return self.leaf(self.broadcast_partner(v.sig.shape), v.sig.dtype, positive)

    # -- generic steps --------------------------------------------------------

    def generic_step(self) -> None:
        kind = self.c.choice(("unary", "unary", "binary", "binary", "binary", "compare", "reduce", "shape",
                              "shape", "cast", "nn", "composite"))
        getattr(self, f"step_{kind}")()

    def _float_operand(self) -> int:
        found = self.pick(lambda v: v.sig.dtype in FLOAT_DTYPES and v.sig.rank >= 1)
        return found if found is not None else self.leaf(self.shape(), self.float_dtype())

    def step_unary(self) -> None:
        x = self.pick(lambda v: v.sig.dtype != "i1")
        if x is None:
            x = self.leaf(self.shape(), self.float_dtype())
        self.unary_on(x)

    def unary_on(self, x: int) -> int:
        """A unary op of ``x``'s dtype applied to ``x`` (not i1), where it is well conditioned."""
        v = self.value(x)
        if v.sig.dtype not in FLOAT_DTYPES:
            return self.op1(self.c.choice(UNARY_INT), [x])
        name = self.c.choice(UNARY_FLOAT)
        if name in ("log", "sqrt", "rsqrt") and _as_f64(v.array).min(initial=1) <= 0.1 * v.scale:
            x = self.leaf(v.sig.shape, v.sig.dtype, positive=True)  # a value in the op's domain
            v = self.value(x)
        data, margin = _as_f64(v.array), _margin(v.sig.dtype, v.scale)
        guards: dict[str, Callable[[], bool]] = {
            "exp": lambda: data.max(initial=0) < 4,
            "log": lambda: data.min(initial=1) > 0.1 * v.scale,
            "sqrt": lambda: data.min(initial=1) > 0.1 * v.scale,
            "rsqrt": lambda: data.min(initial=1) > 0.1 * v.scale,
            "reciprocal": lambda: np.abs(data).min(initial=1) > 0.1 * v.scale,
            "square": lambda: np.abs(data).max(initial=0) < 12,
            "floor": lambda: far_from(data, np.round, margin),
            "ceil": lambda: far_from(data, np.round, margin),
            "round": lambda: far_from(data, lambda d: np.floor(d) + 0.5, margin),
            "sign": lambda: far_from(data, np.zeros_like, margin),
            "sin": lambda: np.abs(data).max(initial=0) < 8,
            "cos": lambda: np.abs(data).max(initial=0) < 8,
        }
        if not guards.get(name, lambda: True)():
            raise Reject(f"{name} is ill-conditioned here")
        attrs = {"approximate": self.c.choice(("none", "tanh"))} if name == "gelu" else {}
        return self.op1(name, [x], **attrs)

    def step_binary(self) -> None:
        x = self.pick(lambda v: v.sig.dtype not in ("i1",))
        if x is None:
            x = self.leaf(self.shape(), self.float_dtype())
        self.binary_on(x)

    def binary_on(self, x: int, partner: int | None = None) -> int:
        """A binary op of ``x`` (not i1) and ``partner`` (broadcasting to it; None: one drawn as usual)."""
        v = self.value(x)
        is_float = v.sig.dtype in FLOAT_DTYPES
        name = self.c.choice(BINARY_FLOAT if is_float else BINARY_INT)
        if name == "pow":
            data = _as_f64(v.array)
            if data.min(initial=1) < 0.25 or data.max(initial=0) > 4:
                x = self.leaf(v.sig.shape, v.sig.dtype, positive=True)  # bases in [0.25, 2]
                v = self.value(x)
            shape = self.broadcast_partner(v.sig.shape)
            y = self.leaf(shape, v.sig.dtype, array=self.rng.uniform(-2.0, 2.0, shape))
        elif partner is not None:
            y = partner
        else:
            y = self.operand_like(x, positive=name == "div")
        if name == "div":
            den = _as_f64(self.value(y).array)
            if np.abs(den).min(initial=1) < 0.25:
                raise Reject("division by a small value")
        if self.c.boolean(0.5) and name not in ("div", "pow", "sub", "squared_difference"):
            x, y = y, x
        if name == "mul":
            bound = np.abs(_as_f64(self.value(x).array)).max(initial=0) * np.abs(_as_f64(self.value(y).array)).max(
                initial=0)
            if bound > MAX_MAGNITUDE:
                raise Reject("product too large")
        return self.op1(name, [x, y])

    def step_compare(self) -> None:
        x = self.pick(lambda v: v.sig.dtype != "i1")
        if x is None:
            x = self.leaf(self.shape(), self.float_dtype())
        y = self.operand_like(x)
        vx, vy = self.value(x), self.value(y)
        name = self.c.choice(COMPARE)
        if vx.sig.dtype in FLOAT_DTYPES:
            a, b = np.broadcast_arrays(_as_f64(vx.array), _as_f64(vy.array))
            if not far_from(a - b, np.zeros_like, _margin(vx.sig.dtype, max(vx.scale, vy.scale))):
                raise Reject("operands too close to compare")
        mask = self.op1(name, [x, y])
        # Use the mask: select between two values, or combine with another mask.
        choice = self.c.integer(0, 2)
        if choice == 0:
            self.op1("select", [mask, x, y])
        elif choice == 1:
            other = self.pick(lambda v: v.sig.dtype == "i1" and _broadcasts(v.sig.shape, self.value(mask).sig.shape))
            if other is not None and other != mask:
                self.op1(self.c.choice(("logical_and", "logical_or")), [mask, other])
            else:
                self.op1("logical_not", [mask])

    def step_reduce(self) -> None:
        x = self.pick(lambda v: v.sig.dtype in (*FLOAT_DTYPES, "i32", "i64") and v.sig.rank >= 1)
        if x is None:
            x = self.leaf(self.shape(), self.float_dtype())
        rank = self.value(x).sig.rank
        axes = sorted({self.c.integer(0, rank - 1) for _ in range(self.c.integer(1, rank))})
        if self.c.boolean(0.3):
            axes = [a - rank for a in axes]
        name = self.c.choice(REDUCE)
        if name == "reduce_mean" and self.value(x).sig.dtype not in FLOAT_DTYPES:
            name = "reduce_sum"
        self.op1(name, [x], axes=axes, keep_dims=self.c.boolean())

    def step_shape(self) -> None:
        x = self.pick(lambda v: v.sig.rank >= 1)
        if x is None:
            x = self.leaf(self.shape(), self.float_dtype())
        v = self.value(x)
        shape = v.sig.shape
        kind = self.c.choice(("reshape", "transpose", "broadcast_to", "slice", "split", "concat"))
        if kind == "reshape":
            self.op1("reshape", [x], _refactor(shape, self.c))
        elif kind == "transpose":
            perm = list(range(len(shape)))
            random.Random(self.c.integer(0, 1000)).shuffle(perm)
            self.op1("transpose", [x], perm=perm)
        elif kind == "broadcast_to":
            target = tuple(self.c.choice((2, 3)) if d == 1 else d for d in shape)
            if self.c.boolean(0.3):
                target = (self.c.choice((2, 3)), *target)
            self.op1("broadcast_to", [x], target)
        elif kind == "slice":
            start = [self.c.integer(0, d - 1) for d in shape]
            limit = [self.c.integer(s + 1, d) for s, d in zip(start, shape, strict=True)]
            attrs: dict[str, Any] = {"start": start, "limit": limit}
            if self.c.boolean(0.3):
                attrs["strides"] = [self.c.integer(1, 2) for _ in shape]
            self.op1("slice", [x], **attrs)
        elif kind == "split":
            axis = self.c.integer(0, len(shape) - 1)
            if shape[axis] < 2:
                raise Reject("axis too small to split")
            cut = self.c.integer(1, shape[axis] - 1)
            pieces = self.op("split", [x], axis=axis - len(shape) if self.c.boolean(0.3) else axis,
                             sizes=[cut, shape[axis] - cut])
            if self.c.boolean(0.5):  # join the pieces again, in order or swapped
                order = list(pieces) if self.c.boolean(0.6) else list(reversed(pieces))
                self.op1("concat", order, axis=axis)
        else:
            axis = self.c.integer(0, len(shape) - 1)
            other_shape = list(shape)
            other_shape[axis] = self.c.choice(DIMS)
            y = self.pick(lambda w: w.sig.dtype == v.sig.dtype and list(w.sig.shape) == other_shape)
            if y is None:
                y = self.leaf(other_shape, v.sig.dtype)
            operands = [x, y] if self.c.boolean() else [y, x]
            if self.c.boolean(0.3):
                operands.append(y)  # the variadic rest shares one type
            self.op1("concat", operands, axis=axis)

    def step_cast(self) -> None:
        x = self.pick()
        if x is None:
            x = self.leaf(self.shape(), self.float_dtype())
        v = self.value(x)
        source = v.sig.dtype
        targets = [t for t in ("f32", "f16", "bf16", "i32", "i64", "i1") if t != source]
        target = self.c.choice(targets)
        data = _as_f64(v.array)
        if source in FLOAT_DTYPES and target in ("i32", "i64"):
            if not far_from(data, np.round, _margin(source, v.scale)):  # truncation jumps at integers
                raise Reject("too close to an integer to truncate")
        if source in FLOAT_DTYPES and target == "i1" and not far_from(data, np.zeros_like, _margin(source, v.scale)):
            raise Reject("too close to 0 to cast to i1")
        self.op1("cast", [x], target)

    def step_nn(self) -> None:
        kind = self.c.choice(("matmul", "softmax", "norm", "bias_add", "pool", "dynamic_quant"))
        x = self._float_operand()
        v = self.value(x)
        dtype = v.sig.dtype
        if kind == "matmul":
            k = v.sig.shape[-1]
            n = self.c.choice(DIMS)
            transpose_b = self.c.boolean(0.3)
            w = self.leaf((n, k) if transpose_b else (k, n), dtype)
            self.op1("matmul", [x, w], **({"transpose_b": True} if transpose_b else {}))
        elif kind == "softmax":
            self.op1(self.c.choice(("softmax", "log_softmax")), [x], axis=self.c.integer(-v.sig.rank, v.sig.rank - 1))
        elif kind == "norm":
            last = v.sig.shape[-1]
            if self.c.boolean():
                self._require_spread(x, -1, statistic="rms")
                self.op1("rms_norm", [x, self.leaf((last,), dtype)], epsilon=1e-6)
            else:
                self._require_spread(x, -1)
                self.op1("layer_norm", [x, self.leaf((last,), dtype), self.leaf((last,), dtype)], begin_norm_axis=-1)
        elif kind == "bias_add":
            axis = self.c.integer(0, v.sig.rank - 1)
            self.op1("bias_add", [x, self.leaf((v.sig.shape[axis],), dtype)], axis=axis)
        elif kind == "pool":
            if v.sig.rank != 4:
                x = self.leaf((1, 2, self.c.integer(3, 6), self.c.integer(3, 6)), dtype)
            name = self.c.choice(("max_pool2d", "avg_pool2d"))
            self.op1(name, [x], kernel=[self.c.integer(1, 3), self.c.integer(1, 3)],
                     strides=[self.c.integer(1, 2), self.c.integer(1, 2)],
                     pads=[self.c.integer(0, 1) for _ in range(4)])
        else:
            self._require_spread(x, -1, statistic="max")
            operands = [x]
            if self.c.boolean():
                operands.append(self.leaf((v.sig.shape[-1],), dtype, positive=True))
            self.op("dynamic_quant", operands)

    def step_composite(self) -> None:
        x = self._float_operand()
        v = self.value(x)
        kind = self.c.choice(("add_n", "tile"))
        if kind == "add_n":
            others = [self.leaf(v.sig.shape, v.sig.dtype) for _ in range(self.c.integer(1, 2))]
            self.op1("add_n", [x, *others])
        else:
            self.op1("tile", [x], multiples=[self.c.integer(1, 2) for _ in v.sig.shape])

    def maybe_reuse(self, index: int, probability: float = 0.3) -> None:
        """Sometimes give an intermediate of a motif another user: a function result or another op."""
        if not self.c.boolean(probability):
            return
        if self.c.boolean(0.5) or self.value(index).sig.dtype not in FLOAT_DTYPES:
            self.forced_outputs.append(index)
        else:
            self.op1(self.c.choice(("neg", "relu", "abs")), [index])

    def choice_last_axis(self, rank: int) -> int:
        return -1 if self.c.boolean() else rank - 1

    def _require_spread(self, x: int, axis: int, statistic: str = "std") -> None:
        """Reject normalizing rows that are nearly constant (the result would be rounding noise, amplified)."""
        if self.value(x).sig.rank == 0:
            raise Reject("normalizing a scalar")
        self._require_spread_axes(x, (axis % self.value(x).sig.rank,), statistic)

    def _require_spread_axes(self, x: int, axes: tuple[int, ...], statistic: str = "std") -> None:
        v = self.value(x)
        data = _as_f64(v.array)
        if statistic == "std" and math.prod(data.shape[a] for a in axes) < 2:
            raise Reject("normalizing a single element")
        if statistic == "std":
            spread = data.std(axis=axes)
        elif statistic == "rms":
            spread = np.sqrt(np.mean(data * data, axis=axes))
        else:
            spread = np.abs(data).max(axis=axes)
        if spread.size and spread.min() < 0.2 * v.scale:
            raise Reject("rows too flat to normalize")

    # -- real-graph structure -------------------------------------------------

    def read_often(self, accept: Callable[[Value], bool] = lambda v: True) -> int | None:
        """A usable value drawn in proportion to how often it was read already, so that a few values become hubs
        that many ops read (as a model's input, its residual stream or a mask is); None if none fits."""
        usable = set(self.usable)
        for _ in range(4):
            if not self.reads:
                return None
            index = self.c.choice(self.reads)
            if index in usable and accept(self.value(index)):
                return index
        return None

    def partner_for(self, x: int) -> int:
        """A second operand for an elementwise op on ``x``: a hub, a recent value or a new weight, of ``x``'s dtype
        and broadcasting to it."""
        v = self.value(x)

        def fits(w: Value) -> bool:
            return w.sig.dtype == v.sig.dtype and _broadcasts(w.sig.shape, v.sig.shape)

        source = self.c.integer(0, 9)
        found = self.read_often(fits) if source < 4 else self.pick(fits) if source < 8 else None
        if found is not None:
            return found
        shape = self.broadcast_partner(v.sig.shape) if self.c.boolean(0.3) else v.sig.shape
        return self.leaf(shape, v.sig.dtype)

    def elementwise(self, x: int, partner: int | None = None) -> int:
        """A new value from ``x`` by an elementwise op (with ``partner`` as its other operand when given): the ops
        most of a real graph is made of and the ones graph-kernel-fusion clusters."""
        v = self.value(x)
        if v.sig.dtype == "i1":
            if partner is None and self.c.boolean(0.4):
                return self.op1("logical_not", [x])
            if partner is None and self.c.boolean(0.5):  # a mask choosing between two values of one type
                a = self.pick(lambda w: w.sig.dtype != "i1" and _broadcasts(v.sig.shape, w.sig.shape))
                a = a if a is not None else self.leaf(v.sig.shape, self.float_dtype())
                return self.op1("select", [x, a, self.partner_for(a)])
            y = partner if partner is not None else self.partner_for(x)
            return self.op1(self.c.choice(("logical_and", "logical_or")), [x, y])
        if partner is None and self.c.boolean(0.4):
            return self.unary_on(x)
        return self.binary_on(x, partner if partner is not None else self.partner_for(x))

    def generate_structured(self, size: int) -> GraphCase:
        """A graph of about ``size`` ops shaped like a real one (see :data:`STRUCTURE_STEPS`): long chains, hubs,
        diamonds, wide fan-out and fan-in, around the op families and motifs of :meth:`generate`."""
        self.max_ops = size
        self.op_limit = 2 * size + 64  # room for the closing fan-in
        self.track_rounding = True
        # Each graph has its own character: its own mix of steps, its own main dtype and shape.
        weights = [self.c.integer(0, 3) for _ in STRUCTURE_STEPS]
        steps = [step for step, weight in zip(STRUCTURE_STEPS, weights, strict=True) for _ in range(weight)]
        steps = steps or list(STRUCTURE_STEPS)
        dtype = self.c.choice(STRUCTURE_DTYPES)
        shape = self.shape(low_rank=1, high_rank=3)
        for _ in range(self.c.integer(1, 4)):
            self.leaf(shape, dtype, const=False)
        attempts = 0
        # Stop early enough that folding the unread values into results keeps the graph at about ``size`` ops.
        while self.case.op_count + len(self.unread) < size and attempts < 3 * size + 32:
            attempts += 1
            step = self.c.choice(steps)
            before = self.case.op_count
            try:
                step(self)
            except Reject:
                pass
            if self.case.op_count > before:
                name = step.__name__.removeprefix("structure_")
                self.case.structure[name] = self.case.structure.get(name, 0) + 1
        folds = self._close_structure()
        # The folds first (each holds a dtype's part of the graph), then what could not be folded, the motifs'
        # intermediates and an intermediate or two (so that a kernel meets a user outside it).
        op_results = [i for n in self.case.nodes if n.kind == "op" for i in n.results]
        extra = [self.c.choice(op_results) for _ in range(self.c.integer(0, 2))]
        outputs = list(dict.fromkeys(folds + sorted(self.unread) + self.forced_outputs + extra))
        self.case.outputs = outputs[:STRUCTURE_OUTPUTS]
        return self.case

    def _close_structure(self) -> list[int]:
        """Fold the values nothing reads into one result per dtype, as a model ends in a few outputs (otherwise
        the output limit would leave most of the graph dead); the folds are long fan-ins too.  Returns the folds."""
        by_dtype: dict[str, list[int]] = {}
        for index in sorted(self.unread):
            by_dtype.setdefault(self.value(index).sig.dtype, []).append(index)
        folds = []
        for group in by_dtype.values():
            total = group[0]
            for other in group[1:]:
                try:
                    total = self._fold(total, other)
                except Reject:
                    continue  # stays unread: a result of its own, or dead when the outputs are full
            folds.append(total)
        return folds

    def _fold(self, total: int, other: int) -> int:
        """One op reading both ``total`` and ``other`` (same dtype): a logical op, or add / sub / mul / maximum /
        minimum, falling back to maximum (never ill-conditioned) and reducing a value of an unrelated shape."""
        a, b = self.value(total), self.value(other)
        if not _broadcasts(b.sig.shape, a.sig.shape):
            if _broadcasts(a.sig.shape, b.sig.shape):
                total, other, a, b = other, total, b, a
            elif b.sig.dtype == "i1":
                raise Reject("booleans of unrelated shapes")
            else:
                other = self.op1("reduce_max", [other], axes=list(range(b.sig.rank)), keep_dims=False)
        if a.sig.dtype == "i1":
            return self.op1(self.c.choice(("logical_and", "logical_or")), [total, other])
        name = self.c.choice(("add", "sub", "mul", "maximum", "minimum"))
        try:
            return self.op1(name, [total, other])
        except Reject:
            return self.op1("maximum", [total, other])

    # -- the whole graph ------------------------------------------------------

    def generate(self) -> GraphCase:
        steps = self.c.integer(1, self.max_ops)
        attempts = 0
        while self.case.op_count < steps and attempts < 4 * steps + 8:
            attempts += 1
            try:
                if self.c.boolean(self.motif_rate):
                    self.plant_motif()
                else:
                    self.generic_step()
            except Reject:
                continue
        if not self.case.op_count:
            self.op1("abs", [self.leaf((2, 3), "f32")])
        self._choose_outputs()
        return self.case

    def plant_motif(self) -> None:
        """One planted pattern (:data:`MOTIFS`), drawn at random."""
        motif = self.c.choice(MOTIFS)
        first = len(self.case.values)
        motif(self)
        self.case.motifs.append(motif.__name__.removeprefix("motif_"))
        # Later steps build on the pattern's result, not its intermediates (maybe_reuse gives those
        # other users on purpose); otherwise most planted patterns would not be fusable.
        inner = {i for n in self.case.nodes if n.kind == "op" for i in n.results if i >= first}
        inner.discard(len(self.case.values) - 1)
        self.usable = [i for i in self.usable if i not in inner]

    def _choose_outputs(self) -> None:
        """Every value nothing uses (sinks), plus a few intermediates (so fusions meet other users)."""
        used = {i for n in self.case.nodes for i in n.operands}
        op_results = [i for n in self.case.nodes if n.kind == "op" for i in n.results]
        sinks = [i for i in op_results if i not in used]
        extra = [i for i in op_results if i in used and self.c.boolean(0.1)]
        outputs = sinks + self.forced_outputs + extra if sinks else op_results[-1:]
        if len(outputs) > 6:
            outputs = [*outputs[:5], op_results[-1]] if op_results[-1] not in outputs[:5] else outputs[:6]
        self.case.outputs = list(dict.fromkeys(outputs))


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

# --------------------------------------------------------------------------
# Planted patterns: the shapes the fusion passes match (see each pass's docstring and example).


def _norm_input(g: Generator, dtype: str | None = None) -> tuple[int, int]:
    """(x1, x2) to add before a normalization: x1 a [rows, h] or [b, rows, h] value, x2 broadcasting to it."""
    dtype = dtype or g.float_dtype()
    shape = (*((g.c.choice((1, 2)),) if g.c.boolean() else ()), g.c.choice((2, 3, 4)), g.c.choice((4, 8)))
    x1 = g.pick(lambda v: v.sig.dtype == dtype and v.sig.shape == shape) if g.c.boolean(0.3) else None
    x1 = x1 if x1 is not None else g.leaf(shape, dtype)
    x2 = g.leaf(shape if g.c.boolean(0.7) else g.broadcast_partner(shape), dtype)
    return (x1, x2) if g.c.boolean(0.7) else (x2, x1)


def motif_add_layer_norm(g: Generator) -> None:
    """add or bias_add -> layer_norm (add_layer_norm_fusion, _v3_, _ext_)."""
    x1, x2 = _norm_input(g)
    v = g.value(x1) if g.value(x1).sig.rank >= g.value(x2).sig.rank else g.value(x2)
    dtype, shape = v.sig.dtype, v.sig.shape
    if g.c.boolean(0.3):
        base = x1 if g.value(x1).sig.shape == shape else x2
        total = g.op1("bias_add", [base, g.leaf((shape[-1],), dtype)], axis=g.choice_last_axis(len(shape)))
    else:
        total = g.op1("add", [x1, x2])
    g.maybe_reuse(total)
    begin = g.c.choice((-1, len(shape) - 1, len(shape) - 2)) if len(shape) >= 2 else -1
    normalized = shape[begin:] if begin != -1 else shape[-1:]
    g._require_spread_axes(total, tuple(range(len(shape) - len(normalized), len(shape))))
    g.op1("layer_norm", [total, g.leaf(normalized, dtype), g.leaf(normalized, dtype)], begin_norm_axis=begin,
          epsilon=g.c.choice((1e-5, 1e-6)))


def motif_add_rms_norm(g: Generator) -> None:
    """add -> rms_norm [-> quantize], or rms_norm -> quantize (add_rms_norm_, add_rms_norm_quant_, rms_norm_quant_)."""
    x1, x2 = _norm_input(g)
    dtype = g.value(x1).sig.dtype
    wide = x1 if g.value(x1).sig.rank >= g.value(x2).sig.rank else x2
    total = g.op1("add", [x1, x2]) if g.c.boolean(0.8) else wide
    g.maybe_reuse(total)
    g._require_spread(total, -1, statistic="rms")
    last = g.value(total).sig.shape[-1]
    gamma_dtype = dtype if g.c.boolean(0.7) else "f32"
    y = g.op1("rms_norm", [total, g.leaf((last,), gamma_dtype, positive=True)], epsilon=1e-6)
    if g.c.boolean(0.5):
        g.maybe_reuse(y, 0.2)
        scale = g.leaf((g.c.choice((1, last)),), "f32", const=True, array=g.rng.uniform(8.0, 30.0, 1))
        if g.value(scale).sig.shape[0] != 1:
            g.value(scale).array = g.rng.uniform(8.0, 30.0, last).astype(np.float32)
        offset = g.leaf((1,), "f32", const=True, array=np.zeros(1))
        g.op("quantize", [y, scale, offset])


def motif_cast_rms_norm(g: Generator) -> None:
    """cast(x1), cast(x2) f16/bf16 -> f32 -> add -> rms_norm -> cast back (add_cast_rms_norm_cast_fusion)."""
    low = g.c.choice(("f16", "bf16"))
    x1, x2 = _norm_input(g, low)
    up1 = g.op1("cast", [x1], "f32")
    up2 = up1 if x1 == x2 else g.op1("cast", [x2], "f32")
    g.maybe_reuse(up2, 0.15)
    total = g.op1("add", [up1, up2])
    g.maybe_reuse(total, 0.2)
    g._require_spread(total, -1, statistic="rms")
    last = g.value(total).sig.shape[-1]
    y = g.op1("rms_norm", [total, g.leaf((last,), "f32", positive=True)], epsilon=1e-6)
    g.maybe_reuse(y, 0.1)
    g.op1("cast", [y], low if g.c.boolean(0.85) else g.c.choice(("f16", "bf16")))


def motif_add_rms_norm_quant(g: Generator) -> None:
    """add_rms_norm -> dynamic_quant [smooth], flatten -> dynamic_quant -> view, [view ->] cast (TorchAir's)."""
    dtype = g.c.choice(("f16", "bf16", "f32"))
    shape = (g.c.choice((1, 2)), g.c.choice((2, 3)), g.c.choice((4, 8)))
    x1, x2 = g.leaf(shape, dtype), g.leaf(shape, dtype)
    gamma = g.leaf((shape[-1],), dtype, positive=True)
    total = _as_f64(g.value(x1).array) + _as_f64(g.value(x2).array)  # the sum the fused op normalizes
    if np.sqrt(np.mean(total * total, axis=-1)).min() < 0.2:
        raise Reject("rows too flat to normalize")
    y, total = g.op("add_rms_norm", [x1, x2, gamma], epsilon=1e-6)
    g.maybe_reuse(total, 0.3)
    g._require_spread(y, -1, statistic="max")
    kind = g.c.integer(0, 2)
    if kind == 0:
        operands = [y] + ([g.leaf((shape[-1],), dtype, positive=True)] if g.c.boolean(0.7) else [])
        g.op("dynamic_quant", operands)
    elif kind == 1:
        flat = g.op1("reshape", [y], (shape[0] * shape[1], shape[-1]))
        _, scale = g.op("dynamic_quant", [flat])
        g.op1("reshape", [scale], (shape[0] * shape[1], 1))
    else:
        source = g.op1("reshape", [y], (shape[0] * shape[1], shape[-1])) if g.c.boolean() else y
        g.op1("cast", [source], "f32" if g.c.boolean(0.8) else "f16")


def motif_matmul_epilogue(g: Generator) -> None:
    """matmul -> bias_add / add / relu / gelu / split (matmul_elem_*, MatMulBiasAddFusionPass, matmul_split)."""
    dtype = g.c.choice(("f32", "f32", "f16", "bf16"))
    m, k, n = g.c.choice((1, 2, 4)), g.c.choice((2, 4, 8)), g.c.choice((2, 4, 6, 8))
    batch = (g.c.choice((1, 2)),) if g.c.boolean(0.3) else ()
    transpose_a, transpose_b = g.c.boolean(0.15), g.c.boolean(0.3)
    a = g.leaf((*batch, k, m) if transpose_a else (*batch, m, k), dtype)
    b = g.leaf((n, k) if transpose_b else (k, n), dtype, const=g.c.boolean(0.4))
    flags = {name: True for name, on in (("transpose_a", transpose_a), ("transpose_b", transpose_b)) if on}
    mm = g.op1("matmul", [a, b], **flags)
    g.maybe_reuse(mm, 0.2)
    shape = g.value(mm).sig.shape
    kind = g.c.choice(("bias_add", "add_bias", "add", "relu", "gelu", "split"))
    if kind == "bias_add":
        g.op1("bias_add", [mm, g.leaf((n,), dtype)], axis=g.choice_last_axis(len(shape)) if g.c.boolean(0.8) else 0)
    elif kind == "add_bias":
        bias = g.leaf((n,), dtype)
        g.op1("add", [mm, bias] if g.c.boolean() else [bias, mm])
    elif kind == "add":
        other = g.leaf(shape if g.c.boolean(0.6) else g.broadcast_partner(shape), dtype)
        g.op1("add", [mm, other] if g.c.boolean() else [other, mm])
    elif kind == "relu":
        g.op1("relu", [mm])
    elif kind == "gelu":
        g.op1("gelu", [mm], approximate=g.c.choice(("none", "tanh")))
    elif n >= 2:
        cut = g.c.integer(1, n - 1)
        axis = g.choice_last_axis(len(shape)) if g.c.boolean(0.8) else 0
        if shape[axis] >= 2:
            cut = min(cut, shape[axis] - 1)
            g.op("split", [mm], axis=axis, sizes=[cut, shape[axis] - cut])


def motif_attention(g: Generator) -> None:
    """softmax(q k^T * c [+ mask]) @ v and its variants (FlashAttentionFusionV1, V2)."""
    dtype = g.c.choice(("f32", "f32", "f16"))
    lead = (g.c.choice((1, 2)),) + ((g.c.choice((1, 2)),) if g.c.boolean(0.4) else ())
    s, d = g.c.choice((2, 4, 5)), g.c.choice((2, 4, 8))
    q, k, v = (g.leaf((*lead, s, d), dtype) for _ in range(3))
    rank = len(lead) + 2
    scale = g.c.choice((0.5, 0.25, 0.3))
    how = g.c.choice(("mul", "div", "q_mul", "q_div", "none"))
    if how in ("q_mul", "q_div"):
        c = g.scalar_const(scale if how == "q_mul" else 1 / scale, dtype, g.c.choice(((), (1,))))
        q = g.op1("mul" if how == "q_mul" else "div", [q, c] if how == "q_div" or g.c.boolean() else [c, q])
    if g.c.boolean(0.6):
        scores = g.op1("matmul", [q, k], transpose_b=True)
    else:
        perm = [*range(rank - 2), rank - 1, rank - 2]
        scores = g.op1("matmul", [q, g.op1("transpose", [k], perm=perm)])
    if how in ("mul", "div"):
        c = g.scalar_const(scale if how == "mul" else 1 / scale, dtype)
        scores = g.op1(how, [scores, c] if how == "div" or g.c.boolean() else [c, scores])
    g.maybe_reuse(scores, 0.1)
    if g.c.boolean(0.4):
        mask = g.leaf((s, s), dtype)
        scores = g.op1("add", [scores, mask] if g.c.boolean() else [mask, scores])
    probs = g.op1("softmax", [scores], axis=g.c.choice((-1, -1, -1, rank - 2)))
    g.maybe_reuse(probs, 0.1)
    g.op1("matmul", [probs, v])


def motif_swiglu(g: Generator) -> None:
    """silu(first half) * second half, halves by split or two slices (inference_swiglu_fusion)."""
    dtype = g.float_dtype()
    h = g.c.choice((2, 3, 4))
    shape = (g.c.choice((1, 2, 4)), 2 * h + (1 if g.c.boolean(0.1) else 0))
    x = g.leaf(shape, dtype)
    if g.c.boolean(0.6):
        sizes = [h, shape[1] - h] if g.c.boolean(0.9) else [shape[1] - h, h]
        first, second = g.op("split", [x], axis=g.c.choice((1, -1)), sizes=sizes)
        if g.c.boolean(0.1):
            first, second = second, first
    else:
        first = g.op1("slice", [x], start=[0, 0], limit=[shape[0], h])
        second = g.op1("slice", [x], start=[0, h], limit=[shape[0], 2 * h])
    g.maybe_reuse(second, 0.1)
    gate = g.op1("silu", [first])
    g.maybe_reuse(gate, 0.1)
    g.op1("mul", [gate, second] if g.c.boolean() else [second, gate])


def _conv_weight(g: Generator, out_channels: int, in_channels: int, kh: int, kw: int) -> int:
    array = g.rng.uniform(-1.0, 1.0, (out_channels, in_channels, kh, kw)) / math.sqrt(in_channels * kh * kw)
    return g.leaf(array.shape, "f32", const=True, array=array)


def motif_conv_batch_norm(g: Generator) -> None:
    """conv2d [+ bias] -> batch_norm [-> bias] with constants (ConvBatchnormFusionPass, BatchNormSplitFusionPass)."""
    n, c, o = g.c.choice((1, 2)), g.c.choice((1, 2, 3)), g.c.choice((1, 2, 4))
    x = g.leaf((n, c, g.c.integer(3, 6), g.c.integer(3, 6)), "f32")
    kh, kw = g.c.integer(1, 3), g.c.integer(1, 3)
    attrs: dict[str, Any] = {}
    if g.c.boolean(0.3):
        attrs["pads"] = [g.c.integer(0, 1) for _ in range(4)]
    if g.c.boolean(0.3):
        attrs["strides"] = [g.c.integer(1, 2), g.c.integer(1, 2)]
    y = g.op1("conv2d", [x, _conv_weight(g, o, c, kh, kw)], **attrs)
    g.maybe_reuse(y, 0.1)
    if g.c.boolean(0.3):
        y = g.op1("bias_add", [y, g.leaf((o,), "f32", const=True)], axis=1)
    params = [g.leaf((o,), "f32", const=g.c.boolean(0.9), positive=i == 3) for i in range(4)]
    y = g.op1("batch_norm", [y, *params], epsilon=g.c.choice((1e-5, 0.0)))
    if g.c.boolean(0.5):
        g.maybe_reuse(y, 0.1)
        if g.c.boolean():
            g.op1("bias_add", [y, g.leaf((o,), "f32", const=g.c.boolean(0.9))], axis=1)
        else:
            g.op1("add", [y, g.leaf((o, 1, 1), "f32", const=True)])


def motif_conv_layout(g: Generator) -> None:
    """A conv2d covering its whole input (ConvToFullyConnectionFusionPass), split -> convs -> concat (SplitConv...)."""
    n, h, w = g.c.choice((1, 2)), g.c.integer(2, 4), g.c.integer(2, 4)
    if g.c.boolean():
        c, o = g.c.choice((1, 2, 3)), g.c.choice((2, 4))
        x = g.leaf((n, c, h, w), "f32")
        weight = _conv_weight(g, o, c, h, w) if g.c.boolean(0.7) else g.leaf((o, c, h, w), "f32", const=False)
        g.op1("conv2d", [x, weight])
        return
    pieces, c, o = g.c.choice((2, 3)), g.c.choice((1, 2)), g.c.choice((1, 2))
    x = g.leaf((n, pieces * c, h + 2, w + 2), "f32")
    parts = g.op("split", [x], axis=1, sizes=[c] * pieces)
    kernel = (g.c.integer(1, 3), g.c.integer(1, 3))
    convs = [g.op1("conv2d", [part, _conv_weight(g, o, c, *kernel)]) for part in parts]
    g.maybe_reuse(convs[-1], 0.1)
    g.op1("concat", convs, axis=1)


def motif_reshape_chain(g: Generator) -> None:
    """reshape -> reshape, [reshape ->] transpose -> reshape (shape_reshape, shape_reshape_2)."""
    x = g.pick(lambda v: v.sig.rank >= 1 and v.sig.num_elements > 1) if g.c.boolean(0.5) else None
    x = x if x is not None else g.leaf(g.shape(low_rank=2, high_rank=3), g.float_dtype())
    shape = g.value(x).sig.shape
    first = g.op1("reshape", [x], _refactor(shape, g.c))
    g.maybe_reuse(first, 0.15)
    if g.c.boolean():
        g.op1("reshape", [first], _refactor(g.value(first).sig.shape, g.c) if g.c.boolean(0.7) else shape)
        return
    dims = list(g.value(first).sig.shape)
    where = g.c.integer(0, len(dims))
    unit = g.op1("reshape", [first], (*dims[:where], 1, *dims[where:]))
    rank = len(dims) + 1
    perm = list(range(rank))
    target = g.c.integer(0, rank - 1)
    perm.insert(target, perm.pop(where))  # move the unit dim (another dim when the choice is unlucky)
    if g.c.boolean(0.2) and rank >= 2:
        perm[0], perm[-1] = perm[-1], perm[0]
    moved = g.op1("transpose", [unit], perm=perm)
    g.op1("reshape", [moved], _refactor(g.value(moved).sig.shape, g.c))


def motif_split_concat(g: Generator) -> None:
    """split -> concat of a run of its pieces (split_concat_fusion); nested concats (ZConcatv2dFusionPass)."""
    dtype = g.c.choice((*FLOATS, "i32"))
    shape = list(g.shape(low_rank=1, high_rank=3))
    axis = g.c.integer(0, len(shape) - 1)
    if g.c.boolean():
        shape[axis] = 3 * g.c.choice((1, 2))
        x = g.leaf(shape, dtype)
        third = shape[axis] // 3
        pieces = g.op("split", [x], axis=axis, sizes=[third] * 3)
        start = g.c.integer(0, 1)
        run = list(pieces[start : start + g.c.integer(2, 3 - start)])
        if g.c.boolean(0.15):
            run.reverse()
        g.maybe_reuse(pieces[0], 0.1)
        g.op1("concat", run, axis=axis - len(shape) if g.c.boolean(0.3) else axis)
        return
    a, b, c = (g.leaf(shape, dtype) for _ in range(3))
    inner = g.op1("concat", [a, b], axis=axis)
    g.maybe_reuse(inner, 0.15)
    other_axis = axis if g.c.boolean(0.85) else (axis + 1) % len(shape)
    g.op1("concat", [inner, c] if g.c.boolean() else [c, inner], axis=other_axis - len(shape)
          if g.c.boolean(0.3) else other_axis)


def motif_small_op_softmax(g: Generator) -> None:
    """reduce_max, sub, exp, reduce_sum, div on one axis (SoftmaxSmallOpFusionPass)."""
    x = g.leaf(g.shape(low_rank=1, high_rank=3), g.float_dtype())
    rank = g.value(x).sig.rank
    axis = g.c.integer(0, rank - 1)
    keep = g.c.boolean(0.9)
    top = g.op1("reduce_max", [x], axes=[axis], keep_dims=keep)
    if not keep:
        top = g.op1("reshape", [top], tuple(1 if i == axis else d for i, d in enumerate(g.value(x).sig.shape)))
    e = g.op1("exp", [g.op1("sub", [x, top])])
    g.maybe_reuse(e, 0.1)
    total = g.op1("reduce_sum", [e], axes=[axis], keep_dims=True)
    g.op1("div", [e, total])


MOTIFS: tuple[Callable[[Generator], None], ...] = (
    motif_add_layer_norm,
    motif_add_rms_norm,
    motif_cast_rms_norm,
    motif_add_rms_norm_quant,
    motif_matmul_epilogue,
    motif_attention,
    motif_swiglu,
    motif_conv_batch_norm,
    motif_conv_layout,
    motif_reshape_chain,
    motif_split_concat,
    motif_small_op_softmax,
)


#: The fusion passes each motif is shaped for (the test checks each one fires on some planted instance).
#: MatMulBiasAddFusionPass shares its rewrite with matmul_elem_biasadd_fusion, which runs first in graph-fusion.
MOTIF_PASSES: dict[str, tuple[str, ...]] = {
    "add_layer_norm": ("add_layer_norm_fusion", "add_layer_norm_v3_fusion", "add_layer_norm_ext_fusion"),
    "add_rms_norm": ("add_rms_norm_fusion", "add_rms_norm_quant_fusion", "rms_norm_quant_fusion"),
    "cast_rms_norm": ("add_cast_rms_norm_cast_fusion",),
    "add_rms_norm_quant": ("pattern_fusion_pass",),
    "matmul_epilogue": ("matmul_elem_biasadd_fusion", "matmul_elem_add_fusion", "matmul_elem_relu_fusion",
                        "matmul_elem_gelu_fusion", "inference_matmul_split_fusion"),
    "attention": ("FlashAttentionFusionV1", "FlashAttentionFusionV2"),
    "swiglu": ("inference_swiglu_fusion",),
    "conv_batch_norm": ("ConvBatchnormFusionPass", "BatchNormSplitFusionPass"),
    "conv_layout": ("ConvToFullyConnectionFusionPass", "SplitConvConcatFusionPass"),
    "reshape_chain": ("shape_reshape", "shape_reshape_2"),
    "split_concat": ("split_concat_fusion", "ZConcatv2dFusionPass"),
    "small_op_softmax": ("SoftmaxSmallOpFusionPass",),
}


# --------------------------------------------------------------------------
# Real-graph structure: how values flow in models, which graphs of a dozen random ops never show: one value read
# by many ops, diamonds and residual blocks, wide fan-out and fan-in, long chains, over tens to thousands of ops.
# The graph-kernel clustering builds invalid IR (a kernel called before an operand's definition) on such graphs.


def structure_chain(g: Generator) -> None:
    """A long chain: each op reads the one before (its other operand a hub, a recent value or a weight)."""
    x = g.pick()
    if x is None:
        return
    for _ in range(g.c.integer(3, 24)):
        try:
            x = g.elementwise(x)
        except Reject:
            continue


def structure_hub(g: Generator) -> None:
    """A value already read often read again, by several ops next to recent values."""
    hub = g.read_often()
    hub = hub if hub is not None else g.pick()
    if hub is None:
        return
    h = g.value(hub)
    for _ in range(g.c.integer(2, 6)):
        recent = g.pick(lambda v: v.sig.dtype == h.sig.dtype and _broadcasts(h.sig.shape, v.sig.shape))
        try:
            if recent is not None and recent != hub and g.c.boolean(0.7):
                g.elementwise(recent, hub)
            else:
                g.elementwise(hub)
        except Reject:
            continue


def structure_diamond(g: Generator) -> None:
    """x -> two short branches -> one op joining them; a residual block (x + f(x)) when one branch is x itself."""
    x = g.pick()
    if x is None:
        return
    branches = []
    for _ in range(2):
        tip = x
        for _ in range(0 if branches and g.c.boolean(0.35) else g.c.integer(1, 3)):
            tip = g.elementwise(tip)
        branches.append(tip)
    left, right = branches
    a, b = g.value(left), g.value(right)
    if a.sig.dtype != b.sig.dtype or left == right:
        return  # a select turned one branch into another type: the two stay a fan-out
    if not _broadcasts(b.sig.shape, a.sig.shape):
        left, right = right, left
    if _broadcasts(g.value(right).sig.shape, g.value(left).sig.shape):
        g.elementwise(left, right)


def structure_fan_out(g: Generator) -> None:
    """One value read by many ops at once, as by the heads of a layer."""
    x = g.pick()
    if x is None:
        return
    for _ in range(g.c.integer(3, 12)):
        try:
            g.elementwise(x)
        except Reject:
            continue


def structure_fan_in(g: Generator) -> None:
    """Many values combined into one: a left-deep chain or a balanced tree of binary ops, add_n or concat."""
    first = g.pick()
    if first is None:
        return
    v = g.value(first)
    wanted = g.c.integer(2, 15)
    group = [first]
    for index in reversed(g.usable):  # the newest values that combine with the first
        w = g.value(index)
        if index != first and w.sig.dtype == v.sig.dtype and _broadcasts(w.sig.shape, v.sig.shape):
            group.append(index)
            if len(group) > wanted:
                break
    if len(group) < 3:
        return
    kind = g.c.choice(("chain", "tree", "add_n", "concat"))
    same_shape = [i for i in group if g.value(i).sig.shape == v.sig.shape]
    if kind == "add_n" and v.sig.dtype in FLOAT_DTYPES and len(same_shape) >= 3:
        g.op1("add_n", same_shape)
    elif kind == "concat" and v.sig.rank >= 1 and len(same_shape) >= 3:
        g.op1("concat", same_shape, axis=g.c.integer(0, v.sig.rank - 1))
    elif kind == "tree":  # pairs, then pairs of pairs: the shape of a reduction written out
        level = group
        while len(level) > 1:
            level = [g.elementwise(level[k], level[k + 1]) if k + 1 < len(level) else level[k]
                     for k in range(0, len(level), 2)]
    else:
        total = first
        for other in group[1:]:
            try:
                total = g.elementwise(total, other)
            except Reject:
                continue


def structure_mixed(g: Generator) -> None:
    """The op families of :meth:`Generator.generate` (reductions, layout ops, matmuls, norms, casts, compares) and
    planted patterns, reading the structure's recent values."""
    if g.c.boolean(0.2):
        g.plant_motif()
    else:
        g.generic_step()


#: The steps of the structure family; each graph weighs them differently (a chain-heavy graph, a hub-heavy one...).
STRUCTURE_STEPS: tuple[Callable[[Generator], None], ...] = (
    structure_chain,
    structure_hub,
    structure_diamond,
    structure_fan_out,
    structure_fan_in,
    structure_mixed,
)
#: The main dtype of a structure graph's values; the others come in through casts, compares and the mixed steps.
STRUCTURE_DTYPES = ("f32", "f32", "f16", "bf16", "i32", "i64", "i1")
#: Op counts of the structure family as (low, high, weight): mostly small, so that a long run stays affordable.
STRUCTURE_SIZES: tuple[tuple[int, int, int], ...] = ((40, 80, 60), (80, 200, 25), (200, 600, 11), (600, 2000, 4))
#: Most results of a structure graph (the folds of :meth:`Generator._close_structure` come first).
STRUCTURE_OUTPUTS = 8
#: The share of structure graphs among the graphs of :func:`generate_graph`.
STRUCTURE_RATE = 0.25


def structure_size(chooser: Chooser, most: int = 2000) -> int:
    """An op count for a structure graph: from :data:`STRUCTURE_SIZES`, at most ``most`` (and at least 40)."""
    tiers = [(low, min(high, most), weight) for low, high, weight in STRUCTURE_SIZES if low <= most] or [(40, 40, 1)]
    draw = chooser.integer(0, sum(weight for _, _, weight in tiers) - 1)
    for low, high, weight in tiers:
        if draw < weight:
            return chooser.integer(low, high)
        draw -= weight
    raise AssertionError("unreachable")


def plant(chooser: Chooser, motif: Callable[[Generator], None]) -> GraphCase:
    """A graph holding one instance of ``motif`` (raises Reject when this draw does not fit it)."""
    g = Generator(chooser)
    motif(g)
    g.case.motifs.append(motif.__name__.removeprefix("motif_"))
    g._choose_outputs()
    return g.case


def generate_graph(chooser: Chooser, max_ops: int = 14, motif_rate: float = 0.35,
                   structure_rate: float = STRUCTURE_RATE, max_structure_ops: int = 2000) -> GraphCase:
    """A random graph (see the module docstring) drawn from ``chooser``: with probability ``structure_rate`` one of
    the structure family (40 to ``max_structure_ops`` ops, :func:`structure_size`), else one of at most about
    ``max_ops`` ops; ``motif_rate``: how many steps plant a fusion pattern rather than a single op."""
    g = Generator(chooser, max_ops, motif_rate)
    if structure_rate > 0 and chooser.boolean(structure_rate):
        return g.generate_structured(structure_size(chooser, max_structure_ops))
    return g.generate()


# --------------------------------------------------------------------------
# Comparison.


def compare_results(values: Sequence[Value], got: Sequence[np.ndarray], what: str) -> list[str]:
    """Differences of ``got`` from the generator's reference ``values`` beyond :data:`TOLERANCES`; [] if none."""
    problems = []
    if len(got) != len(values):
        return [f"{what}: {len(got)} results, expected {len(values)}"]
    for k, (want, array) in enumerate(zip(values, got, strict=True)):
        array = np.asarray(array)
        expected = want.array
        if array.shape != expected.shape or array.dtype != expected.dtype:
            problems.append(f"{what}: result {k} is {array.dtype}{list(array.shape)}, expected "
                            f"{expected.dtype}{list(expected.shape)}")
            continue
        if want.sig.dtype in FLOAT_DTYPES:
            rtol, atol = tolerance(coarsest([want.sig.dtype, want.precision]))
            a, b = _as_f64(array), _as_f64(expected)
            error = np.abs(a - b) - (atol * want.scale + rtol * np.abs(b))
            if not np.all(np.isfinite(a)) or (error.size and error.max() > 0):
                worst = int(np.nanargmax(np.where(np.isfinite(a), np.abs(a - b), np.inf)))
                problems.append(f"{what}: result {k} ({want.sig}) differs: at flat index {worst} got "
                                f"{a.flat[worst]!r}, expected {b.flat[worst]!r} (rtol {rtol}, atol {atol} x scale "
                                f"{want.scale:.3g})")
        else:
            limit = 1 if want.quantized else 0
            diff = np.abs(array.astype(np.int64) - expected.astype(np.int64))
            if diff.size and diff.max() > limit:
                worst = int(np.argmax(diff))
                problems.append(f"{what}: result {k} ({want.sig}) differs: at flat index {worst} got "
                                f"{array.flat[worst]!r}, expected {expected.flat[worst]!r}")
    return problems


# --------------------------------------------------------------------------
# Random switch sets.


@dataclass
class SwitchSet:
    """How one pipeline run is switched: graph pipeline text, MindSpore flags, a CANN switch file."""

    pipeline: str
    flags: str = ""
    switch_file: str = ""  # contents of fusion_switch.cfg ("" for none)
    #: for compiled runs: graphfuse.compile's opt_level (None: compile the pipeline above instead)
    compile_opt_level: int | None = None

    def to_json(self) -> str:
        return json.dumps(self.__dict__, indent=1)


def _subset(c: Chooser, options: Sequence[str], most: int = 3) -> list[str]:
    return list(dict.fromkeys(c.choice(options) for _ in range(c.integer(1, most))))


def random_switch_set(c: Chooser) -> SwitchSet:
    """Random switches for every front end (see docs/testing.md)."""
    from graphfuse.pipelines.fusion.graph_fusion import fusion_passes
    from graphfuse.pipelines.graph_kernel.fusion import STEPS
    from graphfuse.pipelines.graph_kernel.op_names import MINDSPORE_OPS

    fusion_names = [cls.name for cls in fusion_passes() if cls.__module__.startswith("graphfuse.")]
    op_names = sorted(MINDSPORE_OPS)
    steps = [name for name, _ in STEPS]
    elements = []
    if c.boolean(0.7):
        elements.append(c.choice(("graph-canonicalize,graph-cse,graph-dce", "graph-canonicalize", "graph-cse")))
    if c.boolean(0.15):  # named passes in a random order, each on unless a front end turns it off
        elements.append(",".join(_subset(c, fusion_names, 4)))
    else:
        options = [f"opt-level={c.integer(0, 3)}"]
        if c.boolean(0.3):
            options.append("enable-pass=" + ",".join(_subset(c, fusion_names)))
        if c.boolean(0.3):
            options.append("disable-pass=" + ",".join(_subset(c, fusion_names)))
        elements.append("graph-fusion{" + " ".join(options) + "}")
    if c.boolean(0.7):
        options = []
        if c.boolean(0.6):
            options.append(f"opt-level={c.integer(0, 3)}")
        for key in ("enable-expand-ops", "disable-expand-ops", "enable-cluster-ops", "disable-cluster-ops"):
            if c.boolean(0.15):
                options.append(f"{key}=" + ",".join(_subset(c, op_names)))
        if c.boolean(0.1):
            options.append("disable-pass=" + ",".join(_subset(c, steps, 2)))
        elements.append("graph-kernel-fusion" + ("{" + " ".join(options) + "}" if options else ""))
    tail = c.choice(("", "graph-dce", "graph-dce,outline-fused-ops", "graph-decompose", "graph-canonicalize,graph-dce"))
    if tail:
        elements.append(tail)
    pipeline = f"builtin.module({','.join(elements)})"

    flags = []
    if c.boolean(0.4):
        flags.append(f"--opt_level={c.integer(0, 3)}")
    for key in ("enable_expand_ops", "disable_expand_ops", "enable_expand_ops_only", "enable_cluster_ops",
                "disable_cluster_ops", "enable_cluster_ops_only"):
        if c.boolean(0.08):
            flags.append(f"--{key}=" + ",".join(_subset(c, op_names)))
    for key in ("enable_pass", "disable_pass"):
        if c.boolean(0.2):
            flags.append(f"--{key}=" + ",".join(_subset(c, fusion_names)))

    switch_file = ""
    if c.boolean(0.3):
        if c.boolean(0.8):
            groups: dict[str, dict[str, str]] = {}
            for group in ("GraphFusion", "UBFusion"):
                entries: dict[str, str] = {}
                if c.boolean(0.5):
                    entries["ALL"] = c.choice(("on", "off"))
                for name in _subset(c, fusion_names) if c.boolean(0.7) else []:
                    entries[name] = c.choice(("on", "off"))
                if entries:
                    groups[group] = entries
            switch_file = json.dumps({"Switch": groups}, indent=1)
        else:  # the legacy one-line-per-pass format
            switch_file = "".join(f"{name}:{c.choice(('on', 'off'))}\n" for name in ["ALL", *_subset(c, fusion_names)])
    compile_opt_level = c.integer(0, 3) if c.boolean(0.6) else None
    return SwitchSet(pipeline, " ".join(flags), switch_file, compile_opt_level)


# --------------------------------------------------------------------------
# Hypothesis strategies.


def graph_cases(max_ops: int = 14, structure_rate: float = STRUCTURE_RATE, max_structure_ops: int = 120):
    """A hypothesis strategy of :class:`GraphCase` (shrinks through its choices, toward the small-graph family).
    Structure graphs stop at ``max_structure_ops`` ops: hypothesis records every choice, and its buffer is small."""
    from hypothesis import strategies as st

    @st.composite
    def strategy(draw: Callable[[Any], Any]) -> GraphCase:
        return generate_graph(HypothesisChooser(draw), max_ops, structure_rate=structure_rate,
                              max_structure_ops=max_structure_ops)

    return strategy()


def switch_sets():
    """A hypothesis strategy of :class:`SwitchSet`."""
    from hypothesis import strategies as st

    @st.composite
    def strategy(draw: Callable[[Any], Any]) -> SwitchSet:
        return random_switch_set(HypothesisChooser(draw))

    return strategy()
