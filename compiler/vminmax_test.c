/* A float32 vector select between the operands of its own compare (render_c.c render_vminmax: where(x < y, y, x)
 * as HCQ_VMAX, where(x < y, x, y) as HCQ_VMIN; the exp2/log2 clamps, against constants) must give exactly the
 * select's operand, bit for bit, NaN payloads and zero signs included: the value the select picks, where x86
 * MAXPS/MINPS return their second operand for unordered and equal operands.
 *
 * Every ordered pair of 16 specials (both NaN signs, a NaN payload, +-0, +-inf, +-1, the smallest subnormals, the
 * largest finite, 1.5) through four selects and two clamps, compiled for c with no opts (scalar selects) and with
 * UPCAST to 4, 8 and 16 lanes, natively; on x86 also with clang-19 (which keeps the bitwise blend). The expected
 * values are this file's own C selects. */
#include "compiler/cc_test_util.h"
#include "compiler/cc_internal.h"
#include "base/testing.h"

enum { NS = 16, NP = NS * NS, NOUT = 6 };

static float special(int i) {
  const uint32_t nan_payload = 0x7fc01234u, neg_nan = 0xffc00000u, min_sub = 1u, neg_min_sub = 0x80000001u;
  const float v[NS] = {NAN, 0, 0.0f, -0.0f, INFINITY, -INFINITY, 1, -1, 0, 0, 0x1.fffffep127f, -0x1.fffffep127f,
                       1.5f, -151.0f, 129.0f, -2.5f};
  float f = v[i];
  if (i == 1) memcpy(&f, &neg_nan, 4);
  if (i == 8) memcpy(&f, &min_sub, 4);
  if (i == 9) memcpy(&f, &neg_min_sub, 4);
  if (i == 0) memcpy(&f, &nan_payload, 4);
  return f;
}

/* outputs: slot 0 where(x<y,y,x), 3 where(x<y,x,y), 4 where(y<x,x,y), 5 where(y<x,y,x), 6 the exp2 low clamp
 * where(x < -151, -151, x), 7 its high clamp where(129 < x, 129, x) */
static const char *KERNEL =
    "(kernel vminmax (let a (buf 1 float32 256)) (let b (buf 2 float32 256)) (let r (range 0 256 loop))"
    " (let x (load (index a r))) (let y (load (index b r)))"
    " (let s0 (store (index (buf 0 float32 256) r) (where (< x y) y x) r))"
    " (let s3 (store (index (buf 3 float32 256) r) (where (< x y) x y) r))"
    " (let s4 (store (index (buf 4 float32 256) r) (where (< y x) x y) r))"
    " (let s5 (store (index (buf 5 float32 256) r) (where (< y x) y x) r))"
    " (let s6 (store (index (buf 6 float32 256) r) (where (< x (const -151.0 float32)) (const -151.0 float32) x) r))"
    " (let s7 (store (index (buf 7 float32 256) r) (where (< (const 129.0 float32) x) (const 129.0 float32) x) r))"
    " (sink s0 s3 s4 s5 s6 s7))";

static uint32_t bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static float want(int k, float x, float y) {
  switch (k) {
    case 0: return x < y ? y : x;
    case 1: return x < y ? x : y;
    case 2: return y < x ? x : y;
    case 3: return y < x ? y : x;
    case 4: return x < -151.0f ? -151.0f : x;
    default: return 129.0f < x ? 129.0f : x;
  }
}

static void run(uop_ctx *ctx, const uop *k, const char *opts, const char *cc, bool expect_macro) {
  cc_target t;
  CHECK_OK(cc_target_get("c", 1, &t));
  cc_opt *ov = NULL;
  size_t no = 0;
  if (opts) CHECK_OK(cc_opts_parse(opts, &ov, &no));
  cc_options o = {.opts = ov, .nopts = no, .noopt = !opts};
  static _Alignas(64) float in_a[NP], in_b[NP], out[NOUT][NP]; /* the c target assumes 16-byte aligned buffers */
  for (int p = 0; p < NP; p++) in_a[p] = special(p / NS), in_b[p] = special(p % NS);
  memset(out, 0x55, sizeof out);
  cc_program *prog = NULL;
  tu_kernel tk = {0};
  hcq_status st = tu_build_sink(ctx, k, &t, &o, &prog, &tk);
  if (st) fprintf(stderr, "%s [%s]: %s\n", cc, opts ? opts : "", hcq_status_message(st));
  CHECK_OK(st);
  if (!st) {
    if (expect_macro) CHECK(strstr(prog->source, "HCQ_VMAX") && strstr(prog->source, "HCQ_VMIN"));
    const int slot_out[8] = {0, -1, -1, 1, 2, 3, 4, 5};
    uintptr_t args[10] = {0};
    int nb = (int)hcq_program_nbufs(&prog->desc);
    for (int i = 0; i < nb; i++) {
      int s = (int)prog->desc.params[i].slot;
      args[i] = (uintptr_t)(s == 1 ? in_a : s == 2 ? in_b : out[slot_out[s]]);
    }
    tu_call(&tk, args, nb + 1); /* core_id 0 */
    int bad = 0;
    for (int kx = 0; kx < NOUT; kx++)
      for (int p = 0; p < NP; p++) {
        float w = want(kx, in_a[p], in_b[p]);
        if (bits(out[kx][p]) == bits(w)) continue;
        if (bad++ < 4)
          fprintf(stderr, "%s [%s]: output %d of (%08x, %08x) = %08x, want %08x\n", cc, opts ? opts : "", kx,
                  bits(in_a[p]), bits(in_b[p]), bits(out[kx][p]), bits(w));
      }
    CHECK_EQ_INT(bad, 0);
  }
  tu_unload(&tk);
  cc_program_free(prog);
  free(ov);
}

int main(void) {
  char dir[] = "/tmp/hcq-vminmax-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("XDG_CACHE_HOME", dir, 1);
  if (!tu_have(cc_toolchain_cc())) {
    fprintf(stderr, "SKIP: no C compiler (%s)\n", cc_toolchain_cc());
    return 77;
  }
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *k = NULL;
  CHECK_OK(cc_kernel_parse(ctx, KERNEL, strlen(KERNEL), "<vminmax>", &k));
  bool x86 = strcmp(cc_host_arch(), "x86_64") == 0, clang = x86 && tu_have("clang-19");
  static const char *const OPTS[] = {NULL, "UPCAST:0:4", "UPCAST:0:8", "UPCAST:0:16"};
  for (int c = 0; k && c < (clang ? 2 : 1); c++) {
    tu_env cc_env = {0};
    if (c) tu_env_set(&cc_env, "HCQ_CC", "clang-19");
    for (int i = 0; i < 4; i++) {
      tu_env vmax_env = {0};
      if (i == 3) tu_env_set(&vmax_env, "HCQ_VECTOR_MAX", "16"); /* 16 lanes wherever the compiler takes them */
      cc_target t;
      CHECK_OK(cc_target_get("c", 1, &t));
      int lanes = i == 0 ? 1 : 2 << i;
      run(ctx, k, OPTS[i], c ? "clang-19" : cc_toolchain_cc(), lanes > 1 && lanes <= t.vector_max);
      tu_env_restore(&vmax_env);
    }
    tu_env_restore(&cc_env);
  }
  uop_ctx_destroy(ctx);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
  return testing_summary("vminmax");
}
