"""The speed-up of MatMulAllReduce's overlap on N ranks: a cost model of one tensor-parallel decoder layer.

    python -m graphfuse.tools.tp_cost_model [--hidden 4096] [--ffn 11008] [--tokens 2048] [--dtype-bytes 2]
                                            [--gflops G | --measure] [--bandwidth-gbs 25] [--latency-us 10]
                                            [--ranks 2,4,8,16,32,64] [--shared-cores]

A Llama-style layer split Megatron's way over ``p`` ranks computes, per rank,
its share of the seven linear layers and of attention, and sums two partial
results of [tokens, hidden] (after o_proj and after down_proj) with a ring
all-reduce: ``2 (p - 1) / p * bytes / bandwidth + 2 (p - 1) * latency``.

- unfused: each row-parallel matmul, then its all-reduce;
- fused (MatMulAllReduce): the matmul in ``c`` row blocks, block k's
  all-reduce while block k + 1 is computed: ``t_matmul / c + (c - 1) * max(
  t_matmul / c, t_reduce(c)) + t_reduce(c)``, where a block's all-reduce
  carries 1/c of the bytes and all of the latency; the best ``c`` of 1, 2, 4,
  8, 16 (the compiled form picks by message size, docs/distributed.md).

The compute rate is measured (``--measure``: graphfuse's own matmul on this
machine, all its cores, at the shape of a rank's o_proj for 8 ranks) or
given (``--gflops``, e.g. a device's).  ``--shared-cores`` models
communication that runs on the cores computing (gloo between processes of
one machine): then nothing overlaps, and splitting only adds latency.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass

import numpy as np

from graphfuse.tools.reporting import UsageError, run_tool

__all__ = ["LayerModel", "main", "measure_gflops"]

CHUNK_CHOICES = (1, 2, 4, 8, 16)


@dataclass(frozen=True)
class LayerModel:
    """One tensor-parallel decoder layer's time per rank (seconds)."""

    hidden: int
    ffn: int
    tokens: int
    dtype_bytes: int
    gflops: float
    bandwidth: float  # bytes per second of each rank's link
    latency: float  # seconds per ring step
    shared_cores: bool = False

    def _matmul(self, m: int, k: int, n: int) -> float:
        return 2.0 * m * k * n / (self.gflops * 1e9)

    def compute(self, ranks: int) -> tuple[float, float]:
        """(the rest of the layer's compute, the two row-parallel matmuls' compute) per rank."""
        h, f, t = self.hidden, self.ffn, self.tokens
        column = self._matmul(t, h, 3 * h // ranks) + self._matmul(t, h, 2 * f // ranks)  # qkv, gate/up
        attention = 2 * self._matmul(t, h // ranks, t)  # scores and context over this rank's heads
        row = self._matmul(t, h // ranks, h) + self._matmul(t, f // ranks, h)  # o_proj, down_proj
        return column + attention, row

    def all_reduce(self, ranks: int, nbytes: float) -> float:
        if ranks == 1:
            return 0.0
        return 2 * (ranks - 1) / ranks * nbytes / self.bandwidth + 2 * (ranks - 1) * self.latency

    def _row_parallel(self, ranks: int, matmul: float, chunks: int) -> float:
        """One row-parallel matmul and its all-reduce in ``chunks`` blocks (1: unfused)."""
        nbytes = self.tokens * self.hidden * self.dtype_bytes
        block_compute, block_reduce = matmul / chunks, self.all_reduce(ranks, nbytes / chunks)
        if chunks == 1 or self.shared_cores:
            return matmul + chunks * block_reduce
        return block_compute + (chunks - 1) * max(block_compute, block_reduce) + block_reduce

    def layer(self, ranks: int, fused: bool) -> tuple[float, int]:
        """(the layer's time per rank, the row blocks chosen) unfused or fused."""
        rest, row = self.compute(ranks)
        per_matmul = row / 2  # o_proj and down_proj, modelled as equal halves of the row-parallel work
        if not fused:
            return rest + 2 * self._row_parallel(ranks, per_matmul, 1), 1
        best = min(CHUNK_CHOICES, key=lambda c: self._row_parallel(ranks, per_matmul, c))
        return rest + 2 * self._row_parallel(ranks, per_matmul, best), best


def measure_gflops(tokens: int, k: int, n: int, repeat: int = 5) -> float:
    """graphfuse's matmul rate on this machine (all cores) for a [tokens, k] x [k, n] f32 product."""
    import graphfuse

    b = graphfuse.GraphBuilder("rate")
    b.ret(b.matmul(b.arg((tokens, k)), b.arg((k, n))))
    executable = graphfuse.compile(b.module)
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((tokens, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    out = executable.empty_outputs()
    executable(x, w, out=out)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        executable(x, w, out=out)
        times.append(time.perf_counter() - start)
    return 2.0 * tokens * k * n / statistics.median(times) / 1e9


def _ranks(text: str) -> list[int]:
    try:
        ranks = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise UsageError(f"--ranks takes comma-separated integers, got '{text}'") from None
    if not ranks or any(r < 1 for r in ranks):
        raise UsageError(f"--ranks takes positive integers, got '{text}'")
    return ranks


def _body(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="tp_cost_model", description=__doc__.split("\n\n")[0])
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--ffn", type=int, default=11008)
    parser.add_argument("--tokens", type=int, default=2048)
    parser.add_argument("--dtype-bytes", type=int, default=2, help="bytes per element summed (2: f16/bf16)")
    rate = parser.add_mutually_exclusive_group()
    rate.add_argument("--gflops", type=float, help="compute rate per rank, GFLOP/s")
    rate.add_argument("--measure", action="store_true", help="measure graphfuse's matmul rate here (default)")
    parser.add_argument("--bandwidth-gbs", type=float, default=25.0, help="link bandwidth per rank, GB/s")
    parser.add_argument("--latency-us", type=float, default=10.0, help="latency of one ring step, microseconds")
    parser.add_argument("--ranks", default="2,4,8,16,32,64")
    parser.add_argument("--shared-cores", action="store_true",
                        help="communication runs on the computing cores (nothing overlaps)")
    args = parser.parse_args(argv)
    ranks = _ranks(args.ranks)
    for name in ("hidden", "ffn", "tokens", "dtype_bytes"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name.replace('_', '-')} must be positive")
    if args.gflops is not None and args.gflops <= 0:
        raise UsageError("--gflops must be positive")
    gflops = args.gflops if args.gflops is not None else measure_gflops(
        min(args.tokens, 512), args.hidden // 8, args.hidden)
    model = LayerModel(args.hidden, args.ffn, args.tokens, args.dtype_bytes, gflops, args.bandwidth_gbs * 1e9,
                       args.latency_us * 1e-6, args.shared_cores)
    print(f"layer: hidden {args.hidden}, ffn {args.ffn}, {args.tokens} tokens, {args.dtype_bytes}-byte sums; "
          f"compute {gflops:.1f} GFLOP/s per rank ({'measured' if args.gflops is None else 'given'}); link "
          f"{args.bandwidth_gbs:g} GB/s, {args.latency_us:g} us per step"
          + ("; communication on the computing cores" if args.shared_cores else ""))
    print(f"{'ranks':>5}  {'unfused ms':>10}  {'fused ms':>9}  {'blocks':>6}  {'all-reduce ms':>13}  "
          f"{'row-matmul ms':>13}  {'speed-up':>8}")
    for p in ranks:
        unfused, _ = model.layer(p, fused=False)
        fused, chunks = model.layer(p, fused=True)
        _, row = model.compute(p)
        reduce = model.all_reduce(p, args.tokens * args.hidden * args.dtype_bytes)
        print(f"{p:>5}  {unfused * 1e3:>10.3f}  {fused * 1e3:>9.3f}  {chunks:>6}  {2 * reduce * 1e3:>13.3f}  "
              f"{row * 1e3:>13.3f}  {unfused / fused:>7.2f}x")
    return 0


def main(argv: list[str] | None = None) -> None:
    sys.exit(run_tool("tp_cost_model", _body, argv))


if __name__ == "__main__":
    main()
