/* Optimizer fuzz test: random elementwise and reduce kernels (float32 or int32; gated stores and loads, casts,
 * WHERE, broadcast and permuted loads, a symbolic outer size where divisibility allows) and random opt sequences
 * (UPCAST, UNROLL, THREAD, PADTO, and LOCAL/GROUP/GROUPTOP/SWAP on a GPU target), fixed seed. Each applied
 * sequence must leave the kernel equal, by the reference interpreter, to the original before and after expansion;
 * refused opts must leave the kernel unchanged and name the opt. Every few cases the c-target kernel is compiled
 * through the whole pipeline with the same opts and run natively once per core_id. Budget: HCQ_FUZZ_SECONDS
 * (default 3) seconds. */
#include <time.h>

#include "compiler/opt_test_util.h"
#include "hcq/testing.h"

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t n) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return (uint32_t)(g_rng % n);
}

typedef struct sbuf {
  char s[16384];
  size_t n;
} sbuf;

__attribute__((format(printf, 2, 3))) static void sb(sbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(b->s + b->n, sizeof b->s - b->n, fmt, ap);
  va_end(ap);
  if (k > 0) b->n += (size_t)k;
  if (b->n >= sizeof b->s) b->n = sizeof b->s - 1;
}

#define MAXD 4
typedef struct kspec {
  int nout, nred;         /* output (loop) dims, reduce dims */
  int64_t size[MAXD];     /* max sizes; dim 0 may be symbolic */
  bool symbolic;          /* dim 0 = (* n 4) with n in 1..size/4 */
  int id[MAXD];
  bool is_float;
  int nbufs;              /* input buffers */
  int nin_dims[4], in_dims[4][MAXD];
} kspec;

static const char *T(const kspec *k) { return k->is_float ? "float32" : "int32"; }

/* row-major index over the chosen dims, constant strides from the max sizes */
static void index_expr(sbuf *b, const kspec *k, const int *dims, int n) {
  if (n == 0) {
    sb(b, "0");
    return;
  }
  for (int i = 0; i < n - 1; i++) sb(b, "(+ ");
  for (int i = 0; i < n; i++) {
    int64_t stride = 1;
    for (int j = i + 1; j < n; j++) stride *= k->size[dims[j]];
    sb(b, stride == 1 ? "r%d" : "(* r%d %lld)", k->id[dims[i]], (long long)stride);
    if (i > 0) sb(b, ")");
    sb(b, " ");
  }
}

static void load_expr(sbuf *b, const kspec *k, int buf) {
  bool gated = rnd(4) == 0;
  int d = k->in_dims[buf][0];
  if (gated && k->nin_dims[buf] > 0 && k->size[d] > 1 && !(d == 0 && k->symbolic)) {
    sb(b, "(load (index in%d ", buf);
    index_expr(b, k, k->in_dims[buf], k->nin_dims[buf]);
    sb(b, " (< r%d %lld)) %s)", k->id[d], (long long)(1 + rnd((uint32_t)k->size[d] - 1)), k->is_float ? "0.5" : "(const 3 int32)");
  } else {
    sb(b, "(load (index in%d ", buf);
    index_expr(b, k, k->in_dims[buf], k->nin_dims[buf]);
    sb(b, "))");
  }
}

static void value_expr(sbuf *b, const kspec *k, int depth) {
  uint32_t c = depth <= 0 ? rnd(3) : rnd(9);
  switch (c) {
    case 0: case 1: load_expr(b, k, (int)rnd((uint32_t)k->nbufs)); return;
    case 2:
      if (k->is_float) sb(b, "%.2f", (double)((int)rnd(9) - 4) / 4.0);
      else sb(b, "(const %d int32)", (int)rnd(9) - 4);
      return;
    case 3: case 4: sb(b, "(+ "); break;
    case 5: sb(b, "(* "); break;
    case 6: sb(b, "(max "); break;
    case 7:
      sb(b, "(cast %s (cast %s ", T(k), k->is_float ? "int32" : "float32");
      value_expr(b, k, depth - 1);
      sb(b, "))");
      return;
    default:
      sb(b, "(where (< ");
      value_expr(b, k, depth - 1);
      sb(b, " ");
      value_expr(b, k, depth - 1);
      sb(b, ") ");
      break;
  }
  value_expr(b, k, depth - 1);
  sb(b, " ");
  value_expr(b, k, depth - 1);
  sb(b, ")");
}

static const int64_t SIZES[] = {2, 3, 4, 5, 6, 8, 12, 16, 24, 32};

static void gen_kernel(sbuf *b, kspec *k) {
  memset(k, 0, sizeof *k);
  k->nred = rnd(3) == 0 ? 0 : 1 + (int)rnd(2);
  k->nout = (k->nred ? 0 : 1) + (int)rnd(k->nred ? 3 : 3);
  if (k->nout + k->nred > MAXD) k->nout = MAXD - k->nred;
  int nd = k->nout + k->nred;
  int64_t total = 1;
  for (int i = 0; i < nd; i++) {
    k->size[i] = SIZES[rnd(sizeof SIZES / sizeof SIZES[0])];
    if (total * k->size[i] > 4096) k->size[i] = 2;
    total *= k->size[i];
    k->id[i] = i < k->nout ? i : 1000 + i;
  }
  k->symbolic = k->nout > 0 && k->size[0] % 4 == 0 && rnd(4) == 0;
  k->is_float = rnd(3) != 0;
  k->nbufs = 1 + (int)rnd(3);
  for (int j = 0; j < k->nbufs; j++) {
    int perm[MAXD];
    for (int i = 0; i < nd; i++) perm[i] = i;
    for (int i = nd - 1; i > 0; i--) {
      int r = (int)rnd((uint32_t)i + 1), t = perm[i];
      perm[i] = perm[r];
      perm[r] = t;
    }
    /* reduce kernels: loads use every reduce dim (else the reduce multiplies); others: a random subset */
    for (int i = 0; i < nd; i++)
      if (perm[i] >= k->nout || rnd(4) != 0) k->in_dims[j][k->nin_dims[j]++] = perm[i];
  }
  sb(b, "(kernel fz ");
  int64_t out_n = 1;
  for (int i = 0; i < k->nout; i++) out_n *= k->size[i];
  sb(b, "(let out (buf 0 %s %lld)) ", T(k), (long long)out_n);
  for (int j = 0; j < k->nbufs; j++) {
    int64_t n = 1;
    for (int i = 0; i < k->nin_dims[j]; i++) n *= k->size[k->in_dims[j][i]];
    sb(b, "(let in%d (buf %d %s %lld)) ", j, j + 1, T(k), (long long)n);
  }
  if (k->symbolic) sb(b, "(let n (var n 1 %lld index)) ", (long long)(k->size[0] / 4));
  for (int i = 0; i < nd; i++) {
    if (i == 0 && k->symbolic) sb(b, "(let r0 (range 0 (* n 4) loop)) ");
    else sb(b, "(let r%d (range %d %lld %s)) ", k->id[i], k->id[i], (long long)k->size[i], i < k->nout ? "loop" : "reduce");
  }
  sb(b, "(sink (store (index out ");
  int od[MAXD];
  for (int i = 0; i < k->nout; i++) od[i] = i;
  index_expr(b, k, od, k->nout);
  int gd = k->nout ? (int)rnd((uint32_t)k->nout) : 0;
  bool gate = k->nout && k->size[gd] > 1 && !(gd == 0 && k->symbolic) && rnd(4) == 0;
  if (gate) sb(b, " (< r%d %lld)", gd, (long long)(1 + rnd((uint32_t)k->size[gd] - 1)));
  sb(b, ") ");
  if (k->nred) {
    bool post = rnd(2);
    if (post) sb(b, "(+ ");
    sb(b, "(reduce %s ", rnd(3) == 0 ? "max" : "add");
    value_expr(b, k, 2);
    for (int i = k->nout; i < nd; i++) sb(b, " r%d", k->id[i]);
    sb(b, ")");
    if (post) {
      sb(b, " ");
      sb(b, k->is_float ? "1.5" : "(const 2 int32)");
      sb(b, ")");
    }
  } else {
    value_expr(b, k, 3);
  }
  for (int i = 0; i < k->nout; i++) sb(b, " r%d", i);
  sb(b, ")))");
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int64_t g_cases, g_applied, g_refused, g_native, g_threaded;

static void fuzz_case(uop_ctx *ctx, const cc_target *t, bool native) {
  sbuf b = {.n = 0};
  kspec k;
  gen_kernel(&b, &k);
  const uop *kern = NULL, *s = NULL;
  hcq_status st = cc_kernel_parse(ctx, b.s, b.n, "<fuzz>", &kern);
  if (st) {
    fprintf(stderr, "generated kernel does not parse: %s\n%s\n", hcq_status_message(st), b.s);
    hcq_status_free(st);
    CHECK(!"parse");
    return;
  }
  CHECK_OK(otu_prep_sink(ctx, kern, t, &s));
  if (!s) return;
  uop_var_val vals[1] = {{"n", k.symbolic ? 1 + (int64_t)rnd((uint32_t)(k.size[0] / 4)) : 1}};
  size_t nvals = k.symbolic ? 1 : 0;
  cc_sched sc;
  CHECK_OK(cc_sched_init(&sc, ctx, s, t));
  CHECK_OK(cc_convert_loop_to_global(&sc));
  static const cc_opt_op C_OPS[] = {CC_OPT_UPCAST, CC_OPT_UPCAST, CC_OPT_UNROLL, CC_OPT_UNROLL, CC_OPT_THREAD,
                                    CC_OPT_PADTO};
  static const cc_opt_op GPU_OPS[] = {CC_OPT_UPCAST, CC_OPT_UNROLL, CC_OPT_LOCAL, CC_OPT_GROUP, CC_OPT_GROUPTOP,
                                      CC_OPT_SWAP, CC_OPT_PADTO};
  static const int64_t AMTS[] = {0, 2, 3, 4, 5, 8, 16};
  int nopt = 1 + (int)rnd(5);
  for (int i = 0; i < nopt; i++) {
    cc_opt o;
    o.op = t->kind == CC_TARGET_C ? C_OPS[rnd(sizeof C_OPS / sizeof C_OPS[0])]
                                  : GPU_OPS[rnd(sizeof GPU_OPS / sizeof GPU_OPS[0])];
    o.axis = (int)rnd((uint32_t)sc.nrngs + 1);
    o.amount = o.op == CC_OPT_SWAP ? (int64_t)rnd((uint32_t)sc.nrngs + 1) : AMTS[rnd(sizeof AMTS / sizeof AMTS[0])];
    if (o.op == CC_OPT_PADTO) o.amount = 2 + rnd(7);
    /* mostly a divisor of the axis size, so that most opts apply */
    int64_t size = (size_t)o.axis < sc.nrngs ? cc_axis_size(sc.rngs[o.axis]) : -1;
    if (o.op != CC_OPT_SWAP && o.op != CC_OPT_PADTO && size > 1 && rnd(3) != 0) {
      int64_t d = 2 + rnd((uint32_t)size - 1);
      while (size % d) d--;
      o.amount = d > 32 ? 0 : d;
    }
    const uop *before = sc.sink;
    size_t nbefore = sc.napplied;
    st = cc_apply_opt(&sc, o);
    if (st) {
      CHECK_EQ_INT(hcq_status_code(st), HCQ_CODE_INVALID);
      CHECK(strstr(hcq_status_message(st), cc_opt_name(o.op)) != NULL);
      CHECK(sc.sink == before && sc.napplied == nbefore);
      hcq_status_free(st);
      g_refused++;
    } else {
      g_applied++;
      g_threaded += o.op == CC_OPT_THREAD;
    }
  }
  size_t bad = 0;
  st = otu_same(kern, sc.sink, vals, nvals, g_cases, &bad);
  bool fail = st || bad;
  if (bad) fprintf(stderr, "interp (optimized): %zu mismatches\n", bad);
  if (st) fprintf(stderr, "interp (optimized): %s\n", hcq_status_message(st));
  hcq_status_free(st);
  const uop *e = NULL;
  st = cc_expand(ctx, sc.sink, t, &e);
  if (st && hcq_status_code(st) == HCQ_CODE_UNSUPPORTED && strstr(hcq_status_message(st), "GROUP")) {
    hcq_status_free(st);
    st = HCQ_OK;
    e = NULL;
  }
  if (st) fprintf(stderr, "expand: %s\n", hcq_status_message(st));
  fail |= st != HCQ_OK;
  hcq_status_free(st);
  if (e) {
    size_t bad2 = 0;
    st = otu_same(kern, e, vals, nvals, g_cases, &bad2);
    if (st) fprintf(stderr, "interp (expanded): %s\n", hcq_status_message(st));
    fail |= st || bad2;
    if (bad2) fprintf(stderr, "interp (expanded): %zu mismatches\n", bad2);
    hcq_status_free(st);
    bad += bad2;
  }
  if (!fail && native && t->kind == CC_TARGET_C) {
    cc_options o = {.opts = sc.applied, .nopts = sc.napplied};
    if (!sc.napplied) o.noopt = true;
    size_t bad3 = 0;
    st = otu_native_same(ctx, kern, t, &o, vals, nvals, g_cases, &bad3, NULL);
    if (st) fprintf(stderr, "native: %s\n", hcq_status_message(st));
    fail |= st || bad3;
    hcq_status_free(st);
    bad += bad3;
    g_native++;
    if (bad3) { /* tell optimizer bugs from pipeline bugs */
      size_t bad4 = 0;
      cc_options no = {.noopt = true};
      st = otu_native_same(ctx, kern, t, &no, vals, nvals, g_cases, &bad4, NULL);
      fprintf(stderr, "native run: %zu mismatches with the opts, %zu with --noopt\n", bad3, bad4);
      hcq_status_free(st);
    }
  }
  CHECK(!fail);
  CHECK_EQ_INT(bad, 0);
  if (fail) {
    fprintf(stderr, "case %lld: %s\nopts:", (long long)g_cases, b.s);
    for (size_t i = 0; i < sc.napplied; i++)
      fprintf(stderr, " %s:%d:%lld", cc_opt_name(sc.applied[i].op), sc.applied[i].axis, (long long)sc.applied[i].amount);
    fprintf(stderr, "\n");
  }
  cc_sched_free(&sc);
  g_cases++;
}

int main(void) {
  char dir[] = "/tmp/hcq-optfuzz-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("XDG_CACHE_HOME", dir, 1);
  bool have_cc = tu_have(cc_toolchain_cc());
  double budget = 3.0;
  const char *env = getenv("HCQ_FUZZ_SECONDS");
  if (env && atof(env) > 0) budget = atof(env);
  cc_target c, ptx;
  CHECK_OK(cc_target_get("c", 8, &c));
  CHECK_OK(cc_target_get("ptx:sm_90", 0, &ptx));
  double t0 = now_s();
  while (now_s() - t0 < budget && testing_failures < 5) {
    uop_ctx *ctx = NULL;
    CHECK_OK(uop_ctx_create(&ctx));
    if (!ctx) break;
    for (int i = 0; i < 16; i++) fuzz_case(ctx, rnd(4) == 0 ? &ptx : &c, have_cc && i % 4 == 0);
    uop_ctx_destroy(ctx);
  }
  printf("opt_fuzz: %lld kernels, %lld opts applied (%lld THREAD), %lld refused, %lld run natively, %.1f s\n",
         (long long)g_cases, (long long)g_applied, (long long)g_threaded, (long long)g_refused, (long long)g_native,
         now_s() - t0);
  CHECK(g_cases > 0 && g_applied > 0);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
  return testing_summary("opt_fuzz");
}
