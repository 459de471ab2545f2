/* Differential fuzzer of the PTX path: random kernels (emulator_tests/fuzz_kernel_gen.h, profile KG_PTX:
 * elementwise over 1-2 loop dims, or a reduce add/max over one more; every scalar dtype the ptx renderer keeps in
 * registers: float16, bfloat16, float32, float64, int8, uint8, int16, uint16, int32, uint32, int64, and bool as a
 * dtype to cast through; + - * max neg, comparisons into where, mulacc, casts through another dtype, / recip
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
#include "emulator_tests/fuzz_kernel_gen.h"

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
      if (!fl) ok = tu_elem_match(ref[i].data, got[i].data, ref[i].dtype, e, 0, 0);
      else if (exact) ok = (isnan(a) && isnan(g)) || (a == g && signbit(a) == signbit(g));
      else ok = cc_float_match(g, a, rel, 1e-6 + rel * norm);
      char sg[40], sa[40];
      if (!ok && bad++ < 3)
        fprintf(stderr, "  buffer %zu element %lld: got %s, want %s\n", i, (long long)e,
                tu_elem_str(sg, sizeof sg, got[i].data, got[i].dtype, e), tu_elem_str(sa, sizeof sa, ref[i].data, ref[i].dtype, e));
    }
  }
  return bad;
}

static int64_t g_cases, g_runs, g_wild, g_opted, g_thread_ins;

static void fuzz_case(const cc_target *t) {
  static fuzz_text b;
  b.n = 0;
  kg_spec k;
  kg_gen(&b, &k, &KG_PTX);
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
