/* Differential fuzzer for the symbolic simplifier: random typed expression trees over small-range variables
 * (negative ranges too) using + * // % < != & | ^ max << >> where, casts between index/int8/int16/int32/uint8/bool
 * and gates (where with AND-ed comparisons), plus the shapes of the division families (unrolled arange sums, nested
 * constant divisions, negative-coefficient numerators). Each tree is simplified; then on EVERY assignment of the variables the
 * original tree is evaluated by the small evaluator below (independent of uop_sym_infer; assignments where the
 * original divides by zero are skipped) and compared with the simplified tree, and each value is checked to lie in
 * both roots' [vmin, vmax]. Fixed seed unless HCQ_FUZZ_SEED; HCQ_FUZZ_SECONDS sets the time budget (default 3 s). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/testing.h"
#include "base/fuzz.h"
#include "uop/symbolic.h"
#include "uop/text.h"

/* ------------------------------------------------------------------------------------------------ variables */

typedef struct fvar {
  const char *name;
  int64_t lo, hi;
  uop_scalar dt;
} fvar;

static const fvar VARS[] = {
    {"a", -3, 3, UOP_INDEX}, {"b", 0, 4, UOP_INDEX}, {"c", -2, 2, UOP_INDEX},
    {"d", 0, 1, UOP_INDEX},  {"p", -3, 3, UOP_INT8}, {"q", 0, 4, UOP_UINT8},
};
#define NVARS ((int)(sizeof VARS / sizeof *VARS))
#define RANGE_END 3 /* ridx0 in [0, 2] */

/* ------------------------------------------------------------------------------------------------ evaluator */

static int64_t wrap(uop_dtype dt, int64_t v) {
  if (dt.scalar == UOP_BOOL) return v != 0;
  int bits = dt.scalar == UOP_INDEX ? 64 : uop_dt_bits(dt);
  if (bits >= 64) return v;
  uint64_t m = ((uint64_t)1 << bits) - 1, u = (uint64_t)v & m;
  if (uop_dt_is_unsigned(dt)) return (int64_t)u;
  if (u >> (bits - 1)) u |= ~m;
  return (int64_t)u;
}

/* 0 ok, 1 undefined (division by zero, shift out of range), 2 unknown node. Plain recursion: trees are small. */
static int ev(const uop *n, const int64_t *vals, int64_t *out) {
  int64_t v[3] = {0, 0, 0};
  int rc;
  switch (n->op) {
  case UOP_CONST: *out = n->arg.i; return 0;
  case UOP_DEFINE_VAR:
    for (int i = 0; i < NVARS; i++)
      if (!strcmp(n->arg.str, VARS[i].name)) {
        *out = vals[i];
        return 0;
      }
    return 2;
  case UOP_RANGE: *out = vals[NVARS]; return 0;
  default: break;
  }
  for (uint32_t i = 0; i < n->nsrc && i < 3; i++)
    if ((rc = ev(n->src[i], vals, &v[i]))) return rc;
  uop_dtype dt = n->nsrc ? n->src[0]->dtype : n->dtype;
  bool uns = uop_dt_is_unsigned(dt);
  int bits = dt.scalar == UOP_INDEX ? 64 : uop_dt_bits(dt);
  int64_t a = v[0], b = v[1], r;
  switch (n->op) {
  case UOP_ADD: r = (int64_t)((uint64_t)a + (uint64_t)b); break;
  case UOP_MUL: r = (int64_t)((uint64_t)a * (uint64_t)b); break;
  case UOP_IDIV:
  case UOP_MOD:
    if (b == 0 || (a == INT64_MIN && b == -1)) return 1;
    r = n->op == UOP_IDIV ? a / b : a % b; /* operands are wrapped values of dt: unsigned ones are >= 0 here */
    break;
  case UOP_MAX: r = a > b ? a : b; break;
  case UOP_CMPLT: r = a < b; break;
  case UOP_CMPNE: r = a != b; break;
  case UOP_AND: r = a & b; break;
  case UOP_OR: r = a | b; break;
  case UOP_XOR: r = a ^ b; break;
  case UOP_SHL:
    if (b < 0 || b >= bits) return 1;
    r = (int64_t)((uint64_t)a << b);
    break;
  case UOP_SHR:
    if (b < 0 || b >= bits) return 1;
    r = uns ? (int64_t)((uint64_t)a >> b) : a >> b;
    break;
  case UOP_WHERE: r = a ? v[1] : v[2]; break;
  case UOP_CAST: r = a; break;
  default: return 2;
  }
  *out = wrap(n->dtype, r);
  return 0;
}

/* ------------------------------------------------------------------------------------------------ generator */


static const uop_scalar INT_DTS[] = {UOP_INDEX, UOP_INDEX, UOP_INDEX, UOP_INDEX, UOP_INT8, UOP_INT16, UOP_INT32,
                                     UOP_UINT8};

static const uop *gen(uop_ctx *ctx, uop_scalar s, int depth);

static const uop *gen_bool(uop_ctx *ctx, int depth) {
  if (depth <= 0 || fuzz_rnd(8) == 0) return uop_const_bool(ctx, fuzz_rnd(2));
  switch (fuzz_rnd(6)) {
  case 0:
  case 1: {
    uop_scalar s = INT_DTS[fuzz_rnd(8)];
    return uop_alu2(ctx, fuzz_rnd(3) ? UOP_CMPLT : UOP_CMPNE, gen(ctx, s, depth - 1), gen(ctx, s, depth - 1));
  }
  case 2: return uop_alu2(ctx, UOP_AND, gen_bool(ctx, depth - 1), gen_bool(ctx, depth - 1));
  case 3: return uop_alu2(ctx, fuzz_rnd(2) ? UOP_OR : UOP_XOR, gen_bool(ctx, depth - 1), gen_bool(ctx, depth - 1));
  case 4: return uop_alu2(ctx, UOP_CMPNE, gen_bool(ctx, depth - 1), uop_const_bool(ctx, true));
  default: return uop_cast(ctx, uop_dt(UOP_BOOL), gen(ctx, INT_DTS[fuzz_rnd(8)], depth - 1));
  }
}

static const uop *gen_leaf(uop_ctx *ctx, uop_scalar s) {
  uop_dtype dt = uop_dt(s);
  int k = (int)fuzz_rnd(10);
  if (k < 5) {
    int cands[NVARS + 1], nc = 0;
    for (int i = 0; i < NVARS; i++)
      if (VARS[i].dt == s) cands[nc++] = i;
    if (s == UOP_INDEX) cands[nc++] = NVARS;
    if (nc) {
      int i = cands[fuzz_rnd(nc)];
      if (i == NVARS) return uop_range(ctx, uop_index_const(ctx, RANGE_END), 0, UOP_AXIS_LOOP);
      return uop_var(ctx, VARS[i].name, VARS[i].lo, VARS[i].hi, dt);
    }
    /* no variable of this dtype: a cast of one */
    return uop_cast(ctx, dt, uop_var(ctx, VARS[0].name, VARS[0].lo, VARS[0].hi, uop_dt(UOP_INDEX)));
  }
  static const int64_t consts[] = {0, 1, 2, 3, 4, 5, 6, 8, 12, 16, -1, -2, -3, -4, -7, 7, 10, 11, 127, -128};
  return uop_const_int(ctx, dt, consts[fuzz_rnd(sizeof consts / sizeof *consts)]);
}

static const uop *gen(uop_ctx *ctx, uop_scalar s, int depth);

static const uop *idx_bin(uop_ctx *ctx, uop_op op, const uop *a, int64_t c) {
  return uop_alu2(ctx, op, a, uop_index_const(ctx, c));
}

/* Index shapes of the division families: unrolled arange sums f*((e+j)//d) over j = j0..j0+d-1 (some terms left
 * out), nested constant divisions ((e//c1) + k)//c2, numerators with negative (or mixed) coefficients k - c1*e1 - c2*e2,
 * and divisions under a simplex gate c1*u + c2*v >= 1. */
static const uop *gen_div_family(uop_ctx *ctx, int depth) {
  static const int64_t fs[] = {1, 1, 2, -1, 3}, cs[] = {2, 3, 4, -2, -3, 5, 8};
  const uop *e = gen(ctx, UOP_INDEX, depth - 2);
  switch (fuzz_rnd(4)) {
  case 3: {
    /* simplex gate: where(c1*u + c2*v >= 1, (c3*u + c4*v + k)//d + e, e) with u, v >= 0 */
    static const char *nn[] = {"b", "d", "ridx0"};
    const uop *uv[2];
    for (int i = 0; i < 2; i++) {
      int w = (int)fuzz_rnd(3);
      uv[i] = w == 2 ? uop_range(ctx, uop_index_const(ctx, RANGE_END), 0, UOP_AXIS_LOOP)
                     : uop_var(ctx, nn[w], 0, w ? 1 : 4, uop_dt(UOP_INDEX)); /* as in VARS */
    }
    const uop *x = uop_alu2(ctx, UOP_ADD, idx_bin(ctx, UOP_MUL, uv[0], 1 + fuzz_rnd(3)), idx_bin(ctx, UOP_MUL, uv[1], 1 + fuzz_rnd(3)));
    const uop *gate = uop_alu2(ctx, UOP_CMPNE, idx_bin(ctx, UOP_CMPLT, x, 1), uop_const_bool(ctx, true));
    if (fuzz_rnd(2)) gate = uop_alu2(ctx, UOP_AND, gate, gen_bool(ctx, 1));
    const uop *num = uop_alu2(ctx, UOP_ADD, idx_bin(ctx, UOP_MUL, uv[0], (int64_t)fuzz_rnd(5) - 1),
                              idx_bin(ctx, UOP_MUL, uv[1], (int64_t)fuzz_rnd(5) - 1));
    const uop *t = uop_alu2(ctx, UOP_ADD, idx_bin(ctx, UOP_IDIV, idx_bin(ctx, UOP_ADD, num, (int64_t)fuzz_rnd(9) - 2), 2 + fuzz_rnd(4)), e);
    return uop_where(ctx, gate, t, e);
  }
  case 0: {
    int64_t d = 2 + fuzz_rnd(3), j0 = (int64_t)fuzz_rnd(9) - 4, f = fs[fuzz_rnd(5)];
    const uop *acc = idx_bin(ctx, UOP_MUL, e, (int64_t)fuzz_rnd(3) - 1);
    for (int64_t i = 0; i < d; i++)
      if (fuzz_rnd(6)) acc = uop_alu2(ctx, UOP_ADD, acc, idx_bin(ctx, UOP_MUL, idx_bin(ctx, UOP_IDIV, idx_bin(ctx, UOP_ADD, e, j0 + i), d), f));
    return acc;
  }
  case 1: {
    const uop *in = idx_bin(ctx, UOP_IDIV, e, cs[fuzz_rnd(7)]);
    return idx_bin(ctx, UOP_IDIV, idx_bin(ctx, UOP_ADD, in, (int64_t)fuzz_rnd(9) - 4), cs[fuzz_rnd(7)]);
  }
  default: {
    /* half the time plain variables (a and c take both signs), so the numerator's sign cases come up often */
    const uop *e1 = fuzz_rnd(2) ? e : uop_var(ctx, VARS[0].name, VARS[0].lo, VARS[0].hi, uop_dt(UOP_INDEX));
    const uop *e2 = fuzz_rnd(2) ? gen(ctx, UOP_INDEX, depth - 2) : uop_var(ctx, VARS[3].name, VARS[3].lo, VARS[3].hi, uop_dt(UOP_INDEX));
    int64_t s1 = fuzz_rnd(3) ? -1 : 1, s2 = fuzz_rnd(3) ? -1 : 1; /* mostly negative coefficients, sometimes mixed signs */
    int64_t m1 = fuzz_rnd(2) ? 1 + fuzz_rnd(8) : 2 * (1 + fuzz_rnd(2)); /* 2 or 4 often: a factor of the divisor */
    const uop *num = idx_bin(ctx, UOP_ADD, uop_alu2(ctx, UOP_ADD, idx_bin(ctx, UOP_MUL, e1, s1 * m1),
                                                        idx_bin(ctx, UOP_MUL, e2, s2 * (int64_t)fuzz_rnd(4))),
                             (int64_t)fuzz_rnd(fuzz_rnd(2) ? 40 : 8) - 4);
    return idx_bin(ctx, UOP_IDIV, num, cs[fuzz_rnd(7)]);
  }
  }
}

static const uop *gen(uop_ctx *ctx, uop_scalar s, int depth) {
  if (s == UOP_BOOL) return gen_bool(ctx, depth);
  uop_dtype dt = uop_dt(s);
  if (depth <= 0 || fuzz_rnd(6) == 0) return gen_leaf(ctx, s);
  int k = (int)fuzz_rnd(27);
  if (k >= 24 && s == UOP_INDEX) return gen_div_family(ctx, depth);
  if (k >= 24) k = (int)fuzz_rnd(24);
  if (k >= 20 && s == UOP_INDEX) {
    /* kernel-style index math: c1*t1 + c2*t2 + k, then // or % by a constant */
    static const int64_t cs[] = {1, 2, 3, 4, 6, 8, -1, -2, -3, 5, 12};
    const uop *e = uop_index_const(ctx, (int64_t)fuzz_rnd(9) - 4);
    for (int t = 0, nt = 1 + (int)fuzz_rnd(3); t < nt; t++)
      e = uop_alu2(ctx, UOP_ADD, e, uop_alu2(ctx, UOP_MUL, gen(ctx, s, depth - 2), uop_index_const(ctx, cs[fuzz_rnd(11)])));
    if (fuzz_rnd(4) == 0) return e;
    return uop_alu2(ctx, fuzz_rnd(2) ? UOP_IDIV : UOP_MOD, e, uop_index_const(ctx, cs[1 + fuzz_rnd(10)]));
  }
  if (k >= 20) k = (int)fuzz_rnd(20);
  if (k < 4) return uop_alu2(ctx, UOP_ADD, gen(ctx, s, depth - 1), gen(ctx, s, depth - 1));
  if (k < 7) return uop_alu2(ctx, UOP_MUL, gen(ctx, s, depth - 1), gen(ctx, s, depth - 1) );
  if (k < 11) {
    /* division / modulo: usually by a constant (either sign), sometimes by an expression */
    const uop *d = fuzz_rnd(4) ? gen_leaf(ctx, s) : gen(ctx, s, depth - 1);
    if (fuzz_rnd(3)) {
      static const int64_t ds[] = {2, 3, 4, 5, 6, 8, 12, 16, -2, -3, -4};
      d = uop_const_int(ctx, dt, ds[fuzz_rnd(sizeof ds / sizeof *ds)]);
    }
    return uop_alu2(ctx, fuzz_rnd(2) ? UOP_IDIV : UOP_MOD, gen(ctx, s, depth - 1), d);
  }
  if (k < 12) return uop_alu2(ctx, UOP_MAX, gen(ctx, s, depth - 1), gen(ctx, s, depth - 1));
  if (k < 14) {
    static const uop_op bit[] = {UOP_AND, UOP_OR, UOP_XOR};
    return uop_alu2(ctx, bit[fuzz_rnd(3)], gen(ctx, s, depth - 1), gen(ctx, s, depth - 1));
  }
  if (k < 15) {
    const uop *sh = uop_const_int(ctx, dt, fuzz_rnd(4));
    return uop_alu2(ctx, fuzz_rnd(2) ? UOP_SHL : UOP_SHR, gen(ctx, s, depth - 1), sh);
  }
  if (k < 18) return uop_where(ctx, gen_bool(ctx, depth - 1), gen(ctx, s, depth - 1), gen(ctx, s, depth - 1));
  uop_scalar from = fuzz_rnd(4) ? INT_DTS[fuzz_rnd(8)] : UOP_BOOL;
  return uop_cast(ctx, dt, gen(ctx, from, depth - 1));
}

/* ------------------------------------------------------------------------------------------------ driver */

static void show(const char *what, const uop *n) {
  char *s = NULL;
  hcq_status st = uop_print(n, &s);
  fprintf(stderr, "  %s: %s\n", what, st ? hcq_status_message(st) : s);
  hcq_status_free(st);
  free(s);
}

/* The simplifier keeps results per context (a memo). Its output must not depend on what the context saw before:
 * simplify a printed copy of orig in a fresh context and compare the printed results. */
static bool same_as_cold(const uop *orig, const uop *simp) {
  char *otext = NULL, *warm = NULL, *cold = NULL;
  uop_ctx *fresh = NULL;
  const uop *copy = NULL, *csimp = NULL;
  bool ok = false;
  hcq_status st = uop_print(orig, &otext);
  if (!st) st = uop_print(simp, &warm);
  if (!st) st = uop_ctx_create(&fresh);
  if (!st) st = uop_parse(fresh, otext, strlen(otext), &copy);
  if (!st) st = uop_simplify(fresh, copy, &csimp);
  if (!st) st = uop_print(csimp, &cold);
  if (st) {
    fprintf(stderr, "fuzz: cold re-simplification failed: %s\n", hcq_status_message(st));
    hcq_status_free(st);
    goto done;
  }
  ok = strcmp(warm, cold) == 0;
  if (!ok) fprintf(stderr, "fuzz: warm-context result\n%s\ndiffers from the fresh-context result\n%s\n", warm, cold);
done:
  free(otext);
  free(warm);
  free(cold);
  uop_ctx_destroy(fresh);
  return ok;
}

#define MIN_EXPRS 150

int main(void) {
  const char *seed_env = getenv("HCQ_FUZZ_SEED"); /* default: the fixed seed above; printed first and on failure */
  fuzz_rng = 0x9e3779b97f4a7c15ull;
  if (seed_env && seed_env[0]) fuzz_rng = strtoull(seed_env, NULL, 0) ^ 0x9e3779b97f4a7c15ull;
  if (!fuzz_rng) fuzz_rng = 1;
  uint64_t seed0 = fuzz_rng;
  printf("symbolic_fuzz: rng state 0x%llx (HCQ_FUZZ_SEED=%s)\n", (unsigned long long)seed0, seed_env ? seed_env : "");
  double budget_s = fuzz_seconds(3.0, NULL);
  double t0 = fuzz_now_s();
  long exprs = 0, assigns = 0, changed = 0, failures = 0;
  int64_t vals[NVARS + 1];
  /* Run for the time budget, but never fewer than MIN_EXPRS expressions (slow hosts such as qemu-user). */
  while ((fuzz_now_s() - t0 < budget_s || exprs < MIN_EXPRS) && failures < 5) {
    uop_ctx *ctx;
    CHECK_OK(uop_ctx_create(&ctx));
    if (!ctx) break;
    for (int iter = 0; iter < 50 && failures < 5; iter++) {
      uop_scalar s = fuzz_rnd(5) == 0 ? UOP_BOOL : INT_DTS[fuzz_rnd(8)];
      /* a quarter of the roots are division-family shapes, so their rules see many cases in a short budget */
      const uop *orig = fuzz_rnd(4) ? gen(ctx, s, 1 + (int)fuzz_rnd(4)) : gen_div_family(ctx, 2 + (int)fuzz_rnd(3)), *simp = NULL;
      hcq_status st = uop_simplify(ctx, orig, &simp);
      if (st) {
        fprintf(stderr, "uop_simplify failed: %s\n", hcq_status_message(st));
        show("original", orig);
        hcq_status_free(st);
        failures++;
        continue;
      }
      exprs++;
      changed += simp != orig;
      if (iter % 8 == 7 && !same_as_cold(orig, simp)) {
        show("original", orig);
        failures++;
        continue;
      }
      int64_t olo = uop_vmin(orig), ohi = uop_vmax(orig), slo = uop_vmin(simp), shi = uop_vmax(simp);
      /* enumerate every assignment */
      for (int i = 0; i < NVARS; i++) vals[i] = VARS[i].lo;
      vals[NVARS] = 0;
      for (;;) {
        int64_t want, got;
        int rc = ev(orig, vals, &want);
        if (rc == 2) {
          fprintf(stderr, "fuzz: evaluator does not know a node of the original\n");
          failures++;
          break;
        }
        if (rc == 0) {
          assigns++;
          int rs = ev(simp, vals, &got);
          bool bad = rs != 0 || got != want || want < olo || want > ohi || want < slo || want > shi;
          if (bad) {
            fprintf(stderr, "fuzz mismatch (rc %d): original = %lld, simplified = %lld; bounds orig [%lld, %lld] "
                    "simp [%lld, %lld]; a=%lld b=%lld c=%lld d=%lld p=%lld q=%lld ridx0=%lld\n", rs, (long long)want,
                    (long long)got, (long long)olo, (long long)ohi, (long long)slo, (long long)shi,
                    (long long)vals[0], (long long)vals[1], (long long)vals[2], (long long)vals[3],
                    (long long)vals[4], (long long)vals[5], (long long)vals[6]);
            show("original  ", orig);
            show("simplified", simp);
            failures++;
            break;
          }
        }
        int i = 0;
        for (; i <= NVARS; i++) {
          int64_t hi = i == NVARS ? RANGE_END - 1 : VARS[i].hi;
          if (vals[i] < hi) {
            vals[i]++;
            break;
          }
          vals[i] = i == NVARS ? 0 : VARS[i].lo;
        }
        if (i > NVARS) break;
      }
    }
    uop_ctx_destroy(ctx);
  }
  printf("symbolic_fuzz: %ld expressions (%ld changed by simplify), %ld assignments checked in %.1f s\n", exprs,
         changed, assigns, fuzz_now_s() - t0);
  CHECK(failures == 0);
  CHECK(exprs >= MIN_EXPRS);
  if (testing_failures || failures)
    fprintf(stderr, "symbolic_fuzz: FAILED; rerun with HCQ_FUZZ_SEED=%s\n", seed_env ? seed_env : "(unset)");
  return testing_summary("symbolic_fuzz_test");
}
