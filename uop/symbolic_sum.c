/* symbolic families on index sums and products: combining like terms, canonical term order (uop_struct_cmp,
 * constants last), distributing constants over sums, the division identity (x//c)*c + x%c -> x, unrolled aranges
 * (z//d + (z+1)//d + ... + (z+d-1)//d -> z). */
#include "uop/symbolic_rules.h"

/* In s, find pairs f*(x%c) and (f*c)*(x//c) (c a constant, any x) and replace each pair by f*x. Returns true if
 * something was recombined; then s holds the new terms (x itself may be a sum, added term by term). */
static bool recombine(sym_sum *s) {
  for (int i = 0; i < s->n; i++) {
    const uop *m = s->t[i].base;
    int64_t c, fc;
    if (m->op != UOP_MOD || m->src[1]->op != UOP_CONST || !uop_const_value(m->src[1], &c) || c == 0) continue;
    if (__builtin_mul_overflow(s->t[i].coeff, c, &fc)) continue;
    for (int j = 0; j < s->n; j++) {
      const uop *d = s->t[j].base;
      if (d->op != UOP_IDIV || d->src[0] != m->src[0] || d->src[1] != m->src[1] || s->t[j].coeff != fc) continue;
      int64_t f = s->t[i].coeff;
      s->t[i].coeff = 0;
      s->t[j].coeff = 0;
      sym_sum x;
      if (!sym_decompose(m->src[0], &x)) {
        x.n = 1;
        x.k = 0;
        x.t[0] = (sym_term){m->src[0], 1};
      }
      for (int k = 0; k < x.n; k++) {
        int64_t cf;
        if (__builtin_mul_overflow(x.t[k].coeff, f, &cf) || !sym_sum_add(s, x.t[k].base, cf)) return false;
      }
      int64_t kk;
      if (__builtin_mul_overflow(x.k, f, &kk) || __builtin_add_overflow(s->k, kk, &s->k)) return false;
      return true;
    }
  }
  return false;
}

/* Split a division's numerator into its non-constant part z and constant j (canonical sums end in the constant). */
static void split_const(const uop *num, const uop **z, int64_t *j) {
  int64_t c;
  if (num->op == UOP_ADD && sym_is_index(num) && num->src[1]->op == UOP_CONST && uop_const_value(num->src[1], &c)) {
    *z = num->src[0];
    *j = c;
  } else {
    *z = num;
    *j = 0;
  }
}

/* Unrolled aranges: f*((z+j0)//d) + f*((z+j0+1)//d) + ... + f*((z+j0+d-1)//d) == f*(z+j0) when z+j0 >= 0 (Hermite's
 * identity; all numerators are >= 0, so truncation is floor). Terms that were already folded to 0 may be missing:
 * a missing (z+j)//d must be 0 over z's whole range (0 <= z+j < d). Returns true if s changed. */
static bool fold_arange(sym_sum *s) {
  for (int i = 0; i < s->n; i++) {
    const uop *dv = s->t[i].base, *z;
    int64_t d, j, zl, zh;
    if (s->t[i].coeff == 0 || dv->op != UOP_IDIV || !sym_is_index(dv) || dv->src[1]->op != UOP_CONST ||
        !uop_const_value(dv->src[1], &d) || d < 2 || d > 64)
      continue;
    split_const(dv->src[0], &z, &j);
    if (!sym_bounds(z, &zl, &zh)) continue;
    /* the group: terms coeff*((z+j')//d) with the same z, d and coefficient */
    int idx[64], ng = 0;
    int64_t js[64], jmin = j, jmax = j;
    for (int t = i; t < s->n && ng < 64; t++) {
      const uop *u = s->t[t].base, *zt;
      int64_t jt;
      if (s->t[t].coeff != s->t[i].coeff || u->op != UOP_IDIV || u->src[1] != dv->src[1]) continue;
      split_const(u->src[0], &zt, &jt);
      if (zt != z) continue;
      idx[ng] = t;
      js[ng++] = jt;
      if (jt < jmin) jmin = jt;
      if (jt > jmax) jmax = jt;
    }
    if (jmax - jmin >= d) continue;
    /* windows j0..j0+d-1 that hold every present j */
    for (int64_t j0 = jmax - (d - 1); j0 <= jmin; j0++) {
      if (zl + j0 < 0) continue;
      bool ok = true;
      for (int64_t jj = j0; jj < j0 + d && ok; jj++) {
        bool present = false;
        for (int g = 0; g < ng; g++) present |= js[g] == jj;
        ok = present || zh + jj < d; /* missing: (z+jj)//d is 0 (z+jj >= z+j0 >= 0) */
      }
      if (!ok) continue;
      int64_t f = s->t[i].coeff, kk;
      for (int g = 0; g < ng; g++) s->t[idx[g]].coeff = 0;
      sym_sum zs;
      if (!sym_decompose(z, &zs)) {
        zs.n = 1;
        zs.k = 0;
        zs.t[0] = (sym_term){z, 1};
      }
      for (int t = 0; t < zs.n; t++) {
        int64_t cf;
        if (__builtin_mul_overflow(zs.t[t].coeff, f, &cf) || !sym_sum_add(s, zs.t[t].base, cf)) return false;
      }
      if (__builtin_add_overflow(zs.k, j0, &kk) || __builtin_mul_overflow(kk, f, &kk) ||
          __builtin_add_overflow(s->k, kk, &s->k))
        return false;
      return true;
    }
  }
  return false;
}

/* where(c, t, f) + where(c, tt, ff) -> where(c, t+tt, f+ff) (both coefficient 1) when one pair of arms is two
 * constants. Returns true if s changed. */
static bool merge_wheres(uop_ctx *ctx, sym_sum *s) {
  for (int i = 0; i < s->n; i++) {
    const uop *w = s->t[i].base;
    if (s->t[i].coeff != 1 || w->op != UOP_WHERE) continue;
    for (int j = i + 1; j < s->n; j++) {
      const uop *v = s->t[j].base;
      if (s->t[j].coeff != 1 || v->op != UOP_WHERE || v->src[0] != w->src[0]) continue;
      if (!((w->src[1]->op == UOP_CONST && v->src[1]->op == UOP_CONST) ||
            (w->src[2]->op == UOP_CONST && v->src[2]->op == UOP_CONST)))
        continue;
      const uop *m = uop_where(ctx, w->src[0], uop_alu2(ctx, UOP_ADD, w->src[1], v->src[1]),
                               uop_alu2(ctx, UOP_ADD, w->src[2], v->src[2]));
      if (!m) return false;
      s->t[i].coeff = 0;
      s->t[j].coeff = 0;
      return sym_sum_add(s, m, 1);
    }
  }
  return false;
}

/* Is c the node uop_index_const(ctx, v) would return (interned consts carry the canonical index dtype)? */
static bool is_index_const(const uop *c, int64_t v) {
  return c->op == UOP_CONST && sym_is_index(c) && c->dtype.addrspace == UOP_AS_NONE && c->arg.kind == UOP_ARG_INT &&
         c->arg.i == v;
}

/* A plain binary index op as uop_alu2 builds it. */
static bool is_index_bin(const uop *n, uop_op op) {
  return n->op == op && n->nsrc == 2 && sym_is_index(n) && n->arg.kind == UOP_ARG_NONE;
}

/* Would sym_build(s) return n itself? Checked without building (building interns every partial sum, the hot cost
 * of normalising sums that are already canonical): n must be the left-leaning chain of s's term nodes in strictly
 * increasing uop_struct_cmp order, then the constant if nonzero. */
static bool sum_is_built(const uop *n, const sym_sum *s) {
  int m = 0;
  for (int i = 0; i < s->n; i++) m += s->t[i].coeff != 0;
  if (m == 0) return false;
  const uop *cur = n;
  if (s->k != 0) {
    if (!is_index_bin(cur, UOP_ADD) || !is_index_const(cur->src[1], s->k)) return false;
    cur = cur->src[0];
  }
  const uop *leaf[SYM_MAX_TERMS];
  for (int j = m - 1; j > 0; j--) {
    if (!is_index_bin(cur, UOP_ADD)) return false;
    leaf[j] = cur->src[1];
    cur = cur->src[0];
  }
  leaf[0] = cur;
  uint64_t used[(SYM_MAX_TERMS + 63) / 64] = {0};
  for (int j = 0; j < m; j++) {
    const uop *l = leaf[j], *base = l;
    int64_t coeff = 1;
    if (is_index_bin(l, UOP_MUL) && l->src[1]->op == UOP_CONST) {
      if (!is_index_const(l->src[1], l->src[1]->arg.i) || l->src[1]->arg.i == 1) return false;
      base = l->src[0];
      coeff = l->src[1]->arg.i;
    }
    int i = 0;
    while (i < s->n && s->t[i].base != base) i++;
    if (i == s->n || s->t[i].coeff != coeff || (used[i / 64] >> (i % 64) & 1)) return false;
    used[i / 64] |= (uint64_t)1 << (i % 64);
    if (j > 0 && uop_struct_cmp(leaf[j - 1], l) >= 0) return false;
  }
  return true;
}

static const uop *r_add_norm(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)b;
  if (!sym_is_index(n)) return NULL;
  sym_sum s;
  if (!sym_decompose(n, &s)) return NULL;
  bool changed = false;
  for (int guard = 0; guard < 8 && recombine(&s); guard++) changed = true;
  for (int guard = 0; guard < 8 && fold_arange(&s); guard++) changed = true;
  for (int guard = 0; guard < 8 && merge_wheres(rc->uctx, &s); guard++) changed = true;
  if (!changed && sum_is_built(n, &s)) return NULL;
  return sym_build(rc->uctx, &s);
}

/* Is n already the left-leaning product of the sorted factors, times k when k != 1 (what r_mul_norm builds)? */
static bool product_is_built(const uop *n, const uop *const *fac, int nf, int64_t k) {
  const uop *cur = n;
  if (k != 1) {
    if (!is_index_bin(cur, UOP_MUL) || !is_index_const(cur->src[1], k)) return false;
    cur = cur->src[0];
  }
  for (int j = nf - 1; j > 0; j--) {
    if (!is_index_bin(cur, UOP_MUL) || cur->src[1] != fac[j]) return false;
    cur = cur->src[0];
  }
  return cur == fac[0];
}

/* Products: flatten, multiply the constants, sort the factors, constant last; (a+b)*c distributes. */
#define SYM_MAX_FACTORS 32
static const uop *r_mul_norm(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)b;
  if (!sym_is_index(n)) return NULL;
  uop_ctx *ctx = rc->uctx;
  const uop *fac[SYM_MAX_FACTORS], *stack[SYM_MAX_FACTORS * 2];
  int nf = 0, sp = 0;
  int64_t k = 1;
  stack[sp++] = n;
  while (sp) {
    const uop *u = stack[--sp];
    int64_t c;
    if (u->op == UOP_MUL && sym_is_index(u) && u->nsrc == 2) {
      if (sp + 2 > (int)(sizeof stack / sizeof *stack)) return NULL;
      stack[sp++] = u->src[1];
      stack[sp++] = u->src[0];
    } else if (u->op == UOP_CONST && uop_const_value(u, &c)) {
      if (__builtin_mul_overflow(k, c, &k)) return NULL;
    } else {
      if (nf == SYM_MAX_FACTORS) return NULL;
      fac[nf++] = u;
    }
  }
  if (k == 0) return uop_index_const(ctx, 0);
  if (nf == 0) return uop_index_const(ctx, k);
  if (nf == 1 && fac[0]->op == UOP_ADD && k != 1) return sym_lin(ctx, fac[0], k, 0);
  for (int i = 1; i < nf; i++)
    for (int j = i; j > 0 && uop_struct_cmp(fac[j - 1], fac[j]) > 0; j--) {
      const uop *t = fac[j];
      fac[j] = fac[j - 1];
      fac[j - 1] = t;
    }
  if (product_is_built(n, fac, nf, k)) return NULL;
  const uop *acc = fac[0];
  for (int i = 1; i < nf; i++) acc = uop_alu2(ctx, UOP_MUL, acc, fac[i]);
  if (k != 1) acc = uop_alu2(ctx, UOP_MUL, acc, uop_index_const(ctx, k));
  return acc;
}

const uop_rule sym_rules_sum[] = {
    {"(ADD:index@n _ _)", r_add_norm, "sum_norm"},
    {"(MUL:index@n _ _)", r_mul_norm, "product_norm"},
};
const size_t sym_rules_sum_count = sizeof sym_rules_sum / sizeof *sym_rules_sum;
