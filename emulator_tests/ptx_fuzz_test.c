/* Differential fuzzer of the PTX path: random kernels (elementwise over 1-2 loop dims, or a reduce add/max over one
 * more; every scalar dtype the ptx renderer keeps in registers: float16, bfloat16, float32, float64, int8, uint8,
 * int16, uint16, int32, uint32, int64, and bool as a dtype to cast through; + - * max neg, comparisons into where, mulacc, casts through another dtype, / recip
 * sqrt trunc and exp2/log2/sin on floats, & | ^ << >> // % on integers; gated loads and stores) with random opts
 * (LOCAL/GROUP/GROUPTOP/UPCAST/UNROLL, else the heuristic or none) are compiled for ptx:sm_90 or ptx:sm_80, run by
 * the PTX interpreter and compared with the reference interpreter (compiler/interp.c) on the same buffers.
 * Elementwise kernels without transcendentals get values over the whole dtype (NaN, +-inf, -0, subnormals, huge,
 * INT_MIN/MAX) and must match bit for bit (a NaN matches any NaN); reduces (summation order) and transcendentals
 * (decompositions of a few ulp) use benign values and a tolerance.
 * Seed: HCQ_FUZZ_SEED (default fixed, printed); budget: HCQ_FUZZ_SECONDS (default 3). */
#include <float.h>

#include "compiler/examples_test_util.h"
#include "emulator_tests/ptx_test_util.h"
#include "base/fuzz.h"
#include "compiler/kernel_gen_test_util.h"

static const char *const DTYPES[] = {"float16", "bfloat16", "float32", "float64", "int8",   "uint8",
                                     "int16",   "int32",    "uint32",  "int64",   "uint16", "bool"};
#define NDT 11 /* the kernel's dtype: all but bool (bool only as the dtype values are cast through) */
static bool is_float(int dt) { return dt < 4; }

typedef struct kspec {
  int dt, other;          /* the kernel's dtype, and the dtype of buffer 3 (read through a cast) */
  int nloop, nred;
  int64_t size[3];
  bool wild;              /* full-range inputs, bit-exact comparison */
  bool transcendental;
} kspec;

static void konst(fuzz_text *b, const kspec *k, int dt) {
  if (is_float(dt)) {
    static const char *const WILD[] = {"-0.0", "inf", "-inf", "nan", "65504.0", "1e-7", "3e38", "0.1"};
    const char *w = WILD[fuzz_rnd(8)];
    if (dt == 0 && !strcmp(w, "3e38")) w = "65504.0"; /* beyond float16: the parser refuses it */
    if (k->wild && fuzz_rnd(3) == 0) fuzz_put(b, "(const %s %s)", w, DTYPES[dt]);
    else fuzz_put(b, "(const %.3f %s)", (double)((int)fuzz_rnd(17) - 8) / 4.0, DTYPES[dt]);
  } else if (dt == 11) {
    fuzz_put(b, "(const %s bool)", fuzz_rnd(2) ? "true" : "false");
  } else {
    static const char *const WILD[] = {"-1", "127", "-128", "255", "32767", "2147483647", "-2147483648"};
    if (k->wild && fuzz_rnd(3) == 0) {
      const char *w = WILD[fuzz_rnd(7)];
      long long v = atoll(w);
      int bits = dt == 4 || dt == 5 ? 8 : dt == 6 || dt == 10 ? 16 : dt == 9 ? 64 : 32;
      bool uns = dt == 5 || dt == 8 || dt == 10;
      long long lo = uns ? 0 : bits == 64 ? INT64_MIN : -(1LL << (bits - 1));
      long long hi = bits == 64 ? INT64_MAX : uns ? (1LL << bits) - 1 : (1LL << (bits - 1)) - 1;
      if (v < lo || v > hi) v = 3;
      fuzz_put(b, "(const %lld %s)", v, DTYPES[dt]);
    } else {
      fuzz_put(b, "(const %d %s)", (int)fuzz_rnd(9) - (dt == 5 || dt == 8 || dt == 10 ? 0 : 4), DTYPES[dt]);
    }
  }
}

static void load(fuzz_text *b, const kspec *k, int buf, bool in_red) {
  int d = k->nloop > 0 ? (int)fuzz_rnd((uint32_t)k->nloop) : -1;
  bool gated = d >= 0 && k->size[d] > 1 && fuzz_rnd(5) == 0;
  fuzz_put(b, "(load (index in%d ", buf);
  kg_put_index(b, k->size, NULL, k->nloop + (in_red ? k->nred : 0));
  if (gated) {
    fuzz_put(b, " (< r%d %lld))", d, (long long)(1 + fuzz_rnd((uint32_t)k->size[d] - 1)));
    fuzz_put(b, " ");
    konst(b, k, buf == 3 ? k->other : k->dt);
    fuzz_put(b, ")");
  } else {
    fuzz_put(b, "))");
  }
}

/* A value of the kernel's dtype. */
static void expr(fuzz_text *b, kspec *k, int depth, bool in_red) {
  int dt = k->dt;
  bool fl = is_float(dt);
  uint32_t c = depth <= 0 ? fuzz_rnd(3) : fuzz_rnd(16);
  switch (c) {
    case 0: case 1: load(b, k, (int)fuzz_rnd(3), in_red); return;
    case 2: konst(b, k, dt); return;
    case 3: /* through the other dtype: a load of buffer 3 cast to ours, or our value cast there and back */
      if (fuzz_rnd(2)) {
        fuzz_put(b, "(cast %s ", DTYPES[dt]);
        load(b, k, 3, in_red);
        fuzz_put(b, ")");
      } else {
        fuzz_put(b, "(cast %s (cast %s ", DTYPES[dt], DTYPES[k->other]);
        expr(b, k, depth - 1, in_red);
        fuzz_put(b, "))");
      }
      return;
    case 4: fuzz_put(b, "(neg "); expr(b, k, depth - 1, in_red); fuzz_put(b, ")"); return;
    case 5: case 6: {
      /* one time in four both operands are the same expression: (!= x x) must stay true for a NaN x (the symbolic
       * pass once folded it to false for floats too) */
      static const char *const CMP[] = {"<", "!=", "=="};
      fuzz_text *l = malloc(sizeof *l), *r = malloc(sizeof *r);
      l->n = r->n = 0;
      expr(l, k, depth - 1, in_red);
      if (fuzz_rnd(4) == 0) *r = *l;
      else expr(r, k, depth - 1, in_red);
      fuzz_put(b, "(where (%s %s %s) ", CMP[fuzz_rnd(3)], l->s, r->s);
      free(l);
      free(r);
      break;
    }
    case 7:
      fuzz_put(b, "(mulacc ");
      expr(b, k, depth - 1, in_red);
      fuzz_put(b, " ");
      break;
    case 8:
      if (fl) {
        static const char *const UN[] = {"recip", "sqrt", "trunc", "exp2", "log2", "sin"};
        int u = (int)fuzz_rnd(k->wild ? 3 : 6);
        if (u >= 3) k->transcendental = true;
        fuzz_put(b, "(%s ", UN[u]);
        expr(b, k, depth - 1, in_red);
        fuzz_put(b, ")");
      } else { /* a divisor in 1..8 */
        fuzz_put(b, "(%s ", fuzz_rnd(2) ? "//" : "%");
        expr(b, k, depth - 1, in_red);
        fuzz_put(b, " (+ (& ");
        expr(b, k, depth - 1, in_red);
        fuzz_put(b, " (const 7 %s)) (const 1 %s)))", DTYPES[dt], DTYPES[dt]);
      }
      return;
    default: {
      static const char *const FOPS[] = {"+", "-", "*", "max", "/", "+", "*"};
      static const char *const IOPS[] = {"+", "-", "*", "max", "&", "|", "^", "<<", ">>"};
      fuzz_put(b, "(%s ", fl ? FOPS[fuzz_rnd(7)] : IOPS[fuzz_rnd(9)]);
      break;
    }
  }
  expr(b, k, depth - 1, in_red);
  fuzz_put(b, " ");
  expr(b, k, depth - 1, in_red);
  fuzz_put(b, ")");
}

static const int64_t SIZES[] = {1, 2, 3, 4, 5, 7, 8, 16, 24, 32, 33, 64, 100};

static void gen(fuzz_text *b, kspec *k) {
  memset(k, 0, sizeof *k);
  k->dt = (int)fuzz_rnd(NDT);
  k->other = (int)fuzz_rnd(NDT + 1);
  k->nloop = 1 + (int)fuzz_rnd(2);
  k->nred = fuzz_rnd(3) == 0 && k->dt != 0 && k->dt != 1 ? 1 : 0; /* no float16/bfloat16 sums: f16 rounding per step */
  int64_t total = 1;
  for (int i = 0; i < k->nloop + k->nred; i++) {
    k->size[i] = SIZES[fuzz_rnd(sizeof SIZES / sizeof SIZES[0])];
    if (total * k->size[i] > 8192) k->size[i] = 2;
    total *= k->size[i];
  }
  k->wild = !k->nred && fuzz_rnd(2);
  int64_t out_n = 1, in_n = total;
  for (int i = 0; i < k->nloop; i++) out_n *= k->size[i];
  fuzz_put(b, "(kernel fz (let out (buf 0 %s %lld)) ", DTYPES[k->dt], (long long)out_n);
  for (int j = 0; j < 3; j++) fuzz_put(b, "(let in%d (buf %d %s %lld)) ", j, j + 1, DTYPES[k->dt], (long long)in_n);
  fuzz_put(b, "(let in3 (buf 4 %s %lld)) ", DTYPES[k->other], (long long)in_n);
  for (int i = 0; i < k->nloop + k->nred; i++)
    fuzz_put(b, "(let r%d (range %d %lld %s)) ", i, i < k->nloop ? i : 1000 + i, (long long)k->size[i],
       i < k->nloop ? "loop" : "reduce");
  fuzz_put(b, "(sink (store (index out ");
  kg_put_index(b, k->size, NULL, k->nloop);
  int gd = (int)fuzz_rnd((uint32_t)k->nloop);
  if (k->size[gd] > 1 && fuzz_rnd(4) == 0) fuzz_put(b, " (< r%d %lld)", gd, (long long)(1 + fuzz_rnd((uint32_t)k->size[gd] - 1)));
  fuzz_put(b, ") ");
  if (k->nred) {
    bool mx = fuzz_rnd(3) == 0;
    fuzz_put(b, "(reduce %s ", mx ? "max" : "add");
    expr(b, k, 2, true);
    fuzz_put(b, " r%d)", k->nloop);
  } else {
    expr(b, k, 3, false);
  }
  for (int i = 0; i < k->nloop; i++) fuzz_put(b, " r%d", i);
  fuzz_put(b, ")))");
}

/* Values over the whole dtype: for floats NaN, +-inf, +-0, subnormals, huge and any bit pattern; for integers the
 * extremes and any bit pattern. */
static void wild_fill(cc_kbuf *bufs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint8_t *p = bufs[i].data;
    size_t isz = bufs[i].size_B / (size_t)(bufs[i].nelems ? bufs[i].nelems : 1);
    for (int64_t e = 0; e < bufs[i].nelems; e++) {
      uint64_t bits = ((uint64_t)fuzz_rnd(UINT32_MAX) << 32) | fuzz_rnd(UINT32_MAX);
      uint32_t cls = fuzz_rnd(8);
      if (cls == 0) bits = 0;                                     /* +0 / 0 */
      else if (cls == 1) bits = (uint64_t)1 << (isz * 8 - 1);    /* -0 / INT_MIN */
      else if (cls == 2) bits = ~(uint64_t)0 >> (65 - isz * 8);  /* NaN-ish / INT_MAX */
      else if (cls == 3) bits &= 0xff;                           /* subnormal / small */
      if (bufs[i].dtype.scalar == UOP_BOOL) bits &= 1; /* bools are 0 or 1 in memory */
      memcpy(p + (size_t)e * isz, &bits, isz);
    }
  }
}

static bool float_dt(uop_dtype dt) { return uop_dt_is_float(dt); }

/* Compare bit for bit (a NaN matches any NaN) or with a tolerance; counts mismatches. */
static size_t compare(const cc_kbuf *ref, const cc_kbuf *got, size_t n, bool exact, double rel) {
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    bool fl = float_dt(ref[i].dtype);
    double norm = 0;
    for (int64_t e = 0; fl && e < ref[i].nelems; e++) {
      double a = fabs(tu_elem(ref[i].data, ref[i].dtype, e));
      if (isfinite(a) && a > norm) norm = a;
    }
    for (int64_t e = 0; e < ref[i].nelems; e++) {
      double a = tu_elem(ref[i].data, ref[i].dtype, e), g = tu_elem(got[i].data, got[i].dtype, e);
      bool ok;
      if (!fl) ok = a == g;
      else if (exact) ok = (isnan(a) && isnan(g)) || (a == g && signbit(a) == signbit(g));
      else ok = cc_float_match(g, a, rel, 1e-6 + rel * norm);
      if (!ok && bad++ < 3)
        fprintf(stderr, "  buffer %zu element %lld: got %.17g, want %.17g\n", i, (long long)e, g, a);
    }
  }
  return bad;
}

static int64_t g_cases, g_runs, g_wild, g_opted, g_thread_ins;

static void fuzz_case(const cc_target *t) {
  static fuzz_text b;
  b.n = 0;
  kspec k;
  gen(&b, &k);
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *sink = NULL;
  cc_program *p = NULL;
  cc_kbuf *ref = NULL, *got = NULL;
  size_t nref = 0, ngot = 0;
  char opts[128] = "";
  hcq_status st = cc_kernel_parse(ctx, b.s, b.n, "<fuzz>", &sink);
  if (st) {
    fprintf(stderr, "generated kernel does not parse: %s\n%s\n", hcq_status_message(st), b.s);
    hcq_status_free(st);
    CHECK(!"parse");
    goto done;
  }
  /* opts: explicit ones (when they apply), the heuristic, or none */
  uint32_t mode = fuzz_rnd(3);
  if (mode == 0) {
    static const char *const OPS[] = {"LOCAL", "UPCAST", "UNROLL", "GROUP", "GROUPTOP", "LOCAL"};
    static const int AMT[] = {2, 4, 8, 16, 32, 3};
    size_t n = 0;
    for (int i = 0, m = 1 + (int)fuzz_rnd(3); i < m; i++)
      n += (size_t)snprintf(opts + n, sizeof opts - n, "%s%s:%d:%d", i ? "," : "", OPS[fuzz_rnd(6)], (int)fuzz_rnd(3),
                            AMT[fuzz_rnd(6)]);
    cc_opt *o = NULL;
    size_t no = 0;
    CHECK_OK(cc_opts_parse(opts, &o, &no));
    st = cc_compile_source(ctx, sink, t, &(cc_options){.opts = o, .nopts = no}, &p);
    free(o);
    if (st) { /* the opts do not apply to this kernel: fall back to the heuristic */
      hcq_status_free(st);
      st = HCQ_OK;
      mode = 1;
      snprintf(opts, sizeof opts, "(heuristic)");
    } else {
      g_opted++;
    }
  }
  if (mode == 1) {
    if (!opts[0]) snprintf(opts, sizeof opts, "(heuristic)");
    st = cc_compile_source(ctx, sink, t, &(cc_options){0}, &p);
  } else if (mode == 2) {
    snprintf(opts, sizeof opts, "(noopt)");
    st = cc_compile_source(ctx, sink, t, &(cc_options){.noopt = true}, &p);
  }
  if (!st) st = cc_kernel_buffers(sink, &ref, &nref);
  if (!st) st = cc_kernel_buffers(sink, &got, &ngot);
  if (!st) st = cc_kbufs_alloc_fill(ref, nref, (uint64_t)g_cases);
  if (!st) st = cc_kbufs_alloc_fill(got, ngot, (uint64_t)g_cases);
  if (st) {
    fprintf(stderr, "compile: %s\n%s\nopts %s\n", hcq_status_message(st), b.s, opts);
    hcq_status_free(st);
    CHECK(!"compile");
    goto done;
  }
  bool wild = k.wild && !k.transcendental;
  if (wild) {
    uint64_t save = fuzz_rng;
    wild_fill(ref, nref);
    fuzz_rng = save;
    wild_fill(got, ngot);
    g_wild++;
  }
  {
    void *bufs[8] = {0};
    size_t sizes[8] = {0};
    for (size_t i = 0; i < nref; i++) bufs[ref[i].slot] = ref[i].data, sizes[ref[i].slot] = ref[i].size_B;
    st = cc_interp_run(sink, bufs, sizes, 8, NULL, 0);
  }
  if (st) { /* the reference refuses (e.g. a runtime fault it reports): nothing to compare */
    hcq_status_free(st);
    goto done;
  }
  ptx_stats stats;
  st = ptu_run_program(p, got, ngot, NULL, 0, &stats);
  if (st) {
    fprintf(stderr, "case %lld (%s, opts %s): ptx run: %s\n%s\n", (long long)g_cases, t->name, opts,
            hcq_status_message(st), b.s);
    hcq_status_free(st);
    CHECK(!"ptx run");
    goto done;
  }
  g_runs++;
  g_thread_ins += (int64_t)stats.thread_instructions;
  bool half = k.dt == 0 || k.dt == 1;
  size_t bad = compare(ref, got, nref, wild || (!k.nred && !k.transcendental), half ? 4e-3 : 2e-5);
  if (bad) {
    fprintf(stderr, "case %lld (%s, opts %s, %s inputs): %zu mismatches\n%s\n", (long long)g_cases, t->name, opts,
            wild ? "full-range" : "benign", bad, b.s);
    if (getenv("HCQ_FUZZ_VERBOSE")) fprintf(stderr, "%s\n", p->source);
    CHECK(!"mismatch");
  }
done:
  cc_program_free(p);
  if (ref) cc_kbufs_free(ref, nref);
  if (got) cc_kbufs_free(got, ngot);
  uop_ctx_destroy(ctx);
  g_cases++;
}

int main(void) {
  fuzz_rng = fuzz_seed("ptx_fuzz", 0x50f1a5c0ffee1234ull);
  double budget = fuzz_seconds(3.0, NULL), t0 = fuzz_now_s();
  cc_target t90, t80;
  CHECK_OK(cc_target_get("ptx:sm_90", 0, &t90));
  CHECK_OK(cc_target_get("ptx:sm_80", 0, &t80));
  while (fuzz_now_s() - t0 < budget && testing_failures < 5) fuzz_case(fuzz_rnd(2) ? &t90 : &t80);
  printf("ptx_fuzz: %lld kernels, %lld run (%lld with full-range inputs, %lld with explicit opts), %.1fM "
         "thread-instructions, %.1f s\n",
         (long long)g_cases, (long long)g_runs, (long long)g_wild, (long long)g_opted, (double)g_thread_ins / 1e6,
         fuzz_now_s() - t0);
  CHECK(g_runs > 0);
  return testing_summary("ptx_fuzz");
}
