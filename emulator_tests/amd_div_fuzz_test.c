/* Differential fuzzer of integer // and % on amd:0 (the AMD mock) against the reference interpreter: random
 * one-store kernels whose dividend and divisor carry the known bits LLVM reasons about (constants from the edge
 * cases, `| top ones`, `& low mask`, `>>`, `+ constant`, sign-extended int8 loads; divisors masked and or'ed so they
 * are never 0) on int32/uint32/int64/uint64, compiled for amdgpu:gfx1100 without opts or with the heuristic. The
 * general AMD fuzzer (rdna3_kernel_gen.h) keeps its dividends opaque; this one aims at the class amd_div_test
 * covers (render_llvm.c, amd_div_opaque); one kernel in three shares a loop-invariant divisor with a guarded
 * a[r0] // Y (see fuzz_case). Seed: HCQ_FUZZ_SEED (fixed default); budget: HCQ_FUZZ_SECONDS
 * (default 3). */
#include "emulator_tests/amd_div_test_util.h"
#include "emulator_tests/amd_rt_test_util.h"
#include "base/fuzz.h"

static uint64_t g_state;

static uint32_t rnd(uint32_t n) { /* xorshift64* */
  g_state ^= g_state >> 12;
  g_state ^= g_state << 25;
  g_state ^= g_state >> 27;
  return (uint32_t)((g_state * 0x2545f4914f6cdd1dull) >> 32) % n;
}

/* an interesting value: edges of the dtype, powers of two +-1 around 2^23/2^24/2^31/2^32, small ones */
static int64_t interesting(const dtinfo *d) {
  int k = (int)rnd((uint32_t)d->bits);
  switch (rnd(6)) {
    case 0: return (int64_t)(UINT64_C(1) << k) + (int64_t)rnd(3) - 1;
    case 1: return -(int64_t)(UINT64_C(1) << k) + (int64_t)rnd(3) - 1;
    case 2: return (int64_t[]){-1, INT64_MIN, INT64_MAX, 0xc00002, (1 << 24) + 1, -128, (1 << 23) - 1}[rnd(7)];
    case 3: return (int64_t)rnd(17) - 8;
    default: return (int64_t)(((uint64_t)rnd(1u << 31) << 33) ^ ((uint64_t)rnd(1u << 31) << 2) ^ rnd(4));
  }
}

static void cst(FILE *f, const dtinfo *d, int64_t v) {
  char b[64];
  fputs(adt_cst(b, sizeof b, d, v), f);
}

/* an operand over the load L (slot a or b) and its int8 twin LC (slot c or e) */
static void operand(FILE *f, const dtinfo *d, bool divisor) {
  const char *L = divisor ? "(load (index b r0))" : "(load (index a r0))";
  const char *LC = divisor ? "(load (index e r0))" : "(load (index c r0))";
  /* biased toward known high bits: top ones down to bit 8 (32-bit) or 16 (64-bit), small divisor masks */
  int64_t ones = (int64_t)(~UINT64_C(0) << (1 + rnd((uint32_t)d->bits * 3 / 4)));
  int64_t mask = (int64_t)((UINT64_C(1) << (1 + rnd(divisor ? 12 : (uint32_t)d->bits - 2))) - 1);
  if (divisor) fprintf(f, "(| ");
  static const int pick_num[] = {0, 1, 1, 1, 2, 3, 3, 4, 5, 6, 6, 6}, pick_den[] = {0, 1, 1, 2, 2, 2, 3, 3, 4};
  switch (divisor ? pick_den[rnd(9)] : pick_num[rnd(12)]) {
    case 0: fprintf(f, "%s", L); break;
    case 1: fprintf(f, "(| %s ", L), cst(f, d, ones), fprintf(f, ")"); break;
    case 2: fprintf(f, "(& %s ", L), cst(f, d, mask), fprintf(f, ")"); break;
    case 3: fprintf(f, "(cast %s %s)", d->name, LC); break;
    case 4: fprintf(f, "(>> %s ", L), cst(f, d, 1 + rnd((uint32_t)d->bits - 1)), fprintf(f, ")"); break;
    case 5: fprintf(f, "(+ %s ", L), cst(f, d, interesting(d)), fprintf(f, ")"); break;
    default: cst(f, d, interesting(d)); break;
  }
  if (divisor) fprintf(f, " "), cst(f, d, 1), fprintf(f, ")"); /* odd: never 0 */
}

/* Run text on dev and compare every buffer bit for bit with the interpreter's (etu_compare goes through double,
 * which cannot tell 64-bit integers apart). Returns the differing elements, or -1 if the run failed. */
static long run_exact(hcq_rt_device *dev, const uop *sink, const char *text, const char *opts) {
  cc_kbuf *ref = NULL, *got = NULL;
  size_t nref = 0, ngot = 0;
  CHECK_OK(cc_kernel_buffers(sink, &ref, &nref));
  CHECK_OK(cc_kernel_buffers(sink, &got, &ngot));
  CHECK_OK(cc_kbufs_alloc_fill(ref, nref, 7));
  CHECK_OK(cc_kbufs_alloc_fill(got, ngot, 7));
  void *ptrs[8] = {0};
  size_t sizes[8] = {0};
  for (size_t i = 0; i < nref && ref[i].slot < 8; i++) ptrs[ref[i].slot] = ref[i].data, sizes[ref[i].slot] = ref[i].size_B;
  CHECK_OK(cc_interp_run(sink, ptrs, sizes, 8, NULL, 0));
  hcq_rt_program *p = NULL;
  hcq_rt_kernel *k = NULL;
  hcq_rt_buffer *bufs[8] = {0};
  hcq_status st = hcq_rt_program_compile(dev, text, opts, &p);
  if (!st) st = hcq_rt_kernel_load(dev, hcq_rt_program_desc(p), &k);
  for (size_t i = 0; !st && i < ngot; i++) {
    st = hcq_rt_buffer_alloc(dev, got[i].size_B, HCQ_RT_MEM_HOST_VISIBLE, &bufs[i]);
    if (!st) memcpy(hcq_rt_buffer_host(bufs[i]), got[i].data, got[i].size_B);
  }
  if (!st) st = hcq_rt_launch(k, bufs, ngot, NULL, 0);
  if (!st) st = hcq_rt_sync(dev, 60000);
  long bad = st ? -1 : 0;
  if (st) fprintf(stderr, "amd_div_fuzz: %s\n", hcq_status_message(st));
  for (size_t i = 0; !st && i < ngot; i++) {
    size_t esize = got[i].size_B / (size_t)got[i].nelems;
    for (int64_t e = 0; e < got[i].nelems; e++)
      bad += memcmp((char *)hcq_rt_buffer_host(bufs[i]) + e * esize, (char *)ref[i].data + e * esize, esize) != 0;
  }
  hcq_status_free(st);
  hcq_rt_kernel_free(k);
  hcq_rt_program_free(p);
  for (size_t i = 0; i < 8; i++) hcq_rt_buffer_free(bufs[i]);
  cc_kbufs_free(ref, nref);
  cc_kbufs_free(got, ngot);
  return bad;
}

/* The divisor Y of "(op X Y)": where it starts, and its length in *len. */
static const char *divisor_at(const char *expr, int *len) {
  const char *p = strchr(expr, ' ') + 1; /* X */
  for (int depth = 0; *p && (depth > 0 || *p != ' '); p++) depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
  *len = (int)strlen(p + 1) - 1; /* Y, without the closing parenthesis of the top */
  return p + 1;
}

static long g_run, g_refused;

static void fuzz_case(hcq_rt_device *dev) {
  const dtinfo *d = &DTS[rnd(4)];
  char *expr = NULL, *text = NULL;
  size_t elen = 0, len = 0;
  FILE *f = open_memstream(&expr, &elen);
  CHECK(f != NULL);
  if (!f) return;
  fprintf(f, "(%s ", rnd(2) ? "//" : "%");
  operand(f, d, false);
  fprintf(f, " ");
  if (rnd(4) == 0) cst(f, d, interesting(d) | 1); /* a constant divisor */
  else operand(f, d, true);
  fprintf(f, ")");
  fclose(f);
  /* Shared shape (1 in 3): the fuzzed store runs over r1 only, after a loop over r0 that divides a[r0] (may be
   * MIN: render_llvm guards it with Y == -1) by the same divisor; LLVM then branches on Y == -1 before both and
   * divides the fuzzed store by a divisor known to be -1 (once missed: 100 // -1 gave -1 on the mock). */
  bool shared = rnd(3) == 0;
  if (shared)
    for (char *q = expr; (q = strstr(q, " r0))")) != NULL; q++)
      q[2] = '1';
  f = open_memstream(&text, &len);
  CHECK(f != NULL);
  if (!f) return;
  /* declare the inputs the expression uses, in slots 1.. (slots must be contiguous) */
  fprintf(f, "(kernel divfz (let out (buf 0 %s %d)) ", d->name, shared ? 80 : 64);
  int slot = 1;
  for (const char *in = "abce"; *in; in++) {
    char use[16];
    snprintf(use, sizeof use, "(index %c r", *in);
    if (strstr(expr, use))
      fprintf(f, "(let %c (buf %d %s %d)) ", *in, slot++, *in == 'a' || *in == 'b' ? d->name : "int8",
              shared && *in != 'a' ? 16 : 64); /* (the fill of 16 elements has -1 among them) */
  }
  int dlen = 0;
  const char *y = divisor_at(expr, &dlen);
  if (!shared) {
    fprintf(f, "(let r0 (range 0 64 loop)) (sink (store (index out r0) %s r0)))", expr);
  } else {
    if (!strstr(expr, "(index a r")) fprintf(f, "(let a (buf %d %s 64)) ", slot++, d->name);
    fprintf(f, "(let r1 (range 1 16)) (let r0 (range 0 4 loop)) (sink "
               "(store (index out (+ (* r0 16) (+ r1 16))) (// (load (index a r0)) %.*s) r0 r1) "
               "(store (index out r1) %s r1)))", dlen, y, expr);
  }
  fclose(f);
  free(expr);
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *sink = NULL;
  hcq_status st = cc_kernel_parse(ctx, text, len, "<amd_div_fuzz>", &sink);
  if (st) { /* a provable MIN // -1: refused by the validator, as it should be */
    g_refused++;
    hcq_status_free(st);
  } else {
    const char *opts = rnd(2) ? "" : NULL;
    long bad = run_exact(dev, sink, text, opts);
    if (bad == 0) g_run++;
    else fprintf(stderr, "amd_div_fuzz: %ld elements differ (%s) in:\n%s\n", bad, opts ? "noopt" : "heuristic", text);
    CHECK(bad == 0);
  }
  uop_ctx_destroy(ctx);
  free(text);
}

int main(void) {
  if (!tu_have("clang-19") || !tu_have("ld.lld-19")) TEST_SKIP("needs clang-19 and ld.lld-19");
  g_state = fuzz_seed("amd_div_fuzz", 0xd1f);
  double budget = fuzz_seconds(3.0, NULL), t0 = fuzz_now_s();
  CHECK_OK(amd_mock_install(kif_default()));
  hcq_rt_device *dev = NULL;
  CHECK_OK(hcq_rt_open("amd:0", &dev));
  for (int i = 0; (i < 4 || fuzz_now_s() - t0 < budget) && !testing_failures; i++) fuzz_case(dev);
  printf("amd_div_fuzz: %ld kernels matched the reference on amd:0 (mock), %ld refused by the validator, in %.1f s\n",
         g_run, g_refused, fuzz_now_s() - t0);
  hcq_rt_close(dev);
  amd_mock_uninstall();
  return testing_summary("amd_div_fuzz");
}
