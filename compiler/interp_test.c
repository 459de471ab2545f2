/* Tests of the reference interpreter against results computed directly in C (hand-written loops, hand values). */
#include <math.h>
#include <time.h>

#include "compiler/cc_test_util.h"
#include "compiler/interp.h"
#include "compiler/kernel_text.h"
#include "base/testing.h"

typedef struct kfix {
  uop_ctx *ctx;
  const uop *k;
  cc_kbuf *bufs;
  size_t nbufs;
  void *ptrs[8];
  size_t sizes[8];
} kfix;

/* Parse (text or file), list and fill the buffers (seed 1). */
static bool load(kfix *f, const char *text, const char *path) {
  memset(f, 0, sizeof *f);
  CHECK_OK(uop_ctx_create(&f->ctx));
  hcq_status st = path ? cc_kernel_parse_file(f->ctx, path, &f->k)
                       : cc_kernel_parse(f->ctx, text, strlen(text), "t.uop", &f->k);
  if (st) {
    fprintf(stderr, "parse: %s\n", hcq_status_message(st));
    hcq_status_free(st);
    CHECK(0);
    return false;
  }
  CHECK_OK(cc_kernel_buffers(f->k, &f->bufs, &f->nbufs));
  CHECK_OK(cc_kbufs_alloc_fill(f->bufs, f->nbufs, 1));
  for (size_t i = 0; i < f->nbufs; i++) {
    CHECK(f->bufs[i].slot == (int)i);
    f->ptrs[i] = f->bufs[i].data;
    f->sizes[i] = f->bufs[i].size_B;
  }
  return true;
}

static hcq_status run(kfix *f, const uop_var_val *vars, size_t nvars) {
  return cc_interp_run(f->k, f->ptrs, f->sizes, f->nbufs, vars, nvars);
}

static void unload(kfix *f) {
  cc_kbufs_free(f->bufs, f->nbufs);
  uop_ctx_destroy(f->ctx);
}

static float *F(kfix *f, int slot) { return f->ptrs[slot]; }

static void test_add8(void) {
  kfix f;
  if (!load(&f, "(kernel add (let r (range 0 8)) (sink (store (index (buf 0 float32 8) r) (+ (load (index (buf 1 "
                "float32 8) r)) (load (index (buf 2 float32 8) r))) r)))", NULL))
    return;
  for (int i = 0; i < 8; i++) F(&f, 1)[i] = (float)i, F(&f, 2)[i] = 0.5f * (float)i;
  CHECK_OK(run(&f, NULL, 0));
  float want[8] = {0, 1.5f, 3, 4.5f, 6, 7.5f, 9, 10.5f};
  for (int i = 0; i < 8; i++) CHECK(F(&f, 0)[i] == want[i]);
  unload(&f);
}

static void test_sum_1_to_100(void) {
  kfix f;
  if (!load(&f, "(kernel s (let r (range 1000 100 reduce)) (sink (store (index (buf 0 int32 1) 0) (reduce add (load "
                "(index (buf 1 int32 100) r)) r)) (store (index (buf 2 float32 1) 0) (reduce add (cast float32 (load "
                "(index (buf 1 int32 100) r))) r))))", NULL))
    return;
  int32_t *x = f.ptrs[1];
  for (int i = 0; i < 100; i++) x[i] = i + 1;
  CHECK_OK(run(&f, NULL, 0));
  CHECK_EQ_INT(((int32_t *)f.ptrs[0])[0], 5050);
  CHECK(F(&f, 2)[0] == 5050.0f);
  unload(&f);
}

static void test_matmul(void) {
  kfix f;
  if (!load(&f, "(kernel mm (let r0 (range 0 4)) (let r1 (range 1 4)) (let k (range 1002 4 reduce))\n"
                " (sink (store (index (buf 0 float32 16) (+ (* r0 4) r1)) (reduce add (* (load (index (buf 1 float32 16)"
                " (+ (* r0 4) k))) (load (index (buf 2 float32 16) (+ (* k 4) r1)))) k) r0 r1)))", NULL))
    return;
  float *a = F(&f, 1), *b = F(&f, 2);
  for (int i = 0; i < 16; i++) a[i] = (float)(i % 5) - 2, b[i] = (float)(i * 3 % 7) * 0.25f;
  CHECK_OK(run(&f, NULL, 0));
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) {
      float s = 0;
      for (int k = 0; k < 4; k++) s += a[i * 4 + k] * b[k * 4 + j];
      CHECK(F(&f, 0)[i * 4 + j] == s);
    }
  unload(&f);
  /* the 64x64 example on the deterministic fill (multiples of 1/16: exact in float32) */
  if (!load(&f, NULL, "examples/matmul.uop")) return;
  a = F(&f, 1), b = F(&f, 2);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  CHECK_OK(run(&f, NULL, 0));
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double s_el = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
  printf("interp: matmul 64x64x64 = 262144 inner points in %.1f ms (%.1f M points/s)\n", s_el * 1e3,
         262144 / s_el * 1e-6);
  int bad = 0;
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < 64; j++) {
      double s = 0;
      for (int k = 0; k < 64; k++) s += (double)a[i * 64 + k] * b[k * 64 + j];
      bad += !(fabs(F(&f, 0)[i * 64 + j] - s) <= 1e-5 * fabs(s) + 1e-5); /* float32 products of the fill round */
    }
  CHECK_EQ_INT(bad, 0);
  unload(&f);
}

static void test_softmax(void) {
  kfix f;
  if (!load(&f, NULL, "examples/softmax.uop")) return;
  CHECK_OK(run(&f, NULL, 0));
  float *x = F(&f, 1), *out = F(&f, 0);
  double worst = 0;
  for (int r = 0; r < 64; r++) {
    double m = -INFINITY, s = 0;
    for (int j = 0; j < 256; j++) m = fmax(m, x[r * 256 + j]);
    for (int j = 0; j < 256; j++) s += exp(x[r * 256 + j] - m);
    for (int j = 0; j < 256; j++) worst = fmax(worst, fabs(out[r * 256 + j] - exp(x[r * 256 + j] - m) / s));
  }
  CHECK(worst < 1e-6);
  unload(&f);
}

static void test_masked_store(void) {
  kfix f;
  if (!load(&f, NULL, "examples/masked_store.uop")) return;
  for (int i = 0; i < 128; i++) F(&f, 0)[i] = -99;
  CHECK_OK(run(&f, NULL, 0));
  int bad = 0;
  for (int i = 0; i < 128; i++) bad += F(&f, 0)[i] != (i < 100 ? 2 * F(&f, 1)[i] : -99);
  CHECK_EQ_INT(bad, 0);
  unload(&f);
}

static void test_conv2d(void) {
  kfix f;
  if (!load(&f, NULL, "examples/conv2d.uop")) return;
  CHECK_OK(run(&f, NULL, 0));
  float *in = F(&f, 1), *w = F(&f, 2);
  int bad = 0;
  for (int co = 0; co < 4; co++)
    for (int y = 0; y < 16; y++)
      for (int x = 0; x < 16; x++) { /* the fill's products round: the reference may be contracted to fma */
        float want = tu_conv2d_ref(in, w, co, y, x);
        bad += !(fabsf(F(&f, 0)[co * 256 + y * 16 + x] - want) <= 1e-5f * fabsf(want) + 1e-6f);
      }
  CHECK_EQ_INT(bad, 0);
  unload(&f);
}

static void test_other_examples(void) {
  kfix f;
  if (load(&f, NULL, "examples/max_rows.uop")) {
    CHECK_OK(run(&f, NULL, 0));
    int bad = 0;
    for (int r = 0; r < 64; r++) {
      float m = -INFINITY;
      for (int j = 0; j < 256; j++) m = fmaxf(m, F(&f, 1)[r * 256 + j]);
      bad += F(&f, 0)[r] != m;
    }
    CHECK_EQ_INT(bad, 0);
    unload(&f);
  }
  if (load(&f, NULL, "examples/transpose.uop")) {
    CHECK_OK(run(&f, NULL, 0));
    int bad = 0;
    for (int i = 0; i < 64; i++)
      for (int j = 0; j < 128; j++) bad += F(&f, 0)[j * 64 + i] != F(&f, 1)[i * 128 + j];
    CHECK_EQ_INT(bad, 0);
    unload(&f);
  }
  if (load(&f, NULL, "examples/transcendental.uop")) {
    CHECK_OK(run(&f, NULL, 0));
    double worst = 0;
    for (int i = 0; i < 1024; i++) {
      double v = F(&f, 1)[i], q = v * v + 1;
      worst = fmax(worst, fabs(F(&f, 0)[i] - (sqrt(q) + sin(v) + exp2(v) * log2(q))));
    }
    CHECK(worst < 1e-5);
    unload(&f);
  }
  if (load(&f, NULL, "examples/sum.uop")) {
    CHECK_OK(run(&f, NULL, 0));
    double s = 0;
    for (int i = 0; i < 65536; i++) s += F(&f, 1)[i];
    CHECK(fabs(F(&f, 0)[0] - s) <= 1e-5 * fabs(s) + 1e-3); /* the fill rounds in float32 sums a little */
    unload(&f);
  }
  if (load(&f, NULL, "examples/saxpy.uop")) {
    float *y0 = malloc(f.sizes[0]);
    memcpy(y0, F(&f, 0), f.sizes[0]);
    uop_var_val n = {"n", 1000};
    CHECK_OK(run(&f, &n, 1));
    int bad = 0;
    for (int i = 0; i < 2000; i++) bad += F(&f, 0)[i] != (i < 1000 ? 2.5f * F(&f, 1)[i] + y0[i] : y0[i]);
    CHECK_EQ_INT(bad, 0);
    CHECK_ERR(run(&f, NULL, 0), HCQ_CODE_NOT_FOUND, "no value for variable n");
    uop_var_val big = {"n", 2000000};
    CHECK_ERR(run(&f, &big, 1), HCQ_CODE_INVALID, "variable n = 2000000 is outside 1..1048576");
    free(y0);
    unload(&f);
  }
  /* the int64-index kernel: buffers are listed with their 3 GiB sizes (not allocated) */
  uop_ctx *ctx;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *k;
  CHECK_OK(cc_kernel_parse_file(ctx, "examples/big_int64.uop", &k));
  cc_kbuf *b = NULL;
  size_t nb = 0;
  if (sizeof(size_t) == 4) { /* 32-bit hosts: a 12 GiB buffer has no size_t size */
    CHECK_ERR(cc_kernel_buffers(k, &b, &nb), HCQ_CODE_INVALID, "too large");
  } else {
    CHECK_OK(cc_kernel_buffers(k, &b, &nb));
    CHECK_EQ_INT(nb, 2);
    if (nb == 2) CHECK(b[1].nelems == 3221225472 && b[1].size_B == (size_t)3221225472u * 1);
  }
  free(b);
  uop_ctx_destroy(ctx);
}

/* Integer semantics per dtype: wrap, truncating division, shifts, casts, and the errors. */
static void test_int_semantics(void) {
  kfix f;
  if (!load(&f, "(kernel ints (let r (range 0 4)) (let x (load (index (buf 1 int32 4) r)))\n"
                " (sink (store (index (buf 0 int8 4) r) (+ (cast int8 x) (const 100 int8)) r)\n"
                "       (store (index (buf 2 int32 4) r) (// x (const 2 int32)) r)\n"
                "       (store (index (buf 3 int32 4) r) (% x (const 3 int32)) r)\n"
                "       (store (index (buf 4 uint32 4) r) (+ (cast uint32 x) (const 4294967295 uint32)) r)\n"
                "       (store (index (buf 5 float16 4) r) (* (cast float16 x) (const 0.1 float16)) r)\n"
                "       (store (index (buf 6 int32 4) r) (cast int32 (* (cast float32 x) 2.75)) r)))", NULL))
    return;
  int32_t *x = f.ptrs[1];
  int32_t xs[4] = {-7, 7, 100, -128};
  memcpy(x, xs, sizeof xs);
  CHECK_OK(run(&f, NULL, 0));
  int8_t *o8 = f.ptrs[0];
  int32_t *d = f.ptrs[2], *m = f.ptrs[3], *c = f.ptrs[6];
  uint32_t *u = f.ptrs[4];
  uint16_t *h = f.ptrs[5];
  for (int i = 0; i < 4; i++) {
    CHECK_EQ_INT(o8[i], (int8_t)(uint8_t)((uint8_t)(int8_t)xs[i] + 100u));
    CHECK_EQ_INT(d[i], xs[i] / 2);
    CHECK_EQ_INT(m[i], xs[i] % 3);
    CHECK_EQ_INT(u[i], (uint32_t)xs[i] - 1u);
    CHECK_EQ_INT(c[i], (int32_t)((float)xs[i] * 2.75f));
  }
  CHECK_EQ_INT(o8[2], -56);  /* 100 + 100 wraps in int8 */
  CHECK_EQ_INT(d[0], -3);    /* truncating division */
  CHECK_EQ_INT(m[0], -1);
  /* float16: 100 * 0.1 rounded in half = 10.0 (0x4900); -7 * 0.1 = -0.7 in half (0xb99a) */
  CHECK_EQ_INT(h[2], 0x4900);
  CHECK_EQ_INT(h[0], 0xb99a);
  unload(&f);

  if (load(&f, "(kernel dz (let r (range 0 4)) (sink (store (index (buf 0 int32 4) r) (// (const 1 int32) (load "
               "(index (buf 1 int32 4) r))) r)))", NULL)) {
    memset(f.ptrs[1], 0, 16);
    CHECK_ERR(run(&f, NULL, 0), HCQ_CODE_INVALID, "division by zero in IDIV");
    unload(&f);
  }
}

/* A reduce inside a reduce, and a reduce whose end depends on the store's range (prefix sums). */
static void test_nested_reduce(void) {
  kfix f;
  if (!load(&f, "(kernel nr (let i (range 1000 8 reduce)) (let j (range 1001 4 reduce)) (let r (range 0 8))\n"
                " (let k (range 1002 (+ r 1) reduce))\n"
                " (sink (store (index (buf 0 float32 1) 0) (reduce add (reduce max (load (index (buf 1 float32 32) (+ (* i"
                " 4) j))) j) i))\n"
                "       (store (index (buf 2 float32 8) r) (reduce add (load (index (buf 1 float32 32) k)) k) r)))",
            NULL))
    return;
  float *x = F(&f, 1), want = 0, pre = 0;
  for (int i = 0; i < 8; i++) {
    float m = -INFINITY;
    for (int j = 0; j < 4; j++) m = fmaxf(m, x[i * 4 + j]);
    want += m;
  }
  CHECK_OK(run(&f, NULL, 0));
  CHECK(F(&f, 0)[0] == want);
  for (int r = 0; r < 8; r++) {
    pre += x[r];
    CHECK(F(&f, 2)[r] == pre);
  }
  unload(&f);
}

static void test_errors(void) {
  kfix f;
  /* provably out-of-bounds kernels are refused when parsed (kernel_access_fuzz_test); the interpreter still bounds
   * every access by the buffers it is given */
  if (!load(&f, "(kernel oob (let r (range 0 8)) (sink (store (index (buf 0 float32 8) r) (load (index (buf 1 float32 "
                "9) (+ r 1))) r)))", NULL))
    return;
  f.sizes[1] = 8 * 4;
  CHECK_ERR(run(&f, NULL, 0), HCQ_CODE_INVALID, "load out of bounds: buffer slot 1 (float32[9]) index 8 (valid 0..7)");
  /* a buffer shorter than declared bounds the accesses by its bytes */
  f.sizes[1] = 4 * 4;
  CHECK_ERR(run(&f, NULL, 0), HCQ_CODE_INVALID, "index 4 (valid 0..3)");
  CHECK_ERR(cc_interp_run(f.k, f.ptrs, f.sizes, 1, NULL, 0), HCQ_CODE_INVALID, "buffer slot 1 but fewer buffers");
  unload(&f);
  if (!load(&f, "(kernel oob (let r (range 0 9)) (sink (store (index (buf 0 float32 9) r) 1.0 r)))", NULL)) return;
  f.sizes[0] = 8 * 4;
  CHECK_ERR(run(&f, NULL, 0), HCQ_CODE_INVALID, "store out of bounds: buffer slot 0 (float32[9]) index 8");
  unload(&f);
}

static void test_fill(void) {
  float a[1000], b[1000];
  cc_fill_buffer(a, uop_dt(UOP_FLOAT32), 1000, 7);
  cc_fill_buffer(b, uop_dt(UOP_FLOAT32), 1000, 7);
  CHECK(memcmp(a, b, sizeof a) == 0);
  int out = 0;
  int exact16 = 0;
  for (int i = 0; i < 1000; i++) {
    out += a[i] < -2 || a[i] >= 2 || a[i] * 65536 != floorf(a[i] * 65536);
    exact16 += cc_f16_to_f32(cc_f32_to_f16(a[i])) == a[i] || cc_bf16_to_f32(cc_f32_to_bf16(a[i])) == a[i];
  }
  CHECK_EQ_INT(out, 0);
  CHECK(exact16 < 50); /* the values round in float16 and bfloat16 (a dropped conversion is visible) */
  double d[1000];
  cc_fill_buffer(d, uop_dt(UOP_FLOAT64), 1000, 7);
  for (int i = 0; i < 1000; i++) out += (double)(float)d[i] == d[i];
  CHECK_EQ_INT(out, 0);
  /* one rounding from double: 1 + 2^-11 + 2^-40 is above the float16 tie; via float it would be the tie -> 1 */
  CHECK_EQ_INT(cc_f64_to_f16(1 + 0x1p-11 + 0x1p-40), 0x3c01);
  CHECK_EQ_INT(cc_f64_to_bf16(1 + 0x1p-8 + 0x1p-40), 0x3f81);
  CHECK_EQ_INT(cc_f64_to_f16(65520.0), 0x7c00);
  CHECK_EQ_INT(cc_f64_to_f16(-0x1p-25), 0x8000);
  CHECK_EQ_INT(cc_f64_to_f16(0x1p-25 + 0x1p-40), 0x0001);
  /* half conversions against known encodings */
  CHECK_EQ_INT(cc_f32_to_f16(1.0f), 0x3c00);
  CHECK_EQ_INT(cc_f32_to_f16(65504.0f), 0x7bff);
  CHECK_EQ_INT(cc_f32_to_f16(1e6f), 0x7c00);
  CHECK_EQ_INT(cc_f32_to_f16(5.960464477539063e-08f), 0x0001);
  CHECK(cc_f16_to_f32(0x0001) == 5.960464477539063e-08f);
  CHECK(cc_f16_to_f32(0xc000) == -2.0f);
  CHECK_EQ_INT(cc_f32_to_bf16(1.0f), 0x3f80);
  CHECK(cc_bf16_to_f32(0x4049) == 3.140625f);
}

int main(void) {
  test_add8();
  test_sum_1_to_100();
  test_matmul();
  test_softmax();
  test_masked_store();
  test_conv2d();
  test_other_examples();
  test_int_semantics();
  test_nested_reduce();
  test_errors();
  test_fill();
  return testing_summary("interp_test");
}
