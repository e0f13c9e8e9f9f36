"""A pass plugin defining two user fusions with graphfuse.register_replacement.

user_silu_fusion:     x * sigmoid(x)                              => silu(x)
user_rms_norm_fusion: x * rsqrt(mean(x * x, -1) + 1e-6) * gamma   => rms_norm(x, gamma)
"""

import numpy as np

import graphfuse


def silu_search(b, x):
    return x * b.sigmoid(x)


def silu_replace(b, x):
    return b.silu(x)


def rms_norm_search(b, x, gamma):
    return x * b.rsqrt(b.reduce_mean(x * x, axes=[-1], keep_dims=True) + 1e-6) * gamma


def rms_norm_replace(b, x, gamma):
    return b.rms_norm(x, gamma, epsilon=1e-6)


rng = np.random.default_rng(0)
x = rng.standard_normal((4, 8)).astype(np.float32)
gamma = rng.standard_normal(8).astype(np.float32)
graphfuse.register_replacement(silu_search, silu_replace, [x], name="user_silu_fusion")
graphfuse.register_replacement(rms_norm_search, rms_norm_replace, [x, gamma], name="user_rms_norm_fusion")
