/* The machine's arithmetic peaks for `make bench`: loops of independent 512-bit multiply-adds, 12 accumulators
   (more than the latency of each instruction times the units that issue it), nothing else in the loop body.
   Per instruction: vfmadd231ps 16 f32 multiply-adds (32 flops), vdpbf16ps 32 bf16 products summed in pairs
   into 16 f32 lanes (64 flops), vpdpbusd 64 u8 x s8 products summed in fours into 16 i32 lanes (128 ops).
   Call a loop only on a CPU whose flags list its instruction (avx512f, avx512_bf16, avx512_vnni). */

#define STEP(op, i) #op " %%zmm13, %%zmm14, %%zmm" #i "\n\t"
#define BODY(op)                                                                                         \
  STEP(op, 0) STEP(op, 1) STEP(op, 2) STEP(op, 3) STEP(op, 4) STEP(op, 5) STEP(op, 6) STEP(op, 7)       \
  STEP(op, 8) STEP(op, 9) STEP(op, 10) STEP(op, 11)
#define CLOBBERED "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", \
                  "xmm11", "xmm13", "xmm14", "cc"
#define PEAK_LOOP(name, op)                                                                             \
  void name(long iterations) {                                                                          \
    __asm__ volatile("vpxord %%zmm13, %%zmm13, %%zmm13\n\t"                                             \
                     "vpxord %%zmm14, %%zmm14, %%zmm14\n\t"                                             \
                     "1:\n\t" BODY(op) "dec %0\n\t"                                                     \
                     "jnz 1b"                                                                           \
                     : "+r"(iterations)                                                                 \
                     :                                                                                  \
                     : CLOBBERED);                                                                      \
  }

#if defined(__x86_64__)
PEAK_LOOP(peak_f32_fma, vfmadd231ps)
PEAK_LOOP(peak_bf16_dot, vdpbf16ps)
PEAK_LOOP(peak_int8_dot, vpdpbusd)
#endif

/* Instructions in one iteration of each loop. */
int peak_instructions_per_iteration(void) { return 12; }
