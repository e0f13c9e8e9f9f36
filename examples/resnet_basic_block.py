"""A ResNet basic block in plain PyTorch (eval mode), imported, fused and compiled by graphfuse.

    python examples/resnet_basic_block.py [--size 32] [--channels 32] [--repeat 50]

The block: 3x3 conv, batch norm, ReLU, 3x3 conv, batch norm, the identity
shortcut added, ReLU (torchvision's BasicBlock without downsampling).  Random
weights and random running statistics, so that folding each batch norm into
its conv (ConvBatchnormFusionPass, which needs the parameters as constants)
changes real numbers.  The run prints the import summary, the fusions that
fired, the error against PyTorch and the time of both.
"""

from __future__ import annotations

import argparse

import torch
from torch import nn

#: fusion passes that must fire on this block (checked by the tests)
EXPECTED_FUSIONS = ("ConvBatchnormFusionPass",)


class BasicBlock(nn.Module):
    def __init__(self, channels: int = 16):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + x)


def build(size: int = 16, channels: int = 16, batch: int = 1, seed: int = 0):
    """The block with random weights and statistics, and a random input [batch, channels, size, size]."""
    torch.manual_seed(seed)
    block = BasicBlock(channels).eval()
    with torch.no_grad():
        for bn in (block.bn1, block.bn2):
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.5, 0.5)
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
    return block, (torch.randn(batch, channels, size, size),)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=16, help="input height and width")
    parser.add_argument("--channels", type=int, default=16)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=20, help="timed calls (median)")
    parser.add_argument("--params", choices=("constants", "arguments"), default="constants")
    args = parser.parse_args()

    from graphfuse.frontends.torch import compare

    block, inputs = build(args.size, args.channels, args.batch)
    print(compare(block, inputs, name="ResNet basic block", params=args.params, repeat=args.repeat).report())


if __name__ == "__main__":
    main()
