"""Graph-kernel fusion (MindSpore's automatic fusion): expand composite ops, simplify, cluster into kernels."""
