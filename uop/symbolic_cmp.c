/* symbolic family: comparisons on index. Less-than folding (constant shift, gcd scaling, lt_folding with small
 * non-negative unit terms, x//d < c), simplex canonicalization, x*-1 < y*-1, and the same shift/scale for !=. */
#include "uop/symbolic_rules.h"

/* The common start of the CMPLT/CMPNE rules on (S + k) OP c, S an index sum: false when they do not apply. With
 * k != 0, *shifted is S OP c-k (false if c-k overflows); else *shifted is NULL, s holds S, *c the
 * constant and *g the gcd of S's coefficients. */
static bool cmp_const_start(uop_ctx *ctx, const uop *n, sym_sum *s, int64_t *c, int64_t *g, const uop **shifted) {
  const uop *x = n->src[0];
  *shifted = NULL;
  if (!sym_is_index(x) || x->op == UOP_CONST || !uop_const_value(n->src[1], c) || !sym_decompose(x, s)) return false;
  if (s->k != 0) {
    if (__builtin_sub_overflow(*c, s->k, c)) return false;
    s->k = 0;
    *shifted = uop_alu2(ctx, (uop_op)n->op, sym_build(ctx, s), uop_index_const(ctx, *c));
    return *shifted != NULL;
  }
  *g = 0;
  for (int i = 0; i < s->n; i++) *g = sym_gcd(*g, s->t[i].coeff);
  return true;
}

/* (S + k) < c -> S < c-k; S < c with gcd g of the coefficients -> S/g < ceil(c/g); lt_folding; simplex. */
static const uop *r_lt_const(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)b;
  uop_ctx *ctx = rc->uctx;
  const uop *shifted;
  int64_t c, g;
  sym_sum s;
  if (!cmp_const_start(ctx, n, &s, &c, &g, &shifted)) return NULL;
  if (shifted) return shifted;
  if (g > 1) {
    for (int i = 0; i < s.n; i++) s.t[i].coeff /= g;
    return uop_alu2(ctx, UOP_CMPLT, sym_build(ctx, &s), uop_index_const(ctx, sym_ceildiv(c, g)));
  }
  /* lt_folding: x = g*A + B with B the unit terms, 0 <= B < g and g | c  =>  x < c  <=>  A < c/g */
  {
    int64_t gn = c;
    sym_sum A = s, B = s;
    int nb = 0;
    for (int i = 0; i < s.n; i++) {
      if (s.t[i].coeff == 1) {
        A.t[i].coeff = 0;
        nb++;
      } else {
        B.t[i].coeff = 0;
        gn = sym_gcd(gn, s.t[i].coeff);
      }
    }
    int64_t bl, bh;
    if (nb > 0 && nb < s.n && gn > 1 && sym_sum_bounds(&B, &bl, &bh) && bl >= 0 && bh < gn) {
      for (int i = 0; i < A.n; i++) A.t[i].coeff /= gn;
      return uop_alu2(ctx, UOP_CMPLT, sym_build(ctx, &A), uop_index_const(ctx, c / gn));
    }
  }
  /* simplex: sum of a_i * x_i < 1 with a_i > 0 and x_i >= 0  <=>  sum of x_i < 1 */
  if (c == 1 && s.n >= 1) {
    bool ok = true, change = false;
    for (int i = 0; i < s.n && ok; i++) {
      int64_t lo, hi;
      ok = s.t[i].coeff > 0 && sym_bounds(s.t[i].base, &lo, &hi) && lo >= 0;
      change |= s.t[i].coeff != 1;
    }
    if (ok && change) {
      for (int i = 0; i < s.n; i++) s.t[i].coeff = 1;
      return uop_alu2(ctx, UOP_CMPLT, sym_build(ctx, &s), n->src[1]);
    }
  }
  return NULL;
}

/* x//d < c (d > 0): c > 0 -> x < c*d; c <= 0 -> x < c*d - (d-1). */
static const uop *r_lt_div(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)n;
  uop_ctx *ctx = rc->uctx;
  int64_t d, c, cd;
  if (!sym_is_index(uop_b(b, "x")) || !uop_const_value(uop_b(b, "d"), &d) || !uop_const_value(uop_b(b, "c"), &c) ||
      d <= 0 || __builtin_mul_overflow(c, d, &cd))
    return NULL;
  if (c <= 0 && __builtin_sub_overflow(cd, d - 1, &cd)) return NULL;
  return uop_alu2(ctx, UOP_CMPLT, uop_b(b, "x"), uop_index_const(ctx, cd));
}

/* x*-1 < y*-1 -> y < x */
static const uop *r_lt_neg(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)n;
  if (!sym_is_index(uop_b(b, "x"))) return NULL;
  return uop_alu2(rc->uctx, UOP_CMPLT, uop_b(b, "y"), uop_b(b, "x"));
}

/* (S + k) != c -> S != c-k; S != c with coefficient gcd g: g does not divide c -> true, else S/g != c/g. */
static const uop *r_ne_const(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)b;
  uop_ctx *ctx = rc->uctx;
  const uop *shifted;
  int64_t c, g;
  sym_sum s;
  if (!cmp_const_start(ctx, n, &s, &c, &g, &shifted)) return NULL;
  if (shifted) return shifted;
  if (g > 1) {
    if (c % g != 0) return uop_const_bool(ctx, true);
    for (int i = 0; i < s.n; i++) s.t[i].coeff /= g;
    return uop_alu2(ctx, UOP_CMPNE, sym_build(ctx, &s), uop_index_const(ctx, c / g));
  }
  return NULL;
}

const uop_rule sym_rules_cmp[] = {
    {"(CMPLT (IDIV x #d) #c)", r_lt_div, "x//d<c"},
    {"(CMPLT@n _ #c)", r_lt_const, "lt_const"},
    {"(CMPLT (MUL x -1) (MUL y -1))", r_lt_neg, "-x<-y"},
    {"(CMPNE@n _ #c)", r_ne_const, "ne_const"},
};
const size_t sym_rules_cmp_count = sizeof sym_rules_cmp / sizeof *sym_rules_cmp;
