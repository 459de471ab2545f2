/* The RDNA3 interpreter's VOP3P dot products (emulator_tests/rdna3_dot.c) against independent C:
 *  - each form and modifier set is assembled by llvm-mc-19 (-mcpu=gfx1100), decoded and printed back as the source
 *    text (llvm-objdump-19's syntax), then run on 256 lanes of edge inputs: bytes/nibbles 0x80, 0x7f, 0xff, 0, mixed
 *    signs, accumulators at the int32/uint32 limits (overflow with and without clamp); f16/bf16 halves with
 *    +-inf, NaN, denormals, -0, max; f32 accumulators that are denormal (v_dot2_f32_f16 flushes them), and a
 *    cancellation that tells the ISA's step-by-step rounding from a fused sum;
 *  - modifiers the ISA leaves open are refused with an error naming the instruction, not run;
 *  - v_fma_mix* (the other VOP3P family LLVM emits) prints as llvm-objdump-19 does;
 *  - the pipeline: uint8/int8 multiply-add reduces compiled for amdgpu:gfx1100, whose code (checked with
 *    llvm-objdump-19, decoder text included) contains v_dot4, run on HCQ_MOCK=amd (runtime, PM4, the mock's
 *    command processor) and compared with the reference interpreter; one of 16 products, which LLVM 19 could not
 *    compile before -slp-vectorize-hor=false (compiler/toolchain_llvm.c). */
#include <math.h>

#include "compiler/interp.h"
#include "emulator_tests/amd_rt_test_util.h"
#include "emulator_tests/rdna3_test_util.h"

#define N 256

static uint32_t g_in[N][4], g_out[N];
static uint64_t g_rng = 0xd075eed;
static uint32_t rnd32(void) { return r3t_rnd32(&g_rng); }

/* Assemble body between loads of v1..v3 and the store of v4 (rdna3_test_util.h); check that the instruction under
 * test prints as `text`. Returns false (with the message in err, if given) when the run fails. */
static bool run_asm(const char *body, const char *text, uint32_t denorm_mode, char *err, size_t err_n) {
  return r3t_run_lanes(body, denorm_mode, g_in, g_out, N, text, err, err_n);
}

static int g_bad;
static void expect(bool ok, const char *what, int i, uint32_t got, uint32_t want) {
  r3t_expect(ok, what, i, g_in[i], got, want, &g_bad);
}

/* ---- integer dots ---- */

static uint32_t any_packed(void) {
  static const uint8_t edge[] = {0x80, 0x7f, 0xff, 0x00, 0x01, 0x81, 0xfe, 0x88, 0x77, 0x08, 0xf0};
  uint32_t x = 0;
  switch (rnd32() % 4) {
    case 0: return rnd32();
    case 1: for (int k = 0; k < 4; k++) x |= (uint32_t)edge[rnd32() % sizeof edge] << (8 * k); return x;
    case 2: return 0x80808080u ^ (rnd32() & 0x7f7f7f7fu & -(rnd32() & 1));
    default: return (rnd32() & 1) ? 0xffffffffu : 0x7f7f7f7fu;
  }
}
static uint32_t any_acc(void) {
  static const uint32_t edge[] = {0, 1, 0x7fffffffu, 0x80000000u, 0xffffffffu, 0x7fff0000u, 0x80010000u,
                                  0xfffe0000u, 0x7ffffff0u, 0x80000010u};
  return rnd32() % 2 ? edge[rnd32() % (sizeof edge / sizeof *edge)] : rnd32();
}

/* Independent reference: each field converted by the C type of its width and signedness. */
static uint32_t ref_int(uint32_t a, uint32_t b, uint32_t c, int bits, bool iu, bool sa, bool sb, bool clamp) {
  long long sum = iu ? (long long)(int32_t)c : (long long)c;
  for (int i = 0; i < 32 / bits; i++) {
    unsigned fa = (a >> (bits * i)) & ((1u << bits) - 1), fb_ = (b >> (bits * i)) & ((1u << bits) - 1);
    long long xa = bits == 8 ? (sa ? (int8_t)fa : (uint8_t)fa) : (sa ? (long long)((int8_t)(fa << 4) >> 4) : fa);
    long long xb = bits == 8 ? (sb ? (int8_t)fb_ : (uint8_t)fb_) : (sb ? (long long)((int8_t)(fb_ << 4) >> 4) : fb_);
    sum += xa * xb;
  }
  if (clamp && iu) return sum > INT32_MAX ? (uint32_t)INT32_MAX : sum < INT32_MIN ? 0x80000000u : (uint32_t)sum;
  if (clamp) return sum > (long long)UINT32_MAX ? UINT32_MAX : sum < 0 ? 0 : (uint32_t)sum;
  return (uint32_t)sum;
}

static void test_int(void) {
  static const struct { const char *text; int bits; bool iu, sa, sb, clamp; } cs[] = {
      {"v_dot4_i32_iu8 v4, v1, v2, v3", 8, true, false, false, false},
      {"v_dot4_i32_iu8 v4, v1, v2, v3 neg_lo:[1,1,0]", 8, true, true, true, false},
      {"v_dot4_i32_iu8 v4, v1, v2, v3 neg_lo:[1,0,0]", 8, true, true, false, false},
      {"v_dot4_i32_iu8 v4, v1, v2, v3 neg_lo:[0,1,0]", 8, true, false, true, false},
      {"v_dot4_i32_iu8 v4, v1, v2, v3 neg_lo:[1,1,0] clamp", 8, true, true, true, true},
      {"v_dot4_i32_iu8 v4, v1, v2, v3 clamp", 8, true, false, false, true},
      {"v_dot4_u32_u8 v4, v1, v2, v3", 8, false, false, false, false},
      {"v_dot4_u32_u8 v4, v1, v2, v3 clamp", 8, false, false, false, true},
      {"v_dot8_i32_iu4 v4, v1, v2, v3", 4, true, false, false, false},
      {"v_dot8_i32_iu4 v4, v1, v2, v3 neg_lo:[1,1,0]", 4, true, true, true, false},
      {"v_dot8_i32_iu4 v4, v1, v2, v3 neg_lo:[0,1,0] clamp", 4, true, false, true, true},
      {"v_dot8_u32_u4 v4, v1, v2, v3", 4, false, false, false, false},
      {"v_dot8_u32_u4 v4, v1, v2, v3 clamp", 4, false, false, false, true}};
  for (size_t k = 0; k < sizeof cs / sizeof *cs; k++) {
    for (int i = 0; i < N; i++) g_in[i][0] = any_packed(), g_in[i][1] = any_packed(), g_in[i][2] = any_acc();
    /* overflow both ways: the largest positive / negative sums onto the int32 and uint32 limits */
    g_in[0][0] = g_in[0][1] = 0x80808080u, g_in[0][2] = 0x7fffffffu;
    g_in[1][0] = 0x80808080u, g_in[1][1] = 0x7f7f7f7fu, g_in[1][2] = 0x80000000u;
    g_in[2][0] = g_in[2][1] = 0xffffffffu, g_in[2][2] = 0xffffffffu;
    g_in[3][0] = g_in[3][1] = 0x88888888u, g_in[3][2] = 0x7ffffff0u;
    bool ran = run_asm(cs[k].text, cs[k].text, 3, NULL, 0);
    CHECK(ran);
    if (!ran) continue;
    for (int i = 0; i < N; i++) {
      uint32_t want = ref_int(g_in[i][0], g_in[i][1], g_in[i][2], cs[k].bits, cs[k].iu, cs[k].sa, cs[k].sb, cs[k].clamp);
      expect(g_out[i] == want, cs[k].text, i, g_out[i], want);
    }
  }
}

/* ---- float dots ---- */

static uint16_t any_half(bool bf16) {
  static const uint16_t h[] = {0x0000, 0x8000, 0x3c00, 0xbc00, 0x0001, 0x83ff, 0x0400, 0x7bff, 0xfbff, 0x7c00,
                               0xfc00, 0x7e00, 0x3555, 0x4248, 0xc900};
  static const uint16_t b[] = {0x0000, 0x8000, 0x3f80, 0xbf80, 0x0001, 0x807f, 0x0080, 0x7f7f, 0xff7f, 0x7f80,
                               0xff80, 0x7fc0, 0x3eab, 0x4049, 0xc2f7};
  if (rnd32() % 2) return bf16 ? b[rnd32() % 15] : h[rnd32() % 15];
  return bf16 ? (uint16_t)((cc_f32_to_bf16((float)(int32_t)rnd32() / 65536.0f))) : (uint16_t)rnd32();
}
static float any_f32(void) {
  static const float s[] = {0.0f, -0.0f, 1.0f, -1.0f, 0x1p-149f, -0x1.8p-130f, 0x1p-126f, 0x1.fffffep127f,
                            INFINITY, -INFINITY, NAN, 3.0f, 1e-3f};
  return rnd32() % 2 ? s[rnd32() % (sizeof s / sizeof *s)] : (float)(int32_t)rnd32() / 4096.0f;
}

static bool same_f(uint32_t got, float want) { return got == r3t_fb(want) || (isnan(r3t_bf(got)) && isnan(want)); }

typedef struct { bool bf16, clamp; unsigned sel, selhi, nlo, nhi; uint32_t mode; } fcase;

static float flush(float x) { return fpclassify(x) == FP_SUBNORMAL ? (signbit(x) ? -0.0f : 0.0f) : x; }

/* ISA pseudocode order: tmp = S2; tmp += lo product; tmp += hi product, each an f32 operation. */
static float ref_float(const fcase *f, uint32_t a, uint32_t b, uint32_t c) {
  bool ftz = !f->bf16 || f->mode != 3;
  if (ftz && !(c & 0x7f800000u)) c &= 0x80000000u;
  float acc = r3t_bf(c);
  if ((f->nhi >> 2) & 1) acc = fabsf(acc);
  if ((f->nlo >> 2) & 1) acc = -acc;
  for (int h = 0; h < 2; h++) {
    unsigned sel = h ? f->selhi : f->sel, ng = h ? f->nhi : f->nlo;
    uint16_t x = (uint16_t)((sel & 1) ? a >> 16 : a), y = (uint16_t)((sel & 2) ? b >> 16 : b);
    volatile float fx = f->bf16 ? cc_bf16_to_f32(x) : cc_f16_to_f32(x), fy = f->bf16 ? cc_bf16_to_f32(y) : cc_f16_to_f32(y);
    if (ng & 1) fx = -fx;
    if (ng & 2) fy = -fy;
    if (f->bf16 && ftz) fx = flush(fx), fy = flush(fy); /* bf16: every step under the f32 denorm mode */
    volatile float p = fx * fy; /* volatile: rounded on its own, never contracted into the add */
    if (f->bf16 && ftz) p = flush(p), acc = flush(acc);
    acc = acc + p;
    if (f->bf16 && ftz) acc = flush(acc);
  }
  if (ftz && !(r3t_fb(acc) & 0x7f800000u)) acc = signbit(acc) ? -0.0f : 0.0f;
  if (f->clamp) acc = isnan(acc) || acc < 0 ? 0.0f : acc > 1 ? 1.0f : acc;
  return acc;
}

static void bits3(char *o, size_t n, const char *name, unsigned v) {
  snprintf(o, n, " %s:[%u,%u,%u]", name, v & 1, (v >> 1) & 1, (v >> 2) & 1);
}

static void test_float(void) {
  static const fcase cs[] = {
      {false, false, 0, 7, 0, 0, 3}, {false, false, 0, 7, 0, 0, 0}, {false, true, 0, 7, 0, 0, 3},
      {false, false, 1, 6, 0, 0, 3}, {false, false, 3, 4, 0, 0, 3}, {false, false, 0, 7, 5, 3, 3},
      {false, false, 0, 7, 2, 4, 3}, {false, false, 0, 7, 4, 4, 3}, {true, false, 0, 7, 0, 0, 3},
      {true, false, 0, 7, 0, 0, 0}, {true, true, 2, 5, 1, 6, 3}};
  for (size_t k = 0; k < sizeof cs / sizeof *cs; k++) {
    const fcase *f = &cs[k];
    char text[200], m[4][32] = {"", "", "", ""};
    if (f->sel) bits3(m[0], sizeof m[0], "op_sel", f->sel);
    if (f->selhi != 7) bits3(m[1], sizeof m[1], "op_sel_hi", f->selhi);
    if (f->nlo) bits3(m[2], sizeof m[2], "neg_lo", f->nlo);
    if (f->nhi) bits3(m[3], sizeof m[3], "neg_hi", f->nhi);
    snprintf(text, sizeof text, "v_dot2_f32_%s v4, v1, v2, v3%s%s%s%s%s", f->bf16 ? "bf16" : "f16", m[0], m[1], m[2],
             m[3], f->clamp ? " clamp" : "");
    for (int i = 0; i < N; i++) {
      g_in[i][0] = any_half(f->bf16) | (uint32_t)any_half(f->bf16) << 16;
      g_in[i][1] = any_half(f->bf16) | (uint32_t)any_half(f->bf16) << 16;
      g_in[i][2] = r3t_fb(any_f32());
    }
    /* 1 + 2^-24 - 1: step by step the small product is lost (0), a fused sum would keep it */
    uint16_t one = f->bf16 ? 0x3f80 : 0x3c00, small = f->bf16 ? 0x3380 : 0x1400 /* 2^-24 / 2^-26 */;
    g_in[0][0] = small | (uint32_t)one << 16, g_in[0][1] = one | (uint32_t)(one ^ 0x8000) << 16, g_in[0][2] = r3t_fb(1.0f);
    g_in[1][2] = 0x00000001u; /* a denormal accumulator with zero products */
    g_in[1][0] = g_in[1][1] = 0;
    bool ran = run_asm(text, text, f->mode, NULL, 0);
    CHECK(ran);
    if (!ran) continue;
    for (int i = 0; i < N; i++) {
      float want = ref_float(f, g_in[i][0], g_in[i][1], g_in[i][2]);
      expect(same_f(g_out[i], want), text, i, g_out[i], r3t_fb(want));
    }
  }
}

/* Modifiers with no documented meaning are refused, naming the instruction. */
static void test_refused(void) {
  static const char *const cs[] = {"v_dot4_i32_iu8 v4, v1, v2, v3 op_sel:[1,0,0]",
                                   "v_dot4_u32_u8 v4, v1, v2, v3 neg_lo:[1,0,0]",
                                   "v_dot8_i32_iu4 v4, v1, v2, v3 neg_hi:[0,1,0]",
                                   "v_dot2_f32_f16 v4, v1, v2, v3 op_sel:[0,0,1]"};
  for (size_t k = 0; k < sizeof cs / sizeof *cs; k++) {
    char err[512] = "";
    CHECK(!run_asm(cs[k], cs[k], 3, err, sizeof err));
    if (!strstr(err, cs[k])) fprintf(stderr, "error for `%s`: %s\n", cs[k], err);
    CHECK(strstr(err, cs[k]) != NULL);
  }
}

/* The other VOP3P family LLVM emits, v_fma_mix*, prints its neg_lo / neg_hi as -x / |x| and op_sel_hi only when
 * set (the fuzzer met `-v1 ... op_sel_hi:[1,1,1]` printed as `v1 ... neg_lo:[1,0,0]`). */
static void test_mix_print(void) {
  static const char *const cs[] = {
      "v_fma_mix_f32 v0, v1, v2, v3", "v_fma_mix_f32 v0, v1, v2, v3 op_sel_hi:[1,1,0]",
      "v_fma_mix_f32 v0, -v1, |v2|, -|v3| op_sel:[1,0,0] op_sel_hi:[1,0,0]",
      "v_fma_mixlo_f16 v0, -v1, v0, v5 op_sel_hi:[1,1,1]", "v_fma_mixlo_f16 v0, v1, v0, v5 op_sel_hi:[1,1,1] clamp",
      "v_fma_mixhi_f16 v0, v1, v0, v5 op_sel:[0,1,0]"};
  size_t n = sizeof cs / sizeof *cs, len = 0;
  char src[2048];
  for (size_t k = 0; k < n; k++) len += (size_t)snprintf(src + len, sizeof src - len, "%s\n", cs[k]);
  snprintf(src + len, sizeof src - len, "s_endpgm\n");
  static uint8_t obj[65536];
  r3t_code c;
  rdna3_program *p = NULL;
  rdna3_kd kd = {.code_props = 1u << 10};
  CHECK(r3t_asm(src, obj, sizeof obj, &c));
  if (c.text) CHECK_OK(rdna3_load(c.text, c.text_B, 0, 0, &kd, &p));
  for (size_t k = 0; p && k < n && k < rdna3_count(p); k++) {
    char got[256];
    rdna3_print(p, k, got, sizeof got);
    r3t_norm(got);
    CHECK_EQ_STR(got, cs[k]);
  }
  rdna3_free(p);
}

/* ---- the pipeline ---- */

static const char *const KERNELS[] = {
    "(kernel du8 (let out (buf 0 uint8 16)) (let a (buf 1 uint8 80)) (let b (buf 2 uint8 80)) (let r0 (range 0 16 loop))"
    " (let r1 (range 1001 5 reduce)) (sink (store (index out r0) (reduce add (* (load (index a (+ (* r0 5) r1)))"
    " (load (index b (+ (* r0 5) r1)))) r1) r0)))",
    "(kernel di8 (let out (buf 0 int8 16)) (let a (buf 1 int8 80)) (let b (buf 2 int8 80)) (let r0 (range 0 16 loop))"
    " (let r1 (range 1001 5 reduce)) (sink (store (index out r0) (reduce add (mulacc (load (index a (+ (* r0 5) r1)))"
    " (load (index b (+ (* r0 5) r1))) (const -3 int8)) r1) r0)))",
    "(kernel di32 (let out (buf 0 int32 16)) (let a (buf 1 int8 80)) (let b (buf 2 int8 80)) (let r0 (range 0 16 loop))"
    " (let r1 (range 1001 5 reduce)) (sink (store (index out r0) (reduce add (* (cast int32 (load (index a (+ (* r0 5) r1))))"
    " (cast int32 (load (index b (+ (* r0 5) r1))))) r1) r0)))",
    "(kernel du32 (let out (buf 0 uint32 16)) (let a (buf 1 uint8 80)) (let b (buf 2 uint8 80)) (let r0 (range 0 16 loop))"
    " (let r1 (range 1001 5 reduce)) (sink (store (index out r0) (reduce add (* (cast uint32 (load (index a (+ (* r0 5) r1))))"
    " (cast uint32 (load (index b (+ (* r0 5) r1))))) r1) r0)))",
    /* 16 products: fully unrolled, the SLP vectorizer's `mul <16 x i8>` into llvm.vector.reduce.add crashed LLVM 19's
     * AMDGPU instruction selection (compiler/toolchain_llvm.c) */
    "(kernel di8x16 (let out (buf 0 int8 16)) (let a (buf 1 int8 256)) (let b (buf 2 int8 256)) (let r0 (range 0 16 loop))"
    " (let r1 (range 1001 16 reduce)) (sink (store (index out r0) (reduce add (* (load (index a (+ (* r0 16) r1)))"
    " (load (index b (+ (* r0 16) r1)))) r1) r0)))"};

/* The unoptimized code of every kernel has a v_dot4; the heuristic's code of the first NDOT_OPTS too. */
enum { NDOT_OPTS = 4 };

/* Compile for gfx1100 and check the code has a v_dot4 (and decodes as llvm-objdump-19 reads it). */
static bool has_dot4(uop_ctx *ctx, const uop *sink, const cc_target *t, bool noopt) {
  cc_program *p = NULL;
  hcq_status st = cc_compile_source(ctx, sink, t, &(cc_options){.noopt = noopt}, &p);
  if (!st) st = cc_compile_binary(t, p);
  bool found = false, failed = st != NULL;
  CHECK_OK(st);
  if (failed) goto done;
  r3t_objdump_check(p->binary, p->binary_size_B, "dot kernel");
  char path[] = "/tmp/hcq-r3-dot-XXXXXX", cmd[200], line[512];
  int fd = mkstemp(path);
  if (fd < 0) goto done;
  bool ok = write(fd, p->binary, p->binary_size_B) == (ssize_t)p->binary_size_B;
  close(fd);
  snprintf(cmd, sizeof cmd, "llvm-objdump-19 -d --mcpu=gfx1100 %s", path);
  FILE *f = ok ? popen(cmd, "r") : NULL;
  while (f && fgets(line, sizeof line, f)) found |= strstr(line, "v_dot4_") != NULL;
  if (f) pclose(f);
  unlink(path);
done:
  cc_program_free(p);
  return found;
}

static void test_pipeline(void) {
  cc_target t;
  CHECK_OK(cc_target_get("amdgpu:gfx1100", 0, &t));
  CHECK_OK(amd_mock_install(kif_default()));
  hcq_rt_device *dev = NULL;
  CHECK_OK(hcq_rt_open("amd:0", &dev));
  for (size_t k = 0; dev && k < sizeof KERNELS / sizeof *KERNELS; k++)
    for (int noopt = 0; noopt < 2; noopt++) {
      uop_ctx *ctx = NULL;
      CHECK_OK(uop_ctx_create(&ctx));
      const uop *sink = NULL;
      CHECK_OK(cc_kernel_parse(ctx, KERNELS[k], strlen(KERNELS[k]), "<dot>", &sink));
      if (sink) {
        bool dot = has_dot4(ctx, sink, &t, noopt), want = noopt || k < NDOT_OPTS;
        if (want && !dot) fprintf(stderr, "no v_dot4 in the %s code of %s\n", noopt ? "noopt" : "opts", KERNELS[k]);
        CHECK(dot || !want);
        etu_run r = {0};
        art_result res = art_run(dev, ctx, sink, KERNELS[k], noopt ? "" : NULL, (size_t)1 << 20, "dot kernel", &r);
        if (res != ART_OK) fprintf(stderr, "%s (%s): result %d, %zu of %zu differ\n", KERNELS[k], noopt ? "noopt" : "opts", (int)res, r.bad, r.checked);
        CHECK_EQ_INT(res, ART_OK);
      }
      uop_ctx_destroy(ctx);
    }
  if (dev) hcq_rt_close(dev);
  amd_mock_uninstall();
}

int main(void) {
  if (!tu_have("llvm-mc-19") || !tu_have("clang-19") || !tu_have("ld.lld-19") || !tu_have("llvm-objdump-19")) {
    fprintf(stderr, "SKIP: llvm-mc-19, clang-19, ld.lld-19 or llvm-objdump-19 missing\n");
    return 77;
  }
  test_int();
  test_float();
  test_refused();
  test_mix_print();
  test_pipeline();
  return testing_summary("rdna3_dot");
}
