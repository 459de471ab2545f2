/* Optimizer tests: the structure each opt produces (ranges, lanes, index math evaluated by uop_sym_infer), every
 * validity error, and equivalence with the reference interpreter before and after expansion (and compiled through
 * the pipeline and run natively, once per core_id). Heuristic choices on the examples are checked against the
 * reference's observed kernels (tinygrad/codegen/opt/heuristic.py: 512x512 matmul -> r_16_128_8_4_4_128_4 with 8
 * threads, 512x512 exp2(a+b) -> E_32768_2_4). */
#include "compiler/opt_test_util.h"
#include "base/testing.h"

static const char *ADD64 =
    "(kernel add64 (let o (buf 0 float32 64)) (let a (buf 1 float32 64)) (let b (buf 2 float32 64))"
    " (let r0 (range 0 64 loop)) (sink (store (index o r0) (+ (load (index a r0)) (load (index b r0))) r0)))";
static const char *SUM64 =
    "(kernel sum64 (let o (buf 0 float32 1)) (let a (buf 1 float32 64)) (let r (range 1000 64 reduce))"
    " (sink (store (index o 0) (reduce add (load (index a r)) r))))";
static const char *ADD60 =
    "(kernel add60 (let o (buf 0 int32 60)) (let a (buf 1 int32 60)) (let b (buf 2 int32 60))"
    " (let r0 (range 0 60 loop)) (sink (store (index o r0) (* (load (index a r0)) (load (index b r0))) r0)))";
static const char *SUM60 =
    "(kernel sum60 (let o (buf 0 float32 3)) (let a (buf 1 float32 180)) (let r0 (range 0 3 loop))"
    " (let r (range 1000 60 reduce))"
    " (sink (store (index o r0) (reduce add (* (load (index a (+ (* r0 60) r))) 2.0) r) r0)))";
static const char *MAX60 =
    "(kernel max60 (let o (buf 0 float32 1)) (let a (buf 1 float32 60)) (let r (range 1000 60 reduce))"
    " (sink (store (index o 0) (reduce max (load (index a r)) r))))";
static const char *EXPSUM60 =
    "(kernel expsum60 (let o (buf 0 float32 1)) (let a (buf 1 float32 60)) (let r (range 1000 60 reduce))"
    " (sink (store (index o 0) (reduce add (exp2 (load (index a r))) r))))";
static const char *STACK =
    "(kernel stack (let o (buf 0 float32 4096)) (let a (buf 1 float32 4096)) (let r0 (range 0 1024 loop))"
    " (let r1 (range 1 4 loop))"
    " (sink (store (index o (+ (* r0 4) r1)) (where (< r1 3) (load (index a (+ (* r0 4) r1))) 0.0) r0 r1)))";
static const char *EXP512 =
    "(kernel e512 (let o (buf 0 float32 262144)) (let a (buf 1 float32 262144)) (let b (buf 2 float32 262144))"
    " (let r0 (range 0 512 loop)) (let r1 (range 1 512 loop))"
    " (sink (store (index o (+ (* r0 512) r1)) (exp2 (+ (load (index a (+ (* r0 512) r1)))"
    " (load (index b (+ (* r0 512) r1))))) r0 r1)))";

/* an index term that mixes two ranges (r1*r0) beside single-range ones, after both ranges are split and upcast */
static const char *MIXED =
    "(kernel mixed (let o (buf 0 int32 64)) (let a (buf 1 int32 72)) (let r0 (range 0 8 loop))"
    " (let r1 (range 1 8 loop))"
    " (sink (store (index o (+ (* r0 8) r1)) (load (index a (+ (+ (* r1 r0) r1) r0))) r0 r1)))";

static uop_ctx *g_ctx;
static cc_target g_c, g_c8, g_ptx;

static const uop *prep(const char *text) {
  const uop *s = NULL;
  CHECK_OK(otu_prep(g_ctx, text, &g_c, &s));
  return s;
}

static const uop *prep_file(const char *path) {
  const uop *s = NULL, *k = NULL;
  CHECK_OK(cc_kernel_parse_file(g_ctx, path, &k));
  if (k) CHECK_OK(otu_prep_sink(g_ctx, k, &g_c, &s));
  return s;
}

static const uop *opt(const uop *s, const cc_target *t, const char *opts) {
  const uop *out = NULL;
  CHECK_OK(otu_opt(g_ctx, s, t, opts, &out, NULL, NULL));
  return out;
}

static const uop *expand(const uop *s) {
  const uop *out = NULL;
  CHECK_OK(cc_expand(g_ctx, s, &g_c, &out));
  return out;
}

/* interp(ref) == interp(test) */
static void same(const uop *ref, const uop *test, const char *what) { otu_check_same(ref, test, 11, what); }

/* The kernel optimized by `opts` equals the original before and after expansion, and natively. */
static void equiv(const char *text, const cc_target *t, const char *opts) {
  const uop *k = NULL;
  CHECK_OK(cc_kernel_parse(g_ctx, text, strlen(text), "<test>", &k));
  if (!k) return;
  const uop *s = NULL;
  CHECK_OK(otu_prep_sink(g_ctx, k, t, &s));
  const uop *o = opt(s, t, opts);
  if (!o) {
    fprintf(stderr, "  (opts %s)\n", opts ? opts : "heuristic");
    return;
  }
  same(k, o, opts);
  const uop *e = NULL;
  hcq_status st = cc_expand(g_ctx, o, t, &e);
  if (st && hcq_status_code(st) == HCQ_CODE_UNSUPPORTED) { /* GROUP on a GPU target: checked elsewhere */
    hcq_status_free(st);
    return;
  }
  CHECK_OK(st);
  same(k, e, opts);
  if (t->kind == CC_TARGET_C) otu_check_native(g_ctx, k, t, opts, 5, NULL);
}

/* The lanes of an upcast tile share one index base: matmul 512 with the CPU heuristic's 16x8 tile expands to 128
 * stores at B + c (c a constant, lane 0 at B itself). The expander regroups each index sum as (rest) + (lane-constant
 * terms) and folds the lanes' constant offsets as it builds them, so the symbolic rewrite after it has no lane to
 * rebuild: the nodes the expansion adds are checked against a bound that the per-lane rewrite exceeded (1,657 nodes
 * before, 847 now). In a fresh context, so the count is this expansion's own. */
static void test_lane_base(void) {
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *k = NULL, *s = NULL, *o = NULL, *e = NULL;
  if (ctx) CHECK_OK(cc_kernel_parse_file(ctx, "examples/matmul_512.uop", &k));
  if (k) CHECK_OK(otu_prep_sink(ctx, k, &g_c, &s));
  if (s) CHECK_OK(otu_opt(ctx, s, &g_c, "UPCAST:1:16,UPCAST:0:8", &o, NULL, NULL));
  size_t before = uop_ctx_node_count(ctx);
  if (o) CHECK_OK(cc_expand(ctx, o, &g_c, &e));
  if (!e) {
    uop_ctx_destroy(ctx);
    return;
  }
  size_t made = uop_ctx_node_count(ctx) - before;
  if (made > 1000) fprintf(stderr, "  expand made %zu nodes\n", made);
  CHECK(made <= 1000);
  int stores = 0, at_base = 0;
  const uop *base = NULL;
  for (uint32_t i = 0; i < e->nsrc; i++) {
    const uop *st = e->src[i];
    if (st->op != UOP_STORE) continue;
    stores++;
    const uop *idx = st->src[0]->src[1], *b = idx;
    if (idx->op == UOP_ADD && idx->src[1]->op == UOP_CONST) b = idx->src[0];
    if (!base) base = b;
    at_base += b == base;
  }
  CHECK_EQ_INT(stores, 128);
  CHECK_EQ_INT(at_base, 128);
  same(k, e, "matmul_512 16x8 expanded");
  uop_ctx_destroy(ctx);
}

static int64_t eval(const uop *e, const char *n1, int64_t v1, const char *n2, int64_t v2) {
  uop_var_val vals[2] = {{n1, v1}, {n2, v2}};
  int64_t out = -1;
  CHECK_OK(uop_sym_infer(e, vals, n2 ? 2 : 1, &out));
  return out;
}

static void test_upcast_structure(void) {
  const uop *s = prep(ADD64), *o = opt(s, &g_c, "UPCAST:0:4");
  if (!o) return;
  CHECK_EQ_INT(otu_count(g_ctx, o, UOP_RANGE, UOP_AXIS_UPCAST), 1);
  CHECK_EQ_INT(otu_count(g_ctx, o, UOP_RANGE, UOP_AXIS_LOOP), 1);
  const uop *up = otu_range_of(g_ctx, o, UOP_AXIS_UPCAST), *lp = otu_range_of(g_ctx, o, UOP_AXIS_LOOP);
  CHECK_EQ_INT(cc_axis_size(up), 4);
  CHECK_EQ_INT(cc_axis_size(lp), 16);
  const uop *st = o->src[0];
  CHECK_EQ_INT(st->nsrc, 4); /* index, value, loop, upcast */
  CHECK(st->src[2] == lp && st->src[3] == up);
  char nl[32], nu[32];
  snprintf(nl, sizeof nl, "ridx%lld", (long long)lp->arg.i);
  snprintf(nu, sizeof nu, "ridx%lld", (long long)up->arg.i);
  CHECK_EQ_INT(eval(st->src[0]->src[1], nl, 5, nu, 3), 23); /* not top: loop*4 + upcast */
  same(s, o, "UPCAST:0:4");
  const uop *e = expand(o);
  if (!e) return;
  CHECK_EQ_INT(e->nsrc, 4);
  CHECK_EQ_INT(otu_count(g_ctx, e, UOP_RANGE, UOP_AXIS_UPCAST), 0);
  for (uint32_t i = 0; i < e->nsrc && i < 4; i++) {
    CHECK_EQ_INT(e->src[i]->nsrc, 3);
    CHECK_EQ_INT(eval(e->src[i]->src[0]->src[1], nl, 5, NULL, 0), 20 + i); /* lanes in address order */
  }
  same(s, e, "UPCAST:0:4 expanded");
}

static void test_thread_structure(void) {
  const uop *s = prep(ADD64), *o = opt(s, &g_c, "THREAD:0:2");
  if (!o) return;
  const uop *th = otu_range_of(g_ctx, o, UOP_AXIS_THREAD), *lp = otu_range_of(g_ctx, o, UOP_AXIS_LOOP);
  CHECK(th && lp);
  if (!th || !lp) return;
  CHECK_EQ_INT(cc_axis_size(th), 2);
  CHECK_EQ_INT(cc_axis_size(lp), 32);
  char nt[32], nl[32];
  snprintf(nt, sizeof nt, "ridx%lld", (long long)th->arg.i);
  snprintf(nl, sizeof nl, "ridx%lld", (long long)lp->arg.i);
  CHECK_EQ_INT(eval(o->src[0]->src[0]->src[1], nt, 1, nl, 5), 37); /* top: thread is the outer factor */
  CHECK(o->src[0]->src[2] == th && o->src[0]->src[3] == lp);
  same(s, o, "THREAD:0:2");
  /* the compiled kernel runs each half on its own core_id */
  cc_program *p = NULL;
  size_t bad = 0;
  cc_opt th2 = {CC_OPT_THREAD, 0, 2};
  const uop *k = NULL;
  CHECK_OK(cc_kernel_parse(g_ctx, ADD64, strlen(ADD64), "<t>", &k));
  CHECK_OK(otu_native_same(g_ctx, k, &g_c, &(cc_options){.opts = &th2, .nopts = 1}, NULL, 0, 3, &bad, &p));
  CHECK_EQ_INT(bad, 0);
  if (p) {
    int64_t g = 0;
    CHECK((g = cc_launch_const(p->desc.global[0])) == 2);
    CHECK(strstr(p->source, "core_id") != NULL);
    cc_program_free(p);
  }
}

static void test_unroll_structure(void) {
  const uop *s = prep(SUM64), *o = opt(s, &g_c, "UNROLL:0:4");
  if (!o) return;
  CHECK_EQ_INT(otu_count(g_ctx, o, UOP_RANGE, UOP_AXIS_UNROLL), 1);
  const uop *e = expand(o);
  if (!e) return;
  /* c folds lanes into vectors: one accumulator per lane (expander.c), combined after the loop */
  CHECK_EQ_INT(otu_count(g_ctx, e, UOP_REDUCE, -1), g_c.vector_max >= 4 ? 4 : 1);
  CHECK_EQ_INT(otu_count(g_ctx, e, UOP_LOAD, -1), 4);
  CHECK_EQ_INT(otu_count(g_ctx, e, UOP_RANGE, -1), 1);
  same(s, e, "UNROLL:0:4");
  /* the whole axis: no reduce loop left */
  const uop *w = expand(opt(prep("(kernel s16 (let o (buf 0 float32 1)) (let a (buf 1 float32 16))"
                                 " (let r (range 1000 16 reduce)) (sink (store (index o 0) (reduce add (load (index a r)) r))))"),
                            &g_c, "UNROLL:0:0"));
  if (!w) return;
  CHECK_EQ_INT(otu_count(g_ctx, w, UOP_REDUCE, -1), 0);
  CHECK_EQ_INT(otu_count(g_ctx, w, UOP_LOAD, -1), 16);
}

static void expect_err(const char *text, const cc_target *t, const char *opts, const char *needle) {
  otu_expect_err(g_ctx, text, t, opts, needle);
}

static void test_errors(void) {
  const uop *mm = NULL;
  CHECK_OK(cc_kernel_parse_file(g_ctx, "examples/matmul.uop", &mm));
  char *mmtext = NULL;
  if (mm) CHECK_OK(cc_kernel_print(mm, &mmtext));
  if (!mmtext) return;
  expect_err(ADD64, &g_c, "UPCAST:0:32", "don't upcast more than 16");
  expect_err(ADD64, &g_c, "UPCAST:0:3", "not divisible");
  expect_err(ADD64, &g_c, "UPCAST:1:4", "axis 1 does not exist");
  expect_err(ADD64, &g_c, "UNROLL:0:4", "axis 0 does not exist: the kernel has 0 unrollable");
  expect_err(mmtext, &g_c, "UPCAST:2:4", "upcast is for GLOBAL/LOCAL/LOOP axes, not reduce");
  expect_err(mmtext, &g_c, "UNROLL:0:64", "don't unroll more than 32");
  expect_err(mmtext, &g_c, "LOCAL:0:4", "no local dims");
  expect_err(mmtext, &g_c, "GROUP:0:4", "no local dims");
  expect_err(mmtext, &g_c, "GROUPTOP:0:16", "no local dims");
  expect_err(mmtext, &g_c, "THREAD:2:2", "THREAD on a reduce axis needs a kernel that is one reduce");
  expect_err(mmtext, &g_c8, "THREAD:0:16", "too many threads");
  expect_err(mmtext, &g_c, "THREAD:0:2,THREAD:0:2", "already threaded");
  expect_err(mmtext, &g_ptx, "THREAD:0:2", "does not support threads");
  expect_err(mmtext, &g_c, "SWAP:0:2", "swap is only for two GLOBAL axes"); /* a LOOP and a REDUCE axis */
  expect_err(mmtext, &g_c, "TC:0:0", "not implemented");
  expect_err(mmtext, &g_ptx, "UPCAST:0:16,UPCAST:1:16,GROUP:0:0", "exceeds the shared memory");
  expect_err(mmtext, &g_ptx, "LOCAL:0:4,NOLOCALS:0:0", "NOLOCALS on a kernel that already has");
  expect_err(mmtext, &g_ptx, "NOLOCALS:0:0,LOCAL:0:4", "locals are disabled");
  expect_err(MAX60, &g_c, "PADTO:0:64", "cannot pad a MAX reduce");
  expect_err(EXPSUM60, &g_c, "PADTO:0:64", "does not map 0 to 0");
  expect_err("(kernel k (let o (buf 0 float32 10)) (let r (range 0 10 loop)) (sink (store (index o r) 1.0 r)))",
             &g_c, "PADTO:0:64", "quadruple");
  expect_err(ADD64, &g_c, "PADTO:0:0", "amount > 0");
  const uop *a64 = prep(ADD64), *dummy = NULL;
  cc_opt neg = {CC_OPT_UPCAST, 0, -4};
  if (a64)
    CHECK_ERR(cc_optimize(g_ctx, a64, &g_c, &(cc_options){.opts = &neg, .nopts = 1}, &dummy, NULL, NULL),
              HCQ_CODE_INVALID, "negative amount");
  /* GROUP on a GPU target: the expander keeps the GROUP_REDUCE range (group_reduce.c lowers it; its tests run the
   * lowered program in a GPU simulator), and the interpreter still runs it as a loop */
  const uop *s = NULL, *o = NULL, *e = NULL;
  CHECK_OK(otu_prep(g_ctx, mmtext, &g_ptx, &s));
  if (s) CHECK_OK(otu_opt(g_ctx, s, &g_ptx, "GROUP:0:4", &o, NULL, NULL));
  if (o) {
    same(mm, o, "GROUP:0:4");
    CHECK_OK(cc_expand(g_ctx, o, &g_ptx, &e));
    if (e) same(mm, e, "GROUP:0:4 expanded");
    CHECK(e && otu_range_of(g_ctx, e, UOP_AXIS_GROUP_REDUCE) != NULL);
  }
  free(mmtext);
}

static void test_equivalence(void) {
  const uop *mm = NULL;
  CHECK_OK(cc_kernel_parse_file(g_ctx, "examples/matmul.uop", &mm));
  char *mmtext = NULL;
  if (mm) CHECK_OK(cc_kernel_print(mm, &mmtext));
  if (!mmtext) return;
  static const char *MM_OPTS[] = {
      "UPCAST:0:4", "UPCAST:1:4,UPCAST:0:4,UNROLL:0:4", "UNROLL:0:32", "UNROLL:0:8,UPCAST:1:16", "THREAD:0:4",
      "THREAD:1:4,UPCAST:0:4,UNROLL:0:2", "UPCAST:0:2,THREAD:0:2,UPCAST:0:2,UNROLL:0:4", "PADTO:2:96,UNROLL:0:3",
      "PADTO:0:80,UPCAST:0:5,THREAD:0:2",
  };
  for (size_t i = 0; i < sizeof MM_OPTS / sizeof MM_OPTS[0]; i++) equiv(mmtext, &g_c, MM_OPTS[i]);
  equiv(mmtext, &g_ptx, "LOCAL:0:16,LOCAL:1:4,UPCAST:0:2,UNROLL:0:4");
  equiv(mmtext, &g_ptx, "SWAP:0:1,UPCAST:1:4");
  equiv(mmtext, &g_ptx, "GROUPTOP:0:16");
  equiv(ADD60, &g_c, "PADTO:0:64,UPCAST:0:4,THREAD:0:2");
  equiv(SUM60, &g_c, "PADTO:1:64,UNROLL:0:4");
  equiv(SUM60, &g_c, "UPCAST:0:3,UNROLL:0:5");
  equiv(STACK, &g_c, "UPCAST:1:0,UPCAST:0:4");
  equiv(MIXED, &g_c, "UPCAST:1:4,UPCAST:0:2");
  equiv(MIXED, &g_c, "UPCAST:0:4,THREAD:1:2");
  equiv(MIXED, &g_c, "UPCAST:1:2,UPCAST:1:2,UPCAST:0:8");
  free(mmtext);
}

static void expect_axes(const uop *s, const int64_t *sizes, size_t n, const char *what) {
  cc_sched sc;
  CHECK_OK(cc_sched_init(&sc, g_ctx, s, &g_c));
  bool ok = sc.nrngs == n;
  for (size_t i = 0; ok && i < n; i++) ok = uop_vmax(sc.rngs[i]) + 1 == sizes[i];
  if (!ok) {
    fprintf(stderr, "%s: axes", what);
    for (size_t i = 0; i < sc.nrngs; i++)
      fprintf(stderr, " %lld%c", (long long)uop_vmax(sc.rngs[i]) + 1, uop_axis_letter(cc_axis_type(sc.rngs[i])));
    fprintf(stderr, "\n");
  }
  CHECK(ok);
  cc_sched_free(&sc);
}

static void test_heuristic(void) {
  /* reference (CPU_COUNT=8): 512x512 matmul -> r_16_128_8_4_4_128_4 */
  const uop *mm = prep_file("examples/matmul_512.uop");
  cc_opt *app = NULL;
  size_t napp = 0;
  const uop *o = NULL;
  if (mm) CHECK_OK(otu_opt(g_ctx, mm, &g_c8, NULL, &o, &app, &napp));
  if (o) expect_axes(o, (const int64_t[]){16, 128, 8, 4, 4, 128, 4}, 7, "matmul_512");
  CHECK(napp > 0 && app[napp - 1].op == CC_OPT_THREAD && app[napp - 1].amount == 8);
  free(app);
  /* reference: 512x512 exp2(a+b) -> E_32768_2_4 */
  const uop *e = prep(EXP512);
  o = NULL;
  if (e) CHECK_OK(otu_opt(g_ctx, e, &g_c8, NULL, &o, NULL, NULL));
  if (o) expect_axes(o, (const int64_t[]){32768, 2, 4}, 3, "exp2 512x512");
  /* 64x64 matmul: 262144 operations -> 2 threads at most; 64-row reductions: no threads */
  const uop *m64 = prep_file("examples/matmul.uop");
  o = NULL;
  if (m64) CHECK_OK(otu_opt(g_ctx, m64, &g_c8, NULL, &o, NULL, NULL));
  if (o) CHECK_EQ_INT(cc_axis_size(otu_range_of(g_ctx, o, UOP_AXIS_THREAD)), 2);
  const uop *mr = prep_file("examples/max_rows.uop");
  o = NULL;
  if (mr) CHECK_OK(otu_opt(g_ctx, mr, &g_c8, NULL, &o, NULL, NULL));
  if (o) CHECK(otu_range_of(g_ctx, o, UOP_AXIS_THREAD) == NULL);
  /* small masked axes are upcast whole first */
  const uop *st = prep(STACK);
  app = NULL;
  napp = 0;
  if (st) CHECK_OK(otu_opt(g_ctx, st, &g_c8, NULL, &o, &app, &napp));
  CHECK(napp > 0 && app[0].op == CC_OPT_UPCAST && app[0].axis == 1 && app[0].amount == 0);
  free(app);
  /* heuristic kernels run correctly, natively */
  equiv(STACK, &g_c8, NULL);
  equiv(EXP512, &g_c8, NULL);
  equiv(SUM60, &g_c8, NULL);
  static const char *EXAMPLES[] = {"examples/matmul.uop", "examples/conv2d.uop", "examples/softmax.uop",
                                   "examples/max_rows.uop", "examples/transpose.uop", "examples/masked_store.uop",
                                   "examples/sum.uop", "examples/add.uop"};
  for (size_t i = 0; i < sizeof EXAMPLES / sizeof EXAMPLES[0]; i++) {
    const uop *k = NULL;
    CHECK_OK(cc_kernel_parse_file(g_ctx, EXAMPLES[i], &k));
    char *text = NULL;
    if (k) CHECK_OK(cc_kernel_print(k, &text));
    if (text) equiv(text, &g_c8, NULL);
    free(text);
  }
}

int main(void) {
  char dir[] = "/tmp/hcq-opts-test-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("XDG_CACHE_HOME", dir, 1);
  if (!tu_have(cc_toolchain_cc())) return 77;
  CHECK_OK(uop_ctx_create(&g_ctx));
  CHECK_OK(cc_target_get("c", 4, &g_c));
  CHECK_OK(cc_target_get("c", 8, &g_c8));
  g_c8.cpu_tiles = false; /* the reference's heuristic choices (compiler/render_c_nt_test checks the CPU tiles) */
  CHECK_OK(cc_target_get("ptx:sm_90", 0, &g_ptx));
  test_upcast_structure();
  test_thread_structure();
  test_unroll_structure();
  test_errors();
  test_equivalence();
  test_lane_base();
  test_heuristic();
  uop_ctx_destroy(g_ctx);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
  return testing_summary("opts");
}
