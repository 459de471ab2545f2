/* Vectorized loops for the `hcq bench` baselines, dispatched at run time to the widest ISA the CPU has
 * (AVX-512, AVX2, else 16-byte GNU vectors: SSE2/NEON). Softmax uses glibc's libmvec expf where the ISA has one. */
#ifndef HCQ_TOOLS_BENCH_SIMD_H
#define HCQ_TOOLS_BENCH_SIMD_H

#include <stddef.h>

/* Pick the variants (call once, before the loops run on worker threads). */
void bench_simd_choose(void);
/* Sum of n floats (vector accumulators, then a horizontal add). */
float bench_simd_sum(const float *x, size_t n);
/* o = exp(x - max) / sum over one row of cols floats. */
void bench_simd_softmax_row(float *o, const float *x, size_t cols);
/* What ran, for the report: "avx512", "avx2", "sse2", "neon"; "avx512 + libmvec expf", "scalar libm expf". */
const char *bench_simd_sum_isa(void);
const char *bench_simd_softmax_isa(void);

#endif
