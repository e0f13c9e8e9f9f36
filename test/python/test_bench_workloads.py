"""Every benchmark workload at its small size: graphfuse unfused and fused agree with the workload's numpy code
(a real model: with torch eager)."""

from __future__ import annotations

import numpy as np
import pytest

import graphfuse
from bench import models
from bench.run import torch_reference
from bench.workloads import WORKLOADS


def _cases() -> list:
    """(name, opt level) of every workload; a real model unfused is slow (10-15 s each) and left to make test-slow."""
    return [
        pytest.param(name, level, marks=[pytest.mark.slow] if WORKLOADS[name].model and level == 0 else [])
        for name in sorted(WORKLOADS)
        for level in (0, 2)
    ]


@pytest.mark.parametrize(("name", "opt_level"), _cases())
def test_workload_numerics(name: str, opt_level: int) -> None:
    workload = WORKLOADS[name]
    if workload.model and (missing := models.available(workload.model)):
        pytest.skip(missing)
    params = workload.sizes["small"]
    inputs = workload.inputs(np.random.default_rng(3), **params)
    module = workload.build(**params)
    executable = graphfuse.compile(module, opt_level=opt_level)
    got = executable(*inputs)
    if workload.numpy is not None:
        want = workload.numpy(inputs, **params)
    elif workload.model:  # a real model: against its own framework
        want = torch_reference(workload, params, inputs)
    else:
        want = executable.reference(*inputs)
    assert len(got) == len(want)
    if workload.dtype == "int8":  # exact integer sums, scaled and rounded as the reference does: bit for bit
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)
        return
    # a bf16 output is the f32 value rounded once: half a bf16 step, 2^-8 of it, from the f32 reference
    rtol = 2e-5 if workload.dtype == "f32" else 2.0**-8 + 2e-5
    for g, w in zip(got, want, strict=True):
        scale = max(1.0, float(np.abs(w).max()))
        np.testing.assert_allclose(np.asarray(g, np.float32), w, rtol=rtol, atol=2e-6 * scale)


def test_fused_workloads_have_kernels() -> None:
    """At opt level 2 every workload is fused into at least one kernel."""
    for name, workload in WORKLOADS.items():
        if workload.model and models.available(workload.model):
            continue
        executable = graphfuse.compile(workload.build(**workload.sizes["small"]), opt_level=2)
        assert executable.kernels >= 1, name
