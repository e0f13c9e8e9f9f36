"""The emulated NPU target: target descriptions, UB/L1 buffer assignment, the GM-traffic emulator."""

from graphfuse.lowering.npu import buffer_assign, outline  # noqa: F401  (register npu-buffer-assign, npu-outline-ops)
