/* Reduce chains (expander.c, vectorize.c, heuristic.c): a float32 reduce unrolled by the vector width and then by
 * up to CC_REDUCE_CHAINS more keeps that many independent vector accumulators, adds them as vectors after the loop
 * and combines only the last vector lane by lane; the heuristic picks that for sums and row reduces. Each kernel is
 * checked against the reference interpreter on inputs that round, huge and tiny (denormal) values, -0, +-inf and
 * NaN.
 *
 * Tolerance (cc_float_match: 1e-4 relative + 1e-5 absolute): sums and products take positive terms only (no
 * cancellation), 256 per reduce; any order of n positive terms is within (n-1)u / (1 - (n-1)u) relative of the
 * exact result (u = 2^-24; Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., sections 3.1 and 4.2),
 * so two orders differ by at most about 3.1e-5. MAX is exact in any order. Infinities and NaN give the same
 * special in every order (no +inf and -inf in one sum, no 0 and inf in one product). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compiler/opt_test_util.h"
#include "base/fuzz.h"
#include "base/testing.h"

#define ROWS 6
#define COLS 256

static size_t count_str(const char *hay, const char *needle) {
  size_t n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

/* What the fill puts into x: 0 finite only, 1 with infinities and -0, 2 with NaN; op_mode 0 sum, 1 max, 2 product. */
static int fill_mode, op_mode;

static void refill(cc_kbuf *bufs, size_t n, uint64_t seed) {
  for (size_t b = 0; b < n; b++) {
    if (bufs[b].slot != 1 || bufs[b].dtype.scalar != UOP_FLOAT32) continue;
    float *x = bufs[b].data;
    fuzz_rng = seed | 1; /* the project's generator; a zero state stays zero */
    for (int64_t e = 0; e < bufs[b].nelems; e++) {
      uint64_t r = fuzz_next();
      float m = 1.0f + (float)(r >> 41) * 0x1p-23f; /* a full 24-bit mantissa in [1, 2): sums round */
      float v;
      if (op_mode == 2) v = 0.9f + 0.1f * m; /* products near 1: no overflow or underflow in any order */
      else if (r % 16 == 0) v = m * 1e30f;   /* huge, 256 of them stay finite */
      else if (r % 16 == 1) v = m * 1e-30f;  /* tiny */
      else if (r % 16 == 2) v = m * 1e-41f;  /* denormal */
      else v = m;
      if (op_mode == 1 && (r >> 8) % 2) v = -v; /* max: any sign */
      x[e] = v;
    }
    for (int64_t row = 0; row < ROWS; row++) { /* one special in some rows, at a random column */
      float *xr = x + row * COLS;
      int64_t at = (int64_t)(fuzz_next() % COLS);
      if (fill_mode == 1 && row % 3 == 0) xr[at] = INFINITY;
      if (fill_mode == 1 && row % 3 == 1) xr[at] = op_mode == 2 ? INFINITY : -INFINITY;
      if (fill_mode == 1 && row % 3 == 2) xr[at] = op_mode == 1 ? -0.0f : xr[at];
      if (fill_mode == 2 && row % 2 == 0) xr[at] = NAN;
    }
  }
}

static const char *const OPS[] = {"add", "max", "mul"};

static const char *row_kernel(char *text, size_t size, const char *op) {
  snprintf(text, size,
           "(kernel red (let out (buf 0 float32 %d)) (let x (buf 1 float32 %d)) (let r0 (range 0 %d loop))"
           " (let r1000 (range 1000 %d reduce))"
           " (sink (store (index out r0) (reduce %s (load (index x (+ (* r0 %d) r1000))) r1000) r0)))",
           ROWS, ROWS * COLS, ROWS, COLS, op, COLS);
  return text;
}

/* Compile with opts (NULL: the heuristic), run natively and compare with the interpreter; returns the source. */
static char *check(const cc_target *t, const char *text, const char *opts, uint64_t seed) {
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  cc_program *p = NULL;
  size_t bad = otu_check_text(ctx, text, t, opts, NULL, 0, seed, &p);
  if (bad) fprintf(stderr, "%zu outputs differ: %s\nopts %s, fill %d\n", bad, text, opts ? opts : "(heuristic)", fill_mode);
  char *src = strdup(p && p->source ? p->source : "");
  cc_program_free(p);
  uop_ctx_destroy(ctx);
  return src;
}

/* Chains by hand: 2 and 4 chains of the vector width, chains of half a vector, and 8 chains (past CC_REDUCE_CHAINS:
 * one accumulator, lanes summed in the loop), for each op and fill. */
static void test_opts(const cc_target *t) {
  int w = t->vector_max;
  char opts[4][64];
  snprintf(opts[0], sizeof opts[0], "UNROLL:0:%d,UNROLL:0:2", w);
  snprintf(opts[1], sizeof opts[1], "UNROLL:0:%d,UNROLL:0:4", w);
  snprintf(opts[2], sizeof opts[2], "UNROLL:0:%d,UNROLL:0:4", w / 2);
  snprintf(opts[3], sizeof opts[3], "UNROLL:0:%d,UNROLL:0:8", w);
  for (op_mode = 0; op_mode < 3; op_mode++)
    for (fill_mode = 0; fill_mode < 3; fill_mode++)
      for (int i = 0; i < 4; i++) {
        char text[512];
        free(check(t, row_kernel(text, sizeof text, OPS[op_mode]), opts[i], 11 + (uint64_t)fill_mode));
      }
}

/* The heuristic on a sum, a row sum, a row max and a column sum: CC_REDUCE_CHAINS vector accumulators per reduce, combined as
 * vectors (one lane-by-lane combine of the last vector: its lane w-1 read by one combine only). */
static void test_heuristic(const cc_target *t) {
  static const char *SUM =
      "(kernel s (let out (buf 0 float32 1)) (let x (buf 1 float32 65536)) (let r (range 1000 65536 reduce))"
      " (sink (store (index out 0) (reduce add (load (index x r)) r))))";
  char acc[32], last[16];
  snprintf(acc, sizeof acc, "float%d acc", t->vector_max);
  snprintf(last, sizeof last, "[%d]", t->vector_max - 1);
  char row_add[512], row_max[512];
  const char *kernels[] = {SUM, row_kernel(row_add, sizeof row_add, "add"), row_kernel(row_max, sizeof row_max, "max")};
  for (size_t k = 0; k < 3; k++) {
    op_mode = k == 2;
    fill_mode = 1;
    char *src = check(t, kernels[k], NULL, 5);
    CHECK_EQ_INT((long long)count_str(src, acc), CC_REDUCE_CHAINS);
    size_t uses = k == 2 ? 5 : 1; /* a decomposed max reads each of its operands up to 5 times */
    CHECK(count_str(src, last) >= 1 && count_str(src, last) <= uses);
    if (count_str(src, acc) != CC_REDUCE_CHAINS || count_str(src, last) > uses) fprintf(stderr, "%s\n", src);
    free(src);
  }
  /* a column reduce (256 rows of 512 columns): CC_REDUCE_CHAINS vectors of columns, each its own add chain, stored
   * whole (no horizontal combine) */
  static const char *COL =
      "(kernel col (let out (buf 0 float32 512)) (let x (buf 1 float32 131072)) (let r0 (range 0 512 loop))"
      " (let r1000 (range 1000 256 reduce))"
      " (sink (store (index out r0) (reduce add (load (index x (+ (* r1000 512) r0))) r1000) r0)))";
  op_mode = 0;
  fill_mode = 0;
  char *src = check(t, COL, NULL, 3);
  CHECK_EQ_INT((long long)count_str(src, acc), CC_REDUCE_CHAINS);
  CHECK(count_str(src, last) == 0);
  free(src);
}

int main(void) {
  if (!tu_have(cc_toolchain_cc())) return 77;
  cc_target t;
  CHECK_OK(cc_target_get("c", 2, &t));
  if (t.vector_max < 4) return testing_summary("reduce_chains");
  otu_refill = refill;
  test_opts(&t);
  test_heuristic(&t);
  otu_refill = NULL;
  return testing_summary("reduce_chains");
}
