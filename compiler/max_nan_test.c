/* Float MAX is one function on every target (docs/FORMATS.md): IEEE 754-2019 maximum, a NaN if either operand is
 * NaN, -0 < +0, otherwise the larger operand; int MAX is the plain larger value.
 *
 * For each float dtype, every ordered pair of special values (NaN, -NaN, +-0, +-inf, +-1, +-2.5, the smallest
 * subnormal, the largest finite) goes through max(a,b), max(b,a), the min pattern -max(-a,-b), max(a,a) and
 * max(a,0.0); rows drawn from the same values through a REDUCE max with no opts and with UPCAST/UNROLL (c,
 * llvm-cpu; c also with the heuristic's opts) or GROUP (ptx, amdgpu), which change the order in which the row is
 * combined. Results must equal this file's own definition bit for bit (sign of zero included; a NaN matches any
 * NaN) on the interpreter, on c (no opts and UPCAST-vectorized; float32 MAX stays a MAX there, rendered by HCQ_FMAX
 * in each of its forms) and llvm-cpu natively, and on the ptx and amdgpu
 * graphs after decomposition (evaluated by the interpreter), whose sources are also compiled where the tools are
 * installed. int32 max keeps its plain meaning. */
#include "compiler/cc_internal.h"
#include "compiler/opt_test_util.h"
#include "base/testing.h"

enum { D_F16, D_BF16, D_F32, D_F64, NDT, NS = 14, NP = NS * NS, ROWS = 64, RLEN = 16 };
static const char *DT[NDT] = {"float16", "bfloat16", "float32", "float64"};
static const double TINY[NDT] = {0x1p-24, 0x1p-133, 0x1p-149, 0x1p-1074};
static const double BIG[NDT] = {65504, 0x1.fep127, 0x1.fffffep127, 0x1.fffffffffffffp1023};

static double special(int d, int i) {
  const double v[NS] = {NAN, -NAN, 0.0, -0.0, INFINITY, -INFINITY, 1, -1, 2.5, -2.5, TINY[d], -TINY[d], BIG[d], -BIG[d]};
  return v[i];
}

/* the definition, written out independently of the compiler's */
static double ref_max(double a, double b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == 0 && b == 0) return signbit(a) && signbit(b) ? -0.0 : 0.0;
  return a > b ? a : b;
}

static void put(int d, void *p, int64_t i, double v) {
  if (d == D_F16) ((uint16_t *)p)[i] = cc_f64_to_f16(v);
  else if (d == D_BF16) ((uint16_t *)p)[i] = cc_f64_to_bf16(v);
  else if (d == D_F32) ((float *)p)[i] = (float)v;
  else ((double *)p)[i] = v;
}

static double get(int d, const void *p, int64_t i) {
  if (d == D_F16) return cc_f16_to_f32(((const uint16_t *)p)[i]);
  if (d == D_BF16) return cc_bf16_to_f32(((const uint16_t *)p)[i]);
  if (d == D_F32) return ((const float *)p)[i];
  return ((const double *)p)[i];
}

static bool same(double got, double want) {
  if (isnan(want)) return isnan(got);
  return got == want && signbit(got) == signbit(want);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static int pick(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (int)(rng % NS);
}

/* Kernel text: slots 1, 2 = a, b (NP pairs); 0 = max(a,b), 3 = max(b,a), 4 = -max(-a,-b), 5 = max(a,a),
 * 8 = max(a, 0.0) (relu: the constant must not let the simplifier drop the NaN or the sign of zero);
 * 6 = row maxima of x (slot 7, ROWS x RLEN). */
static void kernel_text(int d, char *t, size_t n) {
  const char *s = DT[d];
  snprintf(t, n,
           "(kernel maxnan (let a (buf 1 %s %d)) (let b (buf 2 %s %d)) (let r (range 0 %d loop))"
           " (let x (load (index a r))) (let y (load (index b r)))"
           " (let s0 (store (index (buf 0 %s %d) r) (max x y) r))"
           " (let s3 (store (index (buf 3 %s %d) r) (max y x) r))"
           " (let s4 (store (index (buf 4 %s %d) r) (neg (max (neg x) (neg y))) r))"
           " (let s5 (store (index (buf 5 %s %d) r) (max x x) r))"
           " (let s8 (store (index (buf 8 %s %d) r) (max x (const 0.0 %s)) r))"
           " (let q (range 1 %d loop)) (let j (range 1002 %d reduce))"
           " (let s6 (store (index (buf 6 %s %d) q) (reduce max (load (index (buf 7 %s %d) (+ (* q %d) j))) j) q))"
           " (sink s0 s3 s4 s5 s8 s6))",
           s, NP, s, NP, NP, s, NP, s, NP, s, NP, s, NP, s, NP, s, ROWS, RLEN, s, ROWS, s, ROWS * RLEN, RLEN);
}

static double row_ref[ROWS];

static void fill(int d, cc_kbuf *b, size_t n) {
  uint64_t keep = rng;
  for (size_t i = 0; i < n; i++) {
    for (int64_t e = 0; e < b[i].nelems; e++) put(d, b[i].data, e, 0.75); /* outputs: a value no result has */
    if (b[i].slot == 1 || b[i].slot == 2)
      for (int p = 0; p < NP; p++) put(d, b[i].data, p, special(d, b[i].slot == 1 ? p / NS : p % NS));
    if (b[i].slot == 7) {
      rng = keep;
      for (int r = 0; r < ROWS; r++) {
        /* row r: specials at random, a third of the rows without NaN (so the zeros and infinities decide) */
        double m = -INFINITY;
        for (int j = 0; j < RLEN; j++) {
          int k = pick();
          if (r % 3 == 0 && k < 2) k += 2;
          double v = special(d, k);
          put(d, b[i].data, r * RLEN + j, v);
          m = ref_max(m, get(d, b[i].data, r * RLEN + j));
        }
        row_ref[r] = m;
      }
    }
  }
}

/* Mismatches of the outputs against the definition (printing the first few). */
static size_t check(int d, const cc_kbuf *b, size_t n, const char *where) {
  const void *in[9] = {0};
  for (size_t i = 0; i < n; i++) in[b[i].slot] = b[i].data;
  size_t bad = 0;
  for (int p = 0; p < NP; p++) {
    double x = get(d, in[1], p), y = get(d, in[2], p);
    double want[5] = {ref_max(x, y), ref_max(y, x), -ref_max(-x, -y), ref_max(x, x), ref_max(x, 0.0)};
    const int slot[5] = {0, 3, 4, 5, 8};
    for (int k = 0; k < 5; k++) {
      double got = get(d, in[slot[k]], p);
      if (same(got, want[k])) continue;
      if (bad++ < 4) fprintf(stderr, "%s %s: output %d of (%g, %g) = %g, want %g\n", where, DT[d], slot[k], x, y, got, want[k]);
    }
  }
  for (int r = 0; r < ROWS; r++) {
    double got = get(d, in[6], r);
    if (!same(got, row_ref[r]) && bad++ < 4) fprintf(stderr, "%s %s: row %d max = %g, want %g\n", where, DT[d], r, got, row_ref[r]);
  }
  return bad;
}

static hcq_status buffers(int d, const uop *k, cc_kbuf **b, size_t *n) {
  HCQ_TRY(cc_kernel_buffers(k, b, n));
  hcq_status st = cc_kbufs_alloc_fill(*b, *n, 1);
  if (!st) fill(d, *b, *n);
  return st;
}

/* The interpreter on graph g (the kernel itself, or a target's decomposed graph). */
static void on_interp(int d, const uop *k, const uop *g, const char *where) {
  cc_kbuf *b = NULL;
  size_t n = 0;
  hcq_status st = buffers(d, k, &b, &n);
  if (!st) st = otu_interp(g, b, n, NULL, 0);
  CHECK_OK(st);
  if (!st) CHECK_EQ_INT(check(d, b, n, where), 0);
  if (b) cc_kbufs_free(b, n);
}

/* Compiled with opts (NULL: none; "heuristic": the heuristic's) and run natively. */
static void on_native(uop_ctx *ctx, int d, const uop *k, const char *target, const char *opts) {
  cc_target t;
  CHECK_OK(cc_target_get(target, 1, &t));
  cc_opt *ov = NULL;
  size_t no = 0;
  bool heur = opts && !strcmp(opts, "heuristic");
  if (opts && !heur) CHECK_OK(cc_opts_parse(opts, &ov, &no));
  cc_options o = {.opts = ov, .nopts = no, .noopt = !opts};
  cc_program *p = NULL;
  tu_kernel tk = {0};
  cc_kbuf *b = NULL;
  size_t n = 0;
  hcq_status st = tu_build_sink(ctx, k, &t, &o, &p, &tk);
  if (!st) st = buffers(d, k, &b, &n);
  if (!st && hcq_program_nbufs(&p->desc) + 1 > 10)
    st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "test: too many arguments");
  CHECK_OK(st);
  if (!st && d == D_F32 && !strcmp(target, "c")) CHECK(strstr(p->source, "HCQ_FMAX") != NULL); /* not decomposed */
  if (!st) {
    uintptr_t args[10];
    for (size_t i = 0; i < hcq_program_nbufs(&p->desc); i++)
      for (size_t j = 0; j < n; j++)
        if (b[j].slot == p->desc.params[i].slot) args[i] = (uintptr_t)b[j].data;
    args[hcq_program_nbufs(&p->desc)] = 0; /* core_id */
    tu_call(&tk, args, (int)hcq_program_nbufs(&p->desc) + 1);
    char where[96];
    snprintf(where, sizeof where, "%s [%s]", target, opts ? opts : "");
    CHECK_EQ_INT(check(d, b, n, where), 0);
  }
  tu_unload(&tk);
  if (b) cc_kbufs_free(b, n);
  cc_program_free(p);
  free(ov);
}

/* A GPU target: the decomposed graph in the interpreter, the source has no max instruction for floats, and it
 * compiles (to a binary where the tools are installed) with no opts and with GROUP on the reduce. */
static void on_gpu(uop_ctx *ctx, int d, const uop *k, const char *target, bool tools) {
  cc_target t;
  CHECK_OK(cc_target_get(target, 0, &t));
  const uop *prep = NULL, *g = NULL;
  CHECK_OK(otu_prep_sink(ctx, k, &t, &prep));
  cc_pass_ctx pc = {.ctx = ctx, .target = &t};
  if (prep) CHECK_OK(cc_pass_decompose(&pc, prep, &g));
  if (g) on_interp(d, k, g, target);
  const char *optv[2] = {NULL, "GROUP:0:8"};
  for (int i = 0; i < 2; i++) {
    cc_opt *ov = NULL;
    size_t no = 0;
    if (optv[i]) CHECK_OK(cc_opts_parse(optv[i], &ov, &no));
    cc_options o = {.opts = ov, .nopts = no, .noopt = !optv[i]};
    cc_program *p = NULL;
    hcq_status st = cc_compile_source(ctx, k, &t, &o, &p);
    if (!st && tools) st = cc_compile_binary(&t, p);
    if (st) fprintf(stderr, "%s %s [%s]: %s\n", target, DT[d], optv[i] ? optv[i] : "", hcq_status_message(st));
    CHECK_OK(st);
    if (p && t.kind == CC_TARGET_PTX) CHECK(strstr(p->source, "max.f") == NULL && strstr(p->source, "max.NaN") == NULL);
    if (p && t.kind == CC_TARGET_AMDGPU) CHECK(strstr(p->source, "llvm.maxnum") == NULL);
    cc_program_free(p);
    free(ov);
  }
}

int main(void) {
  char dir[] = "/tmp/hcq-maxnan-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("XDG_CACHE_HOME", dir, 1);
  bool cc = tu_have(cc_toolchain_cc()), clang = tu_have("clang-19"), lld = tu_have("ld.lld-19");
  bool ptxas = tu_have("ptxas") || tu_have("/usr/local/cuda/bin/ptxas");
  if (!cc) fprintf(stderr, "*** max_nan: no C compiler: native runs SKIPPED ***\n");
  if (!clang) fprintf(stderr, "*** max_nan: no clang-19: llvm-cpu run and amdgpu binaries SKIPPED ***\n");
  for (int d = 0; d < NDT; d++) {
    uop_ctx *ctx = NULL;
    CHECK_OK(uop_ctx_create(&ctx));
    char text[2400];
    kernel_text(d, text, sizeof text);
    const uop *k = NULL;
    CHECK_OK(cc_kernel_parse(ctx, text, strlen(text), "<max_nan>", &k));
    if (k) {
      on_interp(d, k, k, "interp");
      /* c renders float32 MAX itself (render_c.c HCQ_FMAX): each of its forms. Vectors of 4, 8 and 16 lanes (x86
       * with AVX-512DQ: VRANGEPS, with VL below 16); on x86 also without AVX-512DQ (the selects) and with clang's
       * builtins (the cross legs' HCQ_CC is a cross compiler: not replaced there). */
      static const struct {
        const char *opts;
        bool f32_only; /* the lane counts only float32 MAX (HCQ_FMAX) has a form of its own for */
        bool variant;  /* also without AVX-512DQ and with clang-19 */
      } COPTS[] = {{NULL, false, false},        {"UPCAST:0:4", false, true},
                   {"UPCAST:1:4,UNROLL:0:4", false, false}, {"UPCAST:1:8", true, true},
                   {"UPCAST:1:16,UNROLL:0:16", true, true}, {"heuristic", false, false}};
      static const char *const ENV[][2] = {{NULL, NULL}, {"HCQ_CC_TUNE", "-march=native -mno-avx512dq"},
                                           {"HCQ_CC", "clang-19"}};
      bool x86 = strcmp(cc_host_arch(), "x86_64") == 0;
      for (int e = 0; cc && e < 3; e++) {
        if (e && (d != D_F32 || !x86 || (e == 2 && !clang))) continue; /* other dtypes: decomposed */
        tu_env env = {0};
        if (ENV[e][0]) tu_env_set(&env, ENV[e][0], ENV[e][1]);
        for (size_t i = 0; i < sizeof COPTS / sizeof *COPTS; i++)
          if (e ? COPTS[i].variant : !COPTS[i].f32_only || d == D_F32) on_native(ctx, d, k, "c", COPTS[i].opts);
        tu_env_restore(&env);
      }
      if (clang) {
        on_native(ctx, d, k, "llvm-cpu", NULL);
        on_native(ctx, d, k, "llvm-cpu", "UPCAST:1:4,UNROLL:0:4");
        if (x86 && d == D_BF16) { /* no AVX512-BF16: a bfloat register must not need __truncsfbf2 (render_llvm.c) */
          tu_env env = {0};
          tu_env_set(&env, "HCQ_CC_TUNE", "-march=x86-64-v2");
          on_native(ctx, d, k, "llvm-cpu", NULL);
          tu_env_restore(&env);
        }
      }
      on_gpu(ctx, d, k, "ptx:sm_80", ptxas);
      on_gpu(ctx, d, k, "amdgpu:gfx1100", clang && lld);
    }
    uop_ctx_destroy(ctx);
  }
  /* int32: the plain larger value (INT_MIN, -1, 0, 1, INT_MAX in every order) */
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const char *it = "(kernel imax (let a (buf 1 int32 25)) (let b (buf 2 int32 25)) (let r (range 0 25 loop))"
                   " (sink (store (index (buf 0 int32 25) r) (max (load (index a r)) (load (index b r))) r)))";
  const uop *ik = NULL;
  CHECK_OK(cc_kernel_parse(ctx, it, strlen(it), "<imax>", &ik));
  const int32_t iv[5] = {INT32_MIN, -1, 0, 1, INT32_MAX};
  int32_t ia[25], ib[25], io[25];
  for (int i = 0; i < 25; i++) ia[i] = iv[i / 5], ib[i] = iv[i % 5], io[i] = 7;
  if (ik) {
    CHECK_OK(cc_interp_run(ik, (void *[]){io, ia, ib}, (size_t[]){100, 100, 100}, 3, NULL, 0));
    int bad = 0;
    for (int i = 0; i < 25; i++) bad += io[i] != (ia[i] > ib[i] ? ia[i] : ib[i]);
    CHECK_EQ_INT(bad, 0);
  }
  uop_ctx_destroy(ctx);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
  return testing_summary("max_nan");
}
