"""Front ends: import models from other frameworks into the graph dialect.

- :mod:`graphfuse.frontends.torch`: PyTorch modules through ``torch.export`` (extra ``graphfuse[torch]``);
- :mod:`graphfuse.frontends.onnx`: ONNX models (extra ``graphfuse[onnx]``, command ``graphfuse-import``).

Each importer is imported on demand, so the core never needs either framework.
"""
