/* The --check comparison (krun_compare, rule in docs/FORMATS.md): NaN matches any NaN and nothing else, an infinity
 * only the same infinity, -0 matches +0, finite floats within rel |want| + abs, integers bit for bit; for every
 * float dtype. Then end to end: kernels whose correct outputs are inf, NaN and -0 pass --check, a wrong one fails,
 * and the check fill makes a dropped float16 round trip visible. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/interp.h"
#include "base/testing.h"
#include "tools/krun.h"

static void put(void *buf, uop_scalar s, int i, double v) {
  switch (s) {
    case UOP_FLOAT16: ((uint16_t *)buf)[i] = cc_f64_to_f16(v); break;
    case UOP_BFLOAT16: ((uint16_t *)buf)[i] = cc_f64_to_bf16(v); break;
    case UOP_FLOAT32: ((float *)buf)[i] = (float)v; break;
    default: ((double *)buf)[i] = v; break;
  }
}

static void test_rule(void) {
  static const struct {
    double got, want;
    bool match;
  } cases[] = {
      {INFINITY, INFINITY, true},   {-INFINITY, -INFINITY, true}, {INFINITY, -INFINITY, false},
      {INFINITY, 1e4, false},       {1e4, INFINITY, false},       {-INFINITY, -1e4, false},
      {NAN, NAN, true},             {-NAN, NAN, true},            {NAN, 1.0, false},
      {1.0, NAN, false},            {NAN, INFINITY, false},       {INFINITY, NAN, false},
      {-0.0, 0.0, true},            {0.0, -0.0, true},            {1.0, 1.0, true},
      {2.0, 1.0, false},            {1.0, 0.0, false},            {0.0, 1.0, false},
  };
  const uop_scalar fl[] = {UOP_FLOAT16, UOP_BFLOAT16, UOP_FLOAT32, UOP_FLOAT64};
  for (size_t f = 0; f < 4; f++) {
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
      double g[1], w[1];
      put(g, fl[f], 0, cases[c].got);
      put(w, fl[f], 0, cases[c].want);
      krun_cmp acc = {0};
      krun_compare(g, w, uop_dt(fl[f]), 1, 1e-4, 1e-5, &acc);
      if ((acc.mismatches == 0) != cases[c].match)
        fprintf(stderr, "  %s: got %g want %g: %s\n", uop_dt_name(uop_dt(fl[f])), cases[c].got, cases[c].want,
                acc.mismatches ? "mismatch" : "match");
      CHECK_EQ_INT(acc.mismatches == 0, cases[c].match);
    }
  }
  /* a NaN with another payload (a distinct bit pattern) still matches */
  uint32_t a = 0x7fc00000, b = 0xffc12345;
  krun_cmp acc = {0};
  krun_compare(&a, &b, uop_dt(UOP_FLOAT32), 1, 0, 0, &acc);
  CHECK_EQ_INT(acc.mismatches, 0);
  int32_t i1 = 5, i2 = 6;
  krun_compare(&i1, &i2, uop_dt(UOP_INT32), 1, 1, 1, &acc);
  CHECK_EQ_INT(acc.mismatches, 1);
}

/* Run `text` on the CPU device with --check's fill and compare with the interpreter: the number of mismatches. */
static size_t check_kernel(cpu_device *dev, const char *text, const float *in0, size_t nin0, bool device_only) {
  krun k = {0};
  cc_kbuf *host = NULL;
  size_t nhost = 0;
  size_t bad = SIZE_MAX;
  cc_opt *ov = NULL;
  size_t nov = 0;
  if (cc_opts_parse("UPCAST:0:4", &ov, &nov)) return bad;
  cc_options o = {.opts = ov, .nopts = nov};
  hcq_status st = krun_compile_text(&k, text, &o, 2);
  if (!st) st = cc_kernel_buffers(k.sink, &host, &nhost);
  if (!st) st = krun_setup(&k, dev);
  if (!st) st = cc_kbufs_alloc_fill(host, nhost, 7);
  if (!st) {
    krun_fill(&k, 7);
    if (in0) { /* slot 1 from the caller (device_only: a wrong device result, as if the kernel were wrong) */
      memcpy(krun_buf(&k, 1)->data, in0, nin0 * sizeof *in0);
      if (!device_only) memcpy(host[1].data, in0, nin0 * sizeof *in0);
    }
    st = krun_exec(&k, 30000, NULL);
  }
  krun_cmp cmp = {0};
  if (!st) st = krun_check_interp(&k, host, nhost, 1e-4, 1e-5, &cmp);
  if (st) fprintf(stderr, "  check_kernel: %s\n", hcq_status_message(st));
  else bad = cmp.mismatches;
  hcq_status_free(st);
  if (host) cc_kbufs_free(host, nhost);
  krun_free(&k);
  free(ov);
  return bad;
}

static void test_end_to_end(void) {
  cpu_device *dev = NULL;
  CHECK_OK(cpu_device_create(2, &dev));
  if (!dev) return;
  /* correct outputs inf, -inf, NaN and -0 (the old rule failed inf - inf = NaN) */
  const char *special = "(kernel sp (let o (buf 0 float32 16)) (let a (buf 1 float32 16)) (let r (range 0 16))"
                        " (sink (store (index o r) (cast float32 (cast float16 (load (index a r)))) r)))";
  float in[16] = {70000, -70000, 65519, 1e6f, NAN, -0.0f, 1.0f / 3, 65504, 1e-8f, -1e-8f, 0, 1, 2, 3, 4, 5};
  CHECK_EQ_INT(check_kernel(dev, special, in, 16, false), 0);
  /* wrong results are caught: inf where the reference is finite, NaN where it is a number */
  float wrong[16];
  for (int i = 0; i < 16; i++) wrong[i] = i % 2 ? 70000.0f : NAN;
  CHECK_EQ_INT(check_kernel(dev, special, wrong, 16, true), 32); /* the output and the input buffer */
  /* the check fill rounds in float16: a kernel that dropped the round trip would differ from the interpreter */
  float fill[64];
  cc_fill_buffer(fill, uop_dt(UOP_FLOAT32), 64, 8);
  int rounds = 0;
  for (int i = 0; i < 64; i++) rounds += cc_f16_to_f32(cc_f64_to_f16(fill[i])) != fill[i];
  CHECK(rounds > 56);
  cpu_device_destroy(dev);
}

int main(void) {
  test_rule();
  test_end_to_end();
  return testing_summary("krun_check_test");
}
