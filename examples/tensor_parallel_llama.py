"""The transformers library's Llama decoder layer split over ranks (Megatron tensor parallelism), run by graphfuse.

    torchrun --nproc-per-node=2 examples/tensor_parallel_llama.py [--seq 64] [--hidden 256] [--heads 8]
                                                                  [--ffn 512] [--layers 1] [--repeat 20]
                                                                  [--chunks N] [--check 1e-5]

The heads and the MLP's width must divide among the ranks; by default there are
8 heads (rounded up to a multiple of the ranks) of 32 channels and the MLP is
twice the hidden size.

Every rank builds the same model (a fixed seed, random weights, no downloads),
imports it with its parameters as arguments, annotates the linear layers'
weights Megatron's way (q, k, v, gate, up split along their outputs; o and
down along their inputs: ``graphfuse.sharding.megatron_shardings``), takes
its own graph (``graph-shard-partition``), and compiles it twice with
``graphfuse.distributed``: fused (the default pipeline, MatMulAllReduce
included: each row-parallel matmul and its all-reduce one op, the
all-reduce of each row block overlapping the next block's matmul) and
unfused (MatMulAllReduce switched off: the matmul, then the all-reduce).
Each rank is passed its shards of the weights.  ``--chunks`` sets the row
blocks of each fused matmul (graphfuse chooses one block when the ranks share
this machine's cores: their communication has no idle core to overlap on).  Rank 0 prints the largest
error of both against the single-process graph (graphfuse.compile of the
whole model) and PyTorch, and the median time of a call of each, with its
compute and communication parts.  ``--check R`` exits 1 when an error
exceeds R (relative to the largest magnitude of the output).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
import torch
import torch.distributed as dist

import graphfuse
from graphfuse import distributed, sharding
from graphfuse.frontends.torch import import_module


class LlamaLayers(torch.nn.Module):
    """transformers' LlamaModel called with ``inputs_embeds``, returning its last hidden state."""

    def __init__(self, hidden: int, heads: int, ffn: int, layers: int):
        super().__init__()
        import transformers as hf

        config = hf.LlamaConfig(hidden_size=hidden, intermediate_size=ffn, num_hidden_layers=layers,
                                num_attention_heads=heads, num_key_value_heads=heads, vocab_size=1000)
        self.model = hf.LlamaModel(config).eval()

    def forward(self, embeds: torch.Tensor) -> torch.Tensor:
        return self.model(inputs_embeds=embeds, use_cache=False).last_hidden_state


def _median_ms(call, repeat: int) -> tuple[float, dict[str, float]]:
    times, parts = [], []
    for _ in range(repeat):
        dist.barrier()
        start = time.perf_counter()
        executable_parts = call()
        times.append(time.perf_counter() - start)
        parts.append(executable_parts)
    median = statistics.median(times)
    split = {key: statistics.median(p[key] for p in parts) * 1e3 for key in parts[0]}
    return median * 1e3, split


def _relative_error(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.abs(got.astype(np.float64) - want).max() / max(np.abs(want).max(), 1e-30))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--hidden", type=int, help="default: 32 per head")
    parser.add_argument("--heads", type=int, help="default: 8, or the next multiple of the ranks")
    parser.add_argument("--ffn", type=int, help="default: twice the hidden size")
    parser.add_argument("--layers", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--chunks", type=int, help="row blocks of each fused matmul (default: graphfuse's choice)")
    parser.add_argument("--check", type=float, help="exit 1 when an error exceeds this relative error")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank, ranks = dist.get_rank(), dist.get_world_size()
    try:
        return _run(args, rank, ranks)
    except graphfuse.GraphfuseError as error:
        print(f"tensor_parallel_llama: rank {rank}: {error}", file=sys.stderr)
        return 1
    finally:
        dist.destroy_process_group()


def _sizes(args: argparse.Namespace, ranks: int) -> str | None:
    """Fills in the default sizes for ``ranks``; what does not divide among them, or None."""
    args.heads = args.heads or -(-8 // ranks) * ranks
    args.hidden = args.hidden or 32 * args.heads
    args.ffn = args.ffn or 2 * args.hidden
    problems = [f"--{name} {value}" for name, value in (("heads", args.heads), ("ffn", args.ffn))
                if value % ranks]
    if problems:
        return f"{' and '.join(problems)} do not divide among {ranks} ranks (each rank holds 1/{ranks} of them)"
    if args.hidden % args.heads:
        return f"--hidden {args.hidden} is not a multiple of --heads {args.heads}"
    return None


def _run(args: argparse.Namespace, rank: int, ranks: int) -> int:
    problem = _sizes(args, ranks)
    if problem is not None:
        if rank == 0:
            print(f"tensor_parallel_llama: error: {problem}", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    model = LlamaLayers(args.hidden, args.heads, args.ffn, args.layers)
    x = torch.randn(1, args.seq, args.hidden)
    imported = import_module(model, (x,), params="arguments")
    arguments = [x.numpy(), *imported.parameters]

    spec = sharding.megatron_shardings(imported.parameter_names)
    rank_graph = sharding.partition(sharding.shard_arguments(imported.module, spec, ranks), rank)
    rank_arguments = sharding.shard_argument_arrays(arguments, spec, rank, ranks)
    fused = distributed.compile(rank_graph, chunks=args.chunks)
    unfused = distributed.compile(rank_graph, graph_kernel_flags="--disable_pass=MatMulAllReduce")

    (got_fused,) = fused(*rank_arguments)
    (got_unfused,) = unfused(*rank_arguments)
    fused_ms, fused_parts = _median_ms(lambda: (fused(*rank_arguments), fused.timings)[1], args.repeat)
    unfused_ms, unfused_parts = _median_ms(lambda: (unfused(*rank_arguments), unfused.timings)[1], args.repeat)

    status = 0
    if rank == 0:
        (single,) = graphfuse.compile(imported.module)(*arguments)
        with torch.no_grad():
            eager = model(x).numpy()
        errors = {"fused": _relative_error(got_fused, single), "unfused": _relative_error(got_unfused, single),
                  "fused vs PyTorch": _relative_error(got_fused, eager)}
        print(f"{ranks} ranks, {args.layers} Llama decoder layer(s), seq {args.seq}, hidden {args.hidden}, "
              f"{args.heads} heads, ffn {args.ffn}; each rank holds 1/{ranks} of the linear layers' weights")
        print(f"  collectives per call: {fused.collectives} matmul_all_reduce (fused), {unfused.collectives} "
              "matmul then all_reduce (unfused)")
        print("  max relative error against the single-process graph: "
              f"fused {errors['fused']:.2e}, unfused {errors['unfused']:.2e}; fused against PyTorch "
              f"{errors['fused vs PyTorch']:.2e}")
        print(f"  time per call (median of {args.repeat}): fused {fused_ms:.3f} ms "
              f"(compute {fused_parts['compute']:.3f}, collectives {fused_parts['collectives']:.3f}), "
              f"unfused {unfused_ms:.3f} ms (compute {unfused_parts['compute']:.3f}, collectives "
              f"{unfused_parts['collectives']:.3f}): fused / unfused {fused_ms / unfused_ms:.2f}")
        if args.check is not None and max(errors["fused"], errors["unfused"]) > args.check:
            print(f"error: the ranks' result differs from the single-process graph by more than {args.check}",
                  file=sys.stderr)
            status = 1
    status_tensor = torch.tensor([status])
    dist.broadcast(status_tensor, 0)
    return int(status_tensor.item())


if __name__ == "__main__":
    sys.exit(main())
