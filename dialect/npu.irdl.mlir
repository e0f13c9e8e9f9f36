// The npu dialect of the emulated NPU target, for `mlir-opt --irdl-file=dialect/npu.irdl.mlir`.
//
// `#npu.mem<"...">` is the memory space of a memref: "gm" (global memory, the off-chip HBM; a memref without
// a memory space is in GM too), "ub" (the vector unit's Unified Buffer), "l1" (the cube unit's input buffer),
// "l0a" / "l0b" (the cube's operand buffers) and "l0c" (the cube's accumulator buffer).
//
// `npu.dma` is an explicit transfer between two buffers of equal shape and element type: GM -> UB/L1 loads
// and UB/L0C -> GM stores are the off-chip traffic the emulator counts; on-chip moves (UB -> L1, ...) are
// not counted.
irdl.dialect @npu {
  irdl.attribute @mem {
    %gm = irdl.is "gm"
    %ub = irdl.is "ub"
    %l1 = irdl.is "l1"
    %l0a = irdl.is "l0a"
    %l0b = irdl.is "l0b"
    %l0c = irdl.is "l0c"
    %kind = irdl.any_of(%gm, %ub, %l1, %l0a, %l0b, %l0c)
    irdl.parameters(kind: %kind)
  }

  // Copy `source` into `target` (same shape and element type, any memory spaces and layouts).
  irdl.operation @dma {
    %source = irdl.base "!builtin.memref"
    %target = irdl.base "!builtin.memref"
    irdl.operands(source: %source, target: %target)
    irdl.results()
  }
}
