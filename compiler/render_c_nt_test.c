/* Non-temporal stores of the c target (render_c.c) and the CPU heuristic's tiles (heuristic.c: transpose, matmul).
 *
 * NT stores must appear only for outputs the kernel never reads that are at least the target's nt_store_min_B
 * (lowered here to 4 KiB so small kernels qualify), must be fenced, and the kernels must still compute what the
 * reference interpreter computes, with gcc and with clang-19 when installed, on aligned and misaligned buffers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/opt_test_util.h"
#include "base/testing.h"

static uop_ctx *g_ctx;

#define ADD_4096                                                                                                     \
  "(kernel add (let out (buf 0 float32 4096)) (let a (buf 1 float32 4096)) (let b (buf 2 float32 4096))"            \
  " (let r0 (range 0 4096 loop)) (sink (store (index out r0) (+ (load (index a r0)) (load (index b r0))) r0)))"
/* 512 floats = 2 KiB: below the threshold */
#define ADD_512                                                                                                      \
  "(kernel add (let out (buf 0 float32 512)) (let a (buf 1 float32 512)) (let b (buf 2 float32 512))"               \
  " (let r0 (range 0 512 loop)) (sink (store (index out r0) (+ (load (index a r0)) (load (index b r0))) r0)))"
/* 4099: no upcast by 4, so single stores */
#define ADD_4099                                                                                                     \
  "(kernel add (let out (buf 0 float32 4099)) (let a (buf 1 float32 4099)) (let b (buf 2 float32 4099))"            \
  " (let r0 (range 0 4099 loop)) (sink (store (index out r0) (+ (load (index a r0)) (load (index b r0))) r0)))"
#define ADD_INT                                                                                                      \
  "(kernel addi (let out (buf 0 int32 4096)) (let a (buf 1 int32 4096)) (let b (buf 2 int32 4096))"                 \
  " (let r0 (range 0 4096 loop)) (sink (store (index out r0) (+ (load (index a r0)) (load (index b r0))) r0)))"
/* the output is read: never non-temporal */
#define SAXPY                                                                                                        \
  "(kernel saxpy (let y (buf 0 float32 4096)) (let x (buf 1 float32 4096)) (let r0 (range 0 4096 loop))"             \
  " (let yi (index y r0)) (sink (store yi (+ (* (load (index x r0)) 2.5) (load yi)) r0)))"
#define TRANSPOSE_64                                                                                                 \
  "(kernel transpose (let out (buf 0 float32 4096)) (let x (buf 1 float32 4096))"                                    \
  " (let r0 (range 0 64 loop)) (let r1 (range 1 64 loop))"                                                           \
  " (sink (store (index out (+ (* r1 64) r0)) (load (index x (+ (* r0 64) r1))) r0 r1)))"
/* a gated store into a big output: plain (masked), and the kernel still matches */
#define MASKED                                                                                                       \
  "(kernel masked (let out (buf 0 float32 4096)) (let a (buf 1 float32 4096)) (let r0 (range 0 4096 loop))"        \
  " (sink (store (index out r0 (< r0 1000)) (load (index a r0)) r0)))"

/* one buffer written through two different index bases (out[r0] and out[4095 - r0]): kept in program order */
#define TWO_BASES                                                                                                    \
  "(kernel mix (let out (buf 0 float32 4096)) (let a (buf 1 float32 2048)) (let r0 (range 0 2048 loop))"             \
  " (sink (store (index out r0) (load (index a r0)) r0)"                                                              \
  " (store (index out (+ (* r0 -1) 4095)) (* (load (index a r0)) 2.0) r0)))"

static const uop *parse(const char *text) {
  const uop *k = NULL;
  CHECK_OK(cc_kernel_parse(g_ctx, text, strlen(text), "<test>", &k));
  return k;
}

/* Compile with the heuristic; check that NT4 / NT1 appear (or not) and that the native run matches. */
static void check(const char *what, const char *text, const cc_target *t, bool want_nt4, bool want_nt) {
  cc_program *p = NULL;
  size_t bad = otu_check_text(g_ctx, text, t, NULL, NULL, 0, 7, &p);
  if (!p) return;
  bool nt4 = strstr(p->source, "HCQ_NT4((") != NULL, nt = nt4 || strstr(p->source, "HCQ_NT1((") != NULL;
  bool fence = strstr(p->source, "__builtin_ia32_sfence()") != NULL;
  if (nt4 != want_nt4 || nt != want_nt || fence != want_nt || bad) {
    fprintf(stderr, "  %s (HCQ_CC=%s): nt4 %d nt %d fence %d, %zu bad elements\n%s\n", what, getenv("HCQ_CC"), nt4,
            nt, fence, bad, p->source);
  }
  CHECK(nt4 == want_nt4);
  CHECK(nt == want_nt);
  CHECK(fence == want_nt);
  cc_program_free(p);
}

/* The aligned vector path must fall back to plain stores when the output pointer is not 16-byte aligned. */
static void check_misaligned(const cc_target *t) {
  const uop *k = parse(ADD_4096);
  if (!k) return;
  cc_program *p = NULL;
  tu_kernel tk = {0};
  hcq_status st = tu_build_sink(g_ctx, k, t, NULL, &p, &tk);
  CHECK_OK(st);
  if (st || !p) {
    cc_program_free(p);
    return;
  }
  CHECK(strstr(p->source, "HCQ_NT4((") != NULL);
  enum { N = 4096 };
  float *out = aligned_alloc(64, (N + 16) * 4), *a = aligned_alloc(64, (N + 16) * 4);
  float *b = aligned_alloc(64, (N + 16) * 4);
  if (!out || !a || !b) CHECK(false);
  for (int shift = 0; out && a && b && shift < 4; shift++) {
    for (int i = 0; i < N + 16; i++) a[i] = (float)i * 0.5f, b[i] = (float)(i % 7), out[i] = -1;
    int64_t threads = 1;
    if ((threads = cc_launch_const(p->desc.global[0])) < 1) threads = 1;
    for (int64_t core = 0; core < threads; core++)
      tu_call(&tk, (uintptr_t[]){(uintptr_t)(out + shift), (uintptr_t)(a + shift), (uintptr_t)(b + shift),
                                 (uintptr_t)core}, 4);
    size_t bad = 0;
    for (int i = 0; i < N + 16; i++) {
      float want = i >= shift && i < shift + N ? a[i] + b[i] : -1;
      bad += out[i] != want;
    }
    if (bad) fprintf(stderr, "  misaligned by %d floats: %zu bad elements\n", shift, bad);
    CHECK_EQ_INT((long long)bad, 0);
  }
  free(out);
  free(a);
  free(b);
  tu_unload(&tk);
  cc_program_free(p);
}

#define TRANSPOSE_I32                                                                                                \
  "(kernel transpose (let out (buf 0 int32 4096)) (let x (buf 1 int32 4096))"                                        \
  " (let r0 (range 0 64 loop)) (let r1 (range 1 64 loop))"                                                           \
  " (sink (store (index out (+ (* r1 64) r0)) (load (index x (+ (* r0 64) r1))) r0 r1)))"

/* Transposed tiles: vectorize.c builds each output row's vector from lane k of 4, 8 or 16 loaded 4-lane vectors;
 * render_c.c emits them as 4x4 transposes plus concatenations (gcc >= 12, clang), and a 16-lane row as one 64-byte
 * non-temporal store where aligned (AVX-512). Every tile shape must compute what the interpreter computes, with
 * non-temporal stores and without; int32 (not vectorized) and 8-lane loads (no 4-lane sources) keep the lanes. */
static void check_transpose_shapes(const cc_target *t, bool x86) {
  static const char *SHAPES[] = {"UPCAST:0:16,UPCAST:1:4,THREAD:0:2", "UPCAST:0:4,UPCAST:1:4",
                                 "UPCAST:0:8,UPCAST:1:4", "UPCAST:1:4,UPCAST:0:16", "UPCAST:0:16,UPCAST:1:8"};
  const char *texts[2] = {TRANSPOSE_64, TRANSPOSE_I32};
  cc_target nt = *t;
  nt.nt_store_min_B = 4096;
  for (int ti = 0; ti < (x86 ? 2 : 1); ti++) {
    const cc_target *tg = ti ? &nt : t;
    for (int x = 0; x < 2; x++) {
      const uop *k = parse(texts[x]);
      for (size_t i = 0; k && i < (x ? 1 : sizeof SHAPES / sizeof SHAPES[0]); i++) {
        cc_program *p = NULL;
        size_t bad = otu_check_native(g_ctx, k, tg, SHAPES[i], 9, &p);
        bool lanes = x || strstr(SHAPES[i], "UPCAST:1:8") || tg->vector_max < 4;
        bool shuf = !p || lanes || strstr(p->source, "__builtin_shufflevector") != NULL;
        bool nt16 = !p || lanes || !ti || tg->vector_max < 16 || !strstr(SHAPES[i], "UPCAST:0:16") ||
                    strstr(p->source, "HCQ_NT_V16((") != NULL;
        if (bad || !shuf || !nt16)
          fprintf(stderr, "  transpose %s %s (HCQ_CC=%s, nt %d): %zu bad, shuffles %d, 64-byte nt %d\n", x ? "int32" : "float32",
                  SHAPES[i], getenv("HCQ_CC"), ti, bad, shuf, nt16);
        CHECK(shuf);
        CHECK(nt16);
        cc_program_free(p);
      }
    }
  }
  /* 4-lane vectors only: a 32x16 tile needs 32 transposes in one scope (more than the renderer's table holds) */
  cc_target v4 = *t;
  v4.vector_max = 4;
  cc_program *p = NULL;
  otu_check_text(g_ctx, TRANSPOSE_64, &v4, "UPCAST:0:16,UPCAST:1:16,UPCAST:0:2", NULL, 0, 9, &p);
  CHECK(!p || strstr(p->source, "tr31_ab0") != NULL);
  cc_program_free(p);
}

/* The 64-byte non-temporal row store must fall back (to 16-byte ones, then plain stores) when the output is not
 * 64-byte aligned. */
static void check_misaligned_transpose(const cc_target *t) {
  otu_case c;
  if (!otu_case_open(g_ctx, TRANSPOSE_64, "UPCAST:0:16,UPCAST:1:4", &c)) {
    otu_case_close(&c);
    return;
  }
  cc_program *p = NULL;
  tu_kernel tk = {0};
  hcq_status st = tu_build_sink(g_ctx, c.sink, t, c.o, &p, &tk);
  CHECK_OK(st);
  otu_case_close(&c);
  if (st || !p) {
    cc_program_free(p);
    return;
  }
  enum { N = 4096 };
  float *out = aligned_alloc(64, (N + 16) * 4), *in = aligned_alloc(64, (N + 16) * 4);
  if (!out || !in) CHECK(false);
  static const int SHIFTS[] = {0, 1, 4, 8, 12};
  for (size_t s = 0; out && in && s < sizeof SHIFTS / sizeof SHIFTS[0]; s++) {
    int shift = SHIFTS[s];
    for (int i = 0; i < N + 16; i++) in[i] = (float)i * 0.25f, out[i] = -1;
    tu_call(&tk, (uintptr_t[]){(uintptr_t)(out + shift), (uintptr_t)(in + shift), 0}, 3);
    size_t bad = 0;
    for (int i = 0; i < N + 16; i++) {
      int j = i - shift;
      float want = j >= 0 && j < N ? in[shift + (j % 64) * 64 + j / 64] : -1;
      bad += out[i] != want;
    }
    if (bad) fprintf(stderr, "  transpose, output misaligned by %d floats: %zu bad elements\n", shift, bad);
    CHECK_EQ_INT((long long)bad, 0);
  }
  free(out);
  free(in);
  tu_unload(&tk);
  cc_program_free(p);
}

/* A transpose gets both axes upcast on CPU targets (16 along the store's contiguous axis, 4 along the load's); a
 * plain elementwise kernel keeps the default upcast. */
static void check_transpose_tile(const cc_target *t) {
  cc_target c2 = *t;
  c2.nt_store_min_B = 0;
  const uop *tr = NULL, *add = NULL;
  CHECK_OK(otu_prep(g_ctx, TRANSPOSE_64, &c2, &tr));
  CHECK_OK(otu_prep(g_ctx, ADD_4096, &c2, &add));
  cc_opt *app = NULL;
  size_t napp = 0;
  const uop *o = NULL;
  if (tr) CHECK_OK(otu_opt(g_ctx, tr, &c2, NULL, &o, &app, &napp));
  int64_t up_store = 0, up_load = 0;
  for (size_t i = 0; i < napp; i++) {
    if (app[i].op == CC_OPT_UPCAST && app[i].axis == 0) up_store = app[i].amount; /* r0: out's unit stride */
    if (app[i].op == CC_OPT_UPCAST && app[i].axis == 1) up_load = app[i].amount;  /* r1: x's unit stride */
  }
  CHECK_EQ_INT(up_store, 16);
  CHECK_EQ_INT(up_load, 4);
  free(app);
  app = NULL;
  napp = 0;
  if (add) CHECK_OK(otu_opt(g_ctx, add, &c2, NULL, &o, &app, &napp));
  CHECK(napp >= 1 && app[0].op == CC_OPT_UPCAST && app[0].axis == 0 && app[0].amount == 4);
  size_t nup = 0;
  for (size_t i = 0; i < napp; i++) nup += app[i].op == CC_OPT_UPCAST;
  CHECK_EQ_INT((long long)nup, 1);
  free(app);
  check("transpose tiled, no nt", TRANSPOSE_64, &c2, false, false);
}

#define MATMUL_64                                                                                                    \
  "(kernel matmul (let c (buf 0 float32 4096)) (let a (buf 1 float32 4096)) (let b (buf 2 float32 4096))"            \
  " (let r0 (range 0 64 loop)) (let r1 (range 1 64 loop)) (let k (range 1002 64 reduce))"                             \
  " (sink (store (index c (+ (* r0 64) r1))"                                                                          \
  " (reduce add (* (load (index a (+ (* r0 64) k))) (load (index b (+ (* k 64) r1)))) k) r0 r1)))"

/* A matmul gets a 16 (along c's rows, b's unit stride; 32, two vectors, where vectors hold 16 floats and the product
 * has at least 2^30 multiply-adds) x 8 register tile and no reduce unroll on CPU targets; with cpu_tiles off, the
 * reference's 4x4 upcasts and unroll. */
static void check_reduce_tile(const cc_target *t) {
  cc_target c2 = *t;
  c2.nt_store_min_B = 0;
  for (int tiles = 0; tiles < 2; tiles++) {
    c2.cpu_tiles = tiles;
    const uop *mm = NULL, *o = NULL;
    CHECK_OK(otu_prep(g_ctx, MATMUL_64, &c2, &mm));
    cc_opt *app = NULL;
    size_t napp = 0;
    if (mm) CHECK_OK(otu_opt(g_ctx, mm, &c2, NULL, &o, &app, &napp));
    int64_t up1 = 1, up0 = 0; /* up1: the lanes, the product of the upcasts of axis 1 (it stays in the view) */
    size_t unroll = 0;
    for (size_t i = 0; i < napp; i++) {
      if (app[i].op == CC_OPT_UPCAST && app[i].axis == 1) up1 *= app[i].amount;
      if (app[i].op == CC_OPT_UPCAST && app[i].axis == 0) up0 = app[i].amount;
      unroll += app[i].op == CC_OPT_UNROLL;
    }
    CHECK_EQ_INT(up1, tiles ? 16 : 4); /* 64^3 is under the wide tile's 2^30 multiply-adds */
    CHECK_EQ_INT(up0, tiles ? 8 : 4);
    CHECK_EQ_INT((long long)unroll, tiles ? 0 : 1);
    for (size_t i = 0; i < napp; i++) CHECK(app[i].op != CC_OPT_SWAP); /* 16 KiB panel: no swap */
    free(app);
    check(tiles ? "matmul, register tile" : "matmul, reference upcasts", MATMUL_64, &c2, false, false);
  }
  /* SWAP of two LOOP axes (CPU only) keeps the results */
  otu_check_text(g_ctx, MATMUL_64, &c2, "UPCAST:1:16,UPCAST:0:8,SWAP:0:1,THREAD:0:2", NULL, 0, 5, NULL);
  /* a 2048 matmul's B panel (16 MiB) is cache-blocked along k (KBLOCK, compiler/kblock_test.c); with a prime k
   * (2039: no block divides it) it exceeds the swap threshold instead: the lane axis becomes the outer loop */
  for (int kk = 2048; kk >= 2039; kk -= 9) {
    char text[600];
    snprintf(text, sizeof text,
             "(kernel mm (let c (buf 0 float32 4194304)) (let a (buf 1 float32 %d)) (let b (buf 2 float32 %d))"
             " (let r0 (range 0 2048 loop)) (let r1 (range 1 2048 loop)) (let k (range 1002 %d reduce))"
             " (sink (store (index c (+ (* r0 2048) r1))"
             " (reduce add (* (load (index a (+ (* r0 %d) k))) (load (index b (+ (* k 2048) r1)))) k) r0 r1)))",
             2048 * kk, 2048 * kk, kk, kk);
    c2.cpu_tiles = true;
    const uop *big = NULL, *out = NULL;
    CHECK_OK(otu_prep(g_ctx, text, &c2, &big));
    cc_opt *app = NULL;
    size_t napp = 0;
    if (big) CHECK_OK(otu_opt(g_ctx, big, &c2, NULL, &out, &app, &napp));
    bool swapped = false, blocked = false;
    for (size_t i = 0; i < napp; i++) {
      swapped |= app[i].op == CC_OPT_SWAP && app[i].axis == 0 && app[i].amount == 1;
      blocked |= app[i].op == CC_OPT_KBLOCK;
    }
    CHECK(swapped == (kk == 2039));
    CHECK(blocked == (kk == 2048));
    free(app);
  }
}

/* Matmuls whose output width whole 16-lane tiles (2 per thread pair; 32-lane tiles first where vectors hold 16 floats
 * and the product is at least 2^30 multiply-adds) do not cover: the lane axis is padded (PADTO) up to them when that
 * adds at most 1/8 more work; a height that leaves an odd count of 8-row tiles takes 10 or 6 rows when that count is
 * even (so THREAD can split it), else is padded like the width; else 8 or 4 rows as the height allows; a width the pad
 * would grow by more falls back to the reference's upcasts. Expectations are computed here from the shape; every
 * kernel runs against the interpreter. */
static void check_odd_reduce_tile(const cc_target *t) {
  static const int SHAPES[][3] = {{100, 37, 61}, {24, 8, 120}, {40, 16, 1000}, {8, 16, 250}, {16, 4, 36},
                                  {12, 5, 60},   {9, 3, 31},  {64, 64, 64},
                                  {1000, 2, 64}, {36, 3, 64}, {20, 2, 64}, {120, 4, 32}, {136, 3, 40}};
  cc_target c2 = *t;
  c2.nt_store_min_B = 0;
  c2.cpu_tiles = true;
  for (size_t si = 0; si < sizeof SHAPES / sizeof SHAPES[0]; si++) {
    int m = SHAPES[si][0], k = SHAPES[si][1], n = SHAPES[si][2];
    char text[700];
    snprintf(text, sizeof text,
             "(kernel mm (let c (buf 0 float32 %d)) (let a (buf 1 float32 %d)) (let b (buf 2 float32 %d))"
             " (let r0 (range 0 %d loop)) (let r1 (range 1 %d loop)) (let k (range 1002 %d reduce))"
             " (sink (store (index c (+ (* r0 %d) r1))"
             " (reduce add (* (load (index a (+ (* r0 %d) k))) (load (index b (+ (* k %d) r1)))) k) r0 r1)))",
             m * n, m * k, k * n, m, n, k, n, k, n);
    int lanes = 32, padded = (n + 63) / 64 * 64;
    if (t->vector_max < 16 || (int64_t)m * k * n < ((int64_t)1 << 30) || padded - n > n / 8)
      lanes = 16, padded = (n + 31) / 32 * 32;
    bool want_tile = padded - n <= n / 8;
    /* rows: 8 with an even count of row tiles (or all rows); 10 (a 16-float target) or 6 with an even count; a pad
     * to 16 adding at most 1/8; 8; 4 */
    int want_rows = 8, want_row_pad = 0, pad16 = (m + 15) / 16 * 16;
    if (m % 16 == 0 || m == 8) {
    } else if (t->vector_max >= 16 && m % 20 == 0) {
      want_rows = 10;
    } else if (m % 12 == 0) {
      want_rows = 6;
    } else if (pad16 - m <= m / 8) {
      want_row_pad = 16;
    } else if (m % 8 != 0) {
      want_rows = m % 4 == 0 ? 4 : 0;
    }
    if (!want_rows) want_tile = false;
    const uop *mm = NULL, *o = NULL;
    CHECK_OK(otu_prep(g_ctx, text, &c2, &mm));
    cc_opt *app = NULL;
    size_t napp = 0;
    if (mm) CHECK_OK(otu_opt(g_ctx, mm, &c2, NULL, &o, &app, &napp));
    int64_t up1 = 1, up0 = 0, pad = 0, row_pad = 0;
    bool up16 = false; /* the tile's first upcast (the reference's are 3 or 4) */
    for (size_t i = 0; i < napp; i++) {
      if (app[i].op == CC_OPT_UPCAST && app[i].axis == 1) up1 *= app[i].amount;
      up16 |= app[i].op == CC_OPT_UPCAST && app[i].axis == 1 && app[i].amount == 16;
      if (app[i].op == CC_OPT_UPCAST && app[i].axis == 0) up0 = app[i].amount;
      if (app[i].op == CC_OPT_PADTO && app[i].axis == 1) pad = app[i].amount;
      if (app[i].op == CC_OPT_PADTO && app[i].axis == 0) row_pad = app[i].amount;
    }
    if (want_tile) {
      CHECK_EQ_INT(up1, lanes);
      CHECK_EQ_INT(up0, want_rows);
      CHECK_EQ_INT(pad, padded == n ? 0 : 2 * lanes);
      CHECK_EQ_INT(row_pad, want_row_pad);
    } else {
      CHECK(!up16 && pad == 0 && row_pad == 0);
    }
    free(app);
    char what[64];
    snprintf(what, sizeof what, "matmul %dx%dx%d", m, k, n);
    check(what, text, &c2, false, false);
  }
}

static void run_all(const cc_target *t) {
  cc_target nt = *t;
  nt.nt_store_min_B = 4096;
  bool x86 = t->nt_store_min_B > 0; /* the c target enables NT stores on x86_64 only */
  if (x86) {
    check("add 4096", ADD_4096, &nt, true, true);
    check("add 512 (small)", ADD_512, &nt, false, false);
    check("add 4099 (single stores)", ADD_4099, &nt, false, true);
    check("add int32 (single stores)", ADD_INT, &nt, false, true);
    check("saxpy (output read)", SAXPY, &nt, false, false);
    check("transpose 64", TRANSPOSE_64, &nt, true, true);
    check("masked store", MASKED, &nt, false, false);
    /* with vectorization both stores are float4 values: each goes out at once, in program order, as HCQ_NT4 */
    check("two index bases (program order)", TWO_BASES, &nt, nt.vector_max >= 4, true);
    /* misaligned buffers break the target's alignment promise, so this target promises none (unaligned vector
     * types); the NT path must still fall back at run time */
    cc_target loose = nt;
    loose.buf_align_B = 4;
    check_misaligned(&loose);
    check_misaligned_transpose(&loose);
  }
  check_transpose_shapes(t, x86);
  /* the default threshold: none of these small kernels qualify */
  check("add 4096, default threshold", ADD_4096, t, false, false);
  check_transpose_tile(t);
  check_reduce_tile(t);
  check_odd_reduce_tile(t);
}

int main(void) {
  char dir[] = "/tmp/hcq-render-nt-test-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("XDG_CACHE_HOME", dir, 1);
  if (!tu_have("cc")) {
    fprintf(stderr, "render_c_nt_test: no cc (install gcc): skipped\n");
    return 77;
  }
  CHECK_OK(uop_ctx_create(&g_ctx));
  if (!g_ctx) return testing_summary("render_c_nt");
  cc_target t;
  CHECK_OK(cc_target_get("c", 2, &t));
  setenv("HCQ_CC", "cc", 1);
  run_all(&t);
  if (tu_have("clang-19")) {
    setenv("HCQ_CC", "clang-19", 1);
    run_all(&t);
  } else {
    fprintf(stderr, "render_c_nt_test: clang-19 not installed (Debian package clang-19): clang half skipped\n");
  }
  uop_ctx_destroy(g_ctx);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", dir);
  return testing_summary("render_c_nt");
}
