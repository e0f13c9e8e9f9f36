"""PyTorch's dtypes as the graph dialect spells them, and tensors to numpy arrays and back."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import torch

#: torch dtypes the graph dialect has, by their graph-dialect spelling.
_DTYPES: dict[torch.dtype, str] = {
    torch.float32: "f32",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.int8: "i8",
    torch.int32: "i32",
    torch.int64: "i64",
    torch.bool: "i1",
}
_TORCH_DTYPES = {name: dtype for dtype, name in _DTYPES.items()}
_FLOATS = ("f32", "f16", "bf16")
#: Float types PyTorch computes in f32 inside its kernels (attention's scores, softmax) and rounds once.
_LOW_PRECISION = ("f16", "bf16")
#: torch's "to the end of the dimension" in slices
_INT64_MAX = 2**63 - 1


def to_numpy(tensor: torch.Tensor) -> np.ndarray:
    """A numpy copy of a CPU tensor; bfloat16 becomes an ml_dtypes.bfloat16 array."""
    tensor = tensor.detach().cpu().contiguous()
    if tensor.dtype == torch.bfloat16:
        return tensor.view(torch.int16).numpy().view(ml_dtypes.bfloat16).copy()
    return tensor.numpy().copy()


def to_torch(array: np.ndarray) -> torch.Tensor:
    """A tensor holding ``array`` (bfloat16 arrays included)."""
    array = np.ascontiguousarray(array)
    if array.dtype == np.dtype(ml_dtypes.bfloat16):
        return torch.from_numpy(array.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(array.copy())
