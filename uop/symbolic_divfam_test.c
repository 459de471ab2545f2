/* Brute-force check of the division families on small, dense parameter spaces (the random-tree fuzzer reaches
 * these shapes too rarely to pin each side condition). Each case is built from integer parameters, simplified,
 * then evaluated with uop_sym_infer at every point of its variables' ranges and compared with the value computed
 * here directly in C (truncating `/` and `%`), so the expected value never comes from the simplifier:
 *   linear:  (c1*x + c2*y + k) // d   and  % d        (either sign everywhere: negative numerators, mixed signs)
 *   nested:  ((c1*x + k1) // d1 + k2) // d2
 *   arange:  sum over j in a window of d (some terms left out) of f * ((c1*x + k + j) // d)
 *   simplex: where(c1*x + c2*y >= 1, (c3*x + c4*y + k) // d, -1) with x, y >= 0
 * A fixed seed and a fixed number of cases per family: the same cases run every time. */
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "uop/symbolic.h"
#include "uop/text.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;
static int64_t pick(int64_t lo, int64_t hi) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return lo + (int64_t)(rng % (uint64_t)(hi - lo + 1));
}

typedef struct range2 {
  int64_t lo, hi;
} range2;

static const range2 XR[] = {{-3, 3}, {0, 5}, {-4, -1}, {0, 1}, {2, 7}, {0, 12}, {-6, 2}};
static const range2 NNR[] = {{0, 1}, {0, 3}, {0, 5}, {1, 4}, {0, 12}}; /* non-negative (simplex variables) */
static const int64_t DIVS[] = {2, 3, 4, 6, 8, 12, 16, -2, -3, -4, -8};
#define NDIVS ((int64_t)(sizeof DIVS / sizeof *DIVS))

typedef int64_t (*eval_fn)(const int64_t *p, int64_t x, int64_t y, bool *skip);

static uop_ctx *ctx;
static long points, failures;

static const uop *ic(int64_t v) { return uop_index_const(ctx, v); }
static const uop *bin(uop_op op, const uop *a, const uop *b) { return uop_alu2(ctx, op, a, b); }
static const uop *lin2(const uop *x, int64_t c1, const uop *y, int64_t c2, int64_t k) {
  return bin(UOP_ADD, bin(UOP_ADD, bin(UOP_MUL, x, ic(c1)), bin(UOP_MUL, y, ic(c2))), ic(k));
}

/* Simplify e and compare it with want() at every (x, y). */
static void check(const uop *e, const uop *x, const uop *y, const int64_t *p, eval_fn want, const char *fam) {
  const uop *s = NULL;
  hcq_status st = uop_simplify(ctx, e, &s);
  if (st) {
    fprintf(stderr, "%s: uop_simplify: %s\n", fam, hcq_status_message(st));
    hcq_status_free(st);
    failures++;
    return;
  }
  for (int64_t xv = uop_vmin(x); xv <= uop_vmax(x); xv++)
    for (int64_t yv = uop_vmin(y); yv <= uop_vmax(y); yv++) {
      bool skip = false;
      int64_t w = want(p, xv, yv, &skip), got = 0;
      if (skip) continue;
      uop_var_val vals[2] = {{x->arg.str, xv}, {y->arg.str, yv}};
      st = uop_sym_infer(s, vals, 2, &got);
      points++;
      if (st || got != w) {
        char *a = NULL, *b = NULL;
        hcq_status_free(uop_print(e, &a));
        hcq_status_free(uop_print(s, &b));
        fprintf(stderr, "%s: x=%lld y=%lld: want %lld, got %lld%s%s\n  input     : %s\n  simplified: %s\n", fam,
                (long long)xv, (long long)yv, (long long)w, (long long)got, st ? ": " : "",
                st ? hcq_status_message(st) : "", a ? a : "?", b ? b : "?");
        free(a);
        free(b);
        hcq_status_free(st);
        failures++;
        return;
      }
    }
}

/* ------------------------------------------------------------------------------------------------ families */

/* p: c1 c2 k d is_mod */
static int64_t want_linear(const int64_t *p, int64_t x, int64_t y, bool *skip) {
  (void)skip;
  int64_t n = p[0] * x + p[1] * y + p[2];
  return p[4] ? n % p[3] : n / p[3];
}

/* p: c1 k1 d1 k2 d2 */
static int64_t want_nested(const int64_t *p, int64_t x, int64_t y, bool *skip) {
  (void)y;
  (void)skip;
  return ((p[0] * x + p[1]) / p[2] + p[3]) / p[4];
}

/* p: c1 k d f mask (bit j: the term with j is present) */
static int64_t want_arange(const int64_t *p, int64_t x, int64_t y, bool *skip) {
  (void)y;
  (void)skip;
  int64_t s = 0;
  for (int64_t j = 0; j < p[2]; j++)
    if (p[4] >> j & 1) s += p[3] * ((p[0] * x + p[1] + j) / p[2]);
  return s;
}

/* p: c1 c2 c3 c4 k d */
static int64_t want_simplex(const int64_t *p, int64_t x, int64_t y, bool *skip) {
  (void)skip;
  return p[0] * x + p[1] * y >= 1 ? (p[2] * x + p[3] * y + p[4]) / p[5] : -1;
}

static const uop *var_in(const char *name, const range2 *r) {
  return uop_var(ctx, name, r->lo, r->hi, uop_dt(UOP_INDEX));
}

static void run_linear(void) {
  int64_t p[5] = {pick(-6, 6), pick(-4, 4), pick(-10, 10), DIVS[pick(0, NDIVS - 1)], pick(0, 1)};
  const uop *x = var_in("x", &XR[pick(0, 6)]), *y = var_in("y", &XR[pick(0, 6)]);
  check(bin(p[4] ? UOP_MOD : UOP_IDIV, lin2(x, p[0], y, p[1], p[2]), ic(p[3])), x, y, p, want_linear, "linear");
}

static void run_nested(void) {
  int64_t p[5] = {pick(-4, 4), pick(-8, 8), DIVS[pick(0, NDIVS - 1)], pick(-6, 6), DIVS[pick(0, NDIVS - 1)]};
  const uop *x = var_in("x", &XR[pick(0, 6)]), *y = var_in("y", &XR[3]);
  const uop *in = bin(UOP_IDIV, bin(UOP_ADD, bin(UOP_MUL, x, ic(p[0])), ic(p[1])), ic(p[2]));
  check(bin(UOP_IDIV, bin(UOP_ADD, in, ic(p[3])), ic(p[4])), x, y, p, want_nested, "nested");
}

static void run_arange(void) {
  int64_t d = pick(2, 5), p[5] = {pick(1, 2) * (pick(0, 3) ? 1 : -1), pick(-8, 8), d, pick(-2, 3), 0};
  if (p[3] == 0) p[3] = 1;
  p[4] = ((int64_t)1 << d) - 1;
  if (pick(0, 2) == 0) p[4] &= ~((int64_t)1 << pick(0, d - 1)); /* one term left out */
  const uop *x = var_in("x", &XR[pick(0, 6)]), *y = var_in("y", &XR[3]), *acc = ic(0);
  for (int64_t j = 0; j < d; j++)
    if (p[4] >> j & 1) {
      const uop *t = bin(UOP_IDIV, bin(UOP_ADD, bin(UOP_MUL, x, ic(p[0])), ic(p[1] + j)), ic(d));
      acc = bin(UOP_ADD, acc, bin(UOP_MUL, t, ic(p[3])));
    }
  check(acc, x, y, p, want_arange, "arange");
}

static void run_simplex(void) {
  int64_t p[6] = {pick(1, 3), pick(1, 3), pick(-3, 4), pick(-3, 4), pick(-6, 8), DIVS[pick(0, NDIVS - 1)]};
  const uop *x = var_in("x", &NNR[pick(0, 4)]), *y = var_in("y", &NNR[pick(0, 4)]);
  const uop *x1 = bin(UOP_ADD, bin(UOP_MUL, x, ic(p[0])), bin(UOP_MUL, y, ic(p[1])));
  const uop *gate = bin(UOP_CMPNE, bin(UOP_CMPLT, x1, ic(1)), uop_const_bool(ctx, true));
  const uop *t = bin(UOP_IDIV, lin2(x, p[2], y, p[3], p[4]), ic(p[5]));
  check(uop_where(ctx, gate, t, ic(-1)), x, y, p, want_simplex, "simplex");
}

int main(void) {
  static const struct {
    const char *name;
    void (*run)(void);
    int cases;
  } fams[] = {{"linear", run_linear, 6000}, {"nested", run_nested, 3000}, {"arange", run_arange, 3000},
              {"simplex", run_simplex, 2000}};
  for (size_t f = 0; f < sizeof fams / sizeof *fams; f++) {
    long before = failures;
    for (int i = 0; i < fams[f].cases && failures < 10; i += 250) {
      CHECK_OK(uop_ctx_create(&ctx)); /* a fresh context per block: bounded memory */
      for (int j = i; j < i + 250 && j < fams[f].cases && failures < 10; j++) fams[f].run();
      uop_ctx_destroy(ctx);
    }
    printf("symbolic_divfam: %-8s %d cases, %ld failures\n", fams[f].name, fams[f].cases, failures - before);
  }
  printf("symbolic_divfam: %ld points checked\n", points);
  CHECK(failures == 0);
  return testing_summary("symbolic_divfam_test");
}
