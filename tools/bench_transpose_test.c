/* The hand-tuned transpose baseline (tools/bench_transpose.c) against the plain double loop, bit for bit (NaN
 * payloads and -0 included: a transpose moves bits): square and ragged sizes around the 16x16 tile and the
 * 256x64 block, in both shapes (blocked 16x16 tiles, 16x4 strips), output and input at 4-byte offsets of a line (non-temporal stores only where aligned), row
 * ranges split where the pool splits them and at odd rows, in both variants (AVX-512 where the CPU has it, scalar). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "tools/bench_transpose.h"

static uint32_t rng_state = 12345;
static uint32_t next_bits(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return rng_state;
}

/* rows x cols from x (offset xo floats into a 64-byte aligned buffer) into out (offset oo), rows split at `split`;
 * every output element checked, and the guard words around the output untouched. */
static bench_transpose_shape g_shape;

static void check_one(size_t rows, size_t cols, size_t xo, size_t oo, size_t split) {
  size_t n = rows * cols, guard = 16;
  uint32_t *xb = aligned_alloc(64, ((n + xo) * 4 + 63) & ~(size_t)63);
  uint32_t *ob = aligned_alloc(64, ((n + oo + guard) * 4 + 63) & ~(size_t)63);
  CHECK(xb && ob);
  if (!xb || !ob) return;
  static const uint32_t special[] = {0x7fc00001u, 0xffbfffffu, 0x80000000u, 0x00000001u, 0x7f800000u, 0xff800000u};
  for (size_t i = 0; i < n; i++) xb[xo + i] = i % 7 == 3 ? special[i % 6] : next_bits();
  for (size_t i = 0; i < n + oo + guard; i++) ob[i] = 0xdeadbeefu;
  float *x = (float *)(xb + xo), *out = (float *)(ob + oo);
  if (split > rows) split = rows;
  bench_transpose_rows(g_shape, out, x, rows, cols, 0, split);
  bench_transpose_rows(g_shape, out, x, rows, cols, split, rows);
  size_t bad = 0;
  for (size_t r = 0; r < rows; r++)
    for (size_t c = 0; c < cols; c++) bad += ob[oo + c * rows + r] != xb[xo + r * cols + c];
  for (size_t i = 0; i < oo; i++) bad += ob[i] != 0xdeadbeefu;
  for (size_t i = 0; i < guard; i++) bad += ob[oo + n + i] != 0xdeadbeefu;
  testing_checks++;
  if (bad) {
    testing_failures++;
    fprintf(stderr, "transpose (shape %d) %zux%zu, x offset %zu, out offset %zu, split %zu: %zu words wrong\n",
            (int)g_shape, rows, cols, xo, oo, split, bad);
  }
  free(xb);
  free(ob);
}

static void check_shape(void) {
  static const size_t sizes[][2] = {{1, 1},   {1, 17},  {17, 1},   {15, 16},  {16, 16},  {16, 32},   {33, 17},
                                    {64, 64}, {48, 80}, {257, 65}, {256, 64}, {300, 130}, {512, 512}, {100, 1000}};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    size_t rows = sizes[s][0], cols = sizes[s][1];
    size_t splits[] = {0, (rows / 2 + 15) & ~(size_t)15, rows / 2 + 1};
    for (int k = 0; k < 3; k++) check_one(rows, cols, 0, 0, splits[k]);
    for (size_t off = 1; off < 16; off += 5) {
      check_one(rows, cols, off, 0, splits[1]);
      check_one(rows, cols, 0, off, splits[1]);
    }
  }
}

static void check_all(void) {
  for (int k = 0; k < 2; k++) {
    g_shape = k ? BENCH_TRANSPOSE_STRIPS : BENCH_TRANSPOSE_BLOCKED;
    check_shape();
  }
}

int main(void) {
  const char *isa = bench_transpose_choose(false);
  CHECK_EQ_STR(isa, "scalar");
  check_all();
  isa = bench_transpose_choose(true);
  printf("bench_transpose_test: widest variant here: %s\n", isa);
  if (strcmp(isa, "scalar")) check_all();
  return testing_summary("bench_transpose_test");
}
