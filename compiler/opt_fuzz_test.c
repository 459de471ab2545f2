/* Optimizer fuzz test: random elementwise and reduce kernels (float32 or int32; gated stores and loads, casts,
 * WHERE, broadcast and permuted loads, a symbolic outer size where divisibility allows; range ids drawn at random,
 * up to INT64_MAX and with reduce ids below loop ids) and random opt sequences (UPCAST, UNROLL, THREAD, PADTO, and
 * LOCAL/GROUP/GROUPTOP/SWAP on a GPU target). Each applied sequence must leave the kernel equal, by the reference
 * interpreter, to the original before and after expansion; refused opts must leave the kernel unchanged and name
 * the opt. Every few cases the c-target kernel is compiled through the whole pipeline with the same opts and with
 * -ffp-contract=off (no fused a*b+c) and run natively once per core_id. Inputs: half the eligible cases (int32
 * kernels; float32 kernels without an add/mul reduce, whose result would depend on the summation order; max
 * included) get values over the whole dtype (INT32_MIN/MAX, huge, subnormal, values that round, +-inf, NaN, -0) and
 * constants like them, natively too. Compared: the interpreter on the original vs the optimized and the expanded
 * kernel NaN-aware (NaN matches NaN, equal values match, -0 == +0); the native run of a full-range case bit for bit
 * with the interpreter (a NaN matches any NaN, -0 != +0), other cases (float add/mul reduces, on multiples of 1/16
 * whose sums are exact in any order) NaN-aware with a 1e-4 relative tolerance; a float reduce over one range is also
 * run natively without opts on full-range values (then it sums in the interpreter's order) and compared bit for bit. Every few cases one buffer is declared smaller than the kernel
 * needs: the validator must refuse the kernel (out-of-bounds, naming the access) exactly when the reference
 * interpreter, running it with the buffer really that small, goes out of bounds.
 * Seed: HCQ_FUZZ_SEED (default fixed; printed at the start and on failure). Budget: HCQ_FUZZ_SECONDS (default 3). */
#include <float.h>
#include <inttypes.h>
#include <time.h>

#include "compiler/opt_test_util.h"
#include "base/testing.h"
#include "base/fuzz.h"
#include "compiler/kernel_gen_test_util.h"

#define MAXD 4
typedef struct kspec {
  int nout, nred;         /* output (loop) dims, reduce dims */
  int64_t size[MAXD];     /* max sizes; dim 0 may be symbolic */
  bool symbolic;          /* dim 0 = (* n 4) with n in 1..size/4 */
  int64_t id[MAXD];       /* range ids (names r<dim> in the text) */
  bool is_float;
  bool wild;              /* full-range inputs and constants; no casts (out-of-range conversions are UB) */
  bool has_max;           /* uses max */
  int nbufs;              /* input buffers */
  int nin_dims[4], in_dims[4][MAXD];
} kspec;

static const char *T(const kspec *k) { return k->is_float ? "float32" : "int32"; }

static void load_expr(fuzz_text *b, const kspec *k, int buf) {
  bool gated = fuzz_rnd(4) == 0;
  int d = k->in_dims[buf][0];
  if (gated && k->nin_dims[buf] > 0 && k->size[d] > 1 && !(d == 0 && k->symbolic)) {
    fuzz_put(b, "(load (index in%d ", buf);
    kg_put_index(b, k->size, k->in_dims[buf], k->nin_dims[buf]);
    fuzz_put(b, " (< r%d %lld)) %s)", d, (long long)(1 + fuzz_rnd((uint32_t)k->size[d] - 1)), k->is_float ? "0.5" : "(const 3 int32)");
  } else {
    fuzz_put(b, "(load (index in%d ", buf);
    kg_put_index(b, k->size, k->in_dims[buf], k->nin_dims[buf]);
    fuzz_put(b, "))");
  }
}

static const char *const WILD_F[] = {"-0.0", "-1e-40", "0.1", "1e-45", "1.00000012", "(const inf float32)",
                                     "(const -inf float32)", "3e38", "16777217.0", "(const nan float32)"};
static const char *const WILD_I[] = {"(const 2147483647 int32)", "(const -2147483648 int32)", "(const -1 int32)",
                                     "(const 65536 int32)", "(const 0 int32)"};

static void value_expr(fuzz_text *b, kspec *k, int depth) {
  uint32_t c = depth <= 0 ? fuzz_rnd(3) : fuzz_rnd(9);
  if (c == 7 && k->wild) c = 3; /* no casts */
  switch (c) {
    case 0: case 1: load_expr(b, k, (int)fuzz_rnd((uint32_t)k->nbufs)); return;
    case 2:
      if (k->wild && fuzz_rnd(2)) {
        if (k->is_float) fuzz_put(b, "%s", WILD_F[fuzz_rnd(sizeof WILD_F / sizeof WILD_F[0])]);
        else fuzz_put(b, "%s", WILD_I[fuzz_rnd(sizeof WILD_I / sizeof WILD_I[0])]);
      } else if (k->is_float) {
        fuzz_put(b, "%.2f", (double)((int)fuzz_rnd(9) - 4) / 4.0);
      } else {
        fuzz_put(b, "(const %d int32)", (int)fuzz_rnd(9) - 4);
      }
      return;
    case 3: case 4: fuzz_put(b, "(+ "); break;
    case 5: fuzz_put(b, "(* "); break;
    case 6: fuzz_put(b, k->has_max ? "(max " : "(* "); break;
    case 7:
      fuzz_put(b, "(cast %s (cast %s ", T(k), k->is_float ? "int32" : "float32");
      value_expr(b, k, depth - 1);
      fuzz_put(b, "))");
      return;
    default:
      fuzz_put(b, "(where (< ");
      value_expr(b, k, depth - 1);
      fuzz_put(b, " ");
      value_expr(b, k, depth - 1);
      fuzz_put(b, ") ");
      break;
  }
  value_expr(b, k, depth - 1);
  fuzz_put(b, " ");
  value_expr(b, k, depth - 1);
  fuzz_put(b, ")");
}

static const int64_t SIZES[] = {2, 3, 4, 5, 6, 8, 12, 16, 24, 32};

/* Range ids are names: the old layout (loops 0.., reduces 1000+), ids near INT64_MAX and other large ones, or
 * descending (reduce ids below loop ids); distinct. */
static void draw_ids(kspec *k, int nd) {
  static const int64_t POOL[] = {INT64_MAX, INT64_MAX - 1, INT64_MAX - 2, 0, 1, 2, 999, 1000, 1002, 2000,
                                 INT32_MAX, (int64_t)INT32_MAX + 1, (int64_t)1 << 32, (int64_t)1 << 62};
  int mode = (int)fuzz_rnd(4);
  for (int i = 0; i < nd; i++) {
    bool fresh;
    do {
      if (mode == 0) k->id[i] = i < k->nout ? i : 1000 + i;
      else if (mode == 1) k->id[i] = fuzz_rnd(3) ? POOL[fuzz_rnd(sizeof POOL / sizeof POOL[0])] : (int64_t)(fuzz_rng >> 1);
      else if (mode == 2) k->id[i] = INT64_MAX - i;
      else k->id[i] = 5000 - 1000 * i + (int64_t)fuzz_rnd(10);
      fresh = true;
      for (int j = 0; j < i; j++) fresh &= k->id[j] != k->id[i];
      mode = fresh ? mode : 1;
    } while (!fresh);
  }
}

static int64_t g_shared; /* kernels with a second store sharing a value with the first */

static void gen_kernel(fuzz_text *b, kspec *k) {
  /* every third elementwise kernel of 2+ dims also stores S = sh[rj] * 3 to out2[rj] (closing rj alone) and adds S
   * to the first store's value: S is shared by two loop nests. Decided by a counter, not the rng: the random
   * stream, and so every other kernel of a seed, stays the same. */
  static unsigned nkern;
  bool shared_case = ++nkern % 3 == 0;
  memset(k, 0, sizeof *k);
  k->nred = fuzz_rnd(3) == 0 ? 0 : 1 + (int)fuzz_rnd(2);
  k->nout = (k->nred ? 0 : 1) + (int)fuzz_rnd(k->nred ? 3 : 3);
  if (k->nout + k->nred > MAXD) k->nout = MAXD - k->nred;
  int nd = k->nout + k->nred;
  int64_t total = 1;
  for (int i = 0; i < nd; i++) {
    k->size[i] = SIZES[fuzz_rnd(sizeof SIZES / sizeof SIZES[0])];
    if (total * k->size[i] > 4096) k->size[i] = 2;
    total *= k->size[i];
  }
  draw_ids(k, nd);
  k->symbolic = k->nout > 0 && k->size[0] % 4 == 0 && fuzz_rnd(4) == 0;
  k->is_float = fuzz_rnd(3) != 0;
  bool max_reduce = k->nred && fuzz_rnd(3) == 0;
  /* float add reduces depend on the summation order, which opts change: only benign (exact) values there */
  k->wild = (!k->is_float || !k->nred || max_reduce) && fuzz_rnd(2);
  k->has_max = max_reduce || fuzz_rnd(2);
  k->nbufs = 1 + (int)fuzz_rnd(3);
  for (int j = 0; j < k->nbufs; j++) {
    int perm[MAXD];
    for (int i = 0; i < nd; i++) perm[i] = i;
    for (int i = nd - 1; i > 0; i--) {
      int r = (int)fuzz_rnd((uint32_t)i + 1), t = perm[i];
      perm[i] = perm[r];
      perm[r] = t;
    }
    /* reduce kernels: loads use every reduce dim (else the reduce multiplies); others: a random subset */
    for (int i = 0; i < nd; i++)
      if (perm[i] >= k->nout || fuzz_rnd(4) != 0) k->in_dims[j][k->nin_dims[j]++] = perm[i];
  }
  fuzz_put(b, "(kernel fz ");
  int64_t out_n = 1;
  for (int i = 0; i < k->nout; i++) out_n *= k->size[i];
  fuzz_put(b, "(let out (buf 0 %s %lld)) ", T(k), (long long)out_n);
  for (int j = 0; j < k->nbufs; j++) {
    int64_t n = 1;
    for (int i = 0; i < k->nin_dims[j]; i++) n *= k->size[k->in_dims[j][i]];
    fuzz_put(b, "(let in%d (buf %d %s %lld)) ", j, j + 1, T(k), (long long)n);
  }
  bool shared = shared_case && !k->nred && k->nout >= 2;
  int sj = nkern % 2 ? k->nout - 1 : 0; /* the shared range: innermost or outermost */
  if (shared)
    fuzz_put(b, "(let out2 (buf %d %s %lld)) (let sh (buf %d %s %lld)) ", k->nbufs + 1, T(k), (long long)k->size[sj],
             k->nbufs + 2, T(k), (long long)k->size[sj]);
  if (k->symbolic) fuzz_put(b, "(let n (var n 1 %lld index)) ", (long long)(k->size[0] / 4));
  for (int i = 0; i < nd; i++) {
    if (i == 0 && k->symbolic) fuzz_put(b, "(let r0 (range %" PRId64 " (* n 4) loop)) ", k->id[0]);
    else fuzz_put(b, "(let r%d (range %" PRId64 " %lld %s)) ", i, k->id[i], (long long)k->size[i], i < k->nout ? "loop" : "reduce");
  }
  if (shared) fuzz_put(b, "(let S (* (load (index sh r%d)) %s)) ", sj, k->is_float ? "3.0" : "(const 3 int32)");
  fuzz_put(b, "(sink (store (index out ");
  int od[MAXD];
  for (int i = 0; i < k->nout; i++) od[i] = i;
  kg_put_index(b, k->size, od, k->nout);
  int gd = k->nout ? (int)fuzz_rnd((uint32_t)k->nout) : 0;
  bool gate = k->nout && k->size[gd] > 1 && !(gd == 0 && k->symbolic) && fuzz_rnd(4) == 0;
  if (gate) fuzz_put(b, " (< r%d %lld)", gd, (long long)(1 + fuzz_rnd((uint32_t)k->size[gd] - 1)));
  fuzz_put(b, ") ");
  if (k->nred) {
    bool post = fuzz_rnd(2);
    if (post) fuzz_put(b, "(+ ");
    fuzz_put(b, "(reduce %s ", max_reduce ? "max" : "add");
    value_expr(b, k, 2);
    for (int i = k->nout; i < nd; i++) fuzz_put(b, " r%d", i);
    fuzz_put(b, ")");
    if (post) {
      fuzz_put(b, " ");
      fuzz_put(b, k->is_float ? "1.5" : "(const 2 int32)");
      fuzz_put(b, ")");
    }
  } else {
    if (shared) fuzz_put(b, "(+ ");
    value_expr(b, k, 3);
    if (shared) fuzz_put(b, " S)");
  }
  for (int i = 0; i < k->nout; i++) fuzz_put(b, " r%d", i);
  fuzz_put(b, ")");
  if (shared) fuzz_put(b, " (store (index out2 r%d) (+ S %s) r%d)", sj, k->is_float ? "0.5" : "(const 1 int32)", sj);
  fuzz_put(b, "))");
  g_shared += shared;
}

/* The current case's kernel, for wild_fill; g_native_fill: the fill is for a native run. */
static const kspec *g_spec;
static bool g_force_wild; /* full-range values for this run even where the kernel is not `wild` */

/* Values over the whole dtype (a function of seed; otu_refill hook): for float32 NaN, +-inf, +-0, huge, subnormal,
 * FLT_MAX, values that round in float32 sums and products, any finite bit pattern (max included: float max is IEEE
 * maximum everywhere); for int32 INT32_MIN/MAX, 0, +-1 and any bit pattern. Native runs get the same values: they
 * are built with -ffp-contract=off (cc_target.no_fp_contract), so a*b+c rounds twice as in the interpreter. */
static void wild_fill(cc_kbuf *bufs, size_t n, uint64_t seed) {
  if (!g_spec || (!g_spec->wild && !g_force_wild)) return;
  uint64_t r = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
  for (size_t i = 0; i < n; i++)
    for (int64_t e = 0; e < bufs[i].nelems; e++) {
      r ^= r << 13;
      r ^= r >> 7;
      r ^= r << 17;
      uint32_t bits = (uint32_t)(r >> 32), cls = (uint32_t)(r % 24);
      if (bufs[i].dtype.scalar == UOP_FLOAT32) {
        float v, sign = bits & 1 ? -1.0f : 1.0f;
        switch (cls) {
          case 0: v = NAN; break;
          case 1: v = sign * INFINITY; break;
          case 2: v = sign * 0.0f; break;
          case 3: v = sign * FLT_MAX; break;
          case 4: v = sign * (float)ldexp(1.0 + (bits >> 9) * 0x1p-23, 100 + (int)(bits % 27)); break; /* huge */
          case 5: v = sign * (float)ldexp((bits >> 9) + 1, -149); break;                              /* subnormal */
          case 6: v = sign * FLT_MIN; break;
          case 7: case 8: case 9: v = sign * (1.0f + (float)((bits >> 9) | 1) * 0x1p-23f); break;   /* rounds */
          case 10: case 11: case 12:
            memcpy(&v, &bits, 4);
            if (!isfinite(v)) v = sign * 0.75f;
            break;
          default: v = (float)((int)(bits % 4001) - 2000) / 16.0f; break;
        }
        ((float *)bufs[i].data)[e] = v;
      } else if (bufs[i].dtype.scalar == UOP_INT32) {
        static const int32_t EDGE[] = {INT32_MIN, INT32_MAX, 0, -1, 1, INT32_MIN + 1, INT32_MAX - 1};
        ((int32_t *)bufs[i].data)[e] = cls < 7 ? EDGE[cls] : (int32_t)bits;
      }
    }
}

static int64_t g_oob_refused, g_oob_allowed, g_wild_cases;

/* Declare one buffer smaller than the kernel text says: the validator must refuse the changed text (naming an
 * out-of-bounds load/store) exactly when the interpreter, running the original kernel with that buffer really that
 * small, goes out of bounds. vals: the symbolic size at its maximum. */
static void oob_case(uop_ctx *ctx, const fuzz_text *b, const kspec *k, const uop *kern) {
  int slot = (int)fuzz_rnd((uint32_t)k->nbufs + 1);
  char key[32];
  int klen = snprintf(key, sizeof key, "(buf %d ", slot);
  const char *at = strstr(b->s, key);
  if (!at) return;
  const char *num = strchr(at + klen, ' ');
  if (!num) return;
  long long size = atoll(num + 1);
  if (size < 2) return;
  long long small = 1 + (long long)fuzz_rnd((uint32_t)size - 1);
  fuzz_text t = {.n = 0};
  const char *end = num + 1;
  while (*end >= '0' && *end <= '9') end++;
  fuzz_put(&t, "%.*s %lld%s", (int)(num - b->s), b->s, small, end);
  uop_var_val vals[1] = {{"n", k->symbolic ? k->size[0] / 4 : 1}};
  cc_kbuf *a = NULL;
  size_t na = 0;
  hcq_status st = cc_kernel_buffers(kern, &a, &na);
  if (!st) st = cc_kbufs_alloc_fill(a, na, 1);
  for (size_t i = 0; !st && i < na; i++)
    if (a[i].slot == slot) a[i].size_B = (size_t)small * (size_t)uop_dt_itemsize_B(uop_dt_base_of(a[i].dtype));
  if (!st) st = otu_interp(kern, a, na, vals, k->symbolic ? 1 : 0);
  bool oracle = st && strstr(hcq_status_message(st), "out of bounds");
  if (st && !oracle) fprintf(stderr, "oob case: interpreter: %s\n", hcq_status_message(st));
  CHECK(!st || oracle);
  hcq_status_free(st);
  if (a) cc_kbufs_free(a, na);
  const uop *k2 = NULL;
  st = cc_kernel_parse(ctx, t.s, t.n, "<oob>", &k2);
  bool refused = st && strstr(hcq_status_message(st), "out-of-bounds") && strstr(hcq_status_message(st), "<oob>:1:");
  if (refused != oracle || (st && !refused)) {
    fprintf(stderr, "oob case: interpreter %s, validator: %s\n%s\n", oracle ? "out of bounds" : "in bounds",
            st ? hcq_status_message(st) : "accepted", t.s);
    CHECK(!"validator and interpreter disagree on an out-of-bounds kernel");
  }
  hcq_status_free(st);
  *(refused ? &g_oob_refused : &g_oob_allowed) += 1;
}

static int64_t g_cases, g_applied, g_refused, g_native, g_threaded, g_kblocked, g_thread_reduce, g_native_thread_reduce,
    g_native_reduce_wild;

static bool g_have_cc;

/* native: compile and run the c-target kernel natively (also done for every cross-thread reduce when a C compiler
 * is there) */
static void fuzz_case(uop_ctx *ctx, const cc_target *t, bool native) {
  fuzz_text b = {.n = 0};
  kspec k;
  gen_kernel(&b, &k);
  g_spec = &k;
  g_wild_cases += k.wild;
  const uop *kern = NULL, *s = NULL;
  hcq_status st = cc_kernel_parse(ctx, b.s, b.n, "<fuzz>", &kern);
  if (st) {
    fprintf(stderr, "generated kernel does not parse: %s\n%s\n", hcq_status_message(st), b.s);
    hcq_status_free(st);
    CHECK(!"parse");
    return;
  }
  if (fuzz_rnd(6) == 0) oob_case(ctx, &b, &k, kern);
  CHECK_OK(otu_prep_sink(ctx, kern, t, &s));
  if (!s) return;
  uop_var_val vals[1] = {{"n", k.symbolic ? 1 + (int64_t)fuzz_rnd((uint32_t)(k.size[0] / 4)) : 1}};
  size_t nvals = k.symbolic ? 1 : 0;
  cc_sched sc;
  CHECK_OK(cc_sched_init(&sc, ctx, s, t));
  CHECK_OK(cc_convert_loop_to_global(&sc));
  static const cc_opt_op C_OPS[] = {CC_OPT_UPCAST, CC_OPT_UPCAST, CC_OPT_UNROLL, CC_OPT_UNROLL, CC_OPT_THREAD,
                                    CC_OPT_PADTO, CC_OPT_KBLOCK};
  static const cc_opt_op GPU_OPS[] = {CC_OPT_UPCAST, CC_OPT_UNROLL, CC_OPT_LOCAL, CC_OPT_GROUP, CC_OPT_GROUPTOP,
                                      CC_OPT_SWAP, CC_OPT_PADTO};
  static const int64_t AMTS[] = {0, 2, 3, 4, 5, 8, 16};
  int nopt = 1 + (int)fuzz_rnd(5);
  bool thread_reduce = false;
  for (int i = 0; i < nopt; i++) {
    cc_opt o;
    o.op = t->kind == CC_TARGET_C ? C_OPS[fuzz_rnd(sizeof C_OPS / sizeof C_OPS[0])]
                                  : GPU_OPS[fuzz_rnd(sizeof GPU_OPS / sizeof GPU_OPS[0])];
    o.axis = (int)fuzz_rnd((uint32_t)sc.nrngs + 1);
    /* THREAD on a reduce axis (a cross-thread reduce) where the kernel has one, by a count the size allows */
    bool red_thread = false;
    if (o.op == CC_OPT_THREAD && fuzz_rnd(4))
      for (size_t a = 0; a < sc.nrngs; a++)
        if (cc_axis_type(sc.rngs[a]) == UOP_AXIS_REDUCE) o.axis = (int)a, red_thread = true;
    o.amount = o.op == CC_OPT_SWAP ? (int64_t)fuzz_rnd((uint32_t)sc.nrngs + 1) : AMTS[fuzz_rnd(sizeof AMTS / sizeof AMTS[0])];
    if (o.op == CC_OPT_PADTO) o.amount = 2 + fuzz_rnd(7);
    /* mostly a divisor of the axis size, so that most opts apply */
    int64_t size = (size_t)o.axis < sc.nrngs ? cc_axis_size(sc.rngs[o.axis]) : -1;
    if (o.op != CC_OPT_SWAP && o.op != CC_OPT_PADTO && size > 1 && fuzz_rnd(3) != 0) {
      int64_t d = 2 + fuzz_rnd((uint32_t)size - 1);
      while (size % d) d--;
      o.amount = d > 32 ? 0 : d;
    }
    if (red_thread && size > 1 && fuzz_rnd(4)) {
      int64_t d = 2 + fuzz_rnd((uint32_t)(size < t->global_max[0] ? size : t->global_max[0]) - 1);
      while (size % d) d--;
      o.amount = d;
    }
    bool on_reduce = (size_t)o.axis < sc.nrngs && cc_axis_type(sc.rngs[o.axis]) == UOP_AXIS_REDUCE;
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
      g_kblocked += o.op == CC_OPT_KBLOCK;
      g_thread_reduce += o.op == CC_OPT_THREAD && on_reduce;
      thread_reduce |= o.op == CC_OPT_THREAD && on_reduce;
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
  if (!fail && (native || (thread_reduce && g_have_cc)) && t->kind == CC_TARGET_C) {
    cc_options o = {.opts = sc.applied, .nopts = sc.napplied};
    if (!sc.napplied) o.noopt = true;
    size_t bad3 = 0;
    otu_bit_exact = k.wild; /* full-range values: no add/mul float reduce, so nothing depends on an order */
    st = otu_native_same(ctx, kern, t, &o, vals, nvals, g_cases, &bad3, NULL);
    if (st) fprintf(stderr, "native: %s\n", hcq_status_message(st));
    fail |= st || bad3;
    hcq_status_free(st);
    bad += bad3;
    g_native++;
    g_native_thread_reduce += thread_reduce;
    if (bad3) { /* tell optimizer bugs from pipeline bugs */
      size_t bad4 = 0;
      cc_options no = {.noopt = true};
      st = otu_native_same(ctx, kern, t, &no, vals, nvals, g_cases, &bad4, NULL);
      fprintf(stderr, "native run: %zu mismatches with the opts, %zu with --noopt\n", bad3, bad4);
      hcq_status_free(st);
    }
    otu_bit_exact = false;
    if (!k.wild && k.is_float && k.nred == 1 && !fail) {
      /* a float add/mul reduce over one range: without opts the native loop sums in the interpreter's order, so
       * full-range values must give the same bits (over several ranges the nesting order is free; with opts the
       * order changes: those runs keep the exact-sum values) */
      size_t bad5 = 0;
      cc_options no = {.noopt = true};
      g_force_wild = otu_bit_exact = true;
      st = otu_native_same(ctx, kern, t, &no, vals, nvals, g_cases, &bad5, NULL);
      g_force_wild = otu_bit_exact = false;
      if (st) fprintf(stderr, "native (noopt, full range): %s\n", hcq_status_message(st));
      if (bad5) fprintf(stderr, "native (noopt, full range): %zu mismatches\n", bad5);
      fail |= st || bad5;
      hcq_status_free(st);
      bad += bad5;
      g_native_reduce_wild++;
    }
  }
  CHECK(!fail);
  CHECK_EQ_INT(bad, 0);
  if (fail) {
    fprintf(stderr, "case %lld (%s inputs): %s\nopts:", (long long)g_cases, k.wild ? "full-range" : "benign", b.s);
    for (size_t i = 0; i < sc.napplied; i++)
      fprintf(stderr, " %s:%d:%lld", cc_opt_name(sc.applied[i].op), sc.applied[i].axis, (long long)sc.applied[i].amount);
    fprintf(stderr, "\n");
  }
  cc_sched_free(&sc);
  g_cases++;
}

int main(void) {
  fuzz_rng = fuzz_seed("opt_fuzz", 0x9e3779b97f4a7c15ull);
  otu_refill = wild_fill;
  char dir[] = "/tmp/hcq-optfuzz-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("XDG_CACHE_HOME", dir, 1);
  bool have_cc = g_have_cc = tu_have(cc_toolchain_cc());
  double budget = fuzz_seconds(3.0, NULL);
  cc_target c, ptx;
  CHECK_OK(cc_target_get("c", 8, &c));
  c.no_fp_contract = true; /* native runs compare bit-exactly with the interpreter (no fused a*b+c) */
  CHECK_OK(cc_target_get("ptx:sm_90", 0, &ptx));
  double t0 = fuzz_now_s();
  /* past the budget, a few more batches until a cross-thread reduce was applied (slow hosts: sanitizers, qemu) */
  while ((fuzz_now_s() - t0 < budget || (g_thread_reduce == 0 && g_cases < 2000)) && testing_failures < 5) {
    uop_ctx *ctx = NULL;
    CHECK_OK(uop_ctx_create(&ctx));
    if (!ctx) break;
    for (int i = 0; i < 16; i++) fuzz_case(ctx, fuzz_rnd(4) == 0 ? &ptx : &c, have_cc && i % 4 == 0);
    uop_ctx_destroy(ctx);
  }
  printf("opt_fuzz: %lld kernels (%lld with full-range inputs, %lld with a value shared by two loop nests), %lld opts applied (%lld THREAD, %lld on a reduce axis: "
         "%lld of those kernels run natively; %lld KBLOCK), %lld refused, "
         "%lld run natively (%lld float reduces also without opts on full-range values), out-of-bounds variants: "
         "%lld refused, %lld in bounds, %.1f s\n",
         (long long)g_cases, (long long)g_wild_cases, (long long)g_shared, (long long)g_applied, (long long)g_threaded,
         (long long)g_thread_reduce, (long long)g_native_thread_reduce, (long long)g_kblocked,
         (long long)g_refused, (long long)g_native, (long long)g_native_reduce_wild, (long long)g_oob_refused, (long long)g_oob_allowed, fuzz_now_s() - t0);
  CHECK(g_cases > 0 && g_applied > 0);
  CHECK(g_shared > 0);
  CHECK(g_thread_reduce > 0); /* the cross-thread reduce is exercised (the seed is fixed by default) */
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
  return testing_summary("opt_fuzz");
}
