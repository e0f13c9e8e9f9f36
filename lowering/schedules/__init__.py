"""The code generator's transform-dialect library: one ``.mlir`` file of named sequences per op family (contractions,
row kernels), and how a schedule recorded on an op runs them (:mod:`.library`)."""
