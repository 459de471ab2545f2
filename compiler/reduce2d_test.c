/* Row and column reduces through the CPU heuristic (heuristic.c, kblock.c, group_reduce.c, vectorize.c): a column
 * sum over a panel bigger than an L2 is row-blocked (KBLOCK) and threaded over its columns; a tall column sum (one
 * vector of columns) is a cross-thread reduce whose per-thread partial is one vector, stored whole into the scratch
 * array and read back whole; a large row sum is threaded over its rows. Each kernel, at odd sizes too (block counts,
 * strip counts and thread splits that do not divide evenly, sizes the block does not divide), is run natively and
 * checked against the reference interpreter on inputs that round, huge, tiny and denormal values, +-inf and NaN.
 *
 * Tolerance (cc_float_match: 1e-4 relative + 1e-5 absolute): the terms of one sum are positive (no cancellation),
 * infinities of one sign per column/row (no inf - inf). Two summation orders of n positive terms differ by at most
 * about 2(n-1)u, u = 2^-24 (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., section 4.2): 9.3e-5 for
 * the 784-term reduces, 1.2e-4 for the 1030-term one and 2e-3 for the tall ones (16384 terms with AVX-512's 16
 * lanes); the roundings of these full-mantissa terms are independent and add up to about sqrt(n)u (1e-5 at 16384),
 * and the fill is deterministic. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compiler/opt_test_util.h"
#include "base/fuzz.h"
#include "base/testing.h"

static size_t count_str(const char *hay, const char *needle) {
  size_t n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

/* 0: finite only; 1: with +inf and -inf; 2: with NaN. fill_by_cols: specials per column (a column reduce), else per
 * row. */
static int fill_mode;
static bool fill_by_cols;
static int64_t fill_cols;

static void refill(cc_kbuf *bufs, size_t n, uint64_t seed) {
  for (size_t b = 0; b < n; b++) {
    if (bufs[b].slot != 1 || bufs[b].dtype.scalar != UOP_FLOAT32) continue;
    float *x = bufs[b].data;
    fuzz_rng = seed | 1;
    int64_t ne = bufs[b].nelems, rows = ne / fill_cols;
    for (int64_t e = 0; e < ne; e++) {
      uint64_t r = fuzz_next();
      float m = 1.0f + (float)(r >> 41) * 0x1p-23f; /* a full 24-bit mantissa in [1, 2): sums round */
      x[e] = r % 64 == 0 ? m * 1e30f : r % 64 == 1 ? m * 1e-30f : r % 64 == 2 ? m * 1e-41f : m;
    }
    /* specials: in every 7th line (column or row) a +inf, in the next a -inf (mode 1), or a NaN (mode 2) */
    int64_t lines = fill_by_cols ? fill_cols : rows, len = fill_by_cols ? rows : fill_cols;
    for (int64_t l = 0; l < lines && fill_mode; l++) {
      if (l % 7 > 1) continue;
      int64_t at = (int64_t)(fuzz_next() % (uint64_t)len);
      float v = fill_mode == 2 ? NAN : l % 7 == 0 ? INFINITY : -INFINITY;
      x[fill_by_cols ? at * fill_cols + l : l * fill_cols + at] = v;
    }
  }
}

/* op "add", "max", or "half": an add reduce halved before the store (KBLOCK refuses: the stored value is no REDUCE) */
static const char *col_kernel(char *text, size_t size, const char *op, long rows, long cols) {
  bool half = strcmp(op, "half") == 0;
  snprintf(text, size,
           "(kernel col (let out (buf 0 float32 %ld)) (let x (buf 1 float32 %ld)) (let r0 (range 0 %ld loop))"
           " (let r1000 (range 1000 %ld reduce))"
           " (sink (store (index out r0) %s(reduce %s (load (index x (+ (* r1000 %ld) r0))) r1000)%s r0)))",
           cols, rows * cols, cols, rows, half ? "(* " : "", half ? "add" : op, cols, half ? " 0.5)" : "");
  return text;
}

static const char *row_kernel(char *text, size_t size, long rows, long cols) {
  snprintf(text, size,
           "(kernel row (let out (buf 0 float32 %ld)) (let x (buf 1 float32 %ld)) (let r0 (range 0 %ld loop))"
           " (let r1000 (range 1000 %ld reduce))"
           " (sink (store (index out r0) (reduce add (load (index x (+ (* r0 %ld) r1000))) r1000) r0)))",
           rows, rows * cols, rows, cols, cols);
  return text;
}

/* Compile with the heuristic, run natively, compare with the interpreter in every fill mode; returns the source
 * and the applied opts (as text) of the last compile. */
static char *check(const cc_target *t, const char *text, bool by_cols, long cols, char *opts, size_t opts_size) {
  char *src = NULL;
  fill_by_cols = by_cols;
  fill_cols = cols;
  for (fill_mode = 0; fill_mode < 3; fill_mode++) {
    uop_ctx *ctx = NULL;
    CHECK_OK(uop_ctx_create(&ctx));
    cc_program *p = NULL;
    if (otu_check_text(ctx, text, t, NULL, NULL, 0, 7 + (uint64_t)fill_mode, &p))
      fprintf(stderr, "  in %s, fill %d\n", text, fill_mode);
    free(src);
    src = strdup(p && p->source ? p->source : "");
    char *o = cc_opts_format(p ? p->applied_opts : NULL, p ? p->napplied_opts : 0);
    snprintf(opts, opts_size, "%s", o ? o : "");
    free(o);
    cc_program_free(p);
    uop_ctx_destroy(ctx);
  }
  return src;
}

/* Column sums over more than CC_HEURISTIC_CPU_KBLOCK_B (1 MiB): blocked by 8 rows and threaded over the columns; 22
 * strips (no 4 chains, 11 per thread), 98 blocks; 520x576: 9 strips after the chains with 16-float vectors (odd: not
 * threaded), 36 with 4-float ones (threaded); a max (KBLOCK refused: the partials pass through the output only for
 * add). Row counts 8 does not divide are padded up to a multiple (PADTO on the reduce axis: the last block's rows past
 * the end are gated loads) and then blocked: 1030 (6 rows in the last block), primes 1031 and 4099 (a panel just over
 * 1 MiB), 4097 (one row), 9 (2 blocks, one row in the second), and the bench-sized 1030x4096 and 4097x4096; a max and
 * a halved sum whose rows 8 does not divide are neither padded nor blocked (PADTO refuses the max; KBLOCK refuses the
 * halved sum, and the heuristic takes the pad back). */
static void test_col_blocked(const cc_target *t) {
  static const struct {
    long rows, cols;
    const char *op;
    bool blocked, padded;
    int threaded; /* -1: when the strips of 4 vectors of columns are an even count (THREAD splits them) */
  } CASES[] = {
      {784, 352, "add", true, false, true},    {520, 576, "add", true, false, -1},
      {1030, 352, "add", true, true, true},    {1031, 352, "add", true, true, true},
      {4097, 96, "add", true, true, true},     {9, 32768, "add", true, true, true},
      {4099, 64, "add", true, true, true},     {1030, 4096, "add", true, true, true},
      {4097, 4096, "add", true, true, true},   {784, 352, "max", false, false, true},
      {1031, 352, "max", false, false, true},  {1031, 352, "half", false, false, true},
  };
  for (size_t c = 0; c < sizeof CASES / sizeof CASES[0]; c++) {
    long rows = CASES[c].rows, cols = CASES[c].cols;
    char text[512], opts[256], gate[32], outer[32];
    col_kernel(text, sizeof text, CASES[c].op, rows, cols);
    char *src = check(t, text, true, cols, opts, sizeof opts);
    const char *pad = strstr(opts, "PADTO:"), *kb = strstr(opts, "KBLOCK:0:8");
    bool blocked = kb != NULL, threaded = strstr(opts, "THREAD:") != NULL;
    /* the pad: by 8, right before the block, and its gate compares the row with the true row count */
    snprintf(gate, sizeof gate, "<%ld)", rows);
    bool padded = pad && strchr(pad + 6, ':') && strncmp(strchr(pad + 6, ':'), ":8,KBLOCK:0:8", 13) == 0 &&
                  strstr(src, gate);
    /* the OUTER loop: ceil(rows / 8) blocks */
    snprintf(outer, sizeof outer, "< %ld; ", (rows + 7) / 8);
    bool want_threaded = CASES[c].threaded >= 0 ? CASES[c].threaded : cols / (4 * t->vector_max) % 2 == 0;
    bool ok = blocked == CASES[c].blocked && padded == CASES[c].padded && (pad != NULL) == CASES[c].padded &&
              threaded == want_threaded && (!blocked || strstr(src, outer));
    CHECK(ok);
    if (!ok) fprintf(stderr, "%ldx%ld %s: opts %s\n", rows, cols, CASES[c].op, opts);
    free(src);
  }
}

/* Tall column sums: one vector of columns (16 with AVX-512: the cross-thread reduce's partial is one vector accumulator, stored and
 * read back whole) and two vectors (two strips: blocked and threaded over the strips). */
static void test_col_tall(const cc_target *t) {
  char text[512], opts[256], vacc[32], vtemp[64];
  snprintf(vacc, sizeof vacc, "float%d acc", t->vector_max);
  snprintf(vtemp, sizeof vtemp, "*((float%d_u*)(temp0+", t->vector_max);
  long cols = t->vector_max, rows = 262144 / cols; /* 2 x 131072 elements: 2 threads */
  col_kernel(text, sizeof text, "add", rows, cols);
  char *src = check(t, text, true, cols, opts, sizeof opts);
  /* a cross-thread reduce: THREAD on the reduce axis, every accumulator a vector, the scratch accessed whole */
  CHECK(strstr(src, "hcq_arrived") != NULL);
  CHECK(count_str(src, "float acc") == 0);
  CHECK(count_str(src, vacc) == 2); /* the partial's and the combine's */
  CHECK(count_str(src, vtemp) == 2); /* the partial's store, the combine's load */
  if (!strstr(src, "hcq_arrived") || count_str(src, "float acc") || count_str(src, vacc) != 2 ||
      count_str(src, vtemp) != 2)
    fprintf(stderr, "opts %s\n%s\n", opts, src);
  free(src);
  col_kernel(text, sizeof text, "add", rows, 2 * cols);
  src = check(t, text, true, 2 * cols, opts, sizeof opts);
  CHECK(strstr(opts, "KBLOCK:0:8") && strstr(opts, "THREAD:0:2"));
  if (!strstr(opts, "KBLOCK:0:8") || !strstr(opts, "THREAD:0:2")) fprintf(stderr, "opts %s\n", opts);
  free(src);
}

/* Row sums: big enough to thread over the rows (2 threads), odd row count 513 (no split: unthreaded), vectors of the
 * row. */
static void test_rows(const cc_target *t) {
  char text[512], opts[256];
  row_kernel(text, sizeof text, 512, 784);
  char *src = check(t, text, false, 784, opts, sizeof opts);
  CHECK(strstr(opts, "THREAD:0:2") != NULL);
  free(src);
  row_kernel(text, sizeof text, 513, 784);
  src = check(t, text, false, 784, opts, sizeof opts);
  CHECK(strstr(opts, "THREAD") == NULL);
  free(src);
}

int main(void) {
  if (!tu_have(cc_toolchain_cc())) return 77;
  cc_target t;
  CHECK_OK(cc_target_get("c", 2, &t));
  if (t.vector_max < 4) return testing_summary("reduce2d");
  otu_refill = refill;
  test_col_blocked(&t);
  test_col_tall(&t);
  test_rows(&t);
  otu_refill = NULL;
  return testing_summary("reduce2d");
}
