/* Baselines for `hcq bench`, measured in the same run on the same worker threads: STREAM-style add and copy loops
 * (plain stores and non-temporal stores), vectorized threaded sum, row-sum, column-sum and softmax loops, a hand-tuned
 * transpose, and OpenBLAS sgemm and somatcopy loaded at run time with dlopen (never linked). */
#ifndef HCQ_TOOLS_BENCH_BASE_H
#define HCQ_TOOLS_BENCH_BASE_H

#include <stdbool.h>
#include <stddef.h>

#include "cpu/cpu_pool.h"
#include "base/status.h"

/* Every baseline runs reps times (1..BENCH_BASE_MAX_REPS) and reports the median time. `hcq bench` runs the pool
 * baselines with reps 1 after each timed run of the kernel they are compared with (interleaved), and OpenBLAS with the
 * count of the kernel's timed runs after them. */
#define BENCH_BASE_MAX_REPS 16

/* c[i] = a[i] + b[i] (or c[i] = a[i] when b is NULL) over n floats, split over `threads` core_ids of the pool.
 * Median of `reps` runs, in seconds; nt selects non-temporal stores (x86_64; plain stores elsewhere). */
hcq_status bench_stream(cpu_pool *pool, int threads, float *c, const float *a, const float *b, size_t n, bool nt,
                        int reps, double *out_s);
/* Vectorized C sum of n floats over `threads` core_ids (four vector accumulators per thread in the widest ISA the
 * CPU has: bench_simd.h), partial sums combined.
 * Median of reps, in seconds; *out_sum receives the total. */
hcq_status bench_base_sum(cpu_pool *pool, int threads, const float *x, size_t n, int reps, double *out_s,
                          double *out_sum);
/* Vectorized C row softmax out = exp(x - max) / sum (libmvec expf where the ISA has it: bench_simd.h), rows split
 * over `threads` core_ids. Median of reps, s. */
hcq_status bench_base_softmax(cpu_pool *pool, int threads, float *out, const float *x, size_t rows, size_t cols,
                              int reps, double *out_s);
/* Vectorized C row sums out[r] = sum of row r (bench_simd_sum per row), rows split over `threads` core_ids.
 * Median of reps, s. */
hcq_status bench_base_row_sum(cpu_pool *pool, int threads, float *out, const float *x, size_t rows, size_t cols,
                              int reps, double *out_s);
/* Vectorized C column sums out[c] = sum over rows of x[r][c] (vector accumulators across the columns:
 * bench_simd_col_sums_add), split over `threads` core_ids by columns or, split_rows, by rows (per-thread partial
 * rows, added up after the join; the time includes that). Median of reps, s. */
hcq_status bench_base_col_sum(cpu_pool *pool, int threads, bool split_rows, float *out, const float *x, size_t rows,
                              size_t cols, int reps, double *out_s);
/* The hand-tuned C transpose (bench_transpose.h; strips: the 16x4 strip shape, else blocked 16x16 tiles) out
 * (cols x rows) = x^T (rows x cols), rows split over `threads` core_ids in multiples of 16. Median of reps, s.
 * bench_base_transpose_isa: which variant runs ("avx512", "scalar"). */
hcq_status bench_base_transpose(cpu_pool *pool, int threads, bool strips, float *out, const float *x, size_t rows,
                                size_t cols, int reps, double *out_s);
const char *bench_base_transpose_isa(void);
/* The pool's own round trip: one empty EXEC with `threads` ids, submit to completion, median of reps, in us. */
hcq_status bench_pool_roundtrip(cpu_pool *pool, int threads, int reps, double *out_us);

/* OpenBLAS: c = a * b (loaded once with the best core type for this CPU: bench_machine.h), row-major n x n float32. *out_available false (and no error) when libopenblas.so.0 or its
 * cblas_sgemm cannot be loaded. Median of reps, in seconds, with openblas_set_num_threads(threads) when present. */
hcq_status bench_openblas_sgemm(int threads, int n, const float *a, const float *b, float *c, int reps,
                                bool *out_available, double *out_s);
/* The same for `batch` independent row-major products c[i] (m x n) = a[i] (m x k) * b[i] (k x n), stored one after
 * the other (one cblas_sgemm call per product, as a user without a batched BLAS call would write it). */
hcq_status bench_openblas_sgemm_batched(int threads, int batch, int m, int k, int n, const float *a, const float *b,
                                        float *c, int reps, bool *out_available, double *out_s);
/* OpenBLAS's out-of-place transpose: cblas_somatcopy(row-major, trans, rows, cols, 1, x, cols, out, rows), as a
 * user would call it; *out_available false (no error) without the library or the symbol. Median of reps, s. */
hcq_status bench_openblas_somatcopy(int threads, int rows, int cols, const float *x, float *out, int reps,
                                    bool *out_available, double *out_s);
/* Which OpenBLAS ran and with which core ("OpenBLAS 0.3.21 ... , core Cooperlake (chosen from the CPU features)"). */
const char *bench_openblas_describe(void);

#endif
