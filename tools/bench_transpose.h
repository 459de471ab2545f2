/* A hand-tuned C transpose for `hcq bench`'s transpose row: what a user who writes the loop themselves for this CPU
 * gets, to show how close the generated kernel is to the machine's transpose limit (the row's goal ratio stays
 * against STREAM copy). Two shapes, since which one wins depends on the machine's state (on a shared 2-vCPU Zen 4
 * VM, 4096x4096: blocked 16x16 tiles ran at 35-37 GB/s one hour and 13-26 the next, 16x4 tiles at 16-29):
 *  - BENCH_TRANSPOSE_BLOCKED: AVX-512 16x16 register tiles (unpack/shuffle) in blocks of
 *    BENCH_TRANSPOSE_BLOCK_ROWS x BENCH_TRANSPOSE_BLOCK_COLS (the best block of a sweep);
 *  - BENCH_TRANSPOSE_STRIPS: 16 rows x 4 columns at a time (four SSE 4x4 transposes), along each 16-row strip;
 * both writing whole output lines with non-temporal stores; scalar tiles on CPUs without AVX-512. */
#ifndef HCQ_TOOLS_BENCH_TRANSPOSE_H
#define HCQ_TOOLS_BENCH_TRANSPOSE_H

#include <stdbool.h>
#include <stddef.h>

#define BENCH_TRANSPOSE_BLOCK_ROWS 256
#define BENCH_TRANSPOSE_BLOCK_COLS 64

/* Pick the variant: the widest this CPU has, or the scalar one when allow_simd is false (tests). Call before the
 * loop runs on worker threads. Returns what will run ("avx512", "scalar"). */
const char *bench_transpose_choose(bool allow_simd);
typedef enum { BENCH_TRANSPOSE_BLOCKED, BENCH_TRANSPOSE_STRIPS } bench_transpose_shape;

/* out[c * rows + r] = x[r * cols + c] for rows r0 <= r < r1 of the rows x cols row-major x (any alignment, any
 * sizes; non-temporal stores only where the output is 64-byte aligned). Ends with a store fence. */
void bench_transpose_rows(bench_transpose_shape shape, float *out, const float *x, size_t rows, size_t cols, size_t r0,
                          size_t r1);

#endif
