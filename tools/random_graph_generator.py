"""The random op generator: :class:`Generator` builds one well-defined, well-conditioned op at a time
on a :class:`~graphfuse.tools.random_graph_cases.GraphCase`, evaluating each with the reference
semantics as it goes.
"""


from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from graphfuse.dialect.catalog import VerifyError, lookup_op
from graphfuse.dialect.evaluate import evaluate_op, widen
from graphfuse.dialect.types import FLOAT_DTYPES, NUMPY_DTYPES, TensorSig
from graphfuse.tools.random_graph_cases import (
    FLOATS,
    MAX_MAGNITUDE,
    ROUNDING_SHARE,
    Chooser,
    GraphCase,
    Node,
    Reject,
    Value,
    _as_f64,
    _broadcasts,
    _margin,
    _refactor,
    check_value,
    coarsest,
    far_from,
    tolerance,
)
from graphfuse.tools.random_graph_motifs import MOTIFS, STRUCTURE_DTYPES, STRUCTURE_OUTPUTS, STRUCTURE_STEPS

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
