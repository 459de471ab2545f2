/* kernel_access: random kernels with affine (optionally gated, optionally symbolic) store and load indices checked
 * against brute force over every point: the validator refuses exactly the kernels with a reachable out-of-bounds
 * access (never one that is in bounds; for this class also always one that is not), naming the load/store's line
 * and the buffer. Integer division by a constant 0 and INT_MIN / -1 are refused for every integer dtype.
 * Seed: HCQ_FUZZ_SEED (printed on failure). 3000 random kernels, then more until HCQ_FUZZ_SECONDS when it is set. */
#include <inttypes.h>
#include <time.h>

#include "compiler/kernel_text.h"
#include "base/testing.h"
#include "base/fuzz.h"

static int64_t rnd(int64_t n) { return (int64_t)(fuzz_next() % (uint64_t)n); } /* signed: callers subtract */

typedef struct acc {
  int64_t a, b, c; /* index a*r0 + b*r1 + c */
  int64_t gate;    /* (< r0 gate) when >= 0 */
} acc;

/* Some n (in 1..nmax, or the fixed e0) and point where the gate holds and the index is outside [0, size). */
static bool brute_oob(const acc *x, int64_t e0, bool sym, int64_t nmax, int64_t e1, int64_t size) {
  for (int64_t n = sym ? 1 : e0; n <= (sym ? nmax : e0); n++)
    for (int64_t r0 = 0; r0 < n; r0++)
      for (int64_t r1 = 0; r1 < e1; r1++) {
        if (x->gate >= 0 && !(r0 < x->gate)) continue;
        int64_t v = x->a * r0 + x->b * r1 + x->c;
        if (v < 0 || v >= size) return true;
      }
  return false;
}

static void put_acc(char *s, size_t cap, const acc *x, const char *buf) {
  size_t n = (size_t)snprintf(s, cap, "(index %s (+ (+ (* r0 %" PRId64 ") (* r1 %" PRId64 ")) %" PRId64 ")", buf, x->a,
                              x->b, x->c);
  if (x->gate >= 0) n += (size_t)snprintf(s + n, cap - n, " (< r0 %" PRId64 ")", x->gate);
  snprintf(s + n, cap - n, ")");
}

static void random_case(int64_t *rejected, int64_t *accepted) {
  bool sym = rnd(3) == 0;
  int64_t e0 = 1 + rnd(12), e1 = 1 + rnd(6), nmax = 1 + rnd(12);
  acc st = {rnd(9) - 2, rnd(9) - 2, rnd(21) - 6, rnd(3) == 0 ? rnd(14) : -1};
  acc ld = {rnd(9) - 2, rnd(9) - 2, rnd(21) - 6, rnd(3) == 0 ? rnd(14) : -1};
  int64_t sst = 1 + rnd(120), sld = 1 + rnd(120);
  bool oob_st = brute_oob(&st, e0, sym, nmax, e1, sst), oob_ld = brute_oob(&ld, e0, sym, nmax, e1, sld);
  char is[200], il[200], text[1200];
  put_acc(is, sizeof is, &st, "out");
  put_acc(il, sizeof il, &ld, "in");
  char r0[80];
  if (sym) snprintf(r0, sizeof r0, "(let n (var n 1 %" PRId64 " index))\n  (let r0 (range 0 n))", nmax);
  else snprintf(r0, sizeof r0, "(let r0 (range 0 %" PRId64 "))", e0);
  snprintf(text, sizeof text,
           "(kernel acc\n  (let out (buf 0 float32 %" PRId64 "))\n  (let in (buf 1 float32 %" PRId64 "))\n  %s\n"
           "  (let r1 (range 1 %" PRId64 "))\n  (sink\n    (store %s\n      (load %s%s) r0 r1)))",
           sst, sld, r0, e1, is, il, ld.gate >= 0 ? " 0.0" : "");
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *k;
  hcq_status s = cc_kernel_parse(ctx, text, strlen(text), "acc.uop", &k);
  bool want = oob_st || oob_ld;
  if ((s != HCQ_OK) != want) {
    fprintf(stderr, "brute force: store %s, load %s; validator: %s\n%s\n", oob_st ? "OOB" : "ok", oob_ld ? "OOB" : "ok",
            s ? hcq_status_message(s) : "accepted", text);
    CHECK(!"validator disagrees with brute force");
  } else if (s) {
    const char *m = hcq_status_message(s);
    /* names the access by its line (the store is on line 7, the load on line 8, one later with n; the load, a source, comes first) */
    char where[40];
    snprintf(where, sizeof where, oob_ld ? "acc.uop:%d:7: LOAD" : "acc.uop:%d:5: STORE", (oob_ld ? 8 : 7) + sym);
    CHECK(strstr(m, where) != NULL);
    CHECK(strstr(m, oob_ld ? "out-of-bounds load" : "out-of-bounds store") != NULL);
    CHECK(strstr(m, oob_ld ? "DEFINE_GLOBAL in" : "DEFINE_GLOBAL out") != NULL);
    CHECK_EQ_INT(hcq_status_code(s), HCQ_CODE_INVALID);
    if (testing_failures) fprintf(stderr, "%s\n%s\n", m, text);
  }
  *(s ? rejected : accepted) += 1;
  hcq_status_free(s);
  uop_ctx_destroy(ctx);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *const INT_DTS[] = {"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"};

static void check_rejects(const char *text, const char *needle) {
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *k;
  hcq_status s = cc_kernel_parse(ctx, text, strlen(text), "d.uop", &k);
  CHECK(s != HCQ_OK);
  if (s && !strstr(hcq_status_message(s), needle)) {
    fprintf(stderr, "want '%s' in: %s\n", needle, hcq_status_message(s));
    CHECK(!"message");
  }
  if (!s) fprintf(stderr, "accepted: %s\n", text);
  hcq_status_free(s);
  uop_ctx_destroy(ctx);
}

static void check_accepts(const char *text) {
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *k;
  CHECK_OK(cc_kernel_parse(ctx, text, strlen(text), "d.uop", &k));
  uop_ctx_destroy(ctx);
}

static void division(void) {
  char t[600];
  for (size_t i = 0; i < sizeof INT_DTS / sizeof INT_DTS[0]; i++) {
    const char *dt = INT_DTS[i];
    for (int op = 0; op < 2; op++) {
      /* the zero spelled directly and computed (x - x is 0 for every x, so vmin = vmax = 0) */
      snprintf(t, sizeof t, "(kernel d (let o (buf 0 %s 8)) (let r (range 0 8))\n (sink (store (index o r)\n (%s (cast %s r) "
               "(const 0 %s)) r)))", dt, op ? "%" : "//", dt, dt);
      check_rejects(t, op ? "d.uop:3:2: MOD: integer division by zero" : "d.uop:3:2: IDIV: integer division by zero");
      snprintf(t, sizeof t, "(kernel d (let o (buf 0 %s 8)) (let r (range 0 8))\n (sink (store (index o r)\n (%s (cast %s r) "
               "(- (const 3 %s) (const 3 %s))) r)))", dt, op ? "%" : "//", dt, dt, dt);
      check_rejects(t, "division by zero");
      /* a divisor that is only sometimes 0 cannot be proven: allowed (it may be gated away at run time) */
      snprintf(t, sizeof t, "(kernel d (let o (buf 0 %s 8)) (let r (range 0 8))\n (sink (store (index o r)\n (%s (const 7 %s) "
               "(cast %s r)) r)))", dt, op ? "%" : "//", dt, dt);
      check_accepts(t);
      if (dt[0] == 'u') continue;
      /* INT_MIN / -1 overflows */
      int bits = atoi(dt + 3);
      char minv[32];
      snprintf(minv, sizeof minv, "%" PRId64, bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1)));
      snprintf(t, sizeof t, "(kernel d (let o (buf 0 %s 8)) (let r (range 0 8))\n (sink (store (index o r)\n (%s (const %s %s) "
               "(const -1 %s)) r)))", dt, op ? "%" : "//", minv, dt, dt);
      check_rejects(t, "overflows");
      snprintf(t, sizeof t, "(kernel d (let o (buf 0 %s 8)) (let r (range 0 8))\n (sink (store (index o r)\n (%s (const 5 %s) "
               "(const -1 %s)) r)))", dt, op ? "%" : "//", dt, dt);
      check_accepts(t);
    }
  }
}

int main(void) {
  const char *env = getenv("HCQ_FUZZ_SEED");
  uint64_t seed = env ? strtoull(env, NULL, 0) : 0x5eed0acc;
  fuzz_rng = seed ^ 0x9e3779b97f4a7c15ull;
  if (!fuzz_rng) fuzz_rng = 1;
  /* the case: a 1-element buffer written at 0..8191 */
  check_rejects("(kernel k (let c (buf 0 float32 1)) (let r (range 0 8192))\n (sink (store (index c r) 1.0 r)))",
                "d.uop:2:8: STORE: out-of-bounds store: index 8191 (at r0=8191)");
  /* a gate that keeps the index in bounds; a gate that is never true */
  check_accepts("(kernel k (let c (buf 0 float32 100)) (let r (range 0 8192))\n (sink (store (index c r (< r 100)) "
                "1.0 r)))");
  check_accepts("(kernel k (let c (buf 0 float32 1)) (let r (range 0 8192))\n (sink (store (index c (+ r 5) (< r 0)) "
                "1.0 r)))");
  /* unknown size and an index read from memory: cannot be proven either way */
  check_accepts("(kernel k (let c (buf 0 float32 -1)) (let r (range 0 8192))\n (sink (store (index c r) 1.0 r)))");
  check_accepts("(kernel k (let c (buf 0 float32 4)) (let i (buf 1 int32 4)) (let r (range 0 4))\n (sink (store (index c "
                "(load (index i r))) 1.0 r)))");
  division();
  int64_t rejected = 0, accepted = 0;
  const char *secs = getenv("HCQ_FUZZ_SECONDS");
  double budget_s = secs ? atof(secs) : 0, t0 = now_s();
  for (int i = 0; (i < 3000 || now_s() - t0 < budget_s) && testing_failures < 5; i++) random_case(&rejected, &accepted);
  printf("kernel_access_fuzz: %" PRId64 " random kernels refused (out of bounds), %" PRId64 " accepted\n", rejected,
         accepted);
  CHECK(rejected > 100 && accepted > 100);
  if (testing_failures) fprintf(stderr, "kernel_access_fuzz: seed 0x%" PRIx64 " (HCQ_FUZZ_SEED)\n", seed);
  return testing_summary("kernel_access_fuzz");
}
