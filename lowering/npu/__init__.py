"""The emulated NPU target: target descriptions, UB/L1 buffer assignment, the GM-traffic emulator."""
