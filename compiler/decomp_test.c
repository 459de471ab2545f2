/* Accuracy of the exp2/log2/sin decompositions (compiler/decomp.c) over the whole float range, against libm: double
 * functions for 16-bit and float32 inputs, long double ones for float64 (this test may use libm; the kernels may
 * not). Functions: exp2, log2, sin, and "cos" = the kernel pattern sin(x + pi/2) (float32/float64). One kernel per
 * dtype (float16, bfloat16, float32, float64) computing all of them runs
 *   (a) compiled for the c target (--noopt) and called natively,
 *   (b) compiled for c with the heuristic's opts (vectorized: UPCAST; float32 and float64),
 *   (c) compiled for llvm-cpu (clang-19; SKIPPED without it),
 *   (d) as the graph the ptx targets get after the decomposition pass, in the reference interpreter: the rewrite
 *       the GPU targets use, checked without a GPU (float64 is also what amdgpu gets).
 * The GPU kernels must also use no hardware sin, and assemble with ptxas (sm_80, sm_90) and link for amdgpu
 * (SKIPPED without the tools).
 * Every dtype runs on every mode (bfloat16 too: c and llvm-cpu round it by integer RNE, subnormals kept).
 * Inputs: special values (+-0, +-inf, nan, the subnormal and normal limits, the largest finite), random bit
 * patterns (every exponent, subnormals, inf and nan), and per function the hard regions: floats nearest to
 * multiples of pi/2 at every magnitude and the closest approaches known (sin), near integers and the under- and
 * overflow edges (exp2), near 1, near powers of two and subnormals (log2).
 * Error: |got - ref| in ulps of the format at ref (the subnormal ulp below the normal range); nan must give nan,
 * inf must give the same inf, sin(+-0) = +-0 and |sin| <= 1 always. The bounds are the ones decomp.c documents.
 * Fixed seed (HCQ_FUZZ_SEED overrides); after a first full round, fresh inputs while HCQ_FUZZ_SECONDS (default 3)
 * lasts. A failure prints the seed, the input bits and both results. */
#include <float.h>
#include <math.h>
#include <time.h>

#include "compiler/cc_internal.h"
#include "compiler/cc_test_util.h"
#include "compiler/interp.h"
#include "base/testing.h"

#define N 4096
#define PIO2L 0x1.921fb54442d1846ap0L

enum { F_EXP2, F_LOG2, F_SIN, F_COS, NFN }; /* cos: the kernel pattern sin(x + pi/2) */
enum { D_F16, D_BF16, D_F32, D_F64, NDT };
enum { M_C, M_CVEC, M_LLVM, M_INTERP, NMODE };
static const char *FN_NAME[NFN] = {"exp2", "log2", "sin", "cos"};
static const char *DT_NAME[NDT] = {"float16", "bfloat16", "float32", "float64"};
static const char *MODE_NAME[NMODE] = {"c", "c(heuristic)", "llvm-cpu", "interp(ptx graph)"};
/* documented bounds (decomp.c header), in ulps; float16 results are float32 results rounded once more */
static const double BOUND[NFN][NDT] = {{1, 1, 1.5, 1.5}, {1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}};

typedef struct fmt {
  int p, emin, bytes;
} fmt;
static const fmt FMT[NDT] = {{11, -14, 2}, {8, -126, 2}, {24, -126, 4}, {53, -1022, 8}};

static uint64_t rng_state;
static uint64_t rnd(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static long double urand(void) { return (long double)(rnd() >> 11) * 0x1p-53L; } /* [0, 1) */

/* a long double value rounded to dtype d (16-bit ones through float32: exact for the values generated here) */
static long double round_to(int d, long double v) {
  if (d == D_F64) return (double)v;
  if (d == D_F32) return (float)v;
  if (d == D_BF16) return cc_bf16_to_f32(cc_f32_to_bf16((float)v));
  return cc_f16_to_f32(cc_f32_to_f16((float)v));
}
static long double from_bits(int d, uint64_t u) {
  if (d == D_F16) return cc_f16_to_f32((uint16_t)u);
  if (d == D_BF16) return cc_bf16_to_f32((uint16_t)u);
  if (d == D_F32) {
    float f;
    uint32_t w = (uint32_t)u;
    memcpy(&f, &w, 4);
    return f;
  }
  double f;
  memcpy(&f, &u, 8);
  return f;
}
static uint64_t to_bits(int d, long double v) {
  if (d == D_F16) return cc_f32_to_f16((float)v);
  if (d == D_BF16) return cc_f32_to_bf16((float)v);
  if (d == D_F32) {
    float f = (float)v;
    uint32_t w;
    memcpy(&w, &f, 4);
    return w;
  }
  double f = (double)v;
  uint64_t w;
  memcpy(&w, &f, 8);
  return w;
}
/* the value k representable values above v (below for negative k), through the ordered bit patterns; a step
 * onto inf or nan keeps v */
static long double step(int d, long double v, int k) {
  uint64_t sign = (uint64_t)1 << (8 * FMT[d].bytes - 1), u = to_bits(d, v);
  int64_t ord = u & sign ? -(int64_t)(u & ~sign) : (int64_t)u;
  ord += k;
  long double r = from_bits(d, ord < 0 ? sign | (uint64_t)-ord : (uint64_t)ord);
  return isfinite(r) ? r : v;
}
static long double maxval(int d) {
  return d == D_F16 ? 65504.0L : d == D_BF16 ? 0x1.fep127L : d == D_F32 ? FLT_MAX : DBL_MAX;
}

/* Closest approaches to multiples of pi/2: for float64 Muller, "Elementary Functions" (3rd ed.), table 11.1
 * (6381956970095103 * 2^797, |x mod pi/2| ~ 2^-60.9), and pi/2 multiples rounded; for float32 the closest found by
 * an exhaustive scan of all floats >= 2 with glibc's double sin and cos (|x mod pi/2| from 2^-29.2 to 2^-26). */
static const long double HARD[2][8] = {
    {0x1.f37c8ap+95L, 0x1.47d0fep+34L, 0x1.f9cbe2p+7L, 0x1.32ede2p+85L, 0x1.628d4cp+40L, 0x1.13093p+76L,
     0x1.b08c4ap+111L, 0x1.2d97c8p+2L},
    {0x16ac5b262ca1ffp797L, 0x1.921fb54442d18p+0L, 0x1.921fb54442d18p+1L, 0x1.921fb54442d18p+2L,
     0x1.921fb54442d18p+1023L, 0x1.921fb54442d18p+1022L, 0x1.921fb54442d18p+52L, 0x1.921fb54442d18p+53L}};

static long double gen(int fn, int d, int i) {
  int emax = d == D_F16 ? 15 : d == D_F64 ? 1023 : 127, p = FMT[d].p;
  static const long double SPECIAL[] = {0.0L, -0.0L, INFINITY, -INFINITY, NAN, 1.0L, -1.0L, 0.5L, 2.0L, -2.0L};
  int nspecial = (int)(sizeof SPECIAL / sizeof SPECIAL[0]);
  switch (i % 8) {
  case 0:
  case 1: return from_bits(d, rnd() & (d == D_F64 ? ~0ull : d == D_F32 ? 0xffffffffull : 0xffffull));
  case 2: {
    int j = (int)(rnd() % (uint64_t)(nspecial + 8));
    if (j < nspecial) return SPECIAL[j];
    long double lim[8] = {ldexpl(1, FMT[d].emin - p + 1), ldexpl(1, FMT[d].emin) - ldexpl(1, FMT[d].emin - p + 1),
                          ldexpl(1, FMT[d].emin), maxval(d), 0, 0, 0, 0};
    lim[4] = -lim[0], lim[5] = -lim[1], lim[6] = -lim[2], lim[7] = -lim[3];
    return lim[j - nspecial];
  }
  default: break;
  }
  int k = (int)(rnd() % 5) - 2;
  if (fn == F_SIN || fn == F_COS) {
    if (i % 8 == 3) { /* nearest to a multiple of pi/2, magnitude 2^0 .. 2^62 (k exact in long double) */
      int e = (int)(rnd() % (uint64_t)((emax < 62 ? emax : 62) + 1));
      long double kk = rintl(ldexpl(1 + urand(), e) / PIO2L);
      long double v = round_to(d, kk * PIO2L);
      if (isinf(v)) v = maxval(d);
      return step(d, rnd() & 1 ? v : -v, k);
    }
    if (i % 8 == 4) { /* the known hardest, and their neighbours */
      long double v = round_to(d, HARD[d == D_F64][rnd() % 8]);
      if (isinf(v)) v = 1.5L; /* float16 */
      return step(d, rnd() & 1 ? v : -v, k);
    }
    if (i % 8 == 5) return (urand() * 16 - 8); /* the first few periods */
    return from_bits(d, to_bits(d, ldexpl(1 + urand(), (int)(rnd() % (uint64_t)(emax + 1)))) ^
                            (rnd() & 1 ? (uint64_t)1 << (8 * FMT[d].bytes - 1) : 0)); /* large, every exponent */
  }
  if (fn == F_EXP2) {
    long double lo = FMT[d].emin - p - 1, hi = emax + 2;
    if (i % 8 == 3 || i % 8 == 4) return round_to(d, lo + urand() * (hi - lo));
    if (i % 8 == 5) return step(d, round_to(d, rintl(lo + urand() * (hi - lo)) + (rnd() & 1 ? 0.5L : 0)), k);
    if (i % 8 == 6) return round_to(d, ldexpl(urand() - 0.5L, -(int)(rnd() % (uint64_t)p))); /* near 0 */
    return step(d, rnd() & 1 ? lo + 1 : emax + 1, k * 3); /* the edges */
  }
  /* log2 */
  if (i % 8 == 3) return from_bits(d, rnd() & (d == D_F64 ? 0x7fffffffffffffffull : d == D_F32 ? 0x7fffffff : 0x7fff));
  if (i % 8 == 4) return step(d, 1.0L, (int)(rnd() % 2048) - 1024);
  if (i % 8 == 5) return step(d, ldexpl(1, FMT[d].emin - p + 1 + (int)(rnd() % (uint64_t)(emax - FMT[d].emin + p))), k);
  if (i % 8 == 6) return from_bits(d, rnd() % ((uint64_t)1 << (p - 1))); /* subnormal */
  return round_to(d, 0.5L + urand());
}

static long double ref_of(int fn, int d, long double x) {
  if (fn == F_COS) fn = F_SIN, x = round_to(d, x + round_to(d, PIO2L)); /* the kernel's rounded x + pi/2 */
  if (d == D_F64) return fn == F_EXP2 ? exp2l(x) : fn == F_LOG2 ? log2l(x) : sinl(x);
  double xd = (double)x;
  return fn == F_EXP2 ? exp2(xd) : fn == F_LOG2 ? log2(xd) : sin(xd);
}

/* error of got against the exact-ish ref, in ulps of format d; 1e30 for a wrong special */
static double ulp_err(int d, long double got, long double ref) {
  long double rt = round_to(d, ref);
  if (isnan(ref)) return isnan(got) ? 0 : 1e30;
  if (isnan(got)) return 1e30;
  if (isinf(rt) || isinf(got)) return got == rt ? 0 : 1e30;
  if (ref == 0 && got == 0 && !signbit(got) != !signbit(ref)) return 1e30;
  int e = ref == 0 ? FMT[d].emin : ilogbl(ref);
  if (e < FMT[d].emin) e = FMT[d].emin;
  return (double)(fabsl(got - ref) / ldexpl(1, e - FMT[d].p + 1));
}

/* One kernel per dtype and mode computes every function: slot 2j holds function j's output, 2j+1 its input. */
typedef struct runner {
  int d, mode, nfn;
  tu_kernel k;
  cc_program *prog;
  const uop *graph; /* M_INTERP: the decomposed graph */
  double worst[NFN];
  long double worst_x[NFN], worst_got[NFN];
  long samples;
} runner;

static uint8_t inbuf[NFN][N * 8], outbuf[NFN][N * 8];
static long double xs[NFN][N];

static bool setup(uop_ctx *ctx, runner *r) {
  char text[2000];
  const char *dt = DT_NAME[r->d];
  int len = snprintf(text, sizeof text, "(kernel k (let r (range 0 %d loop))", N);
  r->nfn = r->d < D_F32 ? F_COS : NFN; /* a 16-bit x + pi/2 would round twice (through float32) */
  for (int j = 0; j < r->nfn; j++) {
    char arg[128];
    snprintf(arg, sizeof arg, "(load (index (buf %d %s %d) r))", 2 * j + 1, dt, N);
    if (j == F_COS) snprintf(arg, sizeof arg, "(+ (load (index (buf %d %s %d) r)) (const %.17Lg %s))", 2 * j + 1, dt, N,
                             round_to(r->d, PIO2L), dt);
    len += snprintf(text + len, sizeof text - len, " (let s%d (store (index (buf %d %s %d) r) (%s %s) r))", j, 2 * j,
                    dt, N, j == F_COS ? "sin" : FN_NAME[j], arg);
  }
  len += snprintf(text + len, sizeof text - len, " (sink");
  for (int j = 0; j < r->nfn; j++) len += snprintf(text + len, sizeof text - len, " s%d", j);
  snprintf(text + len, sizeof text - len, "))");
  cc_target t;
  if (r->mode == M_INTERP) {
    const uop *sink = NULL;
    CHECK_OK(cc_target_get("ptx:sm_80", 0, &t));
    CHECK_OK(cc_kernel_parse(ctx, text, strlen(text), "<test>", &sink));
    cc_pass_ctx pc = {.ctx = ctx, .target = &t};
    if (sink) CHECK_OK(cc_pass_decompose(&pc, sink, &r->graph));
    return r->graph != NULL;
  }
  CHECK_OK(cc_target_get(r->mode == M_LLVM ? "llvm-cpu" : "c", 1, &t));
  hcq_status st;
  if (r->mode == M_CVEC) { /* the heuristic's opts: vectorized (UPCAST) code */
    const uop *sink = NULL;
    st = cc_kernel_parse(ctx, text, strlen(text), "<test>", &sink);
    if (!st) st = cc_compile_source(ctx, sink, &t, &(cc_options){0}, &r->prog);
    if (!st) st = cc_compile_binary(&t, r->prog);
    if (!st) st = tu_load(r->prog->binary, r->prog->binary_size_B, r->prog->symbol, &r->k);
  } else {
    st = tu_build(ctx, text, &t, &r->prog, &r->k);
  }
  if (st) {
    fprintf(stderr, "%s on %s: %s\n", dt, MODE_NAME[r->mode], hcq_status_message(st));
    hcq_status_free(st);
    CHECK(!"build");
    if (r->prog) cc_program_free(r->prog);
    return false;
  }
  for (int j = 0; j < F_COS; j++) CHECK(strstr(r->prog->source, FN_NAME[j]) == NULL); /* no call: decomposed */
  /* the heuristic's float32 code runs exp2's compares, selects and bit tricks as vectors (vectorize.c) */
  if (r->mode == M_CVEC && r->d == D_F32) CHECK(strstr(r->prog->source, "unsigned_int") != NULL);
  return true;
}

static void round_once(runner *r, uint64_t seed, int round) {
  int bytes = FMT[r->d].bytes;
  for (int j = 0; j < r->nfn; j++) {
    rng_state = seed ^ ((uint64_t)round << 32) ^ ((uint64_t)(j * 16 + r->d) << 8);
    for (int i = 0; i < N; i++) {
      uint64_t u = to_bits(r->d, gen(j, r->d, i));
      memcpy(inbuf[j] + (size_t)i * bytes, &u, bytes); /* little-endian low bytes */
      xs[j][i] = from_bits(r->d, u);
    }
  }
  memset(outbuf, 0xa5, sizeof outbuf);
  void *bufs[2 * NFN];
  size_t sizes[2 * NFN];
  for (int j = 0; j < r->nfn; j++) {
    bufs[2 * j] = outbuf[j], bufs[2 * j + 1] = inbuf[j];
    sizes[2 * j] = sizes[2 * j + 1] = (size_t)N * bytes;
  }
  if (r->mode == M_INTERP) {
    CHECK_OK(cc_interp_run(r->graph, bufs, sizes, 2 * r->nfn, NULL, 0));
  } else {
    uintptr_t args[2 * NFN + 1] = {0};
    for (int j = 0; j < 2 * r->nfn; j++) args[j] = (uintptr_t)bufs[j];
    tu_call(&r->k, args, 2 * r->nfn + 1); /* core_id 0 */
  }
  for (int j = 0; j < r->nfn; j++) {
    int bad = 0;
    for (int i = 0; i < N; i++) {
      uint64_t u = 0;
      memcpy(&u, outbuf[j] + (size_t)i * bytes, bytes);
      long double got = from_bits(r->d, u), ref = ref_of(j, r->d, xs[j][i]);
      double e = ulp_err(r->d, got, ref);
      bool out_of_range = j >= F_SIN && fabsl(got) > 1;
      if (e > r->worst[j]) r->worst[j] = e, r->worst_x[j] = xs[j][i], r->worst_got[j] = got;
      if ((e > BOUND[j][r->d] || out_of_range) && bad++ < 5)
        fprintf(stderr, "FAIL %s %s (%s) seed %" PRIu64 " round %d: x = %.21Lg (bits 0x%" PRIx64 ") got %.21Lg"
                " want %.21Lg (%.3g ulp)\n", FN_NAME[j], DT_NAME[r->d], MODE_NAME[r->mode], seed, round, xs[j][i],
                to_bits(r->d, xs[j][i]), got, ref, e);
    }
    CHECK(bad == 0);
  }
  r->samples += N;
}

/* The GPU targets get the same rewrite: one kernel using all three for float32 and float64 must assemble with
 * ptxas (sm_80, sm_90) and link for amdgpu (which decomposes sin, and exp2/log2 for float64 only; llc's float32
 * exp2/log2 are exact enough). SKIPPED without the tools. */
static void gpu_toolchains(uop_ctx *ctx) {
  static const char *TARGETS[] = {"ptx:sm_80", "ptx:sm_90", "amdgpu:gfx90a"};
  char ptxas[256];
  hcq_status pst = cc_ptx_ptxas(ptxas, sizeof ptxas);
  bool have_ptx = !pst, have_amd = tu_have("clang-19") && tu_have("ld.lld-19");
  hcq_status_free(pst);
  int built = 0;
  for (int ti = 0; ti < 3; ti++) {
    bool ptx = ti < 2;
    if (ptx ? !have_ptx : !have_amd) continue;
    const char *text = "(kernel k (let r (range 0 64 loop)) (let v (load (index (buf 1 float32 64) r)))"
                       " (let w (load (index (buf 3 float64 64) r)))"
                       " (sink (store (index (buf 0 float32 64) r) (+ (sin v) (+ (exp2 v) (log2 v))) r)"
                       " (store (index (buf 2 float64 64) r) (+ (sin w) (+ (exp2 w) (log2 w))) r)))";
    const uop *sink = NULL;
    cc_target t;
    cc_program *p = NULL;
    CHECK_OK(cc_target_get(TARGETS[ti], 0, &t));
    CHECK_OK(cc_kernel_parse(ctx, text, strlen(text), "<test>", &sink));
    hcq_status st = cc_compile_source(ctx, sink, &t, &(cc_options){.noopt = true}, &p);
    if (!st) { /* sin decomposed for both dtypes: no hardware sin (v_sin_f32, sin.approx), inaccurate for large x */
      CHECK(strstr(p->source, ptx ? "sin.approx" : "llvm.sin") == NULL);
      st = cc_compile_binary(&t, p);
    }
    if (st) fprintf(stderr, "%s: %s\n", TARGETS[ti], hcq_status_message(st));
    CHECK(st == HCQ_OK);
    hcq_status_free(st);
    if (p && p->binary_size_B >= 4) {
      CHECK(memcmp(p->binary, "\177ELF", 4) == 0);
      built++;
    }
    cc_program_free(p);
  }
  if (!have_ptx) printf("*** SKIPPED: ptxas check (no ptxas: CUDA toolkit) ***\n");
  if (!have_amd) printf("*** SKIPPED: amdgpu link check (need clang-19, ld.lld-19) ***\n");
  printf("gpu targets: %d kernels assembled/linked\n", built);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void) {
  char dir[] = "/tmp/hcq-decomp-test-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("XDG_CACHE_HOME", dir, 1);
  const char *env = getenv("HCQ_FUZZ_SECONDS"), *senv = getenv("HCQ_FUZZ_SEED");
  double budget_s = env && *env ? atof(env) : 3.0;
  uint64_t seed = senv && *senv ? strtoull(senv, NULL, 0) : 20261201;
  bool have_cc = tu_have(cc_toolchain_cc()), have_clang = tu_have("clang-19");
  if (!have_clang) printf("*** SKIPPED: llvm-cpu part: clang-19 not found (Debian package clang-19) ***\n");
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  runner rs[NDT * NMODE];
  int nr = 0;
  double t0 = now_s();
  for (int mode = 0; mode < NMODE; mode++)
    for (int d = 0; d < NDT; d++) {
      if (((mode == M_C || mode == M_CVEC) && !have_cc) || (mode == M_LLVM && !have_clang)) continue;
      if (mode == M_CVEC && d < D_F32) continue; /* the same float32 code as (a) */
      runner *r = &rs[nr];
      memset(r, 0, sizeof *r);
      r->d = d, r->mode = mode;
      if (setup(ctx, r)) nr++;
    }
  gpu_toolchains(ctx);
  double t_build = now_s() - t0;
  int rounds = 0;
  do {
    for (int i = 0; i < nr; i++) round_once(&rs[i], seed, rounds);
    rounds++;
  } while (now_s() - t0 < budget_s);
  for (int i = 0; i < nr; i++) {
    runner *r = &rs[i];
    for (int j = 0; j < r->nfn; j++)
      printf("%-4s %-7s %-17s: max %.3f ulp (bound %g) at x=%.17Lg (got %.17Lg) over %ld inputs\n", FN_NAME[j],
             DT_NAME[r->d], MODE_NAME[r->mode], r->worst[j], BOUND[j][r->d], r->worst_x[j], r->worst_got[j],
             r->samples);
    if (r->prog) {
      tu_unload(&r->k);
      cc_program_free(r->prog);
    }
  }
  printf("seed %" PRIu64 ", %d rounds, build %.2f s, total %.2f s\n", seed, rounds, t_build, now_s() - t0);
  uop_ctx_destroy(ctx);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
  return testing_summary("decomp");
}
