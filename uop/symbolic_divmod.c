/* symbolic family: index division and modulo, sound under C truncation.
 * Order: bounds (the quotient is the same over the whole range), binary numerator (two-point interpolation), sign
 * normalization, gcd, nested div/mod, then, for non-negative numerators only (where truncation equals floor):
 * congruence, remainder splitting, nested mod removal and (x//c + a)//d merging (when it shrinks), nesting by the
 * smallest coefficient factor; last, numerators P + k with P <= 0 <= P + k become -((-P + k')//c) + q. */
#include "uop/symbolic_rules.h"

static int64_t tdiv(int64_t a, int64_t b) { return a / b; }

/* x // y and x % y when y has one sign and the truncated quotient is equal at the four corners. */
static const uop *r_cancel(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)b;
  const uop *x = n->src[0], *y = n->src[1];
  int64_t xl, xh, yl, yh;
  if (!sym_is_index(n) || !sym_bounds(x, &xl, &xh) || !sym_bounds(y, &yl, &yh)) return NULL;
  if (!((yl > 0) || (yh < 0))) return NULL;
  int64_t q = tdiv(xl, yl);
  if (tdiv(xl, yh) != q || tdiv(xh, yl) != q || tdiv(xh, yh) != q) return NULL;
  if (n->op == UOP_IDIV) return uop_index_const(rc->uctx, q);
  if (q == 0) return x;
  /* x - q*y */
  sym_sum s;
  if (!sym_decompose(x, &s)) return NULL;
  sym_sum t;
  if (!sym_decompose(y, &t)) return NULL;
  for (int i = 0; i < t.n; i++) {
    int64_t c;
    if (__builtin_mul_overflow(t.t[i].coeff, -q, &c) || !sym_sum_add(&s, t.t[i].base, c)) return NULL;
  }
  int64_t kk;
  if (__builtin_mul_overflow(t.k, -q, &kk) || __builtin_add_overflow(s.k, kk, &s.k)) return NULL;
  return sym_build(rc->uctx, &s);
}

static bool const_divisor(const uop *n, int64_t *c) {
  return sym_is_index(n) && n->src[1]->op == UOP_CONST && uop_const_value(n->src[1], c) && *c != 0 &&
         *c != INT64_MIN;
}

/* f*v + k with v taking exactly two values: linear interpolation through the two exact results. */
static const uop *r_binary(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)b;
  int64_t c, lo, hi;
  sym_sum s;
  if (!const_divisor(n, &c) || !sym_decompose(n->src[0], &s) || s.n != 1) return NULL;
  if (!sym_bounds(s.t[0].base, &lo, &hi) || hi - lo != 1) return NULL;
  int64_t x1, x2;
  if (__builtin_mul_overflow(s.t[0].coeff, lo, &x1) || __builtin_add_overflow(x1, s.k, &x1) ||
      __builtin_mul_overflow(s.t[0].coeff, hi, &x2) || __builtin_add_overflow(x2, s.k, &x2))
    return NULL;
  if ((x1 == INT64_MIN || x2 == INT64_MIN) && c == -1) return NULL;
  int64_t y1 = n->op == UOP_IDIV ? x1 / c : x1 % c, y2 = n->op == UOP_IDIV ? x2 / c : x2 % c;
  int64_t d = y2 - y1, off;
  if (__builtin_mul_overflow(d, lo, &off)) return NULL;
  return sym_lin(rc->uctx, s.t[0].base, d, y1 - off);
}

/* Sign normalization: x//-c -> -(x//c), x%-c -> x%c, and for x <= 0: x//c -> -((-x)//c), x%c -> -((-x)%c). */
static const uop *r_sign(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)b;
  uop_ctx *ctx = rc->uctx;
  int64_t c, lo, hi;
  if (!const_divisor(n, &c)) return NULL;
  const uop *x = n->src[0];
  if (c < 0) {
    const uop *d = uop_alu2(ctx, (uop_op)n->op, x, uop_index_const(ctx, -c));
    return n->op == UOP_IDIV ? sym_lin(ctx, d, -1, 0) : d;
  }
  if (x->op != UOP_CONST && sym_bounds(x, &lo, &hi) && hi <= 0 && lo < 0) {
    const uop *nx = sym_lin(ctx, x, -1, 0);
    if (!nx) return NULL;
    return sym_lin(ctx, uop_alu2(ctx, (uop_op)n->op, nx, n->src[1]), -1, 0);
  }
  return NULL;
}

/* g = gcd(c, every coefficient, the constant) > 1: x//c -> (x/g)//(c/g), x%c -> ((x/g)%(c/g))*g. */
static const uop *r_gcd(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)b;
  uop_ctx *ctx = rc->uctx;
  int64_t c;
  sym_sum s;
  if (!const_divisor(n, &c) || c < 0 || !sym_decompose(n->src[0], &s)) return NULL;
  int64_t g = sym_gcd(c, s.k);
  for (int i = 0; i < s.n; i++) g = sym_gcd(g, s.t[i].coeff);
  if (g <= 1) return NULL;
  for (int i = 0; i < s.n; i++) s.t[i].coeff /= g;
  s.k /= g;
  const uop *q = uop_alu2(ctx, (uop_op)n->op, sym_build(ctx, &s), uop_index_const(ctx, c / g));
  return n->op == UOP_IDIV ? q : sym_lin(ctx, q, g, 0);
}

/* (x//c1)//c2 -> x//(c1*c2) (c1, c2 > 0); (x%(k*c))%c -> x%c. Both hold for truncation. */
static const uop *r_nested(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)b;
  uop_ctx *ctx = rc->uctx;
  int64_t c, c1, cc;
  const uop *x = n->src[0];
  if (!const_divisor(n, &c) || c < 0 || x->op != n->op || !const_divisor(x, &c1) || c1 < 0) return NULL;
  if (n->op == UOP_IDIV) {
    if (__builtin_mul_overflow(c, c1, &cc)) return NULL;
    return uop_alu2(ctx, UOP_IDIV, x->src[0], uop_index_const(ctx, cc));
  }
  if (c1 % c != 0) return NULL;
  return uop_alu2(ctx, UOP_MOD, x->src[0], n->src[1]);
}

/* Tree size of n, counted up to cap (a cheap "is it smaller" measure). */
static int tree_size(const uop *n, int cap) {
  int size = 1;
  for (uint32_t i = 0; i < n->nsrc && size < cap; i++) size += tree_size(n->src[i], cap - size);
  return size;
}

/* Non-negative numerators (truncation == floor). */
static const uop *r_nonneg(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)b;
  uop_ctx *ctx = rc->uctx;
  int64_t c, xl, xh;
  sym_sum s;
  const uop *x = n->src[0];
  bool is_div = n->op == UOP_IDIV;
  if (!const_divisor(n, &c) || c < 0 || !sym_bounds(x, &xl, &xh) || xl < 0 || !sym_decompose(x, &s)) return NULL;

  /* 1. congruence: residues of smallest magnitude; if the remainder stays in one block [t*c, (t+1)*c). */
  {
    sym_sum rem = s, quo = s;
    bool ok = true;
    for (int i = 0; i < s.n; i++) {
      int64_t r = uop_floormod(s.t[i].coeff, c);
      if (r > c / 2) r -= c;
      rem.t[i].coeff = r;
      quo.t[i].coeff = (s.t[i].coeff - r) / c;
    }
    rem.k = uop_floormod(s.k, c);
    quo.k = uop_floordiv(s.k, c);
    int64_t rl, rh;
    if (ok && sym_sum_bounds(&rem, &rl, &rh) && uop_floordiv(rl, c) == uop_floordiv(rh, c)) {
      int64_t t = uop_floordiv(rl, c);
      if (is_div) {
        quo.k += t;
        return sym_build(ctx, &quo);
      }
      rem.k -= t * c;
      return sym_build(ctx, &rem);
    }
  }

  /* 2. (a % m) terms with c | m: a % m == a (mod c); replace when the numerator stays non-negative. */
  if (!is_div) {
    sym_sum t = s;
    bool changed = false;
    for (int i = 0; i < t.n; i++) {
      const uop *m = t.t[i].base;
      int64_t mc;
      if (m->op == UOP_MOD && const_divisor(m, &mc) && mc % c == 0) {
        sym_sum u = t;
        u.t[i].base = m->src[0];
        int64_t ul, uh;
        if (sym_sum_bounds(&u, &ul, &uh) && ul >= 0) {
          t = u;
          changed = true;
        }
      }
    }
    if (changed) {
      /* rebuild through decompose so that a substituted sum is flattened */
      sym_sum f = {0};
      f.k = t.k;
      for (int i = 0; i < t.n; i++) {
        sym_sum part;
        if (!sym_decompose(t.t[i].base, &part)) return NULL;
        for (int j = 0; j < part.n; j++) {
          int64_t cf;
          if (__builtin_mul_overflow(part.t[j].coeff, t.t[i].coeff, &cf) || !sym_sum_add(&f, part.t[j].base, cf))
            return NULL;
        }
        int64_t kk;
        if (__builtin_mul_overflow(part.k, t.t[i].coeff, &kk) || __builtin_add_overflow(f.k, kk, &f.k)) return NULL;
      }
      return uop_alu2(ctx, UOP_MOD, sym_build(ctx, &f), n->src[1]);
    }
  }

  /* 3. remainder splitting: f = q*c + r; x = c*quo + g*rem + k%g with g = gcd(c, r...). */
  {
    int64_t g = c;
    bool any_zero = false, all_same = true;
    for (int i = 0; i < s.n; i++) {
      int64_t r = uop_floormod(s.t[i].coeff, c);
      g = sym_gcd(g, r);
      any_zero |= r == 0;
      all_same &= r == s.t[i].coeff;
    }
    int64_t kq = uop_floordiv(s.k, c), kr = uop_floormod(s.k, c);
    if (!(kr == s.k && g == 1 && !any_zero && (is_div || all_same))) {
      sym_sum quo = {0}, rem = {0};
      quo.k = kq;
      rem.k = kr / g;
      bool ok = true;
      for (int i = 0; i < s.n && ok; i++) {
        int64_t f = s.t[i].coeff, r = uop_floormod(f, c), q = uop_floordiv(f, c);
        if (is_div && r != 0) {
          ok = sym_sum_add(&rem, s.t[i].base, f / g);
        } else {
          ok = sym_sum_add(&quo, s.t[i].base, q) && sym_sum_add(&rem, s.t[i].base, r / g);
        }
      }
      int64_t rl, rh;
      if (ok && sym_sum_bounds(&rem, &rl, &rh) && rl >= 0) {
        const uop *remn = sym_build(ctx, &rem), *cg = uop_index_const(ctx, c / g);
        if (is_div) {
          const uop *d = uop_alu2(ctx, UOP_IDIV, remn, cg);
          sym_sum out = quo;
          if (!sym_sum_add(&out, d, 1)) return NULL;
          return sym_build(ctx, &out);
        }
        return sym_lin(ctx, uop_alu2(ctx, UOP_MOD, remn, cg), g, kr % g);
      }
    }
  }

  /* 4. (y//c1 + a)//c -> (y + a*c1)//(c1*c) with y >= 0 and a >= 0 (a may be a constant alone). */
  if (is_div && (s.n >= 2 || s.k > 0)) {
    for (int i = 0; i < s.n; i++) {
      const uop *d = s.t[i].base;
      int64_t c1, yl, yh, al, ah, cc;
      if (s.t[i].coeff != 1 || d->op != UOP_IDIV || !const_divisor(d, &c1) || c1 <= 0) continue;
      if (!sym_bounds(d->src[0], &yl, &yh) || yl < 0 || __builtin_mul_overflow(c1, c, &cc)) continue;
      sym_sum a = s;
      a.t[i].coeff = 0;
      if (!sym_sum_bounds(&a, &al, &ah) || al < 0) continue;
      sym_sum y;
      if (!sym_decompose(d->src[0], &y)) continue;
      bool ok = true;
      for (int j = 0; j < a.n && ok; j++) {
        int64_t cf;
        ok = !__builtin_mul_overflow(a.t[j].coeff, c1, &cf) && sym_sum_add(&y, a.t[j].base, cf);
      }
      int64_t kk;
      if (!ok || __builtin_mul_overflow(a.k, c1, &kk) || __builtin_add_overflow(y.k, kk, &y.k)) continue;
      const uop *r = uop_alu2(ctx, UOP_IDIV, sym_build(ctx, &y), uop_index_const(ctx, cc));
      if (r && tree_size(r, 64) < tree_size(n, 64)) return r; /* only when it shrinks the expression */
    }
  }
  return NULL;
}

/* x//c with x >= 0 and f | c, f > 1 the smallest such coefficient: x = f*A + B (B: the terms whose coefficient f
 * does not divide, and the constant). When B stays inside one block [t*f, (t+1)*f), x//f = A + t, so
 * x//c = (x//f)//(c/f) = (A + t)//(c/f): the terms of B drop out (the reference's nest_div_by_smallest_factor, with
 * the inner division folded directly instead of by a nested simplify). Truncation == floor as x >= 0. */
static const uop *r_nest_factor(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)b;
  int64_t c, xl, xh;
  sym_sum s;
  const uop *x = n->src[0];
  if (!const_divisor(n, &c) || c < 4 || !sym_bounds(x, &xl, &xh) || xl < 0 || !sym_decompose(x, &s)) return NULL;
  int64_t f = c;
  for (int i = 0; i < s.n; i++) {
    int64_t a = s.t[i].coeff < 0 ? -s.t[i].coeff : s.t[i].coeff;
    if (a > 1 && a < f && c % a == 0) f = a;
  }
  if (f == c) return NULL;
  sym_sum a = s, rest = s;
  bool any_rest = false;
  for (int i = 0; i < s.n; i++) {
    bool div = s.t[i].coeff % f == 0;
    a.t[i].coeff = div ? s.t[i].coeff / f : 0;
    rest.t[i].coeff = div ? 0 : s.t[i].coeff;
    any_rest |= !div;
  }
  a.k = 0;
  int64_t rl, rh;
  if (!any_rest || !sym_sum_bounds(&rest, &rl, &rh) || uop_floordiv(rl, f) != uop_floordiv(rh, f)) return NULL;
  a.k = uop_floordiv(rl, f);
  return uop_alu2(rc->uctx, UOP_IDIV, sym_build(rc->uctx, &a), uop_index_const(rc->uctx, c / f));
}

/* (P + k)//c with c > 0, P <= 0 and P + k >= 0: with k = q*c + r (floor), the quotient is q - (-P + c-1-r)//c,
 * whose numerator is >= 0 (truncation == floor on both sides). Negative-coefficient numerators become positive. */
static const uop *r_neg_numerator(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)b;
  uop_ctx *ctx = rc->uctx;
  int64_t c, pl, ph;
  sym_sum s;
  if (!const_divisor(n, &c) || c < 2 || !sym_decompose(n->src[0], &s) || s.n == 0) return NULL;
  int64_t k = s.k;
  s.k = 0;
  if (!sym_sum_bounds(&s, &pl, &ph) || ph > 0 || pl + k < 0) return NULL;
  for (int i = 0; i < s.n; i++) s.t[i].coeff = -s.t[i].coeff; /* no overflow: bounds were finite */
  int64_t q = uop_floordiv(k, c), r = uop_floormod(k, c);
  s.k = c - 1 - r;
  const uop *d = uop_alu2(ctx, UOP_IDIV, sym_build(ctx, &s), n->src[1]);
  return d ? sym_lin(ctx, d, -1, q) : NULL;
}

/* RANGE(end) % end -> RANGE, RANGE(end) // end -> 0 (the divisor is the range's own end node). */
static const uop *r_range_mod(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)rc;
  (void)n;
  const uop *r = uop_b(b, "r");
  if (r->nsrc < 1 || r->src[0] != uop_b(b, "e")) return NULL;
  return r;
}
static const uop *r_range_div(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)n;
  const uop *r = uop_b(b, "r");
  if (r->nsrc < 1 || r->src[0] != uop_b(b, "e")) return NULL;
  return uop_index_const(rc->uctx, 0);
}

const uop_rule sym_rules_divmod[] = {
    {"(MOD (RANGE@r ...) e)", r_range_mod, "range%end"},
    {"(IDIV (RANGE@r ...) e)", r_range_div, "range//end"},
    {"(IDIV|MOD:index@n _ _)", r_cancel, "cancel_divmod"},
    {"(IDIV|MOD:index@n _ #c)", r_binary, "binary_numerator"},
    {"(IDIV|MOD:index@n _ #c)", r_sign, "divmod_sign"},
    {"(IDIV|MOD:index@n _ #c)", r_gcd, "divmod_gcd"},
    {"(IDIV|MOD:index@n (IDIV|MOD _ #c1) #c)", r_nested, "divmod_nested"},
    {"(IDIV|MOD:index@n _ #c)", r_nonneg, "divmod_nonneg"},
    {"(IDIV:index@n _ #c)", r_nest_factor, "div_nest_factor"},
    {"(IDIV:index@n _ #c)", r_neg_numerator, "div_neg_numerator"},
};
const size_t sym_rules_divmod_count = sizeof sym_rules_divmod / sizeof *sym_rules_divmod;
