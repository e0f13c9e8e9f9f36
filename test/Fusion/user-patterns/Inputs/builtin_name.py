"""A plugin that tries to take a built-in pass's name: registration fails, even with replace=True."""

import numpy as np

import graphfuse

graphfuse.register_replacement(
    lambda b, x: b.neg(b.neg(x)), lambda b, x: b.abs(x) * 0.0 + x, [np.ones(4, np.float32)],
    name="add_rms_norm_fusion", replace=True,
)
