// Bandwidth probes for bench/machine.py, built at bench time with gcc -O3 -march=native.
// Each call handles one slice; Python threads (ctypes drops the GIL) run the slices
// in parallel, so no OpenMP runtime joins the process beside graphfuse's and torch's.
#include <stdint.h>
#if defined(__AVX512F__) || defined(__AVX__)
#include <immintrin.h>
#endif

// a = b + s * c with streaming stores: the destination is not read for ownership,
// so only the minimal bytes move (the most a kernel writing fresh output can reach).
void triad_stream(float *restrict a, const float *restrict b, const float *restrict c, float s, long n) {
  long i = 0;
  for (; i < n && ((uintptr_t)(a + i) & 63); i++) a[i] = b[i] + s * c[i];
#if defined(__AVX512F__)
  __m512 vs = _mm512_set1_ps(s);
  for (; i + 16 <= n; i += 16)
    _mm512_stream_ps(a + i, _mm512_fmadd_ps(vs, _mm512_loadu_ps(c + i), _mm512_loadu_ps(b + i)));
  _mm_sfence();
#elif defined(__AVX__)
  __m256 vs = _mm256_set1_ps(s);
  for (; i + 8 <= n; i += 8)
    _mm256_stream_ps(a + i, _mm256_add_ps(_mm256_loadu_ps(b + i), _mm256_mul_ps(vs, _mm256_loadu_ps(c + i))));
  _mm_sfence();
#endif
  for (; i < n; i++) a[i] = b[i] + s * c[i];
}

// One load per 64-byte line, read only: evicts the caches without leaving dirty
// lines for the next timed call to write back.
float read_lines(const float *restrict a, long n) {
  float s = 0.f;
  for (long i = 0; i < n; i += 16) s += a[i];
  return s;
}
