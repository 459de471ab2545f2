/* KBLOCK (compiler/kblock.c): blocked kernels equal the original under the reference interpreter, after expansion,
 * and compiled and run natively once per core_id, with the output buffer filled with NaN before the run (a block
 * that read the output before the first store, or a load hoisted out of the outer loop, shows up as NaN or as a sum
 * counted twice); float (values that round, -0, inf), int32 (wrapping, exact) and padded odd shapes; the structure
 * (one OUTER loop, outermost in the C source, out of the opts' view); every refusal; the heuristic's choice. */
#include "compiler/opt_test_util.h"
#include "base/testing.h"

static uop_ctx *g_ctx;
static cc_target g_c, g_ptx;

/* c[M,N] = a[M,K] @ b[K,N] of type T */
static char *matmul_text(const char *t, int m, int k, int n) {
  char *s = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&s, &len);
  if (!f) return NULL;
  fprintf(f,
          "(kernel mm (let c (buf 0 %s %d)) (let a (buf 1 %s %d)) (let b (buf 2 %s %d))"
          " (let r0 (range 0 %d loop)) (let r1 (range 1 %d loop)) (let rk (range 1000 %d reduce))"
          " (sink (store (index c (+ (* r0 %d) r1)) (reduce add (* (load (index a (+ (* r0 %d) rk)))"
          " (load (index b (+ (* rk %d) r1)))) rk) r0 r1)))",
          t, m * n, t, m * k, t, k * n, m, n, k, n, k, n);
  fclose(f);
  return s;
}

/* Inputs: multiples of 1/4 in [-2, 2] (every sum is exact, so any summation order gives the same bits and a block
 * counted twice or lost cannot hide in a tolerance), -0, and one inf in a; the output: NaN (floats) or a marker. */
static void refill(cc_kbuf *bufs, size_t n, uint64_t seed) {
  for (size_t i = 0; i < n; i++) {
    bool fl = uop_dt_is_float(bufs[i].dtype);
    for (int64_t e = 0; e < bufs[i].nelems; e++) {
      uint64_t x = (uint64_t)e * 0x9E3779B97F4A7C15ull + seed * 31 + i;
      x ^= x >> 29;
      if (fl) {
        float v = bufs[i].slot == 0 ? NAN : e == 7 && i == 1 ? INFINITY : e % 13 == 5 ? -0.0f : (float)((int)(x % 17) - 8) / 4.0f;
        ((float *)bufs[i].data)[e] = v;
      } else {
        ((int32_t *)bufs[i].data)[e] = bufs[i].slot == 0 ? 0x5a5a5a5a : (int32_t)(uint32_t)(x * 2654435761u);
      }
    }
  }
}

static void equiv(const char *text, const char *opts) {
  const uop *k = NULL, *s = NULL, *o = NULL, *e = NULL;
  CHECK_OK(cc_kernel_parse(g_ctx, text, strlen(text), "<test>", &k));
  if (k) CHECK_OK(otu_prep_sink(g_ctx, k, &g_c, &s));
  if (s) CHECK_OK(otu_opt(g_ctx, s, &g_c, opts, &o, NULL, NULL));
  if (!o) {
    fprintf(stderr, "  (opts %s)\n", opts);
    return;
  }
  CHECK_EQ_INT(otu_count(g_ctx, o, UOP_RANGE, UOP_AXIS_OUTER), 1);
  otu_check_same(k, o, 3, opts);
  CHECK_OK(cc_expand(g_ctx, o, &g_c, &e));
  if (e) otu_check_same(k, e, 4, opts);
  cc_program *p = NULL;
  otu_check_native(g_ctx, k, &g_c, opts, 5, &p);
  const uop *outer = otu_range_of(g_ctx, o, UOP_AXIS_OUTER);
  if (p && outer) { /* the OUTER loop is the first loop of the source */
    char name[40];
    snprintf(name, sizeof name, "for (int ridx%lld ", (long long)outer->arg.i);
    CHECK(strstr(p->source, "for (") && strstr(p->source, "for (") == strstr(p->source, name));
  }
  cc_program_free(p);
}

static void test_equivalence(void) {
  otu_refill = refill;
  static const struct {
    const char *type;
    int m, k, n;
    const char *opts;
  } CASES[] = {
      {"float32", 16, 64, 32, "KBLOCK:0:16"},
      {"float32", 32, 96, 48, "UPCAST:1:16,UPCAST:0:8,KBLOCK:0:32,THREAD:0:2"},
      {"float32", 24, 40, 16, "KBLOCK:0:8,UPCAST:1:4,UNROLL:0:4,THREAD:0:3"},
      {"float32", 37, 60, 29, "PADTO:1:32,PADTO:0:16,UPCAST:1:16,UPCAST:0:8,KBLOCK:0:12,THREAD:0:2"},
      {"int32", 16, 48, 32, "UPCAST:1:16,UPCAST:0:8,KBLOCK:0:16,THREAD:0:2"},
      {"int32", 9, 30, 7, "KBLOCK:0:15"},
      /* the heuristic's thread split of a blocked tile: the lane axis (plain, padded, int) */
      {"float32", 32, 96, 64, "UPCAST:1:16,UPCAST:0:8,KBLOCK:0:32,THREAD:1:2"},
      {"float32", 37, 60, 29, "PADTO:1:32,PADTO:0:16,UPCAST:1:16,UPCAST:0:8,KBLOCK:0:12,THREAD:1:2"},
      {"int32", 16, 48, 64, "UPCAST:1:16,UPCAST:0:8,KBLOCK:0:16,THREAD:1:4"},
      /* the heuristic's wide tile (two vectors of lanes per row on AVX-512): plain, padded (odd depth, 10 rows),
       * threaded along rows and lanes, int */
      {"float32", 32, 96, 128, "UPCAST:1:16,UPCAST:1:2,UPCAST:0:8,KBLOCK:0:32,THREAD:1:2"},
      {"float32", 40, 75, 100, "PADTO:1:64,UPCAST:1:16,UPCAST:1:2,UPCAST:0:10,KBLOCK:0:25,THREAD:0:2"},
      {"float32", 37, 60, 61, "PADTO:1:64,PADTO:0:16,UPCAST:1:16,UPCAST:1:2,UPCAST:0:8,KBLOCK:0:12,THREAD:1:2"},
      {"int32", 16, 48, 128, "UPCAST:1:16,UPCAST:1:2,UPCAST:0:8,KBLOCK:0:16,THREAD:1:2"},
  };
  for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) {
    char *t = matmul_text(CASES[i].type, CASES[i].m, CASES[i].k, CASES[i].n);
    if (t) equiv(t, CASES[i].opts);
    free(t);
  }
  otu_refill = NULL;
}

static void expect_err(const char *text, const cc_target *t, const char *opts, const char *needle) {
  otu_expect_err(g_ctx, text, t, opts, needle);
}

static void test_errors(void) {
  char *mm = matmul_text("float32", 8, 64, 16);
  if (!mm) return;
  expect_err(mm, &g_c, "KBLOCK:0:48", "must divide");
  expect_err(mm, &g_c, "KBLOCK:0:64", "must divide");
  expect_err(mm, &g_c, "KBLOCK:1:16", "axis 1 does not exist: the kernel has 1 reduce axes");
  expect_err(mm, &g_ptx, "KBLOCK:0:16", "CPU targets");
  expect_err(mm, &g_c, "KBLOCK:0:16,KBLOCK:0:2", "already blocked");
  /* the OUTER loop is out of the view: still three axes (r0, r1, the inner reduce) */
  expect_err(mm, &g_c, "KBLOCK:0:16,UPCAST:3:4", "axis 3 does not exist");
  free(mm);
  static const char *MAXK = "(kernel mx (let o (buf 0 float32 4)) (let a (buf 1 float32 64)) (let r0 (range 0 4 loop))"
                            " (let r (range 1000 16 reduce)) (sink (store (index o r0) (reduce max (load (index a (+ (* r0 16) r))) r) r0)))";
  expect_err(MAXK, &g_c, "KBLOCK:0:4", "add REDUCE");
  static const char *SCALED = "(kernel sc (let o (buf 0 float32 4)) (let a (buf 1 float32 64)) (let r0 (range 0 4 loop))"
                              " (let r (range 1000 16 reduce))"
                              " (sink (store (index o r0) (* (reduce add (load (index a (+ (* r0 16) r))) r) 2.0) r0)))";
  expect_err(SCALED, &g_c, "KBLOCK:0:4", "add REDUCE");
  static const char *READS = "(kernel rd (let o (buf 0 float32 4)) (let r0 (range 0 4 loop)) (let r (range 1000 16 reduce))"
                             " (sink (store (index o r0) (reduce add (load (index o (+ r0 0))) r) r0)))";
  expect_err(READS, &g_c, "KBLOCK:0:4", "reads its output");
  /* KBLOCK and a cross-thread reduce (THREAD on a reduce axis, group_reduce.c) do not compose: the combine would sit
   * inside the OUTER loop. Both orders are refused when the second opt is applied, on the threaded axis itself or
   * on another reduce axis of the same REDUCE. */
  static const char *SUM1 = "(kernel s1 (let o (buf 0 float32 1)) (let a (buf 1 float32 64)) (let r (range 1000 64 reduce))"
                            " (sink (store (index o 0) (reduce add (load (index a r)) r))))";
  static const char *SUM2 = "(kernel s2 (let o (buf 0 float32 1)) (let a (buf 1 float32 68)) (let r0 (range 1000 4 reduce))"
                            " (let r1 (range 1001 16 reduce)) (sink (store (index o 0) (reduce add (load (index a (+ (* r0 17) r1))) r0 r1))))";
  expect_err(SUM1, &g_c, "THREAD:0:4,KBLOCK:0:8", "cross-thread reduce");
  expect_err(SUM1, &g_c, "KBLOCK:0:8,THREAD:0:4", "outer");
  expect_err(SUM2, &g_c, "THREAD:0:4,KBLOCK:0:8", "cross-thread reduce");
  expect_err(SUM2, &g_c, "THREAD:1:4,KBLOCK:0:2", "cross-thread reduce");
  expect_err(SUM2, &g_c, "KBLOCK:1:8,THREAD:0:4", "outer");
  expect_err(SUM2, &g_c, "KBLOCK:0:2,THREAD:1:4", "outer");
}

/* The heuristic blocks k when the lane-indexed panel (k x lanes x 4 bytes) exceeds 1 MiB, with the largest block
 * <= 128 dividing k (at least 32) if k holds at least 4 of them, and not otherwise; a blocked tile (or one left
 * unblocked for its few blocks) is threaded along its lane axis (axis 1: each
 * core's L2 holds its share of the k-slice) when that slice (block x padded width x 4 bytes) exceeds 512 KiB, else
 * (and unblocked) along the row axis (axis 0). */
static void test_heuristic(void) {
  static const struct {
    int m, k, n;
    const char *kblock; /* expected "KBLOCK:0:x" or NULL */
    const char *thread; /* expected THREAD opt */
  } CASES[] = {
      {2048, 2048, 2048, "KBLOCK:0:128", "THREAD:1:4"}, {1024, 1024, 1024, "KBLOCK:0:128", "THREAD:0:4"},
      {1000, 1000, 1000, "KBLOCK:0:125", "THREAD:0:4"}, {4096, 256, 4096, NULL, "THREAD:1:4"},
      {1024, 384, 2048, NULL, "THREAD:1:4"},            {1024, 512, 2048, "KBLOCK:0:128", "THREAD:1:4"},
      {1024, 2048, 1152, "KBLOCK:0:128", "THREAD:1:4"}, {1024, 2048, 1008, "KBLOCK:0:128", "THREAD:0:4"},
      /* 34 lane tiles of 32 (1088 wide, 1040 padded to 1088): 4 threads do not divide them, rows then */
      {1024, 2048, 1088, "KBLOCK:0:128", "THREAD:0:4"}, {1024, 2048, 1040, "KBLOCK:0:128", "THREAD:0:4"},
      {512, 512, 512, NULL, "THREAD:0:4"},              {512, 1021, 512, NULL, "THREAD:0:4"},
      {64, 64, 64, NULL, "THREAD:0:2"},
  };
  for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) {
    char *t = matmul_text("float32", CASES[i].m, CASES[i].k, CASES[i].n);
    const uop *s = NULL, *o = NULL;
    if (t) CHECK_OK(otu_prep(g_ctx, t, &g_c, &s));
    free(t);
    cc_opt *app = NULL;
    size_t napp = 0;
    if (s) CHECK_OK(otu_opt(g_ctx, s, &g_c, NULL, &o, &app, &napp));
    char got[32] = "", thr[32] = "";
    for (size_t a = 0; a < napp; a++) {
      if (app[a].op == CC_OPT_KBLOCK) snprintf(got, sizeof got, "KBLOCK:%d:%lld", app[a].axis, (long long)app[a].amount);
      if (app[a].op == CC_OPT_THREAD) snprintf(thr, sizeof thr, "THREAD:%d:%lld", app[a].axis, (long long)app[a].amount);
    }
    const char *want = CASES[i].kblock ? CASES[i].kblock : "";
    if (strcmp(got, want) || strcmp(thr, CASES[i].thread))
      fprintf(stderr, "%dx%dx%d: want \"%s\" \"%s\", got \"%s\" \"%s\"\n", CASES[i].m, CASES[i].k, CASES[i].n, want,
              CASES[i].thread, got, thr);
    CHECK_EQ_STR(got, want);
    CHECK_EQ_STR(thr, CASES[i].thread);
    free(app);
  }
}

/* The heuristic's register tile (heuristic.c cpu_reduce_tile): two 16-lane vectors per row where vectors hold 16
 * floats (AVX-512), the product has at least 2^30 multiply-adds and padding to 64 lanes adds at most 1/8, else one;
 * 10 rows where 8 leave an odd tile count. */
static void test_tile(void) {
  static const struct {
    int m, k, n, vector_max;
    const char *tile; /* the opts before KBLOCK and THREAD */
  } CASES[] = {
      {1024, 1024, 1024, 16, "UPCAST:1:16,UPCAST:1:2,UPCAST:0:8"},
      {2048, 2048, 2048, 16, "UPCAST:1:16,UPCAST:1:2,UPCAST:0:8"},
      {4096, 256, 4096, 16, "UPCAST:1:16,UPCAST:1:2,UPCAST:0:8"},
      {8192, 1536, 96, 16, "UPCAST:1:16,UPCAST:0:8"}, /* 96 -> 128 is a third more: one vector, 96 = 3 x 32 */
      {1024, 1024, 1120, 16, "PADTO:1:64,UPCAST:1:16,UPCAST:1:2,UPCAST:0:8"}, /* 1120 -> 1152 */
      /* under 2^30 multiply-adds one vector a row (the wide tile doubles the compile and gains nothing there) */
      {1000, 1000, 1000, 16, "PADTO:1:32,UPCAST:1:16,UPCAST:0:10"},
      {512, 512, 512, 16, "UPCAST:1:16,UPCAST:0:8"},
      {64, 64, 64, 16, "UPCAST:1:16,UPCAST:0:8"},
      {1024, 1024, 1024, 8, "UPCAST:1:16,UPCAST:0:8"}, /* AVX2 (16 registers): 16 lanes, 2 vectors a row */
  };
  for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) {
    cc_target t = g_c;
    t.vector_max = CASES[i].vector_max;
    char *text = matmul_text("float32", CASES[i].m, CASES[i].k, CASES[i].n);
    const uop *s = NULL, *o = NULL;
    if (text) CHECK_OK(otu_prep(g_ctx, text, &t, &s));
    free(text);
    cc_opt *app = NULL;
    size_t napp = 0;
    if (s) CHECK_OK(otu_opt(g_ctx, s, &t, NULL, &o, &app, &napp));
    char got[256] = "";
    size_t len = 0;
    for (size_t a = 0; a < napp && app[a].op != CC_OPT_KBLOCK && app[a].op != CC_OPT_THREAD && len < sizeof got; a++)
      len += (size_t)snprintf(got + len, sizeof got - len, "%s%s:%d:%lld", a ? "," : "", cc_opt_name(app[a].op),
                              app[a].axis, (long long)app[a].amount);
    if (strcmp(got, CASES[i].tile))
      fprintf(stderr, "%dx%dx%d vector_max %d: want %s, got %s\n", CASES[i].m, CASES[i].k, CASES[i].n,
              CASES[i].vector_max, CASES[i].tile, got);
    CHECK_EQ_STR(got, CASES[i].tile);
    free(app);
  }
}

/* KBLOCK amount 0 (BEAM's action for "the heuristic's block"): the same kernel as the heuristic's explicit amount
 * for every shape the heuristic blocks, refused by name where no block fits; cc_kblock_auto against brute force. */
static void test_auto_amount(void) {
  for (int64_t k = 1; k <= 5000; k++) {
    int64_t want = 0;
    for (int64_t d = 32; d <= 128; d++)
      if (k % d == 0) want = d;
    if (want == k) want = 0; /* k <= 128: one block already */
    if (cc_kblock_auto(k) != want) fprintf(stderr, "k %lld: auto %lld, want %lld\n", (long long)k, (long long)cc_kblock_auto(k), (long long)want);
    CHECK(cc_kblock_auto(k) == want);
  }
  static const struct {
    int m, k, n;
    const char *amount; /* the heuristic's explicit opt, or NULL: amount 0 is refused */
  } CASES[] = {{64, 1000, 32, "KBLOCK:0:125"}, {32, 2048, 16, "KBLOCK:0:128"}, {16, 192, 16, "KBLOCK:0:96"},
               {16, 1021, 16, NULL}, {16, 128, 16, NULL}, {16, 96, 16, NULL}, {16, 31, 16, NULL}};
  for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) {
    char *t = matmul_text("float32", CASES[i].m, CASES[i].k, CASES[i].n);
    if (!CASES[i].amount) {
      if (t) expect_err(t, &g_c, "KBLOCK:0:0", "no block between 32 and 128 divides the axis");
      free(t);
      continue;
    }
    const uop *s = NULL, *a = NULL, *b = NULL;
    if (t) CHECK_OK(otu_prep(g_ctx, t, &g_c, &s));
    free(t);
    if (s) CHECK_OK(otu_opt(g_ctx, s, &g_c, "KBLOCK:0:0", &a, NULL, NULL));
    if (s) CHECK_OK(otu_opt(g_ctx, s, &g_c, CASES[i].amount, &b, NULL, NULL));
    CHECK(a && a == b); /* hash-consed: the same kernel is the same node */
  }
}

int main(void) {
  char dir[] = "/tmp/hcq-kblock-test-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("XDG_CACHE_HOME", dir, 1);
  if (!tu_have(cc_toolchain_cc())) return 77;
  CHECK_OK(uop_ctx_create(&g_ctx));
  CHECK_OK(cc_target_get("c", 4, &g_c));
  g_c.vector_max = 16; /* the CPU tile's shape on every host (the heuristic reads the vector width) */
  CHECK_OK(cc_target_get("ptx:sm_90", 0, &g_ptx));
  test_errors();
  test_equivalence();
  test_heuristic();
  test_tile();
  test_auto_amount();
  uop_ctx_destroy(g_ctx);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
  return testing_summary("kblock");
}
