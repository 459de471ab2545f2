/* vectorize pass (compiler/vectorize.c) through the whole c pipeline: which accesses fold into float4 (the rendered
 * C text), and that every kernel still computes what the reference interpreter computes on the original kernel. */
#include <string.h>

#include "compiler/opt_test_util.h"
#include "base/testing.h"

static size_t count_str(const char *hay, const char *needle) {
  size_t n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

/* Compile `text` with `opts` for target t, run natively against the interpreter; returns the source (malloc'd). */
static char *run_case(const cc_target *t, const char *name, const char *text, const char *opts,
                      const uop_var_val *vals, size_t nvals) {
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *sink = NULL;
  CHECK_OK(cc_kernel_parse(ctx, text, strlen(text), name, &sink));
  cc_opt *o = NULL;
  size_t no = 0;
  CHECK_OK(cc_opts_parse(opts, &o, &no));
  cc_options copt = {.opts = o, .nopts = no};
  cc_program *p = NULL;
  size_t bad = SIZE_MAX;
  hcq_status st = otu_native_same(ctx, sink, t, &copt, vals, nvals, 7, &bad, &p);
  if (st) {
    fprintf(stderr, "%s: %s\n", name, hcq_status_message(st));
    hcq_status_free(st);
  }
  CHECK(bad == 0);
  if (bad) fprintf(stderr, "%s: %zu elements differ from the interpreter\n%s\nopts %s\n", name, bad, text, opts);
  char *src = p && p->source ? strdup(p->source) : strdup("");
  cc_program_free(p);
  free(o);
  uop_ctx_destroy(ctx);
  return src;
}

static const char *ADD64 =
    "(kernel add (let out (buf 0 float32 64)) (let a (buf 1 float32 64)) (let b (buf 2 float32 64))"
    " (let r0 (range 0 64 loop))"
    " (sink (store (index out r0) (+ (load (index a r0)) (load (index b r0))) r0)))";

static void test_add64(const cc_target *t) {
  char *src = run_case(t, "add64", ADD64, "UPCAST:0:4", NULL, 0);
  CHECK(strstr(src, "typedef float float4 __attribute__((aligned(16),vector_size(16)));") != NULL);
  CHECK(strstr(src, "((float4*)(data1_64+") != NULL);
  CHECK(strstr(src, "((float4*)(data2_64+") != NULL);
  CHECK(strstr(src, "*((float4*)(data0_64+") != NULL); /* the store */
  CHECK_EQ_INT((long long)count_str(src, "((float4*)"), 3);
  CHECK(strstr(src, "float val") == NULL); /* no scalar load left */
  free(src);
}

/* A target that promises no buffer alignment gets the unaligned vector type (GCC honours aligned() only after
 * vector_size(): the other order silently keeps the vector's natural alignment). */
static void test_unaligned_type(const cc_target *t) {
  cc_target u = *t;
  u.buf_align_B = 4;
  char *src = run_case(&u, "add64_u", ADD64, "UPCAST:0:4", NULL, 0);
  CHECK(strstr(src, "typedef float float4_u __attribute__((vector_size(16),aligned(4)));") != NULL);
  CHECK(strstr(src, "((float4_u*)(data1_64+") != NULL);
  CHECK(strstr(src, "((float4*)") == NULL);
  free(src);
}

/* Without the pass (vector_max 0) the same kernel renders scalar code. */
static void test_off(const cc_target *t) {
  cc_target off = *t;
  off.vector_max = 0;
  char *src = run_case(&off, "add64_scalar", ADD64, "UPCAST:0:4", NULL, 0);
  CHECK(strstr(src, "float4") == NULL);
  free(src);
}

/* out[r] = a[r+1]: lanes r*4+1..r*4+4 are not 4-aligned (only the middle pair is 2-aligned): no float4 load of a;
 * the stores r*4..r*4+3 are aligned and fold. */
static void test_misaligned(const cc_target *t) {
  char *src = run_case(t, "shift1",
                       "(kernel shift1 (let out (buf 0 float32 64)) (let a (buf 1 float32 65)) (let r0 (range 0 64 loop))"
                       " (sink (store (index out r0) (load (index a (+ r0 1))) r0)))",
                       "UPCAST:0:4", NULL, 0);
  CHECK(strstr(src, "((float4*)(data1_65") == NULL);
  CHECK(strstr(src, "*((float4*)(data0_64+") != NULL);
  free(src);
  /* a symbolic offset n: nothing about r*4+n is known, so no vector access of a at all */
  uop_var_val n = {"n", 4};
  src = run_case(t, "shiftn",
                 "(kernel shiftn (let out (buf 0 float32 64)) (let a (buf 1 float32 80)) (let n (var n 0 16 index))"
                 " (let r0 (range 0 64 loop)) (sink (store (index out r0) (load (index a (+ r0 n))) r0)))",
                 "UPCAST:0:4", &n, 1);
  CHECK(strstr(src, "*)(data1_80") == NULL);
  CHECK(strstr(src, "*((float4*)(data0_64+") != NULL);
  free(src);
}

/* Gates: a gate that differs per lane (r < 30 on the upcast axis: lanes 0-1 valid while r < 8, lanes 2-3 while
 * r < 7) folds with a vector of lane gates: one whole access when every lane is valid, lane by lane otherwise;
 * one shared by the lanes (on the outer axis) folds into a gated vector load / store. */
static void test_gates(const cc_target *t) {
  char *src = run_case(t, "gate_lane",
                       "(kernel gate_lane (let out (buf 0 float32 64)) (let a (buf 1 float32 64)) (let r0 (range 0 64 loop))"
                       " (sink (store (index out r0 (< r0 30)) (load (index a r0 (< r0 30)) 0.5) r0)))",
                       "UPCAST:0:4", NULL, 0);
  CHECK(strstr(src, "= *((float4*)(data1_64+") != NULL);
  CHECK(strstr(src, ") *((float4*)(data0_64+") != NULL);
  CHECK(strstr(src, "] = hcq_v_[hcq_l_]; }") != NULL); /* the store's lane by lane path */
  free(src);
  src = run_case(t, "gate_row",
                 "(kernel gate_row (let out (buf 0 float32 128)) (let a (buf 1 float32 128))"
                 " (let r0 (range 0 8 loop)) (let r1 (range 1 8 loop)) (let i (+ (* r0 16) r1))"
                 " (sink (store (index out i (< r0 5)) (+ (load (index a i (< r0 6)) 1.5) 2.0) r0 r1)))",
                 "UPCAST:1:4", NULL, 0);
  CHECK(strstr(src, "?*((float4*)(data1_128+") != NULL);
  CHECK(strstr(src, ") *((float4*)(data0_128+") != NULL);
  free(src);
}

/* A matmul with both output axes upcast and k unrolled: float4 loads of b, vector accumulators, float4 stores. */
static void test_matmul(const cc_target *t) {
  char *src = run_case(t, "mm16",
                       "(kernel mm16 (let c (buf 0 float32 256)) (let a (buf 1 float32 256)) (let b (buf 2 float32 256))"
                       " (let r0 (range 0 16 loop)) (let r1 (range 1 16 loop)) (let k (range 1002 16 reduce))"
                       " (sink (store (index c (+ (* r0 16) r1))"
                       " (reduce add (* (load (index a (+ (* r0 16) k))) (load (index b (+ (* k 16) r1)))) k) r0 r1)))",
                       "UPCAST:1:4,UPCAST:0:2,UNROLL:0:4", NULL, 0);
  CHECK(strstr(src, "float4 acc") != NULL);
  CHECK(strstr(src, "((float4*)(data2_256+") != NULL);
  CHECK(strstr(src, "*((float4*)(data0_256+") != NULL);
  free(src);
  /* k upcast by 2 only and an odd row length: b rows are 2-aligned at best, nothing folds by 4, still correct */
  src = run_case(t, "mm_odd",
                 "(kernel mm_odd (let c (buf 0 float32 36)) (let a (buf 1 float32 42)) (let b (buf 2 float32 42))"
                 " (let r0 (range 0 6 loop)) (let r1 (range 1 6 loop)) (let k (range 1002 7 reduce))"
                 " (sink (store (index c (+ (* r0 6) r1))"
                 " (reduce add (* (load (index a (+ (* r0 7) k))) (load (index b (+ (* k 6) r1)))) k) r0 r1)))",
                 "UPCAST:1:2,UPCAST:0:3", NULL, 0);
  CHECK(strstr(src, "float4") == NULL);
  free(src);
}

/* A max reduction: MAX is decomposed to compares and selects, which fold into vector compares and mask blends, so
 * the whole accumulator chain is one vector (all or nothing: a half-vectorized chain read stale scalar registers;
 * found by opt_fuzz). */
static void test_max_reduce(const cc_target *t) {
  char *src = run_case(t, "maxred",
                       "(kernel maxred (let out (buf 0 float32 24)) (let in0 (buf 1 float32 96)) (let in1 (buf 2 float32 96))"
                       " (let r0 (range 0 24 loop)) (let r1001 (range 1001 4 reduce))"
                       " (sink (store (index out r0) (+ (reduce max (+ (* 0.25 (load (index in1 (+ (* r1001 24) r0))))"
                       " (+ (load (index in0 (+ (* r0 4) r1001))) (load (index in1 (+ (* r1001 24) r0))))) r1001) 1.5) r0)))",
                       "UPCAST:0:12", NULL, 0);
  CHECK(strstr(src, "float4 acc") != NULL);
  CHECK(strstr(src, "*((float4*)(data0_24+") != NULL);
  free(src);
}

/* An unrolled reduce with a loop left (a sum, a product, a row reduce): one accumulator per lane (expander.c), kept
 * in one vector register and combined after the loop; a column reduce under the heuristic: the output axis upcast
 * by the vector width, one vector accumulator. Values that round (the fill's odd multiples of 2^-16 summed over
 * different orders) must still match the interpreter within its tolerance. */
static void test_reduce_accs(const cc_target *t) {
  static const char *SUM =
      "(kernel s (let out (buf 0 float32 1)) (let x (buf 1 float32 1024)) (let r (range 1000 1024 reduce))"
      " (sink (store (index out 0) (reduce add (load (index x r)) r))))";
  static const char *PROD =
      "(kernel p (let out (buf 0 float32 3)) (let x (buf 1 float32 192)) (let r0 (range 0 3 loop))"
      " (let r (range 1000 64 reduce))"
      " (sink (store (index out r0) (reduce mul (+ 1.0 (* 0.01 (load (index x (+ (* r0 64) r))))) r) r0)))";
  for (int w = 2; w <= t->vector_max; w *= 2) {
    char opts[32], want[32];
    snprintf(opts, sizeof opts, "UNROLL:0:%d", w);
    snprintf(want, sizeof want, "float%d acc", w);
    char *src = run_case(t, "sum", SUM, opts, NULL, 0);
    CHECK(strstr(src, want) != NULL);
    free(src);
  }
  /* integer reduces keep one accumulator (gcc 12.2 miscompiled a group of permuted int accumulators) */
  static const char *ISUM =
      "(kernel is (let out (buf 0 int32 1)) (let a (buf 1 int32 64)) (let b (buf 2 int32 64)) (let r (range 1000 64 reduce))"
      " (sink (store (index out 0) (reduce add (max (load (index a r)) (load (index b r))) r))))";
  for (int w = 2; w <= 16; w *= 2) {
    char opts[32];
    snprintf(opts, sizeof opts, "UNROLL:0:%d", w);
    free(run_case(t, "isum", ISUM, opts, NULL, 0));
  }
  char *src = run_case(t, "prod", PROD, "UNROLL:0:4", NULL, 0);
  CHECK(strstr(src, "float4 acc") != NULL);
  free(src);
  /* the heuristic on the row and column reduce examples (256x512): vector accumulators, no scalar chain */
  char want[32];
  snprintf(want, sizeof want, "float%d acc", t->vector_max);
  static const char *ROW =
      "(kernel row (let out (buf 0 float32 256)) (let x (buf 1 float32 131072)) (let r0 (range 0 256 loop))"
      " (let r1000 (range 1000 512 reduce))"
      " (sink (store (index out r0) (reduce add (load (index x (+ (* r0 512) r1000))) r1000) r0)))";
  static const char *COL =
      "(kernel col (let out (buf 0 float32 512)) (let x (buf 1 float32 131072)) (let r0 (range 0 512 loop))"
      " (let r1000 (range 1000 256 reduce))"
      " (sink (store (index out r0) (reduce add (load (index x (+ (* r1000 512) r0))) r1000) r0)))";
  const char *kernels[] = {ROW, COL};
  for (int i = 0; i < 2; i++) {
    uop_ctx *ctx = NULL;
    CHECK_OK(uop_ctx_create(&ctx));
    const uop *sink = NULL;
    CHECK_OK(cc_kernel_parse(ctx, kernels[i], strlen(kernels[i]), "red", &sink));
    cc_program *p = NULL;
    size_t bad = SIZE_MAX;
    CHECK_OK(otu_native_same(ctx, sink, t, NULL, NULL, 0, 5, &bad, &p));
    CHECK(bad == 0);
    CHECK(p && strstr(p->source, want) != NULL);
    if (p && !strstr(p->source, want)) fprintf(stderr, "%s\n", p->source);
    cc_program_free(p);
    uop_ctx_destroy(ctx);
  }
}

/* softmax under the heuristic: both reduces (max and the sum of exp2) in CC_REDUCE_CHAINS vector accumulators each,
 * exp2's compares, selects and bit tricks in vector form (no scalar bitcast left), and the result matches the
 * interpreter. */
static void test_softmax(const cc_target *t) {
  static const char *SM =
      "(kernel sm (let out (buf 0 float32 4096)) (let x (buf 1 float32 4096))"
      " (let r0 (range 0 16 loop)) (let r1 (range 1 256 loop)) (let r1001 (range 1001 256 reduce))"
      " (let r1002 (range 1002 256 reduce)) (let row (* r0 256))"
      " (let negmax (* (reduce max (load (index x (+ row r1001))) r1001) -1.0))"
      " (let sum (reduce add (exp2 (* (+ (load (index x (+ row r1002))) negmax) 1.442695)) r1002))"
      " (sink (store (index out (+ row r1)) (* (exp2 (* (+ (load (index x (+ row r1))) negmax) 1.442695)) (recip sum))"
      " r0 r1)))";
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *sink = NULL;
  CHECK_OK(cc_kernel_parse(ctx, SM, strlen(SM), "sm", &sink));
  cc_program *p = NULL;
  size_t bad = SIZE_MAX;
  CHECK_OK(otu_native_same(ctx, sink, t, NULL, NULL, 0, 9, &bad, &p));
  CHECK(bad == 0);
  char want[32];
  snprintf(want, sizeof want, "float%d acc", t->vector_max);
  CHECK(p && count_str(p->source, want) == 2 * CC_REDUCE_CHAINS);
  CHECK(p && strstr(p->source, "bits_") == NULL);
  CHECK(p && strstr(p->source, "float acc") == NULL);
  cc_program_free(p);
  uop_ctx_destroy(ctx);
}

/* Elementwise with a runtime length (saxpy, n a variable): no constant lane count to upcast, so the C compiler
 * vectorizes the loop with a scalar tail (render_c.c asks gcc for that); lengths around the vector widths and
 * thread splits must all match the interpreter. */
static void test_runtime_length(const cc_target *t) {
  static const char *SAXPY =
      "(kernel saxpy (let y (buf 0 float32 4099)) (let x (buf 1 float32 4099)) (let n (var n 1 4099 index))"
      " (let r0 (range 0 n loop)) (let yi (index y r0))"
      " (sink (store yi (+ (* (load (index x r0)) 2.5) (load yi)) r0)))";
  static const int64_t NS[] = {1, 2, 7, 15, 16, 17, 31, 33, 64, 1000, 4097, 4099};
  for (size_t i = 0; i < sizeof NS / sizeof NS[0]; i++) {
    uop_var_val v = {"n", NS[i]};
    char *src = run_case(t, "saxpy", SAXPY, "THREAD:0:2", &v, 1);
    CHECK(strstr(src, "vect-cost-model=cheap") != NULL);
    free(src);
  }
}

/* The example kernels and the fuzz-style mixes under the heuristic stay correct (covered at large by examples_test
 * and opt_fuzz_test); here: the heuristic on add vectorizes. */
static void test_heuristic(const cc_target *t) {
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *sink = NULL;
  const char *k = "(kernel addh (let out (buf 0 float32 4096)) (let a (buf 1 float32 4096)) (let b (buf 2 float32 4096))"
                  " (let r0 (range 0 4096 loop))"
                  " (sink (store (index out r0) (+ (load (index a r0)) (load (index b r0))) r0)))";
  CHECK_OK(cc_kernel_parse(ctx, k, strlen(k), "addh", &sink));
  cc_program *p = NULL;
  size_t bad = SIZE_MAX;
  CHECK_OK(otu_native_same(ctx, sink, t, NULL, NULL, 0, 3, &bad, &p));
  CHECK(bad == 0);
  CHECK(p && strstr(p->source, "((float4*)") != NULL);
  cc_program_free(p);
  uop_ctx_destroy(ctx);
}

/* Small random kernels (fixed seed): elementwise with offsets, gates and a transposed operand, and matmul-like
 * sum/max reductions, under random upcast/unroll widths 1..16; each must match the interpreter. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static int rnd(int n) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (int)(rng_state % (uint64_t)n);
}

static void test_fuzz(const cc_target *t, int cases) {
  static const int UP[] = {2, 4, 8, 16};
  int vectorized = 0;
  for (int c = 0; c < cases; c++) {
    int u1 = UP[rnd(4)], rows = 2 + rnd(4), cols = u1 * (1 + rnd(3)), off = rnd(3) == 0 ? 0 : rnd(6);
    char text[1024], opts[96];
    int n = 0;
    if (rnd(2)) { /* elementwise */
      const char *gate = rnd(3) == 0 ? (rnd(2) ? " (< r0 2)" : " (< r1 5)") : "";
      n = snprintf(text, sizeof text,
                   "(kernel ew (let out (buf 0 float32 %d)) (let a (buf 1 float32 %d)) (let b (buf 2 float32 %d))"
                   " (let r0 (range 0 %d loop)) (let r1 (range 1 %d loop)) (let i (+ (* r0 %d) r1))"
                   " (sink (store (index out i%s) (%s (load (index a (+ i %d)%s)%s) (load (index b (+ (* r1 %d) r0))))"
                   " r0 r1)))",
                   rows * cols, rows * cols + 8, rows * cols, rows, cols, cols, rnd(2) ? gate : "",
                   rnd(2) ? "+" : "*", off, gate, *gate ? " 0.5" : "", rows);
      n += snprintf(opts, sizeof opts, "UPCAST:1:%d%s", u1, rnd(2) && rows % 2 == 0 ? ",UPCAST:0:2" : "");
    } else { /* c[r0, r1] = red_k a[r0, k] * b[k, r1] */
      int k = 2 * (1 + rnd(4));
      n = snprintf(text, sizeof text,
                   "(kernel mm (let c (buf 0 float32 %d)) (let a (buf 1 float32 %d)) (let b (buf 2 float32 %d))"
                   " (let r0 (range 0 %d loop)) (let r1 (range 1 %d loop)) (let k (range 1002 %d reduce))"
                   " (sink (store (index c (+ (* r0 %d) r1)) (reduce %s (* (load (index a (+ (* r0 %d) k)))"
                   " (load (index b (+ (* k %d) r1)))) k) r0 r1)))",
                   rows * cols, rows * k, k * cols, rows, cols, k, cols, rnd(3) ? "add" : "max", k, cols);
      snprintf(opts, sizeof opts, "UPCAST:1:%d%s%s", u1, rows % 2 == 0 && rnd(2) ? ",UPCAST:0:2" : "",
               rnd(2) ? ",UNROLL:0:2" : "");
    }
    (void)n;
    char *src = run_case(t, "fuzz", text, opts, NULL, 0);
    vectorized += strstr(src, "vector_size") != NULL;
    free(src);
  }
  CHECK(vectorized > cases / 4); /* the generator does reach the pass */
}

int main(void) {
  if (!tu_have(cc_toolchain_cc())) return 77;
  cc_target t;
  CHECK_OK(cc_target_get("c", 2, &t));
  CHECK(t.vector_max >= 4 && t.vector_max <= 16);
  cc_target ptx;
  CHECK_OK(cc_target_get("ptx:sm_90", 0, &ptx));
  CHECK_EQ_INT(ptx.vector_max, 0); /* gated to the c target */
  test_add64(&t);
  test_off(&t);
  test_unaligned_type(&t);
  test_misaligned(&t);
  test_gates(&t);
  test_matmul(&t);
  test_max_reduce(&t);
  test_reduce_accs(&t);
  test_softmax(&t);
  test_runtime_length(&t);
  test_heuristic(&t);
  const char *nf = getenv("HCQ_VEC_FUZZ_CASES");
  test_fuzz(&t, nf ? atoi(nf) : 40);
  return testing_summary("vectorize");
}
