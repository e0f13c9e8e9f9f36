"""A plugin whose replacement computes something else: registration fails."""

import numpy as np

import graphfuse


def search(b, x):
    return x * b.sigmoid(x)


def replace(b, x):
    return b.relu(x)


graphfuse.register_replacement(search, replace, [np.linspace(-2, 2, 8, dtype=np.float32)], name="user_wrong_fusion")
