/* End-to-end tests of the c target: kernel text -> pipeline -> C -> cc (gcc, and clang-19 when installed) ->
 * shared object -> call; results compared with brute-force C loops written in this test. */
#include <math.h>

#include "compiler/cc_test_util.h"
#include "base/testing.h"

static uint64_t rng_state = 12345;
static int rnd(int lo, int hi) { /* [lo, hi) */
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return lo + (int)((rng_state >> 33) % (uint64_t)(hi - lo));
}

static tu_kernel build(uop_ctx *ctx, const char *text, const cc_target *t, cc_program **p) {
  tu_kernel k = {0};
  hcq_status st = tu_build(ctx, text, t, p, &k);
  if (st) {
    fprintf(stderr, "build failed: %s\n", hcq_status_message(st));
    hcq_status_free(st);
    CHECK(!"build");
  }
  return k;
}

static void run_all(const cc_target *t) {
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  cc_program *p = NULL;

  /* 2-D add (merged to one loop) */
  {
    float a[2048], b[2048], o[2048];
    for (int i = 0; i < 2048; i++) a[i] = (float)rnd(-100, 100) / 8, b[i] = (float)rnd(-100, 100) / 8, o[i] = 0;
    tu_kernel k = build(ctx,
                        "(kernel add2d (let o (buf 0 float32 2048)) (let a (buf 1 float32 2048)) (let b (buf 2 float32 2048))"
                        " (let r0 (range 0 32 loop)) (let r1 (range 1 64 loop)) (let i (+ (* r0 64) r1))"
                        " (sink (store (index o i) (+ (load (index a i)) (load (index b i))) r0 r1)))",
                        t, &p);
    if (k.fn) {
      tu_call(&k, (uintptr_t[]){(uintptr_t)o, (uintptr_t)a, (uintptr_t)b, 0}, 4);
      int bad = 0;
      for (int i = 0; i < 2048; i++) bad += o[i] != a[i] + b[i];
      CHECK_EQ_INT(bad, 0);
    }
    /* a loaded kernel has no file left in /tmp (an early return or a crash before tu_unload leaves nothing) */
    char pat[64];
    snprintf(pat, sizeof pat, "ls /tmp/hcq-tu-%d-* >/dev/null 2>&1", (int)getpid());
    CHECK(system(pat) != 0);
    tu_unload(&k);
    cc_program_free(p);
  }
  /* matmul 16x16x16 (exact: small integers) */
  {
    float a[256], b[256], c[256];
    for (int i = 0; i < 256; i++) a[i] = (float)rnd(-8, 8), b[i] = (float)rnd(-8, 8), c[i] = -1;
    tu_kernel k = build(ctx,
                        "(kernel mm (let c (buf 0 float32 256)) (let a (buf 1 float32 256)) (let b (buf 2 float32 256))"
                        " (let r0 (range 0 16 loop)) (let r1 (range 1 16 loop)) (let r2 (range 1002 16 reduce))"
                        " (sink (store (index c (+ (* r0 16) r1)) (reduce add (* (load (index a (+ (* r0 16) r2)))"
                        " (load (index b (+ (* r2 16) r1)))) r2) r0 r1)))",
                        t, &p);
    if (k.fn) {
      tu_call(&k, (uintptr_t[]){(uintptr_t)c, (uintptr_t)a, (uintptr_t)b, 0}, 4);
      int bad = 0;
      for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) {
          float s = 0;
          for (int q = 0; q < 16; q++) s += a[i * 16 + q] * b[q * 16 + j];
          bad += c[i * 16 + j] != s;
        }
      CHECK_EQ_INT(bad, 0);
    }
    tu_unload(&k);
    cc_program_free(p);
  }
  /* saxpy with a variable length; elements past n untouched */
  {
    float x[1024], y[1024], y0[1024];
    for (int i = 0; i < 1024; i++) x[i] = (float)rnd(-64, 64) / 4, y[i] = y0[i] = (float)rnd(-64, 64) / 4;
    tu_kernel k = build(ctx,
                        "(kernel saxpy (let y (buf 0 float32 1024)) (let x (buf 1 float32 1024))"
                        " (let n (var n 1 1024 index)) (let r0 (range 0 n loop)) (let yi (index y r0))"
                        " (sink (store yi (+ (* (load (index x r0)) 2.5) (load yi)) r0)))",
                        t, &p);
    if (k.fn) {
      CHECK(strstr(p->source, "const int var_n, int core_id") != NULL);
      CHECK(hcq_program_nvars(&p->desc) == 1 && strcmp(hcq_program_var(&p->desc, 0)->name, "n") == 0);
      tu_call(&k, (uintptr_t[]){(uintptr_t)y, (uintptr_t)x, 1000, 0}, 4);
      int bad = 0;
      for (int i = 0; i < 1024; i++) bad += y[i] != (i < 1000 ? x[i] * 2.5f + y0[i] : y0[i]);
      CHECK_EQ_INT(bad, 0);
    }
    tu_unload(&k);
    cc_program_free(p);
  }
  /* int32 max per row (MAX decomposed, identity INT32_MIN), int8 wrapping add */
  {
    int32_t x[64 * 32], o[64];
    for (int i = 0; i < 64 * 32; i++) x[i] = rnd(-1000000, 1000000);
    tu_kernel k = build(ctx,
                        "(kernel mx (let o (buf 0 int32 64)) (let x (buf 1 int32 2048))"
                        " (let r0 (range 0 64 loop)) (let r1 (range 1001 32 reduce))"
                        " (sink (store (index o r0) (reduce max (load (index x (+ (* r0 32) r1))) r1) r0)))",
                        t, &p);
    if (k.fn) {
      tu_call(&k, (uintptr_t[]){(uintptr_t)o, (uintptr_t)x, 0}, 3);
      int bad = 0;
      for (int i = 0; i < 64; i++) {
        int32_t m = INT32_MIN;
        for (int j = 0; j < 32; j++) m = x[i * 32 + j] > m ? x[i * 32 + j] : m;
        bad += o[i] != m;
      }
      CHECK_EQ_INT(bad, 0);
    }
    tu_unload(&k);
    cc_program_free(p);
    int8_t a8[100], b8[100], o8[100];
    for (int i = 0; i < 100; i++) a8[i] = (int8_t)rnd(-128, 128), b8[i] = (int8_t)rnd(-128, 128);
    k = build(ctx,
              "(kernel add8 (let o (buf 0 int8 100)) (let a (buf 1 int8 100)) (let b (buf 2 int8 100))"
              " (let r0 (range 0 100 loop)) (sink (store (index o r0) (* (+ (load (index a r0)) (load (index b r0)))"
              " (const 3 int8)) r0)))",
              t, &p);
    if (k.fn) {
      tu_call(&k, (uintptr_t[]){(uintptr_t)o8, (uintptr_t)a8, (uintptr_t)b8, 0}, 4);
      int bad = 0;
      for (int i = 0; i < 100; i++) bad += o8[i] != (int8_t)((int8_t)(a8[i] + b8[i]) * 3);
      CHECK_EQ_INT(bad, 0);
    }
    tu_unload(&k);
    cc_program_free(p);
  }
  /* conv2d example: gated loads read 0 outside the image */
  {
    const uop *sink = NULL;
    CHECK_OK(cc_kernel_parse_file(ctx, "examples/conv2d.uop", &sink));
    float in[512], w[72], out[1024];
    for (int i = 0; i < 512; i++) in[i] = (float)rnd(-16, 16) / 4;
    for (int i = 0; i < 72; i++) w[i] = (float)rnd(-16, 16) / 4;
    tu_kernel k = {0};
    if (sink) {
      hcq_status st = cc_compile_source(ctx, sink, t, &(cc_options){.noopt = true}, &p);
      if (!st) st = cc_compile_binary(t, p);
      if (!st) st = tu_load(p->binary, p->binary_size_B, p->symbol, &k);
      CHECK_OK(st);
    }
    if (k.fn) {
      tu_call(&k, (uintptr_t[]){(uintptr_t)out, (uintptr_t)in, (uintptr_t)w, 0}, 4);
      int bad = 0;
      for (int co = 0; co < 4; co++)
        for (int y = 0; y < 16; y++)
          for (int x = 0; x < 16; x++) bad += fabsf(out[co * 256 + y * 16 + x] - tu_conv2d_ref(in, w, co, y, x)) > 1e-4f;
      CHECK_EQ_INT(bad, 0);
    }
    tu_unload(&k);
    cc_program_free(p);
  }
  /* THREAD: each core_id writes its quarter */
  {
    float o[64];
    for (int i = 0; i < 64; i++) o[i] = 0;
    tu_kernel k = build(ctx,
                        "(kernel thr (let o (buf 0 float32 64)) (let t (range 0 4 thread)) (let r1 (range 1 16 loop))"
                        " (sink (store (index o (+ (* t 16) r1)) (cast float32 (+ (* t 100) r1)) t r1)))",
                        t, &p);
    if (k.fn) {
      for (uintptr_t core = 0; core < 4; core++) tu_call(&k, (uintptr_t[]){(uintptr_t)o, core}, 2);
      int bad = 0;
      for (int i = 0; i < 64; i++) bad += o[i] != (float)((i / 16) * 100 + i % 16);
      CHECK_EQ_INT(bad, 0);
    }
    tu_unload(&k);
    cc_program_free(p);
  }
  uop_ctx_destroy(ctx);
}

/* cc_target.no_fp_contract: float a*b+c rounds twice, as the interpreter computes it. (1+2^-12)^2 - 1 is 2^-11 with
 * the product rounded (its 2^-24 is a tie, to even) and 2^-11 + 2^-24 fused; vectorized (UPCAST) too. */
static void unfused(const cc_target *base) {
  cc_target t = *base;
  t.no_fp_contract = true;
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  _Alignas(64) float a[64], b[64], c[64], o[64]; /* the c target's buf_align_B (Arm NEON faults on less) */
  for (int i = 0; i < 64; i++) a[i] = b[i] = 1.0f + 0x1p-12f, c[i] = -1.0f, o[i] = 0;
  for (int up = 0; up < 2; up++) {
    const char *text = "(kernel fma_off (let o (buf 0 float32 64)) (let a (buf 1 float32 64)) (let b (buf 2 float32 64))"
                       " (let c (buf 3 float32 64)) (let r (range 0 64 loop)) (let i r)"
                       " (sink (store (index o i) (+ (* (load (index a i)) (load (index b i))) (load (index c i))) r)))";
    const uop *sink = NULL;
    cc_program *p = NULL;
    tu_kernel k = {0};
    cc_opt u = {.op = CC_OPT_UPCAST, .axis = 0, .amount = 4};
    cc_options opt = {.opts = &u, .nopts = 1, .noopt = !up};
    hcq_status st = cc_kernel_parse(ctx, text, strlen(text), "<fma>", &sink);
    if (!st) st = tu_build_sink(ctx, sink, &t, &opt, &p, &k);
    CHECK_OK(st);
    if (k.fn) {
      tu_call(&k, (uintptr_t[]){(uintptr_t)o, (uintptr_t)a, (uintptr_t)b, (uintptr_t)c, 0}, 5);
      int bad = 0;
      for (int i = 0; i < 64; i++) bad += o[i] != 0x1p-11f;
      CHECK_EQ_INT(bad, 0);
    }
    tu_unload(&k);
    cc_program_free(p);
  }
  uop_ctx_destroy(ctx);
}

int main(void) {
  char dir[] = "/tmp/hcq-render-test-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("XDG_CACHE_HOME", dir, 1);
  cc_target t;
  CHECK_OK(cc_target_get("c", 4, &t));
  if (!tu_have("cc")) {
    fprintf(stderr, "render_c_test: no cc (install gcc): skipped\n");
    return 77;
  }
  setenv("HCQ_CC", "cc", 1);
  run_all(&t);
  unfused(&t);
  if (tu_have("clang-19")) {
    setenv("HCQ_CC", "clang-19", 1);
    run_all(&t);
  } else {
    fprintf(stderr, "render_c_test: clang-19 not installed (Debian package clang-19): clang half skipped\n");
  }
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", dir);
  return testing_summary("render_c");
}
