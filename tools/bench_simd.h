/* Vectorized loops for the `hcq bench` baselines, dispatched at run time to the widest ISA the CPU has
 * (AVX-512, AVX2, else 16-byte GNU vectors: SSE2/NEON). Softmax uses glibc's libmvec expf where the ISA has one. */
#ifndef HCQ_TOOLS_BENCH_SIMD_H
#define HCQ_TOOLS_BENCH_SIMD_H

#include <stddef.h>

/* Pick the variants (call once, before the loops run on worker threads). */
void bench_simd_choose(void);
/* Sum of n floats (vector accumulators, then a horizontal add). */
float bench_simd_sum(const float *x, size_t n);
/* out[r] = sum of row r of a rows x cols row-major matrix (bench_simd_sum per row). */
void bench_simd_row_sums(float *out, const float *x, size_t rows, size_t cols);
/* acc[c] += sum over r < rows of x[r * ld + c], c < cols: column sums with vector accumulators across the columns. */
void bench_simd_col_sums_add(float *acc, const float *x, size_t rows, size_t cols, size_t ld);
/* o = exp(x - max) / sum over one row of cols floats. */
void bench_simd_softmax_row(float *o, const float *x, size_t cols);
/* What ran, for the report: "avx512", "avx2", "sse2", "neon"; "avx512 + libmvec expf", "scalar libm expf". */
const char *bench_simd_sum_isa(void);
const char *bench_simd_softmax_isa(void);
/* The column sums': "avx512", else the 16-byte generic loop's ISA. */
const char *bench_simd_col_isa(void);

#endif
